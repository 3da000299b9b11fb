// SPDX-License-Identifier: MIT
// Contractions: einsum, and PyTorch's matrix products written as einsums. An einsum is
// planned at run time (src/linalg.cpp): element-wise-like and small contractions are one
// fused reduce of the operands' product over broadcast views (no intermediate), large
// matmul-shaped ones are batched GEMM calls on OpenBLAS, and three or more operands are
// contracted pairwise in a greedy order. Everything here is compiled once per dtype.
module;
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
export module strata.linalg;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.loop;
import strata.graph;
import strata.tensor;
import strata.expr;

namespace strata::detail {
/// An einsum with its letters resolved: every dim of every operand and of the output named
/// by a label (0-51 the letters A-Z then a-z, 52 + j the j-th dim an ellipsis covers); a
/// label repeated within an operand takes its diagonal.
struct einsum_spec {
  std::vector<dim_vector> inputs;
  dim_vector output;
};
/// Parses an equation for operands of the given sizes, with PyTorch 1.13's checks and
/// messages; returns the spec and stores the result's sizes in out_sizes.
einsum_spec parse_einsum(std::string_view equation, std::span<const dim_vector> sizes, dim_vector& out_sizes);
/// Checks a spec against its operands' sizes (labels broadcast: equal or 1) and returns the
/// result's sizes.
dim_vector einsum_sizes(const einsum_spec& spec, std::span<const dim_vector> sizes);
/// Throws PyTorch's error for operands of different dtypes.
[[noreturn]] void throw_dtype_mismatch(dtype expected, dtype found);

/// Evaluates spec over ops without recording (into `into` when given, of the result's sizes).
template <element T>
Tensor<T> einsum_run(const einsum_spec& spec, std::span<const Tensor<T>> ops, const Tensor<T>* into);
/// How einsum_run would evaluate spec over operands of these sizes: "fused" (one reduce of
/// the product), or its pairwise steps, each "gemm(ij,jk->ik)" or "fused(...)".
std::string einsum_plan(const einsum_spec& spec, std::span<const dim_vector> sizes, dtype t);
/// Records the node of an evaluated einsum (whose backward is an einsum per operand).
template <element T>
void record_einsum(const std::shared_ptr<const einsum_spec>& spec, std::span<const Tensor<T>> ops, Tensor<T>& out);

template <element T>
std::vector<dim_vector> sizes_of_all(std::span<const Tensor<T>> ops) {
  std::vector<dim_vector> s;
  s.reserve(ops.size());
  for (const Tensor<T>& t : ops) s.push_back(t.sizes().vec());
  return s;
}
}  // namespace strata::detail

export namespace strata {
/// A lazy einsum: evaluated when assigned, read or printed (planned then), and inside an
/// element-wise expression evaluated first, once.
template <element T>
struct einsum_expr : expression_base<einsum_expr<T>> {
  using value_type = T;
  static constexpr bool is_strata_reduction = true;
  std::shared_ptr<const detail::einsum_spec> spec;  ///< the resolved equation
  std::vector<Tensor<T>> operands;                  ///< the operands, as given
  dim_vector out_shape;                             ///< the result's sizes

  /// The result's sizes.
  int_list sizes() const noexcept { return out_shape; }
  /// Evaluates into a fresh tensor of element type U (recorded when an operand requires grad).
  template <element U>
  Tensor<U> to() const {
    Tensor<T> out = detail::einsum_run<T>(*spec, operands, nullptr);
    if constexpr (detail::differentiable_v<T>) detail::record_einsum<T>(spec, operands, out);
    return out.template to<U>();
  }
  /// Writes the result into dst (broadcast and converted like copy_); a dst of the result's
  /// dtype and sizes is written in place.
  template <element O>
  void eval_into(const Tensor<O>& dst) const {
    if constexpr (std::is_same_v<O, T>) {
      if (dst.sizes() == sizes()) {
        detail::einsum_run<T>(*spec, operands, &dst);
        return;
      }
    }
    dst.copy_(to<T>());
  }
  /// True when an operand requires grad.
  bool requires_grad() const {
    for (const Tensor<T>& t : operands)
      if (t.requires_grad()) return true;
    return false;
  }
  /// How the einsum will run: "fused" (one reduce of the operands' product), or its pairwise
  /// steps joined by "; ", each "gemm(<step>)" (a BLAS call per batch) or "fused(<step>)".
  std::string plan() const { return detail::einsum_plan(*spec, detail::sizes_of_all<T>(operands), dtype_v<T>); }
};

/// Einstein summation over a list of operands of one dtype, PyTorch's semantics and messages.
template <element T>
einsum_expr<T> einsum(std::string_view equation, const std::vector<Tensor<T>>& operands) {
  const std::vector<dim_vector> sizes = detail::sizes_of_all<T>(operands);
  einsum_expr<T> e;
  e.spec = std::make_shared<const detail::einsum_spec>(detail::parse_einsum(equation, sizes, e.out_shape));
  e.operands = operands;
  return e;
}
/// Einstein summation: einsum("ij,jk->ik", a, b); every operand must have first's dtype.
template <element T, element... U>
einsum_expr<T> einsum(std::string_view equation, const Tensor<T>& first, const Tensor<U>&... rest) {
  const std::vector<dim_vector> sizes{first.sizes().vec(), rest.sizes().vec()...};
  einsum_expr<T> e;
  e.spec = std::make_shared<const detail::einsum_spec>(detail::parse_einsum(equation, sizes, e.out_shape));
  e.operands.reserve(1 + sizeof...(U));
  e.operands.push_back(first);
  const auto add = [&e]<class V>(const Tensor<V>& t) {
    if constexpr (std::is_same_v<V, T>) e.operands.push_back(t);
    else detail::throw_dtype_mismatch(dtype_v<T>, dtype_v<V>);
  };
  (add(rest), ...);
  return e;
}
}  // namespace strata

namespace strata::detail {
/// The specs of PyTorch's matrix products (checked with their messages); the operands'
/// sizes in, the spec out.
einsum_spec matmul_spec(int_list a, int_list b);
einsum_spec mm_spec(int_list a, int_list b);
einsum_spec bmm_spec(int_list a, int_list b);
einsum_spec mv_spec(int_list a, int_list b);
einsum_spec dot_spec(int_list a, int_list b);
einsum_spec outer_spec(int_list a, int_list b);
einsum_spec tensordot_spec(int_list a, int_list b, int_list dims_a, int_list dims_b);
einsum_spec tensordot_spec(int_list a, int_list b, std::int64_t dims);

/// Throws PyTorch's error for a product `name` of operands of different dtypes.
[[noreturn]] void throw_product_dtype(std::string_view name, int_list a, int_list b, dtype ta, dtype tb);

/// Evaluates (and records) a two-operand product of one dtype.
template <element T, element U, class... Args>
Tensor<T> product(std::string_view name, einsum_spec (*make)(int_list, int_list, Args...), const Tensor<T>& a,
                  const Tensor<U>& b, Args... args) {
  auto spec = std::make_shared<const einsum_spec>(make(a.sizes(), b.sizes(), args...));
  if constexpr (!std::is_same_v<T, U>) {
    throw_product_dtype(name, a.sizes(), b.sizes(), dtype_v<T>, dtype_v<U>);
  } else {
    const Tensor<T> ops[2] = {a, b};
    Tensor<T> out = einsum_run<T>(*spec, ops, nullptr);
    if constexpr (differentiable_v<T>) record_einsum<T>(spec, ops, out);
    return out;
  }
}
}  // namespace strata::detail

export namespace strata {
/// PyTorch's matmul: dot for 1-D x 1-D, mv, mm, and batched products with batch dims broadcast
/// (a 1-D operand gets a dim added, then removed).
template <element T, element U>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("matmul", &detail::matmul_spec, a, b); }
/// Matrix product of two 2-D tensors.
template <element T, element U>
Tensor<T> mm(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("mm", &detail::mm_spec, a, b); }
/// Batched matrix product of two 3-D tensors with the same batch size.
template <element T, element U>
Tensor<T> bmm(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("bmm", &detail::bmm_spec, a, b); }
/// Matrix-vector product.
template <element T, element U>
Tensor<T> mv(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("mv", &detail::mv_spec, a, b); }
/// Inner product of two 1-D tensors (a 0-dim result; no conjugation, as torch.dot).
template <element T, element U>
Tensor<T> dot(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("dot", &detail::dot_spec, a, b); }
/// Outer product of two 1-D tensors.
template <element T, element U>
Tensor<T> outer(const Tensor<T>& a, const Tensor<U>& b) { return detail::product("outer", &detail::outer_spec, a, b); }
/// Sums the products of a's last `dims` dims with b's first `dims` dims.
template <element T, element U>
Tensor<T> tensordot(const Tensor<T>& a, const Tensor<U>& b, std::int64_t dims = 2) {
  return detail::product<T, U, std::int64_t>("tensordot", &detail::tensordot_spec, a, b, dims);
}
/// Sums the products of a's dims_a with b's dims_b (pairwise).
template <element T, element U>
Tensor<T> tensordot(const Tensor<T>& a, const Tensor<U>& b, int_list dims_a, int_list dims_b) {
  return detail::product<T, U, int_list, int_list>("tensordot", &detail::tensordot_spec, a, b, dims_a, dims_b);
}
}  // namespace strata
