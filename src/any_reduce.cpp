// SPDX-License-Identifier: MIT
// AnyTensor's reductions and statistics: one visit_dtype on the input's dtype into the typed
// function (its result dtype is the typed one's).
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
#include "any_dispatch.hpp"

namespace strata {

AnyTensor sum(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "sum", [&](const auto& t) { return AnyTensor(strata::sum(t, dims, keepdim)); });
}
AnyTensor mean(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<inexact_t>(x, "mean", [&](const auto& t) { return AnyTensor(strata::mean(t, dims, keepdim)); });
}
AnyTensor prod(const AnyTensor& x, int_list dims, bool keepdim) {
  return on_dtype<all_t>(x, "prod", [&](const auto& t) { return AnyTensor(strata::prod(t, dims, keepdim)); });
}
// amax and amin of the narrow integers and bool read them as int64 (exact), so that they run
// the loops compiled for int64 rather than a set of their own per dtype.
namespace {
template <class F>
AnyTensor extreme(const AnyTensor& x, const char* name, F&& reduce) {
  return on_dtype<real_t_>(x, name, [&]<class T>(const Tensor<T>& t) {
    if constexpr (std::is_integral_v<T> && sizeof(T) < 8)
      return AnyTensor(reduce(strata::cast<std::int64_t>(t))).to(x.dtype());
    else return AnyTensor(reduce(t));
  });
}
}  // namespace
AnyTensor amax(const AnyTensor& x, int_list dims, bool keepdim) {
  return extreme(x, "amax", [&](const auto& v) { return strata::amax(v, dims, keepdim); });
}
AnyTensor amin(const AnyTensor& x, int_list dims, bool keepdim) {
  return extreme(x, "amin", [&](const auto& v) { return strata::amin(v, dims, keepdim); });
}
// all and any give bool, but uint8 for a uint8 input (as torch 1.13).
AnyTensor all(const AnyTensor& x, int_list dims, bool keepdim) {
  const AnyTensor r = on_dtype<all_t>(x, "all", [&](const auto& t) { return AnyTensor(strata::all(t, dims, keepdim)); });
  return x.dtype() == dtype::uint8 ? r.to(dtype::uint8) : r;
}
AnyTensor any(const AnyTensor& x, int_list dims, bool keepdim) {
  const AnyTensor r = on_dtype<all_t>(x, "any", [&](const auto& t) { return AnyTensor(strata::any(t, dims, keepdim)); });
  return x.dtype() == dtype::uint8 ? r.to(dtype::uint8) : r;
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
}  // namespace strata
