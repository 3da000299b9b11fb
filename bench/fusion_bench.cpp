// SPDX-License-Identifier: MIT
// Fusion benchmarks: every strata case runs beside a hand-written loop doing the same work
// (and, where it matters, the same expression evaluated op by op into temporaries), in one
// binary, so that ratios from one run are comparable. Bytes counted: every element read or
// written once. Report: tools/bench_report.py.
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstring>
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

// ---- W5: a.t() + b on [M, M] ----
void W5_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled<float>({M, M}, 1), b = filled<float>({M, M}, 2), out = empty<float>({M, M});
  auto run = [&] { out.assign(a.t() + b); };
  run();  // warm-up
  for (auto _ : s) run();
  bytes(s, 3 * M * M * 4);
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
BENCHMARK(W4_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W4_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_hand_naive)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_hand_blocked)->Unit(benchmark::kMillisecond);
BENCHMARK(W5_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_int_float_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_int_float_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_float_double_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W6_float_double_strata)->Unit(benchmark::kMillisecond);
BENCHMARK(W9_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(W9_strata)->Unit(benchmark::kMillisecond);
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
