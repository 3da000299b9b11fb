// SPDX-License-Identifier: MIT
// AnyTensor's operation lists (X-macros), once: modules/any.cppm declares each and
// src/any_binary.cpp and src/any_reduce.cpp define each. Included in the global module fragment.
#pragma once

// Binary operators and functions: (tensor, tensor), (tensor, number) and (number, tensor).
#define STRATA_ANY_BINARY(X)                                                                                  \
  X(operator+, add) X(operator-, sub) X(operator*, mul) X(operator/, div) X(operator%, remainder)            \
  X(operator==, eq) X(operator!=, ne) X(operator<, lt) X(operator<=, le) X(operator>, gt) X(operator>=, ge) \
  X(operator&, bitwise_and) X(operator|, bitwise_or) X(operator^, bitwise_xor) X(operator<<, lshift)        \
  X(operator>>, rshift) X(pow, pow) X(maximum, maximum) X(minimum, minimum) X(fmod, fmod)                   \
  X(remainder, remainder) X(floor_divide, floor_divide) X(atan2, atan2) X(hypot, hypot)                     \
  X(copysign, copysign) X(logical_and, logical_and) X(logical_or, logical_or) X(max, maximum)               \
  X(min, minimum)
// Unary functions.
#define STRATA_ANY_UNARY(X)                                                                                  \
  X(abs) X(neg) X(exp) X(expm1) X(log) X(log1p) X(log2) X(log10) X(exp2) X(sqrt) X(rsqrt) X(sin) X(cos)     \
  X(tan) X(tanh) X(sigmoid) X(relu) X(floor) X(ceil) X(round) X(trunc) X(frac) X(sign) X(erf) X(erfc)       \
  X(square) X(reciprocal) X(conj) X(silu) X(isnan) X(isinf) X(isfinite) X(isposinf) X(isneginf)             \
  X(logical_not)
// Reductions over dims with keepdim.
#define STRATA_ANY_REDUCE(X) X(sum) X(mean) X(prod) X(amax) X(amin) X(all) X(any) X(nansum) X(nanmean)
// Scans along a dim.
#define STRATA_ANY_SCAN(X) X(cumsum) X(cumprod) X(logcumsumexp) X(softmax) X(log_softmax)

