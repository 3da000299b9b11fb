// SPDX-License-Identifier: MIT
// einsum's parser and size checks (PyTorch 1.13's, message for message), and the specs of the
// matrix products, checked with their own messages and built from their operands' sizes.
//
// An einsum names every dim by a label: 0-51 the letters A-Z then a-z, 52 + j the j-th dim an
// ellipsis covers (aligned from the right). The label helpers the other linalg files share
// (modules/linalg_internal.cppm) are defined here.
module;
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module strata.linalg;
import :internal;

namespace strata::detail {
namespace {
constexpr std::int64_t letters = 52;  // labels 0-51: A-Z, a-z; 52 + j: ellipsis dim j
constexpr std::int64_t ellipsis = -1;  // while parsing

std::int64_t letter_label(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
std::string str(std::int64_t v) { return std::to_string(v); }
}  // namespace

// ---- labels ----
char label_char(std::int64_t l) {
  if (l < 26) return static_cast<char>('A' + l);
  if (l < letters) return static_cast<char>('a' + (l - 26));
  return static_cast<char>('0' + (l - letters) % 10);  // only in plan descriptions
}
bool contains(const dim_vector& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::int64_t index_in(const dim_vector& v, std::int64_t x) {
  return static_cast<std::int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}
std::int64_t max_label(const einsum_spec& spec) {
  std::int64_t m = 0;
  for (const dim_vector& in : spec.inputs)
    for (const std::int64_t l : in) m = std::max(m, l);
  for (const std::int64_t l : spec.output) m = std::max(m, l);
  return m;
}

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
}  // namespace strata::detail
