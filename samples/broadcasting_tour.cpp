// SPDX-License-Identifier: MIT
// Broadcasting as PyTorch does it: shapes align from the right, size-1 dims stretch
// (as stride-0 views, no copy), anything else is an error naming the sizes and the dim.
#include <iostream>
import strata;
using namespace strata;

int main() {
  auto a = from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = from_vector<std::int64_t>({1, 2, 3});
  std::cout << "a = " << a << "\nb = " << b << "\n";
  Tensor<std::int64_t> sum = a + b;  // one fused loop; b is read as a stride-0 view
  std::cout << "a + b = " << sum << "\n";
  std::cout << "broadcast_shapes([2, 3], [3]) = " << to_string(broadcast_shapes(a.sizes(), b.sizes())) << "\n";
  auto bb = b.expand_as(a);
  std::cout << "b.expand_as(a) has strides " << to_string(bb.strides()) << " (row repeated, no copy):\n"
            << bb << "\n\n";

  std::cout << "broadcast_shapes([5, 3, 4, 1], [3, 1, 1]) = "
            << to_string(broadcast_shapes({5, 3, 4, 1}, {3, 1, 1})) << "\n";
  auto c = zeros<float>({3, 1, 1}).expand({5, 3, 4, 1});
  std::cout << "zeros(3, 1, 1).expand(5, 3, 4, 1) strides " << to_string(c.strides()) << "\n";
  auto x = arange<float>(60).view({5, 3, 4, 1});
  auto y = from_vector<float>({100, 200, 300}, {3, 1, 1});
  std::cout << "(x + y).sizes() = " << to_string((x + y).sizes()) << ", (x + y)[4][2] = " << eval(x + y)[4][2]
            << "\n\n";

  try {
    auto bad = zeros<float>({2, 2}) + zeros<float>({2, 3});  // thrown here, where the node is built
    (void)bad;
  } catch (const shape_error& e) {
    std::cout << "zeros(2, 2) + zeros(2, 3) throws shape_error:\n  " << e.what() << "\n";
  }
  std::cout << "Tensor<int32_t> + 2.5 is " << dtype_name((zeros<std::int32_t>({1}) + 2.5).dtype())
            << "; Tensor<int8_t> + 1000 stays " << dtype_name(eval(zeros<std::int8_t>({1}) + 1000).dtype()) << "\n";
  return 0;
}
