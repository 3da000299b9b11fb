// SPDX-License-Identifier: MIT
// strata used the way an existing codebase uses a library: qualified names and a namespace
// alias, never a using-directive. Every operator and function must be found by
// argument-dependent lookup on any mix of tensors, expression nodes, reductions and scalars.
// Keep this file free of `using namespace strata;`.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
import strata;

namespace st = strata;

namespace {
std::vector<double> values(const st::Tensor<float>& t) {
  std::vector<double> out;
  for (const float v : t.to_vector()) out.push_back(v);
  return out;
}
template <class T>
std::string printed(const T& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
}  // namespace

TEST_CASE("the snippets from the issue compile and compute", "[qualified]") {
  const auto x = st::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto y = (x - st::mean(x, {1}, true)) * 2;  // node * int
  CHECK(values(y.eval()) == std::vector<double>{-2, 0, 2, -2, 0, 2});
  auto e = st::exp(x) * 2.0f;  // node * float
  CHECK(e.to_vector()[0] == Approx(2 * std::exp(1.0)));
  st::Tensor<float> n = -(x * 2);  // unary minus on a node
  CHECK(values(n) == std::vector<double>{-2, -4, -6, -8, -10, -12});
  const float s = st::sum(x).item();  // item() on a reduction
  CHECK(s == 21.0f);
  CHECK(printed(x * 2) == "tensor([[ 2.,  4.,  6.],\n        [ 8., 10., 12.]])");
  CHECK(printed(x.dtype()) == "torch.float32");
  CHECK(printed(x.sizes()) == "[2, 3]");
  CHECK(printed(st::sum(x, {0})) == "tensor([5., 7., 9.])");
}

TEST_CASE("lazy results read like tensors", "[qualified]") {
  const auto x = st::from_vector<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto e = x * 2.5;  // int32 * double scalar: float32
  CHECK(e.dim() == 2);
  CHECK(e.numel() == 6);
  CHECK(e.size(-1) == 3);
  CHECK(e.sizes() == st::int_list{2, 3});
  CHECK(e.dtype() == st::dtype::float32);
  CHECK(e.eval().sizes() == st::int_list{2, 3});
  CHECK(e.to_vector() == std::vector<float>{2.5f, 5, 7.5f, 10, 12.5f, 15});
  st::Tensor z = x + x;  // CTAD: Tensor<int32_t>
  static_assert(std::is_same_v<decltype(z), st::Tensor<std::int32_t>>);
  st::Tensor w = st::sum(x, {1});  // a reduction deduces too: int64
  static_assert(std::is_same_v<decltype(w), st::Tensor<std::int64_t>>);
  CHECK(w.to_vector() == std::vector<std::int64_t>{6, 15});
  auto r = st::amax(x * x, {0});
  CHECK(r.dim() == 1);
  CHECK(r.dtype() == st::dtype::int32);
  CHECK(r.to_vector() == std::vector<std::int32_t>{16, 25, 36});
  CHECK(st::sum(x).item() == 21);
  st::Tensor<double> as_double = e.to<double>();
  CHECK(as_double.to_vector()[1] == 5.0);
  const st::Tensor<double> converted(x);  // explicit conversion between tensor types
  CHECK(converted.to_vector()[5] == 6.0);
  CHECK(x.to<std::int64_t>().dtype() == st::dtype::int64);
  CHECK(st::to_string(x == 2) == "tensor([[False,  True, False],\n        [False, False, False]])");
}

TEST_CASE("every operator and function on nested nodes with scalars on either side", "[qualified]") {
  const auto a = st::from_vector<float>({0.5f, 1.0f, 2.0f, 4.0f}, {2, 2});
  const auto b = st::from_vector<float>({1.0f, 2.0f}, {2});  // broadcasts over rows
  const auto i = st::from_vector<std::int64_t>({7, -7, 9, 4}, {2, 2});
  const auto flag = a > 1.0f;

  auto nested = ((a + b) * 2 - 1.0f) / (b + 1);
  CHECK(nested.to_vector() == std::vector<float>{1.0f, 5.0f / 3, 2.5f, 11.0f / 3});
  CHECK((1 + a).to_vector()[0] == 1.5f);
  CHECK((2.0f - a).to_vector()[3] == -2.0f);
  CHECK((3 * (a + 0)).to_vector()[1] == 3.0f);
  CHECK((8.0f / (a * 1)).to_vector()[2] == 4.0f);
  CHECK((-(a * 1)).to_vector()[0] == -0.5f);

  CHECK(((a * 1) == 1.0f).to_vector() == std::vector<bool>{false, true, false, false});
  CHECK((1.0f != (a * 1)).to_vector() == std::vector<bool>{true, false, true, true});
  CHECK(((a * 1) < (b * 1)).to_vector() == std::vector<bool>{true, true, false, false});
  CHECK(((a * 1) <= 1.0f).to_vector() == std::vector<bool>{true, true, false, false});
  CHECK((2.0f > (a + 0)).to_vector() == std::vector<bool>{true, true, false, false});
  CHECK(((a + 0) >= b).to_vector() == std::vector<bool>{false, false, true, true});

  CHECK(((i + 0) & 3).to_vector() == std::vector<std::int64_t>{3, 1, 1, 0});
  CHECK((1 | (i * 1)).to_vector() == std::vector<std::int64_t>{7, -7, 9, 5});
  CHECK(((i + 0) ^ (i * 1)).to_vector() == std::vector<std::int64_t>{0, 0, 0, 0});
  CHECK((~(i + 0)).to_vector() == std::vector<std::int64_t>{-8, 6, -10, -5});
  CHECK(st::logical_and(flag, (a * 1) < 3.0f).to_vector() == std::vector<bool>{false, false, true, false});
  CHECK(st::logical_or(flag * true, false).to_vector() == std::vector<bool>{false, false, true, true});
  CHECK(st::logical_not(flag & true).to_vector() == std::vector<bool>{true, true, false, false});

  CHECK(st::maximum(a * 1, 1.5f).to_vector() == std::vector<float>{1.5f, 1.5f, 2.0f, 4.0f});
  CHECK(st::minimum(1.5f, a + 0).to_vector() == std::vector<float>{0.5f, 1.0f, 1.5f, 1.5f});
  CHECK(st::fmod(i * 1, 4).to_vector() == std::vector<std::int64_t>{3, -3, 1, 0});
  CHECK(st::remainder(i + 0, 4).to_vector() == std::vector<std::int64_t>{3, 1, 1, 0});
  CHECK(((i * 1) % 4).to_vector() == std::vector<std::int64_t>{3, 1, 1, 0});
  CHECK((-7.5 % (a * 1)).to_vector() == std::vector<float>{0.0f, 0.5f, 0.5f, 0.5f});
  CHECK(st::floor_divide(i * 1, 2).to_vector() == std::vector<std::int64_t>{3, -4, 4, 2});
  CHECK(st::pow(a * 1, 2).to_vector() == std::vector<float>{0.25f, 1.0f, 4.0f, 16.0f});
  CHECK(st::pow(2.0f, a + 0).to_vector()[3] == 16.0f);

  const auto u = a * 0.5f;  // every unary function takes a node
  CHECK(st::exp(u).to_vector()[0] == Approx(std::exp(0.25)));
  CHECK(st::expm1(u).to_vector()[0] == Approx(std::expm1(0.25)));
  CHECK(st::log(u).to_vector()[1] == Approx(std::log(0.5)));
  CHECK(st::log1p(u).to_vector()[1] == Approx(std::log1p(0.5)));
  CHECK(st::sqrt(u).to_vector()[3] == Approx(std::sqrt(2.0)));
  CHECK(st::rsqrt(u).to_vector()[3] == Approx(1 / std::sqrt(2.0)));
  CHECK(st::sin(u).to_vector()[2] == Approx(std::sin(1.0)));
  CHECK(st::cos(u).to_vector()[2] == Approx(std::cos(1.0)));
  CHECK(st::tan(u).to_vector()[2] == Approx(std::tan(1.0)));
  CHECK(st::tanh(u).to_vector()[2] == Approx(std::tanh(1.0)));
  CHECK(st::sigmoid(u).to_vector()[2] == Approx(1 / (1 + std::exp(-1.0))));
  CHECK(st::floor(u * 3).to_vector() == std::vector<float>{0, 1, 3, 6});
  CHECK(st::ceil(u * 3).to_vector() == std::vector<float>{1, 2, 3, 6});
  CHECK(st::round(u * 5).to_vector() == std::vector<float>{1, 2, 5, 10});  // 1.25 -> 1, 2.5 -> 2
  CHECK(st::sign(u - 1).to_vector() == std::vector<float>{-1, -1, 0, 1});
  CHECK(st::abs(u - 1).to_vector() == std::vector<float>{0.75f, 0.5f, 0, 1});
  CHECK(st::neg(u).to_vector()[0] == -0.25f);
  CHECK(st::relu(u - 1).to_vector() == std::vector<float>{0, 0, 0, 1});
  CHECK(st::clamp(u, 0.3f, 1.0f).to_vector() == std::vector<float>{0.3f, 0.5f, 1.0f, 1.0f});
  CHECK(st::where(u > 0.4f, u, 0).to_vector() == std::vector<float>{0, 0.5f, 1.0f, 2.0f});
  CHECK(st::where(flag, 1, a * 0).to_vector() == std::vector<float>{0, 0, 1, 1});
  CHECK(st::cast<std::int32_t>(u * 4).to_vector() == std::vector<std::int32_t>{1, 2, 4, 8});
  CHECK(st::abs(st::from_vector<std::complex<float>>({{3, 4}}) * 1).item() == 5.0f);
}

TEST_CASE("reductions inside expressions and reductions of expressions", "[qualified]") {
  const auto x = st::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  // softmax along rows, written as a user would
  auto shifted = x - st::amax(x, {1}, true);
  st::Tensor<double> ex = st::exp(shifted);
  st::Tensor<double> softmax = ex / st::sum(ex, {1}, true);
  CHECK(st::sum(softmax, {1}).to_vector()[0] == Approx(1.0));
  CHECK(softmax.to_vector()[2] == Approx(std::exp(0.0) / (std::exp(-2.0) + std::exp(-1.0) + 1)));
  CHECK(st::sum((x - 1) * (x - 1)).item() == 55.0);
  CHECK(st::mean(x * 2, {0}).to_vector() == std::vector<double>{5, 7, 9});
  CHECK(st::prod(x + 0, {1}).to_vector() == std::vector<double>{6, 120});
  CHECK(st::amin(x * -1).item() == -6.0);
  CHECK(st::all(x > 0).item());
  CHECK(!st::any(x > 6).item());
  CHECK(st::sum_to(x * 1, {3}).to_vector() == std::vector<double>{5, 7, 9});
  CHECK(st::sum_to(x, {2, 1}).to_vector() == std::vector<double>{6, 15});
  CHECK(x.sum({0}).to_vector() == std::vector<double>{5, 7, 9});
  CHECK(st::eval(x * 2).to_vector()[5] == 12.0);
  CHECK((st::sum(x, {1}) * 2 + st::mean(x, {1})).to_vector() == std::vector<double>{14, 35});
  CHECK((1.0 + st::sum(x)).item() == 22.0);
}

TEST_CASE("compound assignment and assignment through views", "[qualified]") {
  auto t = st::zeros<float>({3, 4});
  t.narrow(0, 1, 2) += 1.0f;
  t.select(1, 0) -= st::from_vector<float>({1, 2, 3});
  t.t()[3] *= 2.0f;
  auto col = t.slice(1, 1, 4, 2);
  col /= 2.0f;
  t.diagonal() = st::full<float>({3}, 9.0f) * 1;
  CHECK(t.to_vector() == std::vector<float>{9, 0, 0, 0, -1, 9, 1, 1, -2, 0.5f, 9, 1});
  auto i = st::arange(6).view({2, 3});
  i &= 5;
  i |= st::from_vector<std::int64_t>({8, 0, 0}) * 1;
  i ^= 1;
  CHECK(i.to_vector() == std::vector<std::int64_t>{9, 0, 1, 8, 5, 4});
  t.assign(st::sum(t, {0}, true));  // a reduction broadcast into its own input: via a temporary
  CHECK(t.to_vector()[0] == 6.0f);
  CHECK(t.to_vector()[4] == 6.0f);
  t.assign(1);
  CHECK(st::sum(t).item() == 12.0f);
}

TEST_CASE("one-brace sizes and printing of sizes and dtypes", "[qualified]") {
  const auto m = st::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(m.sizes() == st::int_list{2, 3});
  CHECK(printed(m.t().sizes()) == "[3, 2]");
  CHECK(printed(st::dtype::float128) == "strata.float128");
  CHECK(printed(st::dtype::bool_) == "torch.bool");
  const std::vector<std::int16_t> v{1, 2, 3, 4};
  CHECK(st::from_vector(v, {2, 2}).sizes() == st::int_list{2, 2});
  CHECK_THROWS_AS(st::from_vector<float>({1, 2, 3}, {2, 2}), st::shape_error);
}

TEST_CASE("autograd through qualified names", "[qualified][autograd]") {
  auto A = st::from_vector<float>({1, 2, 3}).requires_grad_();
  auto B = st::from_vector<float>({1}).requires_grad_();
  st::Tensor<float> C = A + B;
  st::sum(C).backward();
  CHECK(values(A.grad()) == std::vector<double>{1, 1, 1});
  CHECK(values(B.grad()) == std::vector<double>{3});
  {
    const st::no_grad guard;
    A.assign(A - A.grad() * 0.5f);  // an SGD step
    CHECK_FALSE(st::is_grad_enabled());
  }
  st::zero_grad(A, B);
  st::Tensor<float> L = st::mean(st::exp(A) * B);
  const auto g = st::grad(L, std::vector<st::Tensor<float>>{A, B});
  CHECK(values(g[0])[0] == Approx(std::exp(0.5) / 3));
  CHECK(values(g[1])[0] == Approx((std::exp(0.5) + std::exp(1.5) + std::exp(2.5)) / 3));
  CHECK(values(A.grad()) == std::vector<double>{0, 0, 0});
}
