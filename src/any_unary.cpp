// SPDX-License-Identifier: MIT
// AnyTensor's unary functions: one visit_dtype on the input's dtype into the typed function
// (integer inputs of float functions converted to float32 first).
module;
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include "any_ops.hpp"
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
#include "any_dispatch.hpp"

namespace strata {
namespace {
// ---- unary ----
// What an integer or bool input does: run the typed function on it (keep), give the result of
// the function on the input converted to float32, as the typed function does (as_float: one
// conversion instead of a kernel per integer dtype), or come back unchanged (same: floor of an
// integer).
enum class integers { keep, as_float, same };
#define STRATA_UNARY_OP(NAME, OK, INTS, EXPR)                               \
  struct NAME##_f {                                                         \
    static constexpr const char* name = #NAME;                              \
    static constexpr integers on_integers = integers::INTS;                 \
    template <class T> static constexpr bool ok = OK<T>;                    \
    template <class X>                                                      \
    auto operator()(const X& x) const { return EXPR; }                      \
  };
#define STRATA_FUNCTION_OP(NAME, OK, INTS) STRATA_UNARY_OP(NAME, OK, INTS, strata::NAME(x))
STRATA_FUNCTION_OP(abs, nonbool_v, keep)
STRATA_UNARY_OP(neg, nonbool_v, keep, -x)
STRATA_FUNCTION_OP(exp, all_v, as_float)
STRATA_FUNCTION_OP(expm1, real_v, as_float)
STRATA_FUNCTION_OP(log, all_v, as_float)
STRATA_FUNCTION_OP(log1p, real_v, as_float)
STRATA_FUNCTION_OP(log2, real_v, as_float)
STRATA_FUNCTION_OP(log10, real_v, as_float)
STRATA_FUNCTION_OP(exp2, real_v, as_float)
STRATA_FUNCTION_OP(sqrt, all_v, as_float)
STRATA_FUNCTION_OP(rsqrt, real_v, as_float)
STRATA_FUNCTION_OP(sin, all_v, as_float)
STRATA_FUNCTION_OP(cos, all_v, as_float)
STRATA_FUNCTION_OP(tan, all_v, as_float)
STRATA_FUNCTION_OP(tanh, all_v, as_float)
STRATA_FUNCTION_OP(sigmoid, real_v, as_float)
STRATA_FUNCTION_OP(relu, real_nonbool_v, keep)
STRATA_FUNCTION_OP(floor, real_v, same)
STRATA_FUNCTION_OP(ceil, real_v, same)
STRATA_FUNCTION_OP(round, real_v, same)
STRATA_FUNCTION_OP(trunc, real_v, same)
STRATA_FUNCTION_OP(frac, real_float_v, keep)
STRATA_FUNCTION_OP(sign, real_v, keep)
STRATA_FUNCTION_OP(erf, real_v, as_float)
STRATA_FUNCTION_OP(erfc, real_v, as_float)
STRATA_FUNCTION_OP(square, all_v, keep)
STRATA_FUNCTION_OP(reciprocal, all_v, as_float)
STRATA_FUNCTION_OP(conj, all_v, same)
STRATA_FUNCTION_OP(silu, real_float_v, keep)
STRATA_FUNCTION_OP(isnan, all_v, keep)
STRATA_FUNCTION_OP(isinf, all_v, keep)
STRATA_FUNCTION_OP(isfinite, all_v, keep)
STRATA_FUNCTION_OP(isposinf, real_v, keep)
STRATA_FUNCTION_OP(isneginf, real_v, keep)
STRATA_FUNCTION_OP(logical_not, all_v, keep)
STRATA_UNARY_OP(bitwise_not, bitwise_v, keep, ~x)
#undef STRATA_FUNCTION_OP
#undef STRATA_UNARY_OP

// The functions with parameters: the op holds them.
struct gelu_f {
  static constexpr const char* name = "GeluKernelImpl";
  static constexpr integers on_integers = integers::keep;
  template <class T> static constexpr bool ok = real_float_v<T>;
  std::string_view approximate;
  template <class X>
  auto operator()(const X& x) const { return strata::gelu(x, approximate); }
};
struct softplus_f {
  static constexpr const char* name = "softplus_cpu";
  static constexpr integers on_integers = integers::keep;
  template <class T> static constexpr bool ok = real_float_v<T>;
  double beta, threshold;
  template <class X>
  auto operator()(const X& x) const { return strata::softplus(x, beta, threshold); }
};
struct logit_f {
  static constexpr const char* name = "logit";
  static constexpr integers on_integers = integers::as_float;
  template <class T> static constexpr bool ok = real_v<T>;
  std::optional<double> eps;
  template <class X>
  auto operator()(const X& x) const { return strata::logit(x, eps); }
};
struct nan_to_num_f {
  static constexpr const char* name = "nan_to_num";
  static constexpr integers on_integers = integers::same;
  template <class T> static constexpr bool ok = true;
  double nan;
  std::optional<double> posinf, neginf;
  template <class X>
  auto operator()(const X& x) const { return strata::nan_to_num(x, nan, posinf, neginf); }
};

template <class Op>
AnyTensor unary(const AnyTensor& x, const Op& op = {}) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (!Op::template ok<T>) detail::throw_not_implemented(Op::name, x.dtype());
    else if constexpr (std::is_integral_v<T> && Op::on_integers == integers::as_float)
      return op(x.to<std::conditional_t<std::is_integral_v<T>, float, T>>());  // (dependent: float)
    else if constexpr (std::is_integral_v<T> && Op::on_integers == integers::same) return x.clone();
    else return op(x.as<T>());
  });
}

}  // namespace

#define STRATA_DEFINE_UNARY(F) \
  AnyTensor F(const AnyTensor& x) { return unary<F##_f>(x); }
STRATA_ANY_UNARY(STRATA_DEFINE_UNARY)
#undef STRATA_DEFINE_UNARY
AnyTensor gelu(const AnyTensor& x, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") throw error("approximate argument must be either none or tanh.");
  return unary(x, gelu_f{approximate});
}
AnyTensor softplus(const AnyTensor& x, double beta, double threshold) { return unary(x, softplus_f{beta, threshold}); }
AnyTensor logit(const AnyTensor& x, std::optional<double> eps) { return unary(x, logit_f{eps}); }
AnyTensor nan_to_num(const AnyTensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  return unary(x, nan_to_num_f{nan, posinf, neginf});
}
AnyTensor operator-(const AnyTensor& x) { return unary<neg_f>(x); }
AnyTensor operator~(const AnyTensor& x) { return unary<bitwise_not_f>(x); }
AnyTensor operator!(const AnyTensor& x) { return unary<logical_not_f>(x); }

}  // namespace strata
