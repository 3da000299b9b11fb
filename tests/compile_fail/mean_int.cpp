// SPDX-License-Identifier: MIT
// Must not compile: mean of an integer expression.
#include <complex>
import strata;
using namespace strata;
int main() {
  auto i = zeros<int>({2});
  auto m = mean(i);
}
