// SPDX-License-Identifier: MIT
// Reduction benchmarks, each beside a hand-written loop (and materialise-then-reduce where it
// matters) in the same binary. Bytes counted: every input element read once.
#include <benchmark/benchmark.h>
#include <cstdint>
import strata;
using namespace strata;

namespace {
constexpr std::int64_t N = std::int64_t{1} << 24;
constexpr std::int64_t M = 4096;

Tensor<float> filled(int_list sizes, float base) {
  auto t = empty<float>(sizes);
  float* p = t.data_ptr();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = base + static_cast<float>(i % 1000) * 1e-3f;
  return t;
}
void bytes(benchmark::State& s, std::int64_t per_iter) {
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * per_iter);
}
struct one_thread {
  one_thread() { set_num_threads(1); }
};

// A contiguous float sum with eight accumulators: what a careful hand loop does.
float hand_sum(const float* p, std::int64_t n) {
  float acc[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += p[i + k];
  for (; i < n; ++i) acc[0] += p[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// ---- W8: sum((a - b)^2), 2^24 floats ----
void W8_hand(benchmark::State& s) {
  auto a = filled({N}, 1), b = filled({N}, 2);
  for (auto _ : s) {
    const float* pa = a.data_ptr(); const float* pb = b.data_ptr();
    float acc[8] = {};
    for (std::int64_t i = 0; i < N; i += 8)
      for (int k = 0; k < 8; ++k) { const float d = pa[i + k] - pb[i + k]; acc[k] += d * d; }
    float r = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    benchmark::DoNotOptimize(r);
  }
  bytes(s, 2 * N * 4);
}
void W8_strata(benchmark::State& s) {
  one_thread g;
  auto a = filled({N}, 1), b = filled({N}, 2), out = zeros<float>({});
  for (auto _ : s) out.assign(sum((a - b) * (a - b)));
  bytes(s, 2 * N * 4);
}
void W8_materialise(benchmark::State& s) {
  one_thread g;
  auto a = filled({N}, 1), b = filled({N}, 2), out = zeros<float>({});
  { Tensor<float> warm = (a - b) * (a - b); }
  for (auto _ : s) {
    Tensor<float> d = a - b;
    Tensor<float> sq = d * d;
    out.assign(sum(sq));
  }
  bytes(s, 2 * N * 4);
}

// ---- W7: g [32, 512, 1024] to [512, 1] (a: inner) and to [1024] (b: outer) ----
constexpr std::int64_t B = 32, J = 512, K = 1024;
void W7a_hand(benchmark::State& s) {
  auto g = filled({B, J, K}, 1), out = zeros<float>({J, 1});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < J; ++j) o[j] = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t j = 0; j < J; ++j) o[j] += hand_sum(g.data_ptr() + (b * J + j) * K, K);
    benchmark::ClobberMemory();
  }
  bytes(s, B * J * K * 4);
}
void W7a_strata(benchmark::State& s) {
  one_thread t;
  auto g = filled({B, J, K}, 1), out = zeros<float>({J, 1});
  for (auto _ : s) out.assign(sum_to(g, {J, 1}));
  bytes(s, B * J * K * 4);
}
void W7b_hand(benchmark::State& s) {  // accumulate whole rows, vectorised across k
  auto g = filled({B, J, K}, 1), out = zeros<float>({K});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t k = 0; k < K; ++k) o[k] = 0;
    for (std::int64_t r = 0; r < B * J; ++r) {
      const float* row = g.data_ptr() + r * K;
      for (std::int64_t k = 0; k < K; ++k) o[k] += row[k];
    }
    benchmark::ClobberMemory();
  }
  bytes(s, B * J * K * 4);
}
void W7b_strata(benchmark::State& s) {
  one_thread t;
  auto g = filled({B, J, K}, 1), out = zeros<float>({K});
  for (auto _ : s) out.assign(sum_to(g, {K}));
  bytes(s, B * J * K * 4);
}

// ---- row means (inner) and column sums (outer) of [M, M] ----
void rowmean_strata(benchmark::State& s) {
  one_thread t;
  auto x = filled({M, M}, 1), out = zeros<float>({M});
  for (auto _ : s) out.assign(mean(x, {1}));
  bytes(s, M * M * 4);
}
void rowsum_hand(benchmark::State& s) {
  auto x = filled({M, M}, 1), out = zeros<float>({M});
  for (auto _ : s) {
    for (std::int64_t i = 0; i < M; ++i) out.data_ptr()[i] = hand_sum(x.data_ptr() + i * M, M) / M;
    benchmark::ClobberMemory();
  }
  bytes(s, M * M * 4);
}
void colsum_strata(benchmark::State& s) {
  one_thread t;
  auto x = filled({M, M}, 1), out = zeros<float>({M});
  for (auto _ : s) out.assign(sum(x, {0}));
  bytes(s, M * M * 4);
}
void colsum_hand(benchmark::State& s) {
  auto x = filled({M, M}, 1), out = zeros<float>({M});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < M; ++j) o[j] = 0;
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < M; ++j) o[j] += x.data_ptr()[i * M + j];
    benchmark::ClobberMemory();
  }
  bytes(s, M * M * 4);
}
}  // namespace

BENCHMARK(W8_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W8_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W8_materialise)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(rowsum_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(rowmean_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_strata)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
