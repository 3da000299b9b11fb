// SPDX-License-Identifier: MIT
// strata.nn's convolutions and pooling, over 1 to 3 spatial dims (a 1-d or 2-d problem is a
// 3-d one with leading spatial sizes 1). A convolution is im2col + GEMM on OpenBLAS per sample,
// group and tile of output positions: the windows' elements gathered into a
// [C/groups * kernel, tile] matrix that stays in L2 (a pointwise convolution without stride or
// padding reads its input in place), multiplied by the weight. Its backward is the same two pieces turned around: the input's gradient is
// weight^T @ grad, added back through the windows (col2im); the weight's gradient sums
// grad @ col^T over the samples in a fixed number of blocks, so that it has the same bits for
// any thread count. A depthwise convolution (one input channel per group) skips im2col: each
// output line is a sum of the kernel's shifted input lines. The transposed convolution is the convolution's input gradient, and its
// backward the convolution itself.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include "blas.hpp"
#include "dnnl.hpp"
#include "parallel.hpp"
module strata.nn;
import strata.graph;
import strata.loop;
import strata.storage;

namespace strata::detail {
namespace {
using dims3 = std::array<std::int64_t, 3>;

// A convolution as the im2col GEMM sees it: `in` is what the windows slide over and `out`
// the window positions (for a transposed convolution, its output and its input).
struct conv_geom {
  std::int64_t n = 0, cin = 0, cout = 0, groups = 1;
  dims3 in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, pl{0, 0, 0}, d{1, 1, 1};
  std::int64_t in_vol() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_vol() const { return out[0] * out[1] * out[2]; }
  std::int64_t kvol() const { return k[0] * k[1] * k[2]; }
  std::int64_t ck() const { return cin / groups * kvol(); }  // rows of the column matrix
  // A pointwise convolution without stride or padding: the input is its own column matrix.
  bool direct() const { return kvol() == 1 && s == dims3{1, 1, 1} && pl == dims3{0, 0, 0} && in == out; }
};

// A float convolution as oneDNN takes it: the trailing spatial dims that are not all trivial.
dnnl_conv_shape dnnl_shape(const conv_geom& g) {
  const auto used = [&](int i) { return g.in[i] > 1 || g.out[i] > 1 || g.k[i] > 1 || g.pl[i] > 0; };
  dnnl_conv_shape c;
  c.dims = used(0) ? 3 : used(1) ? 2 : 1;
  c.n = g.n;
  c.cin = g.cin;
  c.cout = g.cout;
  c.groups = g.groups;
  c.in = g.in;
  c.out = g.out;
  c.k = g.k;
  c.stride = g.s;
  c.pad = g.pl;
  c.dilation = g.d;
  return c;
}

// The buffers of one oneDNN call, as strata storages (huge pages, reused blocks), alive until
// the call returns.
struct dnnl_arena {
  std::mutex lock;
  std::vector<storage> blocks;
  static void* allocate(void* ctx, std::size_t bytes) {
    auto& arena = *static_cast<dnnl_arena*>(ctx);
    storage s = storage::allocate<float>(static_cast<std::int64_t>((bytes + sizeof(float) - 1) / sizeof(float)),
                                         init::uninitialized);
    void* p = s.data();
    const std::lock_guard<std::mutex> hold(arena.lock);
    arena.blocks.push_back(std::move(s));
    return p;
  }
  dnnl_allocator allocator() { return {&dnnl_arena::allocate, this}; }
};

// C = op(A) op(B) (accumulate: C += ...), row-major: OpenBLAS for float and double; a plain
// loop for float128 (the type the finite-difference tests check gradients in).
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
          const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate = false) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    blas_gemm(std::is_same_v<T, float> ? blas_type::f32 : blas_type::f64, trans_a, trans_b, m, n, k, a, lda, b, ldb,
              c, ldc, accumulate);
  } else {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        T acc = accumulate ? c[i * ldc + j] : T(0);
        for (std::int64_t p = 0; p < k; ++p)
          acc += (trans_a ? a[p * lda + i] : a[i * lda + p]) * (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
        c[i * ldc + j] = acc;
      }
  }
}

// The outputs o in [0, out) whose input o * s + off lies in [0, n): [lo, hi).
std::pair<std::int64_t, std::int64_t> line_range(std::int64_t off, std::int64_t s, std::int64_t n, std::int64_t out) {
  std::int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
  std::int64_t hi = n - off <= 0 ? 0 : (n - off - 1) / s + 1;
  lo = std::min(lo, out);
  return {lo, std::clamp(hi, lo, out)};
}

// r[o - a] = src[o * s + off] where that lies in [0, n), else 0, for the outputs o in [a, b).
template <class T>
void window_line(const T* src, std::int64_t off, std::int64_t s, std::int64_t n, std::int64_t a, std::int64_t b, T* r) {
  auto [lo, hi] = line_range(off, s, n, b);
  lo = std::max(lo, a);
  hi = std::max(hi, lo);
  // Plain loops for the few elements of padding and of short lines (small images), where a
  // call to memcpy costs more than the copy; memcpy for long lines.
  for (std::int64_t o = a; o < lo; ++o) r[o - a] = T(0);
  if (s == 1 && hi - lo >= 32)
    std::memcpy(r + (lo - a), src + lo + off, static_cast<std::size_t>(hi - lo) * sizeof(T));
  else if (s == 1)
    for (std::int64_t o = lo; o < hi; ++o) r[o - a] = src[o + off];
  else
    for (std::int64_t o = lo; o < hi; ++o) r[o - a] = src[o * s + off];
  for (std::int64_t o = hi; o < b; ++o) r[o - a] = T(0);
}
// src[o * s + off] += r[o - a] where that lies in [0, n), for the outputs o in [a, b).
template <class T>
void window_line_add(T* src, std::int64_t off, std::int64_t s, std::int64_t n, std::int64_t a, std::int64_t b, const T* r) {
  auto [lo, hi] = line_range(off, s, n, b);
  lo = std::max(lo, a);
  for (std::int64_t o = lo; o < hi; ++o) src[o * s + off] += r[o - a];
}

// The column matrix of `channels` channels over the output positions q in [q0, q1) of the
// whole batch (q = sample * positions + position; a tile: row r holds window element r of each
// position, width q1 - q0; sample n's channels start at base + n * sample_stride): calls
// line(input line, tile row segment, offset within the line, [a, b) of the line's outputs)
// for each segment of a tile row on one output line, and outside(segment, length) where the
// window row falls outside the input (im2col zeroes it, col2im skips it).
template <class T, class In, class Line, class Outside>
void for_tile_rows(In* base, std::int64_t sample_stride, std::int64_t channels, const conv_geom& g, std::int64_t q0,
                   std::int64_t q1, T* col, const Line& line, const Outside& outside) {
  const std::int64_t width = q1 - q0, P = g.out_vol();
  // Where the tile starts: sample n0, output line (o0, o1) of it, position a0 on that line.
  const std::int64_t n0 = q0 / P, line0 = q0 % P / g.out[2], a0 = q0 % P % g.out[2];
  T* row = col;
  for (std::int64_t c = 0; c < channels; ++c)
    for (std::int64_t k0 = 0; k0 < g.k[0]; ++k0)
      for (std::int64_t k1 = 0; k1 < g.k[1]; ++k1)
        for (std::int64_t k2 = 0; k2 < g.k[2]; ++k2, row += width) {
          std::int64_t n = n0, o0 = line0 / g.out[1], o1 = line0 % g.out[1], a = a0;
          for (std::int64_t q = q0; q < q1;) {
            const std::int64_t b = std::min(g.out[2], a + (q1 - q));
            const std::int64_t i0 = o0 * g.s[0] - g.pl[0] + k0 * g.d[0];
            const std::int64_t i1 = o1 * g.s[1] - g.pl[1] + k1 * g.d[1];
            T* r = row + (q - q0);
            if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) outside(r, b - a);
            else line(base + n * sample_stride + c * g.in_vol() + (i0 * g.in[1] + i1) * g.in[2], r, k2 * g.d[2] - g.pl[2], a, b);
            q += b - a;
            a = 0;  // the next output line (of this sample, or the next sample's first)
            if (++o1 == g.out[1]) {
              o1 = 0;
              if (++o0 == g.out[0]) {
                o0 = 0;
                ++n;
              }
            }
          }
        }
}

template <class T>
void im2col(const T* base, std::int64_t sample_stride, std::int64_t channels, const conv_geom& g, std::int64_t q0,
            std::int64_t q1, T* col) {
  for_tile_rows<T>(
      base, sample_stride, channels, g, q0, q1, col,
      [&](const T* src, T* r, std::int64_t off, std::int64_t a, std::int64_t b) {
        window_line(src, off, g.s[2], g.in[2], a, b, r);
      },
      [](T* r, std::int64_t n) { std::fill(r, r + n, T(0)); });
}
template <class T>
void col2im(const T* col, std::int64_t sample_stride, std::int64_t channels, const conv_geom& g, std::int64_t q0,
            std::int64_t q1, T* base) {
  for_tile_rows<T>(
      base, sample_stride, channels, g, q0, q1, const_cast<T*>(col),
      [&](T* dst, const T* r, std::int64_t off, std::int64_t a, std::int64_t b) {
        window_line_add(dst, off, g.s[2], g.in[2], a, b, r);
      },
      [](const T*, std::int64_t) {});
}

// Copies `rows` channels of positions [q0, q1) of the batch (channel c of sample n at
// base + n * sample_stride + c * P) to or from a [rows, q1 - q0] tile.
template <class T, bool to_tile>
void copy_tile(T* base, std::int64_t sample_stride, std::int64_t rows, std::int64_t P, std::int64_t q0, std::int64_t q1,
               T* tile) {
  for (std::int64_t q = q0; q < q1;) {
    const std::int64_t n = q / P, p = q % P, len = std::min(P - p, q1 - q);
    for (std::int64_t r = 0; r < rows; ++r) {
      T* batch = base + n * sample_stride + r * P + p;
      T* t = tile + r * (q1 - q0) + (q - q0);
      if constexpr (to_tile) std::copy_n(batch, len, t);
      else std::copy_n(t, len, batch);
    }
    q += len;
  }
}

// The output positions a column tile covers: its column matrix (ck rows) within
// column_tile_bytes, so that im2col writes it and the GEMM reads it in L2; at least 64 wide.
// A tile spans samples when their outputs are few (small images: one GEMM for several).
constexpr std::int64_t column_tile_bytes = 256 * 1024;
template <class T>
std::int64_t tile_width(const conv_geom& g) {
  const std::int64_t w = column_tile_bytes / std::max<std::int64_t>(1, g.ck() * static_cast<std::int64_t>(sizeof(T)));
  return std::min(g.n * g.out_vol(), std::max<std::int64_t>(64, w));
}

// An uninitialised buffer for a column matrix (every element is written before it is read).
template <class T>
std::unique_ptr<T[]> column_buffer(std::int64_t n) {
  return std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(n));
}

// Sums of n products a[i] * b[i] (b: stride 1) in 8 lanes added in a fixed order: vectorised,
// and the same bits wherever it runs.
template <class T>
T ordered_dot(const T* a, const T* b, std::int64_t n) {
  T lane[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lane[l] += a[i + l] * b[i + l];
  for (int l = 0; i < n; ++i, ++l) lane[l] += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}
template <class T>
T ordered_sum(const T* a, std::int64_t n) {
  T lane[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lane[l] += a[i + l];
  for (int l = 0; i < n; ++i, ++l) lane[l] += a[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Calls f(k, input line offset, output row offset, offset within the line, [lo, hi)) for each
// kernel offset k and each output row whose window row lies inside one input channel.
template <class F>
void for_kernel_lines(const conv_geom& g, const F& f) {
  std::int64_t k = 0;
  for (std::int64_t k0 = 0; k0 < g.k[0]; ++k0)
    for (std::int64_t k1 = 0; k1 < g.k[1]; ++k1)
      for (std::int64_t k2 = 0; k2 < g.k[2]; ++k2, ++k) {
        const std::int64_t off = k2 * g.d[2] - g.pl[2];
        const auto [lo, hi] = line_range(off, g.s[2], g.in[2], g.out[2]);
        if (lo == hi) continue;
        for (std::int64_t o0 = 0; o0 < g.out[0]; ++o0) {
          const std::int64_t i0 = o0 * g.s[0] - g.pl[0] + k0 * g.d[0];
          if (i0 < 0 || i0 >= g.in[0]) continue;
          for (std::int64_t o1 = 0; o1 < g.out[1]; ++o1) {
            const std::int64_t i1 = o1 * g.s[1] - g.pl[1] + k1 * g.d[1];
            if (i1 < 0 || i1 >= g.in[1]) continue;
            f(k, (i0 * g.in[1] + i1) * g.in[2], (o0 * g.out[1] + o1) * g.out[2], off, lo, hi);
          }
        }
      }
}

// Runs body(first, last) over [0, n) split into `parts` contiguous ranges on the threads.
template <class Body>
void for_parts(std::int64_t n, std::int64_t parts, const Body& body) {
  run_in_parts(n, parts, thread_count(), body);
}

// A depthwise convolution: groups of one input channel each (a single-channel input with
// groups = 1 is an ordinary convolution, better done as one GEMM).
bool depthwise(const conv_geom& g) { return g.cin == g.groups && g.groups > 1; }

// Depthwise convolutions (each group sees one input channel, any channel multiplier m): an
// output channel is a sum of shifted, scaled lines of its input channel, without im2col.
// Each output element, input-gradient channel and weight-gradient row is written by one task,
// summing in a fixed order.
template <class T>
void depthwise_forward(const T* x, const T* w, const T* bias, const conv_geom& g, T* y) {
  const std::int64_t m = g.cout / g.groups, K = g.kvol(), P = g.out_vol(), s = g.s[2];
  for_parts(g.n * g.cout, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t nc = first; nc < last; ++nc) {
      const std::int64_t n = nc / g.cout, co = nc % g.cout;
      const T* xc = x + (n * g.cin + co / m) * g.in_vol();
      const T* wc = w + co * K;
      T* yc = y + nc * P;
      std::fill(yc, yc + P, bias ? bias[co] : T(0));
      for_kernel_lines(g, [&](std::int64_t k, std::int64_t in, std::int64_t out, std::int64_t off, std::int64_t lo,
                              std::int64_t hi) {
        const T wk = wc[k];
        const T* src = xc + in;  // element o * s + off of the line, off < 0 with padding
        T* dst = yc + out;
        if (s == 1)
          for (std::int64_t o = lo; o < hi; ++o) dst[o] += wk * src[o + off];
        else
          for (std::int64_t o = lo; o < hi; ++o) dst[o] += wk * src[o * s + off];
      });
    }
  });
}
template <class T>
void depthwise_backward_input(const T* gy, const T* w, const conv_geom& g, T* gx) {
  const std::int64_t m = g.cout / g.groups, K = g.kvol(), P = g.out_vol(), s = g.s[2];
  for_parts(g.n * g.cin, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t nc = first; nc < last; ++nc) {
      const std::int64_t n = nc / g.cin, ci = nc % g.cin;
      T* xc = gx + nc * g.in_vol();
      std::fill(xc, xc + g.in_vol(), T(0));
      for (std::int64_t co = ci * m; co < (ci + 1) * m; ++co) {
        const T* yc = gy + (n * g.cout + co) * P;
        const T* wc = w + co * K;
        for_kernel_lines(g, [&](std::int64_t k, std::int64_t in, std::int64_t out, std::int64_t off, std::int64_t lo,
                                std::int64_t hi) {
          const T wk = wc[k];
          T* dst = xc + in;
          const T* src = yc + out;
          if (s == 1)
            for (std::int64_t o = lo; o < hi; ++o) dst[o + off] += wk * src[o];
          else
            for (std::int64_t o = lo; o < hi; ++o) dst[o * s + off] += wk * src[o];
        });
      }
    }
  });
}
template <class T>
void depthwise_backward_weight(const T* x, const T* gy, const conv_geom& g, T* gw) {
  const std::int64_t m = g.cout / g.groups, K = g.kvol(), P = g.out_vol(), s = g.s[2];
  for_parts(g.cout, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t co = first; co < last; ++co) {
      T* wc = gw + co * K;
      std::fill(wc, wc + K, T(0));
      for (std::int64_t n = 0; n < g.n; ++n) {
        const T* xc = x + (n * g.cin + co / m) * g.in_vol();
        const T* yc = gy + (n * g.cout + co) * P;
        for_kernel_lines(g, [&](std::int64_t k, std::int64_t in, std::int64_t out, std::int64_t off, std::int64_t lo,
                                std::int64_t hi) {
          const T* src = xc + in;
          const T* dy = yc + out;
          if (s == 1) {
            wc[k] += ordered_dot(dy + lo, src + lo + off, hi - lo);
          } else {
            T sum = 0;
            for (std::int64_t o = lo; o < hi; ++o) sum += dy[o] * src[o * s + off];
            wc[k] += sum;
          }
        });
      }
    }
  });
}

// The samples are split in this many ranges (fewer when fewer samples), whatever the thread
// count, so that the tiles and their GEMMs are the same on any number of threads.
constexpr std::int64_t sample_parts = 16;

// y [N, cout, out...] = conv(x [N, cin, in...], w [cout, cin/groups, k...]) (+ bias). The
// sample ranges run on the threads; each walks its output positions in tiles.
template <class T>
void conv_forward(const T* x, const T* w, const T* bias, const conv_geom& g, T* y) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_arena arena; dnnl_conv_forward(dnnl_shape(g), x, w, bias, y, thread_count(), arena.allocator())) return;
  if (depthwise(g)) return depthwise_forward(x, w, bias, g, y);
  const std::int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups, CK = g.ck(), P = g.out_vol();
  const bool direct = g.direct();
  const std::int64_t W = tile_width<T>(g);
  for_parts(g.n, sample_parts, [&](std::int64_t first, std::int64_t last) {
    const auto col = column_buffer<T>(direct ? 0 : CK * W);
    const auto out = column_buffer<T>(direct ? 0 : cout_g * W);
    for (std::int64_t grp = 0; grp < g.groups; ++grp) {
      const T* wg = w + grp * cout_g * CK;
      T* yg = y + grp * cout_g * P;
      if (direct) {
        for (std::int64_t n = first; n < last; ++n)
          gemm<T>(false, false, cout_g, P, CK, wg, CK, x + (n * g.cin + grp * cin_g) * P, P,
                    yg + n * g.cout * P, P);
      } else {
        for (std::int64_t q0 = first * P; q0 < last * P; q0 += W) {
          const std::int64_t q1 = std::min(last * P, q0 + W), width = q1 - q0;
          im2col(x + grp * cin_g * g.in_vol(), g.cin * g.in_vol(), cin_g, g, q0, q1, col.get());
          if (q0 / P == (q1 - 1) / P) {  // within one sample: straight into y
            gemm<T>(false, false, cout_g, width, CK, wg, CK, col.get(), width,
                      yg + (q0 / P) * g.cout * P + q0 % P, P);
          } else {
            gemm<T>(false, false, cout_g, width, CK, wg, CK, col.get(), width, out.get(), width);
            copy_tile<T, false>(yg, g.cout * P, cout_g, P, q0, q1, out.get());
          }
        }
      }
      if (bias)
        for (std::int64_t n = first; n < last; ++n)
          for (std::int64_t o = 0; o < cout_g; ++o) {
            const T b = bias[grp * cout_g + o];
            for (T *p = yg + n * g.cout * P + o * P, *e = p + P; p < e; ++p) *p += b;
          }
    }
  });
}

// gx [N, cin, in...] = the input gradient of conv_forward for gy [N, cout, out...]: each
// thread's samples are its own, so the windows' sums into gx never meet another thread's.
template <class T>
void conv_backward_input(const T* gy, const T* w, const conv_geom& g, T* gx) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_arena arena; dnnl_conv_backward_data(dnnl_shape(g), gy, w, gx, thread_count(), arena.allocator())) return;
  if (depthwise(g)) return depthwise_backward_input(gy, w, g, gx);
  const std::int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups, CK = g.ck(), P = g.out_vol();
  const bool direct = g.direct();
  const std::int64_t W = tile_width<T>(g);
  for_parts(g.n, sample_parts, [&](std::int64_t first, std::int64_t last) {
    const auto col = column_buffer<T>(direct ? 0 : CK * W);
    const auto grad = column_buffer<T>(direct ? 0 : cout_g * W);
    if (!direct) std::fill(gx + first * g.cin * g.in_vol(), gx + last * g.cin * g.in_vol(), T(0));
    for (std::int64_t grp = 0; grp < g.groups; ++grp) {
      const T* wg = w + grp * cout_g * CK;
      const T* gyg = gy + grp * cout_g * P;
      if (direct) {
        for (std::int64_t n = first; n < last; ++n)
          gemm<T>(true, false, CK, P, cout_g, wg, CK, gyg + n * g.cout * P, P,
                    gx + (n * g.cin + grp * cin_g) * P, P);
        continue;
      }
      for (std::int64_t q0 = first * P; q0 < last * P; q0 += W) {
        const std::int64_t q1 = std::min(last * P, q0 + W), width = q1 - q0;
        if (q0 / P == (q1 - 1) / P) {
          gemm<T>(true, false, CK, width, cout_g, wg, CK, gyg + (q0 / P) * g.cout * P + q0 % P, P,
                    col.get(), width);
        } else {
          copy_tile<T, true>(const_cast<T*>(gyg), g.cout * P, cout_g, P, q0, q1, grad.get());
          gemm<T>(true, false, CK, width, cout_g, wg, CK, grad.get(), width, col.get(), width);
        }
        col2im(col.get(), g.cin * g.in_vol(), cin_g, g, q0, q1, gx + grp * cin_g * g.in_vol());
      }
    }
  });
}

// The samples' share of the weight gradient is summed in this many blocks at most, one
// partial sum each, added in order: the same bits for any thread count.
constexpr std::int64_t weight_grad_blocks = 8;

// gw [cout, cin/groups, k...] = the weight gradient of conv_forward for x and gy.
template <class T>
void conv_backward_weight(const T* x, const T* gy, const conv_geom& g, T* gw) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_arena arena; dnnl_conv_backward_weights(dnnl_shape(g), x, gy, gw, thread_count(), arena.allocator()))
      return;
  if (depthwise(g)) return depthwise_backward_weight(x, gy, g, gw);
  const std::int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups, CK = g.ck(), P = g.out_vol();
  const std::int64_t wsize = g.cout * CK;
  const bool direct = g.direct();
  const std::int64_t blocks = std::max<std::int64_t>(1, std::min(g.n, weight_grad_blocks));
  std::vector<T> partial(static_cast<std::size_t>(blocks * wsize), T(0));
  const std::int64_t W = tile_width<T>(g);
  for_parts(blocks, blocks, [&](std::int64_t b0, std::int64_t b1) {
    const auto col = column_buffer<T>(direct ? 0 : CK * W);
    const auto grad = column_buffer<T>(direct ? 0 : cout_g * W);
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t first = g.n * b / blocks, last = g.n * (b + 1) / blocks;
      for (std::int64_t grp = 0; grp < g.groups; ++grp) {
        const T* gyg = gy + grp * cout_g * P;
        T* gwg = partial.data() + b * wsize + grp * cout_g * CK;
        if (direct) {
          for (std::int64_t n = first; n < last; ++n)
            gemm<T>(false, true, cout_g, CK, P, gyg + n * g.cout * P, P,
                      x + (n * g.cin + grp * cin_g) * P, P, gwg, CK, true);
          continue;
        }
        for (std::int64_t q0 = first * P; q0 < last * P; q0 += W) {
          const std::int64_t q1 = std::min(last * P, q0 + W), width = q1 - q0;
          im2col(x + grp * cin_g * g.in_vol(), g.cin * g.in_vol(), cin_g, g, q0, q1, col.get());
          if (q0 / P == (q1 - 1) / P) {
            gemm<T>(false, true, cout_g, CK, width, gyg + (q0 / P) * g.cout * P + q0 % P, P, col.get(),
                      width, gwg, CK, true);
          } else {
            copy_tile<T, true>(const_cast<T*>(gyg), g.cout * P, cout_g, P, q0, q1, grad.get());
            gemm<T>(false, true, cout_g, CK, width, grad.get(), width, col.get(), width, gwg, CK, true);
          }
        }
      }
    }
  });
  std::copy_n(partial.data(), wsize, gw);
  for (std::int64_t b = 1; b < blocks; ++b)
    for (std::int64_t i = 0; i < wsize; ++i) gw[i] += partial[static_cast<std::size_t>(b * wsize + i)];
}

// gb [c] = the sum of gy [N, c, P] over samples and positions.
template <class T>
void channel_sums(const T* gy, std::int64_t n, std::int64_t c, std::int64_t P, T* gb) {
  for_parts(c, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t o = first; o < last; ++o) {
      T sum = 0;
      for (std::int64_t s = 0; s < n; ++s) sum += ordered_sum(gy + (s * c + o) * P, P);
      gb[o] = sum;
    }
  });
}

std::string join(const dim_vector& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}
dims3 spatial3(const dim_vector& v, std::int64_t fill) {
  dims3 out{fill, fill, fill};
  std::copy(v.begin(), v.end(), out.begin() + (3 - static_cast<std::ptrdiff_t>(v.size())));
  return out;
}
dim_vector tail(int_list sizes, std::size_t from) {
  dim_vector out;
  for (std::size_t i = from; i < sizes.size(); ++i) out.push_back(sizes[i]);
  return out;
}
}  // namespace

template <element T>
Tensor<T> convolution(const Tensor<T>& input, const Tensor<T>& weight, const Tensor<T>* bias, const conv_params& p) {
  const std::size_t D = p.stride.size();
  const std::int64_t dims = static_cast<std::int64_t>(D);
  const std::string name = std::string(p.transposed ? "conv_transpose" : "conv") + std::to_string(D) + "d";
  if (input.dim() != dims + 1 && input.dim() != dims + 2)
    throw shape_error("Expected " + std::to_string(D + 1) + "D (unbatched) or " + std::to_string(D + 2) +
                      "D (batched) input to " + name + ", but got input of size: " + to_string(input.sizes()));
  if (weight.dim() != dims + 2)
    throw shape_error("weight should have at least three dimensions");
  const bool batched = input.dim() == dims + 2;
  const Tensor<T> x = batched ? input : input.unsqueeze(0);
  const std::int64_t groups = p.groups;
  if (groups <= 0) throw error("non-positive groups is not supported");
  for (std::size_t i = 0; i < D; ++i) {
    if (p.stride[i] <= 0) throw error("non-positive stride is not supported");
    if (p.dilation[i] <= 0) throw error("dilation should be greater than zero");
  }
  conv_geom g;
  g.n = x.size(0);
  g.groups = groups;
  const dim_vector ksizes = tail(weight.sizes(), 2);
  g.k = spatial3(ksizes, 1);
  g.s = spatial3(p.stride, 1);
  g.d = spatial3(p.dilation, 1);
  const dim_vector xs = tail(x.sizes(), 2);
  if (!p.transposed) {
    if (weight.size(0) % groups != 0)
      throw shape_error("Given groups=" + std::to_string(groups) + ", expected weight to be divisible by " +
                        std::to_string(groups) + " at dimension 0, but got weight of size [" +
                        to_string(weight.sizes()) + "] instead");
    if (x.size(1) != weight.size(1) * groups)
      throw shape_error("Given groups=" + std::to_string(groups) + ", weight of size " + to_string(weight.sizes()) +
                        ", expected input" + to_string(x.sizes()) + " to have " +
                        std::to_string(weight.size(1) * groups) + " channels, but got " + std::to_string(x.size(1)) +
                        " channels instead");
    g.cin = x.size(1);
    g.cout = weight.size(0);
    dim_vector lo(D, 0), hi(D, 0);
    if (p.padding_mode == "same") {
      for (std::size_t i = 0; i < D; ++i)
        if (p.stride[i] != 1) throw error("padding='same' is not supported for strided convolutions");
      for (std::size_t i = 0; i < D; ++i) {
        const std::int64_t total = p.dilation[i] * (ksizes[i] - 1);
        lo[i] = total / 2;
        hi[i] = total - lo[i];
      }
    } else if (p.padding_mode != "valid") {
      lo = p.padding;
      hi = p.padding;
    }
    dim_vector padded(D), effective(D), out(D);
    for (std::size_t i = 0; i < D; ++i) {
      if (lo[i] < 0) throw error("negative padding is not supported");
      padded[i] = xs[i] + lo[i] + hi[i];
      effective[i] = p.dilation[i] * (ksizes[i] - 1) + 1;
    }
    for (std::size_t i = 0; i < D; ++i)
      if (padded[i] < effective[i])
        throw shape_error("Calculated padded input size per channel: (" + join(padded, " x ") + "). Kernel size: (" +
                          join(effective, " x ") + "). Kernel size can't be greater than actual input size");
    for (std::size_t i = 0; i < D; ++i) out[i] = (padded[i] - effective[i]) / p.stride[i] + 1;
    g.in = spatial3(xs, 1);
    g.out = spatial3(out, 1);
    g.pl = spatial3(lo, 0);
  } else {
    if (x.size(1) != weight.size(0))
      throw shape_error("Given transposed=1, weight of size " + to_string(weight.sizes()) + ", expected input" +
                        to_string(x.sizes()) + " to have " + std::to_string(weight.size(0)) +
                        " channels, but got " + std::to_string(x.size(1)) + " channels instead");
    if (weight.size(0) % groups != 0)
      throw shape_error("Given groups=" + std::to_string(groups) + ", expected weight to be divisible by " +
                        std::to_string(groups) + " at dimension 0, but got weight of size [" +
                        to_string(weight.sizes()) + "] instead");
    // The convolution whose input gradient this is: from the output (cout) back to the input.
    g.cout = x.size(1);
    g.cin = weight.size(1) * groups;
    dim_vector out(D);
    for (std::size_t i = 0; i < D; ++i) {
      if (p.output_padding[i] >= p.stride[i] && p.output_padding[i] >= p.dilation[i])
        throw error("output padding must be smaller than either stride or dilation");
      out[i] = (xs[i] - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (ksizes[i] - 1) + p.output_padding[i] + 1;
      if (out[i] <= 0)
        throw shape_error("Given input size per channel: (" + join(xs, " x ") +
                          "). Calculated output size per channel: (" + join(out, " x ") + "). Output size is too small");
    }
    g.in = spatial3(out, 1);
    g.out = spatial3(xs, 1);
    g.pl = spatial3(p.padding, 0);
  }
  const std::int64_t out_channels = p.transposed ? g.cin : g.cout;
  if (bias && (bias->dim() != 1 || bias->size(0) != out_channels))
    throw shape_error("Given weight of size " + to_string(weight.sizes()) + ", expected bias to be 1-dimensional with " +
                      std::to_string(out_channels) + " elements, but got bias of size " + to_string(bias->sizes()) +
                      " instead");
  dim_vector ysizes{g.n, out_channels};
  for (std::size_t i = 3 - D; i < 3; ++i) ysizes.push_back(p.transposed ? g.in[i] : g.out[i]);
  Tensor<T> y = empty<T>(ysizes);
  const Tensor<T> xc = x.contiguous(), wc = weight.contiguous();
  const Tensor<T> bc = bias ? bias->contiguous() : Tensor<T>();
  if (!p.transposed) {
    conv_forward(xc.data_ptr(), wc.data_ptr(), bias ? bc.data_ptr() : nullptr, g, y.data_ptr());
  } else {
    conv_backward_input(xc.data_ptr(), wc.data_ptr(), g, y.data_ptr());
    if (bias) {
      const std::int64_t P = g.in_vol();
      for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t c = 0; c < g.cin; ++c)
          for (T *q = y.data_ptr() + (n * g.cin + c) * P, *e = q + P; q < e; ++q) *q += bc.data_ptr()[c];
    }
  }
  std::vector<Tensor<T>> inputs{x, weight};
  if (bias) inputs.push_back(*bias);
  const bool transposed = p.transposed;
  record_function<T>(
      y, inputs,
      [g, xc, wc, transposed](const Tensor<T>& gy, std::size_t i) {
        const Tensor<T> gc = gy.contiguous();
        if (i == 0) {  // the input's gradient, in the (batched) input's sizes
          Tensor<T> gx = empty<T>(xc.sizes());
          if (!transposed) conv_backward_input(gc.data_ptr(), wc.data_ptr(), g, gx.data_ptr());
          else conv_forward(gc.data_ptr(), wc.data_ptr(), static_cast<const T*>(nullptr), g, gx.data_ptr());
          return gx;
        }
        if (i == 1) {
          Tensor<T> gw = empty<T>(wc.sizes());
          if (!transposed) conv_backward_weight(xc.data_ptr(), gc.data_ptr(), g, gw.data_ptr());
          else conv_backward_weight(gc.data_ptr(), xc.data_ptr(), g, gw.data_ptr());
          return gw;
        }
        const std::int64_t c = transposed ? g.cin : g.cout;
        Tensor<T> gb = empty<T>({c});
        channel_sums(gc.data_ptr(), g.n, c, transposed ? g.in_vol() : g.out_vol(), gb.data_ptr());
        return gb;
      },
      std::span<const Tensor<T>>(inputs.data(), 2));  // the backward reads x and the weight
  return batched ? y : y.squeeze(0);
}

namespace {
// A pooling window's geometry over planes [N * C] of `in`, with out window positions.
struct pool_geom {
  std::int64_t planes = 0;
  dims3 in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, pl{0, 0, 0}, d{1, 1, 1};
  std::int64_t in_vol() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_vol() const { return out[0] * out[1] * out[2]; }
};

// Calls f(plane, output position, [lo, hi) per dim) for every window, planes split over threads.
template <class F>
void for_windows(const pool_geom& g, bool adaptive, const F& f) {
  for_parts(g.planes, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t c = first; c < last; ++c)
      for (std::int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (std::int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            const dims3 o{o0, o1, o2};
            dims3 lo, hi;
            for (int i = 0; i < 3; ++i) {
              if (adaptive) {
                lo[i] = o[i] * g.in[i] / g.out[i];
                hi[i] = ((o[i] + 1) * g.in[i] + g.out[i] - 1) / g.out[i];
              } else {
                lo[i] = o[i] * g.s[i] - g.pl[i];
                hi[i] = lo[i] + (g.k[i] - 1) * g.d[i] + 1;
              }
            }
            f(c, (o0 * g.out[1] + o1) * g.out[2] + o2, lo, hi);
          }
  });
}

// An average window clipped to the input, [a, b) per dim, and its divisor by PyTorch's rule:
// divisor_override, else the window clipped to the padded input (count_include_pad), else the
// elements inside the input.
struct avg_window {
  dims3 a, b;
  std::int64_t divisor;
};
avg_window clip_average(const pool_geom& g, const pool_params& p, const dims3& lo, const dims3& hi) {
  avg_window w{};
  std::int64_t pool_size = 1, count = 1;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t padded_hi = p.adaptive ? hi[i] : std::min(hi[i], g.in[i] + g.pl[i]);
    pool_size *= padded_hi - lo[i];
    w.a[i] = std::max<std::int64_t>(lo[i], 0);
    w.b[i] = std::min(hi[i], g.in[i]);
    count *= w.b[i] - w.a[i];
  }
  w.divisor = p.divisor_override ? p.divisor_override : (p.count_include_pad && !p.adaptive) ? pool_size : count;
  return w;
}

// Max pooling with fixed windows: each output row (all but the last dim fixed) runs its
// windows that lie inside the input in blocks of outputs, the taps outer and the outputs inner
// (independent maxima the compiler vectorises, rather than one compare chain per window);
// windows that cross the border go to clipped(plane, output, lo, hi). Taps are visited in
// the clipped loops' order, so ties and NaNs resolve alike.
template <class T, class Clipped>
void max_pool_rows(const pool_geom& g, const T* xp, T* yp, std::int64_t* ip, const Clipped& clipped) {
  std::vector<std::int64_t> taps;
  for (std::int64_t k0 = 0; k0 < g.k[0]; ++k0)
    for (std::int64_t k1 = 0; k1 < g.k[1]; ++k1)
      for (std::int64_t k2 = 0; k2 < g.k[2]; ++k2) taps.push_back((k0 * g.d[0] * g.in[1] + k1 * g.d[1]) * g.in[2] + k2 * g.d[2]);
  const std::int64_t IV = g.in_vol(), OV = g.out_vol(), s2 = g.s[2];
  const auto reach = [&](int i) { return (g.k[i] - 1) * g.d[i]; };
  // The outputs o2 whose windows lie inside the last dim: [first2, end2).
  const std::int64_t first2 = std::min(g.out[2], (g.pl[2] + s2 - 1) / s2);
  const std::int64_t room = g.in[2] - 1 - reach(2) + g.pl[2];
  const std::int64_t end2 = room < 0 ? first2 : std::clamp(room / s2 + 1, first2, g.out[2]);
  constexpr int block = 16;
  for_parts(g.planes, thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t c = first; c < last; ++c)
      for (std::int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < g.out[1]; ++o1) {
          const std::int64_t lo0 = o0 * g.s[0] - g.pl[0], lo1 = o1 * g.s[1] - g.pl[1];
          const std::int64_t row_out = (o0 * g.out[1] + o1) * g.out[2];
          const auto edge = [&](std::int64_t o2) {
            const dims3 lo{lo0, lo1, o2 * s2 - g.pl[2]};
            clipped(c, row_out + o2, lo, dims3{lo[0] + reach(0) + 1, lo[1] + reach(1) + 1, lo[2] + reach(2) + 1});
          };
          const bool rows_inside = lo0 >= 0 && lo0 + reach(0) < g.in[0] && lo1 >= 0 && lo1 + reach(1) < g.in[1];
          const std::int64_t a2 = rows_inside ? first2 : g.out[2], b2 = rows_inside ? end2 : g.out[2];
          for (std::int64_t o2 = 0; o2 < a2; ++o2) edge(o2);
          const std::int64_t row_in = (lo0 * g.in[1] + lo1) * g.in[2] - g.pl[2];  // + o2 * s2: a window's start
          const T* plane = xp + c * IV;  // a window starts at plane + (row_in + o2 * s2), never before it
          T* y_row = yp + c * OV + row_out;
          std::int64_t* i_row = ip + c * OV + row_out;
          // `block` windows from o2 on, their maxima in registers (the taps numbered in int32).
          const auto windows = [&](std::int64_t o2) {
            const T* base = plane + (row_in + o2 * s2);
            T best[block];
            std::int32_t at[block];
            for (int j = 0; j < block; ++j) {
              best[j] = base[j * s2 + taps[0]];
              at[j] = 0;
            }
            for (std::size_t t = 1; t < taps.size(); ++t) {
              const std::int64_t off = taps[t];
              for (int j = 0; j < block; ++j) {
                const T v = base[j * s2 + off];
                const bool take = v > best[j] || v != v;  // ATen's rule, as in clipped
                best[j] = take ? v : best[j];
                at[j] = take ? static_cast<std::int32_t>(t) : at[j];
              }
            }
            for (int j = 0; j < block; ++j) {
              y_row[o2 + j] = best[j];
              i_row[o2 + j] = row_in + (o2 + j) * s2 + taps[static_cast<std::size_t>(at[j])];
            }
          };
          if (b2 - a2 >= block) {
            std::int64_t o2 = a2;
            for (; o2 + block <= b2; o2 += block) windows(o2);
            if (o2 < b2) windows(b2 - block);  // the last block overlaps the one before: same values
          } else {
            for (std::int64_t o2 = a2; o2 < b2; ++o2) {
              const T* base = plane + (row_in + o2 * s2);
              T best = base[taps[0]];
              std::int64_t at = taps[0];
              for (std::size_t t = 1; t < taps.size(); ++t) {
                const T v = base[taps[t]];
                const bool take = v > best || v != v;  // selects, not branches: data decide
                best = take ? v : best;
                at = take ? taps[t] : at;
              }
              y_row[o2] = best;
              i_row[o2] = row_in + o2 * s2 + at;
            }
          }
          for (std::int64_t o2 = std::max(a2, b2); o2 < g.out[2]; ++o2) edge(o2);
        }
  });
}

std::int64_t pool_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil) {
  const std::int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  std::int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;  // floor division
  // PyTorch: the last window must start inside the input or its left padding
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}
}  // namespace

template <element T>
std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling(const Tensor<T>& input, const pool_params& p) {
  const std::size_t D = p.kernel.size();
  const std::int64_t dims = static_cast<std::int64_t>(D);
  const std::string name = std::string(p.adaptive ? "adaptive_" : "") + (p.max ? "max" : "avg") + "_pool" +
                           std::to_string(D) + "d";
  if (input.dim() != dims + 1 && input.dim() != dims + 2)
    throw shape_error(name + ": Expected " + std::to_string(D + 1) + "D or " + std::to_string(D + 2) +
                      "D input, but got input of size: " + to_string(input.sizes()));
  const Tensor<T> x = input.contiguous();
  const dim_vector xs = tail(x.sizes(), static_cast<std::size_t>(x.dim() - dims));
  pool_geom g;
  g.planes = x.numel() / std::max<std::int64_t>(1, numel_of(xs));
  g.in = spatial3(xs, 1);
  dim_vector out(D);
  if (p.adaptive) {
    for (std::size_t i = 0; i < D; ++i) out[i] = p.kernel[i];
  } else {
    for (std::size_t i = 0; i < D; ++i) {
      if (p.kernel[i] <= 0) throw error("kernel_size must be greater than zero, but got " + join(p.kernel, ", "));
      if (p.stride[i] <= 0) throw error("stride should be greater than zero, but got " + join(p.stride, ", "));
      if (p.dilation[i] <= 0) throw error("dilation should be greater than zero, but got " + join(p.dilation, ", "));
      if (p.padding[i] < 0) throw error("pad must be non-negative, but got " + join(p.padding, ", "));
      if (p.padding[i] * 2 > p.kernel[i])
        throw error("pad should be at most half of kernel size, but got pad=" + std::to_string(p.padding[i]) +
                    " and kernel_size=" + std::to_string(p.kernel[i]));
      out[i] = pool_out(xs[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
    }
    if (std::any_of(out.begin(), out.end(), [](std::int64_t o) { return o < 1; })) {
      const std::int64_t channels = x.dim() == dims + 2 ? x.size(1) : x.size(0);
      throw shape_error("Given input size: (" + std::to_string(channels) + "x" + join(xs, "x") +
                        "). Calculated output size: (" + std::to_string(channels) + "x" + join(out, "x") +
                        "). Output size is too small");
    }
    g.k = spatial3(p.kernel, 1);
    g.s = spatial3(p.stride, 1);
    g.pl = spatial3(p.padding, 0);
    g.d = spatial3(p.dilation, 1);
  }
  g.out = spatial3(out, 1);
  dim_vector ysizes;
  for (std::int64_t i = 0; i < x.dim() - dims; ++i) ysizes.push_back(x.size(i));
  for (std::int64_t o : out) ysizes.push_back(o);
  Tensor<T> y = empty<T>(ysizes);
  Tensor<std::int64_t> indices = p.max ? empty<std::int64_t>(ysizes) : Tensor<std::int64_t>();
  const T* xp = x.data_ptr();
  T* yp = y.data_ptr();
  const std::int64_t IV = g.in_vol(), OV = g.out_vol();
  if (p.max) {
    std::int64_t* ip = indices.data_ptr();
    // One window clipped to the input: each dim's first tap inside, and the end.
    const auto clipped = [&](std::int64_t c, std::int64_t o, const dims3& lo, const dims3& hi) {
      T best = -std::numeric_limits<T>::infinity();
      std::int64_t at = -1;
      dims3 a, b;
      for (int i = 0; i < 3; ++i) {
        a[i] = lo[i] >= 0 ? lo[i] : lo[i] + (-lo[i] + g.d[i] - 1) / g.d[i] * g.d[i];
        b[i] = std::min(hi[i], g.in[i]);
      }
      const T* plane = xp + c * IV;
      for (std::int64_t i0 = a[0]; i0 < b[0]; i0 += g.d[0])
        for (std::int64_t i1 = a[1]; i1 < b[1]; i1 += g.d[1]) {
          const std::int64_t row = (i0 * g.in[1] + i1) * g.in[2];
          for (std::int64_t i2 = a[2]; i2 < b[2]; i2 += g.d[2]) {
            const T v = plane[row + i2];
            // ATen's rule: a larger value or a NaN takes the place (the last NaN wins); ties
            // keep the first.
            const bool take = at < 0 || v > best || v != v;
            best = take ? v : best;
            at = take ? row + i2 : at;
          }
        }
      yp[c * OV + o] = best;
      ip[c * OV + o] = at;
    };
    if (p.adaptive) {
      for_windows(g, true, clipped);
    } else {
      max_pool_rows(g, xp, yp, ip, clipped);
    }
  } else {
    for_windows(g, p.adaptive, [&](std::int64_t c, std::int64_t o, const dims3& lo, const dims3& hi) {
      const avg_window w = clip_average(g, p, lo, hi);
      T sum = 0;
      for (std::int64_t i0 = w.a[0]; i0 < w.b[0]; ++i0)
        for (std::int64_t i1 = w.a[1]; i1 < w.b[1]; ++i1)
          for (std::int64_t i2 = w.a[2]; i2 < w.b[2]; ++i2) sum += xp[c * IV + (i0 * g.in[1] + i1) * g.in[2] + i2];
      yp[c * OV + o] = sum / static_cast<T>(w.divisor);
    });
  }
  const Tensor<T> inputs[1] = {input};
  if (!grad_enabled() || !input.requires_grad()) return {y, indices};
  if (p.max) {
    // The indices the user gets may be written; the backward keeps its own.
    record_function<T>(y, inputs, [g, indices = indices.clone(), sizes = input.sizes().vec()](const Tensor<T>& gy, std::size_t) {
      Tensor<T> gx = zeros<T>(sizes);
      const Tensor<T> gc = gy.contiguous();
      const std::int64_t IV = g.in_vol(), OV = g.out_vol();
      T* gp = gx.data_ptr();
      const T* from = gc.data_ptr();
      const std::int64_t* ip = indices.data_ptr();
      // Planes split over threads: each adds into its own plane, in output order.
      for_parts(g.planes, thread_count(), [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t c = first; c < last; ++c)
          for (std::int64_t o = 0; o < OV; ++o)
            if (ip[c * OV + o] >= 0) gp[c * IV + ip[c * OV + o]] += from[c * OV + o];
      });
      return gx;
    });
  } else {
    record_function<T>(y, inputs, [g, p, sizes = input.sizes().vec()](const Tensor<T>& gy, std::size_t) {
      Tensor<T> gx = zeros<T>(sizes);
      const Tensor<T> gc = gy.contiguous();
      const std::int64_t IV = g.in_vol(), OV = g.out_vol();
      T* gp = gx.data_ptr();
      const T* from = gc.data_ptr();
      // One plane per part: windows of a plane add into its own gradient only.
      for_windows(g, p.adaptive, [&](std::int64_t c, std::int64_t o, const dims3& lo, const dims3& hi) {
        const avg_window w = clip_average(g, p, lo, hi);
        const T v = from[c * OV + o] / static_cast<T>(w.divisor);
        for (std::int64_t i0 = w.a[0]; i0 < w.b[0]; ++i0)
          for (std::int64_t i1 = w.a[1]; i1 < w.b[1]; ++i1)
            for (std::int64_t i2 = w.a[2]; i2 < w.b[2]; ++i2) gp[c * IV + (i0 * g.in[1] + i1) * g.in[2] + i2] += v;
      });
      return gx;
    });
  }
  return {y, indices};
}

#define STRATA_NN_CONV_DEFINE(T)                                                                          \
  template Tensor<T> convolution<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>*, const conv_params&); \
  template std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling<T>(const Tensor<T>&, const pool_params&);
STRATA_NN_CONV_DEFINE(float)
STRATA_NN_CONV_DEFINE(double)
STRATA_NN_CONV_DEFINE(float128)
#undef STRATA_NN_CONV_DEFINE
}  // namespace strata::detail
