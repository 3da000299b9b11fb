// SPDX-License-Identifier: MIT
// Contractions: einsum, and PyTorch's matrix products written as einsums. An einsum is
// parsed (src/linalg_parse.cpp), planned at run time (src/linalg_plan.cpp) and evaluated
// (src/linalg_evaluate.cpp; its backward: src/linalg_backward.cpp), those files sharing the
// implementation partition :internal (linalg_internal.cppm): element-wise-like and small
// contractions are one fused reduce of the operands' product over broadcast views (no
// intermediate), large matmul-shaped ones are batched GEMM calls on OpenBLAS, and three or
// more operands are contracted pairwise in a greedy order. Everything here is compiled once
// per dtype.
export module strata.linalg;
import strata.std;
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
  std::vector<std::uint64_t> versions;              ///< their storages' versions when given
  dim_vector out_shape;                             ///< the result's sizes

  /// The result's sizes.
  int_list sizes() const noexcept { return out_shape; }
  /// Evaluates into a fresh tensor of element type U (recorded when an operand requires grad).
  template <element U>
  Tensor<U> to() const {
    check_versions();
    Tensor<T> out = detail::einsum_run<T>(*spec, operands, nullptr);
    if constexpr (detail::differentiable_v<T>) detail::record_einsum<T>(spec, operands, out);
    return out.template to<U>();
  }
  /// Writes the result into dst (broadcast and converted like copy_); a dst of the result's
  /// dtype and sizes is written in place.
  template <element O>
  void eval_into(const Tensor<O>& dst) const {
    check_versions();
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

 private:
  // An operand written in place since the einsum was built: evaluating would use new values.
  void check_versions() const {
    for (std::size_t k = 0; k < versions.size(); ++k)
      if (versions[k] != operands[k].storage().version())
        detail::throw_stale_input(versions[k], operands[k].storage().version());
  }
};

/// Einstein summation over a list of operands of one dtype, PyTorch's semantics and messages.
template <element T>
einsum_expr<T> einsum(std::string_view equation, const std::vector<Tensor<T>>& operands) {
  const std::vector<dim_vector> sizes = detail::sizes_of_all<T>(operands);
  einsum_expr<T> e;
  e.spec = strata::detail::make_shared<const detail::einsum_spec>(detail::parse_einsum(equation, sizes, e.out_shape));
  e.operands = operands;
  for (const Tensor<T>& t : operands) e.versions.push_back(t.storage().version());
  return e;
}
/// Einstein summation: einsum("ij,jk->ik", a, b); the operands (tensors or expressions) must
/// share one dtype, checked at compile time (PyTorch refuses mixed dtypes at run time).
template <tensor_like First, tensor_like... Rest>
einsum_expr<detail::value_t<First>> einsum(std::string_view equation, const First& first, const Rest&... rest) {
  using T = detail::value_t<First>;
  static_assert((std::is_same_v<T, detail::value_t<Rest>> && ...),
                "einsum: every operand must have the same dtype (PyTorch: expected scalar type ... but found "
                "...); convert with .to<T>() first.");
  einsum_expr<T> e;
  e.operands.reserve(1 + sizeof...(Rest));
  e.operands.push_back(detail::as_tensor(first));
  (e.operands.push_back(detail::as_tensor(rest)), ...);
  for (const Tensor<T>& t : e.operands) e.versions.push_back(t.storage().version());
  const std::vector<dim_vector> sizes = detail::sizes_of_all<T>(e.operands);
  e.spec = strata::detail::make_shared<const detail::einsum_spec>(detail::parse_einsum(equation, sizes, e.out_shape));
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

/// Evaluates (and records) a two-operand product (tensors or expressions) of one dtype.
template <class A, class B, class... Args>
Tensor<value_t<A>> product(einsum_spec (*make)(int_list, int_list, Args...), const A& x, const B& y, Args... args) {
  using T = value_t<A>;
  const Tensor<T> ops[2] = {as_tensor(x), as_tensor(y)};
  auto spec = strata::detail::make_shared<const einsum_spec>(make(ops[0].sizes(), ops[1].sizes(), args...));
  Tensor<T> out = einsum_run<T>(*spec, ops, nullptr);
  if constexpr (differentiable_v<T>) record_einsum<T>(spec, ops, out);
  return out;
}
/// The compile-time form of PyTorch's "expected scalar type Float but found Double".
template <class A, class B>
constexpr void require_same_dtype() {
  static_assert(std::is_same_v<value_t<A>, value_t<B>>,
                "Matrix products need operands of the same dtype (PyTorch: expected scalar type Float but found "
                "Double); convert one with .to<T>() first.");
}
}  // namespace strata::detail

export namespace strata {
/// PyTorch's matmul: dot for 1-D x 1-D, mv, mm, and batched products with batch dims broadcast
/// (a 1-D operand gets a dim added, then removed).
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> matmul(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::matmul_spec, a, b);
}
/// Matrix product of two 2-D tensors.
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> mm(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::mm_spec, a, b);
}
/// Batched matrix product of two 3-D tensors with the same batch size.
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> bmm(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::bmm_spec, a, b);
}
/// Matrix-vector product.
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> mv(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::mv_spec, a, b);
}
/// Inner product of two 1-D tensors (a 0-dim result; no conjugation, as torch.dot).
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> dot(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::dot_spec, a, b);
}
/// Outer product of two 1-D tensors.
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> outer(const A& a, const B& b) {
  detail::require_same_dtype<A, B>();
  return detail::product(&detail::outer_spec, a, b);
}
/// Sums the products of a's last `dims` dims with b's first `dims` dims.
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> tensordot(const A& a, const B& b, std::int64_t dims = 2) {
  detail::require_same_dtype<A, B>();
  return detail::product<A, B, std::int64_t>(&detail::tensordot_spec, a, b, dims);
}
/// Sums the products of a's dims_a with b's dims_b (pairwise).
template <tensor_like A, tensor_like B>
Tensor<detail::value_t<A>> tensordot(const A& a, const B& b, int_list dims_a, int_list dims_b) {
  detail::require_same_dtype<A, B>();
  return detail::product<A, B, int_list, int_list>(&detail::tensordot_spec, a, b, dims_a, dims_b);
}
}  // namespace strata
