// SPDX-License-Identifier: MIT
// Must not compile: einsum over operands of different dtypes.
import strata;
namespace st = strata;
int main() {
  auto a = st::zeros<float>({2, 3});
  auto b = st::zeros<double>({2, 3});
  auto c = st::einsum("ij,ij->", a, b * 2);
}
