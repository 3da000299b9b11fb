// SPDX-License-Identifier: MIT
// Statistics and reductions with indices, PyTorch 1.13's names and rules: count_nonzero,
// nansum, nanmean, var/std (and _mean), vector norms, argmax/argmin and max/min along a dim.
// Those that are reductions of an expression are built from the fused ones (:reduce) and stay
// lazy; the arg-reductions walk their input once in src/stats.cpp (values and indices).
module;
#include "dtype_list.hpp"
export module strata.expr:stats;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;
import :elementwise;
import :reduce;

export namespace strata {
template <element T>
struct values_indices;
}  // namespace strata

namespace strata::detail {
/// How many elements a reduction over dims (empty: all) combines.
inline double reduced_count(int_list sizes, int_list dims) {
  const auto mask = reduction_mask(dims, static_cast<std::int64_t>(sizes.size()));
  double n = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (mask[d]) n *= static_cast<double>(sizes[d]);
  return n;
}

/// s^inv_p (s >= 0) with a zero derivative at s = 0 (the powers and roots of norms and of a
/// variance: PyTorch masks their gradients there rather than give inf * 0).
struct root_op : same_type {
  double inv_p = 0.5;
  template <class R, class X> compute_t<R> apply(X s) const {
    if (inv_p == 0.5) return root(s);
    using std::pow;
    return pow(s, static_cast<X>(inv_p));
  }
};
template <class X>
auto root_of(X&& s, double inv_p) {
  auto n = to_node(std::forward<X>(s));
  return unary_expr<root_op, decltype(n)>{{}, std::move(n), {{}, inv_p}};
}
}  // namespace strata::detail

namespace strata::detail {
/// x with NaN replaced by 0 (nansum's input); its gradient is g * !isnan(x), as PyTorch's.
struct nan_zero_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) { return nan_of(x) ? X(0) : x; }
};
template <> struct grad_rule<nan_zero_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * logical_not(isnan(n.a)); }
};
template <> struct grad_rule<root_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return where(n.a == 0, 0, g * (root_of(n.a, n.op.inv_p - 1.0) * n.op.inv_p));
  }
};

/// The mean over dims with keepdim, as var's shift (not recorded).
template <class E>
Tensor<typename E::value_type> shift_mean(const E& e, int_list dims) {
  const grad_mode_guard off(false);
  return reduce_eval::run(strata::mean(e, dims, true));
}

/// The sum of squared deviations from the mean (and, when mean is given, the mean) over dims
/// of a contiguous float/double tensor whose reduced dims are adjacent, in one pass over x
/// (src/stats.cpp): blocks summed twice while in cache, merged with Chan's formula in double.
/// m2 and mean get the reduced sizes (keepdim as given). False, nothing written, when x is
/// not such a tensor or is empty.
template <element T>
bool central_moments(const Tensor<T>& x, int_list dims, bool keepdim, Tensor<T>& m2, Tensor<T>* mean);

/// The contiguous float/double tensor under e when e is one and no gradient is wanted of it:
/// central_moments applies.
template <class E>
const Tensor<typename E::value_type>* moments_input(const E& e) {
  using V = typename E::value_type;
  if constexpr (std::is_same_v<E, leaf_expr<V>> && (std::is_same_v<V, float> || std::is_same_v<V, double>)) {
    if (!(e.t.requires_grad() && grad_enabled())) return &e.t;
  }
  return nullptr;
}

/// var from e over dims: sum(|d|^2) - |sum(d)|^2 / n over the divisor, d = x - shift, the
/// corrected two-pass sum of squares (exact for any shift, so a large mean costs no accuracy;
/// its gradient is 2 (x - mean) as it should be). The shift is `shift` when given, else the
/// mean; without a shift, a contiguous float/double input without gradient takes
/// central_moments' one pass.
template <class E>
auto variance_of(const E& e, const Tensor<typename E::value_type>* shift, int_list dims, std::int64_t correction,
                 bool keepdim) {
  using V = typename E::value_type;
  using C = compute_t<V>;
  using RC = real_t<C>;
  const double n = reduced_count(e.sizes(), dims);
  const double divisor = std::max(0.0, n - static_cast<double>(correction));
  Tensor<C> s1;
  Tensor<std::conditional_t<is_complex_v<V>, RC, C>> s2;
  bool done = false;
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
    if (const Tensor<V>* x = shift ? nullptr : moments_input(e)) {
      done = central_moments(*x, dims, keepdim, s2, static_cast<Tensor<V>*>(nullptr));
      if (done) s1 = zeros<C>({});
    }
  }
  if (!done) {
    auto d = e - (shift ? *shift : shift_mean(e, dims));
    s1 = strata::sum<C>(d, dims, keepdim);
    if constexpr (is_complex_v<V>) s2 = strata::sum<RC>(abs(d) * abs(d), dims, keepdim);
    else s2 = strata::sum<C>(d * d, dims, keepdim);
  }
  if constexpr (is_complex_v<V>) return cast<real_t<V>>((s2 - abs(s1) * abs(s1) / n) / divisor);
  else return cast<V>((s2 - s1 * s1 / n) / divisor);
}
template <class X>
constexpr void require_var_input() {
  static_assert(!std::is_integral_v<typename node_t<X>::value_type>,
                "std and var only support floating point and complex dtypes.");
}

/// argmax/argmin and max/min along dim (wrapped): values (when wanted) and indices, with the
/// reduced dim kept as size 1. Ties give the first index; NaN counts as the extreme.
template <element T>
void arg_reduce(const Tensor<T>& x, std::int64_t dim, bool largest, const Tensor<T>* values,
                const Tensor<std::int64_t>& indices);
/// The gradient of a value picked at indices along dim: grad laid at the indices, zeros elsewhere.
template <element T>
Tensor<T> pick_backward(const Tensor<T>& grad, const Tensor<std::int64_t>& indices, std::int64_t dim,
                        int_list sizes, bool keepdim);

template <element T>
values_indices<T> extreme_along(const Tensor<T>& x, std::int64_t dim, bool keepdim,
                                                          bool largest, const char* name) {
  static_assert(!is_complex_v<T>, "max and min along a dim are not defined for complex values.");
  const std::int64_t nd = x.dim();
  const std::int64_t d = wrap_dim(dim, nd);
  dim_vector keep = x.sizes().vec();
  if (nd > 0) {
    if (keep[static_cast<std::size_t>(d)] == 0)
      throw index_error(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                        " to have non-zero size.");
    keep[static_cast<std::size_t>(d)] = 1;
  }
  Tensor<T> v = empty<T>(keep);
  Tensor<std::int64_t> i = empty<std::int64_t>(keep);
  arg_reduce<T>(x, d, largest, &v, i);
  if (!keepdim && nd > 0) {
    v = v.squeeze(d);
    i = i.squeeze(d);
  }
  if constexpr (differentiable_v<T>) {
    const dim_vector sizes = x.sizes().vec();
    const Tensor<T> inputs[1] = {x};
    record_function<T>(v, inputs, [i, d, sizes, keepdim](const Tensor<T>& g, std::size_t) {
      return pick_backward<T>(g, i, d, sizes, keepdim);
    });
  }
  return {v, i};
}

template <element T>
Tensor<std::int64_t> arg_extreme(const Tensor<T>& x, std::optional<std::int64_t> dim, bool keepdim, bool largest,
                                 const char* name) {
  static_assert(!is_complex_v<T> && !std::is_same_v<T, bool>, "argmax and argmin need a real, non-bool input.");
  if (!dim) {  // over every element, in row-major order
    if (x.numel() == 0)
      throw error(std::string(name) + "(): Expected reduction dim to be specified for input.numel() == 0.");
    Tensor<std::int64_t> i = empty<std::int64_t>(dim_vector{1});
    arg_reduce<T>(x.reshape({-1}), 0, largest, nullptr, i);
    return i.view({});  // keepdim has no effect without a dim (PyTorch 1.13)
  }
  const std::int64_t nd = x.dim();
  const std::int64_t d = wrap_dim(*dim, nd);
  dim_vector keep = x.sizes().vec();
  if (nd > 0) {
    if (keep[static_cast<std::size_t>(d)] == 0)
      throw index_error(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                        " to have non-zero size.");
    keep[static_cast<std::size_t>(d)] = 1;
  }
  Tensor<std::int64_t> i = empty<std::int64_t>(keep);
  arg_reduce<T>(x, d, largest, nullptr, i);
  return keepdim || nd == 0 ? i : i.squeeze(d);
}

/// A vector norm of an expression, evaluated (its reduction chosen by ord at run time).
template <class E>
auto vector_norm_of(const E& e, double ord, int_list dims, bool keepdim) {
  using V = typename E::value_type;
  using R = real_t<V>;
  using RC = real_t<compute_t<V>>;
  static_assert(!std::is_integral_v<V>,
                "linalg.vector_norm: Expected a floating point or complex tensor as input.");
  if (std::isinf(ord) && numel_of(e.sizes()) == 0) {
    bool reduces_empty = dims.empty();
    const auto mask = reduction_mask(dims, e.dim());
    for (std::size_t d = 0; d < mask.size(); ++d) reduces_empty = reduces_empty || (mask[d] && e.sizes()[d] == 0);
    if (reduces_empty)
      throw error(std::string("linalg.vector_norm cannot compute the ") + (ord > 0 ? "inf" : "-inf") +
                  " norm on an empty tensor because the operation does not have an identity");
  }
  if (ord == 0) return Tensor<R>(cast<R>(strata::sum(e != 0, dims, keepdim)));
  if (ord == 1) return Tensor<R>(cast<R>(strata::sum<RC>(abs(e), dims, keepdim)));
  if (ord == 2) {
    if constexpr (is_complex_v<V>) return Tensor<R>(cast<R>(root_of(strata::sum<RC>(abs(e) * abs(e), dims, keepdim), 0.5)));
    else return Tensor<R>(cast<R>(root_of(strata::sum<RC>(e * e, dims, keepdim), 0.5)));
  }
  if (ord == std::numeric_limits<double>::infinity()) return Tensor<R>(strata::amax(abs(e), dims, keepdim));
  if (ord == -std::numeric_limits<double>::infinity()) return Tensor<R>(strata::amin(abs(e), dims, keepdim));
  // |x|^p through root_op too: its gradient is 0 at x = 0 for every p (PyTorch's masking).
  return Tensor<R>(cast<R>(root_of(strata::sum<RC>(root_of(abs(e), ord), dims, keepdim), 1.0 / ord)));
}
}  // namespace strata::detail

export namespace strata {
/// Values and their int64 indices along a dim: libtorch's std::tuple (`std::get<0>(max(x, 1))`,
/// `auto [v, i] = max(x, 1);`) with Python's names (`max(x, 1).values`).
template <element T>
struct values_indices : std::tuple<Tensor<T>, Tensor<std::int64_t>> {
  using tuple_type = std::tuple<Tensor<T>, Tensor<std::int64_t>>;
  Tensor<T>& values = std::get<0>(*this);               ///< the values picked along the dim
  Tensor<std::int64_t>& indices = std::get<1>(*this);   ///< where they were along the dim
  /// Empty results.
  values_indices() = default;
  /// The pair of results.
  values_indices(Tensor<T> v, Tensor<std::int64_t> i) : tuple_type(std::move(v), std::move(i)) {}
  /// A copy (its names refer to its own elements).
  values_indices(const values_indices& o) : tuple_type(o) {}
  /// A move.
  values_indices(values_indices&& o) noexcept : tuple_type(std::move(o)) {}
  /// Rebinds both handles.
  values_indices& operator=(const values_indices& o) { tuple_type::operator=(o); return *this; }
  /// Rebinds both handles.
  values_indices& operator=(values_indices&& o) noexcept { tuple_type::operator=(std::move(o)); return *this; }
  /// Result I (structured bindings use it, so they need no <tuple> in the user's file).
  template <std::size_t I>
  const auto& get() const& { return std::get<I>(static_cast<const tuple_type&>(*this)); }
  /// Result I.
  template <std::size_t I>
  auto& get() & { return std::get<I>(static_cast<tuple_type&>(*this)); }
  /// Result I, moved out.
  template <std::size_t I>
  auto&& get() && { return std::get<I>(static_cast<tuple_type&&>(*this)); }
};
/// Two results, as libtorch's std::tuple: `auto [v, m] = var_mean(x);`, `std::get<1>(...)`.
template <element A, element B>
struct tensor_pair : std::tuple<Tensor<A>, Tensor<B>> {
  using tuple_type = std::tuple<Tensor<A>, Tensor<B>>;
  Tensor<A>& first = std::get<0>(*this);   ///< the first result (var, std)
  Tensor<B>& second = std::get<1>(*this);  ///< the second result (mean)
  /// Empty results.
  tensor_pair() = default;
  /// The pair of results.
  tensor_pair(Tensor<A> a, Tensor<B> b) : tuple_type(std::move(a), std::move(b)) {}
  /// A copy (its names refer to its own elements).
  tensor_pair(const tensor_pair& o) : tuple_type(o) {}
  /// A move.
  tensor_pair(tensor_pair&& o) noexcept : tuple_type(std::move(o)) {}
  /// Rebinds both handles.
  tensor_pair& operator=(const tensor_pair& o) { tuple_type::operator=(o); return *this; }
  /// Rebinds both handles.
  tensor_pair& operator=(tensor_pair&& o) noexcept { tuple_type::operator=(std::move(o)); return *this; }
  /// Result I (structured bindings use it, so they need no <tuple> in the user's file).
  template <std::size_t I>
  const auto& get() const& { return std::get<I>(static_cast<const tuple_type&>(*this)); }
  /// Result I.
  template <std::size_t I>
  auto& get() & { return std::get<I>(static_cast<tuple_type&>(*this)); }
  /// Result I, moved out.
  template <std::size_t I>
  auto&& get() && { return std::get<I>(static_cast<tuple_type&&>(*this)); }
};

/// Number of nonzero elements over dims (all when empty), as int64.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto count_nonzero(X&& x, int_list dims = {}) {
  return sum(std::forward<X>(x) != 0, dims);
}
/// Sum over dims treating NaN as 0.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto nansum(X&& x, int_list dims = {}, bool keepdim = false) {
  static_assert(!detail::is_complex_v<detail::value_of_t<X>>, "nansum does not support complex inputs");
  return sum(detail::make_unary<detail::nan_zero_op>(std::forward<X>(x)), dims, keepdim);
}
/// Mean over dims of the elements that are not NaN (floating inputs).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto nanmean(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!std::is_integral_v<V> && !detail::is_complex_v<V>,
                "nanmean(): expected input to have floating point dtype.");
  auto e = detail::to_node(std::forward<X>(x));
  return nansum(e, dims, keepdim) / sum(logical_not(isnan(e)), dims, keepdim);
}
/// Variance over dims (all when empty) with Bessel's correction by default (correction = 0:
/// the population variance); complex inputs give a real result. Evaluated, a tensor the size
/// of the result: an expression using it reads it, never recomputes it per element.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto var(X&& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) {
  detail::require_var_input<X>();
  auto e = detail::to_node(std::forward<X>(x));
  return detail::variance_of(e, nullptr, dims, correction, keepdim).eval();
}
/// Standard deviation: sqrt(var(x, dims, correction, keepdim)), evaluated as var is; its
/// gradient is 0 where it is 0.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto std(X&& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) {
  return detail::root_of(var(std::forward<X>(x), dims, correction, keepdim), 0.5).eval();
}
namespace detail {
/// The std method's call (see strata.tensor:methods).
template <class X>
struct std_call<X, void> {
  static auto run(const X& x, int_list dims, std::int64_t correction, bool keepdim) {
    return strata::std(x, dims, correction, keepdim);
  }
};
}  // namespace detail
/// (var, mean) over dims, evaluated; the mean is PyTorch's (recorded for autograd).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto var_mean(X&& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) {
  detail::require_var_input<X>();
  auto e = detail::to_node(std::forward<X>(x));
  using V = typename decltype(e)::value_type;
  using R = detail::real_t<V>;
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
    if (const Tensor<V>* in = detail::moments_input(e)) {  // both from one pass
      Tensor<V> m2, m;
      if (detail::central_moments(*in, dims, keepdim, m2, &m)) {
        const double n = detail::reduced_count(in->sizes(), dims);
        return tensor_pair<R, V>{Tensor<R>(m2 / std::max(0.0, n - static_cast<double>(correction))), m};
      }
    }
  }
  const Tensor<V> m = mean(e, dims, true);
  const Tensor<V> shift = m.detach();
  Tensor<R> v = detail::variance_of(e, &shift, dims, correction, keepdim);
  return tensor_pair<R, V>{v, keepdim ? m : Tensor<V>(m.view(v.sizes()))};
}
/// (std, mean) over dims, evaluated.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto std_mean(X&& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) {
  auto [v, m] = var_mean(std::forward<X>(x), dims, correction, keepdim);
  using R = typename decltype(v)::value_type;
  return tensor_pair<R, typename decltype(m)::value_type>{Tensor<R>(detail::root_of(v, 0.5)), m};
}

namespace linalg {
/// The ord-norm of x over dims (all when empty): ord 2 (default), 1, inf, -inf, 0 (count of
/// nonzeros) or any other p as (sum |x|^p)^(1/p); complex inputs give a real result.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto vector_norm(X&& x, double ord = 2, int_list dims = {}, bool keepdim = false) {
  return detail::vector_norm_of(detail::to_node(std::forward<X>(x)), ord, dims, keepdim);
}
}  // namespace linalg
/// torch.norm for vector norms: linalg::vector_norm(x, p, dims, keepdim).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto norm(X&& x, double p = 2, int_list dims = {}, bool keepdim = false) {
  return linalg::vector_norm(std::forward<X>(x), p, dims, keepdim);
}

/// Index of the largest element (first on ties; NaN counts as largest), over every element
/// (flattened) or along dim.
template <tensor_like X>
Tensor<std::int64_t> argmax(const X& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) {
  return detail::arg_extreme(detail::as_tensor(x), dim, keepdim, true, "argmax");
}
/// Index of the smallest element (first on ties; NaN counts as smallest).
template <tensor_like X>
Tensor<std::int64_t> argmin(const X& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) {
  return detail::arg_extreme(detail::as_tensor(x), dim, keepdim, false, "argmin");
}
/// (values, indices) of the largest elements along dim (first index on ties; NaN propagates).
template <tensor_like X>
values_indices<detail::value_t<X>> max(const X& x, std::int64_t dim, bool keepdim = false) {
  return detail::extreme_along(detail::as_tensor(x), dim, keepdim, true, "max");
}
/// (values, indices) of the smallest elements along dim.
template <tensor_like X>
values_indices<detail::value_t<X>> min(const X& x, std::int64_t dim, bool keepdim = false) {
  return detail::extreme_along(detail::as_tensor(x), dim, keepdim, false, "min");
}
/// The element-wise maximum of two tensors or expressions (torch.max(a, b)): maximum(a, b).
template <tensor_like A, tensor_like B>
auto max(const A& a, const B& b) { return maximum(a, b); }
/// The element-wise minimum (torch.min(a, b)): minimum(a, b).
template <tensor_like A, tensor_like B>
auto min(const A& a, const B& b) { return minimum(a, b); }
/// The largest element (amax over every element; NaN propagates).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto max(X&& x) { return amax(std::forward<X>(x)); }
/// The smallest element.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto min(X&& x) { return amin(std::forward<X>(x)); }
}  // namespace strata

namespace strata::detail {
#define STRATA_STATS_INSTANCES(T)                                                                          \
  extern template void arg_reduce<T>(const Tensor<T>&, std::int64_t, bool, const Tensor<T>*,              \
                                     const Tensor<std::int64_t>&);                                         \
  extern template Tensor<T> pick_backward<T>(const Tensor<T>&, const Tensor<std::int64_t>&, std::int64_t, \
                                             int_list, bool);
STRATA_FOR_EACH_ORDERED_DTYPE(STRATA_STATS_INSTANCES)
#undef STRATA_STATS_INSTANCES
extern template bool central_moments<float>(const Tensor<float>&, int_list, bool, Tensor<float>&, Tensor<float>*);
extern template bool central_moments<double>(const Tensor<double>&, int_list, bool, Tensor<double>&, Tensor<double>*);
}  // namespace strata::detail

// The tuple protocol (structured bindings, std::tuple_size) for the pair results.
template <strata::element T>
struct std::tuple_size<strata::values_indices<T>> : std::integral_constant<std::size_t, 2> {};
template <std::size_t I, strata::element T>
struct std::tuple_element<I, strata::values_indices<T>> : std::tuple_element<I, typename strata::values_indices<T>::tuple_type> {};
template <strata::element A, strata::element B>
struct std::tuple_size<strata::tensor_pair<A, B>> : std::integral_constant<std::size_t, 2> {};
template <std::size_t I, strata::element A, strata::element B>
struct std::tuple_element<I, strata::tensor_pair<A, B>> : std::tuple_element<I, typename strata::tensor_pair<A, B>::tuple_type> {};
