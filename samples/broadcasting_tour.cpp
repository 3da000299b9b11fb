// SPDX-License-Identifier: MIT
// Broadcasting as PyTorch does it: shapes align from the right, size-1 dims stretch
// (as stride-0 views, no copy), anything else is an error naming the sizes and the dim.
#include <iostream>
import strata;
using namespace strata;

int main() {
  auto a = from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {{2, 3}});
  auto b = from_vector<std::int64_t>({1, 2, 3});
  std::cout << "a = " << a << "\nb = " << b << "\n";
  std::cout << "broadcast_shapes([2, 3], [3]) = " << to_string(broadcast_shapes(a.sizes(), b.sizes())) << "\n";
  auto bb = b.expand_as(a);
  std::cout << "b.expand_as(a) has strides " << to_string(bb.strides()) << " (row repeated, no copy):\n"
            << bb << "\n\n";

  std::cout << "broadcast_shapes([5, 3, 4, 1], [3, 1, 1]) = "
            << to_string(broadcast_shapes({5, 3, 4, 1}, {3, 1, 1})) << "\n";
  auto c = zeros<float>({3, 1, 1}).expand({5, 3, 4, 1});
  std::cout << "zeros(3, 1, 1).expand(5, 3, 4, 1) strides " << to_string(c.strides()) << "\n\n";

  try {
    broadcast_shapes({2, 2}, {2, 3});
  } catch (const shape_error& e) {
    std::cout << "broadcast_shapes([2, 2], [2, 3]) throws shape_error:\n  " << e.what() << "\n";
  }
  return 0;
}
