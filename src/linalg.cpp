// SPDX-License-Identifier: MIT
// einsum's parser, planner and evaluator, the specs of the matrix products, and einsum's
// backward; instantiated once per dtype at the end.
//
// An einsum names every dim by a label. Each operand first becomes a view with one dim per
// distinct label (a repeated label is a diagonal: its strides add up). Then either
//  - one fused reduce: every operand is broadcast over the whole label space (stride 0 where
//    it lacks a label) and the product of the operands is summed over the labels the output
//    lacks, in the engine's reduction (no intermediate; pairwise-accurate, deterministic), or
//  - pairwise contractions in a greedy order (opt_einsum's: least memory first), each a
//    batched GEMM on the BLAS when it is large and matrix-shaped, else a fused reduce of two.
// The planner decides from labels and sizes alone, so plan() can describe what will run.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#include "blas.hpp"
#include "parallel.hpp"
module strata.linalg;

namespace strata::detail {
namespace {
constexpr std::int64_t letters = 52;  // labels 0-51: A-Z, a-z; 52 + j: ellipsis dim j
constexpr std::int64_t ellipsis = -1;  // while parsing

std::int64_t letter_label(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
char label_char(std::int64_t l) {
  if (l < 26) return static_cast<char>('A' + l);
  if (l < letters) return static_cast<char>('a' + (l - 26));
  return static_cast<char>('0' + (l - letters) % 10);  // only in plan descriptions
}
std::string str(std::int64_t v) { return std::to_string(v); }

bool contains(const dim_vector& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::int64_t index_in(const dim_vector& v, std::int64_t x) {
  return static_cast<std::int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}
/// Terms a < b of a contraction's live list are replaced by their result (at the end).
template <class X>
void replace_pair(std::vector<X>& live, std::size_t a, std::size_t b, X merged) {
  live.erase(live.begin() + static_cast<std::ptrdiff_t>(b));
  live.erase(live.begin() + static_cast<std::ptrdiff_t>(a));
  live.push_back(std::move(merged));
}
std::int64_t max_label(const einsum_spec& spec) {
  std::int64_t m = 0;
  for (const dim_vector& in : spec.inputs)
    for (const std::int64_t l : in) m = std::max(m, l);
  for (const std::int64_t l : spec.output) m = std::max(m, l);
  return m;
}

// The labels of an operand after its diagonals: each distinct label once, first appearance
// first, with its size and summed stride.
struct distinct_dims {
  dim_vector labels, sizes, strides;
};
distinct_dims distinct(const dim_vector& labels, int_list sizes, int_list strides) {
  distinct_dims d;
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const std::int64_t at = index_in(d.labels, labels[k]);
    if (at < static_cast<std::int64_t>(d.labels.size())) {
      d.strides[static_cast<std::size_t>(at)] += strides.empty() ? 0 : strides[k];
      continue;
    }
    d.labels.push_back(labels[k]);
    d.sizes.push_back(sizes[k]);
    d.strides.push_back(strides.empty() ? 0 : strides[k]);
  }
  return d;
}
}  // namespace

// ---- parsing and size checks (PyTorch 1.13's einsum, message for message) ----
einsum_spec parse_einsum(std::string_view equation, std::span<const dim_vector> sizes, dim_vector& out_sizes) {
  const std::size_t num_ops = sizes.size();
  if (num_ops == 0) throw error("einsum(): must provide at least one operand");
  const std::size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);

  std::vector<dim_vector> op_labels(num_ops);
  bool found_ell = false;
  std::size_t cur = 0;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ' ') continue;
    if (c == '.') {
      if (found_ell)
        throw error("einsum(): found '.' for operand " + str(static_cast<std::int64_t>(cur)) +
                    " for which an ellipsis was already found");
      if (!(i + 2 < lhs.size() && lhs[++i] == '.' && lhs[++i] == '.'))
        throw error("einsum(): found '.' for operand " + str(static_cast<std::int64_t>(cur)) +
                    " that is not part of any ellipsis");
      op_labels[cur].push_back(ellipsis);
      found_ell = true;
    } else if (c == ',') {
      if (++cur >= num_ops) throw error("einsum(): fewer operands were provided than specified in the equation");
      found_ell = false;
    } else {
      const std::int64_t l = letter_label(c);
      if (l < 0)
        throw error("einsum(): invalid subscript given at index " + str(static_cast<std::int64_t>(i)) +
                    " in the equation string, subscripts must be in [a-zA-Z]");
      op_labels[cur].push_back(l);
    }
  }
  if (cur != num_ops - 1) throw error("einsum(): more operands were provided than specified in the equation");

  std::int64_t count[letters] = {};
  std::int64_t ell_dims = 0;  // the most dims any ellipsis covers
  for (std::size_t i = 0; i < num_ops; ++i) {
    const auto ndims = static_cast<std::int64_t>(sizes[i].size());
    auto nlabels = static_cast<std::int64_t>(op_labels[i].size());
    bool has_ell = false;
    for (const std::int64_t l : op_labels[i]) {
      if (l == ellipsis) {
        --nlabels;
        has_ell = true;
        ell_dims = std::max(ell_dims, ndims - nlabels);
      } else {
        ++count[l];
      }
    }
    if (has_ell && nlabels > ndims)
      throw error("einsum(): the number of subscripts in the equation (" + str(nlabels) +
                  ") is more than the number of dimensions (" + str(ndims) + ") for operand " +
                  str(static_cast<std::int64_t>(i)));
    if (!has_ell && nlabels != ndims)
      throw error("einsum(): the number of subscripts in the equation (" + str(nlabels) +
                  ") does not match the number of dimensions (" + str(ndims) + ") for operand " +
                  str(static_cast<std::int64_t>(i)) + " and no ellipsis was given");
  }

  einsum_spec spec;
  if (arrow == std::string_view::npos) {  // implicit: the ellipsis, then labels seen once
    for (std::int64_t j = 0; j < ell_dims; ++j) spec.output.push_back(letters + j);
    for (std::int64_t l = 0; l < letters; ++l)
      if (count[l] == 1) spec.output.push_back(l);
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    bool in_output[letters] = {};
    found_ell = false;
    for (std::size_t i = 0; i < rhs.size(); ++i) {
      const auto c = static_cast<unsigned char>(rhs[i]);
      if (c == ' ') continue;
      if (c == '.') {
        if (found_ell) throw error("einsum(): found '.' for output but an ellipsis (...) was already found");
        if (!(i + 2 < rhs.size() && rhs[++i] == '.' && rhs[++i] == '.'))
          throw error("einsum(): found '.' for output that is not part of any ellipsis (...)");
        for (std::int64_t j = 0; j < ell_dims; ++j) spec.output.push_back(letters + j);
        found_ell = true;
        continue;
      }
      const std::int64_t l = letter_label(c);
      if (l < 0)
        throw error("einsum(): invalid subscript given at index " + str(static_cast<std::int64_t>(lhs.size() + 2 + i)) +
                    " in the equation string, subscripts must be in [a-zA-Z]");
      if (count[l] == 0 || in_output[l])
        throw error(std::string("einsum(): output subscript ") + static_cast<char>(c) +
                    (in_output[l] ? " appears more than once in the output"
                                  : " does not appear in the equation for any input operand"));
      in_output[l] = true;
      spec.output.push_back(l);
    }
  }
  // An operand's ellipsis covers the last of the ell_dims dims (aligned from the right).
  for (std::size_t i = 0; i < num_ops; ++i) {
    dim_vector labels;
    const auto covered = static_cast<std::int64_t>(sizes[i].size() + 1 - op_labels[i].size());
    for (const std::int64_t l : op_labels[i]) {
      if (l != ellipsis) { labels.push_back(l); continue; }
      for (std::int64_t j = 0; j < covered; ++j) labels.push_back(letters + ell_dims - covered + j);
    }
    spec.inputs.push_back(std::move(labels));
  }
  out_sizes = einsum_sizes(spec, sizes);
  return spec;
}

dim_vector einsum_sizes(const einsum_spec& spec, std::span<const dim_vector> sizes) {
  std::vector<std::int64_t> label_size(static_cast<std::size_t>(max_label(spec) + 1), 1);
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const dim_vector& labels = spec.inputs[i];
    const dim_vector& s = sizes[i];
    dim_vector seen;
    std::int64_t dim = 0, ell_start = -1;  // PyTorch's dim numbering (after diagonals)
    for (std::size_t k = 0; k < labels.size(); ++k) {
      const std::int64_t l = labels[k], size = s[k];
      const std::int64_t prev = index_in(seen, l);
      if (prev < static_cast<std::int64_t>(seen.size())) {
        const std::int64_t first = s[static_cast<std::size_t>(index_in(labels, l))];
        if (size != first)
          throw error(std::string("einsum(): subscript ") + label_char(l) + " is repeated for operand " +
                      str(static_cast<std::int64_t>(i)) + " but the sizes don't match, " + str(size) + " != " + str(first));
        continue;
      }
      seen.push_back(l);
      const bool ell = l >= letters;
      if (ell && ell_start < 0) ell_start = dim;
      std::int64_t& known = label_size[static_cast<std::size_t>(l)];
      if (size != 1) {
        if (known != 1 && known != size) {
          if (ell)
            throw error("einsum(): dimension " + str(ell_start + (l - letters)) + " covered by ellipsis in operand " +
                        str(static_cast<std::int64_t>(i)) + "has size " + str(size) +
                        " which does not broadcast with previously seen ellipsis with size " + str(known) +
                        " for the respective dimension");
          throw error(std::string("einsum(): subscript ") + label_char(l) + " has size " + str(size) + " for operand " +
                      str(static_cast<std::int64_t>(i)) + " which does not broadcast with previously seen size " +
                      str(known));
        }
        known = size;
      }
      ++dim;
    }
  }
  dim_vector out;
  for (const std::int64_t l : spec.output) out.push_back(label_size[static_cast<std::size_t>(l)]);
  return out;
}

// ---- planning ----
namespace {
/// A term of the contraction: distinct labels and their own sizes (1 or the label's size).
struct term_shape {
  dim_vector labels, sizes;
  std::int64_t numel() const { return numel_of(sizes); }
  /// The size of label l here (0 when absent).
  std::int64_t size_of(std::int64_t l) const {
    const std::int64_t at = index_in(labels, l);
    return at < static_cast<std::int64_t>(labels.size()) ? sizes[static_cast<std::size_t>(at)] : 0;
  }
  /// The size of label l in the broadcast of this term and o.
  std::int64_t broadcast_size(const term_shape& o, std::int64_t l) const {
    const std::int64_t x = size_of(l), y = o.size_of(l);
    return x == 1 || (x == 0 && !contains(labels, l)) ? (y == 0 && !contains(o.labels, l) ? 1 : y) : x;
  }
};

/// How two terms contract: the labels by role, after dropping a term's size-1 labels that
/// the other term broadcasts.
struct pair_roles {
  dim_vector batch, rows, cols, inner;  // in both and kept; a only, kept; b only, kept; both, summed
  dim_vector drop_a, drop_b;            // size-1 labels the other term has at full size
  dim_vector sum_a, sum_b;              // in one term only and summed: reduced before the product
  std::int64_t m = 1, n = 1, k = 1, batches = 1;
};

pair_roles roles_of(const term_shape& a, const term_shape& b, const dim_vector& keep) {
  pair_roles r;
  for (std::size_t i = 0; i < a.labels.size(); ++i) {
    const std::int64_t l = a.labels[i], sa = a.sizes[i], sb = b.size_of(l);
    if (sa == 1 && sb > 1) r.drop_a.push_back(l);
  }
  for (std::size_t i = 0; i < b.labels.size(); ++i) {
    const std::int64_t l = b.labels[i], sb = b.sizes[i], sa = a.size_of(l);
    if (sb == 1 && sa > 1) r.drop_b.push_back(l);
  }
  const auto in_a = [&](std::int64_t l) { return contains(a.labels, l) && !contains(r.drop_a, l); };
  const auto in_b = [&](std::int64_t l) { return contains(b.labels, l) && !contains(r.drop_b, l); };
  for (std::size_t i = 0; i < a.labels.size(); ++i) {
    const std::int64_t l = a.labels[i];
    if (!in_a(l)) continue;
    const bool kept = contains(keep, l);
    if (in_b(l)) {
      (kept ? r.batch : r.inner).push_back(l);
      (kept ? r.batches : r.k) *= a.sizes[i];
    } else if (kept) {
      r.rows.push_back(l);
      r.m *= a.sizes[i];
    } else {
      r.sum_a.push_back(l);
    }
  }
  for (std::size_t i = 0; i < b.labels.size(); ++i) {
    const std::int64_t l = b.labels[i];
    if (!in_b(l) || in_a(l)) continue;
    if (contains(keep, l)) {
      r.cols.push_back(l);
      r.n *= b.sizes[i];
    } else {
      r.sum_b.push_back(l);
    }
  }
  return r;
}

constexpr bool is_blas(dtype t) {
  return t == dtype::float32 || t == dtype::float64 || t == dtype::complex64 || t == dtype::complex128;
}
constexpr std::int64_t int_max = std::numeric_limits<int>::max();

/// A contraction goes to the BLAS when it is matrix-shaped and big enough that the GEMM's
/// blocking pays: every side at least 8 and 32^3 multiply-adds per matrix.
bool use_gemm(const pair_roles& r, dtype t) {
  return is_blas(t) && r.m >= 8 && r.n >= 8 && r.k >= 8 && r.m * r.n * r.k >= 32768 && r.m <= int_max &&
         r.n <= int_max && r.k <= int_max;
}

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

/// GEMM steps count their multiply-adds at a sixteenth: a tuned GEMM runs about that many
/// times faster per multiply-add than a reduce that reads its operands from memory.
constexpr std::int64_t gemm_speedup = 16;

einsum_program plan_program(std::vector<term_shape> live, const dim_vector& output, dtype t,
                            const std::vector<std::int64_t>& full) {
  einsum_program prog;
  const std::size_t n = live.size();
  if (n == 1) return prog;
  std::int64_t fused_cost = 1;
  {
    dim_vector all;
    for (const term_shape& s : live)
      for (const std::int64_t l : s.labels)
        if (!contains(all, l)) all.push_back(l);
    for (const std::int64_t l : all) fused_cost *= std::max<std::int64_t>(full[static_cast<std::size_t>(l)], 1);
  }
  double pair_cost = 0;
  while (live.size() > 1) {
    std::size_t bi = 0, bj = 1;
    double best_mem = 0, best_flops = 0;
    bool best_shares = false, found = false;
    dim_vector best_result;
    for (std::size_t i = 0; i < live.size(); ++i) {
      for (std::size_t j = i + 1; j < live.size(); ++j) {
        dim_vector needed = output;
        for (std::size_t o = 0; o < live.size(); ++o)
          if (o != i && o != j)
            for (const std::int64_t l : live[o].labels) needed.push_back(l);
        dim_vector result, both;
        bool shares = false;
        for (const term_shape* s : {&live[i], &live[j]})
          for (const std::int64_t l : s->labels) {
            if (contains(both, l)) { shares = true; continue; }
            both.push_back(l);
            if (contains(needed, l)) result.push_back(l);
          }
        double flops = 1, out_size = 1;
        for (const std::int64_t l : both) flops *= static_cast<double>(full[static_cast<std::size_t>(l)]);
        for (const std::int64_t l : result) out_size *= static_cast<double>(full[static_cast<std::size_t>(l)]);
        const double mem = out_size - static_cast<double>(live[i].numel()) - static_cast<double>(live[j].numel());
        const bool better = !found || (shares && !best_shares) ||
                            (shares == best_shares && (mem < best_mem || (mem == best_mem && flops < best_flops)));
        if (better) {
          found = true;
          bi = i, bj = j, best_mem = mem, best_flops = flops, best_shares = shares;
          best_result = result;
        }
      }
    }
    if (live.size() == 2) best_result = output;  // the last step produces the output, in order
    const pair_roles r = roles_of(live[bi], live[bj], best_result);
    const bool gemm = use_gemm(r, t);
    pair_cost += gemm ? best_flops / gemm_speedup : best_flops;
    prog.steps.push_back({bi, bj, best_result, gemm});
    term_shape merged;
    for (const std::int64_t l : best_result) {
      merged.labels.push_back(l);
      merged.sizes.push_back(live[bi].broadcast_size(live[bj], l));
    }
    replace_pair(live, bi, bj, std::move(merged));
  }
  // A single fused reduce is best unless the pairwise plan is cheaper (a GEMM, or a product
  // that contracting early keeps small); the engine's loops take at most 63 operands.
  prog.fused = n <= 32 && static_cast<double>(fused_cost) <= pair_cost;
  if (prog.fused) prog.steps.clear();
  return prog;
}

std::vector<std::int64_t> full_sizes(const einsum_spec& spec, std::span<const dim_vector> sizes) {
  std::vector<std::int64_t> full(static_cast<std::size_t>(max_label(spec) + 1), 1);
  for (std::size_t i = 0; i < spec.inputs.size(); ++i)
    for (std::size_t k = 0; k < spec.inputs[i].size(); ++k)
      if (sizes[i][k] != 1) full[static_cast<std::size_t>(spec.inputs[i][k])] = sizes[i][k];
  return full;
}

std::vector<term_shape> term_shapes(const einsum_spec& spec, std::span<const dim_vector> sizes) {
  std::vector<term_shape> shapes;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const distinct_dims d = distinct(spec.inputs[i], sizes[i], {});
    shapes.push_back({d.labels, d.sizes});
  }
  return shapes;
}

std::string labels_text(const dim_vector& labels) {
  std::string s;
  for (const std::int64_t l : labels) s += label_char(l);
  return s;
}
}  // namespace

std::string einsum_plan(const einsum_spec& spec, std::span<const dim_vector> sizes, dtype t) {
  std::vector<term_shape> live = term_shapes(spec, sizes);
  const einsum_program prog = plan_program(live, spec.output, t, full_sizes(spec, sizes));
  if (prog.fused) return "fused";
  std::string text;
  for (const pair_step& s : prog.steps) {
    if (!text.empty()) text += "; ";
    text += std::string(s.gemm ? "gemm(" : "fused(") + labels_text(live[s.a].labels) + "," +
            labels_text(live[s.b].labels) + "->" + labels_text(s.result) + ")";
    term_shape merged{s.result, {}};
    replace_pair(live, s.a, s.b, std::move(merged));
  }
  return text;
}

// ---- evaluation ----
namespace {
template <class T>
using acc_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, compute_t<T>>;

// Integer products and sums wrap (as PyTorch's do) without signed overflow.
template <class A>
A times(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else return a * b;
}
struct plus_r {
  template <class A> static A identity() { return A(0); }
  template <class A> static A combine(A a, A b) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    else return a + b;
  }
};

// Rows of operands: n elements s bytes apart (s == sizeof(T): contiguous, 0: broadcast).
template <class A, class T>
A element_at(const char* p, std::int64_t s, std::int64_t j) {
  return convert<A>(*reinterpret_cast<const T*>(p + j * s));
}
// buf[j] = x[j] * y[j] (or x[j] alone when y is null), the common strides as plain loops.
template <class A, class T>
void load_product(A* __restrict buf, const char* x, std::int64_t sx, const char* y, std::int64_t sy, std::int64_t n) {
  constexpr auto w = static_cast<std::int64_t>(sizeof(T));
  const T* __restrict a = reinterpret_cast<const T*>(x);
  const T* __restrict b = reinterpret_cast<const T*>(y);
  if (!y) {
    if (sx == w) for (std::int64_t j = 0; j < n; ++j) buf[j] = convert<A>(a[j]);
    else for (std::int64_t j = 0; j < n; ++j) buf[j] = element_at<A, T>(x, sx, j);
  } else if (sx == w && sy == w) {
    for (std::int64_t j = 0; j < n; ++j) buf[j] = times(convert<A>(a[j]), convert<A>(b[j]));
  } else if (sx == 0 && sy == w) {
    const A v = convert<A>(a[0]);
    for (std::int64_t j = 0; j < n; ++j) buf[j] = times(v, convert<A>(b[j]));
  } else if (sx == w && sy == 0) {
    const A v = convert<A>(b[0]);
    for (std::int64_t j = 0; j < n; ++j) buf[j] = times(convert<A>(a[j]), v);
  } else {
    for (std::int64_t j = 0; j < n; ++j) buf[j] = times(element_at<A, T>(x, sx, j), element_at<A, T>(y, sy, j));
  }
}
// buf[j] *= x[j].
template <class A, class T>
void multiply(A* __restrict buf, const char* x, std::int64_t sx, std::int64_t n) {
  const T* __restrict a = reinterpret_cast<const T*>(x);
  if (sx == static_cast<std::int64_t>(sizeof(T))) for (std::int64_t j = 0; j < n; ++j) buf[j] = times(buf[j], convert<A>(a[j]));
  else for (std::int64_t j = 0; j < n; ++j) buf[j] = times(buf[j], element_at<A, T>(x, sx, j));
}
// The product of operands 1..count at n elements along a row, into buf.
template <class A, class T>
void product_row(std::size_t count, char* const* p, const std::int64_t* s, std::int64_t n, A* buf) {
  load_product<A, T>(buf, p[1], s[1], count >= 2 ? p[2] : nullptr, count >= 2 ? s[2] : 0, n);
  for (std::size_t k = 3; k <= count; ++k) multiply<A, T>(buf, p[k], s[k], n);
}

// The sum of x[j] * y[j] over n contiguous floating-point elements in one pass: L lanes of
// multiply-adds (eight 512-bit registers: loads in flight enough for memory bandwidth), then
// a pairwise tree of the lanes.
template <class T>
T dot_lanes(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  constexpr int L = static_cast<int>(512 / sizeof(T));
  T acc[L] = {};
  std::int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) acc[k] += x[i + k] * y[i + k];
  for (int k = 0; i < n; ++i, ++k) acc[k] += x[i] * y[i];
  for (int w = L / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  return acc[0];
}

/// The values a reduction of the operands' product reads (see reduction_kernels); summed
/// (the only reduction einsum runs), two contiguous float or double rows take dot_lanes.
template <class A, class T>
struct product_values {
  static constexpr bool in_place = false;
  std::size_t count;
  std::size_t operands() const { return count; }
  template <class Op>
  bool reduce_row(char* const* p, const std::int64_t* s, std::int64_t n, A& out) const {
    if constexpr (std::is_same_v<Op, plus_r> && std::is_same_v<A, T> && std::is_floating_point_v<T>) {
      constexpr auto w = static_cast<std::int64_t>(sizeof(T));
      if (count == 2 && s[1] == w && s[2] == w) {
        out = dot_lanes(reinterpret_cast<const T*>(p[1]), reinterpret_cast<const T*>(p[2]), n);
        return true;
      }
    }
    return false;
  }
  const A* values(char* const* p, const std::int64_t* s, std::int64_t n, A* buf, loop_status*) const {
    product_row<A, T>(count, p, s, n, buf);
    return buf;
  }
};

// Outputs of at least this many bytes (the last-level cache of the machines we measure on)
// are written with streaming stores where the product has a kernel for it: nothing reads
// them back soon, and a streamed line is not read from memory before it is written.
constexpr std::int64_t stream_bytes = std::int64_t{32} << 20;

// out[j] = v * y[j] for n contiguous floats or doubles, the 64-byte aligned part with
// streaming stores (a vector of the compiler's, so any ISA gets its own instructions).
template <class T>
void stream_scaled(T* __restrict out, T v, const T* __restrict y, std::int64_t n) {
  using vec = T __attribute__((vector_size(64)));
  constexpr auto L = static_cast<std::int64_t>(64 / sizeof(T));
  std::int64_t j = 0;
  for (; j < n && reinterpret_cast<std::uintptr_t>(out + j) % 64 != 0; ++j) out[j] = v * y[j];
  for (; j + L <= n; j += L) {
    vec r;
    std::memcpy(&r, y + j, sizeof r);
    __builtin_nontemporal_store(r * v, reinterpret_cast<vec*>(out + j));
  }
  for (; j < n; ++j) out[j] = v * y[j];
}
// Orders a thread's streaming stores before what follows (execute's finish_fn).
void fence_streams() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

/// Element-wise product (no label summed): rows and tiles for the executor. `stream`: the
/// output is large enough for streaming stores (see stream_bytes).
template <class T>
struct product_rows {
  using A = acc_t<T>;
  std::size_t count;
  bool stream;
  static void row(const void* ctx, char* const* p, const std::int64_t* s, std::int64_t n, loop_status*) {
    const auto& self = *static_cast<const product_rows*>(ctx);
    const std::size_t count = self.count;
    chunk_buffer<A, reduce_chunk> buf;
    char* q[max_operands];
    for (std::size_t k = 0; k <= count; ++k) q[k] = p[k];
    if constexpr (std::is_same_v<A, T>) {  // a contiguous output is the buffer itself
      constexpr auto w = static_cast<std::int64_t>(sizeof(T));
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (self.stream && count == 2 && s[0] == w && (s[1] == 0) != (s[2] == 0) && s[1] + s[2] == w) {
          const int scalar = s[1] == 0 ? 1 : 2;  // an outer product's row: a broadcast factor times a row
          stream_scaled(reinterpret_cast<T*>(q[0]), *reinterpret_cast<const T*>(q[scalar]),
                        reinterpret_cast<const T*>(q[3 - scalar]), n);
          return;
        }
      }
      if (s[0] == w) {
        product_row<A, T>(count, q, s, n, reinterpret_cast<T*>(q[0]));
        return;
      }
    }
    for (std::int64_t c = 0; c < n; c += reduce_chunk) {
      const std::int64_t m = std::min(reduce_chunk, n - c);
      product_row<A, T>(count, q, s, m, buf.data);
      if (s[0] == static_cast<std::int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(q[0]);
        for (std::int64_t j = 0; j < m; ++j) out[j] = convert<T>(buf.data[j]);
      } else {
        for (std::int64_t j = 0; j < m; ++j) *reinterpret_cast<T*>(q[0] + j * s[0]) = convert<T>(buf.data[j]);
      }
      for (std::size_t k = 0; k <= count; ++k) q[k] += m * s[k];
    }
  }
};

template <element T>
struct term {
  Tensor<T> t;  // one dim per label, detached
  dim_vector labels;
  term_shape shape() const { return {labels, t.sizes().vec()}; }
  std::int64_t stride_of(std::int64_t l) const {
    const std::int64_t at = index_in(labels, l);
    return at < static_cast<std::int64_t>(labels.size()) && t.size(at) != 1 ? t.stride(at) : 0;
  }
};

template <element T>
term<T> make_term(const Tensor<T>& op, const dim_vector& labels) {
  const Tensor<T> d = op.detach();
  const distinct_dims dd = distinct(labels, d.sizes(), d.strides());
  if (dd.labels.size() == labels.size()) return {d, labels};
  return {d.as_strided(dd.sizes, dd.strides, d.storage_offset()), dd.labels};
}

/// One fused pass: the product of the terms summed over every label not in `out`, written
/// into `into` (sizes: the out labels' sizes) or a fresh tensor.
template <element T>
Tensor<T> fused(std::span<const term<T>> terms, const dim_vector& out, const std::vector<std::int64_t>& full,
                const Tensor<T>* into) {
  using A = acc_t<T>;
  dim_vector space = out, sizes, out_sizes;
  for (const term<T>& x : terms)
    for (const std::int64_t l : x.labels)
      if (!contains(space, l)) space.push_back(l);
  for (const std::int64_t l : space) sizes.push_back(full[static_cast<std::size_t>(l)]);
  for (const std::int64_t l : out) out_sizes.push_back(full[static_cast<std::size_t>(l)]);
  const Tensor<T> result = into ? *into : empty<T>(out_sizes);
  if (result.numel() == 0) return result;
  if (numel_of(sizes) == 0) {  // a summed label of size 0: the empty sum
    result.fill_(T(0));
    return result;
  }
  const bool summed = space.size() > out.size();
  const Tensor<A> acc = [&] {
    if constexpr (std::is_same_v<A, T>) return result;
    else return summed ? empty<A>(out_sizes) : Tensor<A>();
  }();
  std::vector<dim_vector> strides(terms.size() + 1);
  std::vector<loop_operand> ops(terms.size() + 1);
  for (std::size_t d = 0; d < space.size(); ++d) {
    const bool kept = d < out.size();
    strides[0].push_back(kept ? (summed ? acc.stride(static_cast<std::int64_t>(d)) : result.stride(static_cast<std::int64_t>(d))) : 0);
    for (std::size_t k = 0; k < terms.size(); ++k) strides[k + 1].push_back(terms[k].stride_of(space[d]));
  }
  ops[0] = {reinterpret_cast<char*>(summed ? acc.data_ptr() : nullptr), strides[0], sizeof(A)};
  for (std::size_t k = 0; k < terms.size(); ++k)
    ops[k + 1] = {reinterpret_cast<char*>(terms[k].t.data_ptr()), strides[k + 1], sizeof(T)};
  if (!summed) {
    ops[0] = {reinterpret_cast<char*>(result.data_ptr()), strides[0], sizeof(T)};
    const product_rows<T> rows{terms.size(), result.numel() * static_cast<std::int64_t>(sizeof(T)) >= stream_bytes};
    execute(make_plan(sizes, ops), &product_rows<T>::row, nullptr, &rows,
            rows.stream ? &fence_streams : nullptr);
    return result;
  }
  const reduction_kernels<plus_r, A, product_values<A, T>> kernels{{terms.size()}};
  reduce_execute(make_plan(sizes, ops), kernels.erased());
  if constexpr (!std::is_same_v<A, T>) result.copy_(acc);
  return result;
}

template <element T>
constexpr blas_type blas_type_of() {
  if constexpr (std::is_same_v<T, float>) return blas_type::f32;
  else if constexpr (std::is_same_v<T, double>) return blas_type::f64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return blas_type::c64;
  else return blas_type::c128;
}

/// Labels of a group in x, ordered by x's strides (outermost first).
template <element T>
dim_vector by_stride(const term<T>& x, const dim_vector& group) {
  dim_vector g = group;  // an insertion sort: groups are short, and equal strides keep their order
  for (std::size_t i = 1; i < g.size(); ++i)
    for (std::size_t j = i; j > 0 && x.stride_of(g[j]) > x.stride_of(g[j - 1]); --j) std::swap(g[j], g[j - 1]);
  return g;
}
/// The size and stride of a group of x's labels seen as one dim, when their strides nest
/// (size-1 labels ignored); an empty group is one element.
template <element T>
bool fold(const term<T>& x, const dim_vector& group, const std::vector<std::int64_t>& full, std::int64_t& size,
          std::int64_t& stride) {
  size = 1;
  stride = 0;
  bool first = true;
  for (std::size_t i = group.size(); i-- > 0;) {
    const std::int64_t l = group[i], n = full[static_cast<std::size_t>(l)];
    if (n == 1) continue;
    const std::int64_t s = x.stride_of(l);
    if (first) {
      stride = s;
      first = false;
    } else if (s != stride * size) {
      return false;
    }
    size *= n;
  }
  return true;
}
/// A matrix (rows x cols, strides rs and cs) as BLAS sees it: no-trans needs cs == 1 and
/// ld >= cols; trans needs rs == 1 and ld >= rows. Strides of size-1 dims are free.
bool blas_matrix(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, bool& trans, std::int64_t& ld) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = std::max<std::int64_t>(cols * cs, 1);
  if (cs == 1 && rs >= std::max<std::int64_t>(cols, 1) && rs <= int_max) {
    trans = false;
    ld = rs;
    return true;
  }
  if (rows == 1) rs = 1;
  if (rs == 1 && cs >= std::max<std::int64_t>(rows, 1) && cs <= int_max) {
    trans = true;
    ld = cs;
    return true;
  }
  return false;
}

/// a and b contracted as batched GEMMs: C[batch..., rows..., cols...] (contiguous). Groups
/// whose strides do not nest are walked as extra batch dims (rows, cols) or copied (inner).
template <element T>
term<T> gemm_pair(term<T> a, term<T> b, const pair_roles& r, const dim_vector& order_hint,
                  const std::vector<std::int64_t>& full, const Tensor<T>* into) {
  const auto in_hint_order = [&](dim_vector g) {
    for (std::size_t i = 1; i < g.size(); ++i)
      for (std::size_t j = i; j > 0 && index_in(order_hint, g[j]) < index_in(order_hint, g[j - 1]); --j)
        std::swap(g[j], g[j - 1]);
    return g;
  };
  dim_vector batch = in_hint_order(r.batch), rows = in_hint_order(r.rows), cols = in_hint_order(r.cols);
  dim_vector inner = by_stride(a, r.inner);
  std::int64_t m = 1, n = 1, k = 1, rs = 0, cs = 0, ka = 0, kb = 0;
  // rows: a's outer rows that do not nest become batch dims; likewise cols in b.
  const auto split = [&](const term<T>& x, dim_vector& group, std::int64_t& size, std::int64_t& stride) {
    if (!fold(x, group, full, size, stride)) group = by_stride(x, group);
    while (!fold(x, group, full, size, stride)) {
      batch.push_back(group[0]);
      group.erase(0);
    }
  };
  split(a, rows, m, rs);
  split(b, cols, n, cs);
  const auto copy_as = [&](term<T>& x, const dim_vector& first, const dim_vector& second, const dim_vector& third) {
    dim_vector perm;
    for (const dim_vector* g : {&first, &second, &third})
      for (const std::int64_t l : *g)
        if (contains(x.labels, l)) perm.push_back(index_in(x.labels, l));
    dim_vector labels;
    for (const std::int64_t p : perm) labels.push_back(x.labels[static_cast<std::size_t>(p)]);
    x = {x.t.permute(perm).contiguous(), labels};
  };
  if (!fold(a, inner, full, k, ka)) copy_as(a, batch, rows, inner);
  if (!fold(b, inner, full, k, kb)) copy_as(b, batch, inner, cols);
  fold(a, rows, full, m, rs);
  fold(a, inner, full, k, ka);
  bool ta = false, tb = false;
  std::int64_t lda = 0, ldb = 0;
  if (!blas_matrix(m, k, rs, ka, ta, lda)) {
    copy_as(a, batch, rows, inner);
    fold(a, rows, full, m, rs);
    fold(a, inner, full, k, ka);
    blas_matrix(m, k, rs, ka, ta, lda);
  }
  fold(b, cols, full, n, cs);
  fold(b, inner, full, k, kb);
  if (!blas_matrix(k, n, kb, cs, tb, ldb)) {
    copy_as(b, batch, inner, cols);
    fold(b, cols, full, n, cs);
    fold(b, inner, full, k, kb);
    blas_matrix(k, n, kb, cs, tb, ldb);
  }

  dim_vector labels = batch, sizes;
  for (const std::int64_t l : rows) labels.push_back(l);
  for (const std::int64_t l : cols) labels.push_back(l);
  for (const std::int64_t l : labels) sizes.push_back(full[static_cast<std::size_t>(l)]);
  const bool direct = into && into->is_contiguous() && labels == order_hint;
  const Tensor<T> c = direct ? *into : empty<T>(sizes);
  if (c.numel() == 0) return {c, labels};
  // One GEMM per batch index (an odometer over the batch dims), split over strata's threads:
  // whole GEMMs when there are enough, else blocks of rows of each (OpenBLAS itself runs
  // single-threaded, so there is one pool of threads).
  const std::size_t nb = batch.size();
  dim_vector bsize(nb), index(nb, 0);
  for (std::size_t d = 0; d < nb; ++d) bsize[d] = full[static_cast<std::size_t>(batch[d])];
  const std::int64_t count = numel_of(bsize);
  std::vector<std::int64_t> offsets;  // a, b, c per batch index
  offsets.reserve(static_cast<std::size_t>(3 * count));
  for (std::int64_t it = 0; it < count; ++it) {
    std::int64_t oa = 0, ob = 0, oc = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      oa += index[d] * a.stride_of(batch[d]);
      ob += index[d] * b.stride_of(batch[d]);
      oc += index[d] * c.stride(static_cast<std::int64_t>(d));
    }
    offsets.insert(offsets.end(), {oa, ob, oc});
    for (std::size_t d = nb; d-- > 0;) {
      if (++index[d] < bsize[d]) break;
      index[d] = 0;
    }
  }
  struct job {
    const T* a;
    const T* b;
    T* c;
    const std::int64_t* offsets;
    std::int64_t m, n, k, lda, ldb, blocks, rows;
    bool ta, tb;
    static void run(void* ctx, std::int64_t i) {
      const job& j = *static_cast<const job*>(ctx);
      const std::int64_t* o = j.offsets + 3 * (i / j.blocks);
      const std::int64_t r0 = (i % j.blocks) * j.rows, r1 = std::min(j.m, r0 + j.rows);
      if (r0 >= r1) return;
      const std::int64_t a_rows = j.ta ? r0 : r0 * j.lda;  // row r0 of op(A)
      blas_gemm(blas_type_of<T>(), j.ta, j.tb, r1 - r0, j.n, j.k, j.a + o[0] + a_rows, j.lda, j.b + o[1], j.ldb,
                j.c + o[2] + r0 * std::max<std::int64_t>(j.n, 1), std::max<std::int64_t>(j.n, 1));
    }
  };
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(count);
  const int threads = work < 4e6 ? 1 : get_num_threads();
  // Rows split into blocks (multiples of 16) only when there are fewer GEMMs than threads.
  const std::int64_t blocks = count >= threads ? 1 : std::min<std::int64_t>(threads, std::max<std::int64_t>(m / 16, 1));
  const std::int64_t block_rows = ((m + blocks - 1) / blocks + 15) / 16 * 16;
  job j{a.t.data_ptr(), b.t.data_ptr(), c.data_ptr(), offsets.data(), m, n, k, lda, ldb, blocks, block_rows, ta, tb};
  const std::int64_t tasks = count * blocks;
  if (threads == 1 || tasks == 1) {
    for (std::int64_t i = 0; i < tasks; ++i) job::run(&j, i);
  } else {
    parallel_run(tasks, static_cast<int>(std::min<std::int64_t>(threads, tasks)), &job::run, &j);
  }
  return {c, labels};
}

/// Contracts two terms keeping `keep` (in that order when the fused path writes it).
template <element T>
term<T> contract_pair(term<T> a, term<T> b, const dim_vector& keep, bool gemm, std::vector<std::int64_t> full,
                      const Tensor<T>* into) {
  // The pair's own sizes: a label both have at size 1 stays 1 here, whatever other terms say.
  for (const term<T>* x : {&a, &b})
    for (const std::int64_t l : x->labels) full[static_cast<std::size_t>(l)] = 1;
  for (const term<T>* x : {&a, &b})
    for (std::size_t d = 0; d < x->labels.size(); ++d)
      if (x->t.size(static_cast<std::int64_t>(d)) != 1)
        full[static_cast<std::size_t>(x->labels[d])] = x->t.size(static_cast<std::int64_t>(d));
  if constexpr (is_blas(dtype_v<T>)) {
    if (gemm) {
      const pair_roles r = roles_of(a.shape(), b.shape(), keep);
      const auto squeeze = [&](term<T>& x, const dim_vector& drop, const dim_vector& summed) {
        for (const std::int64_t l : drop) {
          const std::int64_t at = index_in(x.labels, l);
          x.t = x.t.select(at, 0);
          x.labels.erase(static_cast<std::size_t>(at));
        }
        if (summed.empty()) return;
        dim_vector rest;
        for (const std::int64_t l : x.labels)
          if (!contains(summed, l)) rest.push_back(l);
        const term<T> one[1] = {x};
        x = {fused<T>(one, rest, full, nullptr), rest};
      };
      squeeze(a, r.drop_a, r.sum_a);
      squeeze(b, r.drop_b, r.sum_b);
      return gemm_pair(std::move(a), std::move(b), r, keep, full, into);
    }
  }
  const term<T> both[2] = {std::move(a), std::move(b)};
  return {fused<T>(both, keep, full, into), keep};
}
}  // namespace

template <element T>
Tensor<T> einsum_run(const einsum_spec& spec, std::span<const Tensor<T>> ops, const Tensor<T>* into) {
  const std::vector<dim_vector> sizes = sizes_of_all<T>(ops);
  const std::vector<std::int64_t> full = full_sizes(spec, sizes);
  if (into) {
    check_writable({into->sizes().vec(), into->strides().vec(), into->storage_offset()});
    for (const Tensor<T>& t : ops)
      if (t.is_alias_of(*into)) {  // written while read: through a fresh result
        into->copy_(einsum_run<T>(spec, ops, nullptr));
        return *into;
      }
  }
  std::vector<term<T>> live;
  for (std::size_t i = 0; i < ops.size(); ++i) live.push_back(make_term(ops[i], spec.inputs[i]));
  std::vector<term_shape> shapes;
  for (const term<T>& x : live) shapes.push_back(x.shape());
  const einsum_program prog = plan_program(std::move(shapes), spec.output, dtype_v<T>, full);
  if (prog.fused) return fused<T>(live, spec.output, full, into);
  term<T> last;
  for (const pair_step& s : prog.steps) {
    const bool final_step = &s == &prog.steps.back();
    term<T> c = contract_pair<T>(live[s.a], live[s.b], s.result, s.gemm, full, final_step ? into : nullptr);
    replace_pair(live, s.a, s.b, std::move(c));
  }
  const term<T>& r = live.back();
  dim_vector perm;
  for (const std::int64_t l : spec.output) perm.push_back(index_in(r.labels, l));
  const Tensor<T> result = r.t.permute(perm);
  if (into && !result.is_alias_of(*into)) into->copy_(result);
  return into ? *into : result;
}

// ---- backward: the gradient of an operand is an einsum of the output's gradient and the
// other operands (conjugated when complex), summed and spread back to the operand's shape ----
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

// ---- the matrix products as einsums (labels: 0 rows, 1 inner, 2 cols, 3 + j batch) ----
namespace {
[[noreturn]] void throw_mm(std::int64_t r1, std::int64_t c1, std::int64_t r2, std::int64_t c2) {
  throw shape_error("mat1 and mat2 shapes cannot be multiplied (" + str(r1) + "x" + str(c1) + " and " + str(r2) + "x" +
                    str(c2) + ")");
}
[[noreturn]] void throw_mv(std::int64_t rows, std::int64_t cols, std::int64_t n) {
  throw shape_error("size mismatch, got " + str(rows) + ", " + str(rows) + "x" + str(cols) + "," + str(n));
}
constexpr std::int64_t R = 0, K = 1, C = 2, B = 3;
}  // namespace

einsum_spec dot_spec(int_list a, int_list b) {
  if (a.size() != 1 || b.size() != 1)
    throw shape_error("1D tensors expected, but got " + str(static_cast<std::int64_t>(a.size())) + "D and " +
                      str(static_cast<std::int64_t>(b.size())) + "D tensors");
  if (a[0] != b[0])
    throw shape_error("inconsistent tensor size, expected tensor [" + str(a[0]) + "] and src [" + str(b[0]) +
                      "] to have the same number of elements, but got " + str(a[0]) + " and " + str(b[0]) +
                      " elements respectively");
  return {{{K}, {K}}, {}};
}

einsum_spec mm_spec(int_list a, int_list b) {
  if (a.size() != 2) throw shape_error("self must be a matrix");
  if (b.size() != 2) throw shape_error("mat2 must be a matrix");
  if (a[1] != b[0]) throw_mm(a[0], a[1], b[0], b[1]);
  return {{{R, K}, {K, C}}, {R, C}};
}

einsum_spec mv_spec(int_list a, int_list b) {
  if (a.size() != 2 || b.size() != 1)
    throw shape_error("vector + matrix @ vector expected, got 1, " + str(static_cast<std::int64_t>(a.size())) + ", " +
                      str(static_cast<std::int64_t>(b.size())));
  if (a[1] != b[0]) throw_mv(a[0], a[1], b[0]);
  return {{{R, K}, {K}}, {R}};
}

einsum_spec outer_spec(int_list a, int_list b) {
  if (a.size() != 1)
    throw shape_error("outer: Expected 1-D argument self, but got " + str(static_cast<std::int64_t>(a.size())) + "-D");
  if (b.size() != 1)
    throw shape_error("outer: Expected 1-D argument vec2, but got " + str(static_cast<std::int64_t>(b.size())) + "-D");
  return {{{R}, {C}}, {R, C}};
}

einsum_spec bmm_spec(int_list a, int_list b) {
  if (a.size() != 3) throw shape_error("batch1 must be a 3D tensor");
  if (b.size() != 3) throw shape_error("batch2 must be a 3D tensor");
  if (a[0] != b[0] || a[2] != b[1])
    throw shape_error("Expected size for first two dimensions of batch2 tensor to be: [" + str(a[0]) + ", " + str(a[2]) +
                      "] but got: [" + str(b[0]) + ", " + str(b[1]) + "].");
  return {{{B, R, K}, {B, K, C}}, {B, R, C}};
}

einsum_spec matmul_spec(int_list a, int_list b) {
  const auto da = static_cast<std::int64_t>(a.size()), db = static_cast<std::int64_t>(b.size());
  if (da == 0 || db == 0)
    throw shape_error("both arguments to matmul need to be at least 1D, but they are " + str(da) + "D and " + str(db) +
                      "D");
  if (da == 1 && db == 1) return dot_spec(a, b);
  if (da == 2 && db == 1) return mv_spec(a, b);
  if (da <= 2 && db == 2) {
    if (a[da - 1] != b[0]) throw_mm(da == 2 ? a[0] : 1, a[da - 1], b[0], b[1]);
    return da == 2 ? mm_spec(a, b) : einsum_spec{{{K}, {K, C}}, {C}};
  }
  // Batched: PyTorch folds a >= 3-D operand times a 1-D or 2-D one into one mm (and reports
  // the folded shapes), and broadcasts the batch dims of two >= 3-D (or 1-D/2-D x >= 3-D) ones.
  const std::int64_t ka = a[da - 1], kb = db == 1 ? b[0] : b[db - 2];
  const auto prefix = [](int_list s, std::int64_t n) {  // the product of the first n sizes
    std::int64_t p = 1;
    for (std::int64_t d = 0; d < n; ++d) p *= s[static_cast<std::size_t>(d)];
    return p;
  };
  if (da >= 3 && db <= 2 && ka != kb) {  // a folded into rows: mm, or mv for a vector b
    const std::int64_t rows = prefix(a, da - 1);
    if (db == 1) throw_mv(rows, ka, kb);
    throw_mm(rows, ka, kb, b[1]);
  } else if (db >= 3 && da <= 2 && ka != kb) {  // b transposed and folded: mm, or mv for a vector a
    const std::int64_t rows = prefix(b, db - 2) * b[db - 1];
    if (da == 1) throw_mv(rows, kb, ka);
    throw_mm(rows, kb, ka, a[0]);
  }
  const std::span<const std::int64_t> sa(a.data(), a.size()), sb(b.data(), b.size());
  const dim_vector batch = broadcast_shapes(sa.first(static_cast<std::size_t>(std::max<std::int64_t>(da - 2, 0))),
                                            sb.first(static_cast<std::size_t>(std::max<std::int64_t>(db - 2, 0))));
  const auto nb = static_cast<std::int64_t>(batch.size());
  if (ka != kb) {
    const std::int64_t count = numel_of(batch);
    throw shape_error("Expected size for first two dimensions of batch2 tensor to be: [" + str(count) + ", " + str(ka) +
                      "] but got: [" + str(count) + ", " + str(kb) + "].");
  }
  einsum_spec s;
  dim_vector la, lb;
  for (std::int64_t d = 0; d < da - 2; ++d) la.push_back(B + nb - (da - 2) + d);
  for (std::int64_t d = 0; d < db - 2; ++d) lb.push_back(B + nb - (db - 2) + d);
  for (std::int64_t d = 0; d < nb; ++d) s.output.push_back(B + d);
  if (da >= 2) { la.push_back(R); s.output.push_back(R); }
  la.push_back(K);
  lb.push_back(K);
  if (db >= 2) { lb.push_back(C); s.output.push_back(C); }
  s.inputs = {la, lb};
  return s;
}

einsum_spec tensordot_spec(int_list a, int_list b, int_list dims_a, int_list dims_b) {
  if (dims_a.size() != dims_b.size()) throw shape_error("both dimension lists should have same length");
  const auto na = static_cast<std::int64_t>(a.size()), nb = static_cast<std::int64_t>(b.size());
  const auto wrap = [](std::int64_t d, std::int64_t n) {
    if (n == 0) throw index_error("Dimension specified as " + str(d) + " but tensor has no dimensions");
    return wrap_dim(d, n);
  };
  einsum_spec s;
  dim_vector la, lb;
  for (std::int64_t d = 0; d < na; ++d) la.push_back(d);
  for (std::int64_t d = 0; d < nb; ++d) lb.push_back(na + d);
  dim_vector used_a, used_b;
  for (std::size_t i = 0; i < dims_a.size(); ++i) {
    const std::int64_t x = wrap(dims_a[i], na), y = wrap(dims_b[i], nb);
    const std::int64_t s1 = a[static_cast<std::size_t>(x)], s2 = b[static_cast<std::size_t>(y)];
    if (s1 != s2 && s1 != 1 && s2 != 1)  // a size-1 dim is summed (broadcast), as PyTorch does
      throw shape_error("contracted dimensions need to match, but first has size " + str(s1) + " in dim " +
                        str(dims_a[i]) + " and second has size " + str(s2) + " in dim " + str(dims_b[i]));
    used_a.push_back(x);
    used_b.push_back(y);
  }
  for (const dim_vector* used : {&used_a, &used_b})
    for (std::size_t i = 0; i < used->size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if ((*used)[i] == (*used)[j])
          throw shape_error("dim " + str((*used)[i]) + " appears multiple times in the list of dims");
  for (std::size_t i = 0; i < used_a.size(); ++i)
    lb[static_cast<std::size_t>(used_b[i])] = la[static_cast<std::size_t>(used_a[i])];
  for (std::int64_t d = 0; d < na; ++d)
    if (!contains(used_a, d)) s.output.push_back(la[static_cast<std::size_t>(d)]);
  for (std::int64_t d = 0; d < nb; ++d)
    if (!contains(used_b, d)) s.output.push_back(lb[static_cast<std::size_t>(d)]);
  s.inputs = {la, lb};
  return s;
}

einsum_spec tensordot_spec(int_list a, int_list b, std::int64_t dims) {
  if (dims < 0) throw shape_error("tensordot expects dims >= 0, but got dims=" + str(dims));
  dim_vector da, db;  // as torch.tensordot: a's dims -dims..-1 with b's 0..dims-1
  for (std::int64_t i = 0; i < dims; ++i) {
    da.push_back(i - dims);
    db.push_back(i);
  }
  return tensordot_spec(a, b, da, db);
}

// ---- compiled once per dtype ----
#define STRATA_EINSUM_INSTANCES(T) \
  template Tensor<T> einsum_run<T>(const einsum_spec&, std::span<const Tensor<T>>, const Tensor<T>*);
#define STRATA_EINSUM_GRAD_INSTANCES(T) \
  template void record_einsum<T>(const std::shared_ptr<const einsum_spec>&, std::span<const Tensor<T>>, Tensor<T>&);
STRATA_FOR_EACH_DTYPE(STRATA_EINSUM_INSTANCES)
STRATA_FOR_EACH_GRAD_DTYPE(STRATA_EINSUM_GRAD_INSTANCES)
#undef STRATA_EINSUM_INSTANCES
#undef STRATA_EINSUM_GRAD_INSTANCES
}  // namespace strata::detail
