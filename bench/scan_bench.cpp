// SPDX-License-Identifier: MIT
// cumsum along each dim of a [4096, 4096] float32 tensor, and of one line of 200,000 doubles,
// on one thread, beside hand-written loops in the same binary. strata (like torch's CPU
// kernel) accumulates float32 in double; the hand loops come in both forms: the same answer
// (double running values) and the cheapest (float running values, a different answer).
// Bytes counted: read x, write y.
#include <benchmark/benchmark.h>
#include <cstdint>
#include <vector>
import strata;

namespace st = strata;

namespace {
constexpr std::int64_t M = 4096;
constexpr std::int64_t bytes_per_iter = 2 * M * M * 4;

st::Tensor<float> filled(st::int_list sizes) {
  auto t = st::empty<float>(sizes);
  float* p = t.data_ptr();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = 1 + static_cast<float>(i % 1000) * 1e-3f;
  return t;
}
void bytes(benchmark::State& s) { s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * bytes_per_iter); }
struct one_thread {
  one_thread() { st::set_num_threads(1); }
};

/// Times a hand-written scan of x into y.
void hand(benchmark::State& s, void (*scan)(const float* __restrict, float* __restrict)) {
  auto x = filled({M, M}), y = st::empty<float>({M, M});
  for (auto _ : s) {
    scan(x.data_ptr(), y.data_ptr());
    benchmark::ClobberMemory();
  }
  bytes(s);
}
/// Times strata's cumsum of x (or x.t()) along dim.
void strata_cumsum(benchmark::State& s, std::int64_t dim, bool transposed) {
  one_thread g;
  auto x = filled({M, M});
  for (auto _ : s) benchmark::DoNotOptimize(st::cumsum(transposed ? x.t() : x, dim));
  bytes(s);
}

// ---- dim 1 (along rows): each row is a sequential scan ----
template <class Acc>
void rows(const float* __restrict x, float* __restrict y) {
  for (std::int64_t r = 0; r < M; ++r) {
    Acc acc = 0;
    for (std::int64_t j = 0; j < M; ++j) {
      acc += x[r * M + j];
      y[r * M + j] = static_cast<float>(acc);
    }
  }
}
void dim1_hand_double(benchmark::State& s) { hand(s, rows<double>); }
void dim1_hand_float(benchmark::State& s) { hand(s, rows<float>); }
void dim1_strata(benchmark::State& s) { strata_cumsum(s, 1, false); }

// ---- dim 0 (down columns): a whole row of running values, one vector pass per row ----
void columns_double(const float* __restrict x, float* __restrict y) {
  static std::vector<double> acc(M);
  double* __restrict a = acc.data();
  for (std::int64_t j = 0; j < M; ++j) a[j] = 0;
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t j = 0; j < M; ++j) {
      a[j] += x[r * M + j];
      y[r * M + j] = static_cast<float>(a[j]);
    }
}
void columns_float(const float* __restrict x, float* __restrict y) {
  for (std::int64_t j = 0; j < M; ++j) y[j] = x[j];
  for (std::int64_t r = 1; r < M; ++r)
    for (std::int64_t j = 0; j < M; ++j) y[r * M + j] = y[(r - 1) * M + j] + x[r * M + j];
}
void dim0_hand_double(benchmark::State& s) { hand(s, columns_double); }
void dim0_hand_float(benchmark::State& s) { hand(s, columns_float); }
void dim0_strata(benchmark::State& s) { strata_cumsum(s, 0, false); }

// ---- one line: a 1-D double tensor, every step waiting on the last ----
constexpr std::int64_t line_n = 200000;
void line_hand(benchmark::State& s) {
  auto x = st::rand<double>({line_n}), y = st::empty<double>({line_n});
  for (auto _ : s) {
    const double* __restrict xp = x.data_ptr();
    double* __restrict yp = y.data_ptr();
    double acc = 0;
    for (std::int64_t i = 0; i < line_n; ++i) yp[i] = acc += xp[i];
    benchmark::ClobberMemory();
  }
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * 2 * line_n * 8);
}
void line_strata(benchmark::State& s) {
  one_thread g;
  auto x = st::rand<double>({line_n});
  for (auto _ : s) benchmark::DoNotOptimize(st::cumsum(x, 0));
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * 2 * line_n * 8);
}

// ---- strided: a transposed input (the scanned lines are the input's rows, then columns) ----
void dim0_transposed_strata(benchmark::State& s) { strata_cumsum(s, 0, true); }
void dim1_transposed_strata(benchmark::State& s) { strata_cumsum(s, 1, true); }
}  // namespace

BENCHMARK(dim1_hand_double)->Unit(benchmark::kMillisecond);
BENCHMARK(dim1_hand_float)->Unit(benchmark::kMillisecond);
BENCHMARK(dim1_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(dim0_hand_double)->Unit(benchmark::kMillisecond);
BENCHMARK(dim0_hand_float)->Unit(benchmark::kMillisecond);
BENCHMARK(dim0_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(dim0_transposed_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(dim1_transposed_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(line_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(line_strata)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
