// SPDX-License-Identifier: MIT
// Benchmarks of issue 11's operators, one thread, each beside the hand-written loops a
// performance engineer writes for it, in the same binary; after the runs, the libtorch figures
// of the same cases (torch_bench's torch_ops_* rows, run from beside this binary when built)
// and NumPy's (tools/bench_ops_numpy.py), then one table of ratios and the targets.
//
//   SM   softmax over the rows of x [4096, 1000] f32, x in [-2, 2)   (LSM: log_softmax)
//   VR   var over dim 1 of x [4096, 4096] f32, x in [1, 2)           (VC: over dim 0)
//   AM   argmax over dim 1 of x [4096, 4096] f32, distinct values in each row
//
// Variants: *_strata_assign evaluates into a preallocated out (out.assign(op(x))), *_strata_fresh
// makes a new tensor each call (Tensor<float> y = op(x)); the hand loops write a preallocated
// out. Bytes counted: the input read once and the output written once. Every figure is the
// median of --benchmark_repetitions (5 unless given) on the benchmark thread's CPU clock.
// Before the runs every hand loop is checked against strata's result (a baseline computing
// something else measures nothing).
//
//   build/release/bench/ops_bench [--no_torch] [--no_python] [--benchmark_filter=SM]
#include <benchmark/benchmark.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hand_kernels.hpp"
import strata;

namespace {
using i64 = std::int64_t;
constexpr i64 SR = 4096, SC = 1000;  // softmax
constexpr i64 M = 4096;              // var, argmax

// ---- data: the same values in torch_bench and tools/bench_ops_numpy.py ----
// base + (i % 1000) * step, i the row-major position.
strata::Tensor<float> filled(strata::int_list sizes, double base, double step) {
  auto t = strata::empty<float>(sizes);
  float* p = t.data_ptr();
  for (i64 i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(base + static_cast<double>(i % 1000) * step);
  return t;
}
// (i * 7919 % 10007) * 1e-4 - 0.5: 4096 consecutive positions (a row) hold distinct values.
strata::Tensor<float> scrambled(strata::int_list sizes) {
  auto t = strata::empty<float>(sizes);
  float* p = t.data_ptr();
  for (i64 i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(static_cast<double>(i * 7919 % 10007) * 1e-4 - 0.5);
  return t;
}
strata::Tensor<float> softmax_input() { return filled({SR, SC}, -2, 4e-3); }
strata::Tensor<float> var_input() { return filled({M, M}, 1, 1e-3); }

void bytes(benchmark::State& s, i64 per_iter) {
  s.SetBytesProcessed(static_cast<i64>(s.iterations()) * per_iter);
}
constexpr i64 softmax_bytes = 2 * SR * SC * 4;
constexpr i64 var_bytes = (M * M + M) * 4;
constexpr i64 argmax_bytes = M * M * 4 + M * 8;
}  // namespace

// ---- the hand-written loops (plain C++ on raw pointers: strata only owns the memory, 64-byte
// aligned, huge pages for these sizes) ----
namespace ops_hand {
using i64 = std::int64_t;

// A vector layer with masked tails, one struct an ISA, and SLEEF's exp (the 1.0-ulp functions
// strata's vmath calls). The ISA is chosen at compile time, as in bench/hand_kernels.hpp.
#if defined(__AVX512F__)
struct avx512 {
  using v = __m512;
  static constexpr i64 W = 16;
  static __mmask16 mask(i64 r) { return static_cast<__mmask16>((1u << r) - 1); }
  static v load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, v x) { _mm512_storeu_ps(p, x); }
  static v load_tail(const float* p, i64 r, float fill) { return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), mask(r), p); }
  static void store_tail(float* p, i64 r, v x) { _mm512_mask_storeu_ps(p, mask(r), x); }
  static v set1(float x) { return _mm512_set1_ps(x); }
  static v add(v a, v b) { return _mm512_add_ps(a, b); }
  static v sub(v a, v b) { return _mm512_sub_ps(a, b); }
  static v mul(v a, v b) { return _mm512_mul_ps(a, b); }
  static v max(v a, v b) { return _mm512_max_ps(a, b); }
  static float hsum(v x) { return _mm512_reduce_add_ps(x); }
  static float hmax(v x) { return _mm512_reduce_max_ps(x); }
  static v exp(v x) { return Sleef_expf16_u10avx512f(x); }
};
#endif
#if defined(__AVX2__)
struct avx2 {
  using v = __m256;
  static constexpr i64 W = 8;
  static __m256i mask(i64 r) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(r)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static v load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, v x) { _mm256_storeu_ps(p, x); }
  static v load_tail(const float* p, i64 r, float fill) {
    const __m256i m = mask(r);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store_tail(float* p, i64 r, v x) { _mm256_maskstore_ps(p, mask(r), x); }
  static v set1(float x) { return _mm256_set1_ps(x); }
  static v add(v a, v b) { return _mm256_add_ps(a, b); }
  static v sub(v a, v b) { return _mm256_sub_ps(a, b); }
  static v mul(v a, v b) { return _mm256_mul_ps(a, b); }
  static v max(v a, v b) { return _mm256_max_ps(a, b); }
  template <class Op>
  static float reduce(v x, Op op) {  // op over the 8 lanes: halves, then quarters, then pairs
    __m128 s = op(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = op(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(op(s, _mm_movehdup_ps(s)));
  }
  static float hsum(v x) { return reduce(x, [](__m128 a, __m128 b) { return _mm_add_ps(a, b); }); }
  static float hmax(v x) { return reduce(x, [](__m128 a, __m128 b) { return _mm_max_ps(a, b); }); }
  static v exp(v x) { return Sleef_expf8_u10avx2(x); }
};
// The widest vector layer this build has.
#if defined(__AVX512F__)
using widest = avx512;
#else
using widest = avx2;
#endif
// The same loops with the exp done by std::exp a lane at a time (glibc's scalar expf): the
// max and normalising passes stay vectorised.
struct libm : widest {
  static v exp(v x) {
    alignas(64) float t[W];
    store(t, x);
    for (float& e : t) e = std::exp(e);
    return load(t);
  }
};

/// Softmax (Log: log_softmax) of rows rows of n floats, three passes a row: the maximum (four
/// vector accumulators); exp(x - max) summed in two accumulators (softmax: and written to y);
/// then y *= 1 / sum (log_softmax: y = (x - max) - log(sum)). Tails masked; a row of 1000
/// floats stays in L1 between the passes.
template <class V, bool Log>
void softmax_rows(const float* __restrict x, float* __restrict y, i64 rows, i64 n) {
  using v = typename V::v;
  constexpr i64 W = V::W;
  const i64 nv = n / W * W, tail = n - nv;
  for (i64 r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    float* __restrict yr = y + r * n;
    v m[4] = {V::set1(-INFINITY), V::set1(-INFINITY), V::set1(-INFINITY), V::set1(-INFINITY)};
    i64 k = 0;
    for (; k + 4 * W <= n; k += 4 * W)
      for (int q = 0; q < 4; ++q) m[q] = V::max(m[q], V::load(xr + k + q * W));
    for (; k < nv; k += W) m[0] = V::max(m[0], V::load(xr + k));
    if (tail) m[1] = V::max(m[1], V::load_tail(xr + nv, tail, -INFINITY));
    const v vm = V::set1(V::hmax(V::max(V::max(m[0], m[1]), V::max(m[2], m[3]))));

    v s[2] = {V::set1(0), V::set1(0)};
    auto exp_step = [&](i64 at, int q) {
      const v e = V::exp(V::sub(V::load(xr + at), vm));
      if constexpr (!Log) V::store(yr + at, e);
      s[q] = V::add(s[q], e);
    };
    for (k = 0; k + 2 * W <= n; k += 2 * W) exp_step(k, 0), exp_step(k + W, 1);
    for (; k < nv; k += W) exp_step(k, 0);
    if (tail) {
      const v e = V::exp(V::sub(V::load_tail(xr + nv, tail, -INFINITY), vm));
      if constexpr (!Log) V::store_tail(yr + nv, tail, e);
      s[1] = V::add(s[1], e);
    }
    const float sum = V::hsum(V::add(s[0], s[1]));

    if constexpr (Log) {
      const v ls = V::set1(std::log(sum));
      for (k = 0; k < nv; k += W) V::store(yr + k, V::sub(V::sub(V::load(xr + k), vm), ls));
      if (tail) V::store_tail(yr + nv, tail, V::sub(V::sub(V::load_tail(xr + nv, tail, 0), vm), ls));
    } else {
      const v inv = V::set1(1 / sum);
      for (k = 0; k < nv; k += W) V::store(yr + k, V::mul(V::load(yr + k), inv));
      if (tail) V::store_tail(yr + nv, tail, V::mul(V::load_tail(yr + nv, tail, 0), inv));
    }
  }
}
#endif  // __AVX2__

/// var (correction 1) of each of rows rows of n floats: two passes a row, the mean (eight
/// vector accumulators, hand::flat_sum) and the squared deviations from it (eight vector
/// FMA accumulators); a row of 16 KiB stays in L1 between them.
inline void var_rows(const float* __restrict x, float* __restrict out, i64 rows, i64 n) {
  using namespace hand;
  for (i64 r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    const float mean = flat_sum(xr, n) / static_cast<float>(n);
    const vec neg = vset1(-mean);
    vec acc[8];
    for (vec& a : acc) a = vzero();
    i64 k = 0;
    for (; k + 8 * W <= n; k += 8 * W)
      for (int q = 0; q < 8; ++q) {
        const vec d = vadd(vload(xr + k + q * W), neg);
        acc[q] = vfmadd(d, d, acc[q]);
      }
    float ss = vhsum(vadd(vadd(vadd(acc[0], acc[1]), vadd(acc[2], acc[3])), vadd(vadd(acc[4], acc[5]), vadd(acc[6], acc[7]))));
    for (; k < n; ++k) ss += (xr[k] - mean) * (xr[k] - mean);
    out[r] = ss / static_cast<float>(n - 1);
  }
}

/// Column moments about shift: s1[j] += sum_i (x[i][j] - shift[j]) and s2[j] += sum_i of its
/// square, R rows at a time (R deviations summed in registers, a pairwise tree, before each
/// vector of s1 and s2 is loaded and stored; s1, s2 and shift, 48 KiB, stay near in cache).
template <int R>
void col_moments(const float* __restrict x, i64 rows, i64 n, const float* __restrict shift, float* __restrict s1,
                 float* __restrict s2) {
  using namespace hand;
  i64 r = 0;
  for (; r + R <= rows; r += R) {
    const float* __restrict p = x + r * n;
    i64 k = 0;
    for (; k + W <= n; k += W) {
      const vec sh = vload(shift + k), minus1 = vset1(-1);
      vec d[R], q[R];
      for (int i = 0; i < R; ++i) {
        d[i] = vfmadd(minus1, sh, vload(p + i * n + k));  // x - shift, one rounding
        q[i] = vfmadd(d[i], d[i], vzero());
      }
      for (int w = 1; w < R; w *= 2)
        for (int i = 0; i + w < R; i += 2 * w) d[i] = vadd(d[i], d[i + w]), q[i] = vadd(q[i], q[i + w]);
      vstore(s1 + k, vadd(vload(s1 + k), d[0]));
      vstore(s2 + k, vadd(vload(s2 + k), q[0]));
    }
    for (; k < n; ++k)
      for (int i = 0; i < R; ++i) {
        const float d = p[i * n + k] - shift[k];
        s1[k] += d;
        s2[k] += d * d;
      }
  }
  for (; r < rows; ++r)
    for (i64 k = 0; k < n; ++k) {
      const float d = x[r * n + k] - shift[k];
      s1[k] += d;
      s2[k] += d * d;
    }
}
/// var over dim 0 of x [rows, n] from the moments about a shift: (s2 - s1^2 / rows) / (rows - 1).
inline void col_var(const float* __restrict x, i64 rows, i64 n, const float* __restrict shift, float* __restrict s1,
                    float* __restrict out) {
  for (i64 k = 0; k < n; ++k) s1[k] = out[k] = 0;
  col_moments<8>(x, rows, n, shift, s1, out);
  const float nr = static_cast<float>(rows);
  for (i64 k = 0; k < n; ++k) out[k] = (out[k] - s1[k] * s1[k] / nr) / (nr - 1);
}

/// The first index k < n with p[k] == m (m known to be there): 16 compared a step with AVX-512.
inline i64 first_index_of(const float* __restrict p, i64 n, float m) {
  i64 k = 0;
#if defined(__AVX512F__)
  const __m512 vm = _mm512_set1_ps(m);
  for (; k + 16 <= n; k += 16)
    if (const __mmask16 h = _mm512_cmpeq_ps_mask(_mm512_loadu_ps(p + k), vm)) return k + __builtin_ctz(h);
#endif
  while (k < n && p[k] != m) ++k;
  return k;
}
/// argmax of each row: its maximum (eight vector accumulators, hand::flat_max), then the first
/// index holding it (the row, 16 KiB, still in L1). No NaN handling: the data has none.
inline void argmax_rows(const float* __restrict x, std::int64_t* __restrict out, i64 rows, i64 n) {
  for (i64 r = 0; r < rows; ++r) out[r] = first_index_of(x + r * n, n, hand::flat_max(x + r * n, n));
}
}  // namespace ops_hand

namespace {
// ---- strata: into a preallocated out, and fresh ----
template <class Op>
void strata_assign(benchmark::State& s, const strata::Tensor<float>& x, Op op, i64 per_iter) {
  auto out = strata::Tensor<float>(op(x));
  for (auto _ : s) out.assign(op(x));
  bytes(s, per_iter);
}
template <class R, class Op>
void strata_fresh(benchmark::State& s, const strata::Tensor<float>& x, Op op, i64 per_iter) {
  { strata::Tensor<R> warm = op(x); }
  for (auto _ : s) {
    strata::Tensor<R> y = op(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  bytes(s, per_iter);
}
const auto softmax1 = [](const strata::Tensor<float>& x) { return strata::softmax(x, 1); };
const auto log_softmax1 = [](const strata::Tensor<float>& x) { return strata::log_softmax(x, 1); };
const auto var_dim1 = [](const strata::Tensor<float>& x) { return strata::var(x, {1}); };
const auto var_dim0 = [](const strata::Tensor<float>& x) { return strata::var(x, {0}); };
const auto argmax1 = [](const strata::Tensor<float>& x) { return strata::argmax(x, 1); };

void SM_strata_assign(benchmark::State& s) { strata_assign(s, softmax_input(), softmax1, softmax_bytes); }
void SM_strata_fresh(benchmark::State& s) { strata_fresh<float>(s, softmax_input(), softmax1, softmax_bytes); }
void LSM_strata_assign(benchmark::State& s) { strata_assign(s, softmax_input(), log_softmax1, softmax_bytes); }
void LSM_strata_fresh(benchmark::State& s) { strata_fresh<float>(s, softmax_input(), log_softmax1, softmax_bytes); }
void VR_strata_assign(benchmark::State& s) { strata_assign(s, var_input(), var_dim1, var_bytes); }
void VR_strata_fresh(benchmark::State& s) { strata_fresh<float>(s, var_input(), var_dim1, var_bytes); }
void VC_strata_assign(benchmark::State& s) { strata_assign(s, var_input(), var_dim0, var_bytes); }
void VC_strata_fresh(benchmark::State& s) { strata_fresh<float>(s, var_input(), var_dim0, var_bytes); }
void AM_strata_fresh(benchmark::State& s) { strata_fresh<i64>(s, scrambled({M, M}), argmax1, argmax_bytes); }

// ---- the hand loops ----
template <class F>
void hand_softmax(benchmark::State& s, F kernel) {
  auto x = softmax_input(), y = strata::empty<float>({SR, SC});
  for (auto _ : s) {
    kernel(x.data_ptr(), y.data_ptr(), SR, SC);
    benchmark::ClobberMemory();
  }
  bytes(s, softmax_bytes);
}
#if defined(__AVX2__)
#if defined(__AVX512F__)
void SM_hand_sleef512(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::avx512, false>); }
void LSM_hand_sleef512(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::avx512, true>); }
#endif
void SM_hand_sleef256(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::avx2, false>); }
void LSM_hand_sleef256(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::avx2, true>); }
void SM_hand_libm(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::libm, false>); }
void LSM_hand_libm(benchmark::State& s) { hand_softmax(s, ops_hand::softmax_rows<ops_hand::libm, true>); }
#endif

void VR_hand(benchmark::State& s) {
  auto x = var_input(), out = strata::empty<float>({M});
  for (auto _ : s) {
    ops_hand::var_rows(x.data_ptr(), out.data_ptr(), M, M);
    benchmark::ClobberMemory();
  }
  bytes(s, var_bytes);
}
// Two passes over x: the column means (hand::col_sums_rows<8>), then the moments about them.
void VC_hand_two_pass(benchmark::State& s) {
  auto x = var_input(), out = strata::empty<float>({M}), mean = strata::empty<float>({M}), s1 = strata::empty<float>({M});
  for (auto _ : s) {
    float* pm = mean.data_ptr();
    for (i64 k = 0; k < M; ++k) pm[k] = 0;
    hand::col_sums_rows<8>(x.data_ptr(), M, M, pm);
    for (i64 k = 0; k < M; ++k) pm[k] /= static_cast<float>(M);
    ops_hand::col_var(x.data_ptr(), M, M, pm, s1.data_ptr(), out.data_ptr());
    benchmark::ClobberMemory();
  }
  bytes(s, var_bytes);
}
// One pass: the moments about the first row (the shifted-data algorithm; exact up to rounding
// when the shift is near the mean, which the first row of these data is).
void VC_hand_one_pass(benchmark::State& s) {
  auto x = var_input(), out = strata::empty<float>({M}), s1 = strata::empty<float>({M});
  for (auto _ : s) {
    ops_hand::col_var(x.data_ptr(), M, M, x.data_ptr(), s1.data_ptr(), out.data_ptr());
    benchmark::ClobberMemory();
  }
  bytes(s, var_bytes);
}
void AM_hand(benchmark::State& s) {
  auto x = scrambled({M, M});
  auto out = strata::empty<i64>({M});
  for (auto _ : s) {
    ops_hand::argmax_rows(x.data_ptr(), out.data_ptr(), M, M);
    benchmark::ClobberMemory();
  }
  bytes(s, argmax_bytes);
}

// ---- the hand loops checked against strata ----
// Largest |a - b| / (|b| + tiny) over the elements (tiny: 1e-30).
double max_rel(const float* a, const float* b, i64 n) {
  double w = 0;
  for (i64 i = 0; i < n; ++i) w = std::max(w, std::fabs(double{a[i]} - b[i]) / (std::fabs(double{b[i]}) + 1e-30));
  return w;
}
bool check(const char* name, double err, double tol) {
  std::printf("  %-22s max rel. difference to strata %.2e%s\n", name, err, err <= tol ? "" : "  WRONG");
  return err <= tol;
}
bool check_hand_loops() {
  std::printf("checking the hand loops against strata's results...\n");
  bool ok = true;
  const auto sx = softmax_input();
  auto y = strata::empty<float>({SR, SC});
#if defined(__AVX2__)
  const strata::Tensor<float> sm = strata::softmax(sx, 1), lsm = strata::log_softmax(sx, 1);
  auto check_softmax = [&](const char* name, auto kernel, const strata::Tensor<float>& want) {
    kernel(sx.data_ptr(), y.data_ptr(), SR, SC);
    ok &= check(name, max_rel(y.data_ptr(), want.data_ptr(), SR * SC), 1e-5);
  };
#if defined(__AVX512F__)
  check_softmax("SM_hand_sleef512", ops_hand::softmax_rows<ops_hand::avx512, false>, sm);
  check_softmax("LSM_hand_sleef512", ops_hand::softmax_rows<ops_hand::avx512, true>, lsm);
#endif
  check_softmax("SM_hand_sleef256", ops_hand::softmax_rows<ops_hand::avx2, false>, sm);
  check_softmax("LSM_hand_sleef256", ops_hand::softmax_rows<ops_hand::avx2, true>, lsm);
  check_softmax("SM_hand_libm", ops_hand::softmax_rows<ops_hand::libm, false>, sm);
  check_softmax("LSM_hand_libm", ops_hand::softmax_rows<ops_hand::libm, true>, lsm);
#endif
  const auto vx = var_input();
  auto v = strata::empty<float>({M}), s1 = strata::empty<float>({M}), mean = strata::empty<float>({M});
  const strata::Tensor<float> vr = strata::var(vx, {1}), vc = strata::var(vx, {0});
  ops_hand::var_rows(vx.data_ptr(), v.data_ptr(), M, M);
  ok &= check("VR_hand", max_rel(v.data_ptr(), vr.data_ptr(), M), 1e-4);
  ops_hand::col_var(vx.data_ptr(), M, M, vx.data_ptr(), s1.data_ptr(), v.data_ptr());
  ok &= check("VC_hand_one_pass", max_rel(v.data_ptr(), vc.data_ptr(), M), 1e-4);
  mean.assign(strata::mean(vx, {0}));
  ops_hand::col_var(vx.data_ptr(), M, M, mean.data_ptr(), s1.data_ptr(), v.data_ptr());
  ok &= check("VC_hand_two_pass", max_rel(v.data_ptr(), vc.data_ptr(), M), 1e-4);
  const auto ax = scrambled({M, M});
  auto idx = strata::empty<i64>({M});
  const strata::Tensor<i64> am = strata::argmax(ax, 1);
  ops_hand::argmax_rows(ax.data_ptr(), idx.data_ptr(), M, M);
  i64 wrong = 0;
  for (i64 r = 0; r < M; ++r) wrong += idx.data_ptr()[r] != am.data_ptr()[r];
  ok &= check("AM_hand", static_cast<double>(wrong), 0);
  return ok;
}

// ---- after the runs: medians by name, libtorch's and NumPy's, and the table ----
using results = std::map<std::string, double>;  // CPU ns a call
class recording_reporter : public benchmark::ConsoleReporter {
 public:
  results times;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      times[r.run_name.str()] = r.GetAdjustedCPUTime() * 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// The output of a command, line by line.
template <class Line>
bool run_command(const std::string& cmd, Line line) {
  std::printf("\nrunning %s\n", cmd.c_str());
  std::fflush(stdout);
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) line(std::string_view(buf));
  return pclose(p) == 0;
}
// torch_bench's torch_ops_* cases (beside this binary) as CSV: name,iterations,real_time,
// cpu_time,time_unit,...; the medians kept, under their names without "_median".
void run_torch(const std::string& self, const std::string& reps, const std::string& min_time, results& out) {
  const std::string path = self.substr(0, self.find_last_of('/') + 1) + "torch_bench";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    std::printf("\n%s not built: no libtorch figures\n", path.c_str());
    return;
  }
  std::fclose(f);
  const std::string cmd = "'" + path + "' --benchmark_filter=^torch_ops_ --benchmark_format=csv"
                          " --benchmark_report_aggregates_only=true --benchmark_repetitions=" + reps +
                          (min_time.empty() ? "" : " --benchmark_min_time=" + min_time);
  const bool ok = run_command(cmd, [&](std::string_view l) {
    if (l.rfind("\"torch_ops_", 0) != 0) return;
    std::vector<std::string> f;
    for (std::size_t a = 0, b; a <= l.size(); a = b + 1) f.emplace_back(l.substr(a, (b = std::min(l.find(',', a), l.size())) - a));
    if (f.size() < 5 || f[0].find("_median") == std::string::npos) return;
    std::string name = f[0].substr(1, f[0].find("_median") - 1);
    const double unit = f[4] == "ns" ? 1 : f[4] == "us" ? 1e3 : f[4] == "ms" ? 1e6 : 1e9;
    out[name] = std::atof(f[3].c_str()) * unit;
    std::printf("  %-32s %9.3f ms\n", name.c_str(), out[name] / 1e6);
  });
  if (!ok) std::printf("torch_bench failed\n");
}
// tools/bench_ops_numpy.py --format lines: "name cpu_ns bytes" lines.
void run_python(const std::string& reps, const std::string& min_time, results& out) {
#ifdef STRATA_OPS_PY
  const std::string cmd = "/usr/bin/python3 '" STRATA_OPS_PY "' --format lines --repetitions " + reps +
                          (min_time.empty() ? "" : " --min-time " + min_time);
  const bool ok = run_command(cmd, [&](std::string_view l) {
    char name[256];
    double ns = 0;
    if (std::sscanf(std::string(l).c_str(), "%255s %lf", name, &ns) == 2) out[name] = ns;
  });
  if (!ok) std::printf("%s failed: no NumPy figures\n", STRATA_OPS_PY);
#else
  (void)reps, (void)min_time, (void)out;
#endif
}

struct table_case {
  const char* key;
  i64 bytes;
  std::vector<const char*> strata, hand, torch, numpy;
  double want_hand = 0, want_torch = 0;  // targets on the first strata variant (0: none)
};
void print_table(const results& r) {
  const std::vector<table_case> cases = {
      {"SM", softmax_bytes, {"SM_strata_assign", "SM_strata_fresh"}, {"SM_hand_sleef512", "SM_hand_sleef256", "SM_hand_libm"},
       {"torch_ops_SM_softmax_out", "torch_ops_SM_softmax"}, {"numpy_SM"}, 0.8, 2.0},
      {"LSM", softmax_bytes, {"LSM_strata_assign", "LSM_strata_fresh"},
       {"LSM_hand_sleef512", "LSM_hand_sleef256", "LSM_hand_libm"},
       {"torch_ops_LSM_log_softmax_out", "torch_ops_LSM_log_softmax"}, {"numpy_LSM"}, 0.8, 2.0},
      {"VR", var_bytes, {"VR_strata_assign", "VR_strata_fresh"}, {"VR_hand"}, {"torch_ops_VR_var_out", "torch_ops_VR_var"},
       {"numpy_VR"}},
      {"VC", var_bytes, {"VC_strata_assign", "VC_strata_fresh"}, {"VC_hand_one_pass", "VC_hand_two_pass"},
       {"torch_ops_VC_var_out", "torch_ops_VC_var"}, {"numpy_VC"}},
      {"AM", argmax_bytes, {"AM_strata_fresh"}, {"AM_hand"}, {"torch_ops_AM_argmax_out", "torch_ops_AM_argmax"},
       {"numpy_AM"}},
  };
  auto best = [&](const std::vector<const char*>& names) {
    const char* b = nullptr;
    for (const char* n : names)
      if (r.count(n) && (!b || r.at(n) < r.at(b))) b = n;
    return b;
  };
  auto fig = [&](const char* n, i64 by) {
    char s[64];
    std::snprintf(s, sizeof s, "%.3f ms, %.2f GB/s", r.at(n) / 1e6, static_cast<double>(by) / r.at(n));
    return std::string(s);
  };
  std::printf("\n| case | strata | time, GB/s | best hand | time, GB/s | vs hand | best libtorch | time | vs libtorch "
              "| NumPy | targets |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  int missed = 0;
  for (const table_case& c : cases)
    for (const char* sn : c.strata) {
      if (!r.count(sn)) continue;
      const char *h = best(c.hand), *t = best(c.torch), *np = best(c.numpy);
      const double vs_hand = h ? r.at(h) / r.at(sn) : 0, vs_torch = t ? r.at(t) / r.at(sn) : 0;
      std::string targets;
      if (sn == c.strata.front()) {
        auto judge = [&](double want, double got, const char* what) {
          if (want <= 0 || got <= 0) return;
          char s[96];
          std::snprintf(s, sizeof s, "%s>= %.1fx %s: %s", targets.empty() ? "" : "; ", want, what, got >= want ? "ok" : "MISSED");
          missed += got < want;
          targets += s;
        };
        judge(c.want_hand, vs_hand, "hand");
        judge(c.want_torch, vs_torch, "libtorch");
      }
      std::printf("| %s | %s | %s | %s | %s | %.2fx | %s | %s | %.2fx | %s | %s |\n", c.key, sn, fig(sn, c.bytes).c_str(),
                  h ? h : "", h ? fig(h, c.bytes).c_str() : "", vs_hand, t ? t : "", t ? fig(t, c.bytes).c_str() : "",
                  vs_torch, np ? fig(np, c.bytes).c_str() : "", targets.c_str());
    }
  std::printf("\ntargets missed: %d (ratios: the other's time / strata's, CPU times; GB/s: 1e9 bytes)\n", missed);
}
}  // namespace

BENCHMARK(SM_strata_assign)->Unit(benchmark::kMillisecond);
BENCHMARK(SM_strata_fresh)->Unit(benchmark::kMillisecond);
#if defined(__AVX2__)
#if defined(__AVX512F__)
BENCHMARK(SM_hand_sleef512)->Unit(benchmark::kMillisecond);
BENCHMARK(LSM_hand_sleef512)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(SM_hand_sleef256)->Unit(benchmark::kMillisecond);
BENCHMARK(SM_hand_libm)->Unit(benchmark::kMillisecond);
BENCHMARK(LSM_hand_sleef256)->Unit(benchmark::kMillisecond);
BENCHMARK(LSM_hand_libm)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(LSM_strata_assign)->Unit(benchmark::kMillisecond);
BENCHMARK(LSM_strata_fresh)->Unit(benchmark::kMillisecond);
BENCHMARK(VR_strata_assign)->Unit(benchmark::kMillisecond);
BENCHMARK(VR_strata_fresh)->Unit(benchmark::kMillisecond);
BENCHMARK(VR_hand)->Unit(benchmark::kMillisecond);
BENCHMARK(VC_strata_assign)->Unit(benchmark::kMillisecond);
BENCHMARK(VC_strata_fresh)->Unit(benchmark::kMillisecond);
BENCHMARK(VC_hand_one_pass)->Unit(benchmark::kMillisecond);
BENCHMARK(VC_hand_two_pass)->Unit(benchmark::kMillisecond);
BENCHMARK(AM_strata_fresh)->Unit(benchmark::kMillisecond);
BENCHMARK(AM_hand)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  // --no_torch and --no_python are ours; --benchmark_repetitions (5 unless given) and
  // --benchmark_min_time are passed on to torch_bench and the NumPy script.
  bool torch = true, python = true, aggregates = false;
  std::string reps, min_time;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--no_torch") { torch = false; continue; }
    if (a == "--no_python") { python = false; continue; }
    if (a.rfind("--benchmark_repetitions=", 0) == 0) reps = std::string(a.substr(24));
    if (a.rfind("--benchmark_min_time=", 0) == 0) min_time = std::string(a.substr(21));
    if (a.rfind("--benchmark_report_aggregates_only", 0) == 0) aggregates = true;
    args.push_back(argv[i]);
  }
  static char five[] = "--benchmark_repetitions=5", agg[] = "--benchmark_report_aggregates_only=true";
  if (reps.empty()) reps = "5", args.push_back(five);
  if (!aggregates) args.push_back(agg);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  strata::set_num_threads(1);
  if (!check_hand_loops()) return 1;
  recording_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  results all = rep.times;
  if (torch) run_torch(argv[0], reps, min_time, all);
  if (python) run_python(reps, min_time, all);
  print_table(all);
  return 0;
}
