// SPDX-License-Identifier: MIT
// Fusion benchmarks: every strata case runs beside a hand-written loop doing the same work
// (and, where it matters, the same expression evaluated op by op into temporaries), in one
// binary, so that ratios from one run are comparable. Bytes counted: every element read or
// written once. Report: tools/bench_report.py.
#include <benchmark/benchmark.h>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hand_kernels.hpp"
import strata;
using namespace strata;

namespace {
constexpr std::int64_t N = std::int64_t{1} << 24;
constexpr std::int64_t M = 4096;

template <class T>
Tensor<T> filled(int_list sizes, double base) {
  auto t = empty<T>(sizes);
  T* p = t.data_ptr();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(base + static_cast<double>(i % 1000) * 1e-3);
  return t;
}

// The hand-written loops run on memory allocated the way strata allocates (64-byte aligned,
// huge pages for large blocks), so that the ratios compare loops, not allocators.
template <class T>
struct buf {
  Tensor<T> t;
  explicit buf(std::int64_t n, double v = 0) : t(full<T>({n}, static_cast<T>(v))) {}
  T* data() { return t.data_ptr(); }
  T& operator[](std::size_t i) { return t.data_ptr()[i]; }
};

void bytes(benchmark::State& s, std::int64_t per_iter) {
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * per_iter);
}

struct threads_guard {
  explicit threads_guard(int n) { set_num_threads(n); }
  ~threads_guard() { set_num_threads(1); }
};

// ---- W1: a + b * c, 2^24 floats ----
void W1_strata_assign(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3), out = empty<float>({N});
  auto run = [&] { out.assign(a + b * c); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}
void W1_strata_eval(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3);
  auto run = [&] {
    Tensor<float> out = a + b * c;
    benchmark::DoNotOptimize(out.data_ptr());
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}
void W1_hand(benchmark::State& s) {
  buf<float> a(N, 1), b(N, 2), c(N, 3), out(N);
  auto run = [&] {
    const float* __restrict pa = a.data(); const float* __restrict pb = b.data(); const float* __restrict pc = c.data();
    float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = pa[i] + pb[i] * pc[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}
void W1_op_by_op(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3);
  auto run = [&] {
    Tensor<float> t = b * c;
    Tensor<float> out = a + t;
    benchmark::DoNotOptimize(out.data_ptr());
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}

// ---- W2: (a*b + c*d - e) * 0.5 ----
void W2_strata_assign(benchmark::State& s) {
  threads_guard g(static_cast<int>(s.range(0)));
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3), d = filled<float>({N}, 4),
       e = filled<float>({N}, 5), out = empty<float>({N});
  auto run = [&] { out.assign((a * b + c * d - e) * 0.5f); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 6 * N * 4);
}
void W2_strata_eval(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3), d = filled<float>({N}, 4),
       e = filled<float>({N}, 5);
  auto run = [&] {
    Tensor<float> out = (a * b + c * d - e) * 0.5f;
    benchmark::DoNotOptimize(out.data_ptr());
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 6 * N * 4);
}
void W2_hand(benchmark::State& s) {
  buf<float> a(N, 1), b(N, 2), c(N, 3), d(N, 4), e(N, 5), out(N);
  auto run = [&] {
    const float* __restrict pa = a.data(); const float* __restrict pb = b.data(); const float* __restrict pc = c.data();
    const float* __restrict pd = d.data(); const float* __restrict pe = e.data(); float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = (pa[i] * pb[i] + pc[i] * pd[i] - pe[i]) * 0.5f;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 6 * N * 4);
}
void W2_op_by_op(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1), b = filled<float>({N}, 2), c = filled<float>({N}, 3), d = filled<float>({N}, 4),
       e = filled<float>({N}, 5);
  auto run = [&] {
    Tensor<float> t1 = a * b;
    Tensor<float> t2 = c * d;
    Tensor<float> t3 = t1 + t2;
    Tensor<float> t4 = t3 - e;
    Tensor<float> out = t4 * 0.5f;
    benchmark::DoNotOptimize(out.data_ptr());
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 6 * N * 4);
}

// ---- W3: [M, M] + [M] (a broadcast row) ----
void W3_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({M, M}, 1), b = filled<float>({M}, 2), out = empty<float>({M, M});
  auto run = [&] { out.assign(a + b); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}
void W3_hand(benchmark::State& s) {
  buf<float> a(M * M, 1), b(M, 2), out(M * M);
  auto run = [&] {
    for (std::int64_t i = 0; i < M; ++i) {
      const float* __restrict pa = a.data() + i * M; const float* __restrict pb = b.data(); float* __restrict po = out.data() + i * M;
      for (std::int64_t j = 0; j < M; ++j) po[j] = pa[j] + pb[j];
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}

void W3_hand_rows4(benchmark::State& s) {  // 4 rows at a time share each vector load of the row
  buf<float> a(M * M, 1), b(M, 2), out(M * M);
  auto run = [&] {
    hand::row_add<4>(a.data(), b.data(), out.data(), M, M);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}

// ---- W4: [M, 1] * [1, M] + [M, M] ----
void W4_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({M, 1}, 1), b = filled<float>({1, M}, 2), c = filled<float>({M, M}, 3), out = empty<float>({M, M});
  auto run = [&] { out.assign(a * b + c); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}
void W4_hand(benchmark::State& s) {
  buf<float> a(M, 1), b(M, 2), c(M * M, 3), out(M * M);
  auto run = [&] {
    for (std::int64_t i = 0; i < M; ++i) {
      const float ai = a[static_cast<std::size_t>(i)];
      const float* __restrict pb = b.data(); const float* __restrict pc = c.data() + i * M; float* __restrict po = out.data() + i * M;
      for (std::int64_t j = 0; j < M; ++j) po[j] = ai * pb[j] + pc[j];
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}

// The row broadcast hoisted by hand: col[r] broadcast once a row (or once for R rows, which
// then share each vector load of the row), explicit FMA vectors.
void W4_hand_simd(benchmark::State& s) {
  buf<float> a(M, 1), b(M, 2), c(M * M, 3), out(M * M);
  auto run = [&] {
    hand::outer_add<1>(a.data(), b.data(), c.data(), out.data(), M, M);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}
void W4_hand_rows4(benchmark::State& s) {
  buf<float> a(M, 1), b(M, 2), c(M * M, 3), out(M * M);
  auto run = [&] {
    hand::outer_add<4>(a.data(), b.data(), c.data(), out.data(), M, M);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * M * M * 4);
}

// ---- W5: a.t() + b on [n, n] (n = M; W5_in_cache: 512) ----
template <std::int64_t n>
void W5_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({n, n}, 1), b = filled<float>({n, n}, 2), out = empty<float>({n, n});
  auto run = [&] { out.assign(a.t() + b); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * n * n * 4);
}
void W5_hand_naive(benchmark::State& s) {
  buf<float> a(M * M, 1), b(M * M, 2), out(M * M);
  auto run = [&] {
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < M; ++j) out[static_cast<std::size_t>(i * M + j)] = a[static_cast<std::size_t>(j * M + i)] + b[static_cast<std::size_t>(i * M + j)];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * M * M * 4);
}
void W5_hand_blocked(benchmark::State& s) {
  buf<float> a(M * M, 1), b(M * M, 2), out(M * M);
  constexpr std::int64_t B = 64;
  auto run = [&] {
    for (std::int64_t i0 = 0; i0 < M; i0 += B)
      for (std::int64_t j0 = 0; j0 < M; j0 += B)
        for (std::int64_t i = i0; i < i0 + B; ++i) {
          const float* __restrict pb = b.data() + i * M; float* __restrict po = out.data() + i * M;
          const float* __restrict pa = a.data() + i;
          for (std::int64_t j = j0; j < j0 + B; ++j) po[j] = pa[j * M] + pb[j];
        }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * M * M * 4);
}

// The transpose done in registers: 16x16 tiles (AVX-512) or 8x8 tiles (AVX), each loaded as
// 16 (8) rows of a, transposed with unpack/shuffle/permute, added to b and stored, the tiles
// visited in 256x256 blocks (bench/hand_kernels.hpp).
#if defined(__AVX512F__)
template <bool Prefetch>  // with software prefetch into L2 (bench/hand_kernels.hpp)
void W5_hand_avx512_16x16(benchmark::State& s) {
  buf<float> a(M * M, 1), b(M * M, 2), out(M * M);
  auto run = [&] {
    hand::transpose_add_16x16<Prefetch>(a.data(), M, b.data(), M, out.data(), M, M, M);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * M * M * 4);
}
#endif
// x.t().contiguous() and out.copy_(x.t()) on [M, M] f32: the tiled copy (no arithmetic).
void Tcopy_strata_contiguous(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({M, M}, 1);
  for (auto _ : s) benchmark::DoNotOptimize(a.t().contiguous().data_ptr());
  bytes(s, 2 * M * M * 4);
}
void Tcopy_strata_copy(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({M, M}, 1), out = empty<float>({M, M});
  out.copy_(a.t());  // warm-up
  for (auto _ : s) out.copy_(a.t());
  bytes(s, 2 * M * M * 4);
}

// W5 on [512, 512] (3 MiB: in L2 and L3): what a tile costs when memory is not the limit.
constexpr std::int64_t MS = 512;
void W5_in_cache_hand(benchmark::State& s) {
  buf<float> a(MS * MS, 1), b(MS * MS, 2), out(MS * MS);
  auto run = [&] {
    hand::transpose_add(a.data(), MS, b.data(), MS, out.data(), MS, MS, MS);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * MS * MS * 4);
}
#if defined(__AVX2__)
void W5_hand_avx_8x8(benchmark::State& s) {
  buf<float> a(M * M, 1), b(M * M, 2), out(M * M);
  auto run = [&] {
    hand::transpose_add_8x8(a.data(), M, b.data(), M, out.data(), M, M, M);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * M * M * 4);
}
#endif

// ---- 3-D permutes: x.permute({0, 2, 1}) + y and x.permute({2, 1, 0}) + y, x [64, 512, 512] ----
constexpr std::int64_t P0 = 64, P1 = 512, P2 = 512, PN = P0 * P1 * P2;
void P021_strata(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled<float>({P0, P1, P2}, 1), y = filled<float>({P0, P2, P1}, 2), out = empty<float>({P0, P2, P1});
  auto run = [&] { out.assign(x.permute({0, 2, 1}) + y); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * PN * 4);
}
template <bool Prefetch>
void P021_hand(benchmark::State& s) {  // a batch of [512, 512] tiled transposes
  buf<float> x(PN, 1), y(PN, 2), out(PN);
  auto run = [&] {
    for (std::int64_t b = 0; b < P0; ++b)
      hand::transpose_add<Prefetch>(x.data() + b * P1 * P2, P2, y.data() + b * P1 * P2, P1, out.data() + b * P1 * P2, P1, P2, P1);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * PN * 4);
}
void P210_strata(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled<float>({P0, P1, P2}, 1), y = filled<float>({P2, P1, P0}, 2), out = empty<float>({P2, P1, P0});
  auto run = [&] { out.assign(x.permute({2, 1, 0}) + y); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * PN * 4);
}
template <bool Prefetch>
void P210_hand(benchmark::State& s) {  // tiles over (dim 2, dim 0), the middle dim innermost
  buf<float> x(PN, 1), y(PN, 2), out(PN);
  auto run = [&] {
    hand::permute210_add<Prefetch>(x.data(), y.data(), out.data(), P0, P1, P2);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * PN * 4);
}

// ---- W6: mixed types ----
void W6_int_float_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<std::int32_t>({N}, 1);
  auto b = filled<float>({N}, 2), out = empty<float>({N});
  auto run = [&] { out.assign(a + b); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * N * 4);
}
void W6_int_float_hand(benchmark::State& s) {
  buf<std::int32_t> a(N, 1);
  buf<float> b(N, 2), out(N);
  auto run = [&] {
    const std::int32_t* __restrict pa = a.data(); const float* __restrict pb = b.data(); float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = static_cast<float>(pa[i]) + pb[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 3 * N * 4);
}
void W6_float_double_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, 1);
  auto b = filled<double>({N}, 2), out = empty<double>({N});
  auto run = [&] { out.assign(a * b); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, N * (4 + 8 + 8));
}
void W6_float_double_hand(benchmark::State& s) {
  buf<float> a(N, 1);
  buf<double> b(N, 2), out(N);
  auto run = [&] {
    const float* __restrict pa = a.data(); const double* __restrict pb = b.data(); double* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = static_cast<double>(pa[i]) * pb[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, N * (4 + 8 + 8));
}

// ---- W9: x[:, 0::2] + x[:, 1::2] on [M, M] ----
void W9_strata(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled<float>({M, M}, 1), out = empty<float>({M, M / 2});
  auto run = [&] { out.assign(x.slice(1, 0, M, 2) + x.slice(1, 1, M, 2)); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, (M * M + M * M / 2) * 4);
}
void W9_hand(benchmark::State& s) {
  buf<float> x(M * M, 1), out(M * M / 2);
  auto run = [&] {
    for (std::int64_t i = 0; i < M; ++i) {
      const float* __restrict px = x.data() + i * M; float* __restrict po = out.data() + i * M / 2;
      for (std::int64_t j = 0; j < M / 2; ++j) po[j] = px[2 * j] + px[2 * j + 1];
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, (M * M + M * M / 2) * 4);
}

// ---- W10: three strided operands, out = a[:, 0::3] + b[:, 1::3] + c[:, 2::3] ----
// One base (a = b = c = x [M, 3 * 1024]: the three channels of x summed; every byte of x
// read) and three bases (a, b, c each [M, 3 * 1024]; a third of each counted, as the
// elements read, though whole lines travel). Bytes: the elements read and written.
constexpr std::int64_t S3 = 1024;
void W10_one_base_strata(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled<float>({M, 3 * S3}, 1), out = empty<float>({M, S3});
  auto run = [&] { out.assign(x.slice(1, 0, {}, 3) + x.slice(1, 1, {}, 3) + x.slice(1, 2, {}, 3)); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, (3 * M * S3 + M * S3) * 4);
}
void W10_one_base_hand(benchmark::State& s) {  // 3 vectors in, each channel gathered by two vpermt2ps
  buf<float> x(M * 3 * S3, 1), out(M * S3);
  auto run = [&] {
    hand::stride3_add(x.data(), x.data(), x.data(), 3 * S3, out.data(), M, S3);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, (3 * M * S3 + M * S3) * 4);
}
void W10_one_base_hand_plain(benchmark::State& s) {  // the strides known, left to the compiler
  buf<float> x(M * 3 * S3, 1), out(M * S3);
  auto run = [&] {
    for (std::int64_t i = 0; i < M; ++i) {
      const float* __restrict px = x.data() + i * 3 * S3; float* __restrict po = out.data() + i * S3;
      for (std::int64_t j = 0; j < S3; ++j) po[j] = px[3 * j] + px[3 * j + 1] + px[3 * j + 2];
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, (3 * M * S3 + M * S3) * 4);
}
// W10b on `rows` rows: M (from DRAM) or M_cached (32 rows, three bases of 384 KB: in L2/L3,
// the engine's own cost per element beside the hand loop's, without the memory system's noise).
void W10_three_bases_strata_rows(benchmark::State& s, std::int64_t rows) {
  threads_guard g(1);
  auto a = filled<float>({rows, 3 * S3}, 1), b = filled<float>({rows, 3 * S3}, 2), c = filled<float>({rows, 3 * S3}, 3),
       out = empty<float>({rows, S3});
  auto run = [&] { out.assign(a.slice(1, 0, {}, 3) + b.slice(1, 1, {}, 3) + c.slice(1, 2, {}, 3)); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 4 * rows * S3 * 4);
}
void W10_three_bases_hand_rows(benchmark::State& s, std::int64_t rows) {
  buf<float> a(rows * 3 * S3, 1), b(rows * 3 * S3, 2), c(rows * 3 * S3, 3), out(rows * S3);
  auto run = [&] {
    hand::stride3_add(a.data(), b.data(), c.data(), 3 * S3, out.data(), rows, S3);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * rows * S3 * 4);
}
constexpr std::int64_t M_cached = 32;
void W10_three_bases_strata(benchmark::State& s) { W10_three_bases_strata_rows(s, M); }
void W10_three_bases_hand(benchmark::State& s) { W10_three_bases_hand_rows(s, M); }
void W10_cached_strata(benchmark::State& s) { W10_three_bases_strata_rows(s, M_cached); }
void W10_cached_hand(benchmark::State& s) { W10_three_bases_hand_rows(s, M_cached); }

// ---- transcendental: exp(a) and W11 exp(-a*a) * tanh(b) + sigmoid(c), 2^24 floats ----
void exp_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, -2), out = empty<float>({N});
  auto run = [&] { out.assign(strata::exp(a)); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 2 * N * 4);
}
void exp_hand_libm(benchmark::State& s) {  // a plain std::exp loop (glibc's expf, one call an element)
  buf<float> a(N, 0), out(N);
  for (std::int64_t i = 0; i < N; ++i) a[static_cast<std::size_t>(i)] = -2.0f + static_cast<float>(i % 1000) * 1e-3f;
  auto run = [&] {
    const float* __restrict pa = a.data(); float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = std::exp(pa[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * N * 4);
}
void copy_hand(benchmark::State& s) {  // out = a: the same bytes, no arithmetic (for scale)
  buf<float> a(N, 1), out(N);
  auto run = [&] {
    const float* __restrict pa = a.data(); float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = pa[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * N * 4);
}
#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
void exp_hand_libmvec(benchmark::State& s) {  // glibc's vector expf (libmvec), 16 or 8 lanes a call
  buf<float> a(N, 0), out(N);
  for (std::int64_t i = 0; i < N; ++i) a[static_cast<std::size_t>(i)] = -2.0f + static_cast<float>(i % 1000) * 1e-3f;
  auto run = [&] {
    hand::exp_libmvec(a.data(), out.data(), N);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 2 * N * 4);
}
#endif
void W11_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({N}, -0.5), b = filled<float>({N}, -0.5), c = filled<float>({N}, -0.5), out = empty<float>({N});
  auto run = [&] { out.assign(strata::exp(-a * a) * strata::tanh(b) + strata::sigmoid(c)); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}
void W11_hand_libm(benchmark::State& s) {  // scalar libm calls: expf, tanhf, expf
  buf<float> a(N, 0), b(N, 0), c(N, 0), out(N);
  for (std::int64_t i = 0; i < N; ++i) a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i)] = c[static_cast<std::size_t>(i)] = -0.5f + static_cast<float>(i % 1000) * 1e-3f;
  auto run = [&] {
    const float* __restrict pa = a.data(); const float* __restrict pb = b.data(); const float* __restrict pc = c.data();
    float* __restrict po = out.data();
    for (std::int64_t i = 0; i < N; ++i) po[i] = std::exp(-pa[i] * pa[i]) * std::tanh(pb[i]) + 1.0f / (1.0f + std::exp(-pc[i]));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}

#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
void W11_hand_libmvec(benchmark::State& s) {  // glibc's vector expf and tanhf (libmvec)
  buf<float> a(N, 0), b(N, 0), c(N, 0), out(N);
  for (std::int64_t i = 0; i < N; ++i) a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i)] = c[static_cast<std::size_t>(i)] = -0.5f + static_cast<float>(i % 1000) * 1e-3f;
  auto run = [&] {
    hand::w11_libmvec(a.data(), b.data(), c.data(), out.data(), N);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
  bytes(s, 4 * N * 4);
}
#endif

// ---- W-small: a 3-op expression over 100 elements, built and assigned each time ----
void Wsmall_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({100}, 1), b = filled<float>({100}, 2), c = filled<float>({100}, 3), out = empty<float>({100});
  auto run = [&] {
    out.assign((a + b) * c - a);
    benchmark::DoNotOptimize(out.data_ptr());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
}
void Wsmall_hand(benchmark::State& s) {
  buf<float> a(100, 1), b(100, 2), c(100, 3), out(100);
  auto run = [&] {
    for (std::size_t i = 0; i < 100; ++i) out[i] = (a[i] + b[i]) * c[i] - a[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
}
}  // namespace

BENCHMARK(W1_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W1_strata_assign)->Unit(benchmark::kMillisecond);
BENCHMARK(W1_strata_eval)->Unit(benchmark::kMillisecond);
BENCHMARK(W1_op_by_op)->Unit(benchmark::kMillisecond);
BENCHMARK(W2_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W2_strata_assign)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W2_strata_eval)->Unit(benchmark::kMillisecond);
BENCHMARK(W2_op_by_op)->Unit(benchmark::kMillisecond);
BENCHMARK(W3_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W3_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W3_hand_rows4)->Unit(benchmark::kMillisecond);
BENCHMARK(W4_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W4_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W4_hand_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(W4_hand_rows4)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_hand_naive)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_hand_blocked)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_strata<M>)->Name("W5_strata")->Unit(benchmark::kMillisecond);
#if defined(__AVX512F__)
BENCHMARK(W5_hand_avx512_16x16<false>)->Name("W5_hand_avx512_16x16")->Unit(benchmark::kMillisecond);
BENCHMARK(W5_hand_avx512_16x16<true>)->Name("W5_hand_avx512_16x16_prefetch")->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(W5_strata<MS>)->Name("W5_in_cache_strata")->Unit(benchmark::kMicrosecond);
BENCHMARK(W5_in_cache_hand)->Unit(benchmark::kMicrosecond);
BENCHMARK(Tcopy_strata_contiguous)->Unit(benchmark::kMillisecond);
BENCHMARK(Tcopy_strata_copy)->Unit(benchmark::kMillisecond);
#if defined(__AVX2__)
BENCHMARK(W5_hand_avx_8x8)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(P021_hand<false>)->Name("P021_hand")->Unit(benchmark::kMillisecond);
#if defined(__AVX512F__)
BENCHMARK(P021_hand<true>)->Name("P021_hand_prefetch")->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(P021_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(P210_hand<false>)->Name("P210_hand")->Unit(benchmark::kMillisecond);
#if defined(__AVX512F__)
BENCHMARK(P210_hand<true>)->Name("P210_hand_prefetch")->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(P210_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_int_float_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_int_float_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_float_double_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_float_double_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W9_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W9_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_one_base_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_one_base_hand_plain)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_one_base_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_three_bases_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_three_bases_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W10_cached_hand)->Unit(benchmark::kMicrosecond);
BENCHMARK(W10_cached_strata)->Unit(benchmark::kMicrosecond);
BENCHMARK(copy_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(exp_hand_libm)->Unit(benchmark::kMillisecond);
BENCHMARK(exp_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W11_hand_libm)->Unit(benchmark::kMillisecond);
BENCHMARK(W11_strata)->Unit(benchmark::kMillisecond);
#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
BENCHMARK(exp_hand_libmvec)->Unit(benchmark::kMillisecond);
BENCHMARK(W11_hand_libmvec)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(Wsmall_hand);
BENCHMARK(Wsmall_strata);
BENCHMARK_MAIN();
namespace {
void Wsmall_build_only(benchmark::State& s) {
  auto a = filled<float>({100}, 1), b = filled<float>({100}, 2), c = filled<float>({100}, 3);
  auto run = [&] {
    auto e = (a + b) * c - a;
    benchmark::DoNotOptimize(&e);
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
}
void Wsmall_tensor_copy(benchmark::State& s) {
  auto a = filled<float>({100}, 1);
  auto run = [&] {
    Tensor<float> t = a;
    benchmark::DoNotOptimize(&t);
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
}
}  // namespace
BENCHMARK(Wsmall_build_only);
BENCHMARK(Wsmall_tensor_copy);
namespace {
void Wsmall_assign_only(benchmark::State& s) {
  auto a = filled<float>({100}, 1), b = filled<float>({100}, 2), c = filled<float>({100}, 3), out = empty<float>({100});
  auto e = (a + b) * c - a;
  auto run = [&] {
    out.assign(e);
    benchmark::ClobberMemory();
  };
  run();  // warm-up: first touch of fresh memory is not what we measure
  for (auto _ : s) run();
}
}  // namespace
BENCHMARK(Wsmall_assign_only);
