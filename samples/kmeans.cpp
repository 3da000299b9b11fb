// SPDX-License-Identifier: MIT
// k-means clustering of random 2-D points, the way a PyTorch user writes it: blobs drawn with
// randn and joined with cat, each point assigned to its nearest centre with argmin over a
// broadcast [points, centres] distance (one fused reduce), centres updated with scatter_add.
// Prints the centres it finds and writes the clusters as a picture (kmeans.ppm; another path
// as the first argument).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
import strata;

namespace st = strata;

namespace {
constexpr std::int64_t k = 4;        // clusters
constexpr std::int64_t per_blob = 500;
constexpr std::int64_t side = 256;   // the picture is side x side pixels over [-6, 6]^2

/// The index of the nearest centre for every point: argmin over |p - c|^2, one fused pass.
st::Tensor<std::int64_t> nearest(const st::Tensor<float>& points, const st::Tensor<float>& centres) {
  const auto diff = points.unsqueeze(1) - centres.unsqueeze(0);  // [n, k, 2], lazy
  const st::Tensor<float> d2 = st::sum(diff * diff, {2});         // [n, k]
  return st::argmin(d2, 1);
}

void write_ppm(const std::string& path, const st::Tensor<float>& points, const st::Tensor<std::int64_t>& labels,
               const st::Tensor<float>& centres) {
  // Pixel centres as points: every pixel takes the colour of its nearest centre, dimmed.
  const st::Tensor<float> axis = st::linspace<float>(-6.0, 6.0, side);
  const st::Tensor<float> grid = st::stack({axis.unsqueeze(0).expand({side, side}), axis.unsqueeze(1).expand({side, side})}, 2)
                                     .reshape({side * side, 2});
  const st::Tensor<std::int64_t> region = nearest(grid, centres);
  const st::Tensor<std::uint8_t> palette = st::from_vector<std::uint8_t>(
      {230, 80, 60, 60, 150, 230, 90, 190, 90, 240, 190, 50}, {k, 3});
  st::Tensor<std::uint8_t> image = st::index_select(palette, 0, region).reshape({side, side, 3});
  image.assign(st::cast<std::uint8_t>(st::cast<float>(image) * 0.45f + 120));  // pale background
  // The points, in their cluster's full colour (pixel row from y, column from x).
  const st::Tensor<std::int64_t> px = st::cast<std::int64_t>(st::clamp((points + 6.0f) * (side / 12.0f), 0, side - 1));
  image.index_put_({px.select(1, 1), px.select(1, 0)}, st::index_select(palette, 0, labels));
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << side << " " << side << "\n255\n";
  const std::vector<std::uint8_t> bytes = image.contiguous().to_vector();
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
}  // namespace

int main(int argc, char** argv) {
  st::manual_seed(2026);
  const st::Tensor<float> truth = st::from_vector<float>({-3, -2, 2.5f, -3, 0, 3, 3.5f, 2.5f}, {k, 2});
  std::vector<st::Tensor<float>> blobs;
  for (std::int64_t c = 0; c < k; ++c) blobs.push_back(st::randn<float>({per_blob, 2}) * 0.8f + truth[c]);
  const st::Tensor<float> points = st::cat(blobs, 0);  // [k * per_blob, 2]
  const std::int64_t n = points.size(0);

  // k distinct points chosen at random as the first centres.
  st::Tensor<float> centres = st::index_select(points, 0, st::randperm(n).narrow(0, 0, k));
  st::Tensor<std::int64_t> labels = nearest(points, centres);
  int iterations = 1;
  for (; iterations < 100; ++iterations) {
    // New centres: the mean of each cluster's points (sums and counts by scatter_add).
    const st::Tensor<float> sums = st::scatter_add(st::zeros<float>({k, 2}), 0, labels.unsqueeze(1).expand({n, 2}), points);
    const st::Tensor<float> counts = st::scatter_add(st::zeros<float>({k}), 0, labels, st::ones<float>({n}));
    centres = st::where(counts.unsqueeze(1) > 0, sums / counts.unsqueeze(1), centres);  // an empty cluster stays
    const st::Tensor<std::int64_t> next = nearest(points, centres);
    const bool settled = st::eval(st::all(next == labels)).item();
    labels = next;
    if (settled) break;
  }

  const st::Tensor<std::int64_t> sizes = st::scatter_add(st::zeros<std::int64_t>({k}), 0, labels, st::ones<std::int64_t>({n}));
  std::cout << "k-means of " << n << " points settled after " << iterations << " iterations\n";
  for (std::int64_t c = 0; c < k; ++c) {
    std::printf("centre %lld: (%6.3f, %6.3f)  %lld points\n", static_cast<long long>(c),
                static_cast<double>(centres[c][0].item()), static_cast<double>(centres[c][1].item()),
                static_cast<long long>(sizes[c].item()));
  }
  const auto [spread, mean] = st::std_mean(points, {0});
  std::printf("all points: mean (%.3f, %.3f), std (%.3f, %.3f)\n", static_cast<double>(mean[0].item()),
              static_cast<double>(mean[1].item()), static_cast<double>(spread[0].item()),
              static_cast<double>(spread[1].item()));
  const std::string path = argc > 1 ? argv[1] : "kmeans.ppm";
  write_ppm(path, points, labels, centres);
  std::cout << "wrote " << path << "\n";
}
