// SPDX-License-Identifier: MIT
// A recorded expression's backward over type-erased tensors: which operands are read from a
// copy, the loop operands, each leaf's gradient planned by its dtype's function, and the one
// pass over the recorded shape. Compiled once; a recorded expression supplies its tape (type
// erased) and its tensors (strata.expr:derivatives).
module;
#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include "dtype_list.hpp"
module strata.expr;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.loop;
import strata.graph;
import strata.tensor;

namespace strata::detail {
#define STRATA_TAPE_TENSOR_INSTANCES(T)                                                                         \
  template grad_buffer clone_tensor<T>(const grad_buffer&);                                                      \
  template bool plan_tensor_grad<T>(const grad_buffer&, grad_buffer&, std::size_t, bool, const leaf_grad_pass&, \
                                    std::span<grad_buffer*>, loop_operand&, dim_vector&, grad_target&);
STRATA_FOR_EACH_DTYPE(STRATA_TAPE_TENSOR_INSTANCES)
#undef STRATA_TAPE_TENSOR_INSTANCES
#define STRATA_TAPE_TENSOR_OF(T) template tape_tensor tape_tensor_of<T>(const Tensor<T>&);
STRATA_FOR_EACH_DTYPE(STRATA_TAPE_TENSOR_OF)
#undef STRATA_TAPE_TENSOR_OF

void backprop(const erased_tape& tp, std::span<tape_tensor> tensors, std::size_t leaves, int_list full_sizes,
              backward_context& ctx) {
  const std::size_t N = leaves;
  const std::size_t M = tensors.size();
  if (N + M > max_operands)
    throw error("strata: backward of an expression with " + std::to_string(N) + " tensors and " + std::to_string(M - N) +
                " saved ones exceeds the engine's " + std::to_string(max_operands) + " operands (tensors plus gradients)");
  // An operand that shares memory with a gradient this backward adds into in place (a user's
  // x.grad() inside the expression) is read from a copy: gradients are written while the
  // operands are still read (by the pass, after each broadcast input's sum_to), and PyTorch's
  // out-of-place accumulation never changes an operand either.
  std::vector<const void*> accumulated;
  for (std::size_t i = 0; i < N; ++i)
    if (grad_buffer* sl = tensors[i].meta ? ctx.slot(*tensors[i].meta) : nullptr; sl && sl->defined && sl->owned)
      accumulated.push_back(sl->data.data());
  for (tape_tensor& t : tensors)
    if (t.t.data.data() && std::find(accumulated.begin(), accumulated.end(), t.t.data.data()) != accumulated.end())
      t.t = t.fns->clone(t.t);

  // The operands the tape reads: the recorded tensors, then the extra ones (after room for
  // the gradients the pass writes).
  const dim_vector full = full_sizes.vec();
  std::vector<loop_operand> ops(N + M);
  std::vector<dim_vector> strides(N + M);
  std::vector<std::int64_t> itemsize(M);
  for (std::size_t j = 0; j < M; ++j) {
    const grad_buffer& b = tensors[j].t;
    itemsize[j] = tensors[j].itemsize;
    strides[N + j] = broadcast_strides(b.view.sizes, b.view.strides, full);
    ops[N + j] = loop_operand{static_cast<char*>(b.data.data()) + b.view.offset * itemsize[j], strides[N + j], itemsize[j]};
  }
  const grad_inputs in{itemsize.data(), M};
  const std::span<const loop_operand> inputs(ops.data() + N, M);

  // Full-shape inputs become targets of one pass; broadcast ones are summed here. Where a
  // tensor appears at several positions, the first (lowest) position assigns a fresh gradient
  // and the later ones add, which is also right when the tape writes gradients in place as it
  // goes, because it writes them in position order (backprop_leaves asserts it).
  std::vector<grad_target> targets(N);
  std::vector<grad_buffer*> written(N);
  std::size_t K = 0;
  const leaf_grad_pass pass{tp.tape, tp.run, N, in, inputs, full};
  for (std::size_t i = 0; i < N; ++i) {
    grad_buffer* slot = tensors[i].meta ? ctx.slot(*tensors[i].meta) : nullptr;
    if (slot && tensors[i].fns->plan(tensors[i].t, *slot, i, tp.reaches[i], pass, written, ops[K], strides[K], targets[K]))
      ++K;
  }
  if (K == 0 || numel_of(full) == 0) return;
  // The inputs move up behind the K targets.
  for (std::size_t j = 0; j < M; ++j) ops[K + j] = inputs[j];
  run_grad_pass(make_plan(full, std::span<const loop_operand>(ops.data(), K + M)),
                grad_pass{tp.tape, tp.run, N, std::span<const grad_target>(targets.data(), K)}, in);
}
}  // namespace strata::detail
