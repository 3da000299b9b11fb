// SPDX-License-Identifier: MIT
// Vector math on SLEEF (what PyTorch uses): the widest variant the running CPU supports is
// chosen once, so a library built for baseline x86-64 still runs AVX-512 math where it can.
// A plain translation unit without vector types: each ISA's loops are in its own unit
// (src/vmath_isa.hpp).
#include <cmath>

#include "vmath_isa.hpp"

namespace strata::detail {
namespace {
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

const vmath_table& functions() {
  static const vmath_table t = [] {  // initialised once, thread-safely; read-only after
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return vmath_avx512();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return vmath_avx2();
    if (__builtin_cpu_supports("sse4.1")) return vmath_sse4();
    return vmath_table{};
  }();
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
