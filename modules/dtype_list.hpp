// SPDX-License-Identifier: MIT
// strata's element types, once: every explicit instantiation and `extern template` list in
// modules/ and src/ is generated from these X-macros (X(type) per dtype), as PyTorch's
// AT_FORALL_SCALAR_TYPES. Adding a dtype is one line here (in its category), beside its
// `dtype` enumerator and STRATA_DTYPE_OF in modules/dtype.cppm. Included in the global module
// fragment of the units that instantiate per dtype (types named as in namespace strata).
#pragma once

#define STRATA_FOR_EACH_INTEGRAL_DTYPE(X) \
  X(std::uint8_t) X(std::int8_t) X(std::int16_t) X(std::int32_t) X(std::int64_t)
#define STRATA_FOR_EACH_FLOATING_DTYPE(X) X(half) X(bfloat16) X(float) X(double) X(float128)
#define STRATA_FOR_EACH_COMPLEX_DTYPE(X) X(std::complex<float>) X(std::complex<double>)

/// Every dtype.
#define STRATA_FOR_EACH_DTYPE(X) X(bool) STRATA_FOR_EACH_NUMBER_DTYPE(X)
/// Every dtype but bool (linspace, the scans).
#define STRATA_FOR_EACH_NUMBER_DTYPE(X) \
  STRATA_FOR_EACH_INTEGRAL_DTYPE(X) STRATA_FOR_EACH_FLOATING_DTYPE(X) STRATA_FOR_EACH_COMPLEX_DTYPE(X)
/// The dtypes with an order: all but complex (sorting, arg-reductions).
#define STRATA_FOR_EACH_ORDERED_DTYPE(X) X(bool) STRATA_FOR_EACH_INTEGRAL_DTYPE(X) STRATA_FOR_EACH_FLOATING_DTYPE(X)
/// The dtypes that carry gradients: floating and complex.
#define STRATA_FOR_EACH_GRAD_DTYPE(X) STRATA_FOR_EACH_FLOATING_DTYPE(X) STRATA_FOR_EACH_COMPLEX_DTYPE(X)

/// The reductions' loops compiled once (X(op, accumulator)): sum, prod, amax and amin on the
/// accumulators most reductions have, all and any on bool (modules/reduce.cppm declares them
/// extern, src/reduce.cpp instantiates them).
#define STRATA_FOR_EACH_REDUCE_LOOP_TYPE(X, A) X(sum_r, A) X(prod_r, A) X(amax_r, A) X(amin_r, A)
#define STRATA_FOR_EACH_REDUCE_LOOP(X)                                                   \
  STRATA_FOR_EACH_REDUCE_LOOP_TYPE(X, float) STRATA_FOR_EACH_REDUCE_LOOP_TYPE(X, double) \
  STRATA_FOR_EACH_REDUCE_LOOP_TYPE(X, std::int64_t) X(all_r, bool) X(any_r, bool)

/// float128's operators and math functions (Boost's), exported by strata.std to strata's modules
/// and re-exported by strata.dtype to users.
#define STRATA_FOR_EACH_FLOAT128_FUNCTION(X) \
  X(operator+) X(operator-) X(operator*) X(operator/) X(operator==) X(operator!=) \
  X(operator<) X(operator<=) X(operator>) X(operator>=) X(operator<<) X(operator>>) X(abs) \
  X(fabs) X(sqrt) X(exp) X(expm1) X(log) X(log1p) X(sin) X(cos) X(tan) X(tanh) X(floor) \
  X(ceil) X(round) X(trunc) X(pow) X(fmod) X(isnan) X(isinf) X(isfinite) X(signbit) X(log2) \
  X(log10) X(exp2) X(erf) X(erfc) X(hypot) X(atan2) X(copysign)
