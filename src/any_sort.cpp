// SPDX-License-Identifier: MIT
// AnyTensor's arg-reductions, max/min along a dim, sorting, scans and softmax: one visit_dtype
// on the input's dtype into the typed function (its result dtype is the typed one's).
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
namespace {
template <class V>
AnyValuesIndices pair_of(const V& r) {
  const auto& [values, indices] = r;
  return AnyValuesIndices{AnyTensor(values), indices};
}
}  // namespace

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
// softmax and log_softmax run the typed ones; half and bfloat16 are computed in float32 and
// rounded once (as torch's CPU kernels compute them).
namespace {
template <bool Log>
AnyTensor softmax_of(const AnyTensor& x, std::int64_t dim, const char* name) {
  return on_dtype<real_float_t>(x, name, [&]<class T>(const Tensor<T>& t) -> AnyTensor {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      return softmax_of<Log>(x.to(dtype::float32), dim, name).to(x.dtype());
    } else if constexpr (Log) {
      return strata::log_softmax(t, dim);
    } else {
      return strata::softmax(t, dim);
    }
  });
}
}  // namespace
AnyTensor softmax(const AnyTensor& x, std::int64_t dim) { return softmax_of<false>(x, dim, "softmax"); }
AnyTensor log_softmax(const AnyTensor& x, std::int64_t dim) { return softmax_of<true>(x, dim, "log_softmax"); }
}  // namespace strata
