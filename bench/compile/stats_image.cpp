// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): a statistics and image program as a user
// writes it, about twenty distinct expressions over float, double, int64 and uint8 tensors:
// standardisation, covariance and correlation, outliers, quantiles, a gray-scale conversion,
// a box blur and a Sobel gradient by narrow, clamp/round to uint8, histograms, thresholds.
// Twin: torch_stats_image.cpp.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <tuple>

import strata;

namespace st = strata;

int main() {
  st::manual_seed(2);
  // ---- column statistics of a data matrix ----
  auto X = (st::randn<double>({1000, 6}) * st::linspace<double>(1, 3, 6) + 10).eval();
  auto Xs = (X - X.mean(0, true)) / X.std(0, 1, true);
  auto Xc = X - X.mean(0);
  auto cov = Xc.t().matmul(Xc) / (X.size(0) - 1);
  auto sd = cov.diagonal().sqrt();
  auto corr = cov / st::outer(sd, sd);
  auto outliers = (Xs.abs() > 3).any(1).sum();
  auto q = X.quantile(st::tensor({0.25, 0.5, 0.75}), 0);
  auto iqr = q[2] - q[0];
  auto robust = ((X - q[1]) / iqr).clamp(-5, 5);
  auto [mx, argmx] = X.max(0);
  auto minmax = (X - X.amin(0)) / (mx - X.amin(0));
  auto ema = (0.9 * X.narrow(0, 0, 999) + 0.1 * X.narrow(0, 1, 999)).mean(0);

  // ---- an H x W x 3 uint8 image ----
  const std::int64_t H = 240, W = 320;
  auto img = st::randint<std::uint8_t>(0, 256, {H, W, 3});
  auto rgb = img.to<float>() / 255;
  auto gray = (rgb * st::tensor({0.299f, 0.587f, 0.114f})).sum(-1);
  auto blur = (gray.narrow(0, 0, H - 2) + gray.narrow(0, 1, H - 2) + gray.narrow(0, 2, H - 2)) / 3;
  auto box = (blur.narrow(1, 0, W - 2) + blur.narrow(1, 1, W - 2) + blur.narrow(1, 2, W - 2)) / 3;
  auto gx = gray.narrow(1, 2, W - 2).narrow(0, 1, H - 2) - gray.narrow(1, 0, W - 2).narrow(0, 1, H - 2);
  auto gy = gray.narrow(0, 2, H - 2).narrow(1, 1, W - 2) - gray.narrow(0, 0, H - 2).narrow(1, 1, W - 2);
  auto edges = (gx * gx + gy * gy).sqrt();
  auto g8 = (box * 255).clamp(0, 255).round().to<std::uint8_t>();
  auto hist = st::bincount(g8.flatten(), std::nullopt, 256);
  auto bins = (gray * 16).floor().clamp(0, 15).to<std::int64_t>();
  auto hist16 = (bins.flatten().unsqueeze(1) == st::arange(16)).sum(0);
  auto cdf = hist.cumsum(0).to<double>() / hist.sum();
  auto bright = (rgb.amax(-1) - rgb.amin(-1)).mean({0, 1});
  auto mask = st::where(edges > edges.mean() + 2 * edges.std(), 1.0f, 0.0f);
  auto channel_mean = rgb.mean({0, 1});
  auto inverted = (255 - img.to<std::int32_t>()).to<std::uint8_t>();

  std::printf("corr %.4f outliers %lld iqr %.3f robust %.3f argmax %lld minmax %.3f ema %.3f\n",
              corr[0][1].item(), static_cast<long long>(outliers.item()), iqr.mean().item(),
              robust.abs().mean().item(), static_cast<long long>(argmx[0].item()), minmax.mean().item(),
              ema[0].item());
  std::printf("gray %.4f edges %.4f hist[128] %lld hist16[3] %lld cdf %.3f bright %.3f mask %.0f "
              "mean %.3f inv %d\n",
              double(gray.mean().item()), double(edges.mean().item()), static_cast<long long>(hist[128].item()),
              static_cast<long long>(hist16[3].item()), cdf[127].item(), double(bright.item()),
              double(mask.sum().item()), double(channel_mean[1].item()), int(inverted[0][0][0].item()));
  return 0;
}
