// SPDX-License-Identifier: MIT
// Must not compile: ordering comparisons on complex.
#include <complex>
import strata;
using namespace strata;
int main() {
  auto c = zeros<std::complex<float>>({2});
  auto e = c < c;
}
