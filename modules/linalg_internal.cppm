// SPDX-License-Identifier: MIT
// What strata.linalg's implementation files share (src/linalg_parse.cpp, linalg_plan.cpp,
// linalg_evaluate.cpp, linalg_backward.cpp): the label helpers, an operand's distinct labels,
// and the planner's types and functions that evaluation runs. An implementation partition:
// imported by those files only, never by the interface, so importers of strata.linalg see
// none of it. Declarations only where it can be (the definitions live in the .cpp files):
// consumers of the installed package compile this file again.
module strata.linalg:internal;
import strata.std;
import strata.dtype;
import strata.shape;

namespace strata::detail {
struct einsum_spec;  // modules/linalg.cppm

// ---- labels (src/linalg_parse.cpp): 0-51 the letters A-Z then a-z, 52 + j ellipsis dim j ----
/// A label's letter (a digit for an ellipsis dim: only in plan descriptions).
char label_char(std::int64_t l);
bool contains(const dim_vector& v, std::int64_t x);
/// The position of x in v (v.size() when absent).
std::int64_t index_in(const dim_vector& v, std::int64_t x);
/// The largest label of a spec.
std::int64_t max_label(const einsum_spec& spec);
/// Terms a < b of a contraction's live list are replaced by their result (at the end).
template <class X>
void replace_pair(std::vector<X>& live, std::size_t a, std::size_t b, X merged) {
  live.erase(live.begin() + static_cast<std::ptrdiff_t>(b));
  live.erase(live.begin() + static_cast<std::ptrdiff_t>(a));
  live.push_back(std::move(merged));
}

// ---- the planner (src/linalg_plan.cpp) ----
/// The labels of an operand after its diagonals: each distinct label once, first appearance
/// first, with its size and summed stride (0 when strides is empty).
struct distinct_dims {
  dim_vector labels, sizes, strides;
};
distinct_dims distinct(const dim_vector& labels, int_list sizes, int_list strides);

/// A term of the contraction: distinct labels and their own sizes (1 or the label's size).
struct term_shape {
  dim_vector labels, sizes;
  std::int64_t numel() const;
  /// The size of label l here (0 when absent).
  std::int64_t size_of(std::int64_t l) const;
  /// The size of label l in the broadcast of this term and o.
  std::int64_t broadcast_size(const term_shape& o, std::int64_t l) const;
};

/// How two terms contract: the labels by role, after dropping a term's size-1 labels that
/// the other term broadcasts.
struct pair_roles {
  dim_vector batch, rows, cols, inner;  // in both and kept; a only, kept; b only, kept; both, summed
  dim_vector drop_a, drop_b;            // size-1 labels the other term has at full size
  dim_vector sum_a, sum_b;              // in one term only and summed: reduced before the product
  std::int64_t m = 1, n = 1, k = 1, batches = 1;
};
/// The roles of a and b's labels in a contraction keeping `keep`.
pair_roles roles_of(const term_shape& a, const term_shape& b, const dim_vector& keep);

/// The dtypes with a BLAS GEMM.
constexpr bool is_blas(dtype t) {
  return t == dtype::float32 || t == dtype::float64 || t == dtype::complex64 || t == dtype::complex128;
}
/// The BLAS's sizes and leading dimensions are ints.
constexpr std::int64_t int_max = std::numeric_limits<int>::max();

/// One pairwise step: terms a and b (indices into the live list) become `result` (appended).
struct pair_step {
  std::size_t a, b;
  dim_vector result;
  bool gemm;
};
/// The program: one fused reduce of everything, or pairwise steps.
struct einsum_program {
  bool fused = true;
  std::vector<pair_step> steps;
};
/// The program for terms `live` producing `output`, of dtype t; full: each label's size.
einsum_program plan_program(std::vector<term_shape> live, const dim_vector& output, dtype t,
                            const std::vector<std::int64_t>& full);
/// Each label's size (1 when every operand has it at size 1), indexed by label.
std::vector<std::int64_t> full_sizes(const einsum_spec& spec, std::span<const dim_vector> sizes);
}  // namespace strata::detail
