// SPDX-License-Identifier: MIT
// Vector math over arrays (SLEEF, dispatched on the running CPU): declared for the global
// module so that modules/loop.cppm and the plain translation unit src/vmath.cpp agree.
#pragma once
#include <cstdint>

namespace strata::detail {
/// The functions vmath evaluates (SLEEF's 1.0-ulp variants).
enum class vfn : int { exp, expm1, log, log1p, sin, cos, tan, tanh, count };
/// y[i] = f(x[i]) for i < n (x == y allowed).
void vmath(vfn f, const float* x, float* y, std::int64_t n);
/// y[i] = f(x[i]) for i < n (x == y allowed).
void vmath(vfn f, const double* x, double* y, std::int64_t n);
/// y[i] = pow(x[i], e[i]) for i < n (y may be x or e).
void vpow(const float* x, const float* e, float* y, std::int64_t n);
/// y[i] = pow(x[i], e[i]) for i < n (y may be x or e).
void vpow(const double* x, const double* e, double* y, std::int64_t n);
}  // namespace strata::detail
