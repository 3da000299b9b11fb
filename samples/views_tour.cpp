// SPDX-License-Identifier: MIT
// A tour of strata's views: each is (sizes, strides, storage_offset) over the same storage,
// never a copy. Compare with PyTorch line by line.
#include <iostream>
#include <string>
import strata;
using namespace strata;

template <class T>
void show(const std::string& what, const Tensor<T>& t) {
  std::cout << what << "\n  sizes " << to_string(t.sizes()) << "  strides " << to_string(t.strides())
            << "  offset " << t.storage_offset() << (t.is_contiguous() ? "  contiguous" : "") << "\n"
            << t << "\n\n";
}

int main() {
  // torch.rand(4, 4).view(2, 8): same storage, a write through the view shows in the base.
  auto base = arange<float>(16).view({4, 4});
  auto v = base.view({2, 8});
  v[1][3] = -1.0f;
  show("base = arange(16).view(4, 4), after v = base.view(2, 8); v[1][3] = -1", base);

  auto x = arange<float>(32).view({2, 4, 4});
  show("x.diagonal(-1, 1, 2) on [2, 4, 4]", x.diagonal(-1, 1, 2));
  show("x.diagonal(-1, 1, 2).diagonal(1, 0, 1)", x.diagonal(-1, 1, 2).diagonal(1, 0, 1));
  show("arange(12).view(3, 1, 4).expand(2, 3, 2, 4): stride 0 repeats",
       arange<float>(12).view({3, 1, 4}).expand({2, 3, 2, 4}));
  auto y = arange<float>(24).view({2, 3, 4});
  show("y.narrow(2, 1, 2) on [2, 3, 4]", y.narrow(2, 1, 2));
  show("y.permute(2, 0, 1)", y.permute({2, 0, 1}));
  show("y.unfold(1, 2, 1): windows of 2 along dim 1", y.unfold(1, 2, 1));
  show("y.slice(2, 0, 4, 2): every other column", y.slice(2, 0, 4, 2));
  show("y.transpose(0, 2).flatten(): not viewable, so a copy", y.transpose(0, 2).flatten());
  return 0;
}
