// SPDX-License-Identifier: MIT
// The gradients of strata.nn's convolutions, pooling and normalisations against central finite
// differences computed in float128: for a loss sum(f(inputs) * c) with a random cotangent c,
// every element of every input's gradient from backward() is compared with
// (loss(x + h) - loss(x - h)) / 2h, h = 2^-40. In float128 (113-bit significand) the
// difference's truncation error is O(h^2) ~ 1e-24 and its rounding error ~ 1e-34 / h ~ 1e-22,
// so the gradients are checked to 1e-18 — far past what double could show, and independent
// of PyTorch's golden data.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
import strata;

namespace st = strata;
namespace F = strata::nn::functional;
using q = st::float128;
using tensors = std::vector<st::Tensor<q>>;

namespace {
// Random values in (-2, 2) on a grid of 1/64 plus a small irregular part: no ties within a
// pooling window, nothing exactly zero.
st::Tensor<q> random(std::vector<std::int64_t> sizes) {
  const auto coarse = st::round(st::rand<double>(sizes) * 256.0 - 128.0) / 64.0;
  const auto fine = st::rand<double>(sizes) * (1.0 / 4096);
  return st::Tensor<double>(coarse + fine).to<q>();
}

double as_double(const q& v) { return static_cast<double>(v); }

void check_gradients(const std::string& what, const std::function<st::Tensor<q>(const tensors&)>& f,
                     const tensors& inputs) {
  INFO(what);
  tensors leaves;
  for (const auto& t : inputs) leaves.push_back(t.clone().requires_grad_());
  const st::Tensor<q> out = f(leaves);
  const st::Tensor<q> cot = random(std::vector<std::int64_t>(out.sizes().begin(), out.sizes().end()));
  st::sum(out * cot).backward();
  const auto loss = [&](const tensors& xs) {
    const st::no_grad guard;
    return st::sum(f(xs) * cot).item();
  };
  const q h = q(1) / q(1099511627776.0);  // 2^-40
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    INFO("input " << k);
    REQUIRE(leaves[k].has_grad());
    const st::Tensor<q> grad = leaves[k].grad().contiguous();
    tensors xs;
    for (const auto& t : inputs) xs.push_back(t.clone());
    q* x = xs[k].data_ptr();
    for (std::int64_t i = 0; i < xs[k].numel(); ++i) {
      const q keep = x[i];
      x[i] = keep + h;
      const q up = loss(xs);
      x[i] = keep - h;
      const q down = loss(xs);
      x[i] = keep;
      const q fd = (up - down) / (2 * h);
      const q g = grad.data_ptr()[i];
      const q err = g > fd ? g - fd : fd - g;
      const q scale = 1 + (g > 0 ? g : -g);
      INFO("element " << i << ": backward " << as_double(g) << ", finite difference " << as_double(fd));
      CHECK(as_double(err / scale) < 1e-18);
    }
  }
}
}  // namespace

TEST_CASE("nn gradients: convolutions against float128 finite differences", "[nn]") {
  st::manual_seed(11);
  check_gradients(
      "conv2d, groups 2, stride (2, 1), padding (1, 0), dilation (1, 2), bias",
      [](const tensors& t) {
        return F::conv2d(t[0], t[1], F::Conv2dFuncOptions().bias(t[2]).stride({2, 1}).padding({1, 0}).dilation({1, 2}).groups(2));
      },
      {random({2, 4, 5, 6}), random({6, 2, 3, 2}), random({6})});
  check_gradients(
      "conv2d depthwise, padding same",
      [](const tensors& t) { return F::conv2d(t[0], t[1], F::Conv2dFuncOptions().padding("same").groups(3)); },
      {random({2, 3, 5, 4}), random({3, 1, 3, 3})});
  check_gradients(
      "conv1d, stride 2, padding 1, bias",
      [](const tensors& t) { return F::conv1d(t[0], t[1], F::Conv1dFuncOptions().bias(t[2]).stride(2).padding(1)); },
      {random({2, 3, 7}), random({4, 3, 3}), random({4})});
  check_gradients(
      "conv3d, padding 1",
      [](const tensors& t) { return F::conv3d(t[0], t[1], F::Conv3dFuncOptions().padding(1)); },
      {random({1, 2, 3, 3, 2}), random({2, 2, 2, 2, 2})});
  check_gradients(
      "conv_transpose2d, stride 2, padding 1, output_padding 1, bias",
      [](const tensors& t) {
        return F::conv_transpose2d(t[0], t[1],
                                   F::ConvTranspose2dFuncOptions().bias(t[2]).stride(2).padding(1).output_padding(1));
      },
      {random({2, 4, 3, 3}), random({4, 3, 3, 3}), random({3})});
}

TEST_CASE("nn gradients: pooling against float128 finite differences", "[nn]") {
  st::manual_seed(12);
  check_gradients(
      "max_pool2d, kernel 3, stride 2, padding 1, ceil_mode",
      [](const tensors& t) { return F::max_pool2d(t[0], F::MaxPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true)); },
      {random({2, 3, 6, 5})});
  check_gradients(
      "max_pool1d, kernel 2, dilation 2",
      [](const tensors& t) { return F::max_pool1d(t[0], F::MaxPool1dFuncOptions(2).dilation(2).stride(1)); },
      {random({2, 2, 7})});
  check_gradients(
      "avg_pool2d, kernel 3, stride 2, padding 1, ceil_mode, count_include_pad false",
      [](const tensors& t) {
        return F::avg_pool2d(t[0], F::AvgPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
      },
      {random({2, 3, 6, 5})});
  check_gradients(
      "avg_pool3d, kernel 2, divisor_override 3",
      [](const tensors& t) { return F::avg_pool3d(t[0], F::AvgPool3dFuncOptions(2).divisor_override(3)); },
      {random({1, 2, 4, 4, 2})});
  check_gradients(
      "adaptive_avg_pool2d to (3, 2)",
      [](const tensors& t) { return F::adaptive_avg_pool2d(t[0], F::AdaptiveAvgPool2dFuncOptions({3, 2})); },
      {random({2, 3, 7, 5})});
  check_gradients(
      "adaptive_max_pool2d to (2, 3)",
      [](const tensors& t) { return F::adaptive_max_pool2d(t[0], F::AdaptiveMaxPool2dFuncOptions({2, 3})); },
      {random({2, 2, 5, 7})});
}

TEST_CASE("nn gradients: normalisations against float128 finite differences", "[nn]") {
  st::manual_seed(13);
  check_gradients(
      "batch_norm, training, weight and bias",
      [](const tensors& t) {
        return F::batch_norm(t[0], std::nullopt, std::nullopt,
                             F::BatchNormFuncOptions().weight(t[1]).bias(t[2]).training(true).eps(1e-3));
      },
      {random({4, 3, 2, 3}), random({3}), random({3})});
  check_gradients(
      "batch_norm, evaluation, running statistics",
      [](const tensors& t) {
        const auto mean = st::from_vector<double>({0.25, -0.5, 1.0}).to<q>();
        const auto var = st::from_vector<double>({0.5, 2.0, 1.5}).to<q>();
        return F::batch_norm(t[0], mean, var, F::BatchNormFuncOptions().weight(t[1]));
      },
      {random({4, 3, 5}), random({3})});
  check_gradients(
      "layer_norm over [3, 4], weight and bias",
      [](const tensors& t) { return F::layer_norm(t[0], F::LayerNormFuncOptions({3, 4}).weight(t[1]).bias(t[2])); },
      {random({2, 3, 4}), random({3, 4}), random({3, 4})});
  check_gradients(
      "group_norm, 2 groups, weight and bias",
      [](const tensors& t) { return F::group_norm(t[0], F::GroupNormFuncOptions(2).weight(t[1]).bias(t[2])); },
      {random({2, 4, 3, 2}), random({4}), random({4})});
  check_gradients(
      "instance_norm, weight and bias",
      [](const tensors& t) { return F::instance_norm(t[0], F::InstanceNormFuncOptions().weight(t[1]).bias(t[2])); },
      {random({2, 3, 5}), random({3}), random({3})});
}
