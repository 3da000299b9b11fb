// SPDX-License-Identifier: MIT
// Reductions that consume an expression directly: sum((a - b) * (a - b)) reads a and b once
// and writes only the result. Planned with the element-wise planner (the output has stride 0
// along reduced dims); summed with fixed-shape pairwise trees, so results are accurate on
// every axis and bitwise identical for any thread count.
module;
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
export module strata.reduce;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.expr;

export namespace strata::detail {
// ---- reduction operations: identity and combine, on the accumulator type ----
// combine() is the element-wise operation itself (wrap-around for integers, NaN propagation
// for amax/amin), so a reduction and the matching binary op agree bit for bit.
struct sum_r {
  template <class A> static A identity() { return A(0); }
  template <class A> static A combine(A a, A b) { return add_op::apply<A>(a, b); }
};
struct prod_r {
  template <class A> static A identity() { return A(1); }
  template <class A> static A combine(A a, A b) { return mul_op::apply<A>(a, b); }
};
struct amax_r {
  template <class A> static A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class A> static A combine(A a, A b) { return maximum_op::apply<A>(a, b); }
};
struct amin_r {
  template <class A> static A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class A> static A combine(A a, A b) { return minimum_op::apply<A>(a, b); }
};
struct all_r {
  template <class A> static A identity() { return true; }
  template <class A> static A combine(A a, A b) { return a && b; }
};
struct any_r {
  template <class A> static A identity() { return false; }
  template <class A> static A combine(A a, A b) { return a || b; }
};

/// Sum and prod: integers and bool accumulate (and result) in int64, floats in their compute type.
template <class V>
using sum_acc_t = std::conditional_t<std::is_integral_v<V>, std::int64_t, compute_t<V>>;
template <class V>
using sum_result_t = std::conditional_t<std::is_integral_v<V>, std::int64_t, V>;

/// Reduces a contiguous chunk with eight interleaved accumulators (one vector register
/// for floats), then combines them pairwise.
template <class Op, class A>
A chunk_reduce(const A* b, std::int64_t n) {
  if constexpr (std::is_arithmetic_v<A>) {
    A acc[8];
    for (A& a : acc) a = Op::template identity<A>();
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] = Op::combine(acc[k], b[i + k]);
    for (int k = 0; i < n; ++i, ++k) acc[k] = Op::combine(acc[k], b[i]);
    for (int w = 4; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] = Op::combine(acc[k], acc[k + w]);
    return acc[0];
  } else {
    A acc = Op::template identity<A>();
    for (std::int64_t i = 0; i < n; ++i) acc = Op::combine(acc, b[i]);
    return acc;
  }
}

/// Combines leaf(b) for b in [b0, b1) by halving: the one tree shape every sum uses, so that
/// the same leaves always give the same bits.
template <class Op, class Leaf>
auto pairwise(std::int64_t b0, std::int64_t b1, const Leaf& leaf) {
  if (b1 - b0 == 1) return leaf(b0);
  const std::int64_t mid = b0 + (b1 - b0) / 2;
  return Op::combine(pairwise<Op>(b0, mid, leaf), pairwise<Op>(mid, b1, leaf));
}

inline constexpr std::int64_t reduce_chunk = 512;   ///< elements evaluated at a time
inline constexpr std::int64_t reduce_block = 4096;  ///< inner reductions: elements per tree leaf
inline constexpr std::int64_t reduce_rows = 64;     ///< outer reductions: rows per tree leaf
inline constexpr std::int64_t outer_segment = 4096; ///< outer reductions: kept elements per task
/// Distance between tree-level buffers: a segment plus one cache line, so that buffers
/// used together never sit a multiple of 4 KiB apart (4K aliasing stalls loads on stores).
template <class A>
inline constexpr std::int64_t level_stride = outer_segment + 64 / static_cast<std::int64_t>(sizeof(A) < 64 ? sizeof(A) : 64) + 1;
inline constexpr int parallel_split = 16;           ///< tree leaves' groups that may run in parallel

template <class A>
struct acc_buffer {
  acc_buffer() {}  // NOLINT: uninitialized for trivial types
  A data[reduce_chunk];
};

/// One reduction: out (keepdim shape, expanded with stride 0 along reduced dims) = op over e.
template <class Op, class A, class E>
struct reducer_run {
  const E& e;
  loop_plan p;
  dim_vector kept, red;  // plan dims, inner first
  std::int64_t nops;
  kernel<A, E> k{&e};

  reducer_run(const E& expr, loop_plan plan) : e(expr), p(std::move(plan)), nops(p.nops) {
    if (nops > 64 || p.sizes.size() > 64)  // the per-row pointer arrays below hold 64
      throw error("strata: a reduction over more than 63 tensor leaves or 64 dims is not supported");
    for (std::size_t d = 0; d < p.sizes.size(); ++d)
      (p.strides[d * static_cast<std::size_t>(nops)] == 0 && p.sizes[d] != 1 ? red : kept).push_back(static_cast<std::int64_t>(d));
  }

  std::int64_t count(const dim_vector& dims, std::size_t from = 0) const {
    std::int64_t n = 1;
    for (std::size_t i = from; i < dims.size(); ++i) n *= p.sizes[static_cast<std::size_t>(dims[i])];
    return n;
  }
  // Adds index (mixed radix over dims[from..]) times strides to every operand pointer.
  void advance(char** ptrs, const dim_vector& dims, std::size_t from, std::int64_t index) const {
    for (std::size_t i = from; i < dims.size() && index > 0; ++i) {
      const auto d = static_cast<std::size_t>(dims[i]);
      const std::int64_t at = index % p.sizes[d];
      index /= p.sizes[d];
      for (std::int64_t o = 0; o < nops; ++o) ptrs[o] += at * p.strides[d * static_cast<std::size_t>(nops) + static_cast<std::size_t>(o)];
    }
  }
  // Evaluates n elements along plan dim 0 from ptrs into buf.
  void values(char** ptrs, A* buf, std::int64_t n) const {
    char* saved = ptrs[0];
    ptrs[0] = reinterpret_cast<char*>(buf);
    std::int64_t s[64];
    s[0] = sizeof(A);
    for (std::int64_t o = 1; o < nops; ++o) s[o] = p.strides[static_cast<std::size_t>(o)];
    k.run(ptrs, s, n, std::make_index_sequence<E::leaf_count>{});
    ptrs[0] = saved;
  }
  // The input itself along dim 0 when e is a plain contiguous tensor of the accumulator
  // type (read in place, no copy); nullptr otherwise.
  const A* direct(char* const* ptrs) const {
    if constexpr (std::is_same_v<E, leaf<A>>) {
      if (p.strides[1] == static_cast<std::int64_t>(sizeof(A))) return reinterpret_cast<const A*>(ptrs[1]);
    }
    return nullptr;
  }
  // n values along dim 0 as a contiguous array: in place when possible, else evaluated into buf.
  const A* source(char** ptrs, A* buf, std::int64_t n) const {
    if (const A* d = direct(ptrs)) return d;
    values(ptrs, buf, n);
    return buf;
  }
  void step(char** ptrs, std::int64_t n) const {  // moves every input n elements along dim 0
    for (std::int64_t o = 1; o < nops; ++o) ptrs[o] += n * p.strides[static_cast<std::size_t>(o)];
  }

  // ---- inner reductions (plan dim 0 is reduced): one value per output ----
  A inner_block(char* const* base, std::int64_t b) const {
    const std::int64_t n0 = p.sizes[0];
    char* ptrs[64];
    A acc = Op::template identity<A>();
    acc_buffer<A> buf;
    auto run = [&](std::int64_t len) {
      for (std::int64_t c = 0; c < len; c += reduce_chunk) {
        const std::int64_t m = std::min(reduce_chunk, len - c);
        acc = Op::combine(acc, chunk_reduce<Op>(source(ptrs, buf.data, m), m));
        step(ptrs, m);
      }
    };
    if (n0 >= reduce_block) {  // a leaf is a piece of one row
      const std::int64_t per_row = (n0 + reduce_block - 1) / reduce_block;
      std::copy(base, base + nops, ptrs);
      advance(ptrs, red, 1, b / per_row);
      const std::int64_t start = b % per_row * reduce_block;
      step(ptrs, start);
      run(std::min(reduce_block, n0 - start));
    } else {  // a leaf is several whole rows
      const std::int64_t rows_per = std::max<std::int64_t>(1, reduce_block / n0);
      const std::int64_t r1 = std::min(count(red, 1), (b + 1) * rows_per);
      for (std::int64_t r = b * rows_per; r < r1; ++r) {
        std::copy(base, base + nops, ptrs);
        advance(ptrs, red, 1, r);
        run(n0);
      }
    }
    return acc;
  }
  std::int64_t inner_blocks() const {
    const std::int64_t n0 = p.sizes[0], rows = count(red, 1);
    if (n0 >= reduce_block) return rows * ((n0 + reduce_block - 1) / reduce_block);
    const std::int64_t rows_per = std::max<std::int64_t>(1, reduce_block / n0);
    return (rows + rows_per - 1) / rows_per;
  }
  A inner_tree(char* const* base, std::int64_t b0, std::int64_t b1) const {
    return pairwise<Op>(b0, b1, [&](std::int64_t b) { return inner_block(base, b); });
  }

  // ---- outer reductions (plan dim 0 is kept): a segment of outputs at a time ----
  void outer_block(char* const* base, std::int64_t b, A* acc, std::int64_t len) const {
    char* ptrs[64];
    std::int64_t index[64];
    acc_buffer<A> buf;
    for (std::int64_t j = 0; j < len; ++j) acc[j] = Op::template identity<A>();
    const std::int64_t r0 = b * reduce_rows, r1 = std::min(count(red), r0 + reduce_rows);
    std::copy(base, base + nops, ptrs);
    advance(ptrs, red, 0, r0);
    std::int64_t rest = r0;  // the multi-index of row r0, for the odometer below
    for (std::size_t i = 0; i < red.size(); ++i) {
      index[i] = rest % p.sizes[static_cast<std::size_t>(red[i])];
      rest /= p.sizes[static_cast<std::size_t>(red[i])];
    }
    for (std::int64_t r = r0; r < r1; ++r) {
      if (const A* row = direct(ptrs)) {  // a plain contiguous tensor: the whole row in one loop
        for (std::int64_t j = 0; j < len; ++j) acc[j] = Op::combine(acc[j], row[j]);
      } else {
      for (std::int64_t c = 0; c < len; c += reduce_chunk) {  // the row, a chunk at a time
        const std::int64_t m = std::min(reduce_chunk, len - c);
        char* at[64];
        for (std::int64_t o = 0; o < nops; ++o) at[o] = ptrs[o] + c * p.strides[static_cast<std::size_t>(o)];
        const A* v = source(at, buf.data, m);
        A* a = acc + c;
        for (std::int64_t j = 0; j < m; ++j) a[j] = Op::combine(a[j], v[j]);
      }
      }
      for (std::size_t i = 0; i < red.size(); ++i) {  // next row: odometer over the reduced dims
        const auto d = static_cast<std::size_t>(red[i]);
        for (std::int64_t o = 0; o < nops; ++o) ptrs[o] += p.strides[d * static_cast<std::size_t>(nops) + static_cast<std::size_t>(o)];
        if (++index[i] < p.sizes[d]) break;
        for (std::int64_t o = 0; o < nops; ++o) ptrs[o] -= index[i] * p.strides[d * static_cast<std::size_t>(nops) + static_cast<std::size_t>(o)];
        index[i] = 0;
      }
    }
  }
  // Pairwise over blocks [b0, b1) into res; scratch holds one segment per tree level.
  void outer_tree(char* const* base, std::int64_t b0, std::int64_t b1, A* res, std::int64_t len, A* scratch) const {
    if (b1 - b0 == 1) return outer_block(base, b0, res, len);
    const std::int64_t mid = b0 + (b1 - b0) / 2;
    outer_tree(base, b0, mid, res, len, scratch + level_stride<A>);
    outer_tree(base, mid, b1, scratch, len, scratch + level_stride<A>);
    for (std::int64_t j = 0; j < len; ++j) res[j] = Op::combine(res[j], scratch[j]);
  }

  // The top of a tree split into `parallel_split` groups (the same split for any thread
  // count), computed in parallel when asked, then combined in order.
  template <class Leaf, class Combine>
  static void split_tree(std::int64_t nblocks, bool parallel, Leaf&& leaf, Combine&& combine) {
    const std::int64_t groups = std::min<std::int64_t>(parallel_split, nblocks);
    std::int64_t bounds[parallel_split + 1];
    // bounds follow the halving of a pairwise tree, so combining groups pairwise in order
    // reproduces the same tree shape whatever runs where
    auto split = [&](auto&& self, std::int64_t lo, std::int64_t hi, std::int64_t g0, std::int64_t g1) -> void {
      if (g1 - g0 == 1) { bounds[g0] = lo; return; }
      const std::int64_t gm = g0 + (g1 - g0) / 2;
      const std::int64_t mid = lo + (hi - lo) / 2;
      self(self, lo, mid, g0, gm);
      self(self, mid, hi, gm, g1);
    };
    split(split, 0, nblocks, 0, groups);
    bounds[groups] = nblocks;
    if (parallel) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(get_num_threads())
      for (std::int64_t g = 0; g < groups; ++g) leaf(g, bounds[g], bounds[g + 1]);
    } else {
      for (std::int64_t g = 0; g < groups; ++g) leaf(g, bounds[g], bounds[g + 1]);
    }
    combine(groups);
  }

  void run_all() {
    if (p.numel == 0 && red.empty()) return;
    const bool inner = !red.empty() && red[0] == 0;
    const std::int64_t threads = p.numel >= 2 * grain ? get_num_threads() : 1;
    if (inner) {
      const std::int64_t outputs = count(kept), nblocks = inner_blocks();
      auto one_output = [&](std::int64_t o, bool parallel_tree) {
        char* ptrs[64];
        std::copy(p.base.begin(), p.base.end(), ptrs);
        advance(ptrs, kept, 0, o);
        A parts[parallel_split];
        A result = Op::template identity<A>();
        if (nblocks > 0) {
          split_tree(nblocks, parallel_tree,
                     [&](std::int64_t g, std::int64_t b0, std::int64_t b1) { parts[g] = inner_tree(ptrs, b0, b1); },
                     [&](std::int64_t groups) {
                       result = pairwise<Op>(0, groups, [&](std::int64_t g) { return parts[g]; });
                     });
        }
        *reinterpret_cast<A*>(ptrs[0]) = result;
      };
      // When some reduced dims lie outside kept ones in memory (g[b, j, :] summed over b and
      // the last dim), visiting outputs one by one jumps across memory. Then compute every
      // (block, output) partial in memory order first and run each output's tree over them:
      // the same partials and the same trees, so the same bits.
      const bool outside = kept.size() > 0 && red.size() > 1 && red.back() > kept.back();
      if (outside && nblocks > 1 && outputs * nblocks <= (std::int64_t{1} << 22)) {
        std::unique_ptr<A[]> partial(new A[static_cast<std::size_t>(outputs * nblocks)]);
        auto block_all = [&](std::int64_t b) {
          for (std::int64_t o = 0; o < outputs; ++o) {
            char* ptrs[64];
            std::copy(p.base.begin(), p.base.end(), ptrs);
            advance(ptrs, kept, 0, o);
            partial[static_cast<std::size_t>(b * outputs + o)] = inner_block(ptrs, b);
          }
        };
        auto finish = [&](std::int64_t o) {
          char* ptrs[64];
          std::copy(p.base.begin(), p.base.end(), ptrs);
          advance(ptrs, kept, 0, o);
          *reinterpret_cast<A*>(ptrs[0]) =
              pairwise<Op>(0, nblocks, [&](std::int64_t b) { return partial[static_cast<std::size_t>(b * outputs + o)]; });
        };
        if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(threads))
          for (std::int64_t b = 0; b < nblocks; ++b) block_all(b);
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(threads))
          for (std::int64_t o = 0; o < outputs; ++o) finish(o);
        } else {
          for (std::int64_t b = 0; b < nblocks; ++b) block_all(b);
          for (std::int64_t o = 0; o < outputs; ++o) finish(o);
        }
        return;
      }
      if (threads > 1 && outputs >= threads) {
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(threads))
        for (std::int64_t o = 0; o < outputs; ++o) one_output(o, false);
      } else {
        for (std::int64_t o = 0; o < outputs; ++o) one_output(o, threads > 1);
      }
      return;
    }
    // outer: tasks are (kept outer index, segment of dim 0)
    const std::int64_t n0 = p.sizes[0];
    const std::int64_t segs = (n0 + outer_segment - 1) / outer_segment;
    const std::int64_t tasks = count(kept, 1) * segs;
    const std::int64_t rows = count(red);
    const std::int64_t nblocks = (rows + reduce_rows - 1) / reduce_rows;
    auto one_task = [&](std::int64_t t, bool parallel_tree) {
      char* ptrs[64];
      std::copy(p.base.begin(), p.base.end(), ptrs);
      advance(ptrs, kept, 1, t / segs);
      const std::int64_t start = t % segs * outer_segment;
      const std::int64_t len = std::min(outer_segment, n0 - start);
      for (std::int64_t o = 0; o < nops; ++o) ptrs[o] += start * p.strides[static_cast<std::size_t>(o)];
      // One segment per tree level per group, reused across tasks on this thread.
      const std::int64_t per_group = level_stride<A> * (2 + std::bit_width(static_cast<std::uint64_t>(nblocks + 1)));
      thread_local std::unique_ptr<A[]> scratch;
      thread_local std::int64_t scratch_size = 0;
      if (scratch_size < parallel_split * per_group) {
        scratch.reset(new A[static_cast<std::size_t>(parallel_split * per_group)]);
        scratch_size = parallel_split * per_group;
      }
      A* parts = scratch.get();
      split_tree(std::max<std::int64_t>(nblocks, 1), parallel_tree,
                 [&](std::int64_t g, std::int64_t b0, std::int64_t b1) {
                   A* res = parts + g * per_group;
                   if (nblocks == 0) {
                     for (std::int64_t j = 0; j < len; ++j) res[j] = Op::template identity<A>();
                   } else {
                     outer_tree(ptrs, b0, b1, res, len, res + level_stride<A>);
                   }
                 },
                 [&](std::int64_t groups) { combine_rows(parts, 0, groups, len, per_group); });
      const std::int64_t os = p.strides[0];
      for (std::int64_t j = 0; j < len; ++j) *reinterpret_cast<A*>(ptrs[0] + j * os) = parts[static_cast<std::size_t>(j)];
    };
    if (threads > 1 && tasks >= threads) {
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(threads))
      for (std::int64_t t = 0; t < tasks; ++t) one_task(t, false);
    } else {
      for (std::int64_t t = 0; t < tasks; ++t) one_task(t, threads > 1);
    }
  }

  static void combine_rows(A* parts, std::int64_t g0, std::int64_t g1, std::int64_t len, std::int64_t per_group) {
    if (g1 - g0 == 1) return;  // the result ends up in group g0
    const std::int64_t gm = g0 + (g1 - g0) / 2;
    combine_rows(parts, g0, gm, len, per_group);
    combine_rows(parts, gm, g1, len, per_group);
    A* a = parts + g0 * per_group;
    const A* b = parts + gm * per_group;
    for (std::int64_t j = 0; j < len; ++j) a[j] = Op::combine(a[j], b[j]);
  }
};

/// A lazy reduction of expression E by Op, accumulating in A, giving R.
template <class Op, class A, class R, class E>
struct reduce_node {
  using value_type = R;
  static constexpr bool is_strata_expression = true;
  static constexpr bool is_strata_reduction = true;
  static constexpr strata::dtype dtype() noexcept { return dtype_v<R>; }  ///< the result's dtype
  E e;
  dim_vector keep_shape;  ///< e's shape with reduced dims set to 1
  dim_vector out_shape;   ///< the result's shape (keep_shape without the dims dropped)
  bool mean = false;      ///< divide by the number of reduced elements

  int_list sizes() const noexcept { return out_shape; }

  /// Writes the reduction into dst (of shape sizes()).
  void write(const Tensor<R>& dst) const {
    if (!(dst.sizes() == int_list(out_shape)))
      throw shape_error("reduction output with shape " + to_string(dst.sizes()) +
                        " doesn't match the result shape " + to_string(out_shape));
    const Tensor<R> keep = dst.is_contiguous() ? dst.view(keep_shape) : empty<R>(keep_shape);
    if constexpr (std::is_same_v<A, R>) {
      run_into(keep);
    } else {
      Tensor<A> acc = empty<A>(keep_shape);
      run_into(acc);
      keep.assign(acc);
    }
    if (!dst.is_contiguous()) dst.assign(keep.view(out_shape));
  }
  /// A fresh tensor holding the reduction.
  Tensor<R> evaluate() const {
    Tensor<R> out = empty<R>(out_shape);
    write(out);
    return out;
  }

 private:
  template <class T>
  void run_into(const Tensor<T>& keep) const {
    static_assert(std::is_same_v<T, A>);
    const int_list full = e.sizes();
    if (keep.numel() == 0) return;
    if (numel_of(full) == 0) {  // nothing to reduce: the identity (0 for sum, 1 for prod)
      keep.assign(Op::template identity<A>());
      if (mean) keep.assign(keep / 0.0);  // 0 / 0: NaN, as PyTorch
      return;
    }
    leaf_operands<E> ls(e, full);
    const layout out = expand_layout(keep.layout(), full);
    ls.ops[0] = loop_operand{reinterpret_cast<char*>(keep.data_ptr()), out.strides, sizeof(A)};
    reducer_run<Op, A, E> r(e, make_plan(full, ls.ops));
    const std::int64_t before = zero_divisions();
    r.run_all();
    if (zero_divisions() != before) throw error("ZeroDivisionError");
    if (mean) {
      std::int64_t n = 1;
      for (std::size_t d = 0; d < full.size(); ++d)
        if (keep_shape[d] != full[d]) n *= full[d];
      keep.assign(keep / static_cast<double>(n));
    }
  }
};

/// Checks and wraps reduction dims (empty: all), PyTorch's messages; returns a mask.
inline small_vec<bool, 16> reduction_mask(int_list dims, std::int64_t ndim) {
  small_vec<bool, 16> mask(static_cast<std::size_t>(ndim), dims.empty());
  for (const std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) continue;
    if (mask[static_cast<std::size_t>(w)])
      throw shape_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    mask[static_cast<std::size_t>(w)] = true;
  }
  return mask;
}

template <class Op, class A, class R, class X>
auto make_reduce(X&& x, int_list dims, bool keepdim, const char* name) {
  auto e = to_node(std::forward<X>(x));
  using E = decltype(e);
  const int_list s = e.sizes();
  const auto n = static_cast<std::int64_t>(s.size());
  const auto mask = reduction_mask(dims, n);
  dim_vector keep(s), out;
  for (std::int64_t d = 0; d < n; ++d) {
    if (!mask[static_cast<std::size_t>(d)]) { out.push_back(s[static_cast<std::size_t>(d)]); continue; }
    if (s[static_cast<std::size_t>(d)] == 0 && (std::is_same_v<Op, amax_r> || std::is_same_v<Op, amin_r>))
      throw index_error(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                        " to have non-zero size.");
    keep[static_cast<std::size_t>(d)] = 1;
    if (keepdim) out.push_back(1);
  }
  return reduce_node<Op, A, R, E>{std::move(e), std::move(keep), std::move(out)};
}

template <class X>
using value_of_t = typename node_t<X>::value_type;

}  // namespace strata::detail

namespace strata::detail {
template <class Op, class A, class R, class E>
struct assigner<reduce_node<Op, A, R, E>> {
  using N = reduce_node<Op, A, R, E>;
  template <element O>
  static void assign(const Tensor<O>& dst, const N& n) {
    if constexpr (std::is_same_v<O, R>) {
      if (dst.sizes() == n.sizes()) return n.write(dst);
    }
    dst.assign(n.evaluate());  // converts and broadcasts like any tensor source
  }
  template <element O>
  static Tensor<O> eval(const N& n) {
    if constexpr (std::is_same_v<O, R>) return n.evaluate();
    else return Tensor<O>(cast<O>(n.evaluate()));
  }
};
}  // namespace strata::detail


export namespace strata {
/// Evaluates a reduction into a fresh tensor.
template <class E>
  requires detail::reduction_operand<E>
auto eval(const E& e) { return e.evaluate(); }

/// Sum over dims (all when empty), PyTorch's result types (integers and bool give int64);
/// Acc sets the accumulation and result type (e.g. float128 for ill-conditioned sums).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto sum(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  using R = std::conditional_t<std::is_void_v<Acc>, detail::sum_result_t<V>, Acc>;
  using A = std::conditional_t<std::is_void_v<Acc>, detail::sum_acc_t<V>, detail::compute_t<Acc>>;
  return detail::make_reduce<detail::sum_r, A, R>(std::forward<X>(x), dims, keepdim, "sum");
}
/// Mean over dims (floating and complex inputs only; empty gives NaN).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto mean(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!std::is_integral_v<V>,
                "mean() needs a floating or complex input: cast<float>() an integer expression first.");
  using R = std::conditional_t<std::is_void_v<Acc>, V, Acc>;
  using A = detail::compute_t<R>;
  auto n = detail::make_reduce<detail::sum_r, A, R>(std::forward<X>(x), dims, keepdim, "mean");
  n.mean = true;
  return n;
}
/// Product over dims (integers and bool give int64; empty gives 1).
template <class Acc = void, class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto prod(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  using R = std::conditional_t<std::is_void_v<Acc>, detail::sum_result_t<V>, Acc>;
  using A = std::conditional_t<std::is_void_v<Acc>, detail::sum_acc_t<V>, detail::compute_t<Acc>>;
  return detail::make_reduce<detail::prod_r, A, R>(std::forward<X>(x), dims, keepdim, "prod");
}
/// Maximum over dims (NaN propagates; an empty reduction throws).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto amax(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!detail::is_complex_v<V>, "amax is not defined for complex values.");
  return detail::make_reduce<detail::amax_r, detail::compute_t<V>, V>(std::forward<X>(x), dims, keepdim, "amax");
}
/// Minimum over dims (NaN propagates; an empty reduction throws).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto amin(X&& x, int_list dims = {}, bool keepdim = false) {
  using V = detail::value_of_t<X>;
  static_assert(!detail::is_complex_v<V>, "amin is not defined for complex values.");
  return detail::make_reduce<detail::amin_r, detail::compute_t<V>, V>(std::forward<X>(x), dims, keepdim, "amin");
}
/// True where every element over dims is nonzero (bool).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto all(X&& x, int_list dims = {}, bool keepdim = false) {
  return detail::make_reduce<detail::all_r, bool, bool>(std::forward<X>(x), dims, keepdim, "all");
}
/// True where any element over dims is nonzero (bool).
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X>)
auto any(X&& x, int_list dims = {}, bool keepdim = false) {
  return detail::make_reduce<detail::any_r, bool, bool>(std::forward<X>(x), dims, keepdim, "any");
}

/// PyTorch's at::sum_to: sums x down to `sizes` (leading dims summed away, size-1 target dims
/// summed with keepdim) as one fused pass; the result has exactly `sizes`.
template <class X>
  requires(detail::operand<X> && !detail::scalar_operand<X> && !detail::tensor_operand<X>)
auto sum_to(X&& x, int_list sizes) {
  const int_list s = detail::sizes_of(x);
  const auto n = static_cast<std::int64_t>(s.size()), m = static_cast<std::int64_t>(sizes.size());
  bool ok = m <= n;
  dim_vector dims;
  for (std::int64_t i = 0; ok && i < n; ++i) {
    const std::int64_t j = i - (n - m);  // the target dim aligned from the right
    if (j < 0) { dims.push_back(i); continue; }
    const std::int64_t want = sizes[static_cast<std::size_t>(j)], have = s[static_cast<std::size_t>(i)];
    if (want == have) continue;
    if (want == 1) dims.push_back(i);
    else ok = false;
  }
  if (!ok) throw shape_error("sum_to: size " + to_string(sizes) + " is not expandable to size " + to_string(s));
  using V = detail::value_of_t<X>;
  auto node = detail::make_reduce<detail::sum_r, detail::sum_acc_t<V>, detail::sum_result_t<V>>(
      std::forward<X>(x), dims.empty() ? int_list{} : int_list(dims), true, "sum_to");
  if (dims.empty()) node.keep_shape = s.vec();  // nothing to reduce: an identity pass
  node.out_shape = sizes.vec();
  return node;
}
/// sum_to of a tensor whose sizes already match is the tensor itself (no copy).
template <element T>
Tensor<detail::sum_result_t<T>> sum_to(const Tensor<T>& t, int_list sizes) {
  if constexpr (std::is_same_v<detail::sum_result_t<T>, T>) {
    if (t.sizes() == sizes) return t;
  }
  return sum_to(detail::leaf<T>{t}, sizes);
}
}  // namespace strata

namespace strata::detail {
template <element T>
struct reductions<Tensor<T>> {
  static auto sum(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::sum(t, dims, keepdim); }
  static auto mean(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::mean(t, dims, keepdim); }
  static auto prod(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::prod(t, dims, keepdim); }
  static auto amax(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::amax(t, dims, keepdim); }
  static auto amin(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::amin(t, dims, keepdim); }
  static auto all(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::all(t, dims, keepdim); }
  static auto any(const Tensor<T>& t, int_list dims, bool keepdim) { return strata::any(t, dims, keepdim); }
  static auto sum_to(const Tensor<T>& t, int_list sizes) { return strata::sum_to(t, sizes); }
};
}  // namespace strata::detail
