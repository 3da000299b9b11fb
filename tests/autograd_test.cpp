// SPDX-License-Identifier: MIT
// Autograd: PyTorch's examples, hand-checked derivatives, graph semantics and errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>
import strata;
using namespace strata;

namespace {
template <class T>
std::vector<double> values(const Tensor<T>& t) {
  std::vector<double> v;
  for (const T x : t.to_vector()) v.push_back(static_cast<double>(x));
  return v;
}
void check(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i])) CHECK(got[i] == want[i]);
    else CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}
}  // namespace

TEST_CASE("PyTorch's broadcasting example: B's gradient is summed back to its shape", "[autograd]") {
  auto A = from_vector<float>({1, 2, 3}).requires_grad_();
  auto B = from_vector<float>({1}).requires_grad_();
  Tensor<float> C = A + B;
  sum(C).backward();
  check(values(A.grad()), {1, 1, 1});
  check(values(B.grad()), {3});
  CHECK(A.grad().sizes() == A.sizes());
  CHECK(B.grad().sizes() == B.sizes());
}

TEST_CASE("hand-checked derivatives", "[autograd]") {
  SECTION("exp, relu, a constant weight") {
    auto x = from_vector<double>({0.5, -1, 2, 0}).requires_grad_();
    auto w = from_vector<double>({1, 2, 3, 4});
    Tensor<double> L = sum(exp(x) * w + relu(x) * x);
    L.backward();
    // d/dx = w e^x + (x > 0 ? 2x : 0)
    check(values(x.grad()), {std::exp(0.5) + 1, 2 * std::exp(-1.0), 3 * std::exp(2.0) + 4, 4});
  }
  SECTION("amax shares the gradient among ties") {
    auto m = from_vector<float>({1, 3, 3, 2}, {2, 2}).requires_grad_();
    amax(m).backward();
    check(values(m.grad()), {0, 0.5, 0.5, 0});
  }
  SECTION("prod with a zero") {
    auto p = from_vector<float>({1, 0, 3, 2}, {2, 2}).requires_grad_();
    sum(prod(p, {1})).backward();
    check(values(p.grad()), {0, 1, 2, 3});
  }
  SECTION("views: t, narrow") {
    auto v = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
    Tensor<float> s = v.t() * 2;
    sum(s.narrow(0, 1, 2)).backward();
    check(values(v.grad()), {0, 2, 2, 0, 2, 2});
  }
}
