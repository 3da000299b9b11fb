// SPDX-License-Identifier: MIT
// Vector math on SLEEF (what PyTorch uses): the widest variant the running CPU supports is
// chosen once, so a library built for baseline x86-64 still runs AVX-512 math where it can.
// A plain translation unit: the vector types appear only in functions compiled for their ISA.
#include "vmath.hpp"

#include <cmath>
#include <cstring>
#include <immintrin.h>

// SLEEF's header declares a width only when the translation unit is compiled for it; these
// are the entry points of libsleef 3.5 (u10: at most 1.0 ulp).
extern "C" {
// Each is declared for the ISA it was built for, which is also the ABI its vectors pass in.
#define STRATA_AVX512 __attribute__((target("avx512f")))
#define STRATA_AVX2 __attribute__((target("avx2,fma")))
#define STRATA_SSE4 __attribute__((target("sse4.1")))
#define STRATA_SLEEF_DECLARE(F)                                                   \
  STRATA_AVX512 __m512 Sleef_##F##f16_u10avx512f(__m512);                         \
  STRATA_AVX2 __m256 Sleef_##F##f8_u10avx2(__m256);                               \
  STRATA_SSE4 __m128 Sleef_##F##f4_u10sse4(__m128);                               \
  STRATA_AVX512 __m512d Sleef_##F##d8_u10avx512f(__m512d);                        \
  STRATA_AVX2 __m256d Sleef_##F##d4_u10avx2(__m256d);                             \
  STRATA_SSE4 __m128d Sleef_##F##d2_u10sse4(__m128d);
STRATA_SLEEF_DECLARE(exp)
STRATA_SLEEF_DECLARE(expm1)
STRATA_SLEEF_DECLARE(log)
STRATA_SLEEF_DECLARE(log1p)
STRATA_SLEEF_DECLARE(sin)
STRATA_SLEEF_DECLARE(cos)
STRATA_SLEEF_DECLARE(tan)
STRATA_SLEEF_DECLARE(tanh)
#undef STRATA_SLEEF_DECLARE
STRATA_AVX512 __m512 Sleef_powf16_u10avx512f(__m512, __m512);
STRATA_AVX2 __m256 Sleef_powf8_u10avx2(__m256, __m256);
STRATA_SSE4 __m128 Sleef_powf4_u10sse4(__m128, __m128);
STRATA_AVX512 __m512d Sleef_powd8_u10avx512f(__m512d, __m512d);
STRATA_AVX2 __m256d Sleef_powd4_u10avx2(__m256d, __m256d);
STRATA_SSE4 __m128d Sleef_powd2_u10sse4(__m128d, __m128d);
#undef STRATA_AVX512
#undef STRATA_AVX2
#undef STRATA_SSE4
}

namespace strata::detail {
namespace {
using f32_fn = void (*)(const float*, float*, std::int64_t);
using f64_fn = void (*)(const double*, double*, std::int64_t);
using f32_pow = void (*)(const float*, const float*, float*, std::int64_t);
using f64_pow = void (*)(const double*, const double*, double*, std::int64_t);

// One array loop per (function, width): whole vectors, then the tail through a padded vector
// (so every element gets the same accuracy).
#define STRATA_VLOOP(NAME, T, VT, W, CALL, TARGET)                                  \
  __attribute__((target(TARGET))) void NAME(const T* x, T* y, std::int64_t n) {     \
    std::int64_t i = 0;                                                             \
    VT v;                                                                           \
    for (; i + (W) <= n; i += (W)) {                                                \
      std::memcpy(&v, x + i, sizeof v);                                             \
      v = CALL(v);                                                                  \
      std::memcpy(y + i, &v, sizeof v);                                             \
    }                                                                               \
    if (i < n) {                                                                    \
      T buf[W] = {};                                                                \
      const auto rest = static_cast<std::size_t>(n - i) * sizeof(T);                \
      std::memcpy(buf, x + i, rest);                                                \
      std::memcpy(&v, buf, sizeof v);                                               \
      v = CALL(v);                                                                  \
      std::memcpy(buf, &v, sizeof v);                                               \
      std::memcpy(y + i, buf, rest);                                                \
    }                                                                               \
  }
#define STRATA_VPOW(NAME, T, VT, W, CALL, TARGET)                                                 \
  __attribute__((target(TARGET))) void NAME(const T* x, const T* e, T* y, std::int64_t n) {       \
    std::int64_t i = 0;                                                                           \
    VT v, w;                                                                                      \
    for (; i + (W) <= n; i += (W)) {                                                              \
      std::memcpy(&v, x + i, sizeof v);                                                           \
      std::memcpy(&w, e + i, sizeof w);                                                           \
      v = CALL(v, w);                                                                             \
      std::memcpy(y + i, &v, sizeof v);                                                           \
    }                                                                                             \
    if (i < n) {                                                                                  \
      T a[W] = {}, b[W] = {};                                                                     \
      const auto rest = static_cast<std::size_t>(n - i) * sizeof(T);                              \
      std::memcpy(a, x + i, rest);                                                                \
      std::memcpy(b, e + i, rest);                                                                \
      std::memcpy(&v, a, sizeof v);                                                               \
      std::memcpy(&w, b, sizeof w);                                                               \
      v = CALL(v, w);                                                                             \
      std::memcpy(a, &v, sizeof v);                                                               \
      std::memcpy(y + i, a, rest);                                                                \
    }                                                                                             \
  }

#define STRATA_VFAMILY(F)                                                                         \
  STRATA_VLOOP(F##_f512, float, __m512, 16, Sleef_##F##f16_u10avx512f, "avx512f")                 \
  STRATA_VLOOP(F##_f256, float, __m256, 8, Sleef_##F##f8_u10avx2, "avx2,fma")                     \
  STRATA_VLOOP(F##_f128, float, __m128, 4, Sleef_##F##f4_u10sse4, "sse4.1")                       \
  STRATA_VLOOP(F##_d512, double, __m512d, 8, Sleef_##F##d8_u10avx512f, "avx512f")                 \
  STRATA_VLOOP(F##_d256, double, __m256d, 4, Sleef_##F##d4_u10avx2, "avx2,fma")                   \
  STRATA_VLOOP(F##_d128, double, __m128d, 2, Sleef_##F##d2_u10sse4, "sse4.1")
STRATA_VFAMILY(exp)
STRATA_VFAMILY(expm1)
STRATA_VFAMILY(log)
STRATA_VFAMILY(log1p)
STRATA_VFAMILY(sin)
STRATA_VFAMILY(cos)
STRATA_VFAMILY(tan)
STRATA_VFAMILY(tanh)
#undef STRATA_VFAMILY
STRATA_VPOW(pow_f512, float, __m512, 16, Sleef_powf16_u10avx512f, "avx512f")
STRATA_VPOW(pow_f256, float, __m256, 8, Sleef_powf8_u10avx2, "avx2,fma")
STRATA_VPOW(pow_f128, float, __m128, 4, Sleef_powf4_u10sse4, "sse4.1")
STRATA_VPOW(pow_d512, double, __m512d, 8, Sleef_powd8_u10avx512f, "avx512f")
STRATA_VPOW(pow_d256, double, __m256d, 4, Sleef_powd4_u10avx2, "avx2,fma")
STRATA_VPOW(pow_d128, double, __m128d, 2, Sleef_powd2_u10sse4, "sse4.1")
#undef STRATA_VLOOP
#undef STRATA_VPOW

// Without SSE4.1 (not an x86-64 of this century, but possible): the C library.
template <class T>
T scalar(vfn f, T x) {
  switch (f) {
    case vfn::exp: return std::exp(x);
    case vfn::expm1: return std::expm1(x);
    case vfn::log: return std::log(x);
    case vfn::log1p: return std::log1p(x);
    case vfn::sin: return std::sin(x);
    case vfn::cos: return std::cos(x);
    case vfn::tan: return std::tan(x);
    default: return std::tanh(x);
  }
}

struct table {
  f32_fn f32[static_cast<int>(vfn::count)] = {};
  f64_fn f64[static_cast<int>(vfn::count)] = {};
  f32_pow pf = nullptr;
  f64_pow pd = nullptr;
};

table make_table() {
  table t;
#define STRATA_FILL(SUFFIX_F, SUFFIX_D)                                                               \
  {                                                                                                   \
    const f32_fn f[] = {exp_##SUFFIX_F, expm1_##SUFFIX_F, log_##SUFFIX_F, log1p_##SUFFIX_F,            \
                        sin_##SUFFIX_F, cos_##SUFFIX_F, tan_##SUFFIX_F, tanh_##SUFFIX_F};              \
    const f64_fn d[] = {exp_##SUFFIX_D, expm1_##SUFFIX_D, log_##SUFFIX_D, log1p_##SUFFIX_D,            \
                        sin_##SUFFIX_D, cos_##SUFFIX_D, tan_##SUFFIX_D, tanh_##SUFFIX_D};              \
    for (int k = 0; k < static_cast<int>(vfn::count); ++k) {                                          \
      t.f32[k] = f[k];                                                                                \
      t.f64[k] = d[k];                                                                                \
    }                                                                                                 \
    t.pf = pow_##SUFFIX_F;                                                                            \
    t.pd = pow_##SUFFIX_D;                                                                            \
  }
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    STRATA_FILL(f512, d512)
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    STRATA_FILL(f256, d256)
  } else if (__builtin_cpu_supports("sse4.1")) {
    STRATA_FILL(f128, d128)
  }
#undef STRATA_FILL
  return t;
}

const table& functions() {
  static const table t = make_table();  // initialised once, thread-safely; read-only after
  return t;
}

// SLEEF's edges, patched here for every caller: exp overflows a few input ulps before log(max)
// (a fixed cutoff), and log1p gives inf for huge x. Elements there are rare and take libm.
template <class T>
bool at_edge(vfn f, T x) {
  if (f == vfn::exp) return x > (sizeof(T) == 4 ? T(88.7f) : T(709.78));
  if (f == vfn::log1p) return x > T(18446744073709551616.0);  // 2^64
  return false;
}

template <class T, class Fn>
void run(vfn f, const T* x, T* y, std::int64_t n, Fn fn) {
  if (!fn) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = scalar(f, x[i]);
    return;
  }
  if (f != vfn::exp && f != vfn::log1p) return fn(x, y, n);
  constexpr std::int64_t piece = 512;
  for (std::int64_t c = 0; c < n; c += piece) {  // x may be y: edge inputs are kept first
    const std::int64_t m = n - c < piece ? n - c : piece;
    bool any = false;
    for (std::int64_t i = 0; i < m; ++i) any |= at_edge(f, x[c + i]);
    if (!any) {
      fn(x + c, y + c, m);
      continue;
    }
    T keep[piece];
    for (std::int64_t i = 0; i < m; ++i) keep[i] = x[c + i];
    fn(x + c, y + c, m);
    for (std::int64_t i = 0; i < m; ++i)
      if (at_edge(f, keep[i])) y[c + i] = scalar(f, keep[i]);
  }
}
}  // namespace

void vmath(vfn f, const float* x, float* y, std::int64_t n) { run(f, x, y, n, functions().f32[static_cast<int>(f)]); }
void vmath(vfn f, const double* x, double* y, std::int64_t n) { run(f, x, y, n, functions().f64[static_cast<int>(f)]); }
void vpow(const float* x, const float* e, float* y, std::int64_t n) {
  if (const f32_pow fn = functions().pf) return fn(x, e, y, n);
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::pow(x[i], e[i]);
}
void vpow(const double* x, const double* e, double* y, std::int64_t n) {
  if (const f64_pow fn = functions().pd) return fn(x, e, y, n);
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::pow(x[i], e[i]);
}
}  // namespace strata::detail
