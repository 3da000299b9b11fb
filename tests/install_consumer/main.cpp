// SPDX-License-Identifier: MIT
// A consumer of the installed package, written as a user's codebase is: a namespace alias,
// no using-directive, CMake's defaults (no -fopenmp, GNU extensions on).
#include <cmath>
#include <iostream>
#include <sstream>
import strata;

namespace st = strata;

int main() {
  auto t = st::arange<float>(6).view({2, 3}).t();
  std::cout << t << "\n";
  bool ok = t.sizes() == st::int_list{3, 2} && t.at({2, 1}) == 5.0f;
  const auto x = st::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto centred = (x - st::mean(x, {1}, true)) * 2;  // node * int, reduction inside
  st::Tensor y = st::exp(-(centred * centred)) * 0.5f + st::sum(x, {1}, true);
  ok = ok && y.sizes() == st::int_list{2, 3} && std::abs(y.at({0, 1}) - 6.5f) < 1e-6f;
  ok = ok && st::sum(x).item() == 21.0f && st::amax(x * -1).item() == -1.0f;
  auto big = st::ones<float>({512, 512});  // large enough to run on several threads
  big.narrow(0, 0, 256) += 1.0f;
  ok = ok && st::sum(big).item() == 512.0f * 512.0f + 256.0f * 512.0f;
  auto w = st::ones<float>({64, 48});  // a GEMM-sized product: OpenBLAS is linked for consumers too
  ok = ok && st::einsum("ij,jk->ik", big.narrow(0, 0, 32).narrow(1, 0, 64), w).plan() == "gemm(ij,jk->ik)";
  ok = ok && st::matmul(big.narrow(0, 0, 32).narrow(1, 0, 64), w).at({0, 0}) == 128.0f;
  std::ostringstream os;
  os << x.dtype() << " " << x.sizes() << " " << st::sum(x, {0});
  std::cout << os.str() << "\n";
  ok = ok && os.str() == "torch.float32 [2, 3] tensor([5., 7., 9.])";
  return ok ? 0 : 1;
}
