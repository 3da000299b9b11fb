// SPDX-License-Identifier: MIT
// Sorts, selections and scans along one dim, with PyTorch 1.13's semantics: sort, argsort,
// topk, kthvalue, median, nanmedian, mode (values and int64 indices), and the scans cumsum,
// cumprod, cummax, cummin and logcumsumexp. Everything runs eagerly, like torch's, and is
// compiled once per dtype in src/sorting.cpp (this interface only checks types and converts).
// Ties resolve as torch's CPU kernels do: the same standard-library algorithms over the same
// (value, index) sequences, so even an unstable sort returns torch's indices.
module;
#include "dtype_list.hpp"
export module strata.sorting;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.loop;
import strata.graph;
import strata.tensor;
import strata.expr;

namespace strata::detail {
/// A result of values and their int64 indices along the dim.
template <element T>
using with_indices = values_indices<T>;

/// What the public functions take: a tensor, or a lazy expression (evaluated first).
template <class X>
concept evaluable = requires(const X& x) {
  typename X::value_type;
  { strata::eval(x) } -> std::same_as<Tensor<typename X::value_type>>;
};

template <class T>
inline constexpr bool orderable_v = !is_complex_v<T>;

/// The scans that accumulate one running value.
enum class scan_kind { sum, prod, logsumexp };

// Compiled once per dtype (src/sorting.cpp); each records its autograd node itself.
template <element T>
with_indices<T> sort_run(const Tensor<T>& x, std::int64_t dim, bool descending, bool stable);
template <element T>
with_indices<T> topk_run(const Tensor<T>& x, std::int64_t k, std::int64_t dim, bool largest, bool sorted);
template <element T>
with_indices<T> kthvalue_run(const Tensor<T>& x, std::int64_t k, std::int64_t dim, bool keepdim);
template <element T>
Tensor<T> median_run(const Tensor<T>& x, bool ignore_nan);
template <element T>
with_indices<T> median_dim_run(const Tensor<T>& x, std::int64_t dim, bool keepdim, bool ignore_nan);
template <element T>
with_indices<T> mode_run(const Tensor<T>& x, std::int64_t dim, bool keepdim);
template <element T>
with_indices<T> cummax_run(const Tensor<T>& x, std::int64_t dim, bool max);
template <element T>
Tensor<T> scan_run(const Tensor<T>& x, std::int64_t dim, scan_kind kind);
/// quantile (ignore_nan: nanquantile) of x at each of qs along dim (all elements when unset);
/// q_list prepends a dim of qs.size() (float and double; src/sorting.cpp).
template <element T>
Tensor<T> quantile_run(const Tensor<T>& x, std::span<const double> qs, bool q_list, std::optional<std::int64_t> dim,
                       bool keepdim, std::string_view interpolation, bool ignore_nan);

/// cumsum's and cumprod's result type: Acc when given, else int64 for integers and bool.
template <class Acc, class V>
using cumulative_t = std::conditional_t<!std::is_void_v<Acc>, Acc,
                                        std::conditional_t<std::is_integral_v<V>, std::int64_t, V>>;

template <class R>
Tensor<R> cumulative(const auto& x, std::int64_t dim, scan_kind kind) {
  static_assert(!std::is_same_v<R, bool>, "cumsum and cumprod cannot produce bool values (as in PyTorch): "
                                          "leave the dtype out for an int64 result.");
  return scan_run<R>(strata::eval(x).template to<R>(), dim, kind);
}
}  // namespace strata::detail

export namespace strata {
/// Sorts along dim (NaN counts as the largest value); returns (values, indices). stable keeps
/// equal elements in their order; unstable gives PyTorch's order too.
template <detail::evaluable X>
auto sort(const X& x, std::int64_t dim = -1, bool descending = false, bool stable = false) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "sort is not defined for complex values.");
  return detail::sort_run<T>(eval(x), dim, descending, stable);
}
/// The indices that sort x along dim (sort's second result).
template <detail::evaluable X>
Tensor<std::int64_t> argsort(const X& x, std::int64_t dim = -1, bool descending = false, bool stable = false) {
  return strata::sort(x, dim, descending, stable).indices;
}
/// The k largest (or smallest) elements along dim and their indices, sorted unless asked not to.
template <detail::evaluable X>
auto topk(const X& x, std::int64_t k, std::int64_t dim = -1, bool largest = true, bool sorted = true) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "topk is not defined for complex values.");
  return detail::topk_run<T>(eval(x), k, dim, largest, sorted);
}
/// The k-th smallest element along dim (k from 1) and its index.
template <detail::evaluable X>
auto kthvalue(const X& x, std::int64_t k, std::int64_t dim = -1, bool keepdim = false) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "kthvalue is not defined for complex values.");
  return detail::kthvalue_run<T>(eval(x), k, dim, keepdim);
}
/// The lower median of all elements, a 0-dim tensor (NaN when any element is NaN).
template <detail::evaluable X>
auto median(const X& x) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "median is not defined for complex values.");
  return detail::median_run<T>(eval(x), false);
}
/// The lower median along dim and its index (the first NaN's when a line holds one).
template <detail::evaluable X>
auto median(const X& x, std::int64_t dim, bool keepdim = false) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "median is not defined for complex values.");
  return detail::median_dim_run<T>(eval(x), dim, keepdim, false);
}
/// The lower median of all non-NaN elements, a 0-dim tensor (NaN when all are NaN).
template <detail::evaluable X>
auto nanmedian(const X& x) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "nanmedian is not defined for complex values.");
  return detail::median_run<T>(eval(x), true);
}
/// The lower median of the non-NaN elements along dim and its index.
template <detail::evaluable X>
auto nanmedian(const X& x, std::int64_t dim, bool keepdim = false) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "nanmedian is not defined for complex values.");
  return detail::median_dim_run<T>(eval(x), dim, keepdim, true);
}
/// The most frequent value along dim (the smallest among equally frequent ones) and an index of it.
template <detail::evaluable X>
auto mode(const X& x, std::int64_t dim = -1, bool keepdim = false) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "mode is not defined for complex values.");
  return detail::mode_run<T>(eval(x), dim, keepdim);
}

/// Running sums along dim; integers and bool give int64, Acc is PyTorch's dtype= (x is converted first).
template <class Acc = void, detail::evaluable X>
auto cumsum(const X& x, std::int64_t dim) {
  using R = detail::cumulative_t<Acc, typename X::value_type>;
  return detail::cumulative<R>(x, dim, detail::scan_kind::sum);
}
/// Running products along dim; integers and bool give int64, Acc is PyTorch's dtype=.
template <class Acc = void, detail::evaluable X>
auto cumprod(const X& x, std::int64_t dim) {
  using R = detail::cumulative_t<Acc, typename X::value_type>;
  return detail::cumulative<R>(x, dim, detail::scan_kind::prod);
}
/// Running maxima along dim and the index of each (the last of equal maxima; NaN propagates).
template <detail::evaluable X>
auto cummax(const X& x, std::int64_t dim) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "cummax is not defined for complex values.");
  return detail::cummax_run<T>(eval(x), dim, true);
}
/// Running minima along dim and the index of each (the last of equal minima; NaN propagates).
template <detail::evaluable X>
auto cummin(const X& x, std::int64_t dim) {
  using T = typename X::value_type;
  static_assert(detail::orderable_v<T>, "cummin is not defined for complex values.");
  return detail::cummax_run<T>(eval(x), dim, false);
}
/// log(cumsum(exp(x))) along dim, computed stably (infinities and NaN as PyTorch's).
template <detail::evaluable X>
auto logcumsumexp(const X& x, std::int64_t dim) {
  using T = typename X::value_type;
  static_assert(std::is_floating_point_v<detail::compute_t<T>> || std::is_same_v<T, float128>,
                "logcumsumexp needs a floating input (as in PyTorch): convert it first, e.g. x.to<float>().");
  return detail::scan_run<T>(eval(x), dim, detail::scan_kind::logsumexp);
}
/// The q-th quantile of x along dim (of all elements when dim is unset), interpolated as
/// PyTorch's "linear" (or "lower", "higher", "midpoint", "nearest"); NaN where a row has a NaN.
template <detail::evaluable X>
auto quantile(const X& x, double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
              std::string_view interpolation = "linear") {
  using T = typename X::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "quantile() input tensor must be either float or double dtype");
  return detail::quantile_run<T>(eval(x), std::span<const double>(&q, 1), false, dim, keepdim, interpolation, false);
}
/// quantile at each q of a 0-dim or 1-D tensor of qs (a leading dim of qs' size when 1-D).
template <detail::evaluable X, element Q>
auto quantile(const X& x, const Tensor<Q>& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
              std::string_view interpolation = "linear") {
  using T = typename X::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "quantile() input tensor must be either float or double dtype");
  if (q.dim() > 1) throw error("quantile() q must be a scalar or 1D tensor");
  const std::vector<double> qs = q.template to<double>().to_vector();
  return detail::quantile_run<T>(eval(x), qs, q.dim() == 1, dim, keepdim, interpolation, false);
}
/// quantile that ignores NaN (a row of NaN only gives NaN).
template <detail::evaluable X>
auto nanquantile(const X& x, double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                 std::string_view interpolation = "linear") {
  using T = typename X::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "quantile() input tensor must be either float or double dtype");
  return detail::quantile_run<T>(eval(x), std::span<const double>(&q, 1), false, dim, keepdim, interpolation, true);
}
}  // namespace strata

// ---- compiled once per dtype (src/sorting.cpp) ----
#define STRATA_ORDER_INSTANCES(T)                                                                               \
  namespace detail {                                                                                            \
  extern template with_indices<T> sort_run<T>(const Tensor<T>&, std::int64_t, bool, bool);                      \
  extern template with_indices<T> topk_run<T>(const Tensor<T>&, std::int64_t, std::int64_t, bool, bool);        \
  extern template with_indices<T> kthvalue_run<T>(const Tensor<T>&, std::int64_t, std::int64_t, bool);          \
  extern template Tensor<T> median_run<T>(const Tensor<T>&, bool);                                              \
  extern template with_indices<T> median_dim_run<T>(const Tensor<T>&, std::int64_t, bool, bool);                \
  extern template with_indices<T> mode_run<T>(const Tensor<T>&, std::int64_t, bool);                            \
  extern template with_indices<T> cummax_run<T>(const Tensor<T>&, std::int64_t, bool);                          \
  }
#define STRATA_SCAN_INSTANCES(T) \
  namespace detail {             \
  extern template Tensor<T> scan_run<T>(const Tensor<T>&, std::int64_t, scan_kind); \
  }
namespace strata {
STRATA_FOR_EACH_ORDERED_DTYPE(STRATA_ORDER_INSTANCES)
STRATA_FOR_EACH_NUMBER_DTYPE(STRATA_SCAN_INSTANCES)
namespace detail {
extern template Tensor<float> quantile_run<float>(const Tensor<float>&, std::span<const double>, bool,
                                                  std::optional<std::int64_t>, bool, std::string_view, bool);
extern template Tensor<double> quantile_run<double>(const Tensor<double>&, std::span<const double>, bool,
                                                    std::optional<std::int64_t>, bool, std::string_view, bool);
}  // namespace detail
}  // namespace strata
#undef STRATA_ORDER_INSTANCES
#undef STRATA_SCAN_INSTANCES
