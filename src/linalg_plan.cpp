// SPDX-License-Identifier: MIT
// einsum's planner: from labels and sizes alone, so plan() can describe what will run (and
// src/linalg_evaluate.cpp runs the same program).
//
// Each operand first becomes a view with one dim per distinct label (a repeated label is a
// diagonal: its strides add up). Then either
//  - one fused reduce: every operand is broadcast over the whole label space (stride 0 where
//    it lacks a label) and the product of the operands is summed over the labels the output
//    lacks, in the engine's reduction (no intermediate; pairwise-accurate, deterministic), or
//  - pairwise contractions in a greedy order (opt_einsum's: least memory first), each a
//    batched GEMM on the BLAS when it is large and matrix-shaped, else a fused reduce of two.
module;
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>
module strata.linalg;
import :internal;

namespace strata::detail {
// ---- an operand's distinct labels (a repeated label is its diagonal) ----
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

// ---- planning ----
std::int64_t term_shape::numel() const { return numel_of(sizes); }
std::int64_t term_shape::size_of(std::int64_t l) const {
  const std::int64_t at = index_in(labels, l);
  return at < static_cast<std::int64_t>(labels.size()) ? sizes[static_cast<std::size_t>(at)] : 0;
}
std::int64_t term_shape::broadcast_size(const term_shape& o, std::int64_t l) const {
  const std::int64_t x = size_of(l), y = o.size_of(l);
  return x == 1 || (x == 0 && !contains(labels, l)) ? (y == 0 && !contains(o.labels, l) ? 1 : y) : x;
}

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

namespace {
/// A contraction goes to the BLAS when it is matrix-shaped (every side at least 2) and has
/// 32^3 multiply-adds per matrix or more. A short side ([N, 3] @ [3, 3], [5, N] @ [N, 5])
/// goes there too: the BLAS's kernels for thin matrices beat a reduce over the short dim.
bool use_gemm(const pair_roles& r, dtype t) {
  return is_blas(t) && r.m >= 2 && r.n >= 2 && r.k >= 2 && r.m * r.n * r.k >= 32768 && r.m <= int_max &&
         r.n <= int_max && r.k <= int_max;
}

/// GEMM steps count their multiply-adds at a sixteenth: a tuned GEMM runs about that many
/// times faster per multiply-add than a reduce that reads its operands from memory.
constexpr std::int64_t gemm_speedup = 16;
}  // namespace

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

namespace {
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
}  // namespace strata::detail
