// SPDX-License-Identifier: MIT
// Explicit heat diffusion on a 2-D grid: every step is ONE fused loop over the interior,
// written with narrow views (no temporaries, no index arithmetic). Prints the GB/s reached.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
import strata;
using namespace strata;

int main(int argc, char** argv) {
  const std::int64_t n = 2048, m = 2048, steps = argc > 1 ? std::atoll(argv[1]) : 100;
  if (steps < 1) {
    std::cerr << "usage: heat_diffusion [steps >= 1, default 100]\n";
    return 2;
  }
  const float alpha = 0.2f;
  auto u = zeros<float>({n, m});
  auto v = zeros<float>({n, m});
  // A hot square in the middle; the border stays at 0 (Dirichlet boundary).
  u.narrow(0, n / 2 - 64, 128).narrow(1, m / 2 - 64, 128).assign(100.0f);

  auto interior = [&](const Tensor<float>& t, std::int64_t di, std::int64_t dj) {
    return t.narrow(0, 1 + di, n - 2).narrow(1, 1 + dj, m - 2);
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < steps; ++s) {
    interior(v, 0, 0).assign(interior(u, 0, 0) + alpha * (interior(u, -1, 0) + interior(u, 1, 0) +
                                                           interior(u, 0, -1) + interior(u, 0, 1) -
                                                           4.0f * interior(u, 0, 0)));
    std::swap(u, v);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Each step reads the 5-point stencil (one stream of u, in cache for its neighbours) and
  // writes v: counted as 2 floats of memory traffic per interior point.
  const double bytes = 2.0 * 4.0 * static_cast<double>((n - 2) * (m - 2)) * static_cast<double>(steps);
  std::cout << "heat diffusion " << n << "x" << m << ", " << steps << " steps in " << secs * 1e3 << " ms: "
            << bytes / secs / 1e9 << " GB/s (" << get_num_threads() << " threads)\n";
  std::cout << "temperature at the centre " << u.at({n / 2, m / 2}) << ", near the edge " << u.at({n / 2, 2})
            << "\n";
  std::cout << "corner of the grid:\n" << u.narrow(0, n / 2 - 66, 4).narrow(1, m / 2 - 66, 4) << "\n";
  return 0;
}
