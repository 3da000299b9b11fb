// SPDX-License-Identifier: MIT
// The array loops over SLEEF's vector functions, one table per x86 ISA. Each table is built in
// a translation unit compiled for its ISA (src/vmath_avx512.cpp, vmath_avx2.cpp,
// vmath_sse4.cpp): clang chooses how a __m256 argument is passed from the unit's ISA, not from
// a function's target attribute, and SLEEF takes its vectors in registers. Before this split
// a baseline build passed them in memory and got pow(e, x) back at -O0 (at -O1 the registers
// held the right values by chance).
#pragma once
#include <cstdint>
#include <cstring>

#include "vmath.hpp"

namespace strata::detail {
using f32_fn = void (*)(const float*, float*, std::int64_t);
using f64_fn = void (*)(const double*, double*, std::int64_t);
using f32_pow = void (*)(const float*, const float*, float*, std::int64_t);
using f64_pow = void (*)(const double*, const double*, double*, std::int64_t);

/// One ISA's loops, indexed by vfn; empty (null) where the CPU has no vector math.
struct vmath_table {
  f32_fn f32[static_cast<int>(vfn::count)] = {};
  f64_fn f64[static_cast<int>(vfn::count)] = {};
  f32_pow pf = nullptr;
  f64_pow pd = nullptr;
};

/// The AVX-512 loops; call only on a CPU with AVX-512F.
vmath_table vmath_avx512();
/// The AVX2 loops; call only on a CPU with AVX2 and FMA.
vmath_table vmath_avx2();
/// The SSE4.1 loops; call only on a CPU with SSE4.1.
vmath_table vmath_sse4();
}  // namespace strata::detail

// The loops themselves, for the translation units that define a table (after <sleef.h>).
// Internal linkage: no ISA's copy can be merged by the linker into another's callers.
#ifdef STRATA_VMATH_ISA_UNIT
namespace strata::detail {
namespace {
/// y = F(x...) over n elements, F one of SLEEF's functions of V (declared to return const V):
/// whole vectors, then the tail through padded vectors (so every element gets the same
/// accuracy).
template <class T, class V, auto F, class... X>
void vloop_of(T* y, std::int64_t n, const X*... x) {
  constexpr std::int64_t w = sizeof(V) / sizeof(T);
  std::int64_t i = 0;
  const auto whole = [&](const T* p) {
    V v;
    std::memcpy(&v, p + i, sizeof v);
    return v;
  };
  for (; i + w <= n; i += w) {
    const V r = F(whole(x)...);
    std::memcpy(y + i, &r, sizeof r);
  }
  if (i < n) {
    const auto rest = static_cast<std::size_t>(n - i) * sizeof(T);
    const auto padded = [&](const T* p) {
      T buf[w] = {};
      std::memcpy(buf, p + i, rest);
      V v;
      std::memcpy(&v, buf, sizeof v);
      return v;
    };
    const V r = F(padded(x)...);
    T buf[w];
    std::memcpy(buf, &r, sizeof buf);
    std::memcpy(y + i, buf, rest);
  }
}
/// y = F(x) over n elements.
template <class T, class V, auto F>
void vloop(const T* x, T* y, std::int64_t n) {
  vloop_of<T, V, F>(y, n, x);
}
/// y = F(x, e) over n elements.
template <class T, class V, auto F>
void vpow_loop(const T* x, const T* e, T* y, std::int64_t n) {
  vloop_of<T, V, F>(y, n, x, e);
}
}  // namespace
}  // namespace strata::detail

// SLEEF's 1.0-ulp entry point for function F, precision P (f, d), W lanes, ISA.
#define STRATA_SLEEF(F, P, W, ISA) Sleef_##F##P##W##_u10##ISA
// The loops of one precision, in vfn's order.
#define STRATA_VMATH_ROW(T, V, P, W, ISA)                                                    \
  {&vloop<T, V, STRATA_SLEEF(exp, P, W, ISA)>,   &vloop<T, V, STRATA_SLEEF(expm1, P, W, ISA)>, \
   &vloop<T, V, STRATA_SLEEF(log, P, W, ISA)>,   &vloop<T, V, STRATA_SLEEF(log1p, P, W, ISA)>, \
   &vloop<T, V, STRATA_SLEEF(sin, P, W, ISA)>,   &vloop<T, V, STRATA_SLEEF(cos, P, W, ISA)>,   \
   &vloop<T, V, STRATA_SLEEF(tan, P, W, ISA)>,   &vloop<T, V, STRATA_SLEEF(tanh, P, W, ISA)>}
// Defines the table function NAME for ISA: float vectors VF of WF lanes, double VD of WD.
#define STRATA_VMATH_TABLE(NAME, ISA, VF, WF, VD, WD)                                         \
  strata::detail::vmath_table strata::detail::NAME() {                                         \
    return vmath_table{STRATA_VMATH_ROW(float, VF, f, WF, ISA), STRATA_VMATH_ROW(double, VD, d, WD, ISA), \
                       &vpow_loop<float, VF, STRATA_SLEEF(pow, f, WF, ISA)>,                   \
                       &vpow_loop<double, VD, STRATA_SLEEF(pow, d, WD, ISA)>};                 \
  }
#endif
