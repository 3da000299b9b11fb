// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): stats_image.cpp written with libtorch 1.13
// (C++17), line for line.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <tuple>

int main() {
  torch::manual_seed(2);
  // ---- column statistics of a data matrix ----
  auto X = torch::randn({1000, 6}, torch::kDouble) * torch::linspace(1, 3, 6, torch::kDouble) + 10;
  auto Xs = (X - X.mean(0, true)) / X.std(0, true, true);
  auto Xc = X - X.mean(0);
  auto cov = Xc.t().matmul(Xc) / (X.size(0) - 1);
  auto sd = cov.diagonal().sqrt();
  auto corr = cov / torch::outer(sd, sd);
  auto outliers = (Xs.abs() > 3).any(1).sum();
  auto q = X.quantile(torch::tensor({0.25, 0.5, 0.75}, torch::kDouble), 0);
  auto iqr = q[2] - q[0];
  auto robust = ((X - q[1]) / iqr).clamp(-5, 5);
  auto [mx, argmx] = X.max(0);
  auto minmax = (X - X.amin(0)) / (mx - X.amin(0));
  auto ema = (0.9 * X.narrow(0, 0, 999) + 0.1 * X.narrow(0, 1, 999)).mean(0);

  // ---- an H x W x 3 uint8 image ----
  const std::int64_t H = 240, W = 320;
  auto img = torch::randint(0, 256, {H, W, 3}, torch::kUInt8);
  auto rgb = img.to(torch::kFloat) / 255;
  auto gray = (rgb * torch::tensor({0.299f, 0.587f, 0.114f})).sum(-1);
  auto blur = (gray.narrow(0, 0, H - 2) + gray.narrow(0, 1, H - 2) + gray.narrow(0, 2, H - 2)) / 3;
  auto box = (blur.narrow(1, 0, W - 2) + blur.narrow(1, 1, W - 2) + blur.narrow(1, 2, W - 2)) / 3;
  auto gx = gray.narrow(1, 2, W - 2).narrow(0, 1, H - 2) - gray.narrow(1, 0, W - 2).narrow(0, 1, H - 2);
  auto gy = gray.narrow(0, 2, H - 2).narrow(1, 1, W - 2) - gray.narrow(0, 0, H - 2).narrow(1, 1, W - 2);
  auto edges = (gx * gx + gy * gy).sqrt();
  auto g8 = (box * 255).clamp(0, 255).round().to(torch::kUInt8);
  auto hist = torch::bincount(g8.flatten(), {}, 256);
  auto bins = (gray * 16).floor().clamp(0, 15).to(torch::kLong);
  auto hist16 = (bins.flatten().unsqueeze(1) == torch::arange(16)).sum(0);
  auto cdf = hist.cumsum(0).to(torch::kDouble) / hist.sum();
  auto bright = (rgb.amax(-1) - rgb.amin(-1)).mean(torch::IntArrayRef{0, 1});
  auto mask = torch::where(edges > edges.mean() + 2 * edges.std(), 1.0f, 0.0f);
  auto channel_mean = rgb.mean(torch::IntArrayRef{0, 1});
  auto inverted = (255 - img.to(torch::kInt)).to(torch::kUInt8);

  std::printf("corr %.4f outliers %lld iqr %.3f robust %.3f argmax %lld minmax %.3f ema %.3f\n",
              corr[0][1].item<double>(), static_cast<long long>(outliers.item<std::int64_t>()),
              iqr.mean().item<double>(), robust.abs().mean().item<double>(),
              static_cast<long long>(argmx[0].item<std::int64_t>()), minmax.mean().item<double>(),
              ema[0].item<double>());
  std::printf("gray %.4f edges %.4f hist[128] %lld hist16[3] %lld cdf %.3f bright %.3f mask %.0f "
              "mean %.3f inv %d\n",
              double(gray.mean().item<float>()), double(edges.mean().item<float>()),
              static_cast<long long>(hist[128].item<std::int64_t>()),
              static_cast<long long>(hist16[3].item<std::int64_t>()), cdf[127].item<double>(),
              double(bright.item<float>()), double(mask.sum().item<float>()),
              double(channel_mean[1].item<float>()), int(inverted[0][0][0].item<std::uint8_t>()));
  return 0;
}
