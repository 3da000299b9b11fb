// SPDX-License-Identifier: MIT
// Must not compile: bitwise operators on floats.
#include <complex>
import strata;
using namespace strata;
int main() {
  auto f = zeros<float>({2});
  auto e = f & f;
}
