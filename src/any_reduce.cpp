// SPDX-License-Identifier: MIT
// AnyTensor's reductions, statistics, scans, softmax and sorting: one visit_dtype on the
// input's dtype into the typed function (its result dtype is the typed one's).
module;
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include "any_ops.hpp"
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
import strata.sorting;

namespace strata {
namespace {
using detail::visit_dtype;
template <class T>
using tag = std::type_identity<T>;
template <class T> inline constexpr bool all_v = true;
template <class T> inline constexpr bool real_v = !detail::is_complex_v<T>;
template <class T> inline constexpr bool inexact_v = !std::is_integral_v<T>;  // floating or complex
template <class T> inline constexpr bool real_float_v = !std::is_integral_v<T> && !detail::is_complex_v<T>;
template <class T> inline constexpr bool real_nonbool_v = real_v<T> && !std::is_same_v<T, bool>;

// Runs f(x.as<T>()) when OK<T>, else throws PyTorch's "not implemented" for name.
template <template <class> class OK, class R = AnyTensor, class F>
R on_dtype(const AnyTensor& x, const char* name, F&& f) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) -> R {
    if constexpr (OK<T>::value) return f(x.as<T>());
    else detail::throw_not_implemented(name, x.dtype());
  });
}
#define STRATA_TRAIT(NAME, V) \
  template <class T> struct NAME { static constexpr bool value = V<T>; };
STRATA_TRAIT(all_t, all_v)
STRATA_TRAIT(real_t_, real_v)
STRATA_TRAIT(inexact_t, inexact_v)
STRATA_TRAIT(real_float_t, real_float_v)
STRATA_TRAIT(real_nonbool_t, real_nonbool_v)
#undef STRATA_TRAIT

template <class V>
AnyValuesIndices pair_of(const V& r) {
  const auto& [values, indices] = r;
  return AnyValuesIndices{AnyTensor(values), indices};
}
}  // namespace

AnyTensor sum(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "sum", [&](const auto& t) { return AnyTensor(strata::sum(t, dims, keepdim)); });
}
AnyTensor mean(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<inexact_t>(x, "mean", [&](const auto& t) { return AnyTensor(strata::mean(t, dims, keepdim)); });
}
AnyTensor prod(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "prod", [&](const auto& t) { return AnyTensor(strata::prod(t, dims, keepdim)); });
}
AnyTensor amax(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<real_t_>(x, "amax", [&](const auto& t) { return AnyTensor(strata::amax(t, dims, keepdim)); });
}
AnyTensor amin(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<real_t_>(x, "amin", [&](const auto& t) { return AnyTensor(strata::amin(t, dims, keepdim)); });
}
AnyTensor all(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "all", [&](const auto& t) { return AnyTensor(strata::all(t, dims, keepdim)); });
}
AnyTensor any(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "any", [&](const auto& t) { return AnyTensor(strata::any(t, dims, keepdim)); });
}
AnyTensor nansum(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<real_t_>(x, "nansum", [&](const auto& t) { return AnyTensor(strata::nansum(t, dims, keepdim)); });
}
AnyTensor nanmean(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<real_float_t>(x, "nanmean",
                                [&](const auto& t) { return AnyTensor(strata::nanmean(t, dims, keepdim)); });
}
AnyTensor sum_to(const AnyTensor& x, int_list sizes) {
  return on_dtype<all_t>(x, "sum_to", [&](const auto& t) { return AnyTensor(strata::sum_to(t, sizes)); });
}
AnyTensor logsumexp(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<real_float_t>(x, "logsumexp",
                                [&](const auto& t) { return AnyTensor(strata::logsumexp(t, dims, keepdim)); });
}
AnyTensor var(const AnyTensor& x, int_list dims, std::int64_t correction, bool keepdim) {
  return on_dtype<inexact_t>(x, "var",
                             [&](const auto& t) { return AnyTensor(strata::var(t, dims, correction, keepdim)); });
}
AnyTensor std(const AnyTensor& x, int_list dims, std::int64_t correction, bool keepdim) {
  return on_dtype<inexact_t>(x, "std",
                             [&](const auto& t) { return AnyTensor(strata::std(t, dims, correction, keepdim)); });
}
AnyTensor norm(const AnyTensor& x, double p, int_list dims, bool keepdim) {
  return on_dtype<inexact_t>(x, "norm", [&](const auto& t) { return AnyTensor(strata::norm(t, p, dims, keepdim)); });
}
AnyTensor count_nonzero(const AnyTensor& x, int_list dims) {
  return on_dtype<all_t>(x, "count_nonzero",
                         [&](const auto& t) { return AnyTensor(strata::count_nonzero(t, dims)); });
}
Tensor<std::int64_t> argmax(const AnyTensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return on_dtype<real_nonbool_t, Tensor<std::int64_t>>(x, "argmax",
                                                        [&](const auto& t) { return strata::argmax(t, dim, keepdim); });
}
Tensor<std::int64_t> argmin(const AnyTensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return on_dtype<real_nonbool_t, Tensor<std::int64_t>>(x, "argmin",
                                                        [&](const auto& t) { return strata::argmin(t, dim, keepdim); });
}
AnyTensor max(const AnyTensor& x) { return amax(x); }
AnyTensor min(const AnyTensor& x) { return amin(x); }
AnyValuesIndices max(const AnyTensor& x, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "max", [&](const auto& t) { return pair_of(strata::max(t, dim, keepdim)); });
}
AnyValuesIndices min(const AnyTensor& x, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "min", [&](const auto& t) { return pair_of(strata::min(t, dim, keepdim)); });
}
AnyValuesIndices sort(const AnyTensor& x, std::int64_t dim, bool descending, bool stable) {
  return on_dtype<real_t_, AnyValuesIndices>(
      x, "sort", [&](const auto& t) { return pair_of(strata::sort(t, dim, descending, stable)); });
}
Tensor<std::int64_t> argsort(const AnyTensor& x, std::int64_t dim, bool descending, bool stable) {
  return on_dtype<real_t_, Tensor<std::int64_t>>(
      x, "argsort", [&](const auto& t) { return strata::argsort(t, dim, descending, stable); });
}
AnyValuesIndices topk(const AnyTensor& x, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  return on_dtype<real_t_, AnyValuesIndices>(
      x, "topk", [&](const auto& t) { return pair_of(strata::topk(t, k, dim, largest, sorted)); });
}
AnyTensor median(const AnyTensor& x) {
  return on_dtype<real_t_>(x, "median", [&](const auto& t) { return AnyTensor(strata::median(t)); });
}
AnyTensor cumsum(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<all_t>(x, "cumsum", [&](const auto& t) { return AnyTensor(strata::cumsum(t, dim)); });
}
AnyTensor cumprod(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<all_t>(x, "cumprod", [&](const auto& t) { return AnyTensor(strata::cumprod(t, dim)); });
}
AnyTensor logcumsumexp(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<real_float_t>(x, "logcumsumexp",
                                [&](const auto& t) { return AnyTensor(strata::logcumsumexp(t, dim)); });
}
AnyTensor softmax(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<real_float_t>(x, "softmax", [&](const auto& t) { return AnyTensor(strata::softmax(t, dim)); });
}
AnyTensor log_softmax(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<real_float_t>(x, "log_softmax",
                                [&](const auto& t) { return AnyTensor(strata::log_softmax(t, dim)); });
}
}  // namespace strata
