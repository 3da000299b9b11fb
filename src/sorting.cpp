// SPDX-License-Identifier: MIT
// Sorts, selections and scans along one dim, and their backward; instantiated once per dtype
// at the end.
//
// Selections (sort, topk, kthvalue, median, mode) copy each line into a buffer of
// (value, index) pairs and run what PyTorch 1.13's CPU kernels run: std::sort,
// std::partial_sort / std::nth_element, Sedgewick's quickselect (a stable sort is std::sort
// with ties broken by index). Those are deterministic for a given sequence (libstdc++ 12 here
// and in torch's build), so equal values come back with torch's indices even from an
// unstable sort. Lines are split over threads.
//
// Scans keep one running value per line in PyTorch's accumulation type (double for float,
// float for half and bfloat16, int64 for integers: at::acc_type on CPU), so results match
// torch's bit for bit (so each line is summed in order). Several lines run at once: when the
// scanned dim is the fastest in memory, 4 neighbouring lines interleaved (independent
// dependency chains, prefetched), and the lines left over (a 1-D tensor's one) each alone
// with its running value in a register; lines of 2-7 elements back to back each alone with
// their length known at compile time (vectorised across lines); otherwise a block of the fastest dim is the running vector
// and every step along the scanned dim is one vectorised pass over a row of it (cumsum along
// dim 0 reads each row once). Outputs take a transposed input's memory order.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include "parallel.hpp"
module strata.sorting;

namespace strata::detail {
namespace {
// ---- threads ----
// One thread below two grains of work, as the element-wise engine.
std::int64_t threads_for(std::int64_t work) {
  return work < 2 * grain ? 1 : std::min<std::int64_t>(thread_count(), work / grain);
}

/// Calls body(begin, end) on consecutive ranges covering [0, n), one range per thread.
template <class Body>
void run_chunks(std::int64_t n, std::int64_t work, const Body& body) {
  const std::int64_t threads = std::min(n, threads_for(work));
  if (threads <= 1) {
    if (n > 0) body(std::int64_t{0}, n);
    return;
  }
  const auto range = [&](std::int64_t c) { body(c * n / threads, (c + 1) * n / threads); };
  parallel_run(threads, static_cast<int>(threads),
               [](void* ctx, std::int64_t c) { (*static_cast<decltype(range)*>(ctx))(c); },
               const_cast<void*>(static_cast<const void*>(&range)));
}

// ---- element helpers ----
// std's functions for the built-in types; for float128, Boost's (found by argument-dependent
// lookup: strata.dtype exports them). half and bfloat16 are converted to float first.
template <class K> bool is_nan(const K& v) { using std::isnan; return isnan(v); }
template <class A> bool finite(const A& v) { using std::isfinite; return isfinite(v); }
template <class A> A exp_of(const A& v) { using std::exp; return exp(v); }
template <class A> A log_of(const A& v) { using std::log; return log(v); }
template <class A> A log1p_of(const A& v) { using std::log1p; return log1p(v); }
template <class A>
A conj_of(const A& v) {
  if constexpr (is_complex_v<A>) return std::conj(v);
  else return v;
}

/// log(exp(x) + exp(acc)) as PyTorch's logcumsumexp step: NaN propagates, and two equal
/// infinities give that infinity (not inf - inf).
template <class A>
A log_add_exp(const A& x, const A& acc) {
  const A lo = is_nan(acc) ? acc : std::min(x, acc);
  const A hi = is_nan(acc) ? acc : std::max(x, acc);
  if (lo != hi || finite(lo)) return log1p_of(exp_of(lo - hi)) + hi;
  return x;
}

/// A tensor's sizes and strides as at least 1-D (a 0-dim tensor is one element).
dim_vector sizes_1d(int_list s) { return s.empty() ? dim_vector{1} : s.vec(); }
dim_vector strides_1d(int_list s) { return s.empty() ? dim_vector{0} : s.vec(); }

/// The sizes of a reduction along d: with the dim kept (size 1) and as returned.
struct reduced_sizes {
  dim_vector keep, out;
};
reduced_sizes reduce_along(int_list sizes, std::int64_t d, bool keepdim) {
  reduced_sizes r{sizes_1d(sizes), {}};
  r.keep[static_cast<std::size_t>(d)] = 1;
  if (sizes.empty()) return r;
  for (std::size_t k = 0; k < r.keep.size(); ++k)
    if (keepdim || static_cast<std::int64_t>(k) != d) r.out.push_back(r.keep[k]);
  return r;
}

/// PyTorch's zero_numel_check_dims: a reduction along an empty dim has no answer.
void check_nonempty_dim(int_list sizes, std::int64_t d, const char* name) {
  if (!sizes.empty() && sizes[static_cast<std::size_t>(d)] == 0)
    throw index_error(std::string(name) + ": Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
}

// ---- lines ----
/// The lines along dim d of up to four tensors with the same sizes but along d: line l of
/// operand k starts at element offset start[k] (seek), and add() gave its stride along d.
class line_walk {
 public:
  static constexpr std::size_t max_operands = 4;
  line_walk(int_list sizes, std::int64_t d) : d_(static_cast<std::size_t>(d)) {
    for (std::size_t k = 0; k < sizes.size(); ++k)
      if (k != d_) {
        sizes_.push_back(sizes[k]);
        count_ *= sizes[k];
      }
  }
  /// Adds an operand by its strides (at least 1-D); returns its stride along d.
  std::int64_t add(int_list strides) {
    dim_vector& s = strides_[n_++];
    for (std::size_t k = 0; k < strides.size(); ++k)
      if (k != d_) s.push_back(strides[k]);
    return strides[d_];
  }
  std::int64_t count() const noexcept { return count_; }
  void seek(std::int64_t line, std::int64_t* start) const {
    std::fill(start, start + n_, std::int64_t{0});
    for (std::size_t i = sizes_.size(); i-- > 0;) {
      const std::int64_t at = line % sizes_[i];
      line /= sizes_[i];
      for (std::size_t k = 0; k < n_; ++k) start[k] += at * strides_[k][i];
    }
  }

 private:
  std::size_t d_;
  dim_vector sizes_;
  std::array<dim_vector, max_operands> strides_;
  std::size_t n_ = 0;
  std::int64_t count_ = 1;
};

/// Calls f(start, scratch) for every line, over threads; scratch is per thread.
template <class Scratch, class F>
void for_lines(const line_walk& w, std::int64_t work, const F& f) {
  run_chunks(w.count(), work, [&](std::int64_t begin, std::int64_t end) {
    Scratch scratch{};
    std::int64_t start[line_walk::max_operands];
    for (std::int64_t l = begin; l < end; ++l) {
      w.seek(l, start);
      f(start, scratch);
    }
  });
}

/// Sorting n elements costs about log2(n) passes: the work that decides the thread count.
std::int64_t sort_work(std::int64_t numel, std::int64_t n) {
  std::int64_t passes = 1;
  while (passes < 64 && (std::int64_t{1} << passes) < n) ++passes;
  return numel * passes;
}

// ---- (value, index) lines ----
template <class K>
using keyed = std::pair<K, std::int64_t>;

/// PyTorch's orders for sort and topk: NaN is the largest value.
template <class K>
struct nan_last_less {
  bool operator()(const keyed<K>& a, const keyed<K>& b) const {
    return (!is_nan(a.first) && is_nan(b.first)) || a.first < b.first;
  }
};
template <class K>
struct nan_first_greater {
  bool operator()(const keyed<K>& a, const keyed<K>& b) const {
    return (is_nan(a.first) && !is_nan(b.first)) || a.first > b.first;
  }
};

template <class T, class K = compute_t<T>>
void load_line(std::vector<keyed<K>>& buf, const T* x, std::int64_t n, std::int64_t stride) {
  buf.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) buf[static_cast<std::size_t>(j)] = {static_cast<K>(x[j * stride]), j};
}
template <class T, class K>
void store_line(const std::vector<keyed<K>>& buf, std::int64_t n, T* v, std::int64_t vs, std::int64_t* i,
                std::int64_t is) {
  for (std::int64_t j = 0; j < n; ++j) {
    v[j * vs] = convert<T>(buf[static_cast<std::size_t>(j)].first);
    i[j * is] = buf[static_cast<std::size_t>(j)].second;
  }
}

/// Hoare-partition quickselect with a median-of-three pivot (Sedgewick 1978, the selection
/// PyTorch's kthvalue runs): afterwards a[k] holds the k-th smallest (NaN largest), and
/// equal values sit where torch's leaves them.
template <class K>
void quickselect(std::vector<keyed<K>>& a, std::int64_t k) {
  const auto greater = [](const K& x, const K& y) { return (is_nan(x) && !is_nan(y)) || x > y; };
  const auto at = [&a](std::int64_t i) -> keyed<K>& { return a[static_cast<std::size_t>(i)]; };
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(a.size()) - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (greater(at(lo).first, at(hi).first)) std::swap(at(lo), at(hi));
      return;
    }
    std::swap(at((lo + hi) >> 1), at(lo + 1));
    if (greater(at(lo + 1).first, at(hi).first)) std::swap(at(lo + 1), at(hi));
    if (greater(at(lo).first, at(hi).first)) std::swap(at(lo), at(hi));
    if (greater(at(lo + 1).first, at(lo).first)) std::swap(at(lo + 1), at(lo));
    // at(lo + 1) <= pivot = at(lo) <= at(hi): the two scans stop at those sentinels.
    const K pivot = at(lo).first;
    std::int64_t i = lo + 1, j = hi;
    for (;;) {
      do ++i; while (greater(pivot, at(i).first));
      do --j; while (greater(at(j).first, pivot));
      if (j < i) break;
      std::swap(at(i), at(j));
    }
    std::swap(at(lo), at(j));
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// ---- autograd ----
/// Records out = op(x) through strata.tensor's record_function (backward maps the output's
/// gradient to x's; saved tensors are checked for in-place changes first).
template <class T>
void record_one(Tensor<T>& out, const Tensor<T>& x, std::function<Tensor<T>(const Tensor<T>&)> backward,
                std::initializer_list<Tensor<T>> saved = {}) {
  const Tensor<T> in[1] = {x};
  record_function<T>(
      out, in, [b = std::move(backward)](const Tensor<T>& g, std::size_t) { return b(g); },
      std::span<const Tensor<T>>(saved.begin(), saved.size()));
}

// ---- gradients of selections ----
/// zeros(in_sizes) with g scattered (or, with add, summed) at idx along d; g and idx have the
/// input's rank (at least 1) with any size along d.
template <class T>
Tensor<T> scatter_grad(int_list in_sizes, std::int64_t d, const Tensor<T>& g, const Tensor<std::int64_t>& idx,
                       bool add) {
  const dim_vector sizes = sizes_1d(in_sizes);
  Tensor<T> out = zeros<T>(sizes);
  line_walk w(g.sizes(), d);
  const std::int64_t os = w.add(out.strides()), gs = w.add(g.strides()), is = w.add(idx.strides());
  const std::int64_t k = g.size(d);
  T* o = out.data_ptr();
  const T* gp = g.data_ptr();
  const std::int64_t* ip = idx.data_ptr();
  for_lines<int>(w, g.numel(), [&](const std::int64_t* start, int&) {
    for (std::int64_t j = 0; j < k; ++j) {
      T& dst = o[start[0] + ip[start[2] + j * is] * os];
      const T v = gp[start[1] + j * gs];
      dst = add ? convert<T>(static_cast<compute_t<T>>(dst) + static_cast<compute_t<T>>(v)) : v;
    }
  });
  return in_sizes.empty() ? out.view({}) : out;
}

/// Records values (selected from x at indices along d) for autograd: the gradient is
/// scattered back at the indices (summed where an index repeats, as cummax's). keep: the
/// outputs' sizes with the input's rank.
template <class T>
void record_selection(Tensor<T>& values, const Tensor<std::int64_t>& indices, const Tensor<T>& x, std::int64_t d,
                      const dim_vector& keep, bool add) {
  if constexpr (differentiable_v<T>) {
    if (!x.requires_grad() || !grad_enabled()) return;
    const Tensor<std::int64_t> idx = indices.view(keep);
    const std::uint64_t version = indices.storage().version();
    record_one<T>(values, x, [=, in = x.sizes().vec()](const Tensor<T>& g) {
      if (idx.storage().version() != version)
        throw_version_error(dtype::int64, idx.sizes(), idx.storage().version(), version);
      return scatter_grad<T>(in, d, g.reshape(keep), idx, add);
    });
  }
}

/// sort and topk: each line of x along d as (value, index) pairs, reordered by arrange(buf),
/// its first `keep` pairs stored (values and indices of x's rank with `keep` along d).
template <class T, class Arrange>
with_indices<T> arrange_lines(const Tensor<T>& x, std::int64_t d, std::int64_t keep, const Arrange& arrange) {
  using K = compute_t<T>;
  const dim_vector sizes = sizes_1d(x.sizes());
  const std::int64_t n = sizes[static_cast<std::size_t>(d)];
  dim_vector out = sizes;
  out[static_cast<std::size_t>(d)] = keep;
  const Tensor<T> values = empty<T>(out);
  const Tensor<std::int64_t> indices = empty<std::int64_t>(out);
  line_walk w(sizes, d);
  const std::int64_t xs = w.add(strides_1d(x.strides())), vs = w.add(values.strides()), is = w.add(indices.strides());
  for_lines<std::vector<keyed<K>>>(w, sort_work(x.numel(), std::max(keep, std::int64_t{2})),
                                   [&](const std::int64_t* at, std::vector<keyed<K>>& buf) {
    load_line(buf, x.data_ptr() + at[0], n, xs);
    arrange(buf);
    store_line(buf, keep, values.data_ptr() + at[1], vs, indices.data_ptr() + at[2], is);
  });
  Tensor<T> v = x.dim() == 0 ? values.view({}) : values;
  Tensor<std::int64_t> i = x.dim() == 0 ? indices.view({}) : indices;
  record_selection(v, i, x, d, out, false);
  return {v, i};
}

/// kthvalue, median, nanmedian, mode: one element per line of x along d, the (value, index)
/// that pick(line, n, stride, scratch) returns; PyTorch's checks (k: kthvalue's) and keepdim.
template <class T, class Scratch, class Pick>
with_indices<T> pick_lines(const Tensor<T>& x, std::int64_t dim, bool keepdim, const char* name,
                           std::optional<std::int64_t> k, const Pick& pick) {
  const std::int64_t d = wrap_dim(dim, x.dim());
  check_nonempty_dim(x.sizes(), d, name);
  const dim_vector sizes = sizes_1d(x.sizes());
  const std::int64_t n = sizes[static_cast<std::size_t>(d)];
  if (k && (*k < 1 || *k > n))
    throw error(std::string(name) + ": selected number k out of range for dimension " + std::to_string(d));
  const reduced_sizes r = reduce_along(x.sizes(), d, keepdim);
  const Tensor<T> values = empty<T>(r.keep);
  const Tensor<std::int64_t> indices = empty<std::int64_t>(r.keep);
  line_walk w(sizes, d);
  const std::int64_t xs = w.add(strides_1d(x.strides()));
  w.add(values.strides());
  w.add(indices.strides());
  for_lines<Scratch>(w, sort_work(x.numel(), 2), [&](const std::int64_t* at, Scratch& scratch) {
    const auto [value, index] = pick(x.data_ptr() + at[0], n, xs, scratch);
    values.data_ptr()[at[1]] = convert<T>(value);
    indices.data_ptr()[at[2]] = index;
  });
  Tensor<T> v = values.view(r.out);
  Tensor<std::int64_t> i = indices.view(r.out);
  record_selection(v, i, x, d, r.keep, false);
  return {v, i};
}

// ---- scans ----
/// PyTorch's CPU accumulation type (at::acc_type<T, false>); integers wrap in 64 bits, so
/// they run unsigned (no undefined overflow).
template <class T> struct scan_acc { using type = T; };
template <> struct scan_acc<float> { using type = double; };
template <> struct scan_acc<half> { using type = float; };
template <> struct scan_acc<bfloat16> { using type = float; };
template <> struct scan_acc<std::complex<float>> { using type = std::complex<double>; };
template <class T>
  requires std::is_integral_v<T>
struct scan_acc<T> { using type = std::uint64_t; };
template <class T>
using scan_acc_t = typename scan_acc<T>::type;

template <class A, class T>
A to_acc(const T& v) {
  if constexpr (std::is_same_v<A, std::uint64_t>) return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  else return convert<A>(v);
}
template <class T, class A>
T from_acc(const A& v) {
  if constexpr (std::is_same_v<A, std::uint64_t>) return convert<T>(static_cast<std::int64_t>(v));
  else return convert<T>(v);
}

// A scan op: state init(), step(state&, x, position), value(state) and, when indexed,
// index(state).
template <class T, scan_kind Kind>
struct accumulate_op {
  using in_type = T;
  using out_type = T;
  using state = scan_acc_t<T>;
  static constexpr bool indexed = false;
  static state init() {
    if constexpr (Kind == scan_kind::sum) return state(0);
    else if constexpr (Kind == scan_kind::prod) return state(1);
    else return -std::numeric_limits<state>::infinity();
  }
  static void step(state& s, const T& x, std::int64_t) {
    if constexpr (Kind == scan_kind::sum) s = s + to_acc<state>(x);
    else if constexpr (Kind == scan_kind::prod) s = s * to_acc<state>(x);
    else s = log_add_exp(to_acc<state>(x), s);
  }
  static T value(const state& s) { return from_acc<T>(s); }
};

/// cummax (Max) and cummin: the running extreme and the last position that reached it; a
/// NaN takes over and stays (each later NaN moves the index), as PyTorch's.
template <class T, bool Max>
struct extreme_op {
  using in_type = T;
  using out_type = T;
  using K = compute_t<T>;
  struct state {
    K v;
    std::int64_t i;
  };
  static constexpr bool indexed = true;
  static state init() { return {K{}, -1}; }
  static void step(state& s, const T& xv, std::int64_t t) {
    const K x = static_cast<K>(xv);
    if (s.i < 0 || is_nan(x) || (!is_nan(s.v) && (Max ? x >= s.v : x <= s.v))) s = {x, t};
  }
  static T value(const state& s) { return convert<T>(s.v); }
  static std::int64_t index(const state& s) { return s.i; }
};

template <class Op>
struct scan_args {
  const typename Op::in_type* x;
  typename Op::out_type* y;
  std::int64_t* ix;               // indexed ops: laid out as y
  std::int64_t n, xs, ys;         // along the scanned dim
  std::int64_t xi = 0, yi = 0;    // along the dim whose neighbouring lines run together
};

/// count neighbouring lines scanned together (B > 0: exactly B, state kept in registers).
/// Each step loads all the lines' inputs before it stores: lines a multiple of 4 KiB apart
/// would otherwise make every load wait on the previous line's store (4K aliasing). Lines
/// read densely are prefetched 1 KiB ahead: the hardware prefetchers lose B streams 16 KiB
/// apart (cumsum along rows of [4096, 4096] float: 8.2 ms without, 6.7 ms with, 4 lines).
template <int B, class Op>
void scan_block(const Op& op, const scan_args<Op>& a, std::int64_t count, typename Op::state* buf) {
  using In = typename Op::in_type;
  typename Op::state local[B > 0 ? B : 1];
  typename Op::state* s = B > 0 ? local : buf;
  const std::int64_t m = B > 0 ? B : count;
  for (std::int64_t b = 0; b < m; ++b) s[b] = op.init();
  constexpr std::int64_t chunk = 16;
  const std::int64_t bytes = std::abs(a.xs) * static_cast<std::int64_t>(sizeof(In));
  const std::int64_t ahead = B > 0 && bytes > 0 && bytes <= 64 ? 1024 / bytes : 0;
  for (std::int64_t t0 = 0; t0 < a.n; t0 += chunk) {
    if (ahead > 0 && t0 + ahead < a.n)
      for (std::int64_t b = 0; b < m; ++b) __builtin_prefetch(a.x + (t0 + ahead) * a.xs + b * a.xi);
    for (std::int64_t t = t0; t < std::min(a.n, t0 + chunk); ++t) {
      if constexpr (B > 0) {
        In in[B];
        for (std::int64_t b = 0; b < B; ++b) in[b] = a.x[t * a.xs + b * a.xi];
        for (std::int64_t b = 0; b < B; ++b) op.step(s[b], in[b], t);
      } else {
        for (std::int64_t b = 0; b < m; ++b) op.step(s[b], a.x[t * a.xs + b * a.xi], t);
      }
      for (std::int64_t b = 0; b < m; ++b) {
        const std::int64_t o = t * a.ys + b * a.yi;
        a.y[o] = op.value(s[b]);
        if constexpr (Op::indexed) a.ix[o] = op.index(s[b]);
      }
    }
  }
}

/// A block of count lines that are contiguous in input and output: each step along the
/// scanned dim is one vectorisable pass over a row, the running values in a buffer (in
/// registers across several long rows, each step's stores would alias the next row's loads
/// 4 KiB apart; up to 8 lines take scan_rows_short).
template <class Op>
void scan_rows(const Op& op, const scan_args<Op>& a, std::int64_t count, typename Op::state* __restrict s) {
  using In = typename Op::in_type;
  using Out = typename Op::out_type;
  for (std::int64_t b = 0; b < count; ++b) s[b] = op.init();
  for (std::int64_t t = 0; t < a.n; ++t) {
    const In* __restrict xr = a.x + t * a.xs;
    Out* __restrict yr = a.y + t * a.ys;
    for (std::int64_t b = 0; b < count; ++b) {
      op.step(s[b], xr[b], t);
      yr[b] = op.value(s[b]);
    }
    if constexpr (Op::indexed) {
      std::int64_t* __restrict ir = a.ix + t * a.ys;
      for (std::int64_t b = 0; b < count; ++b) ir[b] = op.index(s[b]);
    }
  }
}

/// scan_rows for count <= 8 lines: the running values in registers (the loop over the lines
/// unrolled, the lines past count skipped by a branch that never changes).
template <class Op>
void scan_rows_short(const Op& op, const scan_args<Op>& a, std::int64_t count) {
  using In = typename Op::in_type;
  using Out = typename Op::out_type;
  typename Op::state s[8];
#pragma clang loop unroll(full)
  for (std::int64_t b = 0; b < 8; ++b) s[b] = op.init();
  for (std::int64_t t = 0; t < a.n; ++t) {
    const In* xr = a.x + t * a.xs;
    Out* yr = a.y + t * a.ys;
#pragma clang loop unroll(full)
    for (std::int64_t b = 0; b < 8; ++b) {
      if (b < count) {
        op.step(s[b], xr[b], t);
        yr[b] = op.value(s[b]);
        if constexpr (Op::indexed) a.ix[t * a.ys + b] = op.index(s[b]);
      }
    }
  }
}

/// count lines of N elements back to back in input and output (cumsum(x, -1) of x [M, 3]),
/// each scanned alone with N known at compile time: the compiler then runs the lines across
/// vector lanes (interleaved loads), where the interleaved path of runtime length waits on
/// each line's few steps.
template <int N, class Op>
void scan_short_lines(const Op& op, const typename Op::in_type* __restrict x, typename Op::out_type* __restrict y,
                      std::int64_t count) {
  for (std::int64_t l = 0; l < count; ++l) {
    typename Op::state s = op.init();
    for (int t = 0; t < N; ++t) {
      op.step(s, x[l * N + t], t);
      y[l * N + t] = op.value(s);
    }
  }
}
/// The same for lines of 8-16: each line a scalar chain, the core overlapping the lines'
/// chains (vectorised across lines, the compiler would gather and scatter: eight times slower
/// at 16 doubles on Zen 5).
template <class Op>
void scan_lines_alone(const Op& op, const typename Op::in_type* __restrict x, typename Op::out_type* __restrict y,
                      std::int64_t n, std::int64_t count) {
#pragma clang loop vectorize(disable)
  for (std::int64_t l = 0; l < count; ++l) {
    typename Op::state s = op.init();
#pragma clang loop vectorize(disable)
    for (std::int64_t t = 0; t < n; ++t) {
      op.step(s, x[l * n + t], t);
      y[l * n + t] = op.value(s);
    }
  }
}
/// scan_short_lines for n in 2..7, scan_lines_alone for 8..16; false for other n.
template <class Op>
bool scan_short_lines(const Op& op, const scan_args<Op>& a, std::int64_t count) {
  switch (a.n) {
    case 2: scan_short_lines<2>(op, a.x, a.y, count); return true;
    case 3: scan_short_lines<3>(op, a.x, a.y, count); return true;
    case 4: scan_short_lines<4>(op, a.x, a.y, count); return true;
    case 5: scan_short_lines<5>(op, a.x, a.y, count); return true;
    case 6: scan_short_lines<6>(op, a.x, a.y, count); return true;
    case 7: scan_short_lines<7>(op, a.x, a.y, count); return true;
    default:
      if (a.n < 8 || a.n > 16) return false;
      scan_lines_alone(op, a.x, a.y, a.n, count);
      return true;
  }
}

/// Scans x (sizes at least 1-D, any strides) along d into y (and ix, laid out as y); reverse
/// scans from the last position to the first.
template <class Op>
void run_scan(const Op& op, const typename Op::in_type* x, int_list sizes, int_list xst, typename Op::out_type* y,
              int_list yst, std::int64_t* ix, std::int64_t d, bool reverse) {
  const std::int64_t numel = numel_of(sizes);
  if (numel == 0) return;
  const auto du = static_cast<std::size_t>(d);
  scan_args<Op> a{x, y, ix, sizes[du], xst[du], yst[du]};
  if (reverse) {
    a.x += (a.n - 1) * a.xs;
    a.y += (a.n - 1) * a.ys;
    if (a.ix) a.ix += (a.n - 1) * a.ys;
    a.xs = -a.xs;
    a.ys = -a.ys;
  }
  // The lines run together along the other dim the input walks fastest (then the output).
  std::size_t inner = sizes.size();
  const auto faster = [&](std::size_t k, std::size_t than) {
    const std::int64_t xk = std::abs(xst[k]), xt = std::abs(xst[than]);
    return xk < xt || (xk == xt && std::abs(yst[k]) < std::abs(yst[than]));
  };
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (k != du && sizes[k] > 1 && (inner == sizes.size() || faster(k, inner))) inner = k;
  dim_vector outer, outer_x, outer_y;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (k != du && k != inner && sizes[k] > 1) {
      outer.push_back(sizes[k]);
      outer_x.push_back(xst[k]);
      outer_y.push_back(yst[k]);
    }
  const std::int64_t width = inner < sizes.size() ? sizes[inner] : 1;
  if (inner < sizes.size()) {
    a.xi = xst[inner];
    a.yi = yst[inner];
  }
  const std::int64_t outer_count = numel_of(outer);
  // The scanned dim fastest: `interleave` lines at a time. Otherwise a row block whose running values
  // fit in 16 KiB (L1), narrower when that leaves a thread without a block.
  const bool along_lines = inner == sizes.size() || std::abs(a.xs) < std::abs(a.xi) ||
                           (std::abs(a.xs) == std::abs(a.xi) && std::abs(a.ys) < std::abs(a.yi));
  constexpr std::int64_t interleave = 4;
  // Along lines, a task scans lines of about 4096 elements in all, interleave at a time: short
  // lines (cumsum(x, -1) of x [N, 3]) cost a task each otherwise.
  std::int64_t block = interleave * std::max<std::int64_t>(1, 4096 / (interleave * std::max<std::int64_t>(a.n, 1)));
  if (!along_lines) {
    const std::int64_t most = std::max<std::int64_t>(16, 32768 / static_cast<std::int64_t>(sizeof(typename Op::state)));
    const std::int64_t per_outer = (threads_for(numel) + outer_count - 1) / outer_count;
    const std::int64_t share = (width + per_outer - 1) / per_outer;
    block = std::min(most, std::max<std::int64_t>(16, (share + 15) / 16 * 16));
  }
  const std::int64_t blocks = (width + block - 1) / block;
  const bool rows = !along_lines && a.xi == 1 && a.yi == 1;
  // Lines back to back in input and output, forward, of a plain running value.
  const bool packed = along_lines && !Op::indexed && a.xs == 1 && a.ys == 1 && a.xi == a.n && a.yi == a.n;
  run_chunks(outer_count * blocks, numel, [&](std::int64_t begin, std::int64_t end) {
    std::vector<typename Op::state> buf(along_lines ? 0 : static_cast<std::size_t>(block));
    for (std::int64_t task = begin; task < end; ++task) {
      std::int64_t o = task / blocks, xo = 0, yo = 0;
      for (std::size_t i = outer.size(); i-- > 0;) {
        const std::int64_t at = o % outer[i];
        o /= outer[i];
        xo += at * outer_x[i];
        yo += at * outer_y[i];
      }
      const std::int64_t first = task % blocks * block, count = std::min(block, width - first);
      scan_args<Op> t = a;
      t.x += xo + first * a.xi;
      t.y += yo + first * a.yi;
      if (t.ix) t.ix += yo + first * a.yi;
      const auto lines_from = [&](std::int64_t b) {
        scan_args<Op> line = t;
        line.x += b * a.xi;
        line.y += b * a.yi;
        if (line.ix) line.ix += b * a.yi;
        return line;
      };
      if (packed && scan_short_lines(op, t, count)) continue;
      if (rows && count <= 8) {
        scan_rows_short(op, t, count);
      } else if (rows) {
        scan_rows(op, t, count, buf.data());
      } else if (along_lines) {  // interleave lines at a time, the rest each alone (values in registers)
        std::int64_t b = 0;
        for (; b + interleave <= count; b += interleave)
          scan_block<interleave>(op, lines_from(b), interleave, buf.data());
        for (; b < count; ++b) scan_block<1>(op, lines_from(b), 1, buf.data());
      } else if (count == interleave) {
        scan_block<interleave>(op, t, count, buf.data());
      } else {
        scan_block<0>(op, t, count, buf.data());
      }
    }
  });
}

/// An uninitialised tensor of x's sizes in x's memory order when x is a permutation of a
/// contiguous tensor (a transpose), else row-major: a scan then walks input and output the
/// same way (a transposed input with a row-major output is written across its lines).
template <class U, class T>
Tensor<U> empty_like_order(const Tensor<T>& x) {
  const int_list sizes = x.sizes(), strides = x.strides();
  if (x.is_contiguous() || x.dim() < 2) return empty<U>(sizes);
  dim_vector order;
  for (std::int64_t k = 0; k < x.dim(); ++k) order.push_back(k);
  const auto stride = [&](std::int64_t k) { return strides[static_cast<std::size_t>(k)]; };
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return stride(a) > stride(b) || (stride(a) == stride(b) && a < b);
  });
  dim_vector permuted, inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    permuted.push_back(sizes[static_cast<std::size_t>(order[k])]);
    inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
  }
  const dim_vector dense = contiguous_strides(permuted);
  for (std::size_t k = 0; k < order.size(); ++k)
    if (permuted[k] != 1 && stride(order[k]) != dense[k]) return empty<U>(sizes);
  return empty<U>(permuted).permute(inverse);
}

/// Scans x along d into y (and ix, for indexed ops, laid out as y).
template <class Op>
void scan_tensor(const Op& op, const Tensor<typename Op::in_type>& x, std::int64_t d, bool reverse,
                 const Tensor<typename Op::out_type>& y, std::int64_t* ix) {
  run_scan(op, x.data_ptr(), sizes_1d(x.sizes()), strides_1d(x.strides()), y.data_ptr(), strides_1d(y.strides()), ix,
           d, reverse);
}

// ---- scan gradients (one line at a time, in the accumulation type) ----
/// cumprod's backward, correct with zeros in the input (PyTorch's cumprod_backward): with z
/// the first zero of a line, positions before it get sum_{i>=k} g_i y_i / x_k, position z
/// gets sum_{z<=i<z2} g_i prod_{j<=i, j!=z} x_j (z2 the second zero), later positions 0.
template <class T>
Tensor<T> cumprod_grad(const Tensor<T>& g, const Tensor<T>& x, const Tensor<T>& y, std::int64_t d) {
  using A = scan_acc_t<T>;
  const dim_vector sizes = sizes_1d(x.sizes());
  Tensor<T> out = empty<T>(x.sizes());
  line_walk w(sizes, d);
  const std::int64_t xs = w.add(strides_1d(x.strides())), ys = w.add(strides_1d(y.strides())),
                     gs = w.add(strides_1d(g.strides())), os = w.add(strides_1d(out.strides()));
  const std::int64_t n = sizes[static_cast<std::size_t>(d)];
  for_lines<int>(w, x.numel(), [&](const std::int64_t* at, int&) {
    const T* xp = x.data_ptr() + at[0];
    const T* yp = y.data_ptr() + at[1];
    const T* gp = g.data_ptr() + at[2];
    T* op = out.data_ptr() + at[3];
    const auto xv = [&](std::int64_t i) { return convert<A>(xp[i * xs]); };
    const auto gv = [&](std::int64_t i) { return convert<A>(gp[i * gs]); };
    std::int64_t z = 0;
    while (z < n && xv(z) != A(0)) ++z;
    A s(0);
    for (std::int64_t i = z; i-- > 0;) {
      s = s + gv(i) * conj_of(convert<A>(yp[i * ys]));
      op[i * os] = convert<T>(s / conj_of(xv(i)));
    }
    if (z == n) return;
    const A before = z > 0 ? conj_of(convert<A>(yp[(z - 1) * ys])) : A(1);
    A prod(1), sum(0);
    for (std::int64_t i = z; i < n; ++i) {
      if (i > z) {
        if (xv(i) == A(0)) break;
        prod = prod * conj_of(xv(i));
      }
      sum = sum + gv(i) * before * prod;
    }
    op[z * os] = convert<T>(sum);
    for (std::int64_t i = z + 1; i < n; ++i) op[i * os] = T(0);
  });
  return out;
}

/// logcumsumexp's backward as PyTorch's: the positive and negative parts of the gradient,
/// each a reversed logcumsumexp of log|g| - result, then exp(that + x).
template <class T>
Tensor<T> logcumsumexp_grad(const Tensor<T>& g, const Tensor<T>& x, const Tensor<T>& y, std::int64_t d) {
  using A = scan_acc_t<T>;
  if (x.dim() == 0 || x.numel() == 0) return g;
  Tensor<T> out = empty<T>(x.sizes());
  line_walk w(x.sizes(), d);
  const std::int64_t xs = w.add(x.strides()), ys = w.add(y.strides()), gs = w.add(g.strides()),
                     os = w.add(out.strides());
  const std::int64_t n = x.size(d);
  const A lowest = convert<A>(std::numeric_limits<compute_t<T>>::lowest());
  for_lines<int>(w, x.numel(), [&](const std::int64_t* at, int&) {
    A pos = -std::numeric_limits<A>::infinity(), neg = pos;
    for (std::int64_t i = n; i-- > 0;) {
      const A gi = convert<A>(g.data_ptr()[at[2] + i * gs]), r = convert<A>(y.data_ptr()[at[1] + i * ys]);
      pos = log_add_exp((gi > A(0) ? log_of(gi) : lowest) - r, pos);
      neg = log_add_exp((gi < A(0) ? log_of(-gi) : lowest) - r, neg);
      const A xi = convert<A>(x.data_ptr()[at[0] + i * xs]);
      out.data_ptr()[at[3] + i * os] = convert<T>(exp_of(pos + xi) - exp_of(neg + xi));
    }
  });
  return out;
}
}  // namespace

// ---- the operators ----
template <element T>
with_indices<T> sort_run(const Tensor<T>& x, std::int64_t dim, bool descending, bool stable) {
  using K = compute_t<T>;
  const std::int64_t d = wrap_dim(dim, x.dim());
  const auto order = [stable](std::vector<keyed<K>>& buf, auto less) {
    if (!stable) return std::sort(buf.begin(), buf.end(), less);
    // A stable sort is the sort whose ties are broken by index: a strict total order has one
    // result (and std::stable_sort's buffer is deprecated under C++20's libstdc++ 12).
    std::sort(buf.begin(), buf.end(), [less](const keyed<K>& a, const keyed<K>& b) {
      return less(a, b) || (!less(b, a) && a.second < b.second);
    });
  };
  return arrange_lines(x, d, sizes_1d(x.sizes())[static_cast<std::size_t>(d)], [&](std::vector<keyed<K>>& buf) {
    if (descending) order(buf, nan_first_greater<K>{});
    else order(buf, nan_last_less<K>{});
  });
}

template <element T>
with_indices<T> topk_run(const Tensor<T>& x, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  using K = compute_t<T>;
  const std::int64_t d = wrap_dim(dim, x.dim());
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 0 || k > n) throw error("selected index k out of range");
  if (x.dim() == 0) k = 1;  // PyTorch: the element itself, even for k = 0
  // PyTorch's choice: a partial sort for few elements, else a selection (then sort the k).
  const auto select = [k, n, sorted](std::vector<keyed<K>>& buf, auto before) {
    if (k * 64 <= n) {
      std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
    } else {
      std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), before);
      if (sorted) std::sort(buf.begin(), buf.begin() + (k - 1), before);
    }
  };
  return arrange_lines(x, d, k, [&](std::vector<keyed<K>>& buf) {
    if (largest) select(buf, nan_first_greater<K>{});
    else select(buf, nan_last_less<K>{});
  });
}

template <element T>
with_indices<T> kthvalue_run(const Tensor<T>& x, std::int64_t k, std::int64_t dim, bool keepdim) {
  using K = compute_t<T>;
  return pick_lines<T, std::vector<keyed<K>>>(x, dim, keepdim, "kthvalue()", k,
                                               [k](const T* line, std::int64_t n, std::int64_t stride, auto& buf) {
    load_line(buf, line, n, stride);
    quickselect(buf, k - 1);
    return buf[static_cast<std::size_t>(k - 1)];
  });
}

template <element T>
Tensor<T> median_run(const Tensor<T>& x, bool ignore_nan) {
  using K = compute_t<T>;
  std::vector<K> v;
  v.reserve(static_cast<std::size_t>(x.numel()));
  for (const T& e : x.to_vector()) v.push_back(static_cast<K>(e));
  const auto nans = static_cast<std::int64_t>(std::count_if(v.begin(), v.end(), [](const K& e) { return is_nan(e); }));
  const auto size = static_cast<std::int64_t>(v.size());
  T value = convert<T>(std::numeric_limits<double>::quiet_NaN());  // empty or NaN: PyTorch's NaN, converted
  if (size - nans > 0 && (ignore_nan || nans == 0)) {
    // the lower median of the non-NaN values (NaN sorts last)
    const auto nth = v.begin() + (size - nans - 1) / 2;
    std::nth_element(v.begin(), nth, v.end(), [](const K& a, const K& b) { return a < b || (is_nan(b) && !is_nan(a)); });
    value = convert<T>(*nth);
  }
  Tensor<T> out = full<T>({}, value);
  if constexpr (differentiable_v<T>) {
    // The gradient is shared evenly by the elements equal to the median (all NaNs when NaN).
    const Tensor<T> xd = x.detach(), od = out.detach();
    record_one<T>(out, x, [xd, od](const Tensor<T>& g) {
      const Tensor<T> xc = xd.contiguous();
      const K m = static_cast<K>(od.item());
      const auto hit = [m](const T& e) { return is_nan(m) ? is_nan(static_cast<K>(e)) : static_cast<K>(e) == m; };
      const T* p = xc.data_ptr();
      const std::int64_t count = std::count_if(p, p + xc.numel(), hit);
      Tensor<T> r = zeros<T>(xc.sizes());
      const T share = convert<T>(static_cast<compute_t<T>>(g.item()) / static_cast<compute_t<T>>(count));
      T* q = r.data_ptr();
      for (std::int64_t i = 0; i < xc.numel(); ++i)
        if (hit(p[i])) q[i] = share;
      return r;
    }, {xd, od});
  }
  return out;
}

template <element T>
with_indices<T> median_dim_run(const Tensor<T>& x, std::int64_t dim, bool keepdim, bool ignore_nan) {
  using K = compute_t<T>;
  struct scratch {
    std::vector<K> v;
    std::vector<std::int64_t> idx;
  };
  return pick_lines<T, scratch>(x, dim, keepdim, "median()", std::nullopt,
                                [ignore_nan](const T* line, std::int64_t n, std::int64_t stride, scratch& s) {
    std::vector<K>& v = s.v;
    v.resize(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) v[static_cast<std::size_t>(j)] = static_cast<K>(line[j * stride]);
    const auto nan = std::find_if(v.begin(), v.end(), [](const K& e) { return is_nan(e); });
    if (!ignore_nan && nan != v.end()) return keyed<K>{*nan, nan - v.begin()};  // median: the first NaN
    // Equal values order by index, and (nanmedian) NaN last, as PyTorch's comparators.
    const auto before = [&v](std::int64_t i, std::int64_t j) {
      const K& a = v[static_cast<std::size_t>(i)];
      const K& b = v[static_cast<std::size_t>(j)];
      return a < b || (a == b && i < j) || (is_nan(b) && !is_nan(a));
    };
    const auto nans = static_cast<std::int64_t>(std::count_if(v.begin(), v.end(), [](const K& e) { return is_nan(e); }));
    s.idx.resize(static_cast<std::size_t>(n));
    std::iota(s.idx.begin(), s.idx.end(), std::int64_t{0});
    const auto nth = s.idx.begin() + (n - nans - 1) / 2;
    std::nth_element(s.idx.begin(), nth, s.idx.end(), before);
    return keyed<K>{v[static_cast<std::size_t>(*nth)], *nth};
  });
}

template <element T>
with_indices<T> mode_run(const Tensor<T>& x, std::int64_t dim, bool keepdim) {
  using K = compute_t<T>;
  return pick_lines<T, std::vector<keyed<K>>>(x, dim, keepdim, "mode()", std::nullopt,
                                               [](const T* line, std::int64_t n, std::int64_t stride, auto& buf) {
    load_line(buf, line, n, stride);
    // PyTorch's: sort by value only (unstable), then the first longest run wins; its index
    // is the run's last element's.
    std::sort(buf.begin(), buf.end(), [](const keyed<K>& a, const keyed<K>& b) { return a.first < b.first; });
    keyed<K> best{K{}, 0};
    std::int64_t run = 0, longest = 0;
    for (std::size_t i = 0; i < buf.size(); ++i) {
      ++run;
      if (i + 1 == buf.size() || buf[i].first != buf[i + 1].first) {
        if (run > longest) {
          best = buf[i];
          longest = run;
        }
        run = 0;
      }
    }
    return best;
  });
}

template <element T>
with_indices<T> cummax_run(const Tensor<T>& x, std::int64_t dim, bool max) {
  const std::int64_t d = wrap_dim(dim, x.dim());
  Tensor<T> values = empty_like_order<T>(x);
  Tensor<std::int64_t> indices = empty_like_order<std::int64_t>(x);
  if (max) scan_tensor(extreme_op<T, true>{}, x, d, false, values, indices.data_ptr());
  else scan_tensor(extreme_op<T, false>{}, x, d, false, values, indices.data_ptr());
  record_selection(values, indices, x, d, sizes_1d(x.sizes()), true);
  return {values, indices};
}

template <element T>
Tensor<T> scan_run(const Tensor<T>& x, std::int64_t dim, scan_kind kind) {
  const std::int64_t d = wrap_dim(dim, x.dim());
  Tensor<T> y = empty_like_order<T>(x);
  if (kind == scan_kind::sum) scan_tensor(accumulate_op<T, scan_kind::sum>{}, x, d, false, y, nullptr);
  else if (kind == scan_kind::prod) scan_tensor(accumulate_op<T, scan_kind::prod>{}, x, d, false, y, nullptr);
  else if constexpr (std::is_floating_point_v<compute_t<T>> || std::is_same_v<T, float128>)
    scan_tensor(accumulate_op<T, scan_kind::logsumexp>{}, x, d, false, y, nullptr);
  if constexpr (differentiable_v<T>) {
    const Tensor<T> xd = x.detach(), yd = y.detach();
    if (kind == scan_kind::sum) {
      // The gradient of a running sum is the running sum of the gradient, from the end.
      record_one<T>(y, x, [d](const Tensor<T>& g) {
        if (g.numel() <= 1) return g;
        Tensor<T> r = empty<T>(g.sizes());
        scan_tensor(accumulate_op<T, scan_kind::sum>{}, g, d, true, r, nullptr);
        return r;
      });
    } else {
      const bool prod = kind == scan_kind::prod;
      record_one<T>(y, x, [xd, yd, d, prod](const Tensor<T>& g) {
        if (prod) return xd.numel() <= 1 ? g : cumprod_grad(g, xd, yd, d);
        if constexpr (is_complex_v<T>) return g;  // logcumsumexp has no complex form
        else return logcumsumexp_grad(g, xd, yd, d);
      }, {xd, yd});
    }
  }
  return y;
}

// ---- compiled once per dtype ----
#define STRATA_ORDER_INSTANCES(T)                                                                        \
  template with_indices<T> sort_run<T>(const Tensor<T>&, std::int64_t, bool, bool);                      \
  template with_indices<T> topk_run<T>(const Tensor<T>&, std::int64_t, std::int64_t, bool, bool);        \
  template with_indices<T> kthvalue_run<T>(const Tensor<T>&, std::int64_t, std::int64_t, bool);          \
  template Tensor<T> median_run<T>(const Tensor<T>&, bool);                                              \
  template with_indices<T> median_dim_run<T>(const Tensor<T>&, std::int64_t, bool, bool);                \
  template with_indices<T> mode_run<T>(const Tensor<T>&, std::int64_t, bool);                            \
  template with_indices<T> cummax_run<T>(const Tensor<T>&, std::int64_t, bool);
#define STRATA_SCAN_INSTANCES(T) template Tensor<T> scan_run<T>(const Tensor<T>&, std::int64_t, scan_kind);
STRATA_FOR_EACH_ORDERED_DTYPE(STRATA_ORDER_INSTANCES)
STRATA_FOR_EACH_NUMBER_DTYPE(STRATA_SCAN_INSTANCES)
#undef STRATA_ORDER_INSTANCES
#undef STRATA_SCAN_INSTANCES

template <element T>
Tensor<T> quantile_run(const Tensor<T>& x, std::span<const double> qs, bool q_list, std::optional<std::int64_t> dim,
                       bool keepdim, std::string_view interpolation, bool ignore_nan) {
  const std::string name = ignore_nan ? "nanquantile()" : "quantile()";
  if (interpolation != "linear" && interpolation != "lower" && interpolation != "higher" &&
      interpolation != "midpoint" && interpolation != "nearest")
    throw error(name + " interpolation must be one of linear, lower, higher, midpoint or nearest. Got " +
                std::string(interpolation));
  for (const double q : qs)
    if (!(q >= 0 && q <= 1)) {
      std::ostringstream got;
      got << q;  // as Python prints it: 1.5
      throw error(name + " q must be in the range [0, 1] but got " + got.str());
    }
  if (x.numel() == 0) throw error(name + " input tensor must be non-empty");
  // The values along the dim, sorted (NaN last), one row each.
  const Tensor<T> src = dim ? x : x.reshape({-1});
  const std::int64_t d = src.dim() == 0 ? 0 : wrap_dim(dim.value_or(0), src.dim());
  const Tensor<T> lines = src.dim() == 0 ? src.reshape({1}) : src.movedim(d, -1).contiguous();
  const Tensor<T> sorted = sort_run<T>(lines, -1, false, false).values.contiguous();
  const std::int64_t n = sorted.size(-1), rows = sorted.numel() / n;
  dim_vector out_sizes;
  if (q_list) out_sizes.push_back(static_cast<std::int64_t>(qs.size()));
  for (std::int64_t k = 0; k < x.dim(); ++k) {
    if (!dim || k == d) {
      if (keepdim) out_sizes.push_back(1);
    } else {
      out_sizes.push_back(x.size(k));
    }
  }
  Tensor<T> out = empty<T>(out_sizes);
  T* o = out.data_ptr();
  const T* v = sorted.data_ptr();
  for (std::size_t k = 0; k < qs.size(); ++k) {
    const T q = static_cast<T>(qs[k]);  // computed in the input's dtype, as PyTorch
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* row = v + r * n;
      std::int64_t count = n;
      if (ignore_nan) {
        while (count > 0 && std::isnan(row[count - 1])) --count;
      }
      T& result = o[static_cast<std::int64_t>(k) * rows + r];
      if (count == 0 || (!ignore_nan && std::isnan(row[n - 1]))) {
        result = std::numeric_limits<T>::quiet_NaN();
        continue;
      }
      T rank = q * static_cast<T>(count - 1);
      if (interpolation == "lower") rank = std::floor(rank);
      else if (interpolation == "higher") rank = std::ceil(rank);
      else if (interpolation == "nearest") rank = std::nearbyint(rank);  // half to even
      const auto below = static_cast<std::int64_t>(rank);
      const std::int64_t above = std::min(static_cast<std::int64_t>(std::ceil(rank)), count - 1);
      if (interpolation != "linear" && interpolation != "midpoint") {  // picked, not interpolated
        result = row[below];
        continue;
      }
      const T w = interpolation == "midpoint" ? T(0.5) : rank - static_cast<T>(below);
      const T a = row[below], b = row[above];
      result = w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);  // PyTorch's lerp
    }
  }
  return out;
}
template Tensor<float> quantile_run<float>(const Tensor<float>&, std::span<const double>, bool,
                                           std::optional<std::int64_t>, bool, std::string_view, bool);
template Tensor<double> quantile_run<double>(const Tensor<double>&, std::span<const double>, bool,
                                             std::optional<std::int64_t>, bool, std::string_view, bool);
}  // namespace strata::detail
