// SPDX-License-Identifier: MIT
// Standalone study (not part of the build): the periodic reduction's loop shape (lanes of
// short_period rows in registers, leaves of 64 periods folded, a pairwise tree over leaves)
// on x [200000, n] doubles summed over dim 0, with and without software prefetch of the one
// stream. Figures in docs/PERFORMANCE.md ("The periodic reduction without software prefetch").
//   clang++-19 -O3 -march=native -std=c++20 bench/periodic_prefetch_study.cpp -o /tmp/pf && /tmp/pf
// Columns: medians of 201 calls, microseconds; modes: none, every line prefetched (t0) 4, 2 or
// 1 KiB ahead, every line into L2 (t2) 4 KiB ahead, one line in two, one line in four.
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <numeric>
using i64 = std::int64_t;
constexpr i64 N = 200000;
// mode: 0 none, 1 every line t0 @D, 2 every line t2 @D, 3 one line per 2, 4 one per 4
template <int V, int MODE, int D>
__attribute__((noinline)) void combine(const double* __restrict v, i64 m, double* __restrict lane) {
  constexpr i64 L = V * 8;
  double t[L];
  for (i64 j = 0; j < L; ++j) t[j] = lane[j];
  i64 i = 0;
  for (; i + L <= m; i += L) {
    const char* c = (const char*)(v + i) + D;
    if (MODE == 1) for (int q = 0; q < V; ++q) __builtin_prefetch(c + q * 64, 0, 3);
    if (MODE == 2) for (int q = 0; q < V; ++q) __builtin_prefetch(c + q * 64, 0, 1);
    if (MODE == 3) for (int q = 0; q < V; q += 2) __builtin_prefetch(c + q * 64, 0, 3);
    if (MODE == 4) for (int q = 0; q < V; q += 4) __builtin_prefetch(c + q * 64, 0, 3);
    for (i64 j = 0; j < L; ++j) t[j] += v[i + j];
  }
  for (i64 j = 0; i + j < m; ++j) t[j] += v[i + j];
  for (i64 j = 0; j < L; ++j) lane[j] = t[j];
}
template <int n, int MODE, int D>
__attribute__((noinline)) double leafy(const double* x, double* out) {
  constexpr i64 k0 = 64 / std::gcd<i64>(n * 8, 64);
  constexpr i64 mm = (512 + k0 * n * 8 - 1) / (k0 * n * 8);
  constexpr i64 k = k0 * mm, lanes = k * n;
  constexpr int V = lanes * 8 / 64;
  const i64 leaf_rows = 64 * k;
  i64 nb = (N + leaf_rows - 1) / leaf_rows;
  static double leaves[16384];
  alignas(64) double lane[lanes];
  for (i64 b = 0; b < nb; ++b) {
    i64 r0 = b * leaf_rows, r1 = std::min(N, r0 + leaf_rows);
    for (i64 j = 0; j < lanes; ++j) lane[j] = 0;
    combine<V, MODE, D>(x + r0 * n, (r1 - r0) * n, lane);
    double* acc = &leaves[b * n];
    for (int j = 0; j < n; ++j) acc[j] = lane[j];
    for (i64 r = 1; r < k; ++r) for (int j = 0; j < n; ++j) acc[j] += lane[r * n + j];
  }
  for (i64 w = 1; w < nb; w *= 2)
    for (i64 b = 0; b + w < nb; b += 2 * w)
      for (int j = 0; j < n; ++j) leaves[b * n + j] += leaves[(b + w) * n + j];
  for (int j = 0; j < n; ++j) out[j] = leaves[j];
  return 0;
}
template <class F> double med(F f) {
  std::vector<double> t;
  for (int i = 0; i < 201; ++i) { auto a = std::chrono::steady_clock::now(); f(); auto b = std::chrono::steady_clock::now(); t.push_back(std::chrono::duration<double, std::micro>(b - a).count()); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
template <int n> void run() {
  std::vector<double> x(N * n); for (i64 i = 0; i < N * n; ++i) x[i] = 1 + (i % 1000) * 1e-3;
  double o[16];
  for (int round = 0; round < 3; ++round)
  std::printf("n=%2d none %6.1f t0@4K %6.1f t0@2K %6.1f t0@1K %6.1f t2@4K %6.1f half@4K %6.1f quarter@4K %6.1f\n", n,
    med([&]{ leafy<n, 0, 0>(x.data(), o); }), med([&]{ leafy<n, 1, 4096>(x.data(), o); }),
    med([&]{ leafy<n, 1, 2048>(x.data(), o); }), med([&]{ leafy<n, 1, 1024>(x.data(), o); }),
    med([&]{ leafy<n, 2, 4096>(x.data(), o); }), med([&]{ leafy<n, 3, 4096>(x.data(), o); }),
    med([&]{ leafy<n, 4, 4096>(x.data(), o); }));
}
int main() { run<3>(); run<4>(); run<5>(); run<8>(); run<16>(); }
