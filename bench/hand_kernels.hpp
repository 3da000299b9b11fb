// SPDX-License-Identifier: MIT
// The hand-written baselines of the benchmarks: what a performance engineer writes for each
// case (SIMD tiles with the transpose done in registers, several rows accumulated at once,
// output stripes kept in registers, __restrict pointers, aligned memory). Plain C++ (no
// strata), so that bench/hand_kernels_check.cpp can check every kernel against a naive loop.
//
// The ISA is chosen at compile time: AVX-512 (16 floats a vector), else AVX2 (8), else
// scalar loops the compiler vectorises as it can. The 8x8 AVX transpose is also compiled on
// an AVX-512 machine, as a second W5 baseline.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace hand {
using i64 = std::int64_t;

// ---- a thin vector layer for the reductions ----
#if defined(__AVX512F__)
constexpr i64 W = 16;
using vec = __m512;
inline vec vload(const float* p) { return _mm512_loadu_ps(p); }  // aligned data: same cost
inline void vstore(float* p, vec v) { _mm512_storeu_ps(p, v); }
inline vec vzero() { return _mm512_setzero_ps(); }
inline vec vset1(float x) { return _mm512_set1_ps(x); }
inline vec vadd(vec a, vec b) { return _mm512_add_ps(a, b); }
inline vec vmax(vec a, vec b) { return _mm512_max_ps(a, b); }
inline vec vfmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float vhsum(vec v) { return _mm512_reduce_add_ps(v); }
inline float vhmax(vec v) { return _mm512_reduce_max_ps(v); }
#elif defined(__AVX2__)
constexpr i64 W = 8;
using vec = __m256;
inline vec vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, vec v) { _mm256_storeu_ps(p, v); }
inline vec vzero() { return _mm256_setzero_ps(); }
inline vec vset1(float x) { return _mm256_set1_ps(x); }
inline vec vadd(vec a, vec b) { return _mm256_add_ps(a, b); }
inline vec vmax(vec a, vec b) { return _mm256_max_ps(a, b); }
inline vec vfmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float vhsum(vec v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
inline float vhmax(vec v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}
#else
constexpr i64 W = 1;
using vec = float;
inline vec vload(const float* p) { return *p; }
inline void vstore(float* p, vec v) { *p = v; }
inline vec vzero() { return 0.0f; }
inline vec vset1(float x) { return x; }
inline vec vadd(vec a, vec b) { return a + b; }
inline vec vmax(vec a, vec b) { return a > b ? a : b; }
inline vec vfmadd(vec a, vec b, vec c) { return a * b + c; }
inline float vhsum(vec v) { return v; }
inline float vhmax(vec v) { return v; }
#endif

// ---- W5 and the 3-D permutes: out[i][j] = a[j][i] + b[i][j] (i < rows, j < cols) ----
// Tiles are visited in blocks of `block` x `block` elements (256: the block of a, b and out
// stays in L2; measured 25-27 GB/s against 20 GB/s for a plain sweep of 16x16 tiles on a
// 4096x4096 W5 on Zen 5). Stores are ordinary stores, as in every other hand loop.
// Scalar edges (and the whole job without AVX, as 16x16 blocks).
inline void transpose_add_scalar(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                                 float* __restrict out, i64 ldo, i64 i0, i64 i1, i64 j0, i64 j1) {
  for (i64 i = i0; i < i1; ++i)
    for (i64 j = j0; j < j1; ++j) out[i * ldo + j] = a[j * lda + i] + b[i * ldb + j];
}

#if defined(__AVX2__)
// One 8x8 tile: eight rows of a loaded, transposed in AVX registers (unpack, shuffle,
// permute2f128), added to eight rows of b, stored as eight rows of out.
inline void tile8_transpose_add(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                                float* __restrict out, i64 ldo) {
  __m256 r0 = _mm256_loadu_ps(a + 0 * lda), r1 = _mm256_loadu_ps(a + 1 * lda);
  __m256 r2 = _mm256_loadu_ps(a + 2 * lda), r3 = _mm256_loadu_ps(a + 3 * lda);
  __m256 r4 = _mm256_loadu_ps(a + 4 * lda), r5 = _mm256_loadu_ps(a + 5 * lda);
  __m256 r6 = _mm256_loadu_ps(a + 6 * lda), r7 = _mm256_loadu_ps(a + 7 * lda);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 c[8] = {_mm256_permute2f128_ps(s0, s4, 0x20), _mm256_permute2f128_ps(s1, s5, 0x20),
                       _mm256_permute2f128_ps(s2, s6, 0x20), _mm256_permute2f128_ps(s3, s7, 0x20),
                       _mm256_permute2f128_ps(s0, s4, 0x31), _mm256_permute2f128_ps(s1, s5, 0x31),
                       _mm256_permute2f128_ps(s2, s6, 0x31), _mm256_permute2f128_ps(s3, s7, 0x31)};
  for (int k = 0; k < 8; ++k) _mm256_storeu_ps(out + k * ldo, _mm256_add_ps(c[k], _mm256_loadu_ps(b + k * ldb)));
}
inline void transpose_add_8x8(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                              float* __restrict out, i64 ldo, i64 rows, i64 cols, i64 block = 256) {
  const i64 rt = rows / 8 * 8, ct = cols / 8 * 8;
  for (i64 i0 = 0; i0 < rt; i0 += block)
    for (i64 j0 = 0; j0 < ct; j0 += block)
      for (i64 i = i0; i < std::min(i0 + block, rt); i += 8)
        for (i64 j = j0; j < std::min(j0 + block, ct); j += 8)
          tile8_transpose_add(a + j * lda + i, lda, b + i * ldb + j, ldb, out + i * ldo + j, ldo);
  transpose_add_scalar(a, lda, b, ldb, out, ldo, 0, rt, ct, cols);
  transpose_add_scalar(a, lda, b, ldb, out, ldo, rt, rows, 0, cols);
}
#endif

#if defined(__AVX512F__)
// One 16x16 tile: sixteen rows of a (one cache line each when aligned), transposed in zmm
// registers (unpacklo/hi, shuffle_ps, two rounds of shuffle_f32x4), added to b, stored.
inline void tile16_transpose_add(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                                 float* __restrict out, i64 ldo) {
  __m512 r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(a + k * lda);
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    r[k + 0] = _mm512_shuffle_ps(t[k + 0], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 1] = _mm512_shuffle_ps(t[k + 0], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // r[4q + m] lane l holds a 4x4 transposed block: rows 4q..4q+3, columns 4l + m.
  for (int h = 0; h < 16; h += 8)
    for (int m = 0; m < 4; ++m) {
      t[h + m] = _mm512_shuffle_f32x4(r[h + m], r[h + 4 + m], 0x88);
      t[h + 4 + m] = _mm512_shuffle_f32x4(r[h + m], r[h + 4 + m], 0xdd);
    }
  for (int m = 0; m < 8; ++m) {
    r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
  }
  for (int k = 0; k < 16; ++k) _mm512_storeu_ps(out + k * ldo, _mm512_add_ps(r[k], _mm512_loadu_ps(b + k * ldb)));
}
// The 16 lines at p, p + ld, ..., p + 15 ld (the rows of a 16 x 16 float tile) into L2.
inline void prefetch16_l2(const float* p, i64 ld) {
  for (int k = 0; k < 16; ++k) __builtin_prefetch(p + k * ld, 0, 2);
}
// Prefetch: while tile (i, j) runs, the lines of tile (i, j + 32) (two ahead) are prefetched
// into L2 (prefetcht1): the 48 short rows a tile reads are more streams than the hardware
// prefetchers follow, and prefetched into L1 they evict each other (16 rows 4 KiB apart share
// a set).
template <bool Prefetch = false>
inline void transpose_add_16x16(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                                float* __restrict out, i64 ldo, i64 rows, i64 cols, i64 block = 256) {
  const i64 rt = rows / 16 * 16, ct = cols / 16 * 16;
  for (i64 i0 = 0; i0 < rt; i0 += block)
    for (i64 j0 = 0; j0 < ct; j0 += block)
      for (i64 i = i0; i < std::min(i0 + block, rt); i += 16)
        for (i64 j = j0; j < std::min(j0 + block, ct); j += 16) {
          if constexpr (Prefetch) {
            const i64 jp = std::min(j + 32, ct - 16);
            prefetch16_l2(a + jp * lda + i, lda);
            prefetch16_l2(b + i * ldb + jp, ldb);
            prefetch16_l2(out + i * ldo + jp, ldo);
          }
          tile16_transpose_add(a + j * lda + i, lda, b + i * ldb + j, ldb, out + i * ldo + j, ldo);
        }
  transpose_add_scalar(a, lda, b, ldb, out, ldo, 0, rt, ct, cols);
  transpose_add_scalar(a, lda, b, ldb, out, ldo, rt, rows, 0, cols);
}
#endif

// The best tiled transpose-add this build has (Prefetch: with software prefetch, AVX-512 only).
template <bool Prefetch = false>
inline void transpose_add(const float* __restrict a, i64 lda, const float* __restrict b, i64 ldb,
                          float* __restrict out, i64 ldo, i64 rows, i64 cols) {
#if defined(__AVX512F__)
  transpose_add_16x16<Prefetch>(a, lda, b, ldb, out, ldo, rows, cols);
#elif defined(__AVX2__)
  transpose_add_8x8(a, lda, b, ldb, out, ldo, rows, cols);
#else
  for (i64 i0 = 0; i0 < rows; i0 += 16)
    for (i64 j0 = 0; j0 < cols; j0 += 16)
      transpose_add_scalar(a, lda, b, ldb, out, ldo, i0, std::min(i0 + 16, rows), j0, std::min(j0 + 16, cols));
#endif
}

// x [n0, n1, n2] contiguous; out = x.permute({2, 1, 0}) + y, out and y [n2, n1, n0] contiguous:
// out[i][j][k] = x[k][j][i] + y[i][j][k]. Tiles over (i, k), the middle dim j innermost, so
// that each tile's 16 (or 8) rows of x, y and out all advance by whole lines: measured 23 GB/s
// against 11-16 GB/s for a 2-D tiled transpose per j on [64, 512, 512] on Zen 5.
// Prefetch (AVX-512 only): the lines of step j + 2 into L2 while step j runs, as above.
template <bool Prefetch = false>
inline void permute210_add(const float* __restrict x, const float* __restrict y, float* __restrict out, i64 n0, i64 n1,
                           i64 n2) {
#if defined(__AVX512F__)
  constexpr i64 T = 16;
#elif defined(__AVX2__)
  constexpr i64 T = 8;
#else
  constexpr i64 T = 1;
#endif
  const i64 S = n1 * n2, kt = n0 / T * T, it = n2 / T * T;
  for (i64 k = 0; k < kt; k += T)
    for (i64 i = 0; i < it; i += T)
      for (i64 j = 0; j < n1; ++j) {
        const float* __restrict px = x + k * S + j * n2 + i;
        const float* __restrict py = y + (i * n1 + j) * n0 + k;
        float* __restrict po = out + (i * n1 + j) * n0 + k;
#if defined(__AVX512F__)
        if constexpr (Prefetch) {
          const i64 jp = std::min(j + 2, n1 - 1) - j;
          prefetch16_l2(px + jp * n2, S);
          prefetch16_l2(py + jp * n0, n1 * n0);
          prefetch16_l2(po + jp * n0, n1 * n0);
        }
        tile16_transpose_add(px, S, py, n1 * n0, po, n1 * n0);
#elif defined(__AVX2__)
        tile8_transpose_add(px, S, py, n1 * n0, po, n1 * n0);
#else
        po[0] = px[0] + py[0];
#endif
      }
  for (i64 j = 0; j < n1; ++j) {  // edges: k >= kt for every i, and i >= it for k < kt
    transpose_add_scalar(x + j * n2, S, y + j * n0, n1 * n0, out + j * n0, n1 * n0, 0, n2, kt, n0);
    transpose_add_scalar(x + j * n2, S, y + j * n0, n1 * n0, out + j * n0, n1 * n0, it, n2, 0, kt);
  }
}

// ---- W4: out[i][j] = col[i] * row[j] + c[i][j]; R rows at a time share each load of row ----
template <int R>
inline void outer_add(const float* __restrict col, const float* __restrict row, const float* __restrict c,
                      float* __restrict out, i64 rows, i64 cols) {
  i64 i = 0;
  for (; i + R <= rows; i += R) {
    vec s[R];
    for (int q = 0; q < R; ++q) s[q] = vset1(col[i + q]);
    i64 j = 0;
    for (; j + W <= cols; j += W) {
      const vec r = vload(row + j);
      for (int q = 0; q < R; ++q) vstore(out + (i + q) * cols + j, vfmadd(s[q], r, vload(c + (i + q) * cols + j)));
    }
    for (; j < cols; ++j)
      for (int q = 0; q < R; ++q) out[(i + q) * cols + j] = col[i + q] * row[j] + c[(i + q) * cols + j];
  }
  for (; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j) out[i * cols + j] = col[i] * row[j] + c[i * cols + j];
}

// ---- W3: out[i][j] = a[i][j] + row[j]; R rows at a time share each load of row ----
template <int R>
inline void row_add(const float* __restrict a, const float* __restrict row, float* __restrict out, i64 rows, i64 cols) {
  i64 i = 0;
  for (; i + R <= rows; i += R) {
    i64 j = 0;
    for (; j + W <= cols; j += W) {
      const vec r = vload(row + j);
      for (int q = 0; q < R; ++q) vstore(out + (i + q) * cols + j, vadd(r, vload(a + (i + q) * cols + j)));
    }
    for (; j < cols; ++j)
      for (int q = 0; q < R; ++q) out[(i + q) * cols + j] = a[(i + q) * cols + j] + row[j];
  }
  for (; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j) out[i * cols + j] = a[i * cols + j] + row[j];
}

// ---- W7a / row reductions: sums of R contiguous rows at once, 2 accumulators a row ----
// o[q] = sum of row q (rows ld apart, n elements each), for q < R.
template <int R>
inline void rows_sum(const float* __restrict p, i64 ld, i64 n, float* __restrict o) {
  vec acc[R][2];
  for (int q = 0; q < R; ++q) acc[q][0] = acc[q][1] = vzero();
  i64 k = 0;
  for (; k + 2 * W <= n; k += 2 * W)
    for (int q = 0; q < R; ++q) {
      acc[q][0] = vadd(acc[q][0], vload(p + q * ld + k));
      acc[q][1] = vadd(acc[q][1], vload(p + q * ld + k + W));
    }
  for (int q = 0; q < R; ++q) {
    float t = vhsum(vadd(acc[q][0], acc[q][1]));
    for (i64 kk = k; kk < n; ++kk) t += p[q * ld + kk];
    o[q] = t;
  }
}
// sum of every row of a [rows, n] block into o[rows] (o[r] = ...), R rows at a time.
template <int R>
inline void row_sums(const float* __restrict p, i64 rows, i64 n, float* __restrict o) {
  i64 r = 0;
  for (; r + R <= rows; r += R) rows_sum<R>(p + r * n, n, n, o + r);
  for (; r < rows; ++r) rows_sum<1>(p + r * n, n, n, o + r);
}
// The same, each row sum added to o[r] (W7a: o[j] += over the leading dim).
template <int R>
inline void row_sums_acc(const float* __restrict p, i64 rows, i64 n, float* __restrict o) {
  float t[R];
  i64 r = 0;
  for (; r + R <= rows; r += R) {
    rows_sum<R>(p + r * n, n, n, t);
    for (int q = 0; q < R; ++q) o[r + q] += t[q];
  }
  for (; r < rows; ++r) {
    rows_sum<1>(p + r * n, n, n, t);
    o[r] += t[0];
  }
}

// Row maxima of a [rows, n] block (no NaN propagation: the hardware max), R rows at a time,
// 2 accumulators a row.
template <int R>
inline void row_maxes(const float* __restrict p, i64 rows, i64 n, float* __restrict o) {
  auto block = [&](const float* __restrict q0, int nr, float* __restrict oo) {
    vec acc[R][2];
    for (int q = 0; q < nr; ++q) acc[q][0] = acc[q][1] = vset1(-INFINITY);
    i64 k = 0;
    for (; k + 2 * W <= n; k += 2 * W)
      for (int q = 0; q < nr; ++q) {
        acc[q][0] = vmax(acc[q][0], vload(q0 + q * n + k));
        acc[q][1] = vmax(acc[q][1], vload(q0 + q * n + k + W));
      }
    for (int q = 0; q < nr; ++q) {
      float t = vhmax(vmax(acc[q][0], acc[q][1]));
      for (i64 kk = k; kk < n; ++kk) t = std::max(t, q0[q * n + kk]);
      oo[q] = t;
    }
  };
  i64 r = 0;
  for (; r + R <= rows; r += R) block(p + r * n, R, o + r);
  for (; r < rows; ++r) block(p + r * n, 1, o + r);
}

// Contiguous reductions of n elements with 8 vector accumulators.
inline float flat_sum(const float* __restrict p, i64 n) {
  vec acc[8];
  for (auto& a : acc) a = vzero();
  i64 i = 0;
  for (; i + 8 * W <= n; i += 8 * W)
    for (int q = 0; q < 8; ++q) acc[q] = vadd(acc[q], vload(p + i + q * W));
  vec s = vadd(vadd(vadd(acc[0], acc[1]), vadd(acc[2], acc[3])), vadd(vadd(acc[4], acc[5]), vadd(acc[6], acc[7])));
  float t = vhsum(s);
  for (; i < n; ++i) t += p[i];
  return t;
}
inline float flat_max(const float* __restrict p, i64 n) {
  vec acc[8];
  for (auto& a : acc) a = vset1(-INFINITY);
  i64 i = 0;
  for (; i + 8 * W <= n; i += 8 * W)
    for (int q = 0; q < 8; ++q) acc[q] = vmax(acc[q], vload(p + i + q * W));
  vec s = vmax(vmax(vmax(acc[0], acc[1]), vmax(acc[2], acc[3])), vmax(vmax(acc[4], acc[5]), vmax(acc[6], acc[7])));
  float t = vhmax(s);
  for (; i < n; ++i) t = std::max(t, p[i]);
  return t;
}

// ---- W7b: column sums of a [rows, n] block added into o[n] ----
// R rows at a time: each vector of o loaded and stored once per R rows.
template <int R>
inline void col_sums_rows(const float* __restrict p, i64 rows, i64 n, float* __restrict o) {
  i64 r = 0;
  for (; r + R <= rows; r += R) {
    const float* __restrict q0 = p + r * n;
    i64 k = 0;
    for (; k + W <= n; k += W) {
      vec v[R];
      for (int q = 0; q < R; ++q) v[q] = vload(q0 + q * n + k);
      for (int w = 1; w < R; w *= 2)  // pairwise tree over the R rows
        for (int q = 0; q + w < R; q += 2 * w) v[q] = vadd(v[q], v[q + w]);
      vstore(o + k, vadd(vload(o + k), v[0]));
    }
    for (; k < n; ++k)
      for (int q = 0; q < R; ++q) o[k] += q0[q * n + k];
  }
  for (; r < rows; ++r)
    for (i64 k = 0; k < n; ++k) o[k] += p[r * n + k];
}
// A stripe of S vectors of o kept in registers while walking a block of RB rows, block after
// block (RB rows of n floats stay in L2 while the stripes sweep them).
template <int S, int RB>
inline void col_sums_stripe(const float* __restrict p, i64 rows, i64 n, float* __restrict o) {
  const i64 sw = S * W;
  for (i64 r0 = 0; r0 < rows; r0 += RB) {
    const i64 r1 = std::min(r0 + RB, rows);
    i64 k0 = 0;
    for (; k0 + sw <= n; k0 += sw) {
      vec acc[S];
      for (int m = 0; m < S; ++m) acc[m] = vload(o + k0 + m * W);
      for (i64 r = r0; r < r1; ++r)
        for (int m = 0; m < S; ++m) acc[m] = vadd(acc[m], vload(p + r * n + k0 + m * W));
      for (int m = 0; m < S; ++m) vstore(o + k0 + m * W, acc[m]);
    }
    for (i64 r = r0; r < r1; ++r)
      for (i64 k = k0; k < n; ++k) o[k] += p[r * n + k];
  }
}

// ---- three strided operands: out[i][j] = a[i][3j] + b[i][3j+1] + c[i][3j+2] ----
// (a, b, c rows ld floats apart, out rows m floats: m = number of triples a row)
inline void stride3_add(const float* __restrict a, const float* __restrict b, const float* __restrict c, i64 ld,
                        float* __restrict out, i64 rows, i64 m) {
  for (i64 i = 0; i < rows; ++i) {
    const float* __restrict pa = a + i * ld; const float* __restrict pb = b + i * ld; const float* __restrict pc = c + i * ld;
    float* __restrict po = out + i * m;
    i64 j = 0;
#if defined(__AVX512F__)
    // 16 triples = 3 vectors; each channel gathered with two vpermt2ps.
    const __m512i a0 = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0);
    const __m512i a1 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
    const __m512i b0 = _mm512_setr_epi32(1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0);
    const __m512i b1 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
    const __m512i c0 = _mm512_setr_epi32(2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0);
    const __m512i c1 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
    for (; j + 16 <= m; j += 16) {
      const float* qa = pa + 3 * j; const float* qb = pb + 3 * j; const float* qc = pc + 3 * j;
      const __m512 va = _mm512_permutex2var_ps(
          _mm512_permutex2var_ps(_mm512_loadu_ps(qa), a0, _mm512_loadu_ps(qa + 16)), a1, _mm512_loadu_ps(qa + 32));
      const __m512 vb = _mm512_permutex2var_ps(
          _mm512_permutex2var_ps(_mm512_loadu_ps(qb), b0, _mm512_loadu_ps(qb + 16)), b1, _mm512_loadu_ps(qb + 32));
      const __m512 vc = _mm512_permutex2var_ps(
          _mm512_permutex2var_ps(_mm512_loadu_ps(qc), c0, _mm512_loadu_ps(qc + 16)), c1, _mm512_loadu_ps(qc + 32));
      _mm512_storeu_ps(po + j, _mm512_add_ps(_mm512_add_ps(va, vb), vc));
    }
#endif
    for (; j < m; ++j) po[j] = pa[3 * j] + pb[3 * j + 1] + pc[3 * j + 2];
  }
}
// ---- transcendental loops on glibc's vector math library (libmvec), when CMake finds it ----
// What a performance engineer calls instead of scalar expf: the same glibc, 16 (8) lanes a
// call. (Scalar libm loops are written inline in the benchmarks.)
#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
}  // namespace hand
#if defined(__AVX512F__)
extern "C" __m512 _ZGVeN16v_expf(__m512);
extern "C" __m512 _ZGVeN16v_tanhf(__m512);
namespace hand {
inline vec vexp(vec x) { return _ZGVeN16v_expf(x); }
inline vec vtanh(vec x) { return _ZGVeN16v_tanhf(x); }
inline vec vmul(vec a, vec b) { return _mm512_mul_ps(a, b); }
inline vec vdiv(vec a, vec b) { return _mm512_div_ps(a, b); }
inline vec vneg(vec a) { return _mm512_sub_ps(_mm512_setzero_ps(), a); }
#else
extern "C" __m256 _ZGVdN8v_expf(__m256);
extern "C" __m256 _ZGVdN8v_tanhf(__m256);
namespace hand {
inline vec vexp(vec x) { return _ZGVdN8v_expf(x); }
inline vec vtanh(vec x) { return _ZGVdN8v_tanhf(x); }
inline vec vmul(vec a, vec b) { return _mm256_mul_ps(a, b); }
inline vec vdiv(vec a, vec b) { return _mm256_div_ps(a, b); }
inline vec vneg(vec a) { return _mm256_sub_ps(_mm256_setzero_ps(), a); }
#endif
constexpr bool have_libmvec = true;
inline void exp_libmvec(const float* __restrict a, float* __restrict out, i64 n) {
  i64 i = 0;
  for (; i + W <= n; i += W) vstore(out + i, vexp(vload(a + i)));
  for (; i < n; ++i) out[i] = std::exp(a[i]);
}
// out = exp(-a*a) * tanh(b) + 1 / (1 + exp(-c))
inline void w11_libmvec(const float* __restrict a, const float* __restrict b, const float* __restrict c,
                        float* __restrict out, i64 n) {
  const vec one = vset1(1.0f);
  i64 i = 0;
  for (; i + W <= n; i += W) {
    const vec x = vload(a + i);
    const vec e = vmul(vexp(vneg(vmul(x, x))), vtanh(vload(b + i)));
    vstore(out + i, vadd(e, vdiv(one, vadd(one, vexp(vneg(vload(c + i)))))));
  }
  for (; i < n; ++i) out[i] = std::exp(-a[i] * a[i]) * std::tanh(b[i]) + 1.0f / (1.0f + std::exp(-c[i]));
}
#else
constexpr bool have_libmvec = false;
#endif
}  // namespace hand
