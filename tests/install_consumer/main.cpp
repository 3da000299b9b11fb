// SPDX-License-Identifier: MIT
#include <iostream>
import strata;

int main() {
  auto t = strata::arange<float>(6).view({2, 3}).t();
  std::cout << t << "\n";
  return t.sizes() == strata::int_list{3, 2} && t.at({2, 1}) == 5.0f ? 0 : 1;
}
