// SPDX-License-Identifier: MIT
// The assignment funnel's work that does not depend on the expression: shape and overlap
// checks, the leaves as loop operands, the loop's plan. Compiled once here, so that a user's
// translation unit instantiates only the kernel of each expression it assigns.
module;
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
module strata.expr;
import strata.error;
import strata.shape;
import strata.storage;
import strata.loop;

namespace strata::detail {
namespace {
// The loop of an output and its leaves: one flat dim when all are contiguous with its sizes.
loop_plan plan_of(const leaf_view& out, bool leaves_contiguous, loop_operand* ops, std::size_t count) {
  ops[0] = loop_operand{out.data, out.strides, out.itemsize};
  const std::span<const loop_operand> all(ops, count + 1);
  return leaves_contiguous && is_contiguous(out.sizes, out.strides) ? flat_plan(numel_of(out.sizes), all)
                                                                    : make_plan(out.sizes, all);
}
}  // namespace

bool broadcast_leaves(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops, layout* layouts) {
  bool all_contiguous = true;
  for (std::size_t k = 0; k < count; ++k) {
    const leaf_view& t = leaves[k];
    if (t.version != unversioned && t.version != t.store->version()) throw_stale_input(t.version, t.store->version());
    layout& l = layouts[k + 1];
    // (copied in place: a fresh small_vec moved in is a 64-byte load of a buffer just written
    // by a shorter store, which the store buffer cannot forward: a quarter of a 100-element
    // assignment's time)
    l.sizes.assign(sizes.begin(), sizes.end());
    l.offset = t.offset;
    if (t.sizes == sizes) {
      l.strides.assign(t.strides.begin(), t.strides.end());
      all_contiguous = all_contiguous && is_contiguous(t.sizes, t.strides);
    } else {
      l.strides = broadcast_strides(t.sizes, t.strides, sizes);
      all_contiguous = false;
    }
    ops[k + 1] = loop_operand{t.data, l.strides, t.itemsize};
  }
  return all_contiguous;
}

assign_plan prepare_assign(const leaf_view& dst, int_list e_sizes, const leaf_view* leaves, std::size_t count,
                           loop_operand* ops, layout* layouts) {
  if (!(e_sizes == dst.sizes)) {
    const dim_vector b = broadcast_shapes(dst.sizes, e_sizes);
    if (!(int_list(b) == dst.sizes))
      throw shape_error("output with shape " + to_string(dst.sizes) + " doesn't match the broadcast shape " +
                        to_string(b));
  }
  const layout out{dst.sizes.vec(), dst.strides.vec(), dst.offset};
  check_writable(out);
  dst.store->check_writable();
  const bool leaves_contiguous = broadcast_leaves(dst.sizes, leaves, count, ops, layouts);
  for (std::size_t k = 1; k <= count; ++k) {
    if (!leaves[k - 1].store->is_alias_of(*dst.store)) continue;
    if (needs_temporary(memory_overlap(out, dst.itemsize, layouts[k], ops[k].itemsize), dst.itemsize, ops[k].itemsize))
      return assign_plan{{}, true};
  }
  return assign_plan{plan_of(dst, leaves_contiguous, ops, count), false};
}

dim_vector prepare_fresh(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops,
                         layout* layouts, bool* contiguous) {
  *contiguous = broadcast_leaves(sizes, leaves, count, ops, layouts);
  return fresh_strides(sizes, std::span<const loop_operand>(ops + 1, count));
}

loop_plan plan_fresh(const leaf_view& out, bool contiguous, loop_operand* ops, std::size_t count) {
  return plan_of(out, contiguous, ops, count);
}
}  // namespace strata::detail
