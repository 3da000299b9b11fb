// SPDX-License-Identifier: MIT
// Must not compile: a matrix product of float and double operands (PyTorch refuses it at run
// time; strata knows both dtypes at compile time).
import strata;
namespace st = strata;
int main() {
  auto a = st::zeros<float>({2, 3});
  auto b = st::zeros<double>({3, 2});
  auto c = st::matmul(a, b);
}
