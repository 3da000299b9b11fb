// SPDX-License-Identifier: MIT
// Curve fitting with autograd: y = a * exp(-b * x) + c fitted to noisy samples by gradient
// descent, first for one curve, then for three channels at once, whose parameters a, b, c have
// shape [channels, 1] and broadcast against x [N] (their gradients are summed back to
// [channels, 1]). Exits with 1 if a fitted parameter misses the true one by more than 0.05.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <random>
#include <vector>
import strata;

namespace st = strata;

namespace {
// Fits one (a, b, c) per channel to 200 noisy samples of each curve; returns the largest error.
float fit(const std::vector<float>& a_true, const std::vector<float>& b_true, const std::vector<float>& c_true) {
  const auto channels = static_cast<std::int64_t>(a_true.size());
  const std::int64_t n = 200;

  // The data: x in [0, 4), y = a * exp(-b * x) + c + noise (standard deviation 0.02).
  st::Tensor<float> x = st::arange<float>(n) * (4.0f / n);
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> noise(static_cast<std::size_t>(channels * n));
  for (float& v : noise) v = normal(rng);
  auto col = [&](const std::vector<float>& v) { return st::from_vector<float>(v, {channels, 1}); };
  st::Tensor<float> y =
      col(a_true) * st::exp(-col(b_true) * x) + col(c_true) + st::from_vector<float>(noise, {channels, n});

  // The parameters, starting from a = 1, b = 1, c = 0.
  auto a = st::ones<float>({channels, 1}).requires_grad_();
  auto b = st::ones<float>({channels, 1}).requires_grad_();
  auto c = st::zeros<float>({channels, 1}).requires_grad_();

  const float lr = 0.5f;
  for (int step = 0; step <= 1000; ++step) {
    auto r = a * st::exp(-b * x) + c - y;  // an expression: nothing is computed yet
    // Each channel's mean squared error, summed (the channels fit independently): one fused
    // loop, recorded for backward.
    st::Tensor<float> loss = st::sum(st::mean(r * r, {1}));
    loss.backward();  // a.grad(), b.grad(), c.grad()
    {
      st::no_grad guard;  // the update itself is not recorded
      a -= lr * a.grad();
      b -= lr * b.grad();
      c -= lr * c.grad();
    }
    st::zero_grad(a, b, c);  // gradients accumulate across backward calls, as in PyTorch
    if (step % 200 == 0) std::cout << "  step " << std::setw(4) << step << "  loss " << loss.item() << "\n";
  }

  float worst = 0;
  std::cout << "  channel   a (true)          b (true)          c (true)\n" << std::fixed << std::setprecision(4);
  for (std::int64_t k = 0; k < channels; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const float got[3] = {a.at({k, 0}), b.at({k, 0}), c.at({k, 0})};
    const float want[3] = {a_true[i], b_true[i], c_true[i]};
    std::cout << "  " << std::setw(7) << k;
    for (int p = 0; p < 3; ++p) {
      std::cout << "   " << got[p] << " (" << std::setw(7) << want[p] << ")";
      worst = std::max(worst, std::abs(got[p] - want[p]));
    }
    std::cout << "\n";
  }
  std::cout << std::defaultfloat << std::setprecision(6);
  return worst;
}
}  // namespace

int main() {
  std::cout << "one curve:\n";
  const float e1 = fit({2.0f}, {1.3f}, {0.5f});
  std::cout << "three channels, per-channel parameters:\n";
  const float e2 = fit({2.0f, 1.0f, 3.0f}, {1.3f, 0.6f, 2.5f}, {0.5f, -0.2f, 1.0f});
  const float worst = std::max(e1, e2);
  std::cout << "largest parameter error " << worst << (worst <= 0.05f ? " (ok)\n" : " (more than 0.05: FAILED)\n");
  return worst <= 0.05f ? 0 : 1;
}
