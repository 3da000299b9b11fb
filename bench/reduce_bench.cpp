// SPDX-License-Identifier: MIT
// Reduction benchmarks, each beside a hand-written loop (and materialise-then-reduce where it
// matters) in the same binary. Bytes counted: every input element read once.
#include <benchmark/benchmark.h>
#include <cstdint>

#include "hand_kernels.hpp"
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
struct threads_guard {
  explicit threads_guard(int n) { set_num_threads(n); }
  ~threads_guard() { set_num_threads(1); }
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
// Vector accumulators by hand (bench/hand_kernels.hpp): one row at a time with two vector
// accumulators, and four rows at once (eight accumulators in registers).
void W7a_hand_vec(benchmark::State& s) {
  auto g = filled({B, J, K}, 1), out = zeros<float>({J, 1});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < J; ++j) o[j] = 0;
    for (std::int64_t b = 0; b < B; ++b) hand::row_sums_acc<1>(g.data_ptr() + b * J * K, J, K, o);
    benchmark::ClobberMemory();
  }
  bytes(s, B * J * K * 4);
}
void W7a_hand_rows4(benchmark::State& s) {
  auto g = filled({B, J, K}, 1), out = zeros<float>({J, 1});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < J; ++j) o[j] = 0;
    for (std::int64_t b = 0; b < B; ++b) hand::row_sums_acc<4>(g.data_ptr() + b * J * K, J, K, o);
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
// Row-blocked: eight rows summed in registers (a pairwise tree) before each vector of the
// output is loaded and stored; and a stripe of 16 output vectors kept in registers while
// walking blocks of 8 rows (bench/hand_kernels.hpp).
void W7b_hand_rows8(benchmark::State& s) {
  auto g = filled({B, J, K}, 1), out = zeros<float>({K});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t k = 0; k < K; ++k) o[k] = 0;
    hand::col_sums_rows<8>(g.data_ptr(), B * J, K, o);
    benchmark::ClobberMemory();
  }
  bytes(s, B * J * K * 4);
}
void W7b_hand_stripe(benchmark::State& s) {
  auto g = filled({B, J, K}, 1), out = zeros<float>({K});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t k = 0; k < K; ++k) o[k] = 0;
    hand::col_sums_stripe<16, 8>(g.data_ptr(), B * J, K, o);
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
// Narrow columns: sum(x, {0}) of x [2^18, 64] (rows of 256 bytes). The hand loop keeps the
// 64 sums in registers (four with AVX-512) over blocks of 4096 rows.
constexpr std::int64_t narrow = 64, narrow_rows = (std::int64_t{1} << 24) / narrow;
void colsum_narrow_strata(benchmark::State& s) {
  one_thread t;
  auto x = filled({narrow_rows, narrow}, 1), out = zeros<float>({narrow});
  for (auto _ : s) out.assign(sum(x, {0}));
  bytes(s, narrow_rows * narrow * 4);
}
void colsum_narrow_hand(benchmark::State& s) {
  auto x = filled({narrow_rows, narrow}, 1), out = zeros<float>({narrow});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < narrow; ++j) o[j] = 0;
    hand::col_sums_stripe<4, 4096>(x.data_ptr(), narrow_rows, narrow, o);
    benchmark::ClobberMemory();
  }
  bytes(s, narrow_rows * narrow * 4);
}
void colsum_hand(benchmark::State& s) {
  auto x = filled({M, M}, 1), out = zeros<float>({M});
  for (auto _ : s) {
    float* o = out.data_ptr();
    for (std::int64_t j = 0; j < M; ++j) o[j] = 0;
    hand::col_sums_rows<8>(x.data_ptr(), M, M, o);  // eight rows summed in registers (as W7b)
    benchmark::ClobberMemory();
  }
  bytes(s, M * M * 4);
}

// ---- sum, amax, amin, prod, all, any over the rows of [1000, 1000] (1 and 2 threads) ----
// Data: 1 + (i % 1000) / 1000 (prod overflows to inf, never through subnormals; all() has
// to read every element); any() reads zeros, so that it too has to read every element.
constexpr std::int64_t RR = 1000, RC = 1000;
template <class Op>
void rows_case(benchmark::State& s, Op op, bool zeros_in) {
  threads_guard t(static_cast<int>(s.range(0)));
  auto x = zeros_in ? zeros<float>({RR, RC}) : filled({RR, RC}, 1);
  auto out = op(x);  // the result tensor, of the reduction's type
  out.assign(op(x));  // warm-up
  for (auto _ : s) out.assign(op(x));
  bytes(s, RR * RC * 4);
}
void sum_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<float>(sum(x, {1})); }, false); }
void amax_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<float>(amax(x, {1})); }, false); }
void amin_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<float>(amin(x, {1})); }, false); }
void prod_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<float>(prod(x, {1})); }, false); }
void all_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<bool>(all(x, {1})); }, false); }
void any_rows_strata(benchmark::State& s) { rows_case(s, [](const Tensor<float>& x) { return Tensor<bool>(any(x, {1})); }, true); }
void rowmax_hand(benchmark::State& s) {  // four rows at once, two vector max accumulators a row
  auto x = filled({RR, RC}, 1), out = zeros<float>({RR});
  for (auto _ : s) {
    hand::row_maxes<4>(x.data_ptr(), RR, RC, out.data_ptr());
    benchmark::ClobberMemory();
  }
  bytes(s, RR * RC * 4);
}
void rowmax_hand_plain(benchmark::State& s) {  // std::max over each row, left to the compiler
  auto x = filled({RR, RC}, 1), out = zeros<float>({RR});
  for (auto _ : s) {
    const float* __restrict p = x.data_ptr(); float* __restrict o = out.data_ptr();
    for (std::int64_t r = 0; r < RR; ++r) {
      float m = p[r * RC];
      for (std::int64_t k = 1; k < RC; ++k) m = std::max(m, p[r * RC + k]);
      o[r] = m;
    }
    benchmark::ClobberMemory();
  }
  bytes(s, RR * RC * 4);
}
void rowsum_hand_1000(benchmark::State& s) {  // four rows at once, two vector accumulators a row
  auto x = filled({RR, RC}, 1), out = zeros<float>({RR});
  for (auto _ : s) {
    hand::row_sums<4>(x.data_ptr(), RR, RC, out.data_ptr());
    benchmark::ClobberMemory();
  }
  bytes(s, RR * RC * 4);
}

// ---- the same reductions over all of 2^24 floats (1 thread) ----
template <class Op>
void all_case(benchmark::State& s, Op op, bool zeros_in) {
  one_thread t;
  auto x = zeros_in ? zeros<float>({N}) : filled({N}, 1);
  auto out = op(x);
  out.assign(op(x));  // warm-up
  for (auto _ : s) out.assign(op(x));
  bytes(s, N * 4);
}
void sum_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<float>(sum(x)); }, false); }
void amax_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<float>(amax(x)); }, false); }
void amin_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<float>(amin(x)); }, false); }
void prod_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<float>(prod(x)); }, false); }
void all_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<bool>(all(x)); }, false); }
void any_flat_strata(benchmark::State& s) { all_case(s, [](const Tensor<float>& x) { return Tensor<bool>(any(x)); }, true); }
void sum_flat_hand(benchmark::State& s) {  // eight vector accumulators
  auto x = filled({N}, 1);
  for (auto _ : s) {
    float r = hand::flat_sum(x.data_ptr(), N);
    benchmark::DoNotOptimize(r);
  }
  bytes(s, N * 4);
}
void max_flat_hand(benchmark::State& s) {
  auto x = filled({N}, 1);
  for (auto _ : s) {
    float r = hand::flat_max(x.data_ptr(), N);
    benchmark::DoNotOptimize(r);
  }
  bytes(s, N * 4);
}
}  // namespace

BENCHMARK(W8_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W8_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W8_materialise)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_hand_vec)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_hand_rows4)->Unit(benchmark::kMillisecond);
BENCHMARK(W7a_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_hand_rows8)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_hand_stripe)->Unit(benchmark::kMillisecond);
BENCHMARK(W7b_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(rowsum_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(rowmean_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_narrow_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(colsum_narrow_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(rowsum_hand_1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(rowmax_hand)->Unit(benchmark::kMicrosecond);
BENCHMARK(rowmax_hand_plain)->Unit(benchmark::kMicrosecond);
BENCHMARK(sum_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(amax_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(amin_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(prod_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(all_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(any_rows_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(sum_flat_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(max_flat_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(sum_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(amax_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(amin_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(prod_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(all_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(any_flat_strata)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
