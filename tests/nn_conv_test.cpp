// SPDX-License-Identifier: MIT
// strata.nn's convolutions and pooling against PyTorch 1.13 (tests/golden/nn.txt, made by
// tools/make_nn_golden.py): values, indices and the gradient of every input for each option,
// and torch's errors; the same bits for 1 and 2 threads; a naive direct convolution over random
// geometries; a ported LeNet-style forward and backward.
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>
#include "check_close.hpp"
#include "nn_golden.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;
namespace F = strata::nn::functional;

namespace {
template <class T>
st::Tensor<T> make(const nn_golden::tensor_data& d) {
  std::vector<T> v;
  for (double x : d.values) v.push_back(test::from_double<T>(x));
  return st::from_vector<T>(v, d.sizes);
}

template <std::size_t D>
F::ExpandingArray<D> expanding(const std::string& s) {
  const auto v = nn_golden::ints(s);
  if (v.size() == 1) return v[0];
  if constexpr (D == 1) return {v[0]};
  else if constexpr (D == 2) return {v[0], v[1]};
  else return {v[0], v[1], v[2]};
}

// The case's function; indices set when the function returns them.
template <class T, std::size_t D>
st::Tensor<T> call_d(const nn_golden::golden_case& c, std::map<std::string, st::Tensor<T>>& in,
                     std::optional<st::Tensor<std::int64_t>>& indices) {
  const auto has = [&](const char* k) { return c.has(k); };
  const std::string base = c.function.substr(0, c.function.size() - 2);  // conv2d -> conv
  const auto& x = in.at("input");
  if (base == "conv") {
    st::nn::functional::ConvFuncOptions<D> o;
    if (in.count("bias")) o.bias(in.at("bias"));
    if (has("stride")) o.stride(expanding<D>(c.option("stride")));
    if (has("padding")) {
      const std::string p = c.option("padding");
      if (p == "same" || p == "valid") o.padding(F::ConvPadding<D>(p));
      else o.padding(expanding<D>(p));
    }
    if (has("dilation")) o.dilation(expanding<D>(c.option("dilation")));
    if (has("groups")) o.groups(std::stoll(c.option("groups")));
    if constexpr (D == 1) return F::conv1d(x, in.at("weight"), o);
    else if constexpr (D == 2) return F::conv2d(x, in.at("weight"), o);
    else return F::conv3d(x, in.at("weight"), o);
  }
  if (base == "conv_transpose") {
    st::nn::functional::ConvTransposeFuncOptions<D> o;
    if (in.count("bias")) o.bias(in.at("bias"));
    if (has("stride")) o.stride(expanding<D>(c.option("stride")));
    if (has("padding")) o.padding(expanding<D>(c.option("padding")));
    if (has("output_padding")) o.output_padding(expanding<D>(c.option("output_padding")));
    if (has("dilation")) o.dilation(expanding<D>(c.option("dilation")));
    if (has("groups")) o.groups(std::stoll(c.option("groups")));
    if constexpr (D == 1) return F::conv_transpose1d(x, in.at("weight"), o);
    else if constexpr (D == 2) return F::conv_transpose2d(x, in.at("weight"), o);
    else return F::conv_transpose3d(x, in.at("weight"), o);
  }
  if (base == "max_pool") {
    st::nn::functional::MaxPoolFuncOptions<D> o(expanding<D>(c.option("kernel_size")));
    if (has("stride")) o.stride(expanding<D>(c.option("stride")));
    if (has("padding")) o.padding(expanding<D>(c.option("padding")));
    if (has("dilation")) o.dilation(expanding<D>(c.option("dilation")));
    if (has("ceil_mode")) o.ceil_mode(c.option("ceil_mode") == "1");
    if constexpr (D == 1) {
      auto [y, i] = F::max_pool1d_with_indices(x, o);
      indices = i;
      CHECK(as_doubles(F::max_pool1d(x.detach(), o)) == as_doubles(y.detach()));
      return y;
    } else if constexpr (D == 2) {
      auto [y, i] = F::max_pool2d_with_indices(x, o);
      indices = i;
      CHECK(as_doubles(F::max_pool2d(x.detach(), o)) == as_doubles(y.detach()));
      return y;
    } else {
      auto [y, i] = F::max_pool3d_with_indices(x, o);
      indices = i;
      return y;
    }
  }
  if (base == "avg_pool") {
    st::nn::functional::AvgPoolFuncOptions<D> o(expanding<D>(c.option("kernel_size")));
    if (has("stride")) o.stride(expanding<D>(c.option("stride")));
    if (has("padding")) o.padding(expanding<D>(c.option("padding")));
    if (has("ceil_mode")) o.ceil_mode(c.option("ceil_mode") == "1");
    if (has("count_include_pad")) o.count_include_pad(c.option("count_include_pad") == "1");
    if (has("divisor_override")) o.divisor_override(std::stoll(c.option("divisor_override")));
    if constexpr (D == 1) return F::avg_pool1d(x, o);
    else if constexpr (D == 2) return F::avg_pool2d(x, o);
    else return F::avg_pool3d(x, o);
  }
  if (base == "adaptive_avg_pool") return F::adaptive_avg_pool2d(x, expanding<2>(c.option("output_size")));
  if (base == "adaptive_max_pool") {
    auto [y, i] = F::adaptive_max_pool2d_with_indices(x, expanding<2>(c.option("output_size")));
    indices = i;
    return y;
  }
  throw std::logic_error("no such function in this test: " + c.function);
}

template <class T>
st::Tensor<T> call(const nn_golden::golden_case& c, std::map<std::string, st::Tensor<T>>& in,
                   std::optional<st::Tensor<std::int64_t>>& indices) {
  const char d = c.function[c.function.size() - 2];
  if (d == '1') return call_d<T, 1>(c, in, indices);
  if (d == '2') return call_d<T, 2>(c, in, indices);
  return call_d<T, 3>(c, in, indices);
}

template <class T>
void run_case(const nn_golden::golden_case& c) {
  INFO("case " << c.id);
  std::map<std::string, st::Tensor<T>> in;
  for (const auto& [name, d] : c.inputs) {
    in[name] = make<T>(d);
    if (c.grads.count(name)) in[name].requires_grad_();
  }
  std::optional<st::Tensor<std::int64_t>> indices;
  if (!c.error.empty()) {
    CHECK_THROWS_WITH(call<T>(c, in, indices), c.error);
    return;
  }
  st::Tensor<T> out = call<T>(c, in, indices);
  // bfloat16 is computed in float and rounded once; torch's bfloat16 kernels accumulate in float
  // too but round some steps on the way: 2 units of bfloat16's last place at the tensor's scale.
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  const auto check_close = [&](const std::vector<double>& got, const std::vector<double>& want) {
    if constexpr (std::is_same_v<T, st::bfloat16>) test::check_close_scaled(got, want, 1.0 / 64);
    else test::check_close(got, want, tol);
  };
  CHECK(std::vector<std::int64_t>(out.sizes().begin(), out.sizes().end()) == c.out.sizes);
  check_close(as_doubles(out.detach()), c.out.values);
  if (c.extra.count("indices")) {
    REQUIRE(indices);
    CHECK(as_doubles(*indices) == c.extra.at("indices").values);
  }
  out.backward(make<T>({c.dtype, c.out.sizes, c.cot}));
  for (const auto& [name, want] : c.grads) {
    INFO("gradient of " << name);
    REQUIRE(in.at(name).has_grad());
    check_close(as_doubles(in.at(name).grad()), want.values);
  }
}

bool is_conv_or_pool(const std::string& f) { return f.find("conv") == 0 || f.find("pool") != std::string::npos; }
}  // namespace

TEST_CASE("nn: convolutions and pooling match PyTorch", "[nn]") {
  int cases = 0;
  for (const auto& c : nn_golden::read()) {
    if (!is_conv_or_pool(c.function)) continue;
    ++cases;
    if (c.dtype == "float32") run_case<float>(c);
    else if (c.dtype == "bfloat16") run_case<st::bfloat16>(c);
    else run_case<double>(c);
  }
  CHECK(cases > 60);
}

namespace {
// A direct convolution, one multiply-add at a time, with its input and weight gradients for
// the output gradient gy: the reference the im2col/GEMM path is compared with.
struct naive_conv {
  std::vector<std::int64_t> xs, ws, ys;  // [N, C, s0, s1, s2] with leading spatial 1s
  std::vector<double> y, gx, gw;
};
naive_conv naive(const std::vector<double>& x, const std::vector<std::int64_t>& xs, const std::vector<double>& w,
                 const std::vector<std::int64_t>& ws, const std::vector<double>& gy,
                 const std::vector<std::int64_t>& ys, std::int64_t groups, const std::vector<std::int64_t>& stride,
                 const std::vector<std::int64_t>& pad, const std::vector<std::int64_t>& dil) {
  naive_conv r{xs, ws, ys, std::vector<double>(gy.size(), 0.0), std::vector<double>(x.size(), 0.0),
               std::vector<double>(w.size(), 0.0)};
  const std::int64_t N = xs[0], C = xs[1], O = ws[0], Cg = ws[1], Og = O / groups;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t a = 0; a < ys[2]; ++a)
        for (std::int64_t b = 0; b < ys[3]; ++b)
          for (std::int64_t e = 0; e < ys[4]; ++e) {
            const std::int64_t yi = (((n * O + o) * ys[2] + a) * ys[3] + b) * ys[4] + e;
            for (std::int64_t c = 0; c < Cg; ++c)
              for (std::int64_t k0 = 0; k0 < ws[2]; ++k0)
                for (std::int64_t k1 = 0; k1 < ws[3]; ++k1)
                  for (std::int64_t k2 = 0; k2 < ws[4]; ++k2) {
                    const std::int64_t i0 = a * stride[0] - pad[0] + k0 * dil[0];
                    const std::int64_t i1 = b * stride[1] - pad[1] + k1 * dil[1];
                    const std::int64_t i2 = e * stride[2] - pad[2] + k2 * dil[2];
                    if (i0 < 0 || i0 >= xs[2] || i1 < 0 || i1 >= xs[3] || i2 < 0 || i2 >= xs[4]) continue;
                    const std::int64_t ci = o / Og * Cg + c;
                    const std::int64_t xi = (((n * C + ci) * xs[2] + i0) * xs[3] + i1) * xs[4] + i2;
                    const std::int64_t wi = (((o * Cg + c) * ws[2] + k0) * ws[3] + k1) * ws[4] + k2;
                    r.y[yi] += x[xi] * w[wi];
                    r.gx[xi] += gy[yi] * w[wi];
                    r.gw[wi] += gy[yi] * x[xi];
                  }
          }
  return r;
}

std::vector<double> random_values(std::mt19937& rng, std::int64_t n) {
  std::uniform_int_distribution<int> d(-16, 16);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v) e = d(rng) / 8.0;  // exact in sums of a few hundred terms
  return v;
}
std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (std::int64_t e : v) p *= e;
  return p;
}
}  // namespace

namespace {
// The values are multiples of 1/8 in [-2, 2]: every sum here is exact in float and double
// whatever its order, so the convolution (oneDNN for float, im2col for double) equals the
// direct one bit for bit.
template <class T>
st::Tensor<T> tensor_of(const std::vector<double>& v, const std::vector<std::int64_t>& sizes) {
  return st::from_vector<T>(std::vector<T>(v.begin(), v.end()), sizes);
}

template <class T>
void random_geometries() {
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    const int D = 1 + trial % 3;
    const std::int64_t groups = pick(1, 2), N = pick(1, 3), Cg = pick(1, 3), Og = pick(1, 3);
    std::vector<std::int64_t> xs{N, Cg * groups, 1, 1, 1}, ws{Og * groups, Cg, 1, 1, 1}, ys{N, Og * groups, 1, 1, 1};
    std::vector<std::int64_t> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
    for (int i = 3 - D; i < 3; ++i) {
      stride[i] = pick(1, 3);
      dil[i] = pick(1, 2);
      ws[2 + i] = pick(1, 3);
      pad[i] = pick(0, 2);
      const std::int64_t effective = dil[i] * (ws[2 + i] - 1) + 1;
      xs[2 + i] = std::max<std::int64_t>(pick(1, 7), effective - 2 * pad[i]);
      ys[2 + i] = (xs[2 + i] + 2 * pad[i] - effective) / stride[i] + 1;
    }
    INFO("trial " << trial << ", " << D << "-d, groups " << groups);
    const auto x = random_values(rng, product(xs)), w = random_values(rng, product(ws)), gy = random_values(rng, product(ys));
    const naive_conv want = naive(x, xs, w, ws, gy, ys, groups, stride, pad, dil);
    const auto drop = [&](std::vector<std::int64_t> s) {  // [N, C, 1, 1, L] -> [N, C, L] for 1-d
      s.erase(s.begin() + 2, s.begin() + 2 + (3 - D));
      return s;
    };
    auto xt = tensor_of<T>(x, drop(xs)).requires_grad_();
    auto wt = tensor_of<T>(w, drop(ws)).requires_grad_();
    st::Tensor<T> y;
    if (D == 1) y = F::conv1d(xt, wt, F::Conv1dFuncOptions().stride(stride[2]).padding(pad[2]).dilation(dil[2]).groups(groups));
    else if (D == 2)
      y = F::conv2d(xt, wt,
                    F::Conv2dFuncOptions().stride({stride[1], stride[2]}).padding({pad[1], pad[2]}).dilation({dil[1], dil[2]}).groups(groups));
    else
      y = F::conv3d(xt, wt,
                    F::Conv3dFuncOptions()
                        .stride({stride[0], stride[1], stride[2]})
                        .padding({pad[0], pad[1], pad[2]})
                        .dilation({dil[0], dil[1], dil[2]})
                        .groups(groups));
    REQUIRE(std::vector<std::int64_t>(y.sizes().begin(), y.sizes().end()) == drop(ys));
    CHECK(as_doubles(y.detach()) == want.y);
    y.backward(tensor_of<T>(gy, drop(ys)));
    CHECK(as_doubles(xt.grad()) == want.gx);
    CHECK(as_doubles(wt.grad()) == want.gw);
  }
}
}  // namespace

TEST_CASE("nn: conv1d/2d/3d over random geometries equal a direct convolution, values and gradients", "[nn]") {
  random_geometries<double>();
  random_geometries<float>();
}

namespace {
template <class T>
void many_tiles() {
  // Many channels make the column matrix tall, so that its tiles of output positions (which
  // fit L2) are narrower than the outputs and start and end inside output lines.
  std::mt19937 rng(7);
  struct geometry {
    std::int64_t n, c, h, w, o, k, stride, pad, dil;
  };
  for (const geometry& t : {geometry{2, 40, 13, 11, 6, 3, 1, 1, 1}, geometry{1, 48, 17, 15, 5, 3, 2, 2, 2},
                            geometry{3, 64, 9, 21, 4, 2, 1, 0, 1}}) {
    const std::int64_t oh = (t.h + 2 * t.pad - t.dil * (t.k - 1) - 1) / t.stride + 1;
    const std::int64_t ow = (t.w + 2 * t.pad - t.dil * (t.k - 1) - 1) / t.stride + 1;
    const std::vector<std::int64_t> xs{t.n, t.c, 1, t.h, t.w}, ws{t.o, t.c, 1, t.k, t.k}, ys{t.n, t.o, 1, oh, ow};
    const auto x = random_values(rng, product(xs)), w = random_values(rng, product(ws)), gy = random_values(rng, product(ys));
    const naive_conv want = naive(x, xs, w, ws, gy, ys, 1, {1, t.stride, t.stride}, {0, t.pad, t.pad}, {1, t.dil, t.dil});
    auto xt = tensor_of<T>(x, {t.n, t.c, t.h, t.w}).requires_grad_();
    auto wt = tensor_of<T>(w, {t.o, t.c, t.k, t.k}).requires_grad_();
    auto y = F::conv2d(xt, wt, F::Conv2dFuncOptions().stride(t.stride).padding(t.pad).dilation(t.dil));
    CHECK(as_doubles(y.detach()) == want.y);
    y.backward(tensor_of<T>(gy, {t.n, t.o, oh, ow}));
    CHECK(as_doubles(xt.grad()) == want.gx);
    CHECK(as_doubles(wt.grad()) == want.gw);
  }
}
}  // namespace

TEST_CASE("nn: convolutions whose column matrix spans several tiles equal a direct convolution", "[nn]") {
  many_tiles<double>();
  many_tiles<float>();
}

TEST_CASE("nn: convolution, batch norm and pooling gradients have the same bits for 1 and 2 threads", "[nn]") {
  const int threads = st::get_num_threads();
  auto run = [](int n) {
    st::set_num_threads(n);
    st::manual_seed(11);
    auto x = st::randn<float>({9, 6, 12, 10}).requires_grad_();
    auto w = st::randn<float>({8, 3, 3, 3}).requires_grad_();
    auto b = st::randn<float>({8}).requires_grad_();
    auto gamma = st::randn<float>({8}).requires_grad_();
    auto c = F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).padding(1).groups(2));
    auto y = F::batch_norm(c, st::zeros<float>({8}), st::ones<float>({8}),
                           F::BatchNormFuncOptions().weight(gamma).training(true));
    auto p = F::max_pool2d(y, F::MaxPool2dFuncOptions(2));
    auto q = F::avg_pool2d(y, F::AvgPool2dFuncOptions(3).stride(2).padding(1));
    (st::sum(p * p) + st::sum(q)).backward();
    return std::vector<std::vector<double>>{as_doubles(y.detach()), as_doubles(x.grad()), as_doubles(w.grad()),
                                            as_doubles(b.grad()), as_doubles(gamma.grad())};
  };
  const auto one = run(1), two = run(2);
  st::set_num_threads(threads);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == two[i]);
}

TEST_CASE("nn: a LeNet-style PyTorch forward and backward ports line by line", "[nn]") {
  // x = torch.randn(4, 1, 8, 8)
  // h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)       # [4, 6, 4, 4]
  // h = F.avg_pool2d(F.relu(F.conv2d(h, w2, b2, padding='same')), 2)  # [4, 8, 2, 2]
  // logits = F.linear(h.flatten(1), w3, b3); loss = F.cross_entropy(logits, y); loss.backward()
  st::manual_seed(5);
  auto x = st::randn<float>({4, 1, 8, 8});
  auto y = st::randint(0, 10, {4});
  auto w1 = st::randn<float>({6, 1, 3, 3}).requires_grad_();
  auto b1 = st::zeros<float>({6}).requires_grad_();
  auto w2 = st::randn<float>({8, 6, 3, 3}).requires_grad_();
  auto b2 = st::zeros<float>({8}).requires_grad_();
  auto w3 = st::randn<float>({10, 32}).requires_grad_();
  auto b3 = st::zeros<float>({10}).requires_grad_();
  auto h = F::max_pool2d(st::relu(F::conv2d(x, w1, F::Conv2dFuncOptions().bias(b1).padding(1))), F::MaxPool2dFuncOptions(2));
  h = F::avg_pool2d(st::relu(F::conv2d(h, w2, F::Conv2dFuncOptions().bias(b2).padding("same"))), F::AvgPool2dFuncOptions(2));
  auto logits = F::linear(h.flatten(1), w3, b3);
  auto loss = F::cross_entropy(logits, y);
  loss.backward();
  CHECK(h.sizes().vec() == st::dim_vector{4, 8, 2, 2});
  CHECK(std::isfinite(loss.item()));
  CHECK(w1.grad().sizes().vec() == st::dim_vector{6, 1, 3, 3});
  CHECK(b1.grad().sizes().vec() == st::dim_vector{6});
  CHECK(st::sum(st::abs(w1.grad())).item() > 0);
}

TEST_CASE("nn: pooling refuses sizes PyTorch refuses, and the backward keeps its own indices", "[nn]") {
  const auto x = st::randn<double>({1, 2, 6, 6});
  CHECK_THROWS_WITH(F::max_pool2d(x, F::MaxPool2dFuncOptions(2).dilation(0)),
                    "dilation should be greater than zero, but got 0, 0");
  CHECK_THROWS_WITH(F::max_pool2d(x, F::MaxPool2dFuncOptions(0)), "kernel_size must be greater than zero, but got 0, 0");
  CHECK_THROWS_WITH(F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).padding(-1)), "pad must be non-negative, but got -1, -1");
  CHECK_THROWS_WITH(F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride({1, 0})),
                    "stride should be greater than zero, but got 1, 0");
  // Writing the returned indices does not move the gradient.
  auto leaf = x.clone().requires_grad_();
  auto [y, idx] = F::max_pool2d_with_indices(leaf, F::MaxPool2dFuncOptions(2));
  const auto want = as_doubles(idx);
  idx.fill_(0);
  st::sum(y).backward();
  std::vector<double> expected(72, 0.0);
  for (std::size_t i = 0; i < want.size(); ++i) expected[(i / 9) * 36 + static_cast<std::size_t>(want[i])] = 1;
  CHECK(as_doubles(leaf.grad()) == expected);
}

namespace {
// A direct max pool over one plane [s0, s1, s2] (leading 1s for fewer dims): PyTorch's rule,
// a larger value or a NaN takes the place, ties keep the first; -1 for an empty window.
struct naive_pool {
  std::vector<double> y;
  std::vector<std::int64_t> at;
};
naive_pool naive_max(const std::vector<double>& x, const std::array<std::int64_t, 3>& in,
                     const std::array<std::int64_t, 3>& out, const std::array<std::int64_t, 3>& k,
                     const std::array<std::int64_t, 3>& s, const std::array<std::int64_t, 3>& p,
                     const std::array<std::int64_t, 3>& d, std::int64_t planes) {
  naive_pool r;
  for (std::int64_t c = 0; c < planes; ++c)
    for (std::int64_t o0 = 0; o0 < out[0]; ++o0)
      for (std::int64_t o1 = 0; o1 < out[1]; ++o1)
        for (std::int64_t o2 = 0; o2 < out[2]; ++o2) {
          double best = -INFINITY;
          std::int64_t at = -1;
          for (std::int64_t k0 = 0; k0 < k[0]; ++k0)
            for (std::int64_t k1 = 0; k1 < k[1]; ++k1)
              for (std::int64_t k2 = 0; k2 < k[2]; ++k2) {
                const std::int64_t i0 = o0 * s[0] - p[0] + k0 * d[0], i1 = o1 * s[1] - p[1] + k1 * d[1],
                                   i2 = o2 * s[2] - p[2] + k2 * d[2];
                if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                const std::int64_t i = (i0 * in[1] + i1) * in[2] + i2;
                const double v = x[static_cast<std::size_t>(c * in[0] * in[1] * in[2] + i)];
                if (at < 0 || v > best || std::isnan(v)) {
                  best = v;
                  at = i;
                }
              }
          r.y.push_back(best);
          r.at.push_back(at);
        }
  return r;
}

template <class T>
void random_max_pools() {
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    const int D = 1 + trial % 3;
    std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
    std::vector<std::int64_t> xs{pick(1, 2), pick(1, 3)}, ks, ss, ps, ds;
    const bool ceil = pick(0, 1) == 1;
    for (int i = 3 - D; i < 3; ++i) {
      k[i] = pick(1, 3);
      s[i] = pick(1, 3);
      d[i] = pick(1, 2);
      p[i] = pick(0, static_cast<int>(k[i] / 2));
      // Rows long enough for the blocks of 16 windows in the last dim, short ones elsewhere.
      in[i] = std::max<std::int64_t>(i == 2 && D < 3 ? pick(1, 70) : pick(1, 9), d[i] * (k[i] - 1) + 1 - 2 * p[i]);
      const std::int64_t span = in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 + (ceil ? s[i] - 1 : 0);
      out[i] = span / s[i] + 1;
      if (ceil && (out[i] - 1) * s[i] >= in[i] + p[i]) --out[i];
      xs.push_back(in[i]);
      ks.push_back(k[i]);
      ss.push_back(s[i]);
      ps.push_back(p[i]);
      ds.push_back(d[i]);
    }
    INFO("trial " << trial << ", " << D << "-d, ceil " << ceil << ", last dim " << in[2] << " k " << k[2] << " s " << s[2]);
    // Values from a small set (ties) with some NaNs.
    std::vector<double> x(static_cast<std::size_t>(product(xs)));
    for (double& v : x) v = pick(0, 40) == 0 ? NAN : pick(-4, 4) / 2.0;
    const std::int64_t planes = xs[0] * xs[1];
    const naive_pool want = naive_max(x, in, out, k, s, p, d, planes);
    const auto xt = tensor_of<T>(x, xs);
    st::Tensor<T> y;
    st::Tensor<std::int64_t> at;
    if (D == 1) {
      std::tie(y, at) = F::max_pool1d_with_indices(
          xt, F::MaxPool1dFuncOptions(ks[0]).stride(ss[0]).padding(ps[0]).dilation(ds[0]).ceil_mode(ceil));
    } else if (D == 2) {
      std::tie(y, at) = F::max_pool2d_with_indices(xt, F::MaxPool2dFuncOptions({ks[0], ks[1]})
                                                          .stride({ss[0], ss[1]})
                                                          .padding({ps[0], ps[1]})
                                                          .dilation({ds[0], ds[1]})
                                                          .ceil_mode(ceil));
    } else {
      std::tie(y, at) = F::max_pool3d_with_indices(xt, F::MaxPool3dFuncOptions({ks[0], ks[1], ks[2]})
                                                          .stride({ss[0], ss[1], ss[2]})
                                                          .padding({ps[0], ps[1], ps[2]})
                                                          .dilation({ds[0], ds[1], ds[2]})
                                                          .ceil_mode(ceil));
    }
    const auto got = as_doubles(y);
    REQUIRE(got.size() == want.y.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i);
      CHECK((got[i] == want.y[i] || (std::isnan(got[i]) && std::isnan(want.y[i]))));
    }
    CHECK(at.to_vector() == want.at);
  }
}
}  // namespace

TEST_CASE("nn: max pooling over random geometries equals a direct max, values and indices, NaNs and ties", "[nn]") {
  random_max_pools<double>();
  random_max_pools<float>();
}

TEST_CASE("nn: float convolutions have the same bits for 1 and 2 threads on shapes a GEMM would split", "[nn]") {
  // One sample with a long reduction (64 channels x 3 x 3) and few outputs, where a library
  // splitting the sum over threads would show; and a transposed convolution.
  const int threads = st::get_num_threads();
  auto run = [](int n) {
    st::set_num_threads(n);
    st::manual_seed(21);
    auto x = st::randn<float>({1, 64, 7, 7}).requires_grad_();
    auto w = st::randn<float>({4, 64, 3, 3}).requires_grad_();
    auto wt = st::randn<float>({4, 6, 3, 3}).requires_grad_();
    auto y = F::conv2d(x, w, F::Conv2dFuncOptions().padding(1));
    auto z = F::conv_transpose2d(y, wt, F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1));
    st::sum(z * z).backward();
    return std::vector<std::vector<double>>{as_doubles(z.detach()), as_doubles(x.grad()), as_doubles(w.grad()),
                                            as_doubles(wt.grad())};
  };
  const auto one = run(1), two = run(2);
  st::set_num_threads(threads);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == two[i]);
}

TEST_CASE("nn: float transposed convolutions equal the double ones on exact values", "[nn]") {
  // Multiples of 1/8: every sum is exact, so float (oneDNN) and double (im2col) agree bit for
  // bit; output_padding makes oneDNN's right padding negative.
  std::mt19937 rng(5);
  struct geometry {
    std::int64_t n, c, h, w, o, k, stride, pad, out_pad, dil, groups;
  };
  for (const geometry& t : {geometry{2, 4, 5, 4, 6, 3, 2, 1, 1, 1, 2}, geometry{1, 3, 4, 6, 2, 2, 3, 0, 2, 1, 1},
                            geometry{2, 2, 3, 3, 4, 3, 2, 2, 1, 2, 2}}) {
    const std::vector<std::int64_t> xs{t.n, t.c, t.h, t.w}, ws{t.c, t.o / t.groups, t.k, t.k};
    const auto xv = random_values(rng, product(xs)), wv = random_values(rng, product(ws));
    const auto o = F::ConvTranspose2dFuncOptions().stride(t.stride).padding(t.pad).output_padding(t.out_pad).dilation(t.dil).groups(t.groups);
    auto xf = tensor_of<float>(xv, xs).requires_grad_();
    auto wf = tensor_of<float>(wv, ws).requires_grad_();
    auto xd = tensor_of<double>(xv, xs).requires_grad_();
    auto wd = tensor_of<double>(wv, ws).requires_grad_();
    auto yf = F::conv_transpose2d(xf, wf, o);
    auto yd = F::conv_transpose2d(xd, wd, o);
    CHECK(as_doubles(yf.detach()) == as_doubles(yd.detach()));
    const auto gy = random_values(rng, yd.numel());
    const std::vector<std::int64_t> ys(yd.sizes().begin(), yd.sizes().end());
    yf.backward(tensor_of<float>(gy, ys));
    yd.backward(tensor_of<double>(gy, ys));
    CHECK(as_doubles(xf.grad()) == as_doubles(xd.grad()));
    CHECK(as_doubles(wf.grad()) == as_doubles(wd.grad()));
  }
}
