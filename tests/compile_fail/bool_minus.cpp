// SPDX-License-Identifier: MIT
// Must not compile: subtraction of two bool tensors.
#include <complex>
import strata;
using namespace strata;
int main() {
  auto b = zeros<bool>({2});
  auto e = b - b;
}
