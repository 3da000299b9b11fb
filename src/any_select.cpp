// SPDX-License-Identifier: MIT
// AnyTensor's order statistics (kthvalue, medians, mode, quantiles) and running extrema: one
// visit_dtype on the input's dtype into the typed function.
module;
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>
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
template <class T>
struct quantile_t {
  static constexpr bool value = std::is_same_v<T, float> || std::is_same_v<T, double>;
};
void check_quantile_input(const AnyTensor& x) {
  if (x.dtype() != dtype::float32 && x.dtype() != dtype::float64)
    throw dtype_error("quantile() input tensor must be either float or double dtype");
}
}  // namespace

AnyValuesIndices median(const AnyTensor& x, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "median", [&](const auto& t) { return pair_of(strata::median(t, dim, keepdim)); });
}
AnyTensor nanmedian(const AnyTensor& x) {
  return on_dtype<real_t_>(x, "nanmedian", [&](const auto& t) { return AnyTensor(strata::nanmedian(t)); });
}
AnyValuesIndices nanmedian(const AnyTensor& x, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "nanmedian",
                                             [&](const auto& t) { return pair_of(strata::nanmedian(t, dim, keepdim)); });
}
AnyValuesIndices kthvalue(const AnyTensor& x, std::int64_t k, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "kthvalue",
                                             [&](const auto& t) { return pair_of(strata::kthvalue(t, k, dim, keepdim)); });
}
AnyValuesIndices mode(const AnyTensor& x, std::int64_t dim, bool keepdim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "mode", [&](const auto& t) { return pair_of(strata::mode(t, dim, keepdim)); });
}
AnyValuesIndices cummax(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "cummax", [&](const auto& t) { return pair_of(strata::cummax(t, dim)); });
}
AnyValuesIndices cummin(const AnyTensor& x, std::int64_t dim) {
  return on_dtype<real_t_, AnyValuesIndices>(x, "cummin", [&](const auto& t) { return pair_of(strata::cummin(t, dim)); });
}
AnyTensor quantile(const AnyTensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  check_quantile_input(x);
  return on_dtype<quantile_t>(x, "quantile",
                              [&](const auto& t) { return AnyTensor(strata::quantile(t, q, dim, keepdim, interpolation)); });
}
AnyTensor quantile(const AnyTensor& x, const AnyTensor& q, std::optional<std::int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  check_quantile_input(x);
  if (q.dtype() != x.dtype())
    throw dtype_error("quantile() q tensor must be same dtype as the input tensor");
  return on_dtype<quantile_t>(x, "quantile", [&]<class T>(const Tensor<T>& t) {
    return AnyTensor(strata::quantile(t, q.as<T>(), dim, keepdim, interpolation));
  });
}
AnyTensor nanquantile(const AnyTensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                      std::string_view interpolation) {
  check_quantile_input(x);
  return on_dtype<quantile_t>(
      x, "nanquantile", [&](const auto& t) { return AnyTensor(strata::nanquantile(t, q, dim, keepdim, interpolation)); });
}
}  // namespace strata
