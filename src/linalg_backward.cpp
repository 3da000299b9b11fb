// SPDX-License-Identifier: MIT
// einsum's backward: the gradient of an operand is an einsum of the output's gradient and the
// other operands (conjugated when complex), summed and spread back to the operand's shape (its
// diagonal, for a repeated label). record_einsum is instantiated once per differentiable dtype
// at the end.
module;
#include "dtype_list.hpp"
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>
module strata.linalg;
import :internal;

namespace strata::detail {
namespace {
template <element T>
struct einsum_node final : grad_node {
  std::shared_ptr<const einsum_spec> spec;
  std::vector<Tensor<T>> ops;
  std::vector<std::uint64_t> versions;
  std::vector<std::int64_t> input_of;  // operand -> index into inputs (-1: needs no gradient)

  void apply(backward_context& ctx) override {
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].storage().version() != versions[i])
        throw_version_error(dtype_v<T>, ops[i].sizes(), ops[i].storage().version(), versions[i]);
    const Tensor<T> g = autograd_access<Tensor<T>>::tensor(pending);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (input_of[i] < 0) continue;
      grad_buffer* slot = ctx.slot(*inputs[static_cast<std::size_t>(input_of[i])]);
      if (slot) autograd_access<Tensor<T>>::accumulate(*slot, gradient(i, g));
    }
  }
  void release() noexcept override {
    ops.clear();
    spec.reset();
  }

  Tensor<T> gradient(std::size_t i, const Tensor<T>& g) const {
    const Tensor<T>& x = ops[i];
    const distinct_dims own = distinct(spec->inputs[i], x.sizes(), x.strides());
    einsum_spec s;
    s.inputs.push_back(spec->output);
    std::vector<Tensor<T>> operands{g};
    for (std::size_t j = 0; j < ops.size(); ++j) {
      if (j == i) continue;
      s.inputs.push_back(spec->inputs[j]);
      if constexpr (is_complex_v<T>) operands.push_back(Tensor<T>(strata::conj(ops[j])));
      else operands.push_back(ops[j]);
    }
    for (const std::int64_t l : own.labels) {
      bool seen = false;
      for (const dim_vector& in : s.inputs) seen = seen || contains(in, l);
      if (seen) s.output.push_back(l);
    }
    Tensor<T> r = einsum_run<T>(s, operands, nullptr);
    // Labels the operand broadcast (size 1 here, larger elsewhere) are summed back.
    dim_vector summed;
    for (std::size_t d = 0; d < s.output.size(); ++d)
      if (own.sizes[static_cast<std::size_t>(index_in(own.labels, s.output[d]))] == 1 && r.size(static_cast<std::int64_t>(d)) != 1)
        summed.push_back(static_cast<std::int64_t>(d));
    if (!summed.empty()) r = Tensor<T>(strata::sum<T>(r, summed, true));
    // Labels only this operand has (summed within it), or has at a size the others
    // broadcast, spread the gradient along them.
    dim_vector strides;
    for (const std::int64_t l : own.labels) {
      const std::int64_t at = index_in(s.output, l);
      strides.push_back(at < static_cast<std::int64_t>(s.output.size()) && r.size(at) != 1 ? r.stride(at) : 0);
    }
    const Tensor<T> spread = r.as_strided(own.sizes, strides, r.storage_offset());
    if (own.labels.size() == spec->inputs[i].size()) return spread;
    // A repeated label: the gradient lies on the operand's diagonal.
    const Tensor<T> whole = zeros<T>(x.sizes());
    const distinct_dims diag = distinct(spec->inputs[i], whole.sizes(), whole.strides());
    whole.as_strided(diag.sizes, diag.strides, 0).copy_(spread);
    return whole;
  }
};
}  // namespace

template <element T>
void record_einsum(const std::shared_ptr<const einsum_spec>& spec, std::span<const Tensor<T>> ops, Tensor<T>& out) {
  if (!grad_enabled()) return;
  bool any = false;
  for (const Tensor<T>& t : ops) any = any || t.requires_grad();
  if (!any) return;
  auto n = std::make_shared<einsum_node<T>>();
  n->spec = spec;
  for (const Tensor<T>& t : ops) {
    n->ops.push_back(t.detach());
    n->versions.push_back(t.storage().version());
    n->input_of.push_back(t.requires_grad() ? static_cast<std::int64_t>(n->inputs.size()) : -1);
    if (t.requires_grad()) n->inputs.push_back(autograd_access<Tensor<T>>::meta(t));
  }
  autograd_access<Tensor<T>>::set_grad_fn(out, std::move(n));
}

// ---- compiled once per differentiable dtype ----
#define STRATA_EINSUM_GRAD_INSTANCES(T) \
  template void record_einsum<T>(const std::shared_ptr<const einsum_spec>&, std::span<const Tensor<T>>, Tensor<T>&);
STRATA_FOR_EACH_GRAD_DTYPE(STRATA_EINSUM_GRAD_INSTANCES)
#undef STRATA_EINSUM_GRAD_INSTANCES
}  // namespace strata::detail
