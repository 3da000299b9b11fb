// SPDX-License-Identifier: MIT
// The assignment funnel: what an assignment instantiates in a user's translation unit (the
// leaves' views, the kernel and the calls into src/assign.cpp, which holds the rest).
export module strata.expr:funnel;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;
import :nodes;
import :ops;

namespace strata::detail {
// What does not depend on the expression (shape and overlap checks, the loop's operands and
// plan) is compiled once, in src/assign.cpp: a user's translation unit instantiates only the
// leaves' views, the kernel and the calls below.
/// A tensor as the funnel sees it, whatever its element type.
struct leaf_view {
  const storage* store;
  int_list sizes;
  int_list strides;
  std::int64_t offset;
  char* data;
  std::int64_t itemsize;
  std::uint64_t version = unversioned;  ///< the storage's version when the expression was built
};
template <element T>
leaf_view view_of(const Tensor<T>& t) {
  return leaf_view{&t.storage(), t.sizes(), t.strides(), t.storage_offset(), reinterpret_cast<char*>(t.data_ptr()),
                   sizeof(T)};
}
/// Collects an expression's leaves as views, with the versions they were built at.
struct leaf_collector {
  static constexpr bool with_version = true;
  leaf_view* leaves;
  template <std::size_t I, class T>
  void operator()(const Tensor<T>& t, std::uint64_t version) const {
    leaves[I] = view_of(t);
    leaves[I].version = version;
  }
  template <std::size_t I, class T>
  void operator()(const Tensor<T>& t) const { leaves[I] = view_of(t); }
};
/// Sets ops[k + 1] and layouts[k + 1] to leaf k broadcast to sizes (which the caller has
/// checked they broadcast to), k < count; true when every leaf is contiguous with exactly sizes.
bool broadcast_leaves(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops, layout* layouts);
/// The loop of dst = e, unless it must go through a temporary.
struct assign_plan {
  loop_plan plan;      ///< operand 0 dst, then the leaves (when not via_temporary)
  bool via_temporary;  ///< a leaf overlaps dst so that the result must be evaluated first
};
/// Prepares dst = e for an expression of sizes e_sizes with these leaves: checks that e
/// broadcasts to dst's shape and that dst may be written, sets ops and layouts as
/// broadcast_leaves does, and plans the loop (returned, not assigned: a loop_plan moved is a
/// copy of its inline buffers).
assign_plan prepare_assign(const leaf_view& dst, int_list e_sizes, const leaf_view* leaves, std::size_t count,
                           loop_operand* ops, layout* layouts);
/// The element strides of a fresh output of sizes for these leaves (their memory order); sets
/// ops[1..count] and layouts as broadcast_leaves does, and *contiguous to its result.
dim_vector prepare_fresh(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops,
                         layout* layouts, bool* contiguous);
/// The loop of out = e into out, a fresh tensor laid out by prepare_fresh (ops[0] is set here).
loop_plan plan_fresh(const leaf_view& out, bool contiguous, loop_operand* ops, std::size_t count);

/// The leaves of e as views and as loop operands (operand 0 is the output).
template <class E>
struct leaf_operands {
  static constexpr std::size_t count = E::leaf_count;
  leaf_view leaves[count > 0 ? count : 1];
  loop_operand ops[count + 1];
  layout layouts[count + 1];  // each leaf's view broadcast to the loop's sizes

  explicit leaf_operands(const E& e) { e.template for_each_leaf<0>(leaf_collector{leaves}); }
  /// ... broadcast to sizes (a reduction's input shape).
  leaf_operands(const E& e, int_list sizes) : leaf_operands(e) { broadcast_leaves(sizes, leaves, count, ops, layouts); }
  leaf_operands(const leaf_operands&) = delete;  // ops point into this object
};

/// A fresh tensor holding e, laid out in its inputs' memory order (not recorded).
template <element O, class E>
Tensor<O> eval_unrecorded(const E& e) {
  leaf_operands<E> ls(e);
  bool contiguous = false;
  const dim_vector strides = prepare_fresh(e.sizes(), ls.leaves, ls.count, ls.ops, ls.layouts, &contiguous);
  Tensor<O> out(storage::allocate<O>(numel_of(e.sizes()), init::uninitialized), e.sizes(), strides, 0);
  run_kernel<O>(plan_fresh(view_of(out), contiguous, ls.ops, ls.count), e);
  return out;
}
/// A fresh tensor holding e, recorded for autograd when e's leaves require grad.
template <element O, class E>
Tensor<O> eval_fresh(const E& e) {
  Tensor<O> out = eval_unrecorded<O>(e);
  record(e, out);
  return out;
}

/// The view of a tensor, as the overlap analysis reads it.
template <element T>
layout layout_of(const Tensor<T>& t) {
  return layout{t.sizes().vec(), t.strides().vec(), t.storage_offset()};
}

/// dst = e: e broadcasts to dst's shape; overlapping memory never gives a wrong answer.
template <element O, class E>
void assign_into(const Tensor<O>& dst, const E& e) {
  leaf_operands<E> ls(e);
  const assign_plan a = prepare_assign(view_of(dst), e.sizes(), ls.leaves, ls.count, ls.ops, ls.layouts);
  if (a.via_temporary) {
    dst.copy_(eval_unrecorded<typename E::value_type>(e));  // (same-type copy_ is compiled once)
    return;
  }
  run_kernel<O>(a.plan, e);
}

template <class A, class B>
constexpr void require_ordered() {
  static_assert(!is_complex_v<common_t<A, B>>, "Ordering comparisons (<, <=, >, >=) are not defined for complex values.");
}
template <class A, class B>
constexpr void require_bitwise() {
  static_assert(std::is_integral_v<common_t<A, B>>, "Bitwise operators need integer or bool operands, as in PyTorch.");
}
}  // namespace strata::detail
