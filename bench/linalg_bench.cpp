// SPDX-License-Identifier: MIT
// strata.linalg benchmarks: einsum and matmul beside what a performance engineer writes for
// the same work, in the same binary and run:
//
//   matmul   2048^3, f32 and f64, 1 and 2 threads, five layouts of the operands:
//            nn  a [M,K], b [K,N] contiguous
//            ta  a = a_store.t(), a_store [K,M]        (BLAS: TransA, lda = M)
//            tb  b = b_store.t(), b_store [N,K]        (BLAS: TransB, ldb = K)
//            ld  a = wide.narrow(1, 0, K), wide [M,2K] (BLAS: lda = 2K)
//            s2  a = wide.slice(1, 0, 2K, 2)           (no BLAS layout: packed, then gemm)
//            beside one direct cblas_sgemm/dgemm call (s2: a SIMD pack into a kept workspace,
//            split over the threads, then the call). strata: matmul(a, b) (a fresh result)
//            and out.assign(einsum("ik,kj->ij", a, b)) (an existing one).
//   bmm      einsum("bik,bkj->bij") on [64,256,256] f32 beside a loop of 64 sgemm calls
//            (and, with 2 threads, the batch split over 2 threads of 1-thread sgemm calls).
//   dot      einsum("ij,ij->") on [4096,4096] f32 (2^24 elements) beside an 8-accumulator
//            FMA loop; cblas_sdot as the library figure.
//   outer    einsum("i,j->ij") into [4096,4096] f32 beside a loop of broadcast multiplies,
//            with ordinary stores (as every hand loop in bench/) and with streaming stores (the
//            output is 64 MiB, written once): the faster of the two is the baseline.
//   bilinear einsum("bn,anm,bm->ba"), b = 256, a = 64, n = m = 256, f32, beside one sgemm
//            (U[b,(a,n)] = Y[b,m] W[(a,n),m]^T) and SIMD dots out[b,a] = X[b,:] . U[b,a,:].
//
// Every case is timed on the wall clock (UseRealTime: BLAS hands work to its own threads).
// Rates: GFLOP/s for the GEMM-shaped cases (2 M N K per product; bilinear counts its cheapest
// contraction order, 2 b a n m + 2 b a n), GB/s (1e9 bytes; Google Benchmark's own column
// divides by 2^30) for dot and outer (every element read or written once). Before the runs every strata result is checked against the baseline and every
// baseline against naive loops on sampled entries (a baseline that computes the wrong thing
// stops the binary; a wrong strata result is marked WRONG in the table). After the runs, unless
// --no_python, tools/bench_linalg_numpy.py gives NumPy's and PyTorch's figures on the same
// machine, and one table prints every case: strata, its baseline, the ratio and target, the best
// library figure. Each case prints its einsum plan() once.
//
//   linalg_bench [--benchmark_filter=...] [--benchmark_min_time=0.5] [--benchmark_repetitions=3]
//                [--no_python] [--python=/usr/bin/python3] [--no_check (for profiling)]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "hand_kernels.hpp"
import strata;

// The CBLAS and OpenBLAS entry points the baselines call, declared here (Debian's cblas.h is
// an alternative that may be netlib's, which lacks openblas_*). blasint is int in the LP64
// libopenblas that BLAS::BLAS names; the CBLAS enums are ints.
extern "C" {
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);
float cblas_sdot(int n, const float* x, int incx, const float* y, int incy);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
char* openblas_get_config(void);
}

namespace {
using i64 = std::int64_t;
namespace st = strata;
constexpr int row_major = 101, no_trans = 111, trans = 112;

// ---- sizes ----
constexpr i64 GM = 2048, GN = 2048, GK = 2048;       // matmul
constexpr i64 BB = 64, BI = 256, BK = 256, BJ = 256;  // bmm
constexpr i64 DN = 4096;                             // dot: [DN, DN] = 2^24 elements
constexpr i64 OM = 4096;                             // outer: [OM] x [OM]
constexpr i64 QB = 256, QA = 64, QN = 256, QM = 256;  // bilinear "bn,anm,bm->ba"

constexpr double gemm_flop = 2.0 * GM * GN * GK;
constexpr double bmm_flop = 2.0 * BB * BI * BK * BJ;
constexpr double dot_bytes = 2.0 * DN * DN * 4;
constexpr double outer_bytes = (1.0 * OM * OM + 2.0 * OM) * 4;
constexpr double bilinear_flop = 2.0 * QB * QA * QN * QM + 2.0 * QB * QA * QN;

// base + (i % 1000) * 1e-3 with base -0.5: values in [-0.5, 0.5), sums that do not grow.
template <class T>
st::Tensor<T> filled(st::int_list sizes, double base = -0.5) {
  auto t = st::empty<T>(sizes);
  T* p = t.data_ptr();
  for (i64 i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(base + static_cast<double>(i % 1000) * 1e-3);
  return t;
}

// ---- what each benchmark counts, and each case's plan ----
struct work {
  double amount;  // flop or bytes an iteration
  bool bytes;
};
std::map<std::string, work>& works() {
  static std::map<std::string, work> m;
  return m;
}
std::map<std::string, std::string>& plans() {
  static std::map<std::string, std::string> m;
  return m;
}
std::map<std::string, std::string>& wrong() {  // strata benchmark -> what the check found
  static std::map<std::string, std::string> m;
  return m;
}
// Records a case's plan once and prints it the first time.
void note_plan(const std::string& key, const std::string& plan) {
  if (plans().emplace(key, plan).second) std::printf("plan %-26s %s\n", key.c_str(), plan.c_str());
}
void count(benchmark::State& s, work w) {
  const double total = static_cast<double>(s.iterations()) * w.amount;
  if (w.bytes) s.SetBytesProcessed(static_cast<std::int64_t>(total));
  else s.counters["FLOPS"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
}

struct strata_threads {
  explicit strata_threads(int n) { st::set_num_threads(n); }
  ~strata_threads() { st::set_num_threads(1); }
};
// The baselines set OpenBLAS's (process-wide) count themselves and put back the count they
// found, so that no baseline leaves its count to the strata runs after it.
struct blas_threads {
  int before = openblas_get_num_threads();
  explicit blas_threads(int n) { openblas_set_num_threads(n); }
  ~blas_threads() { openblas_set_num_threads(before); }
};

// Runs f(begin, end) over [0, n) split into nthreads parts (the calling thread takes the last).
template <class F>
void split(int nthreads, i64 n, F f) {
  if (nthreads <= 1) return f(i64{0}, n);
  std::vector<std::thread> pool;
  const i64 step = (n + nthreads - 1) / nthreads;
  for (int t = 0; t + 1 < nthreads; ++t) pool.emplace_back(f, std::min(n, t * step), std::min(n, (t + 1) * step));
  f(std::min(n, (nthreads - 1) * step), n);
  for (auto& th : pool) th.join();
}

// ---- hand kernels ----
// A sum of products of n contiguous floats: 8 vector accumulators (FMA), a tree at the end.
float hand_dot(const float* __restrict a, const float* __restrict b, i64 n) {
  using namespace hand;
  vec acc[8];
  for (auto& v : acc) v = vzero();
  i64 i = 0;
  for (; i + 8 * W <= n; i += 8 * W)
    for (int q = 0; q < 8; ++q) acc[q] = vfmadd(vload(a + i + q * W), vload(b + i + q * W), acc[q]);
  const vec s = vadd(vadd(vadd(acc[0], acc[1]), vadd(acc[2], acc[3])), vadd(vadd(acc[4], acc[5]), vadd(acc[6], acc[7])));
  float t = vhsum(s);
  for (; i < n; ++i) t += a[i] * b[i];
  return t;
}

// out[i][j] = x[i] * y[j], rows of n floats; four rows share each vector load of y. Streaming
// (non-temporal) stores when NT and AVX-512: the output (64 MiB) bypasses the caches and no
// line is read before it is written.
template <bool NT>
void hand_outer(const float* __restrict x, const float* __restrict y, float* __restrict out, i64 m, i64 n) {
  if constexpr (NT)  // streaming stores need every row 64-byte aligned
    if (reinterpret_cast<std::uintptr_t>(out) % 64 != 0 || n % 16 != 0) return hand_outer<false>(x, y, out, m, n);
  constexpr int R = 4;
  i64 i = 0;
  for (; i + R <= m; i += R) {
    i64 j = 0;
#if defined(__AVX512F__)
    __m512 s[R];
    for (int q = 0; q < R; ++q) s[q] = _mm512_set1_ps(x[i + q]);
    for (; j + 16 <= n; j += 16) {
      const __m512 r = _mm512_loadu_ps(y + j);
      for (int q = 0; q < R; ++q) {
        float* p = out + (i + q) * n + j;
        if constexpr (NT) _mm512_stream_ps(p, _mm512_mul_ps(s[q], r));
        else _mm512_storeu_ps(p, _mm512_mul_ps(s[q], r));
      }
    }
#endif
    for (; j < n; ++j)
      for (int q = 0; q < R; ++q) out[(i + q) * n + j] = x[i + q] * y[j];
  }
  for (; i < m; ++i)
    for (i64 j = 0; j < n; ++j) out[i * n + j] = x[i] * y[j];
#if defined(__AVX512F__)
  if constexpr (NT) _mm_sfence();
#endif
}

// dst [rows, cols] contiguous = src[i][2j] (rows ld apart): the even elements of each row,
// 16 floats (8 doubles) from two vector loads and one vpermt2ps (vpermt2pd).
template <class T>
void pack_step2(const T* __restrict src, i64 ld, T* __restrict dst, i64 row0, i64 row1, i64 cols) {
  for (i64 i = row0; i < row1; ++i) {
    const T* __restrict s = src + i * ld;
    T* __restrict d = dst + i * cols;
    i64 j = 0;
#if defined(__AVX512F__)
    if constexpr (sizeof(T) == 4) {
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      for (; j + 16 <= cols; j += 16)
        _mm512_storeu_ps(reinterpret_cast<float*>(d + j),
                         _mm512_permutex2var_ps(_mm512_loadu_ps(reinterpret_cast<const float*>(s + 2 * j)), even,
                                                _mm512_loadu_ps(reinterpret_cast<const float*>(s + 2 * j + 16))));
    } else {
      const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
      for (; j + 8 <= cols; j += 8)
        _mm512_storeu_pd(reinterpret_cast<double*>(d + j),
                         _mm512_permutex2var_pd(_mm512_loadu_pd(reinterpret_cast<const double*>(s + 2 * j)), even,
                                                _mm512_loadu_pd(reinterpret_cast<const double*>(s + 2 * j + 8))));
    }
#endif
    for (; j < cols; ++j) d[j] = s[2 * j];
  }
}

// out[b][a] = sum_n x[b][n] * u[b][a][n] for a in [0, na): four dots share each load of x.
void hand_row_dots(const float* __restrict x, const float* __restrict u, float* __restrict out, i64 b0, i64 b1,
                   i64 na, i64 n) {
  using namespace hand;
  for (i64 b = b0; b < b1; ++b) {
    const float* __restrict xb = x + b * n;
    i64 a = 0;
    for (; a + 4 <= na; a += 4) {
      const float* __restrict ub = u + (b * na + a) * n;
      vec acc[4][2];
      for (auto& r : acc) r[0] = r[1] = vzero();
      i64 k = 0;
      for (; k + 2 * W <= n; k += 2 * W) {
        const vec x0 = vload(xb + k), x1 = vload(xb + k + W);
        for (int q = 0; q < 4; ++q) {
          acc[q][0] = vfmadd(x0, vload(ub + q * n + k), acc[q][0]);
          acc[q][1] = vfmadd(x1, vload(ub + q * n + k + W), acc[q][1]);
        }
      }
      for (int q = 0; q < 4; ++q) {
        float t = vhsum(vadd(acc[q][0], acc[q][1]));
        for (i64 kk = k; kk < n; ++kk) t += xb[kk] * ub[q * n + kk];
        out[b * na + a + q] = t;
      }
    }
    for (; a < na; ++a) out[b * na + a] = hand_dot(xb, u + (b * na + a) * n, n);
  }
}

// ---- the direct BLAS calls ----
template <class T>
void gemm(bool ta, bool tb, i64 m, i64 n, i64 k, const T* a, i64 lda, const T* b, i64 ldb, T* c, i64 ldc) {
  const auto I = [](i64 v) { return static_cast<int>(v); };
  if constexpr (sizeof(T) == 4)
    cblas_sgemm(row_major, ta ? trans : no_trans, tb ? trans : no_trans, I(m), I(n), I(k), 1.0f, a, I(lda), b, I(ldb),
                0.0f, c, I(ldc));
  else
    cblas_dgemm(row_major, ta ? trans : no_trans, tb ? trans : no_trans, I(m), I(n), I(k), 1.0, a, I(lda), b, I(ldb),
                0.0, c, I(ldc));
}

// ---- matmul operands in five layouts ----
enum class layout { nn, ta, tb, ld, s2 };
constexpr layout layouts[] = {layout::nn, layout::ta, layout::tb, layout::ld, layout::s2};
const char* name_of(layout l) {
  switch (l) {
    case layout::nn: return "nn";
    case layout::ta: return "ta";
    case layout::tb: return "tb";
    case layout::ld: return "ld";
    case layout::s2: return "s2";
  }
  return "?";
}

template <class T>
struct mm_operands {
  st::Tensor<T> a, b;               // as strata sees them: [M,K] and [K,N] views
  const T* pa = nullptr;            // as BLAS sees them
  const T* pb = nullptr;
  i64 lda = 0, ldb = 0;
  bool ta = false, tb = false;
  bool packed = false;              // s2: a must be packed into a workspace first
  st::Tensor<T> a_base;             // s2: the wide matrix a is a view of
  explicit mm_operands(layout l) {
    switch (l) {
      case layout::nn:
        a = filled<T>({GM, GK});
        b = filled<T>({GK, GN}, -0.3);
        lda = GK;
        ldb = GN;
        break;
      case layout::ta:
        a = filled<T>({GK, GM}).t();
        b = filled<T>({GK, GN}, -0.3);
        lda = GM;
        ldb = GN;
        ta = true;
        break;
      case layout::tb:
        a = filled<T>({GM, GK});
        b = filled<T>({GN, GK}, -0.3).t();
        lda = GK;
        ldb = GK;
        tb = true;
        break;
      case layout::ld:
        a_base = filled<T>({GM, 2 * GK});
        a = a_base.narrow(1, 0, GK);
        b = filled<T>({GK, GN}, -0.3);
        lda = 2 * GK;
        ldb = GN;
        break;
      case layout::s2:
        a_base = filled<T>({GM, 2 * GK});
        a = a_base.slice(1, 0, 2 * GK, 2);
        b = filled<T>({GK, GN}, -0.3);
        lda = GK;  // of the packed workspace
        ldb = GN;
        packed = true;
        break;
    }
    pa = a.data_ptr(), pb = b.data_ptr();
  }
};

// The baseline: one call (s2: pack a, split over the threads, then one call).
template <class T>
void mm_baseline(const mm_operands<T>& o, T* work_a, T* c, int nthreads) {
  const T* pa = o.pa;
  if (o.packed) {
    const T* base = o.a_base.data_ptr();
    split(nthreads, GM, [&](i64 r0, i64 r1) { pack_step2(base, 2 * GK, work_a, r0, r1, GK); });
    pa = work_a;
  }
  gemm<T>(o.ta, o.tb, GM, GN, GK, pa, o.lda, o.pb, o.ldb, c, GN);
}

// ---- checks ----
template <class T>
double max_abs(const T* p, i64 n) {
  double m = 0;
  for (i64 i = 0; i < n; ++i) m = std::max(m, std::abs(static_cast<double>(p[i])));
  return m;
}
template <class T>
double max_diff(const T* p, const T* q, i64 n) {
  double m = 0;
  for (i64 i = 0; i < n; ++i) m = std::max(m, std::abs(static_cast<double>(p[i]) - static_cast<double>(q[i])));
  return m;
}
template <class T>
bool same_sizes(const st::Tensor<T>& t, std::initializer_list<i64> sizes) {
  if (t.dim() != static_cast<i64>(sizes.size())) return false;
  i64 d = 0;
  for (i64 s : sizes)
    if (t.size(d++) != s) return false;
  return true;
}
template <class T>
constexpr double rel_tol() { return sizeof(T) == 4 ? 1e-4 : 1e-11; }

bool baseline_ok = true;
void fail_baseline(const std::string& what) {
  std::printf("BASELINE WRONG: %s\n", what.c_str());
  baseline_ok = false;
}
void check_strata(const std::string& bench, double diff, double scale, double tol) {
  if (!(diff <= tol * scale)) {
    char m[160];
    std::snprintf(m, sizeof m, "max |strata - baseline| = %.3g, allowed %.3g", diff, tol * scale);
    wrong()[bench] = m;
    std::printf("STRATA WRONG: %s: %s\n", bench.c_str(), m);
  }
}
// Runs f, turning an exception into a WRONG mark (and false).
template <class F>
bool guarded(const std::string& bench, F f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    wrong()[bench] = std::string("threw: ") + e.what();
    std::printf("STRATA THREW: %s: %s\n", bench.c_str(), e.what());
    return false;
  }
}

template <class T>
void check_matmul(layout l, const char* dt) {
  const std::string key = std::string("matmul_") + dt + "_" + name_of(l);
  mm_operands<T> o(l);
  std::vector<T> ref(GM * GN), work_a(o.packed ? GM * GK : 0);
  {
    blas_threads g(2);
    mm_baseline(o, work_a.data(), ref.data(), 2);
  }
  // The baseline against a naive double-precision sum on sampled entries (layout flags right).
  std::mt19937 rng(7);
  const double scale = max_abs(ref.data(), GM * GN);
  for (int s = 0; s < 24; ++s) {
    const i64 i = static_cast<i64>(rng() % GM), j = static_cast<i64>(rng() % GN);
    double acc = 0;
    for (i64 k = 0; k < GK; ++k)
      acc += static_cast<double>(o.a.at({i, k})) * static_cast<double>(o.b.at({k, j}));
    if (std::abs(acc - static_cast<double>(ref[i * GN + j])) > rel_tol<T>() * scale)
      return fail_baseline(key + ": cblas disagrees with a naive sum at (" + std::to_string(i) + ", " +
                           std::to_string(j) + ")");
  }
  strata_threads g(2);
  guarded(key + "_strata", [&] {
    st::Tensor<T> c = st::matmul(o.a, o.b);
    if (!same_sizes(c, {GM, GN})) throw std::runtime_error("matmul: unexpected result sizes");
    check_strata(key + "_strata", max_diff(c.contiguous().data_ptr(), ref.data(), GM * GN), scale, rel_tol<T>());
  });
  guarded(key + "_strata_einsum", [&] {
    auto out = st::empty<T>({GM, GN});
    out.assign(st::einsum("ik,kj->ij", o.a, o.b));
    check_strata(key + "_strata_einsum", max_diff(out.data_ptr(), ref.data(), GM * GN), scale, rel_tol<T>());
  });
}

// ---- the benchmarks ----
// Each strata benchmark: setup, one warm-up call (first touch is not what we measure), then the
// timed calls; an exception marks the run as an error instead of ending the binary.
template <class F>
void run_loop(benchmark::State& s, F call) {
  try {
    call();
  } catch (const std::exception& e) {
    s.SkipWithError(e.what());
    return;
  }
  for (auto _ : s) {
    call();
    benchmark::ClobberMemory();
  }
}

template <class T>
void register_matmul(const char* dt) {
  for (layout l : layouts) {
    const std::string key = std::string("matmul_") + dt + "_" + name_of(l);
    // strata: matmul(a, b) into a fresh tensor
    benchmark::RegisterBenchmark((key + "_strata").c_str(), [l, key](benchmark::State& s) {
      strata_threads g(static_cast<int>(s.range(0)));
      mm_operands<T> o(l);
      note_plan(key, st::einsum("ik,kj->ij", o.a, o.b).plan());
      run_loop(s, [&] {
        st::Tensor<T> c = st::matmul(o.a, o.b);
        benchmark::DoNotOptimize(c.data_ptr());
      });
      count(s, {gemm_flop, false});
    })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
    // strata: out.assign(einsum("ik,kj->ij", a, b)) into an existing tensor
    benchmark::RegisterBenchmark((key + "_strata_einsum").c_str(), [l](benchmark::State& s) {
      strata_threads g(static_cast<int>(s.range(0)));
      mm_operands<T> o(l);
      auto out = st::empty<T>({GM, GN});
      run_loop(s, [&] { out.assign(st::einsum("ik,kj->ij", o.a, o.b)); });
      count(s, {gemm_flop, false});
    })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
    // the direct CBLAS call
    benchmark::RegisterBenchmark((key + "_cblas").c_str(), [l](benchmark::State& s) {
      const int t = static_cast<int>(s.range(0));
      blas_threads g(t);
      mm_operands<T> o(l);
      auto c = st::empty<T>({GM, GN});  // strata's allocator: 64-byte aligned, as the operands
      auto work_a = st::empty<T>({o.packed ? GM * GK : 1});
      run_loop(s, [&] { mm_baseline(o, work_a.data_ptr(), c.data_ptr(), t); });
      count(s, {gemm_flop, false});
    })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
    for (const char* v : {"_strata", "_strata_einsum", "_cblas"})
      for (int t : {1, 2}) works()[key + v + "/" + std::to_string(t) + "/real_time"] = {gemm_flop, false};
  }
}

// ---- bmm: einsum("bik,bkj->bij") on [64,256,256] ----
struct bmm_operands {
  st::Tensor<float> a = filled<float>({BB, BI, BK}), b = filled<float>({BB, BK, BJ}, -0.3);
};
void bmm_loop(const float* a, const float* b, float* c, i64 b0, i64 b1) {
  for (i64 q = b0; q < b1; ++q)
    gemm<float>(false, false, BI, BJ, BK, a + q * BI * BK, BK, b + q * BK * BJ, BJ, c + q * BI * BJ, BJ);
}
void check_bmm() {
  bmm_operands o;
  std::vector<float> ref(BB * BI * BJ);
  bmm_loop(o.a.data_ptr(), o.b.data_ptr(), ref.data(), 0, BB);
  const double scale = max_abs(ref.data(), BB * BI * BJ);
  std::mt19937 rng(11);
  for (int s = 0; s < 24; ++s) {
    const i64 q = static_cast<i64>(rng() % BB), i = static_cast<i64>(rng() % BI), j = static_cast<i64>(rng() % BJ);
    double acc = 0;
    for (i64 k = 0; k < BK; ++k)
      acc += static_cast<double>(o.a.at({q, i, k})) * static_cast<double>(o.b.at({q, k, j}));
    if (std::abs(acc - static_cast<double>(ref[(q * BI + i) * BJ + j])) > 1e-4 * scale)
      return fail_baseline("bmm: the sgemm loop disagrees with a naive sum");
  }
  guarded("bmm_strata_einsum", [&] {
    auto out = st::empty<float>({BB, BI, BJ});
    out.assign(st::einsum("bik,bkj->bij", o.a, o.b));
    check_strata("bmm_strata_einsum", max_diff(out.data_ptr(), ref.data(), BB * BI * BJ), scale, 1e-4);
  });
  guarded("bmm_strata_matmul", [&] {
    st::Tensor<float> c = st::matmul(o.a, o.b);
    if (!same_sizes(c, {BB, BI, BJ})) throw std::runtime_error("matmul of [64,256,256]s: unexpected sizes");
    check_strata("bmm_strata_matmul", max_diff(c.contiguous().data_ptr(), ref.data(), BB * BI * BJ), scale, 1e-4);
  });
}
void register_bmm() {
  benchmark::RegisterBenchmark("bmm_strata_einsum", [](benchmark::State& s) {
    strata_threads g(static_cast<int>(s.range(0)));
    bmm_operands o;
    auto out = st::empty<float>({BB, BI, BJ});
    note_plan("bmm", st::einsum("bik,bkj->bij", o.a, o.b).plan());
    run_loop(s, [&] { out.assign(st::einsum("bik,bkj->bij", o.a, o.b)); });
    count(s, {bmm_flop, false});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("bmm_strata_matmul", [](benchmark::State& s) {
    strata_threads g(static_cast<int>(s.range(0)));
    bmm_operands o;
    run_loop(s, [&] {
      st::Tensor<float> c = st::matmul(o.a, o.b);
      benchmark::DoNotOptimize(c.data_ptr());
    });
    count(s, {bmm_flop, false});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  // 64 sgemm calls, OpenBLAS on t threads
  benchmark::RegisterBenchmark("bmm_cblas_loop", [](benchmark::State& s) {
    blas_threads g(static_cast<int>(s.range(0)));
    bmm_operands o;
    auto c = st::empty<float>({BB, BI, BJ});
    run_loop(s, [&] { bmm_loop(o.a.data_ptr(), o.b.data_ptr(), c.data_ptr(), 0, BB); });
    count(s, {bmm_flop, false});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  // the batch split over t threads, each calling 1-thread sgemm (small products parallelise
  // better across the batch than inside one 256^3 product)
  benchmark::RegisterBenchmark("bmm_cblas_split", [](benchmark::State& s) {
    const int t = static_cast<int>(s.range(0));
    blas_threads g(1);
    bmm_operands o;
    auto c = st::empty<float>({BB, BI, BJ});
    run_loop(s, [&] { split(t, BB, [&](i64 b0, i64 b1) { bmm_loop(o.a.data_ptr(), o.b.data_ptr(), c.data_ptr(), b0, b1); }); });
    count(s, {bmm_flop, false});
  })->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const char* v : {"bmm_strata_einsum", "bmm_strata_matmul", "bmm_cblas_loop", "bmm_cblas_split"})
    for (int t : {1, 2}) works()[std::string(v) + "/" + std::to_string(t) + "/real_time"] = {bmm_flop, false};
}

// ---- dot: einsum("ij,ij->") over [4096, 4096] ----
void check_dot() {
  auto a = filled<float>({DN, DN}), b = filled<float>({DN, DN}, -0.3);
  const float* pa = a.data_ptr(); const float* pb = b.data_ptr();
  double exact = 0, mag = 0;
  for (i64 i = 0; i < DN * DN; ++i) {
    exact += static_cast<double>(pa[i]) * static_cast<double>(pb[i]);
    mag += std::abs(static_cast<double>(pa[i]) * static_cast<double>(pb[i]));
  }
  // Float partial sums of 2^24 / 128 terms each: a relative error (to the sum of |a b|) of a few
  // 1e-6 is rounding; a wrong loop is off by O(1).
  const double h = hand_dot(pa, pb, DN * DN);
  std::printf("dot: double %.6g, hand loop %.6g, sum |a b| %.6g\n", exact, h, mag);
  if (std::abs(h - exact) > 1e-4 * mag) fail_baseline("dot: the hand loop disagrees with a double sum");
  guarded("dot_strata", [&] {
    auto out = st::zeros<float>({});
    out.assign(st::einsum("ij,ij->", a, b));
    check_strata("dot_strata", std::abs(static_cast<double>(out.item()) - exact), mag, 1e-4);
  });
}
void register_dot() {
  benchmark::RegisterBenchmark("dot_strata", [](benchmark::State& s) {
    strata_threads g(static_cast<int>(s.range(0)));
    auto a = filled<float>({DN, DN}), b = filled<float>({DN, DN}, -0.3), out = st::zeros<float>({});
    note_plan("dot", st::einsum("ij,ij->", a, b).plan());
    run_loop(s, [&] { out.assign(st::einsum("ij,ij->", a, b)); });
    count(s, {dot_bytes, true});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("dot_strata_sum", [](benchmark::State& s) {  // strata's fused reduce, for scale
    strata_threads g(static_cast<int>(s.range(0)));
    auto a = filled<float>({DN, DN}), b = filled<float>({DN, DN}, -0.3), out = st::zeros<float>({});
    run_loop(s, [&] { out.assign(st::sum(a * b)); });
    count(s, {dot_bytes, true});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("dot_hand", [](benchmark::State& s) {
    auto a = filled<float>({DN, DN}), b = filled<float>({DN, DN}, -0.3);
    run_loop(s, [&] { benchmark::DoNotOptimize(hand_dot(a.data_ptr(), b.data_ptr(), DN * DN)); });
    count(s, {dot_bytes, true});
  })->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("dot_cblas_sdot", [](benchmark::State& s) {
    blas_threads g(static_cast<int>(s.range(0)));
    auto a = filled<float>({DN, DN}), b = filled<float>({DN, DN}, -0.3);
    run_loop(s, [&] { benchmark::DoNotOptimize(cblas_sdot(static_cast<int>(DN * DN), a.data_ptr(), 1, b.data_ptr(), 1)); });
    count(s, {dot_bytes, true});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const char* v : {"dot_strata", "dot_strata_sum", "dot_hand", "dot_cblas_sdot"})
    for (int t : {1, 2}) works()[std::string(v) + "/" + std::to_string(t) + "/real_time"] = {dot_bytes, true};
}

// ---- outer: einsum("i,j->ij") into [4096, 4096] ----
void check_outer() {
  auto x = filled<float>({OM}), y = filled<float>({OM}, -0.3);
  auto ref_t = st::empty<float>({OM * OM}), nt_t = st::empty<float>({OM * OM});  // 64-byte aligned
  float *ref = ref_t.data_ptr(), *nt = nt_t.data_ptr();
  hand_outer<false>(x.data_ptr(), y.data_ptr(), ref, OM, OM);
  hand_outer<true>(x.data_ptr(), y.data_ptr(), nt, OM, OM);
  for (i64 i = 0; i < OM; i += 37)
    for (i64 j = 0; j < OM; j += 41)
      if (ref[i * OM + j] != x.data_ptr()[i] * y.data_ptr()[j]) return fail_baseline("outer: the hand loop");
  if (max_diff(ref, nt, OM * OM) != 0) return fail_baseline("outer: the streaming-store loop");
  guarded("outer_strata", [&] {
    auto out = st::empty<float>({OM, OM});
    out.assign(st::einsum("i,j->ij", x, y));
    check_strata("outer_strata", max_diff(out.data_ptr(), ref, OM * OM), max_abs(ref, OM * OM), 1e-6);
  });
}
void register_outer() {
  benchmark::RegisterBenchmark("outer_strata", [](benchmark::State& s) {
    strata_threads g(static_cast<int>(s.range(0)));
    auto x = filled<float>({OM}), y = filled<float>({OM}, -0.3), out = st::empty<float>({OM, OM});
    note_plan("outer", st::einsum("i,j->ij", x, y).plan());
    run_loop(s, [&] { out.assign(st::einsum("i,j->ij", x, y)); });
    count(s, {outer_bytes, true});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("outer_strata_mul", [](benchmark::State& s) {  // the broadcast product, for scale
    strata_threads g(static_cast<int>(s.range(0)));
    auto x = filled<float>({OM}), y = filled<float>({OM}, -0.3), out = st::empty<float>({OM, OM});
    run_loop(s, [&] { out.assign(x.view({OM, 1}) * y.view({1, OM})); });
    count(s, {outer_bytes, true});
  })->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("outer_hand", [](benchmark::State& s) {
    auto x = filled<float>({OM}), y = filled<float>({OM}, -0.3), out = st::empty<float>({OM, OM});
    run_loop(s, [&] { hand_outer<false>(x.data_ptr(), y.data_ptr(), out.data_ptr(), OM, OM); });
    count(s, {outer_bytes, true});
  })->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("outer_hand_stream", [](benchmark::State& s) {
    auto x = filled<float>({OM}), y = filled<float>({OM}, -0.3), out = st::empty<float>({OM, OM});
    run_loop(s, [&] { hand_outer<true>(x.data_ptr(), y.data_ptr(), out.data_ptr(), OM, OM); });
    count(s, {outer_bytes, true});
  })->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const char* v : {"outer_strata", "outer_strata_mul", "outer_hand", "outer_hand_stream"})
    for (int t : {1, 2}) works()[std::string(v) + "/" + std::to_string(t) + "/real_time"] = {outer_bytes, true};
}

// ---- bilinear: einsum("bn,anm,bm->ba"), b = 256, a = 64, n = m = 256 ----
struct bilinear_operands {
  st::Tensor<float> x = filled<float>({QB, QN}), w = filled<float>({QA, QN, QM}, -0.3), y = filled<float>({QB, QM}, -0.4);
};
// U[b, (a,n)] = Y[b,m] W[(a,n),m]^T (one 256 x 16384 x 256 sgemm), then out[b][a] = X[b,:] . U[b,a,:].
void bilinear_hand(const bilinear_operands& o, float* u, float* out, int nthreads) {
  gemm<float>(false, true, QB, QA * QN, QM, o.y.data_ptr(), QM, o.w.data_ptr(), QM, u, QA * QN);
  split(nthreads, QB, [&](i64 b0, i64 b1) { hand_row_dots(o.x.data_ptr(), u, out, b0, b1, QA, QN); });
}
void check_bilinear() {
  bilinear_operands o;
  std::vector<float> u(QB * QA * QN), ref(QB * QA);
  bilinear_hand(o, u.data(), ref.data(), 1);
  std::mt19937 rng(5);
  const float *px = o.x.data_ptr(), *pw = o.w.data_ptr(), *py = o.y.data_ptr();
  for (int s = 0; s < 16; ++s) {
    const i64 b = static_cast<i64>(rng() % QB), a = static_cast<i64>(rng() % QA);
    double acc = 0, mag = 0;
    for (i64 n = 0; n < QN; ++n)
      for (i64 m = 0; m < QM; ++m) {
        const double t = static_cast<double>(px[b * QN + n]) * static_cast<double>(pw[(a * QN + n) * QM + m]) *
                         static_cast<double>(py[b * QM + m]);
        acc += t, mag += std::abs(t);
      }
    if (std::abs(acc - static_cast<double>(ref[b * QA + a])) > 1e-5 * mag)
      return fail_baseline("bilinear: sgemm + dots disagree with a naive sum");
  }
  guarded("bilinear_strata", [&] {
    auto out = st::empty<float>({QB, QA});
    out.assign(st::einsum("bn,anm,bm->ba", o.x, o.w, o.y));
    check_strata("bilinear_strata", max_diff(out.data_ptr(), ref.data(), QB * QA), max_abs(ref.data(), QB * QA), 1e-3);
  });
}
void register_bilinear() {
  benchmark::RegisterBenchmark("bilinear_strata", [](benchmark::State& s) {
    strata_threads g(static_cast<int>(s.range(0)));
    bilinear_operands o;
    auto out = st::empty<float>({QB, QA});
    note_plan("bilinear", st::einsum("bn,anm,bm->ba", o.x, o.w, o.y).plan());
    run_loop(s, [&] { out.assign(st::einsum("bn,anm,bm->ba", o.x, o.w, o.y)); });
    count(s, {bilinear_flop, false});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("bilinear_hand", [](benchmark::State& s) {
    const int t = static_cast<int>(s.range(0));
    blas_threads g(t);
    bilinear_operands o;
    auto u = st::empty<float>({QB * QA * QN}), out = st::empty<float>({QB, QA});
    run_loop(s, [&] { bilinear_hand(o, u.data_ptr(), out.data_ptr(), t); });
    count(s, {bilinear_flop, false});
  })->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const char* v : {"bilinear_strata", "bilinear_hand"})
    for (int t : {1, 2}) works()[std::string(v) + "/" + std::to_string(t) + "/real_time"] = {bilinear_flop, false};
}

// ---- results: medians (or single runs) of this binary and of the Python script ----
struct figure {
  double ns = 0;        // wall time a call
  double cv = -1;       // coefficient of variation over repetitions, when known
  bool median = false;  // ns is a median of repetitions
};
using results = std::map<std::string, figure>;
class recording_reporter : public benchmark::ConsoleReporter {
 public:
  results times;
  recording_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    std::map<std::string, double> mean, sd;
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const double to_ns = 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
      const std::string name = r.run_name.str();
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") {
          times[name].ns = r.GetAdjustedRealTime() * to_ns;
          times[name].median = true;
        } else if (r.aggregate_name == "mean") mean[name] = r.GetAdjustedRealTime();
        else if (r.aggregate_name == "stddev") sd[name] = r.GetAdjustedRealTime();
      } else if (!times[name].median) {
        times[name].ns = r.GetAdjustedRealTime() * to_ns;
      }
    }
    for (auto& [name, m] : mean)
      if (sd.count(name) && m > 0) times[name].cv = sd[name] / m;
    ConsoleReporter::ReportRuns(runs);
  }
};

// Runs tools/bench_linalg_numpy.py --format lines: "name real_time_ns work is_bytes" lines.
void run_python(const std::string& python, const std::string& min_time, const std::string& reps,
                const std::string& filter, results& out) {
#ifdef STRATA_LINALG_PY
  std::string cmd = "'" + python + "' '" STRATA_LINALG_PY "' --format lines";
  if (!min_time.empty()) cmd += " --min-time " + min_time;
  if (!reps.empty()) cmd += " --repetitions " + reps;
  if (!filter.empty()) cmd += " --filter '" + filter + "'";
  std::printf("\nrunning %s\n", cmd.c_str());
  std::fflush(stdout);
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return;
  char line[1024];
  while (std::fgets(line, sizeof line, p)) {
    char name[512];
    double ns = 0, amount = 0;
    int is_bytes = 0;
    if (std::sscanf(line, "%511s %lf %lf %d", name, &ns, &amount, &is_bytes) == 4) {
      out[name].ns = ns;
      works()[name] = {amount, is_bytes != 0};
    } else {
      std::fputs(line, stdout);
    }
  }
  if (pclose(p) != 0) std::printf("%s failed: NumPy/PyTorch figures missing\n", STRATA_LINALG_PY);
#else
  (void)python, (void)min_time, (void)reps, (void)filter, (void)out;
#endif
}

// ---- the table ----
struct table_case {
  std::string key, title;
  std::vector<std::string> strata;  // the first is the headline, judged by the targets
  std::vector<std::string> base;    // baselines; the best one is "the baseline"
  std::vector<std::string> libs;    // library figures (best one reported)
  std::vector<std::string> info;    // printed, not judged
  double want = 0;                  // strata / best baseline target (0: none)
  std::vector<std::string> faster_than;  // strata must beat each of these (>= 1.0x)
};

std::vector<table_case> table_cases() {
  std::vector<table_case> cs;
  const std::string rt = "/real_time";
  for (const char* dt : {"f32", "f64"})
    for (layout l : layouts)
      for (int t : {1, 2}) {
        const std::string k = std::string("matmul_") + dt + "_" + name_of(l), ts = "/" + std::to_string(t);
        cs.push_back({k + ts, std::string("matmul 2048^3 ") + dt + " " + name_of(l) + ", " + std::to_string(t) + "t",
                      {k + "_strata" + ts + rt, k + "_strata_einsum" + ts + rt},
                      {k + "_cblas" + ts + rt},
                      {std::string("numpy_matmul_") + dt + "_" + name_of(l) + ts,
                       std::string("torch_matmul_") + dt + "_" + name_of(l) + ts},
                      {}, 0.95, {}});
      }
  for (int t : {1, 2}) {
    const std::string ts = "/" + std::to_string(t);
    cs.push_back({"bmm" + ts, "einsum(\"bik,bkj->bij\") [64,256,256] f32, " + std::to_string(t) + "t",
                  {"bmm_strata_einsum" + ts + rt, "bmm_strata_matmul" + ts + rt},
                  {"bmm_cblas_loop" + ts + rt, "bmm_cblas_split" + ts + rt},
                  {"numpy_bmm_matmul" + ts, "numpy_bmm_einsum" + ts, "torch_bmm" + ts, "torch_bmm_einsum" + ts},
                  {}, 0.9, {}});
  }
  cs.push_back({"dot/1", "einsum(\"ij,ij->\") 2^24 f32, 1t", {"dot_strata/1" + rt}, {"dot_hand/1" + rt},
                {"dot_cblas_sdot/1" + rt, "numpy_dot_einsum/1", "numpy_dot_vdot/1", "torch_dot_einsum/1", "torch_dot/1"},
                {"dot_strata/2" + rt, "dot_strata_sum/1" + rt, "dot_strata_sum/2" + rt, "dot_cblas_sdot/2" + rt}, 0.9, {}});
  cs.push_back({"outer/1", "einsum(\"i,j->ij\") 4096x4096 f32, 1t", {"outer_strata/1" + rt},
                {"outer_hand/1" + rt, "outer_hand_stream/1" + rt},
                {"numpy_outer_einsum/1", "numpy_outer/1", "torch_outer_einsum/1", "torch_outer/1"},
                {"outer_strata/2" + rt, "outer_strata_mul/1" + rt}, 0.9, {}});
  for (int t : {1, 2}) {
    const std::string ts = "/" + std::to_string(t);
    cs.push_back({"bilinear" + ts, "einsum(\"bn,anm,bm->ba\") b=256 a=64 n=m=256 f32, " + std::to_string(t) + "t",
                  {"bilinear_strata" + ts + rt}, {"bilinear_hand" + ts + rt},
                  {"numpy_bilinear_einsum" + ts, "numpy_bilinear_einsum_path" + ts, "torch_bilinear_einsum" + ts},
                  {}, 0, {"numpy_bilinear_einsum" + ts, "torch_bilinear_einsum" + ts}});
  }
  return cs;
}

double rate(const results& r, const std::string& n) {  // GFLOP/s or GB/s
  const auto it = r.find(n);
  const auto w = works().find(n);
  if (it == r.end() || w == works().end() || it->second.ns <= 0) return 0;
  return w->second.amount / it->second.ns;
}
std::string fig(const results& r, const std::string& n) {
  const auto it = r.find(n);
  if (it == r.end()) return "n/a";
  const auto w = works().find(n);
  char b[96];
  std::snprintf(b, sizeof b, "%.2f %s (%.2f ms%s)", rate(r, n), w != works().end() && w->second.bytes ? "GB/s" : "GFLOP/s",
                it->second.ns / 1e6,
                it->second.cv > 0.10 ? ", noisy" : "");
  return b;
}
std::string best_of(const results& r, const std::vector<std::string>& names) {
  std::string best;
  for (const auto& n : names)
    if (r.count(n) && (best.empty() || rate(r, n) > rate(r, best))) best = n;
  return best;
}
std::string strip(std::string n) {  // the name as printed in the table
  if (const auto p = n.find("/real_time"); p != std::string::npos) n.erase(p);
  return n;
}

void print_table(const results& r) {
  std::printf("\n| case | strata | figure | baseline (best) | figure | strata / baseline | target | best library | figure | strata / library |\n"
              "|---|---|---|---|---|---|---|---|---|---|\n");
  int ok = 0, missed = 0;
  for (const table_case& c : table_cases()) {
    const std::string b = best_of(r, c.base), l = best_of(r, c.libs);
    bool first = true;
    for (const std::string& s : c.strata) {
      if (!r.count(s) && !wrong().count(strip(s).substr(0, strip(s).find('/')))) continue;
      std::string status;
      const std::string plain = strip(s).substr(0, strip(s).find('/'));
      if (wrong().count(plain)) status = "WRONG (" + wrong()[plain] + ")";
      char ratio[32] = "", lib_ratio[32] = "";
      if (r.count(s) && !b.empty()) std::snprintf(ratio, sizeof ratio, "%.2fx", rate(r, s) / rate(r, b));
      if (r.count(s) && !l.empty()) std::snprintf(lib_ratio, sizeof lib_ratio, "%.2fx", rate(r, s) / rate(r, l));
      std::string target;
      if (first && r.count(s)) {
        auto judge = [&](bool pass) { pass ? ++ok : ++missed; return pass ? "ok" : "MISSED"; };
        if (c.want > 0 && !b.empty()) {
          char t[64];
          std::snprintf(t, sizeof t, ">= %.2fx: %s", c.want, judge(rate(r, s) >= c.want * rate(r, b)));
          target = t;
        }
        for (const std::string& f : c.faster_than) {
          if (!r.count(f)) continue;
          char t[128];
          std::snprintf(t, sizeof t, "%s%.2fx %s: %s", target.empty() ? "" : "; ", rate(r, s) / rate(r, f),
                        f.c_str(), judge(rate(r, s) > rate(r, f)));
          target += t;
        }
      }
      if (!status.empty()) target = status + (target.empty() ? "" : "; " + target);
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", first ? c.key.c_str() : "", strip(s).c_str(),
                  fig(r, s).c_str(), first ? strip(b).c_str() : "", first && !b.empty() ? fig(r, b).c_str() : "",
                  ratio, target.c_str(), first ? strip(l).c_str() : "", first && !l.empty() ? fig(r, l).c_str() : "",
                  lib_ratio);
      first = false;
    }
    for (const std::string& n : c.info) {
      if (!r.count(n)) continue;
      char ratio[32] = "";
      if (!b.empty()) std::snprintf(ratio, sizeof ratio, "%.2fx", rate(r, n) / rate(r, b));
      std::printf("| | %s | %s | (for scale) | | %s | | | | |\n", strip(n).c_str(), fig(r, n).c_str(), ratio);
    }
    for (const std::string& n : c.libs)
      if (r.count(n) && n != l) std::printf("| | | | | | | | %s | %s | |\n", strip(n).c_str(), fig(r, n).c_str());
  }
  std::printf("\ntargets: %d ok, %d missed\n", ok, missed);
  std::printf("\nplans (einsum(...).plan(); matmul cases: the equivalent einsum(\"ik,kj->ij\")):\n");
  for (const auto& [k, p] : plans()) std::printf("  %-22s %s\n", k.c_str(), p.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  // --no_python and --python=PATH are ours; --benchmark_min_time, _repetitions and _filter are
  // also passed on to the Python script (its filter matches numpy_X / torch_X as ours X).
  bool python = true, check = true;
  std::string py = "/usr/bin/python3", min_time, reps, filter;
  std::vector<char*> args;
  bool aggregates = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--no_python") { python = false; continue; }
    if (a == "--no_check") { check = false; continue; }
    if (a.rfind("--python=", 0) == 0) { py = std::string(a.substr(9)); continue; }
    if (a.rfind("--benchmark_min_time=", 0) == 0) min_time = std::string(a.substr(21));
    if (a.rfind("--benchmark_repetitions=", 0) == 0) reps = std::string(a.substr(24));
    if (a.rfind("--benchmark_filter=", 0) == 0) filter = std::string(a.substr(19));
    if (a.rfind("--benchmark_report_aggregates_only", 0) == 0) aggregates = true;
    args.push_back(argv[i]);
  }
  static char agg[] = "--benchmark_report_aggregates_only=true";
  if (!reps.empty() && !aggregates) args.push_back(agg);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OpenBLAS: %s; kernel %s%s%s\n", openblas_get_config(), openblas_get_corename(),
              coretype ? " (forced by OPENBLAS_CORETYPE=" : "", coretype ? (std::string(coretype) + ")").c_str() : "");
  if (check) {
    std::printf("checking every result once...\n");
    std::fflush(stdout);
    st::set_num_threads(2);
    for (layout l : layouts) {
      check_matmul<float>(l, "f32");
      check_matmul<double>(l, "f64");
    }
    check_bmm();
    check_dot();
    check_outer();
    check_bilinear();
    st::set_num_threads(1);
    if (!baseline_ok) return 1;  // a wrong baseline measures nothing
    std::printf("checks done: %zu strata result(s) wrong\n\n", wrong().size());
  }

  register_matmul<float>("f32");
  register_matmul<double>("f64");
  register_bmm();
  register_dot();
  register_outer();
  register_bilinear();

  recording_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  results all = rep.times;
  if (python) run_python(py, min_time, reps, filter, all);
  print_table(all);
  return 0;
}
