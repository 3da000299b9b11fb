// SPDX-License-Identifier: MIT
// Must not compile: a float result into an int tensor in place.
#include <complex>
import strata;
using namespace strata;
int main() {
  auto i = zeros<int>({2});
  i += 1.5;
}
