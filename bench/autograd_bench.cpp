// SPDX-License-Identifier: MIT
// Autograd benchmarks: forward + backward through strata's autograd beside hand-derived
// gradient loops doing the same work in the same binary, one thread, and (when CMake found
// Torch) libtorch's autograd on the same cases, run from the sibling binary
// torch_autograd_bench, once as installed and once with glibc's malloc asking for huge pages
// (the *_thp figures: otherwise page faults are most of libtorch's AG1 time). After the runs
// this binary prints each strata case's ratio to the hand loops and to libtorch; before them,
// once, it checks every gradient against the analytic one and measures the peak extra memory
// of a backward pass.
//
//   AG1  loss = sum(r * r), r = (a*b + c*d - e) * 0.5, five inputs of 2^24 floats
//   AG2  y = sum(tanh(exp(-a) * sigmoid(b) + log1p(c * c)) * sin(a)), three inputs of 2^22
//        floats: a tree of 10 element-wise ops, 5 of them transcendental
//
// Bytes counted (bytes_per_second, a kIsRate counter): the minimal traffic of a forward pass
// followed by a backward pass, each element read or written once: the forward reads the
// inputs, the backward reads them again and writes one gradient each (AG1: 15 x 64 MiB,
// AG2: 9 x 16 MiB). Every variant of a case counts the same bytes, so ratios of GB/s are
// ratios of time.
//
// Gradients between iterations: they accumulate (no set-to-none exists in strata; the
// accumulation is in place, no allocation), and the hand loops accumulate too (g += ..., so
// they also read each gradient). AG1_strata_zero_grad adds strata::zero_grad before each
// backward, for the cost of that reset. Timed on the wall clock (UseRealTime), as a backward
// pass may hand work to other threads; the ratio table also gives CPU-time ratios.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

#include "hand_kernels.hpp"
import strata;

namespace {
using i64 = std::int64_t;
constexpr i64 N = i64{1} << 24;   // AG1
constexpr i64 N2 = i64{1} << 22;  // AG2

strata::Tensor<float> filled(i64 n, double base) {
  auto t = strata::empty<float>({n});
  float* p = t.data_ptr();
  for (i64 i = 0; i < n; ++i) p[i] = static_cast<float>(base + static_cast<double>(i % 1000) * 1e-3);
  return t;
}
// A leaf the gradient flows to.
strata::Tensor<float> leaf(i64 n, double base) { return filled(n, base).requires_grad_(); }

void bytes(benchmark::State& s, i64 per_iter) {
  s.SetBytesProcessed(static_cast<i64>(s.iterations()) * per_iter);
}
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
// One warm-up call (the first backward allocates the gradients, later ones add into them),
// then the timed calls; "faults" counts the page faults an iteration takes (a fresh
// allocation that the allocator did not keep shows up here).
template <class F>
void loop(benchmark::State& s, F run) {
  run();
  const long f0 = minor_faults();
  for (auto _ : s) run();
  s.counters["faults"] =
      benchmark::Counter(static_cast<double>(minor_faults() - f0), benchmark::Counter::kAvgIterations);
}

struct threads_guard {
  explicit threads_guard(int n) { strata::set_num_threads(n); }
  ~threads_guard() { strata::set_num_threads(1); }
};

// ---- the hand-derived loops (plain C++ on raw pointers; checked in check_gradients) ----
// With r = (a*b + c*d - e) * 0.5 and loss = sum(r^2): dloss/dr = 2r, dr/da = 0.5 b, ..., so
// with the incoming gradient g: ga = r b g, gb = r a g, gc = r d g, gd = r c g, ge = -r g.
namespace hand_ag {
using hand::vec;
using hand::W;

// Forward: four vector accumulators (the FMA latency hidden), a scalar tail.
float ag1_forward(const float* __restrict a, const float* __restrict b, const float* __restrict c,
                  const float* __restrict d, const float* __restrict e, i64 n) {
  const vec half = hand::vset1(0.5f);
  vec acc[4] = {hand::vzero(), hand::vzero(), hand::vzero(), hand::vzero()};
  i64 i = 0;
  for (; i + 4 * W <= n; i += 4 * W)
    for (int q = 0; q < 4; ++q) {
      const i64 k = i + q * W;
      const vec r = (hand::vload(a + k) * hand::vload(b + k) + hand::vload(c + k) * hand::vload(d + k) -
                     hand::vload(e + k)) * half;
      acc[q] = hand::vfmadd(r, r, acc[q]);
    }
  float t = hand::vhsum(hand::vadd(hand::vadd(acc[0], acc[1]), hand::vadd(acc[2], acc[3])));
  for (; i < n; ++i) {
    const float r = (a[i] * b[i] + c[i] * d[i] - e[i]) * 0.5f;
    t += r * r;
  }
  return t;
}
// Backward: one pass adding all five gradients (the compiler vectorises it: every pointer
// __restrict, no reduction).
void ag1_backward(const float* __restrict a, const float* __restrict b, const float* __restrict c,
                  const float* __restrict d, const float* __restrict e, float g, float* __restrict ga,
                  float* __restrict gb, float* __restrict gc, float* __restrict gd, float* __restrict ge, i64 n) {
  for (i64 i = 0; i < n; ++i) {
    const float dr = (a[i] * b[i] + c[i] * d[i] - e[i]) * 0.5f * g;  // 2r * 0.5 * g
    ga[i] += dr * b[i];
    gb[i] += dr * a[i];
    gc[i] += dr * d[i];
    gd[i] += dr * c[i];
    ge[i] -= dr;
  }
}
// Both in one pass: the gradient of a sum does not depend on the sum's value (g = 1 is known
// before the loss is), so the inputs can be read once. A tape cannot do this (backward starts
// after the forward has finished); it bounds what any autograd could reach.
float ag1_one_pass(const float* __restrict a, const float* __restrict b, const float* __restrict c,
                   const float* __restrict d, const float* __restrict e, float* __restrict ga,
                   float* __restrict gb, float* __restrict gc, float* __restrict gd, float* __restrict ge, i64 n) {
  const vec half = hand::vset1(0.5f);
  vec acc[2] = {hand::vzero(), hand::vzero()};
  i64 i = 0;
  for (; i + 2 * W <= n; i += 2 * W)
    for (int q = 0; q < 2; ++q) {
      const i64 k = i + q * W;
      const vec va = hand::vload(a + k), vb = hand::vload(b + k), vc = hand::vload(c + k), vd = hand::vload(d + k);
      const vec r = (va * vb + vc * vd - hand::vload(e + k)) * half;
      acc[q] = hand::vfmadd(r, r, acc[q]);
      hand::vstore(ga + k, hand::vfmadd(r, vb, hand::vload(ga + k)));
      hand::vstore(gb + k, hand::vfmadd(r, va, hand::vload(gb + k)));
      hand::vstore(gc + k, hand::vfmadd(r, vd, hand::vload(gc + k)));
      hand::vstore(gd + k, hand::vfmadd(r, vc, hand::vload(gd + k)));
      hand::vstore(ge + k, hand::vload(ge + k) - r);
    }
  float t = hand::vhsum(hand::vadd(acc[0], acc[1]));
  for (; i < n; ++i) {
    const float r = (a[i] * b[i] + c[i] * d[i] - e[i]) * 0.5f;
    t += r * r;
    ga[i] += r * b[i];
    gb[i] += r * a[i];
    gc[i] += r * d[i];
    gd[i] += r * c[i];
    ge[i] -= r;
  }
  return t;
}

// AG2, with u = exp(-a), v = sigmoid(b), w = log1p(c^2), t = tanh(u v + w), s = sin(a),
// y = sum(t s): dz = g s (1 - t^2) for z = u v + w, then
//   ga = g t cos(a) - dz u v,   gb = dz u v (1 - v),   gc = dz 2c / (1 + c^2).
// Scalar libm for the tails (and the whole job without libmvec).
float ag2_forward_scalar(const float* a, const float* b, const float* c, i64 i0, i64 n) {
  float t = 0;
  for (i64 i = i0; i < n; ++i) {
    const float v = 1.0f / (1.0f + std::exp(-b[i]));
    t += std::tanh(std::exp(-a[i]) * v + std::log1p(c[i] * c[i])) * std::sin(a[i]);
  }
  return t;
}
void ag2_backward_scalar(const float* a, const float* b, const float* c, float g, float* ga, float* gb, float* gc,
                         i64 i0, i64 n) {
  for (i64 i = i0; i < n; ++i) {
    const float u = std::exp(-a[i]), v = 1.0f / (1.0f + std::exp(-b[i])), c2 = c[i] * c[i];
    const float t = std::tanh(u * v + std::log1p(c2)), s = std::sin(a[i]);
    const float dz = g * s * (1.0f - t * t), duv = dz * u * v;
    ga[i] += g * t * std::cos(a[i]) - duv;
    gb[i] += duv * (1.0f - v);
    gc[i] += dz * 2.0f * c[i] / (1.0f + c2);
  }
}
#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
}  // namespace hand_ag
// glibc's vector functions (libmvec), 16 (AVX-512) or 8 (AVX2) lanes a call.
#if defined(__AVX512F__)
extern "C" __m512 _ZGVeN16v_expf(__m512);
extern "C" __m512 _ZGVeN16v_tanhf(__m512);
extern "C" __m512 _ZGVeN16v_log1pf(__m512);
extern "C" __m512 _ZGVeN16v_sinf(__m512);
extern "C" __m512 _ZGVeN16v_cosf(__m512);
namespace hand_ag {
inline hand::vec vexp(hand::vec x) { return _ZGVeN16v_expf(x); }
inline hand::vec vtanh(hand::vec x) { return _ZGVeN16v_tanhf(x); }
inline hand::vec vlog1p(hand::vec x) { return _ZGVeN16v_log1pf(x); }
inline hand::vec vsin(hand::vec x) { return _ZGVeN16v_sinf(x); }
inline hand::vec vcos(hand::vec x) { return _ZGVeN16v_cosf(x); }
#else
extern "C" __m256 _ZGVdN8v_expf(__m256);
extern "C" __m256 _ZGVdN8v_tanhf(__m256);
extern "C" __m256 _ZGVdN8v_log1pf(__m256);
extern "C" __m256 _ZGVdN8v_sinf(__m256);
extern "C" __m256 _ZGVdN8v_cosf(__m256);
namespace hand_ag {
inline hand::vec vexp(hand::vec x) { return _ZGVdN8v_expf(x); }
inline hand::vec vtanh(hand::vec x) { return _ZGVdN8v_tanhf(x); }
inline hand::vec vlog1p(hand::vec x) { return _ZGVdN8v_log1pf(x); }
inline hand::vec vsin(hand::vec x) { return _ZGVdN8v_sinf(x); }
inline hand::vec vcos(hand::vec x) { return _ZGVdN8v_cosf(x); }
#endif
constexpr bool ag2_vectorised = true;
// Forward and backward as two passes of libmvec calls (5 in the forward, 6 in the backward:
// the backward recomputes u, v, w, t, s rather than storing them, as strata does).
float ag2_forward(const float* __restrict a, const float* __restrict b, const float* __restrict c, i64 n) {
  const vec one = hand::vset1(1.0f);
  vec acc = hand::vzero();
  i64 i = 0;
  for (; i + W <= n; i += W) {
    const vec va = hand::vload(a + i), vc = hand::vload(c + i);
    const vec v = one / (one + vexp(-hand::vload(b + i)));
    acc = hand::vfmadd(vtanh(vexp(-va) * v + vlog1p(vc * vc)), vsin(va), acc);
  }
  return hand::vhsum(acc) + ag2_forward_scalar(a, b, c, i, n);
}
void ag2_backward(const float* __restrict a, const float* __restrict b, const float* __restrict c, float g,
                  float* __restrict ga, float* __restrict gb, float* __restrict gc, i64 n) {
  const vec one = hand::vset1(1.0f), two = hand::vset1(2.0f), vg = hand::vset1(g);
  i64 i = 0;
  for (; i + W <= n; i += W) {
    const vec va = hand::vload(a + i), vc = hand::vload(c + i), c2 = vc * vc;
    const vec u = vexp(-va), v = one / (one + vexp(-hand::vload(b + i)));
    const vec t = vtanh(u * v + vlog1p(c2)), s = vsin(va);
    const vec dz = vg * s * (one - t * t), duv = dz * u * v;
    hand::vstore(ga + i, hand::vload(ga + i) + vg * t * vcos(va) - duv);
    hand::vstore(gb + i, hand::vload(gb + i) + duv * (one - v));
    hand::vstore(gc + i, hand::vload(gc + i) + dz * two * vc / (one + c2));
  }
  ag2_backward_scalar(a, b, c, g, ga, gb, gc, i, n);
}
#else
constexpr bool ag2_vectorised = false;
float ag2_forward(const float* a, const float* b, const float* c, i64 n) { return ag2_forward_scalar(a, b, c, 0, n); }
void ag2_backward(const float* a, const float* b, const float* c, float g, float* ga, float* gb, float* gc, i64 n) {
  ag2_backward_scalar(a, b, c, g, ga, gb, gc, 0, n);
}
#endif
}  // namespace hand_ag

// The hand loops run on memory allocated the way strata allocates (64-byte aligned, huge
// pages for large blocks), so that the ratios compare loops, not allocators.
struct buf {
  strata::Tensor<float> t;
  buf(i64 n, double base) : t(filled(n, base)) {}
  float* data() const { return t.data_ptr(); }
};

// ---- AG1 ----
// The loss exactly as a user writes it: r appears twice and is computed twice in the fused
// forward loop; autograd must not store it (nor anything else) for the backward.
strata::Tensor<float> ag1_loss(const strata::Tensor<float>& a, const strata::Tensor<float>& b,
                               const strata::Tensor<float>& c, const strata::Tensor<float>& d,
                               const strata::Tensor<float>& e) {
  return strata::sum(((a * b + c * d - e) * 0.5f) * ((a * b + c * d - e) * 0.5f));
}
void AG1_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
  auto run = [&] {
    strata::Tensor<float> L = ag1_loss(a, b, c, d, e);
    L.backward();  // accumulates into a.grad() ... e.grad() in place
    benchmark::DoNotOptimize(L.data_ptr());
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 15 * N * 4);
}
void AG1_strata_zero_grad(benchmark::State& s) {
  threads_guard g(1);
  auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
  auto run = [&] {
    strata::zero_grad(a, b, c, d, e);  // five fills of 64 MiB each, timed
    strata::Tensor<float> L = ag1_loss(a, b, c, d, e);
    L.backward();
    benchmark::DoNotOptimize(L.data_ptr());
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 15 * N * 4);
}
void AG1_strata_forward_only(benchmark::State& s) {  // for scale: the forward alone, nothing recorded
  threads_guard g(1);
  auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
  auto run = [&] {
    strata::no_grad guard;
    strata::Tensor<float> L = ag1_loss(a, b, c, d, e);
    benchmark::DoNotOptimize(L.data_ptr());
  };
  loop(s, run);
  bytes(s, 5 * N * 4);  // what it does: the five inputs read once
}
void AG1_hand(benchmark::State& s) {
  const buf a(N, 1), b(N, 2), c(N, 3), d(N, 4), e(N, 5);
  const buf ga(N, 0), gb(N, 0), gc(N, 0), gd(N, 0), ge(N, 0);
  auto run = [&] {
    float loss = hand_ag::ag1_forward(a.data(), b.data(), c.data(), d.data(), e.data(), N);
    benchmark::DoNotOptimize(loss);
    hand_ag::ag1_backward(a.data(), b.data(), c.data(), d.data(), e.data(), 1.0f, ga.data(), gb.data(), gc.data(),
                          gd.data(), ge.data(), N);
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 15 * N * 4);
}
void AG1_hand_one_pass(benchmark::State& s) {
  const buf a(N, 1), b(N, 2), c(N, 3), d(N, 4), e(N, 5);
  const buf ga(N, 0), gb(N, 0), gc(N, 0), gd(N, 0), ge(N, 0);
  auto run = [&] {
    float loss = hand_ag::ag1_one_pass(a.data(), b.data(), c.data(), d.data(), e.data(), ga.data(), gb.data(),
                                       gc.data(), gd.data(), ge.data(), N);
    benchmark::DoNotOptimize(loss);
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 15 * N * 4);  // the same count as the two-pass cases (it reads the inputs once)
}

// ---- AG2 ----
strata::Tensor<float> ag2_loss(const strata::Tensor<float>& a, const strata::Tensor<float>& b,
                               const strata::Tensor<float>& c) {
  return strata::sum(strata::tanh(strata::exp(-a) * strata::sigmoid(b) + strata::log1p(c * c)) * strata::sin(a));
}
void AG2_strata(benchmark::State& s) {
  threads_guard g(1);
  auto a = leaf(N2, -0.5), b = leaf(N2, -0.5), c = leaf(N2, -0.5);
  auto run = [&] {
    strata::Tensor<float> y = ag2_loss(a, b, c);
    y.backward();
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 9 * N2 * 4);
}
void AG2_strata_forward_only(benchmark::State& s) {  // for scale: the forward alone, nothing recorded
  threads_guard g(1);
  auto a = leaf(N2, -0.5), b = leaf(N2, -0.5), c = leaf(N2, -0.5);
  auto run = [&] {
    strata::no_grad guard;
    strata::Tensor<float> y = ag2_loss(a, b, c);
    benchmark::DoNotOptimize(y.data_ptr());
  };
  loop(s, run);
  bytes(s, 3 * N2 * 4);  // what it does: the three inputs read once
}
void AG2_hand(benchmark::State& s) {  // libmvec when CMake found it, else scalar libm
  const buf a(N2, -0.5), b(N2, -0.5), c(N2, -0.5), ga(N2, 0), gb(N2, 0), gc(N2, 0);
  auto run = [&] {
    float y = hand_ag::ag2_forward(a.data(), b.data(), c.data(), N2);
    benchmark::DoNotOptimize(y);
    hand_ag::ag2_backward(a.data(), b.data(), c.data(), 1.0f, ga.data(), gb.data(), gc.data(), N2);
    benchmark::ClobberMemory();
  };
  loop(s, run);
  bytes(s, 9 * N2 * 4);
}
}  // namespace

BENCHMARK(AG1_hand)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG1_hand_one_pass)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG1_strata)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG1_strata_zero_grad)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG1_strata_forward_only)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG2_hand)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG2_strata)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AG2_strata_forward_only)->Unit(benchmark::kMillisecond)->UseRealTime();

namespace {
// ---- once, before the runs: every gradient checked against the analytic one ----
// Small odd sizes (vector bodies and scalar tails), values as in the runs; double references.
bool close(const char* what, const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1e-3 + std::abs(want[i])));
  const bool ok = got.size() == want.size() && worst < 1e-4;
  if (!ok) std::printf("check %s: worst relative error %.3g (%zu of %zu elements)  MISMATCH\n", what, worst,
                       got.size(), want.size());
  return ok;
}
bool check_gradients() {
  constexpr i64 n = 4099;
  bool ok = true;
  {  // AG1, twice: the second backward must add the same gradients again
    auto a = leaf(n, 1), b = leaf(n, 2), c = leaf(n, 3), d = leaf(n, 4), e = leaf(n, 5);
    const float* p[5] = {a.data_ptr(), b.data_ptr(), c.data_ptr(), d.data_ptr(), e.data_ptr()};
    std::vector<double> want[5];
    double loss = 0;
    for (i64 i = 0; i < n; ++i) {
      const double r = (double{p[0][i]} * p[1][i] + double{p[2][i]} * p[3][i] - p[4][i]) * 0.5;
      loss += r * r;
      const double grad[5] = {r * p[1][i], r * p[0][i], r * p[3][i], r * p[2][i], -r};  // 2r * dr/dx
      for (int k = 0; k < 5; ++k) want[k].push_back(grad[k]);
    }
    strata::Tensor<float> L = ag1_loss(a, b, c, d, e);
    L.backward();
    ok &= close("AG1 loss", {L.item()}, {loss});
    const char* names[5] = {"AG1 a.grad()", "AG1 b.grad()", "AG1 c.grad()", "AG1 d.grad()", "AG1 e.grad()"};
    const strata::Tensor<float>* leaves[5] = {&a, &b, &c, &d, &e};
    for (int k = 0; k < 5; ++k) ok &= close(names[k], leaves[k]->grad().to_vector(), want[k]);
    strata::Tensor<float> L2 = ag1_loss(a, b, c, d, e);
    L2.backward();
    for (int k = 0; k < 5; ++k) {
      std::vector<double> twice = want[k];
      for (double& x : twice) x *= 2;
      ok &= close(names[k], leaves[k]->grad().to_vector(), twice);
    }
    // The hand loops, on the same data.
    std::vector<float> g[5], h[5];
    for (int k = 0; k < 5; ++k) g[k].assign(n, 0.0f), h[k].assign(n, 0.0f);
    const float fwd = hand_ag::ag1_forward(p[0], p[1], p[2], p[3], p[4], n);
    hand_ag::ag1_backward(p[0], p[1], p[2], p[3], p[4], 1.0f, g[0].data(), g[1].data(), g[2].data(), g[3].data(),
                          g[4].data(), n);
    const float one = hand_ag::ag1_one_pass(p[0], p[1], p[2], p[3], p[4], h[0].data(), h[1].data(), h[2].data(),
                                            h[3].data(), h[4].data(), n);
    ok &= close("AG1_hand loss", {fwd}, {loss}) && close("AG1_hand_one_pass loss", {one}, {loss});
    for (int k = 0; k < 5; ++k) ok &= close("AG1_hand", g[k], want[k]) && close("AG1_hand_one_pass", h[k], want[k]);
  }
  {  // AG2
    auto a = leaf(n, -0.5), b = leaf(n, -0.5), c = leaf(n, -0.5);
    const float *pa = a.data_ptr(), *pb = b.data_ptr(), *pc = c.data_ptr();
    std::vector<double> wa, wb, wc;
    double y = 0;
    for (i64 i = 0; i < n; ++i) {
      const double u = std::exp(-double{pa[i]}), v = 1 / (1 + std::exp(-double{pb[i]})), c2 = double{pc[i]} * pc[i];
      const double t = std::tanh(u * v + std::log1p(c2)), s = std::sin(double{pa[i]}), dz = s * (1 - t * t);
      y += t * s;
      wa.push_back(t * std::cos(double{pa[i]}) - dz * u * v);
      wb.push_back(dz * u * v * (1 - v));
      wc.push_back(dz * 2 * pc[i] / (1 + c2));
    }
    strata::Tensor<float> Y = ag2_loss(a, b, c);
    Y.backward();
    ok &= close("AG2 y", {Y.item()}, {y});
    ok &= close("AG2 a.grad()", a.grad().to_vector(), wa) && close("AG2 b.grad()", b.grad().to_vector(), wb) &&
          close("AG2 c.grad()", c.grad().to_vector(), wc);
    std::vector<float> ga(n, 0.0f), gb(n, 0.0f), gc(n, 0.0f);
    ok &= close("AG2_hand y", {hand_ag::ag2_forward(pa, pb, pc, n)}, {y});
    hand_ag::ag2_backward(pa, pb, pc, 1.0f, ga.data(), gb.data(), gc.data(), n);
    ok &= close("AG2_hand a", ga, wa) && close("AG2_hand b", gb, wb) && close("AG2_hand c", gc, wc);
  }
  std::printf("check: strata's and the hand loops' gradients against analytic ones in double: %s\n",
              ok ? "ok" : "MISMATCH");
  return ok;
}

// ---- once, before the runs: the peak extra memory of a backward pass ----
// strata allocates through its own aligned allocator (with a cache of freed large blocks),
// so heap counters miss it: the figure is resident memory from /proc/self/status. The peak
// (VmHWM) is reset to the current RSS just before backward() (writing 5 to
// /proc/self/clear_refs), and empty_cache() first releases cached blocks that a backward could
// otherwise reuse unseen. "Peak extra" is VmHWM during backward minus VmRSS before it.
long status_kib(const char* key) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  return -1;
}
bool reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}
struct memory_figure {
  double graph_mib = 0, peak_mib = 0, kept_mib = 0;
};
template <class Forward>
memory_figure backward_memory(Forward forward) {
  strata::empty_cache();
  const long before_fwd = status_kib("VmRSS:");
  strata::Tensor<float> L = forward();
  strata::empty_cache();
  const long before = status_kib("VmRSS:");
  reset_peak();
  L.backward();
  const long peak = status_kib("VmHWM:"), after = status_kib("VmRSS:");
  return {static_cast<double>(before - before_fwd) / 1024, static_cast<double>(peak - before) / 1024,
          static_cast<double>(after - before) / 1024};
}
void report_peak_memory() {
  if (!reset_peak()) {
    std::printf("memory: /proc/self/clear_refs is not writable: no peak figures\n");
    return;
  }
  strata::set_num_threads(1);
  auto print = [](const char* name, const char* when, memory_figure m, double grads_mib) {
    std::printf("memory %s, %s: graph kept by the forward %.0f MiB; backward: peak extra %.0f MiB, kept %.0f MiB; "
                "gradients %.0f MiB; peak extra / gradients %.2f (target <= 1)\n",
                name, when, m.graph_mib, m.peak_mib, m.kept_mib, grads_mib, m.peak_mib / grads_mib);
  };
  {
    auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
    const double grads = 5.0 * N * 4 / (1 << 20);
    auto fwd = [&] { return ag1_loss(a, b, c, d, e); };
    print("AG1", "first backward (allocates the gradients)", backward_memory(fwd), grads);
    print("AG1", "second backward (accumulates)", backward_memory(fwd), grads);
  }
  {
    auto a = leaf(N2, -0.5), b = leaf(N2, -0.5), c = leaf(N2, -0.5);
    const double grads = 3.0 * N2 * 4 / (1 << 20);
    auto fwd = [&] { return ag2_loss(a, b, c); };
    print("AG2", "first backward (allocates the gradients)", backward_memory(fwd), grads);
    print("AG2", "second backward (accumulates)", backward_memory(fwd), grads);
  }
  strata::empty_cache();
  std::fflush(stdout);
}

// ---- after the runs: ratios ----
// Wall-clock and CPU times (ns an iteration) by run name; with --benchmark_repetitions, the
// medians. The CPU time is the steadier figure on a loaded machine (every case runs 1 thread).
struct timing {
  double real = 0, cpu = 0;
};
using results = std::map<std::string, timing>;
class recording_reporter : public benchmark::ConsoleReporter {
 public:
  results times;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      const double to_ns = 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
      times[r.run_name.str()] = {r.GetAdjustedRealTime() * to_ns, r.GetAdjustedCPUTime() * to_ns};
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// Runs torch_autograd_bench (beside this binary) with CSV output: its name,iterations,
// real_time,cpu_time,time_unit,bytes_per_second,...,"faults" rows give times and are printed
// as a table; other lines (its memory report) are echoed. env, when not empty, prefixes the
// command (VAR=value) and suffix is appended to the case names.
results run_torch(const std::string& self, const std::vector<std::string>& forwarded, const std::string& env,
                  const std::string& suffix, results out) {
  const std::string dir = self.substr(0, self.find_last_of('/') + 1);
  const std::string path = (dir.empty() ? std::string("./") : dir) + "torch_autograd_bench";
  if (std::FILE* f = std::fopen(path.c_str(), "r")) std::fclose(f);
  else {
    std::printf("\n%s not built: no libtorch figures\n", path.c_str());
    return out;
  }
  std::string cmd = (env.empty() ? "" : env + " ") + "'" + path + "' --benchmark_format=csv";
  for (const std::string& a : forwarded) cmd += " '" + a + "'";
  std::printf("\nrunning %s\n", cmd.c_str());
  std::fflush(stdout);
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  auto fields = [](std::string_view l) {
    std::vector<std::string> f;
    std::size_t start = 0;
    for (std::size_t k = 0; k <= l.size(); ++k)
      if (k == l.size() || l[k] == ',' || l[k] == '\n') f.emplace_back(l.substr(start, k - start)), start = k + 1;
    return f;
  };
  std::size_t gbs = 0, faults = 0;  // columns of bytes_per_second and "faults"
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string_view l(line);
    if (l.rfind("name,", 0) == 0) {
      const auto h = fields(l);
      for (std::size_t k = 0; k < h.size(); ++k) {
        if (h[k] == "bytes_per_second") gbs = k;
        if (h[k] == "\"faults\"") faults = k;
      }
      std::printf("%-34s %10s %10s %10s %8s\n", "libtorch", "real ms", "cpu ms", "GB/s", "faults");
      continue;
    }
    if (l.rfind("\"torch_", 0) != 0) {
      std::fputs(line, stdout);
      continue;
    }
    const auto f = fields(l);
    if (f.size() < 5) continue;
    const std::string name = f[0].substr(1, f[0].size() - 2);
    const std::string unit = f[4];
    const double scale = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 1e9;
    if (name.find("_mean") != std::string::npos || name.find("_stddev") != std::string::npos ||
        name.find("_cv") != std::string::npos)
      continue;
    std::string key = name;
    key.insert(key.find('/'), suffix);
    if (const auto m = key.find("_median"); m != std::string::npos) key.erase(m);
    out[key] = {std::atof(f[2].c_str()) * scale, std::atof(f[3].c_str()) * scale};
    auto column = [&](std::size_t k) { return k && k < f.size() ? std::atof(f[k].c_str()) : 0.0; };
    std::printf("%-34s %10.1f %10.1f %10.2f %8.0f\n", key.c_str(), out[key].real / 1e6, out[key].cpu / 1e6,
                column(gbs) / 1e9, column(faults));
  }
  if (pclose(p) != 0) std::printf("torch_autograd_bench failed\n");
  return out;
}

void print_ratios(const results& r, const results& torch) {
  const std::string rt = "/real_time";
  struct target { std::string name, ref; double want; const char* note; };
  const target targets[] = {
      {"AG1_strata", "AG1_hand", 0.7, "the two-pass hand loop"},
      {"AG1_strata", "AG1_hand_one_pass", 0, "for information: the one-pass bound"},
      {"AG1_strata_zero_grad", "AG1_hand", 0, "for information"},
      {"AG1_strata", "torch_AG1", 5.0, "libtorch, grads set to undefined"},
      {"AG1_strata", "torch_AG1_thp", 5.0, "libtorch, huge-page malloc, grads set to undefined"},
      {"AG1_strata", "torch_AG1_accumulate", 0, "for information: libtorch, grads accumulating"},
      {"AG1_strata", "torch_AG1_accumulate_thp", 0, "for information: huge-page malloc, grads accumulating"},
      {"AG2_strata", "AG2_hand", 0, hand_ag::ag2_vectorised ? "for information: libmvec hand loop"
                                                            : "for information: scalar libm hand loop"},
      {"AG2_strata", "torch_AG2", 0, "for information: libtorch, grads set to undefined"},
      {"AG2_strata", "torch_AG2_thp", 0, "for information: libtorch, huge-page malloc"},
  };
  std::printf("\n| strata case | reference | time (cpu) | reference time (cpu) | speed ratio (cpu) | target |\n"
              "|---|---|---|---|---|---|\n");
  for (const target& t : targets) {
    auto find = [&](const std::string& n) -> const timing* {
      for (const results* m : {&r, &torch})
        if (auto it = m->find(n + rt); it != m->end()) return &it->second;
      return nullptr;
    };
    const timing *a = find(t.name), *b = find(t.ref);
    if (!a || !b) continue;
    // The same bytes counted: a GB/s ratio is an inverse time ratio. A target is judged on CPU
    // time (1 thread everywhere), which a machine shared with other jobs disturbs least.
    const double ratio = b->real / a->real, cpu_ratio = b->cpu / a->cpu;
    char want[96];
    if (t.want > 0)
      std::snprintf(want, sizeof want, ">= %.1fx (%s): %s", t.want, t.note, cpu_ratio >= t.want ? "ok" : "MISSED");
    else std::snprintf(want, sizeof want, "%s", t.note);
    std::printf("| %s | %s | %.2f ms (%.2f) | %.2f ms (%.2f) | %.2fx (%.2fx) | %s |\n", t.name.c_str(), t.ref.c_str(),
                a->real / 1e6, a->cpu / 1e6, b->real / 1e6, b->cpu / 1e6, ratio, cpu_ratio, want);
  }
}
}  // namespace

int main(int argc, char** argv) {
  // --no_torch (ours) skips libtorch; --benchmark_min_time, _repetitions,
  // _report_aggregates_only and _filter (which matches torch_AG1... as it matches AG1...) are
  // passed on to torch_autograd_bench.
  bool torch = true;
  std::vector<std::string> forwarded;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--no_torch") {
      torch = false;
      continue;
    }
    if (a.rfind("--benchmark_min_time=", 0) == 0 || a.rfind("--benchmark_repetitions=", 0) == 0 ||
        a.rfind("--benchmark_report_aggregates_only=", 0) == 0 || a.rfind("--benchmark_filter=", 0) == 0)
      forwarded.emplace_back(a);
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  if (!check_gradients()) return 1;  // a benchmark of wrong gradients measures nothing
  report_peak_memory();
  recording_reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  results torch_times;
  if (torch) {
    // libtorch as installed (glibc's malloc maps each block over 32 MiB afresh, in 4 KiB pages
    // when THP is "madvise"), then with glibc >= 2.35's tunable that lets malloc ask for
    // transparent huge pages: libtorch's best figure known here (strata's own allocator keeps
    // large blocks and asks for huge pages).
    torch_times = run_torch(argv[0], forwarded, "", "", {});
    torch_times = run_torch(argv[0], forwarded, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1", "_thp", torch_times);
  }
  print_ratios(rep.times, torch_times);
  return 0;
}
