// SPDX-License-Identifier: MIT
// Reductions that consume an expression directly: sum((a - b) * (a - b)) reads a and b once
// and writes only the result. Planned with the element-wise planner (the output has stride 0
// along reduced dims); summed with fixed-shape pairwise trees, so results are accurate on
// every axis and bitwise identical for any thread count.
module;

#include "dtype_list.hpp"
export module strata.expr:reduce;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;
import :elementwise;

export namespace strata {
template <class Op, class A, class R, class E>
struct reduce_expr;
}  // namespace strata

namespace strata::detail {
template <class Op, class A, class R, class E>
void record_reduce(const reduce_expr<Op, A, R, E>& x, Tensor<R>& out);
/// Evaluates a reduction without recording it (the backward's own reductions).
struct reduce_eval {
  template <class X>
  static Tensor<typename X::value_type> run(const X& x) {
    Tensor<typename X::value_type> out = empty<typename X::value_type>(x.out_shape);
    x.write(out);
    return out;
  }
};

// ---- reduction operations: identity and combine, on the accumulator type ----
// combine() is the element-wise operation itself (wrap-around for integers, NaN propagation
// for amax/amin), so a reduction and the matching binary op agree bit for bit.
struct prod_r {
  template <class A> static A identity() { return A(1); }
  template <class A> static A combine(A a, A b) { return mul_op::apply<A>(a, b); }
};
struct amax_r {
  template <class A> static A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class A> static A combine(A a, A b) { return maximum_op::apply<A>(a, b); }
  /// The larger, ignoring NaN (the chunk reducer tracks NaN apart): one max instruction.
  template <class A> static A fast(A a, A b) { return a > b ? a : b; }
};
struct amin_r {
  template <class A> static A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class A> static A combine(A a, A b) { return minimum_op::apply<A>(a, b); }
  /// The smaller, ignoring NaN (the chunk reducer tracks NaN apart): one min instruction.
  template <class A> static A fast(A a, A b) { return a < b ? a : b; }
};
// On bool (0 or 1) the bitwise forms are the logical ones, and vectorise as plain and/or.
struct all_r {
  static constexpr bool all_of = true;  ///< all, not any (the engine's in-place truth loop)
  template <class A> static A identity() { return true; }
  template <class A> static A combine(A a, A b) { return a & b; }
};
struct any_r {
  static constexpr bool all_of = false;
  template <class A> static A identity() { return false; }
  template <class A> static A combine(A a, A b) { return a | b; }
};

/// Sum and prod: integers and bool accumulate (and result) in int64, floats in their compute type.
template <class V>
using sum_acc_t = std::conditional_t<std::is_integral_v<V>, std::int64_t, compute_t<V>>;
template <class V>
using sum_result_t = std::conditional_t<std::is_integral_v<V>, std::int64_t, V>;

// The reductions' per-(operation, accumulator) loops, compiled once in src/reduce.cpp for the
// accumulators most reductions have; a user's file instantiates them only for the others.
#define STRATA_REDUCE_LOOPS(Op, A)                                                           \
  extern template A chunk_reduce<Op, A, A>(const A*, std::int64_t);                          \
  extern template void combine_rows<Op, A>(const A* const*, std::int64_t, A*, std::int64_t); \
  extern template void combine_periods<Op, A>(const A*, std::int64_t, A*, std::int64_t);     \
  extern template void fold_rows<Op, A>(const A*, std::int64_t, std::int64_t, A*);            \
  extern template void fold_lanes<Op, A>(const A*, std::int64_t, std::int64_t, A*);            \
  extern template struct reduction_kernels<Op, A>;
STRATA_FOR_EACH_REDUCE_LOOP(STRATA_REDUCE_LOOPS)
#undef STRATA_REDUCE_LOOPS
}  // namespace strata::detail

export namespace strata {
/// A lazy reduction of expression E by Op, accumulating in A, giving R. Evaluated when
/// assigned, read or printed; inside an element-wise expression it is evaluated first, once.
template <class Op, class A, class R, class E>
struct reduce_expr : expression_base<reduce_expr<Op, A, R, E>> {
  using value_type = R;
  static constexpr bool is_strata_reduction = true;
  E e;                    ///< the reduced expression
  dim_vector keep_shape;  ///< e's shape with reduced dims set to 1
  dim_vector out_shape;   ///< the result's shape (keep_shape without the dims dropped)
  bool averaged = false;  ///< divide by the number of reduced elements (mean)

  /// The result's sizes.
  int_list sizes() const noexcept { return out_shape; }

  /// Evaluates into a fresh tensor of element type U.
  template <element U>
  Tensor<U> to() const {
    Tensor<R> out = empty<R>(out_shape);
    write(out);
    detail::record_reduce(*this, out);
    return out.template to<U>();
  }
  friend struct detail::reduce_eval;
  /// True when the reduced expression requires grad (the result then records a node).
  bool requires_grad() const { return e.requires_grad(); }
  /// The dims this reduction sums over, as a list for a reduction of the same tree.
  dim_vector reduced_dims() const {
    dim_vector dims;
    const int_list full = e.sizes();
    for (std::size_t d = 0; d < full.size(); ++d)
      if (keep_shape[d] == 1) dims.push_back(static_cast<std::int64_t>(d));
    return dims;
  }
  /// Writes the result into dst, broadcasting and converting like copy_.
  template <element O>
  void eval_into(const Tensor<O>& dst) const {
    if constexpr (std::is_same_v<O, R>) {
      if (dst.sizes() == sizes()) {
        detail::check_writable(detail::layout_of(dst));
        dst.storage().check_writable();
        return write(dst);
      }
    }
    dst.copy_(to<R>());
  }

 private:
  // Writes the reduction into dst (of shape sizes()).
  void write(const Tensor<R>& dst) const {
    const Tensor<R> keep = dst.is_contiguous() ? dst.view(keep_shape) : empty<R>(keep_shape);
    if constexpr (std::is_same_v<A, R>) {
      run_into(keep);
    } else {
      Tensor<A> acc = empty<A>(keep_shape);
      run_into(acc);
      keep.copy_(acc);
    }
    if (!dst.is_contiguous()) dst.copy_(keep.view(out_shape));
  }

  void run_into(const Tensor<A>& keep) const {
    const int_list full = e.sizes();
    if (keep.numel() == 0) return;
    if (numel_of(full) == 0) {  // nothing to reduce: the identity (0 for sum, 1 for prod)
      keep.fill_(Op::template identity<A>());
      if (averaged) keep.assign(keep / 0.0);  // 0 / 0: NaN, as PyTorch
      return;
    }
    detail::leaf_operands<E> ls(e, full);
    const dim_vector out_strides = detail::broadcast_strides(keep.sizes(), keep.strides(), full);
    ls.ops[0] = detail::loop_operand{reinterpret_cast<char*>(keep.data_ptr()), out_strides, sizeof(A)};
    const detail::kernel<A, E> k{&e};
    const detail::reduction_kernels<Op, A> rows{detail::source_of<Op>(k)};
    detail::reduce_execute(detail::make_plan(full, std::span<const detail::loop_operand>(ls.ops, ls.count + 1)), rows.erased());
    if (averaged) {
      std::int64_t n = 1;
      for (std::size_t d = 0; d < full.size(); ++d)
        if (keep_shape[d] != full[d]) n *= full[d];
      keep.assign(keep / static_cast<double>(n));
    }
  }
};
}  // namespace strata

namespace strata::detail {
/// Checks and wraps reduction dims (empty: all), PyTorch's messages; returns a mask.
small_vec<bool, 16> reduction_mask(int_list dims, std::int64_t ndim);
/// The shapes of a reduction of sizes over dims: keep (sizes with the reduced dims 1) and out
/// (the result's); checks the dims, and with needs_elements (amax, amin) that nothing reduced
/// is empty, PyTorch's messages naming the function. (Compiled once, in src/reduce.cpp.)
void reduce_shapes(int_list sizes, int_list dims, bool keepdim, bool needs_elements, const char* name,
                   dim_vector& keep, dim_vector& out);

template <class Op, class A, class R, class X>
auto make_reduce(X&& x, int_list dims, bool keepdim, const char* name) {
  auto e = to_node(std::forward<X>(x));
  using E = decltype(e);
  dim_vector keep, out;
  reduce_shapes(e.sizes(), dims, keepdim, __is_same(Op, amax_r) || __is_same(Op, amin_r), name, keep, out);
  return reduce_expr<Op, A, R, E>{{}, std::move(e), std::move(keep), std::move(out)};
}

template <class X>
using value_of_t = typename node_t<X>::value_type;

}  // namespace strata::detail

export namespace strata {
/// Sum over dims (all when empty), PyTorch's result types (integers and bool give int64);
/// Acc sets the accumulation and result type (e.g. float128 for ill-conditioned sums).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto sum(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  using R = std::conditional_t<std::is_void_v<Acc>, detail::sum_result_t<V>, Acc>;
  using A = std::conditional_t<std::is_void_v<Acc>, detail::sum_acc_t<V>, detail::compute_t<Acc>>;
  return detail::make_reduce<detail::sum_r, A, R>(std::forward<X>(x), dims, keepdim, "sum");
}
/// Mean over dims (floating and complex inputs only; empty gives NaN).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto mean(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!std::is_integral_v<V>,
                "mean() needs a floating or complex input: cast<float>() an integer expression first.");
  using R = std::conditional_t<std::is_void_v<Acc>, V, Acc>;
  using A = detail::compute_t<R>;
  auto n = detail::make_reduce<detail::sum_r, A, R>(std::forward<X>(x), dims, keepdim, "mean");
  n.averaged = true;
  return n;
}
/// Product over dims (integers and bool give int64; empty gives 1).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto prod(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  using R = std::conditional_t<std::is_void_v<Acc>, detail::sum_result_t<V>, Acc>;
  using A = std::conditional_t<std::is_void_v<Acc>, detail::sum_acc_t<V>, detail::compute_t<Acc>>;
  return detail::make_reduce<detail::prod_r, A, R>(std::forward<X>(x), dims, keepdim, "prod");
}
/// Maximum over dims (NaN propagates; an empty reduction throws).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto amax(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!detail::is_complex_v<V>, "amax is not defined for complex values.");
  return detail::make_reduce<detail::amax_r, detail::compute_t<V>, V>(std::forward<X>(x), dims, keepdim, "amax");
}
/// Minimum over dims (NaN propagates; an empty reduction throws).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto amin(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!detail::is_complex_v<V>, "amin is not defined for complex values.");
  return detail::make_reduce<detail::amin_r, detail::compute_t<V>, V>(std::forward<X>(x), dims, keepdim, "amin");
}
/// True where every element over dims is nonzero (bool).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto all(X&& x, int_list dims = {}, bool keepdim = false) {
  return detail::make_reduce<detail::all_r, bool, bool>(std::forward<X>(x), dims, keepdim, "all");
}
/// True where any element over dims is nonzero (bool).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto any(X&& x, int_list dims = {}, bool keepdim = false) {
  return detail::make_reduce<detail::any_r, bool, bool>(std::forward<X>(x), dims, keepdim, "any");
}

/// PyTorch's at::sum_to: sums x down to `sizes` (leading dims summed away, size-1 target dims
/// summed with keepdim) as one fused pass; the result has exactly `sizes`.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X> && !detail::tensor_operand<X>)
auto sum_to(X&& x, int_list sizes) {
  const int_list s = detail::sizes_of(x);
  const auto n = static_cast<std::int64_t>(s.size()), m = static_cast<std::int64_t>(sizes.size());
  bool ok = m <= n;
  dim_vector dims;
  for (std::int64_t i = 0; ok && i < n; ++i) {
    const std::int64_t j = i - (n - m);  // the target dim aligned from the right
    if (j < 0) { dims.push_back(i); continue; }
    const std::int64_t want = sizes[static_cast<std::size_t>(j)], have = s[static_cast<std::size_t>(i)];
    if (want == have) continue;
    if (want == 1) dims.push_back(i);
    else ok = false;
  }
  if (!ok) throw shape_error("sum_to: size " + to_string(sizes) + " is not expandable to size " + to_string(s));
  using V = detail::value_of_t<X>;
  auto node = detail::make_reduce<detail::sum_r, detail::sum_acc_t<V>, detail::sum_result_t<V>>(
      std::forward<X>(x), dims.empty() ? int_list{} : int_list(dims), true, "sum_to");
  if (dims.empty()) node.keep_shape = s.vec();  // nothing to reduce: an identity pass
  node.out_shape = sizes.vec();
  return node;
}
namespace detail {
/// softmax (log: log_softmax) of a contiguous x along dim into out (x's sizes, contiguous; may
/// be x itself); float and double (src/stats.cpp).
template <element T>
void softmax_along(const Tensor<T>& x, const Tensor<T>& out, std::int64_t dim, bool log);
/// logsumexp of a contiguous x over its dims [first, last) into out (those dims of size 1,
/// contiguous); float and double (src/stats.cpp).
template <element T>
void logsumexp_along(const Tensor<T>& x, std::int64_t first, std::int64_t last, const Tensor<T>& out);
/// Records out = softmax(x, dim) (log: log_softmax) for autograd when x requires grad:
/// the backward is y (g - sum(g y)) for softmax and g - exp(y) sum(g) for log_softmax.
template <element T>
void record_softmax(const Tensor<T>& x, Tensor<T>& out, std::int64_t dim, bool log) {
  if constexpr (differentiable_v<T>) {
    if (!x.requires_grad() || !grad_enabled()) return;
    const Tensor<T> inputs[1] = {x};
    const Tensor<T> y = out.detach();
    const Tensor<T> saved[1] = {y};
    record_function<T>(
        out, inputs,
        [y, dim, log](const Tensor<T>& g, std::size_t) -> Tensor<T> {
          const dim_vector dims{dim};
          if (log) return g - exp(y) * strata::sum(g, dims, true);
          return y * (g - strata::sum(g * y, dims, true));
        },
        saved);
  }
}
/// The softmax family's input: the expression, cast to Acc when given (PyTorch's dtype=).
template <class Acc, class X>
auto softmax_input(X&& x) {
  if constexpr (std::is_void_v<Acc>) return to_node(std::forward<X>(x));
  else return cast<Acc>(std::forward<X>(x));
}
template <class E>
void check_softmax_type() {
  using R = typename E::value_type;
  static_assert(std::is_floating_point_v<compute_t<R>> || std::is_same_v<R, float128>,
                "softmax, log_softmax and logsumexp need a floating input: pass the result type, e.g. "
                "softmax<float>(x, dim), for an integer one.");
}
/// The maximum over dims with keepdim, not recorded (the family's shift cancels out of every
/// gradient); an empty input gives zeros. Infinite maxima become 0 when masked (PyTorch's
/// logsumexp); unmasked (its softmax) a +inf or an all -inf column gives NaN.
template <class E>
Tensor<typename E::value_type> shift_of(const E& e, int_list dims, bool mask_infinite) {
  using R = typename E::value_type;
  const grad_mode_guard off(false);
  const auto mask = reduction_mask(dims, e.dim());
  dim_vector keep = e.sizes().vec();
  for (std::size_t d = 0; d < keep.size(); ++d)
    if (mask[d]) keep[d] = 1;
  if (numel_of(e.sizes()) == 0) return zeros<R>(keep);
  Tensor<R> m = reduce_eval::run(strata::amax(e, dims, true));
  if (mask_infinite) m.assign(where(abs(m) == std::numeric_limits<compute_t<R>>::infinity(), 0, m));
  return m;
}
}  // namespace detail

namespace detail {
/// logsumexp with keepdim of a contiguous float or double tensor (not requiring grad) whose
/// reduced dims are consecutive, by logsumexp_along; nothing for anything else.
template <class E>
std::optional<Tensor<typename E::value_type>> logsumexp_by_kernel(const E& e, const small_vec<bool, 16>& mask) {
  using R = typename E::value_type;
  if constexpr (std::is_same_v<E, leaf_expr<R>> && (std::is_same_v<R, float> || std::is_same_v<R, double>)) {
    const Tensor<R>& x = e.fresh();
    if (x.numel() == 0 || !x.is_contiguous() || (x.requires_grad() && grad_enabled())) return std::nullopt;
    std::size_t first = 0, last = mask.size();  // the reduced dims: [first, last), none outside
    while (first < last && !mask[first]) ++first;
    while (last > first && !mask[last - 1]) --last;
    if (first == last) return std::nullopt;
    for (std::size_t d = first; d < last; ++d)
      if (!mask[d]) return std::nullopt;
    dim_vector keep = x.sizes().vec();
    for (std::size_t d = first; d < last; ++d) keep[d] = 1;
    Tensor<R> r = empty<R>(keep);
    logsumexp_along<R>(x, static_cast<std::int64_t>(first), static_cast<std::int64_t>(last), r);
    return r;
  }
  return std::nullopt;
}
}  // namespace detail

/// softmax (Log: log_softmax) along dim, evaluated when assigned or read. A contiguous float
/// or double tensor takes a kernel (src/stats.cpp): along its last dim one fused pass per row
/// while the row is in cache (max; exp and sum; scale), along another dim the same three passes
/// vectorised across the kept inner elements; anything else runs as the composition: a max
/// pass, a fused exp-sum pass, and the normalising pass written straight into the result.
template <class E, bool Log>
struct softmax_expr : expression_base<softmax_expr<E, Log>> {
  using value_type = typename E::value_type;
  static constexpr bool is_strata_reduction = true;
  E e;               ///< the input (cast to PyTorch's dtype= when given)
  std::int64_t dim;  ///< the wrapped dim

  /// The input's sizes.
  int_list sizes() const noexcept { return e.sizes(); }
  /// True when the input requires grad.
  bool requires_grad() const { return e.requires_grad(); }
  /// Evaluates into a fresh tensor of element type U (recorded when the input requires grad).
  template <element U>
  Tensor<U> to() const {
    using R = value_type;
    if constexpr (has_kernel) {
      if (const Tensor<R>* x = kernel_input()) {
        Tensor<R> out = empty<R>(x->sizes());
        detail::softmax_along<R>(*x, out, dim, Log);
        detail::record_softmax<R>(*x, out, dim, Log);
        return out.template to<U>();
      }
    }
    return Tensor<R>(composition()).template to<U>();
  }
  /// Writes the result into dst (broadcast and converted like copy_).
  template <element O>
  void eval_into(const Tensor<O>& dst) const {
    if constexpr (has_kernel && std::is_same_v<O, value_type>) {
      const Tensor<O>* x = kernel_input();
      if (x && dst.sizes() == sizes() && dst.is_contiguous() &&
          (!dst.storage().is_alias_of(x->storage()) || dst.data_ptr() == x->data_ptr())) {
        detail::check_inplace_source(requires_grad());
        detail::check_writable(detail::layout_of(dst));
        dst.storage().check_writable();
        detail::softmax_along<O>(*x, dst, dim, Log);
        return;
      }
    }
    dst.assign(composition());
  }

 private:
  // The kernel is built for float and double tensors (leaves) only.
  static constexpr bool has_kernel =
      std::is_same_v<E, leaf_expr<value_type>> &&
      (std::is_same_v<value_type, float> || std::is_same_v<value_type, double>);
  // The input when the kernel applies: a contiguous float/double tensor.
  const Tensor<value_type>* kernel_input() const {
    if constexpr (has_kernel) {
      const Tensor<value_type>& x = e.fresh();
      if (x.dim() > 0 && x.is_contiguous() && x.numel() > 0) return &x;
    }
    return nullptr;
  }
  auto composition() const {
    const dim_vector dims{dim};  // owned: an int_list of a braced list would dangle
    const auto m = detail::shift_of(e, dims, false);
    using R = value_type;
    if constexpr (Log) {
      const Tensor<R> ls = log(strata::sum(exp(e - m), dims, true));
      return (e - m) - ls;  // x - (m + ls) would round at m's magnitude
    } else {
      const Tensor<R> sm = strata::sum(exp(e - m), dims, true);
      return exp(e - m) / sm;
    }
  }
};

/// PyTorch's softmax along dim: exp(x - max) / sum(exp(x - max)), numerically stable. Acc is
/// PyTorch's dtype= (the input cast first).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto softmax(X&& x, std::int64_t dim) {
  auto e = detail::softmax_input<Acc>(std::forward<X>(x));
  detail::check_softmax_type<decltype(e)>();
  const std::int64_t d = wrap_dim(dim, e.dim());
  return softmax_expr<decltype(e), false>{{}, std::move(e), d};
}
/// PyTorch's log_softmax along dim: (x - max) - log(sum(exp(x - max))), stable for any
/// magnitude.
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto log_softmax(X&& x, std::int64_t dim) {
  auto e = detail::softmax_input<Acc>(std::forward<X>(x));
  detail::check_softmax_type<decltype(e)>();
  const std::int64_t d = wrap_dim(dim, e.dim());
  return softmax_expr<decltype(e), true>{{}, std::move(e), d};
}
/// PyTorch's logsumexp over dims: log(sum(exp(x))) computed stably (the maximum shifted out).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto logsumexp(X&& x, int_list dims, bool keepdim = false) {
  auto e = detail::to_node(std::forward<X>(x));
  detail::check_softmax_type<decltype(e)>();
  using R = typename decltype(e)::value_type;
  const auto mask = detail::reduction_mask(dims, e.dim());
  std::optional<Tensor<R>> rows = detail::logsumexp_by_kernel(e, mask);
  const Tensor<R> r = rows ? *std::move(rows) : [&] {
    const auto m = detail::shift_of(e, dims, true);
    return Tensor<R>(log(strata::sum(exp(e - m), dims, true)) + m);
  }();
  if (keepdim) return r;
  dim_vector out;
  for (std::size_t d = 0; d < mask.size(); ++d)
    if (!mask[d]) out.push_back(r.size(static_cast<std::int64_t>(d)));
  return r.view(out);
}

/// sum_to of a tensor whose sizes already match is the tensor itself (no copy).
template <element T>
Tensor<detail::sum_result_t<T>> sum_to(const Tensor<T>& t, int_list sizes) {
  if constexpr (std::is_same_v<detail::sum_result_t<T>, T>) {
    if (t.sizes() == sizes) return t;
  }
  return sum_to(leaf_expr<T>{{}, t}, sizes);
}
}  // namespace strata

namespace strata::detail {
/// The backward of a reduction: the output's gradient spread back over the reduced dims
/// (divided by the count for mean, shared among ties for amax/amin, the product of the other
/// elements for prod), then through the reduced tree as for any expression.
template <class Op, class A, class R, class E>
struct reduce_node final : grad_node {
  std::optional<reduce_expr<Op, A, R, E>> x;
  std::array<std::uint64_t, E::leaf_count> versions{};
  Tensor<R> result;  // amax, amin, prod: the output (detached)
  std::uint64_t result_version = 0;
  explicit reduce_node(const reduce_expr<Op, A, R, E>& r) : x(r) {}

  void apply(backward_context& ctx) override {
    const E& e = x->e;
    check_versions(e, versions);
    constexpr bool saves = !std::is_same_v<Op, sum_r>;
    if (saves && result.storage().version() != result_version)
      throw_version_error(dtype_v<R>, result.sizes(), result.storage().version(), result_version);
    const dim_vector full = e.sizes().vec();
    Tensor<R> g = autograd_access<Tensor<R>>::tensor(pending).reshape(x->keep_shape);
    if constexpr (std::is_same_v<Op, sum_r>) {
      // mean: the output's gradient divided by the count once per output element (the same
      // bits as dividing each spread element), so sum and mean share one backward.
      if (x->averaged) g = Tensor<R>(g / (static_cast<double>(numel_of(full)) / static_cast<double>(numel_of(x->keep_shape))));
      backprop_leaves(e, ctx, std::make_tuple(g.expand(full)), [](const auto&, const auto& gr) { return gr; });
    } else {
      g = g.expand(full);
      const Tensor<R> res = result.reshape(x->keep_shape).expand(full);
      const dim_vector dims = x->reduced_dims();
      if constexpr (std::is_same_v<Op, prod_r>) {
        // One zero among the reduced elements: its gradient is the product of the others;
        // two or more: all zero. Otherwise result / x.
        const Tensor<std::int64_t> zeros_k = reduce_eval::run(strata::sum(e == 0, dims, true));
        const Tensor<R> others = reduce_eval::run(strata::prod(where(e == 0, 1, e), dims, true));
        backprop_leaves(e, ctx, std::make_tuple(g, res, zeros_k.expand(full), others.expand(full)),
                        [](const auto& r, const auto& gr, const auto& rr, const auto& zr, const auto& pr) {
                          return gr * conj_of(where(r == 0, (zr == 1) * pr, rr / r));
                        });
      } else {  // amax, amin: shared evenly among the elements equal to the result
        const Tensor<std::int64_t> count = reduce_eval::run(strata::sum(e == leaf_expr<R>{{}, res}, dims, true));
        backprop_leaves(e, ctx, std::make_tuple(g, res, count.expand(full)),
                        [](const auto& r, const auto& gr, const auto& rr, const auto& cr) { return gr / cr * (r == rr); });
      }
    }
  }
  void release() noexcept override {
    x.reset();
    result = Tensor<R>();
  }
};

template <class Op, class A, class R, class E>
void record_reduce(const reduce_expr<Op, A, R, E>& x, Tensor<R>& out) {
  if constexpr (differentiable_v<R> && !std::is_same_v<Op, all_r> && !std::is_same_v<Op, any_r>) {
    if (!grad_enabled() || !x.requires_grad()) return;
    auto n = strata::detail::make_shared<reduce_node<Op, A, R, E>>(x);
    n->versions = versions_of(x.e);
    if constexpr (!std::is_same_v<Op, sum_r>) {
      n->result = out.detach();
      n->result_version = out.storage().version();
    }
    link(x.e, n, out);
  }
}

template <element T>
struct reductions<Tensor<T>> {
  static auto sum_to(const Tensor<T>& t, int_list sizes) { return strata::sum_to(t, sizes); }
};
}  // namespace strata::detail

namespace strata::detail {
extern template void softmax_along<float>(const Tensor<float>&, const Tensor<float>&, std::int64_t, bool);
extern template void softmax_along<double>(const Tensor<double>&, const Tensor<double>&, std::int64_t, bool);
extern template void logsumexp_along<float>(const Tensor<float>&, std::int64_t, std::int64_t, const Tensor<float>&);
extern template void logsumexp_along<double>(const Tensor<double>&, std::int64_t, std::int64_t, const Tensor<double>&);
}  // namespace strata::detail
