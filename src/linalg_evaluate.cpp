// SPDX-License-Identifier: MIT
// einsum's evaluator: runs the planner's program (src/linalg_plan.cpp) over the operands'
// views, one dim per distinct label. A fused reduce is the engine's reduction of the product
// of N operands (reduce_execute; an element-wise product when nothing is summed); a GEMM step
// is batched GEMM calls on the BLAS (OpenBLAS), split over strata's threads. Instantiated once
// per dtype at the end.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>
#include "blas.hpp"
#include "parallel.hpp"
module strata.linalg;
import :internal;

namespace strata::detail {
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

/// The values a reduction of the operands' product reads (a value_source); summed (the only
/// reduction einsum runs), two contiguous float or double rows take dot_lanes.
template <class A, class T>
struct product_values {
  std::size_t count;
  static bool dot(const void* ctx, char* const* p, const std::int64_t* s, std::int64_t n, A& out) {
    constexpr auto w = static_cast<std::int64_t>(sizeof(T));
    if (static_cast<const product_values*>(ctx)->count != 2 || s[1] != w || s[2] != w) return false;
    out = dot_lanes(reinterpret_cast<const T*>(p[1]), reinterpret_cast<const T*>(p[2]), n);
    return true;
  }
  static const A* values(const void* ctx, char* const* p, const std::int64_t* s, std::int64_t n, A* buf,
                         loop_status*) {
    product_row<A, T>(static_cast<const product_values*>(ctx)->count, p, s, n, buf);
    return buf;
  }
  /// The source a reduction by Op of the products reads (this must outlive it); a sum of two
  /// contiguous float or double rows takes dot.
  template <class Op>
  value_source<A> source() const {
    value_source<A> v{nullptr, &values, this, count};
    if constexpr (std::is_same_v<Op, plus_r> && std::is_same_v<A, T> && std::is_floating_point_v<T>) v.reduce_row = &dot;
    return v;
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
  const product_values<A, T> products{terms.size()};
  const reduction_kernels<plus_r, A> kernels{products.template source<plus_r>()};
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
  // x copied contiguous with its labels in the order first, second, third, or first, third,
  // second when that copy reads longer runs of x (BLAS takes either, transposed or not): a
  // window of an unfold view read rows of 3 one way and rows of 32 the other.
  const auto copy_as = [&](term<T>& x, const dim_vector& first, const dim_vector& second, const dim_vector& third) {
    const auto order = [&](const dim_vector& g2, const dim_vector& g3) {
      dim_vector perm;
      for (const dim_vector* g : {&first, &g2, &g3})
        for (const std::int64_t l : *g)
          if (contains(x.labels, l)) perm.push_back(index_in(x.labels, l));
      return perm;
    };
    const auto run = [&](const dim_vector& perm) {  // elements the copy reads contiguously at a time
      std::int64_t n = 1;
      for (std::size_t i = perm.size(); i-- > 0;) {
        const std::int64_t d = perm[i], size = x.t.size(d);
        if (size == 1) continue;
        if (x.t.stride(d) != n) break;
        n *= size;
      }
      return n;
    };
    const dim_vector given = order(second, third), swapped = order(third, second);
    const dim_vector perm = run(swapped) > run(given) ? swapped : given;
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
    into->storage().check_writable();
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

// ---- compiled once per dtype ----
#define STRATA_EINSUM_INSTANCES(T) \
  template Tensor<T> einsum_run<T>(const einsum_spec&, std::span<const Tensor<T>>, const Tensor<T>*);
STRATA_FOR_EACH_DTYPE(STRATA_EINSUM_INSTANCES)
#undef STRATA_EINSUM_INSTANCES
}  // namespace strata::detail
