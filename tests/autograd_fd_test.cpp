// SPDX-License-Identifier: MIT
// Autograd against finite differences in quad precision: random shapes (broadcasting, size-1
// dims, transposed leaves) and values for fused trees over every differentiable operation,
// a tree split across recorded nodes, and reductions. The loss is sum(f(a, b, c) * w) for a
// random weight w; every leaf's gradient is compared with central differences of the loss,
// computed in float128 (step 1e-12: truncation ~1e-24, rounding ~1e-22).
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>
import strata;

namespace st = strata;
using q = st::float128;

namespace {
using I = std::int64_t;
using shape_t = std::vector<I>;
using rng_t = std::mt19937_64;

I rnd(rng_t& g, I lo, I hi) { return std::uniform_int_distribution<I>(lo, hi)(g); }

shape_t random_shape(rng_t& g) {
  shape_t s;
  for (I d = 0, rank = rnd(g, 1, 3); d < rank; ++d) s.push_back(rnd(g, 1, 4));
  return s;
}
// Broadcasts to out: a suffix of it with some dims set to 1.
shape_t leaf_shape(rng_t& g, const shape_t& out) {
  const I drop = rnd(g, 0, 3) == 0 ? rnd(g, 0, static_cast<I>(out.size()) - 1) : 0;
  shape_t s(out.begin() + drop, out.end());
  for (auto& x : s)
    if (rnd(g, 0, 3) == 0) x = 1;
  return s;
}
// A leaf of shape s with values in [lo, hi]; a 2-D leaf is sometimes the transpose of a
// contiguous tensor (a strided operand in the backward's loop).
st::Tensor<q> leaf(rng_t& g, const shape_t& s, double lo, double hi) {
  const bool transposed = s.size() == 2 && rnd(g, 0, 1) == 1;
  st::Tensor<q> t = transposed ? st::empty<q>({s[1], s[0]}) : st::empty<q>(s);
  std::uniform_real_distribution<double> u(lo, hi);
  for (I k = 0; k < t.numel(); ++k) t.data_ptr()[k] = q(u(g));
  if (transposed) t = t.t();
  return t.requires_grad_();
}

// Central differences of loss() with respect to every element of x (x's storage is
// written directly: the loss is re-evaluated under no_grad).
template <class Loss>
std::vector<q> finite_differences(const st::Tensor<q>& x, Loss loss) {
  const q h("1e-12");
  const st::no_grad recording_off;
  std::vector<q> d;
  const st::Tensor<q> base = x.detach();
  // Visit elements in x's logical order through a contiguous index list of offsets.
  const auto sizes = base.sizes().vec();
  const auto strides = base.strides().vec();
  std::vector<I> index(sizes.size(), 0);
  for (I k = 0; k < base.numel(); ++k) {
    I off = 0;
    for (std::size_t j = 0; j < sizes.size(); ++j) off += index[j] * strides[j];
    q& e = base.data_ptr()[off];
    const q keep = e;
    e = keep + h;
    const q up = loss();
    e = keep - h;
    const q down = loss();
    e = keep;
    d.push_back((up - down) / (2 * h));
    for (std::size_t j = sizes.size(); j-- > 0;) {
      if (++index[j] < sizes[j]) break;
      index[j] = 0;
    }
  }
  return d;
}

void compare(const st::Tensor<q>& x, const std::vector<q>& want, const std::string& what) {
  REQUIRE(x.has_grad());
  REQUIRE(x.grad().sizes() == x.sizes());
  const std::vector<q> got = x.grad().to_vector();
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const q err = abs(got[k] - want[k]) / (1 + abs(want[k]));
    INFO(what << " element " << k << ": autograd " << static_cast<double>(got[k]) << ", differences "
              << static_cast<double>(want[k]));
    CHECK(static_cast<double>(err) < 1e-15);
  }
}

// One trial: leaves a, b, c (values in [lo, hi]) broadcast to a random shape; the loss
// sum(f(a, b, c) * w).
template <class F>
void trial(rng_t& g, const std::string& name, double lo, double hi, F f) {
  const shape_t out = random_shape(g);
  const st::Tensor<q> a = leaf(g, leaf_shape(g, out), lo, hi);
  const st::Tensor<q> b = leaf(g, leaf_shape(g, out), lo, hi);
  const st::Tensor<q> c = leaf(g, leaf_shape(g, out), lo, hi);
  const st::Tensor<q> w = leaf(g, out, -1, 1).detach();
  auto loss = [&] { return st::Tensor<q>(st::sum(f(a, b, c) * w)).item(); };
  st::Tensor<q> L = st::sum(f(a, b, c) * w);
  L.backward();
  for (const auto* x : {&a, &b, &c}) {
    const std::string what = name + " on " + st::to_string(out) + ", leaf " + st::to_string(x->sizes());
    if (!x->has_grad()) {  // a leaf the loss does not depend on: no gradient, as PyTorch
      FAIL(what << " got no gradient");
      continue;
    }
    compare(*x, finite_differences(*x, loss), what);
  }
}
}  // namespace

TEST_CASE("fused trees against quad-precision finite differences", "[autograd][fd]") {
  rng_t g(20261123);
  for (int rep = 0; rep < 6; ++rep) {
    trial(g, "exp(a) * b + log(c)", 0.5, 2, [](const auto& a, const auto& b, const auto& c) { return st::exp(a) * b + st::log(c); });
    trial(g, "tanh(a * b) - sigmoid(c) / (a * a + 1)", -1.5, 1.5,
          [](const auto& a, const auto& b, const auto& c) { return st::tanh(a * b) - st::sigmoid(c) / (a * a + 1); });
    trial(g, "pow(a, b) + sqrt(c) * rsqrt(a)", 0.5, 2,
          [](const auto& a, const auto& b, const auto& c) { return st::pow(a, b) + st::sqrt(c) * st::rsqrt(a); });
    trial(g, "sin(a) * cos(b) + tan(c * 0.5)", -1.5, 1.5,
          [](const auto& a, const auto& b, const auto& c) { return st::sin(a) * st::cos(b) + st::tan(c * 0.5); });
    trial(g, "where(a > b, a * c, b - c) + maximum(a, c) - minimum(b, c)", -2, 2,
          [](const auto& a, const auto& b, const auto& c) {
            return st::where(a > b, a * c, b - c) + st::maximum(a, c) - st::minimum(b, c);
          });
    trial(g, "expm1(a) * log1p(b) - abs(c) / b", 0.3, 2,
          [](const auto& a, const auto& b, const auto& c) { return st::expm1(a) * st::log1p(b) - st::abs(c - 1.15) / b; });
    trial(g, "clamp(a * b, -0.7, 0.9) * c - relu(c - a)", -1.3, 1.3,
          [](const auto& a, const auto& b, const auto& c) { return st::clamp(a * b, -0.7, 0.9) * c - st::relu(c - a); });
    trial(g, "-(a / b) * c * c * c", 0.5, 2, [](const auto& a, const auto& b, const auto& c) { return -(a / b) * c * c * c; });
  }
}

TEST_CASE("a tree across recorded nodes and reductions, against finite differences", "[autograd][fd]") {
  rng_t g(7);
  for (int rep = 0; rep < 8; ++rep) {
    trial(g, "y = a * b + c (a node); exp(-y * y) * y", -1, 1, [](const auto& a, const auto& b, const auto& c) {
      const st::Tensor<q> y = a * b + c;
      return st::exp(-y * y) * y;
    });
    trial(g, "mean(a * b, last dim, keepdim) * c + amax(c * a, dim 0, keepdim)", 0.5, 2,
          [](const auto& a, const auto& b, const auto& c) {
            const I n = static_cast<I>((a * b * c).sizes().size());
            return st::mean(a * b, {n - 1}, true) * c + st::amax(c * a, {0}, true);
          });
    trial(g, "prod(a + b, dim 0, keepdim) * sum(c * c) - amin(a * c, dim 0, keepdim)", 0.5, 1.5,
          [](const auto& a, const auto& b, const auto& c) {
            return st::prod(a + b, {0}, true) * st::sum(c * c) - st::amin(a * c, {0}, true);
          });
  }
}
