// SPDX-License-Identifier: MIT
// The arg-reductions (argmax/argmin, max/min along a dim) and their backward, instantiated
// once per real dtype. The input is walked in place, whatever its strides: along each line
// when the reduced dim is the fastest one, else a block of output positions at a time with a
// running best per position (so a column reduction reads rows contiguously).
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>
#include "parallel.hpp"
#include "vmath.hpp"
module strata.expr;
import strata.dtype;
import strata.shape;
import strata.tensor;

namespace strata::detail {
namespace {
template <class T>
using key_t = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

/// True when v should replace best: strictly better, or the first NaN (NaN wins and stays).
template <bool Largest, class K>
bool better(K v, K best) {
  if constexpr (std::is_integral_v<K>) {
    return Largest ? v > best : v < best;
  } else {
    if (best != best) return false;
    if (v != v) return true;
    return Largest ? v > best : v < best;
  }
}

struct arg_job {
  const void* x;
  std::int64_t n, stride;  // the reduced dim
  std::int64_t lane_size = 1, lane_stride = 0, lane_out_stride = 0;  // blocks: the fastest other dim
  std::vector<std::int64_t> outer_sizes, outer_strides, outer_out_strides;  // the other dims
  void* values;
  std::int64_t* indices;
  std::int64_t per = 1, positions = 1;  // outer positions a task, and in all
};

/// Offsets of outer position p (row-major over outer_sizes) in the input and the outputs.
std::pair<std::int64_t, std::int64_t> outer_offsets(const arg_job& job, std::int64_t p) {
  std::int64_t in = 0, out = 0;
  for (std::size_t d = job.outer_sizes.size(); d-- > 0;) {
    const std::int64_t i = p % job.outer_sizes[d];
    in += i * job.outer_strides[d];
    out += i * job.outer_out_strides[d];
    p /= job.outer_sizes[d];
  }
  return {in, out};
}

/// The index of the first largest (smallest) element of x[0, n), or of its first NaN: the
/// extreme a vector at a time, then a vector scan for the first block holding it.
template <class T, bool Largest>
std::int64_t first_extreme(const T* __restrict x, std::int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using V = T __attribute__((vector_size(64)));
    constexpr std::int64_t W = 64 / sizeof(T);
    T b = x[0];
    bool nan = false;
    std::int64_t i = 0;
    if (n >= W) {
      V best, probe = {};
      std::memcpy(&best, x, sizeof best);
      for (i = 0; i + W <= n; i += W) {
        V v;
        std::memcpy(&v, x + i, sizeof v);
        best = Largest ? __builtin_elementwise_max(best, v) : __builtin_elementwise_min(best, v);
        probe += v * T(0);  // NaN once a NaN (or an infinity: the scan then decides) went by
      }
      for (std::int64_t k = 0; k < W; ++k) {
        b = Largest ? std::max(b, best[k]) : std::min(b, best[k]);
        nan = nan || probe[k] != probe[k];
      }
    }
    for (; i < n; ++i) {
      b = Largest ? (x[i] > b ? x[i] : b) : (x[i] < b ? x[i] : b);
      nan = nan || x[i] != x[i];
    }
    if (nan || b != b)
      for (std::int64_t k = 0; k < n; ++k)
        if (x[k] != x[k]) return k;
    std::int64_t k = 0;
    V target;
    for (std::int64_t j = 0; j < W; ++j) target[j] = b;
    for (; k + W <= n; k += W) {
      V v;
      std::memcpy(&v, x + k, sizeof v);
      if (__builtin_reduce_or(v == target)) break;
    }
    for (; k < n; ++k)
      if (x[k] == b) return k;
    return 0;
  } else {
    T b = x[0];
    for (std::int64_t i = 1; i < n; ++i) b = Largest ? (x[i] > b ? x[i] : b) : (x[i] < b ? x[i] : b);
    for (std::int64_t k = 0; k < n; ++k)
      if (x[k] == b) return k;
    return 0;
  }
}

// Lanes this few (the kept dim beside a reduced one, x [N, 5] over dim 0) lying back to back
// are reduced lane_rows rows at a time: one vectorisable pass over lane_rows * m values a step.
constexpr std::int64_t short_lanes = 16, lane_rows = 16;
// Lines this short lying back to back (x [N, 5] over dim 1) are reduced line_block at a time.
constexpr std::int64_t short_line = 16, line_block = 16;

/// The extremes of m <= short_lanes lanes whose rows lie back to back (x[k * m + j]): a running
/// best for each of the lane_rows * m values of a step (the step it came from kept), then
/// each lane's first extreme over its lane_rows partials, then the rows left over.
template <class T, bool Largest>
void short_lanes_position(const arg_job& job, const T* x, std::int64_t out0) {
  using K = key_t<T>;
  const std::int64_t m = job.lane_size, width = lane_rows * m, steps = job.n / lane_rows;
  K best[short_lanes * lane_rows];
  std::int64_t step_of[short_lanes * lane_rows];
  for (std::int64_t i = 0; i < width; ++i) {
    best[i] = static_cast<K>(x[i]);
    step_of[i] = 0;
  }
  for (std::int64_t k = 1; k < steps; ++k) {
    const T* row = x + k * width;
    for (std::int64_t i = 0; i < width; ++i) {
      const K v = static_cast<K>(row[i]);
      const bool b = better<Largest>(v, best[i]);
      best[i] = b ? v : best[i];
      step_of[i] = b ? k : step_of[i];
    }
  }
  T* values = static_cast<T*>(job.values);
  for (std::int64_t j = 0; j < m; ++j) {
    // Partial r holds the best of rows r, r + lane_rows, ...: the lane's extreme is the best
    // of them, the earliest row among equals (or among NaNs).
    K b = best[j];
    std::int64_t at = step_of[j] * lane_rows;
    for (std::int64_t r = 1; r < lane_rows; ++r) {
      const K v = best[r * m + j];
      const std::int64_t row = step_of[r * m + j] * lane_rows + r;
      bool same = v == b;
      if constexpr (!std::is_integral_v<K>) same = same || (v != v && b != b);  // float128 too
      if (better<Largest>(v, b) || (same && row < at)) {
        b = v;
        at = row;
      }
    }
    for (std::int64_t k = steps * lane_rows; k < job.n; ++k) {
      const K v = static_cast<K>(x[k * m + j]);
      if (better<Largest>(v, b)) {
        b = v;
        at = k;
      }
    }
    const std::int64_t o = out0 + j * job.lane_out_stride;
    job.indices[o] = at;
    if (values) values[o] = x[at * m + j];
  }
}

template <class T, bool Largest>
void run_position(const arg_job& job, std::int64_t p) {
  using K = key_t<T>;
  const auto [in0, out0] = outer_offsets(job, p);
  const T* x = static_cast<const T*>(job.x) + in0;
  T* values = static_cast<T*>(job.values);
  const std::int64_t m = job.lane_size, os = job.lane_out_stride;
  if constexpr (std::is_same_v<T, K> && std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    if (m == 1 && job.stride == 1) {  // a contiguous line: a vectorised extreme, then its first index
      const std::int64_t at = first_extreme<T, Largest>(x, job.n);
      job.indices[out0] = at;
      if (values) values[out0] = x[at];
      return;
    }
  }
  if (m == 1) {  // one line
    K best = static_cast<K>(x[0]);
    std::int64_t at = 0;
    for (std::int64_t k = 1; k < job.n; ++k) {
      const K v = static_cast<K>(x[k * job.stride]);
      if (better<Largest>(v, best)) {
        best = v;
        at = k;
      }
    }
    job.indices[out0] = at;
    if (values) values[out0] = x[at * job.stride];
    return;
  }
  if (m <= short_lanes && job.lane_stride == 1 && job.stride == m && job.n >= 2 * lane_rows)
    return short_lanes_position<T, Largest>(job, x, out0);
  constexpr std::int64_t block = 256;
  K best[block];
  std::int64_t at[block];
  for (std::int64_t j0 = 0; j0 < m; j0 += block) {
    const std::int64_t w = std::min(block, m - j0);
    const T* base = x + j0 * job.lane_stride;
    for (std::int64_t j = 0; j < w; ++j) {
      best[j] = static_cast<K>(base[j * job.lane_stride]);
      at[j] = 0;
    }
    for (std::int64_t k = 1; k < job.n; ++k) {
      const T* row = base + k * job.stride;
      for (std::int64_t j = 0; j < w; ++j) {
        const K v = static_cast<K>(row[j * job.lane_stride]);
        const bool b = better<Largest>(v, best[j]);
        best[j] = b ? v : best[j];
        at[j] = b ? k : at[j];
      }
    }
    for (std::int64_t j = 0; j < w; ++j) {
      const std::int64_t o = out0 + (j0 + j) * os;
      job.indices[o] = at[j];
      if (values) values[o] = base[at[j] * job.stride + j * job.lane_stride];
    }
  }
}

/// Lines of n <= short_line elements lying back to back (argmax(x[N, 5], 1)) reduced
/// line_block at a time: element k of every line of the block at once, a running best per
/// line (the loop across lines vectorises), ties keeping the first index.
template <class T, bool Largest>
void short_lines(const arg_job& job, std::int64_t p0) {
  using K = key_t<T>;
  const std::int64_t n = job.n;
  const T* x = static_cast<const T*>(job.x) + p0 * n;
  K best[line_block];
  std::int64_t at[line_block];
  for (std::int64_t l = 0; l < line_block; ++l) {
    best[l] = static_cast<K>(x[l * n]);
    at[l] = 0;
  }
  for (std::int64_t k = 1; k < n; ++k)
    for (std::int64_t l = 0; l < line_block; ++l) {
      const K v = static_cast<K>(x[l * n + k]);
      const bool b = better<Largest>(v, best[l]);
      best[l] = b ? v : best[l];
      at[l] = b ? k : at[l];
    }
  T* values = static_cast<T*>(job.values);
  const std::int64_t os = job.outer_out_strides[0];
  for (std::int64_t l = 0; l < line_block; ++l) {
    job.indices[(p0 + l) * os] = at[l];
    if (values) values[(p0 + l) * os] = x[l * n + at[l]];
  }
}

template <class T, bool Largest>
void run_body(void* ctx, std::int64_t t) {
  const auto& job = *static_cast<const arg_job*>(ctx);
  const std::int64_t p0 = t * job.per, p1 = std::min(p0 + job.per, job.positions);
  std::int64_t p = p0;
  if (job.lane_size == 1 && job.stride == 1 && job.n <= short_line && job.outer_sizes.size() == 1 &&
      job.outer_strides[0] == job.n)
    for (; p + line_block <= p1; p += line_block) short_lines<T, Largest>(job, p);
  for (; p < p1; ++p) run_position<T, Largest>(job, p);
}
}  // namespace

template <element T>
void arg_reduce(const Tensor<T>& x, std::int64_t dim, bool largest, const Tensor<T>* values,
                const Tensor<std::int64_t>& indices) {
  // The outputs are fresh and contiguous, with dim kept as size 1.
  if (x.dim() == 0) {
    indices.fill_(0);
    if (values) values->copy_(x);
    return;
  }
  const int_list sizes = x.sizes(), strides = x.strides(), out_strides = indices.strides();
  const auto d = static_cast<std::size_t>(dim);
  arg_job job{x.data_ptr(), sizes[d], strides[d], 1, 0, 0, {}, {}, {}, values ? values->data_ptr() : nullptr,
              indices.data_ptr()};
  // When another dim moves faster than the reduced one, walk blocks along it (a running best
  // per position) so that each step reads neighbouring elements.
  const auto magnitude = [&](std::size_t k) { return strides[k] < 0 ? -strides[k] : strides[k]; };
  std::size_t lane = sizes.size();
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (k != d && sizes[k] > 1 && magnitude(k) < magnitude(d) && (lane == sizes.size() || magnitude(k) < magnitude(lane)))
      lane = k;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (k == d) continue;
    if (k == lane) {
      job.lane_size = sizes[k];
      job.lane_stride = strides[k];
      job.lane_out_stride = out_strides[k];
      continue;
    }
    job.outer_sizes.push_back(sizes[k]);
    job.outer_strides.push_back(strides[k]);
    job.outer_out_strides.push_back(out_strides[k]);
  }
  std::int64_t positions = 1;
  for (const std::int64_t s : job.outer_sizes) positions *= s;
  if (positions * job.lane_size == 0) return;
  job.positions = positions;
  // A task reduces positions of about 4096 elements in all (short lines one at a time cost a
  // call each otherwise).
  job.per = std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, job.lane_size * job.n));
  const std::int64_t tasks = (positions + job.per - 1) / job.per;
  const std::int64_t work = positions * job.lane_size * job.n;
  const std::int64_t threads = work < (1 << 15) ? 1 : std::clamp<std::int64_t>(tasks, 1, get_num_threads());
  parallel_run(tasks, static_cast<int>(threads), largest ? run_body<T, true> : run_body<T, false>, &job);
}

template <element T>
Tensor<T> pick_backward(const Tensor<T>& grad, const Tensor<std::int64_t>& indices, std::int64_t dim, int_list sizes,
                        bool keepdim) {
  Tensor<T> out = zeros<T>(sizes);
  if (out.numel() == 0) return out;
  if (sizes.empty()) {
    out.copy_(grad);
    return out;
  }
  const Tensor<T> g = (keepdim ? grad : grad.unsqueeze(dim)).contiguous();
  const Tensor<std::int64_t> idx = keepdim ? indices : indices.unsqueeze(dim);
  const auto d = static_cast<std::size_t>(dim);
  // out[..., idx[..., 0, ...], ...] = g[..., 0, ...], position by position.
  std::int64_t inner = 1;
  for (std::size_t k = d + 1; k < sizes.size(); ++k) inner *= sizes[k];
  const std::int64_t n = sizes[d], outer = g.numel() / std::max<std::int64_t>(inner, 1);
  const Tensor<std::int64_t> ic = idx.contiguous();
  const T* gp = g.data_ptr();
  const std::int64_t* ip = ic.data_ptr();
  T* op = out.data_ptr();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < inner; ++j) op[(o * n + ip[o * inner + j]) * inner + j] = gp[o * inner + j];
  return out;
}

// ---- softmax along the last dim, one row at a time while it is in cache ----
namespace {
/// 64 bytes of T: one AVX-512 register or two AVX2 ones, written once for both. Vectors are
/// passed by reference: a 64-byte vector by value changes the ABI between ISAs.
template <class T>
using vec64 = T __attribute__((vector_size(64)));
/// v = the 64 bytes at p (any element-aligned address).
template <class T>
void load(vec64<T>& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
/// f folded pairwise across v's lanes: lane k with lane k + w for w = lanes / 2, lanes / 4, ...,
/// 1, by halves of the vector (a shuffle tree, not a serial chain). f(a, b) sets a to a op b
/// (vectors by reference: a vector returned by value changes the ABI between ISAs).
template <class T, class F>
T lane_fold(const vec64<T>& v, F f) {
  using v32 = T __attribute__((vector_size(32)));
  using v16 = T __attribute__((vector_size(16)));
  v32 a, b;
  std::memcpy(&a, &v, 32);
  std::memcpy(&b, reinterpret_cast<const char*>(&v) + 32, 32);
  f(a, b);
  v16 c, d;
  std::memcpy(&c, &a, 16);
  std::memcpy(&d, reinterpret_cast<const char*>(&a) + 16, 16);
  f(c, d);
  constexpr int lanes = 16 / sizeof(T);
  T e[lanes];
  std::memcpy(e, &c, sizeof e);
  for (int w = lanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) f(e[k], e[k + w]);
  return e[0];
}

/// The largest element of x[0, n), NaN ignored (a NaN still spreads through exp and the sum).
/// `v > m ? v : m` is one vmaxps per vector: a NaN in v keeps m.
template <class T>
T row_max(const T* __restrict x, std::int64_t n) {
  constexpr std::int64_t lanes = 64 / sizeof(T);
  vec64<T> m[2], v;
  m[0] = m[1] = vec64<T>{} - std::numeric_limits<T>::infinity();
  std::int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes)
    for (int k = 0; k < 2; ++k) {
      load(v, x + i + k * lanes);
      m[k] = v > m[k] ? v : m[k];
    }
  for (; i + lanes <= n; i += lanes) {
    load(v, x + i);
    m[0] = v > m[0] ? v : m[0];
  }
  m[0] = m[1] > m[0] ? m[1] : m[0];
  T r = lane_fold(m[0], [](auto& a, const auto& b) { a = b > a ? b : a; });  // no NaN in the lanes
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

template <class T>
T lane_sum(const vec64<T>& v) {  // pairwise across the lanes
  return lane_fold(v, [](auto& a, const auto& b) { a += b; });
}

/// Sum of x[0, n) in four vector accumulators.
template <class T>
T row_sum(const T* __restrict x, std::int64_t n) {
  constexpr std::int64_t lanes = 64 / sizeof(T);
  vec64<T> a[4] = {}, v;
  std::int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes)
    for (int k = 0; k < 4; ++k) {
      load(v, x + i + k * lanes);
      a[k] += v;
    }
  for (; i + lanes <= n; i += lanes) {
    load(v, x + i);
    a[0] += v;
  }
  a[0] = (a[0] + a[1]) + (a[2] + a[3]);
  T s = lane_sum(a[0]);
  for (; i < n; ++i) s += x[i];
  return s;
}

struct softmax_job {
  const void* x;
  void* y;
  std::int64_t n;
  std::int64_t rows;
  std::int64_t per;  ///< rows a task: short rows go a block at a time
  bool log;          ///< log_softmax (with lse: unused)
  bool lse;          ///< logsumexp: y holds one value a row, m + log(sum(exp(x - m)))
};

template <class T>
void softmax_row(void* ctx, std::int64_t r) {
  const auto& job = *static_cast<const softmax_job*>(ctx);
  const T* x = static_cast<const T*>(job.x) + r * job.n;
  T* y = job.lse ? nullptr : static_cast<T*>(job.y) + r * job.n;  // logsumexp: job.y has a value a row
  const std::int64_t n = job.n;
  T m = row_max(x, n);
  if (job.lse && !std::isfinite(m)) m = 0;  // logsumexp: an infinite maximum shifts by 0 (PyTorch)
  constexpr std::int64_t chunk = 1024;
  T s = 0;
  if (job.log || job.lse) {  // y = x - m (logsumexp: a chunk buffer); the exponentials only summed
    T e[chunk], t[chunk];
    for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
      const std::int64_t w = std::min(chunk, n - i0);
      T* shifted = job.lse ? t : y + i0;
      for (std::int64_t i = 0; i < w; ++i) shifted[i] = x[i0 + i] - m;
      vmath(vfn::exp, shifted, e, w);
      s += row_sum(e, w);
    }
    const T ls = std::log(s);
    if (job.lse) {
      static_cast<T*>(job.y)[r] = ls + m;
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) y[i] -= ls;
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
    const std::int64_t w = std::min(chunk, n - i0);
    vmath(vfn::exp, y + i0, y + i0, w);
    s += row_sum(y + i0, w);
  }
  const T inv = T(1) / s;
  for (std::int64_t i = 0; i < n; ++i) y[i] *= inv;
}

/// Elements of a block of short rows: one vector-math call for the whole block.
constexpr std::int64_t softmax_block = 1024;

/// Rows [b * per, (b + 1) * per) of the job: long rows one by one (softmax_row); short rows
/// shifted by their maxima together, their exponentials taken by one vector-math call, then
/// each row summed and scaled as softmax_row does (the same bits). N > 0: rows of N elements,
/// a compile-time constant, so that the per-row loops vectorise across rows.
template <class T, int N>
void softmax_rows_block(void* ctx, std::int64_t b) {
  const auto& job = *static_cast<const softmax_job*>(ctx);
  const std::int64_t r0 = b * job.per, r1 = std::min(job.rows, r0 + job.per), n = N > 0 ? N : job.n;
  if (job.per == 1) return softmax_row<T>(ctx, r0);
  const T* x = static_cast<const T*>(job.x) + r0 * n;
  const std::int64_t len = (r1 - r0) * n;
  T shifted[softmax_block], shift[softmax_block];  // logsumexp's: y has one value a row
  T* y = job.lse ? shifted : static_cast<T*>(job.y) + r0 * n;
  for (std::int64_t r = 0; r < r1 - r0; ++r) {
    T m = row_max(x + r * n, n);
    if (job.lse && !std::isfinite(m)) m = 0;
    shift[r] = m;
    for (std::int64_t i = r * n; i < (r + 1) * n; ++i) y[i] = x[i] - m;
  }
  if (job.lse) {
    vmath(vfn::exp, y, y, len);
    T* out = static_cast<T*>(job.y) + r0;
    for (std::int64_t r = 0; r < r1 - r0; ++r) out[r] = std::log(row_sum(y + r * n, n)) + shift[r];
    return;
  }
  if (job.log) {
    T e[softmax_block];
    vmath(vfn::exp, y, e, len);
    for (std::int64_t r = 0; r < r1 - r0; ++r) {
      const T ls = std::log(row_sum(e + r * n, n));
      for (std::int64_t i = r * n; i < (r + 1) * n; ++i) y[i] -= ls;
    }
    return;
  }
  vmath(vfn::exp, y, y, len);
  for (std::int64_t r = 0; r < r1 - r0; ++r) {
    const T inv = T(1) / row_sum(y + r * n, n);
    for (std::int64_t i = r * n; i < (r + 1) * n; ++i) y[i] *= inv;
  }
}

/// The block function for rows of n: rows of 2-7 with their length a constant.
template <class T>
auto softmax_block_fn(std::int64_t n) -> void (*)(void*, std::int64_t) {
  switch (n) {
    case 2: return softmax_rows_block<T, 2>;
    case 3: return softmax_rows_block<T, 3>;
    case 4: return softmax_rows_block<T, 4>;
    case 5: return softmax_rows_block<T, 5>;
    case 6: return softmax_rows_block<T, 6>;
    case 7: return softmax_rows_block<T, 7>;
    default: return softmax_rows_block<T, 0>;
  }
}

/// Runs the job over x's rows of n (x.numel() elements in all), a block of short rows a task.
template <class T>
void run_rows(const T* x, T* y, std::int64_t numel, std::int64_t n, bool log, bool lse) {
  const std::int64_t rows = numel / n;
  const std::int64_t per = std::max<std::int64_t>(1, softmax_block / n), tasks = (rows + per - 1) / per;
  softmax_job job{x, y, n, rows, per, log, lse};
  const std::int64_t threads = numel < (1 << 15) ? 1 : std::clamp<std::int64_t>(tasks, 1, get_num_threads());
  parallel_run(tasks, static_cast<int>(threads), softmax_block_fn<T>(n), &job);
}
}  // namespace

// ---- softmax along a dim that is not the last: the columns of x viewed as [outer, n, inner] ----
namespace {
/// Elements of a block: rows walked as one flat run against a pattern of the block's length.
constexpr std::int64_t span_block = 1024;
/// Blocks of a chunk: the rows whose maximum and sum are taken as one partial, the partials
/// then combined in a fixed order (so the result does not depend on the thread count).
constexpr std::int64_t span_chunk_blocks = 64;

enum class span_mode { softmax, log_softmax, logsumexp };

/// x viewed as [outer, n, inner], reduced along n. Its columns are split into cbs blocks of w
/// (the last narrower), its rows into chunks; a task is one chunk of one column block. When a
/// column block is the whole inner dim (flat), rpc consecutive rows are one contiguous run of
/// rpc * w elements, so the loops are flat whatever w is.
template <class T>
struct span_job {
  const T* x;
  T* y;  ///< x's sizes (logsumexp: [outer, inner])
  std::int64_t outer, n, inner;
  std::int64_t cbs, w;      ///< column blocks and their width
  std::int64_t rpc;         ///< rows a block: span_block / w when flat, else 1
  std::int64_t chunk_rows;  ///< rpc * span_chunk_blocks
  std::int64_t chunks;      ///< chunks of each column block
  span_mode mode;
  T* pm;  ///< [task][w]: each chunk's maximum per column, then its sum
  T* m;   ///< [outer][inner]: the shift
  T* s;   ///< [outer][inner]: 1 / sum (softmax), log(sum) (log_softmax)

  std::int64_t width(std::int64_t cb) const { return std::min(w, inner - cb * w); }
  /// f(offset, length) for each block of task t: a run of x (and y) of length elements.
  template <class F>
  void for_blocks(std::int64_t t, F f) const {
    const std::int64_t c = t % chunks, ocb = t / chunks, cb = ocb % cbs, o = ocb / cbs, wd = width(cb);
    const std::int64_t r1 = std::min(n, (c + 1) * chunk_rows);
    for (std::int64_t r = c * chunk_rows; r < r1; r += rpc)
      f((o * n + r) * inner + cb * w, std::min(rpc, r1 - r) * wd);
  }
  /// p[k] = v[k % wd] for k < rpc * wd: a column block's values as the pattern of its blocks.
  void pattern(T* p, const T* v, std::int64_t wd) const {
    for (std::int64_t r = 0; r < rpc; ++r)
      for (std::int64_t k = 0; k < wd; ++k) p[r * wd + k] = v[k];
  }
  /// The offset of column block (o, cb)'s first column in [outer][inner].
  std::int64_t column(std::int64_t ocb) const { return (ocb / cbs) * inner + (ocb % cbs) * w; }
};

/// a[r * stride + k] for r < rows folded pairwise over r into a[k] by f(a, b) (a = a op b).
template <class T, class F>
void fold_pairwise(T* a, std::int64_t rows, std::int64_t stride, std::int64_t wd, F f) {
  for (std::int64_t h = 1; h < rows; h *= 2)
    for (std::int64_t r = 0; r + h < rows; r += 2 * h)
      for (std::int64_t k = 0; k < wd; ++k) f(a[r * stride + k], a[(r + h) * stride + k]);
}
/// a = the larger of a and b (neither is NaN: the maxima ignore it).
inline constexpr auto max_into = [](auto& a, const auto& b) { a = b > a ? b : a; };
inline constexpr auto add_into = [](auto& a, const auto& b) { a += b; };

/// Phase 1 of task t: the chunk's maximum per column (NaN ignored, as row_max) into pm.
template <class T>
void span_max(void* ctx, std::int64_t t) {
  const auto& j = *static_cast<const span_job<T>*>(ctx);
  const std::int64_t wd = j.width(t / j.chunks % j.cbs);
  T mp[span_block];
  std::fill(mp, mp + j.rpc * wd, -std::numeric_limits<T>::infinity());
  j.for_blocks(t, [&](std::int64_t off, std::int64_t len) {
    const T* __restrict x = j.x + off;
    for (std::int64_t k = 0; k < len; ++k) mp[k] = x[k] > mp[k] ? x[k] : mp[k];
  });
  fold_pairwise(mp, j.rpc, wd, wd, max_into);
  std::copy(mp, mp + wd, j.pm + t * j.w);
}

/// The shift of column block ocb: its chunks' maxima combined (logsumexp: an infinite one 0).
template <class T>
void span_shift(const span_job<T>& j, std::int64_t ocb) {
  const std::int64_t wd = j.width(ocb % j.cbs);
  T* m = j.m + j.column(ocb);
  T* pm = j.pm + ocb * j.chunks * j.w;  // phase 2 writes its sums over the maxima
  fold_pairwise(pm, j.chunks, j.w, wd, max_into);
  std::copy(pm, pm + wd, m);
  if (j.mode == span_mode::logsumexp)
    for (std::int64_t k = 0; k < wd; ++k)
      if (!std::isfinite(m[k])) m[k] = 0;
}

/// Phase 2 of task t: exp(x - m) (softmax: into y; log_softmax: x - m into y) summed per column
/// into pm (over the maxima, no longer needed): each pattern slot along its blocks, then the
/// slots of a column pairwise.
template <class T>
void span_exp_sum(void* ctx, std::int64_t t) {
  const auto& j = *static_cast<const span_job<T>*>(ctx);
  const std::int64_t ocb = t / j.chunks, wd = j.width(ocb % j.cbs);
  T shift[span_block], acc[span_block], e[span_block];
  j.pattern(shift, j.m + j.column(ocb), wd);
  std::fill(acc, acc + j.rpc * wd, T(0));
  j.for_blocks(t, [&](std::int64_t off, std::int64_t len) {
    const T* x = j.x + off;  // y may be x (in place): no restrict
    T* d = j.mode == span_mode::logsumexp ? e : j.y + off;
    for (std::int64_t k = 0; k < len; ++k) d[k] = x[k] - shift[k];
    T* ex = j.mode == span_mode::softmax ? d : e;
    vmath(vfn::exp, d, ex, len);
    for (std::int64_t k = 0; k < len; ++k) acc[k] += ex[k];
  });
  fold_pairwise(acc, j.rpc, wd, wd, add_into);
  std::copy(acc, acc + wd, j.pm + t * j.w);
}

/// The sums of column block ocb: its chunks' partial sums pairwise, then what phase 3 applies
/// (logsumexp: the result, log(sum) + m, into y).
template <class T>
void span_scale(const span_job<T>& j, std::int64_t ocb) {
  const std::int64_t wd = j.width(ocb % j.cbs), col = j.column(ocb);
  T* ps = j.pm + ocb * j.chunks * j.w;
  fold_pairwise(ps, j.chunks, j.w, wd, add_into);
  for (std::int64_t k = 0; k < wd; ++k) {
    switch (j.mode) {
      case span_mode::softmax: j.s[col + k] = T(1) / ps[k]; break;
      case span_mode::log_softmax: j.s[col + k] = std::log(ps[k]); break;
      case span_mode::logsumexp: j.y[col + k] = std::log(ps[k]) + j.m[col + k]; break;
    }
  }
}

/// Phase 3 of task t: y scaled by 1 / sum (softmax) or less log(sum) (log_softmax).
template <class T>
void span_apply(void* ctx, std::int64_t t) {
  const auto& j = *static_cast<const span_job<T>*>(ctx);
  const std::int64_t ocb = t / j.chunks, wd = j.width(ocb % j.cbs);
  T sc[span_block];
  j.pattern(sc, j.s + j.column(ocb), wd);
  const bool log = j.mode == span_mode::log_softmax;
  j.for_blocks(t, [&](std::int64_t off, std::int64_t len) {
    T* __restrict y = j.y + off;
    if (log)
      for (std::int64_t k = 0; k < len; ++k) y[k] -= sc[k];
    else
      for (std::int64_t k = 0; k < len; ++k) y[k] *= sc[k];
  });
}

/// One column block whose rows are one chunk: the three phases while it is in cache.
template <class T>
void span_whole(void* ctx, std::int64_t ocb) {
  const auto& j = *static_cast<const span_job<T>*>(ctx);
  span_max<T>(ctx, ocb);
  span_shift(j, ocb);
  span_exp_sum<T>(ctx, ocb);
  span_scale(j, ocb);
  if (j.mode != span_mode::logsumexp) span_apply<T>(ctx, ocb);
}

/// Runs mode over the columns of x viewed as [outer, n, inner] (inner > 1). Each column's maximum
/// and sum are partials of fixed chunks of rows combined in a fixed order: the same bits on any
/// number of threads.
template <class T>
void run_span(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner, span_mode mode) {
  span_job<T> j{};
  j.x = x;
  j.y = y;
  j.outer = outer;
  j.n = n;
  j.inner = inner;
  j.cbs = (inner + span_block - 1) / span_block;
  j.w = (inner + j.cbs - 1) / j.cbs;
  j.rpc = j.cbs == 1 ? span_block / j.w : 1;
  j.chunk_rows = j.rpc * span_chunk_blocks;
  j.chunks = (n + j.chunk_rows - 1) / j.chunk_rows;
  j.mode = mode;
  const std::int64_t blocks = outer * j.cbs, tasks = blocks * j.chunks;
  std::vector<T> pm(static_cast<std::size_t>(tasks * j.w)), m(static_cast<std::size_t>(outer * inner)),
      s(mode == span_mode::logsumexp ? 0 : static_cast<std::size_t>(outer * inner));
  j.pm = pm.data();
  j.m = m.data();
  j.s = s.data();
  const std::int64_t numel = outer * n * inner;
  const auto threads = [&](std::int64_t units) {
    return static_cast<int>(numel < (1 << 15) ? 1 : std::clamp<std::int64_t>(units, 1, get_num_threads()));
  };
  if (j.chunks == 1) return parallel_run(blocks, threads(blocks), span_whole<T>, &j);
  parallel_run(tasks, threads(tasks), span_max<T>, &j);
  for (std::int64_t b = 0; b < blocks; ++b) span_shift(j, b);
  parallel_run(tasks, threads(tasks), span_exp_sum<T>, &j);
  for (std::int64_t b = 0; b < blocks; ++b) span_scale(j, b);
  if (mode != span_mode::logsumexp) parallel_run(tasks, threads(tasks), span_apply<T>, &j);
}

/// The product of sizes [first, last) of x.
template <class T>
std::int64_t extent(const Tensor<T>& x, std::int64_t first, std::int64_t last) {
  std::int64_t p = 1;
  for (std::int64_t d = first; d < last; ++d) p *= x.size(d);
  return p;
}
}  // namespace

template <element T>
void softmax_along(const Tensor<T>& x, const Tensor<T>& out, std::int64_t dim, bool log) {
  const std::int64_t inner = extent(x, dim + 1, x.dim());
  if (inner == 1) return run_rows<T>(x.data_ptr(), out.data_ptr(), x.numel(), x.size(dim), log, false);
  run_span<T>(x.data_ptr(), out.data_ptr(), extent(x, 0, dim), x.size(dim), inner,
              log ? span_mode::log_softmax : span_mode::softmax);
}
template void softmax_along<float>(const Tensor<float>&, const Tensor<float>&, std::int64_t, bool);
template void softmax_along<double>(const Tensor<double>&, const Tensor<double>&, std::int64_t, bool);

template <element T>
void logsumexp_along(const Tensor<T>& x, std::int64_t first, std::int64_t last, const Tensor<T>& out) {
  const std::int64_t n = extent(x, first, last), inner = extent(x, last, x.dim());
  if (inner == 1) return run_rows<T>(x.data_ptr(), out.data_ptr(), x.numel(), n, false, true);
  run_span<T>(x.data_ptr(), out.data_ptr(), extent(x, 0, first), n, inner, span_mode::logsumexp);
}
template void logsumexp_along<float>(const Tensor<float>&, std::int64_t, std::int64_t, const Tensor<float>&);
template void logsumexp_along<double>(const Tensor<double>&, std::int64_t, std::int64_t, const Tensor<double>&);

// ---- var's central moments: one pass, blocks twice while in cache, merged in double ----
namespace {
/// Chan, Golub and LeVeque's pairwise update of a running mean and M2 by a block's: f and g
/// are the block's weights, bn / total and before * bn / total for counts before and bn.
inline void chan_update(double& mean, double& m2, double bmean, double bm2, double f, double g) {
  const double d = bmean - mean;
  mean += d * f;
  m2 += bm2 + d * d * g;
}

/// A block's or a run of blocks' count, mean and sum of squared deviations (M2).
struct moments {
  double n = 0, mean = 0, m2 = 0;
  /// This and the block (bn, bmean, bm2) as one sample.
  void merge(double bn, double bmean, double bm2) {
    if (n == 0) {
      *this = {bn, bmean, bm2};
      return;
    }
    const double total = n + bn;
    chan_update(mean, m2, bmean, bm2, bn / total, n * bn / total);
    n = total;
  }
};

/// Moments of x[0, n): the block's mean, then the deviations from it, summed in 64 bytes of
/// lanes; the residual sum of deviations corrects both (the block mean is rounded to T).
template <class T>
void row_block(const T* __restrict x, std::int64_t n, moments& acc) {
  constexpr std::int64_t lanes = 64 / sizeof(T);
  const T mb = row_sum(x, n) / static_cast<T>(n);
  const vec64<T> m = vec64<T>{} + mb;
  vec64<T> s1[2] = {}, s2[2] = {}, d;
  std::int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes)
    for (int k = 0; k < 2; ++k) {
      load(d, x + i + k * lanes);
      d -= m;
      s1[k] += d;
      s2[k] += d * d;
    }
  for (; i + lanes <= n; i += lanes) {
    load(d, x + i);
    d -= m;
    s1[0] += d;
    s2[0] += d * d;
  }
  s1[0] += s1[1];
  s2[0] += s2[1];
  T a1 = lane_sum(s1[0]), a2 = lane_sum(s2[0]);
  for (; i < n; ++i) {
    const T e = x[i] - mb;
    a1 += e;
    a2 += e * e;
  }
  const double dn = static_cast<double>(n), b1 = a1;
  acc.merge(dn, static_cast<double>(mb) + b1 / dn, static_cast<double>(a2) - b1 * b1 / dn);
}

/// Lane moments from a block (its rounded mean mb and the sums s1, s2 of deviations from it
/// over dn rows) merged into a running mean and m2 (chan_update; f and g are the block's
/// weights, the same for every lane; inv_dn is 1 / dn).
template <class T>
void merge_lane(double& mean, double& m2, T mb, T s1, T s2, double inv_dn, double f, double g) {
  const double b1 = s1;
  chan_update(mean, m2, static_cast<double>(mb) + b1 * inv_dn, static_cast<double>(s2) - b1 * b1 * inv_dn, f, g);
}

/// Deviations of `rows` (<= 8) rows (row r at x + r * ld) from shift, for each of w lanes,
/// added to s1 and (squared) to s2; the first group of a superblock (First) sets shift to its
/// own mean (its rows read twice, the second time from L1) and s1, s2 to its sums.
template <class T, bool First>
void deviation_group(const T* __restrict x, std::int64_t rows, std::int64_t ld, std::int64_t w, T* __restrict shift,
                     T* __restrict s1, T* __restrict s2) {
  constexpr std::int64_t lanes = 64 / sizeof(T);
  const T inv = T(1) / static_cast<T>(rows);
  std::int64_t j = 0;
  for (; j + lanes <= w; j += lanes) {
    vec64<T> sh, v, a[2] = {}, q[2] = {};
    if constexpr (First) {
      vec64<T> m[2] = {};
      for (std::int64_t r = 0; r < rows; ++r) {
        load(v, x + r * ld + j);
        m[r & 1] += v;
      }
      sh = (m[0] + m[1]) * inv;
      std::memcpy(shift + j, &sh, sizeof sh);
    } else {
      load(sh, shift + j);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      load(v, x + r * ld + j);
      v -= sh;
      a[r & 1] += v;
      q[r & 1] += v * v;
    }
    a[0] += a[1];
    q[0] += q[1];
    if constexpr (!First) {
      load(v, s1 + j);
      a[0] += v;
      load(v, s2 + j);
      q[0] += v;
    }
    std::memcpy(s1 + j, &a[0], sizeof v);
    std::memcpy(s2 + j, &q[0], sizeof v);
  }
  for (; j < w; ++j) {  // the last lanes one by one
    if constexpr (First) {
      T m = 0;
      for (std::int64_t r = 0; r < rows; ++r) m += x[r * ld + j];
      shift[j] = m * inv;
      s1[j] = s2[j] = 0;
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const T d = x[r * ld + j] - shift[j];
      s1[j] += d;
      s2[j] += d * d;
    }
  }
}

/// The moments of w lanes over rows [k0, k1) of x (row k at x + k * ld): superblocks of 64
/// rows, each about a shift (the mean of its first 8 rows: at worst sqrt(8) standard
/// deviations from the superblock's mean, so s2 is at most 9 times the M2 it yields and the
/// cancellation costs at most 3 bits) summed 8 rows at a time across all lanes (8 streams
/// from memory, as a hand loop reads them), then merged into mean and m2 in double with
/// Chan's update.
template <class T>
void strip_moments(const T* __restrict x, std::int64_t k0, std::int64_t k1, std::int64_t ld, std::int64_t w,
                   double* __restrict mean, double* __restrict m2, T* __restrict shift, T* __restrict s1,
                   T* __restrict s2) {
  constexpr std::int64_t group = 8, super = 64;
  for (std::int64_t j = 0; j < w; ++j) mean[j] = m2[j] = 0;
  for (std::int64_t k = k0; k < k1; k += super) {
    const std::int64_t rows = std::min(super, k1 - k);
    deviation_group<T, true>(x + k * ld, std::min(group, rows), ld, w, shift, s1, s2);
    for (std::int64_t r = group; r < rows; r += group)
      deviation_group<T, false>(x + (k + r) * ld, std::min(group, rows - r), ld, w, shift, s1, s2);
    const double dn = static_cast<double>(rows), before = static_cast<double>(k - k0), total = before + dn;
    const double inv_dn = 1 / dn, f = dn / total, g = before * dn / total;
    for (std::int64_t j = 0; j < w; ++j) merge_lane(mean[j], m2[j], shift[j], s1[j], s2[j], inv_dn, f, g);
  }
}

/// x viewed as [outer, n, inner], reduced over n. Work units are (outer position, strip of
/// inner lanes, chunk of n); chunks of one output merge in order, so the bits do not depend
/// on the thread count.
struct moments_job {
  static constexpr std::int64_t row_block_bytes = 16384;  // of a contiguous line per block: half of L1
  static constexpr std::int64_t strip = 4096;      // inner lanes per strip
  static constexpr std::int64_t strip_rows = 64;   // rows per superblock (chunks are multiples)
  const void* x;
  std::int64_t outer, n, inner;
  std::int64_t strips, chunks, chunk;  // chunk: elements (inner == 1) or rows of n per chunk
  void* m2;                            // [outer][inner]
  void* mean;                          // the same, or null
  std::vector<moments> parts;          // [outer][inner][chunks] when chunks > 1

  /// Output i's moments from chunk c: final when there is one chunk.
  template <class T>
  void put(std::int64_t i, std::int64_t c, const moments& m) {
    if (chunks > 1) {
      parts[static_cast<std::size_t>(i * chunks + c)] = m;
      return;
    }
    static_cast<T*>(m2)[i] = static_cast<T>(m.m2);
    if (mean) static_cast<T*>(mean)[i] = static_cast<T>(m.mean);
  }
};

template <class T>
void moments_unit(void* ctx, std::int64_t u) {
  auto& job = *static_cast<moments_job*>(ctx);
  const std::int64_t c = u % job.chunks, s = u / job.chunks % job.strips, o = u / job.chunks / job.strips;
  const std::int64_t k0 = c * job.chunk, k1 = std::min(job.n, k0 + job.chunk);
  const T* x = static_cast<const T*>(job.x) + o * job.n * job.inner;
  if (job.inner == 1) {
    moments acc;
    constexpr std::int64_t block = moments_job::row_block_bytes / sizeof(T);
    for (std::int64_t k = k0; k < k1; k += block) row_block(x + k, std::min(block, k1 - k), acc);
    job.put<T>(o, c, acc);
    return;
  }
  const std::int64_t j0 = s * moments_job::strip, w = std::min(moments_job::strip, job.inner - j0);
  // Per lane: mean and m2 (double), shift, s1 and s2 (T); on the stack for narrow strips (many
  // small units), else on the heap.
  constexpr std::int64_t narrow = 256;
  double acc_stack[2 * narrow];
  T sums_stack[3 * narrow];
  std::vector<double> acc_heap;
  std::vector<T> sums_heap;
  double* acc = acc_stack;
  T* sums = sums_stack;
  if (w > narrow) {
    acc_heap.resize(2 * static_cast<std::size_t>(w));
    sums_heap.resize(3 * static_cast<std::size_t>(w));
    acc = acc_heap.data();
    sums = sums_heap.data();
  }
  strip_moments(x + j0, k0, k1, job.inner, w, acc, acc + w, sums, sums + w, sums + 2 * w);
  for (std::int64_t j = 0; j < w; ++j) job.put<T>(o * job.inner + j0 + j, c, {static_cast<double>(k1 - k0), acc[j], acc[w + j]});
}
}  // namespace

template <element T>
bool central_moments(const Tensor<T>& x, int_list dims, bool keepdim, Tensor<T>& m2, Tensor<T>* mean) {
  const int_list sizes = x.sizes();
  const auto nd = static_cast<std::int64_t>(sizes.size());
  const auto mask = reduction_mask(dims, nd);  // checks dims first, PyTorch's messages
  if (x.numel() == 0 || !x.is_contiguous()) return false;
  // The reduced dims must be adjacent (dims of size 1 between them do not count).
  std::int64_t first = nd, last = -1;
  for (std::int64_t d = 0; d < nd; ++d)
    if (mask[static_cast<std::size_t>(d)] && sizes[static_cast<std::size_t>(d)] > 1) {
      first = std::min(first, d);
      last = d;
    }
  moments_job job{x.data_ptr(), 1, 1, 1, 1, 1, 1, nullptr, nullptr, {}};
  for (std::int64_t d = 0; d < nd; ++d) {
    const std::int64_t size = sizes[static_cast<std::size_t>(d)];
    if (d >= first && d <= last && !mask[static_cast<std::size_t>(d)] && size > 1) return false;
    (d < first ? job.outer : d > last ? job.inner : job.n) *= size;  // reduced dims outside are size 1
  }
  dim_vector out;
  for (std::int64_t d = 0; d < nd; ++d) {
    if (!mask[static_cast<std::size_t>(d)]) out.push_back(sizes[static_cast<std::size_t>(d)]);
    else if (keepdim) out.push_back(1);
  }
  // Enough units for the threads whatever the shape: a few outputs take chunks of n.
  job.strips = job.inner == 1 ? 1 : (job.inner + moments_job::strip - 1) / moments_job::strip;
  const std::int64_t block = job.inner == 1 ? moments_job::row_block_bytes / static_cast<std::int64_t>(sizeof(T)) : moments_job::strip_rows;
  const std::int64_t lines = job.outer * job.strips;
  constexpr std::int64_t want_units = 16, min_blocks = 8;
  job.chunks = lines >= want_units ? 1 : std::max<std::int64_t>(1, std::min((want_units + lines - 1) / lines, job.n / (block * min_blocks)));
  job.chunk = (job.n + job.chunks - 1) / job.chunks;
  job.chunk = (job.chunk + block - 1) / block * block;
  job.chunks = (job.n + job.chunk - 1) / job.chunk;
  if (job.chunks > 1) job.parts.resize(static_cast<std::size_t>(job.outer * job.inner * job.chunks));
  m2 = empty<T>(out);
  job.m2 = m2.data_ptr();
  if (mean) {
    *mean = empty<T>(out);
    job.mean = mean->data_ptr();
  }
  const std::int64_t units = lines * job.chunks;
  const std::int64_t threads = x.numel() < (1 << 15) ? 1 : std::clamp<std::int64_t>(units, 1, get_num_threads());
  parallel_run(units, static_cast<int>(threads), moments_unit<T>, &job);
  if (job.chunks > 1) {
    const std::int64_t chunks = job.chunks;
    job.chunks = 1;  // put() now writes the outputs
    for (std::int64_t i = 0; i < job.outer * job.inner; ++i) {
      moments acc;
      for (std::int64_t c = 0; c < chunks; ++c) {
        const moments& p = job.parts[static_cast<std::size_t>(i * chunks + c)];
        acc.merge(p.n, p.mean, p.m2);
      }
      job.put<T>(i, 0, acc);
    }
  }
  return true;
}
template bool central_moments<float>(const Tensor<float>&, int_list, bool, Tensor<float>&, Tensor<float>*);
template bool central_moments<double>(const Tensor<double>&, int_list, bool, Tensor<double>&, Tensor<double>*);

#define STRATA_STATS_INSTANCES(T)                                                                            \
  template void arg_reduce<T>(const Tensor<T>&, std::int64_t, bool, const Tensor<T>*, const Tensor<std::int64_t>&); \
  template Tensor<T> pick_backward<T>(const Tensor<T>&, const Tensor<std::int64_t>&, std::int64_t, int_list, bool);
STRATA_FOR_EACH_ORDERED_DTYPE(STRATA_STATS_INSTANCES)
#undef STRATA_STATS_INSTANCES
}  // namespace strata::detail
