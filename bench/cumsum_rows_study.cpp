// SPDX-License-Identifier: MIT
// Standalone study (not part of the build): hand loops for cumsum along dim 1 of a contiguous
// x [200000, n] (n = 8, 12, 16; double, and float with a double running sum), each row summed
// strictly in order (checked with memcmp against the sequential loop): 4 rows interleaved
// scalar (strata's scan_block<4>), 8 rows, one row unrolled with and without the compiler's
// vectorisation, 8 x 8 register transposes with and without streaming stores, 16 x 16 float
// transposes. Figures in docs/PERFORMANCE.md ("Windows copied with one table; the whole report").
//   clang++-19 -O3 -march=native -std=c++20 bench/cumsum_rows_study.cpp -o /tmp/cs && /tmp/cs 300 1
// Prints each variant's median over 300 calls (ms) and GB/s (bytes read + written).
#include <immintrin.h>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

// ---------------- reference ----------------
template<class T> __attribute__((noinline)) void ref(const T* __restrict x, T* __restrict y, long R, int n) {
  for (long r = 0; r < R; r++) {
    const T* xr = x + r*n; T* yr = y + r*n;
    double s = xr[0]; yr[0] = (T)s;
    for (int t = 1; t < n; t++) { s += xr[t]; yr[t] = (T)s; }
  }
}
// ---------------- 1. baseline: 4 rows, scalar, runtime n ----------------
template<class T> __attribute__((noinline)) void base4(const T* __restrict x, T* __restrict y, long R, int n) {
  long r = 0;
  for (; r + 4 <= R; r += 4) {
    const T *x0 = x + r*n, *x1 = x0 + n, *x2 = x1 + n, *x3 = x2 + n;
    T *y0 = y + r*n, *y1 = y0 + n, *y2 = y1 + n, *y3 = y2 + n;
    double s0 = x0[0], s1 = x1[0], s2 = x2[0], s3 = x3[0];
    y0[0] = (T)s0; y1[0] = (T)s1; y2[0] = (T)s2; y3[0] = (T)s3;
    for (int t = 1; t < n; t++) {
      s0 += x0[t]; s1 += x1[t]; s2 += x2[t]; s3 += x3[t];
      y0[t] = (T)s0; y1[t] = (T)s1; y2[t] = (T)s2; y3[t] = (T)s3;
    }
  }
  ref(x + r*n, y + r*n, R - r, n);
}
// ---------------- 2. 8 rows, scalar, compile-time N ----------------
template<class T, int N> __attribute__((noinline)) void s8(const T* __restrict x, T* __restrict y, long R) {
  long r = 0;
  for (; r + 8 <= R; r += 8) {
    const T* xb = x + r*N; T* yb = y + r*N;
    double s[8];
    for (int i = 0; i < 8; i++) { s[i] = xb[i*N]; yb[i*N] = (T)s[i]; }
    for (int t = 1; t < N; t++)
      for (int i = 0; i < 8; i++) { s[i] += xb[i*N + t]; yb[i*N + t] = (T)s[i]; }
  }
  ref(x + r*N, y + r*N, R - r, N);
}
// ---------------- 2b. 1 row at a time, compile-time N (fully unrolled; OoO overlaps rows) ----------------
template<class T, int N> __attribute__((noinline)) void s1(const T* __restrict x, T* __restrict y, long R) {
  for (long r = 0; r < R; r++) {
    const T* xr = x + r*N; T* yr = y + r*N;
    double s = xr[0]; yr[0] = (T)s;
#pragma clang loop unroll(full)
    for (int t = 1; t < N; t++) { s += xr[t]; yr[t] = (T)s; }
  }
}
// ---------------- 2c. scalar variants with auto-vectorization (gather/scatter) blocked ----------------
template<class T, int N> __attribute__((noinline)) void s1nv(const T* __restrict x, T* __restrict y, long R) {
#pragma clang loop vectorize(disable) interleave(disable)
  for (long r = 0; r < R; r++) {
    const T* xr = x + r*N; T* yr = y + r*N;
    double s = xr[0]; yr[0] = (T)s;
#pragma clang loop unroll(full)
    for (int t = 1; t < N; t++) { s += xr[t]; yr[t] = (T)s; }
  }
}
template<class T, int N> __attribute__((noinline)) void s8nv(const T* __restrict x, T* __restrict y, long R) {
  long r = 0;
#pragma clang loop vectorize(disable) interleave(disable)
  for (; r + 8 <= R; r += 8) {
    const T* xb = x + r*N; T* yb = y + r*N;
    double s[8];
    for (int i = 0; i < 8; i++) { s[i] = xb[i*N]; yb[i*N] = (T)s[i]; }
#pragma clang loop unroll(full)
    for (int t = 1; t < N; t++)
      for (int i = 0; i < 8; i++) { s[i] += xb[i*N + t]; asm("" : "+v"(s[i])); yb[i*N + t] = (T)s[i]; }
  }
  ref(x + r*N, y + r*N, R - r, N);
}
// ---------------- 3. 8x8 double transpose in registers ----------------
static inline void tr8(__m512d* r) {
  __m512d t0 = _mm512_unpacklo_pd(r[0], r[1]), t1 = _mm512_unpackhi_pd(r[0], r[1]);
  __m512d t2 = _mm512_unpacklo_pd(r[2], r[3]), t3 = _mm512_unpackhi_pd(r[2], r[3]);
  __m512d t4 = _mm512_unpacklo_pd(r[4], r[5]), t5 = _mm512_unpackhi_pd(r[4], r[5]);
  __m512d t6 = _mm512_unpacklo_pd(r[6], r[7]), t7 = _mm512_unpackhi_pd(r[6], r[7]);
  __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t0, t2, 0xDD);
  __m512d u2 = _mm512_shuffle_f64x2(t1, t3, 0x88), u3 = _mm512_shuffle_f64x2(t1, t3, 0xDD);
  __m512d u4 = _mm512_shuffle_f64x2(t4, t6, 0x88), u5 = _mm512_shuffle_f64x2(t4, t6, 0xDD);
  __m512d u6 = _mm512_shuffle_f64x2(t5, t7, 0x88), u7 = _mm512_shuffle_f64x2(t5, t7, 0xDD);
  r[0] = _mm512_shuffle_f64x2(u0, u4, 0x88); r[4] = _mm512_shuffle_f64x2(u0, u4, 0xDD);
  r[2] = _mm512_shuffle_f64x2(u1, u5, 0x88); r[6] = _mm512_shuffle_f64x2(u1, u5, 0xDD);
  r[1] = _mm512_shuffle_f64x2(u2, u6, 0x88); r[5] = _mm512_shuffle_f64x2(u2, u6, 0xDD);
  r[3] = _mm512_shuffle_f64x2(u3, u7, 0x88); r[7] = _mm512_shuffle_f64x2(u3, u7, 0xDD);
}
static inline __m512d ld8(const double* p, __mmask8 m) { return _mm512_maskz_loadu_pd(m, p); }
static inline __m512d ld8(const float* p, __mmask8 m) { return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, p)); }
static inline void st8(double* p, __mmask8 m, __m512d v) { _mm512_mask_storeu_pd(p, m, v); }
static inline void st8(float* p, __mmask8 m, __m512d v) { _mm256_mask_storeu_ps(p, m, _mm512_cvtpd_ps(v)); }

template<class T> static inline void stream_copy(T* dst, const T* src, int bytes) {
  for (int o = 0; o < bytes; o += 64)
    _mm512_stream_si512((__m512i*)((char*)dst + o), _mm512_load_si512((const char*)src + o));
}

// NT: non-temporal stores (y must be 64-byte aligned; 8*N*sizeof(T) multiple of 64)
template<class T, int N, bool NT> __attribute__((noinline)) void T8(const T* __restrict x, T* __restrict y, long R) {
  constexpr int B = (N + 7) / 8;
  long r = 0;
  for (; r + 8 <= R; r += 8) {
    const T* xb = x + r*N; T* yb = y + r*N;
    __m512d v[B][8];
    for (int b = 0; b < B; b++) {
      __mmask8 m = (N - 8*b >= 8) ? 0xFF : (__mmask8)((1u << (N - 8*b)) - 1);
      for (int i = 0; i < 8; i++) v[b][i] = ld8(xb + i*N + 8*b, m);
      tr8(v[b]);
    }
    __m512d acc = v[0][0];
    for (int c = 1; c < N; c++) { acc = _mm512_add_pd(acc, v[c/8][c%8]); v[c/8][c%8] = acc; }
    alignas(64) T buf[8*N];
    constexpr bool direct = NT && sizeof(T) == 8 && N % 8 == 0;
    T* out = (NT && !direct) ? buf : yb;
    for (int b = 0; b < B; b++) {
      tr8(v[b]);
      __mmask8 m = (N - 8*b >= 8) ? 0xFF : (__mmask8)((1u << (N - 8*b)) - 1);
      for (int i = 0; i < 8; i++) {
        if constexpr (direct) _mm512_stream_pd(out + i*N + 8*b, v[b][i]);
        else st8(out + i*N + 8*b, m, v[b][i]);
      }
    }
    if constexpr (NT && !direct) stream_copy(yb, buf, 8*N*sizeof(T));
  }
  if constexpr (NT) _mm_sfence();
  ref(x + r*N, y + r*N, R - r, N);
}
// ---------------- 4. float: 16x16 float transpose, 16 rows, convert columns to double ----------------
static inline void tr16(__m512* r) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) { t[2*i] = _mm512_unpacklo_ps(r[2*i], r[2*i+1]); t[2*i+1] = _mm512_unpackhi_ps(r[2*i], r[2*i+1]); }
  for (int g = 0; g < 4; g++) {
    u[4*g+0] = _mm512_shuffle_ps(t[4*g+0], t[4*g+2], 0x44); u[4*g+1] = _mm512_shuffle_ps(t[4*g+0], t[4*g+2], 0xEE);
    u[4*g+2] = _mm512_shuffle_ps(t[4*g+1], t[4*g+3], 0x44); u[4*g+3] = _mm512_shuffle_ps(t[4*g+1], t[4*g+3], 0xEE);
  }
  for (int j = 0; j < 4; j++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4+j], 0x88), v1 = _mm512_shuffle_f32x4(u[j], u[4+j], 0xDD);
    __m512 v2 = _mm512_shuffle_f32x4(u[8+j], u[12+j], 0x88), v3 = _mm512_shuffle_f32x4(u[8+j], u[12+j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(v0, v2, 0x88); r[8+j] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[4+j] = _mm512_shuffle_f32x4(v1, v3, 0x88); r[12+j] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}
template<int N, bool NT> __attribute__((noinline)) void T16f(const float* __restrict x, float* __restrict y, long R) {
  const __mmask16 m = (__mmask16)((1u << N) - 1);
  long r = 0;
  for (; r + 16 <= R; r += 16) {
    const float* xb = x + r*N; float* yb = y + r*N;
    __m512 v[16];
    for (int i = 0; i < 16; i++) v[i] = _mm512_maskz_loadu_ps(m, xb + i*N);
    tr16(v);
    __m512d alo = _mm512_cvtps_pd(_mm512_castps512_ps256(v[0]));
    __m512d ahi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v[0], 1));
    for (int c = 1; c < N; c++) {
      alo = _mm512_add_pd(alo, _mm512_cvtps_pd(_mm512_castps512_ps256(v[c])));
      ahi = _mm512_add_pd(ahi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v[c], 1)));
      v[c] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(alo)), _mm512_cvtpd_ps(ahi), 1);
    }
    for (int c = N; c < 16; c++) v[c] = _mm512_setzero_ps();
    tr16(v);
    alignas(64) float buf[16*N];
    if constexpr (N == 16 && NT) { for (int i = 0; i < 16; i++) _mm512_stream_ps(yb + 16*i, v[i]); }
    else {
      float* out = NT ? buf : yb;
      for (int i = 0; i < 16; i++) _mm512_mask_storeu_ps(out + i*N, m, v[i]);
      if constexpr (NT) stream_copy(yb, buf, 16*N*4);
    }
  }
  if constexpr (NT) _mm_sfence();
  ref(x + r*N, y + r*N, R - r, N);
}

// ---------------- harness ----------------
volatile int g_n;
template<class T> struct V { std::string name; void (*f)(const T*, T*, long); };

template<class T, int N> std::vector<V<T>> variants() {
  std::vector<V<T>> v;
  v.push_back({"base4(rt n)", [](const T* x, T* y, long R) { base4<T>(x, y, R, g_n); }});
  v.push_back({"s1<N>", [](const T* x, T* y, long R) { s1<T, N>(x, y, R); }});
  v.push_back({"s1nv<N>", [](const T* x, T* y, long R) { s1nv<T, N>(x, y, R); }});
  v.push_back({"s8nv<N>", [](const T* x, T* y, long R) { s8nv<T, N>(x, y, R); }});
  v.push_back({"s8<N>", [](const T* x, T* y, long R) { s8<T, N>(x, y, R); }});
  v.push_back({"T8<N>", [](const T* x, T* y, long R) { T8<T, N, false>(x, y, R); }});
  v.push_back({"T8<N>+NT", [](const T* x, T* y, long R) { T8<T, N, true>(x, y, R); }});
  if constexpr (std::is_same_v<T, float>) {
    v.push_back({"T16f<N>", [](const float* x, float* y, long R) { T16f<N, false>(x, y, R); }});
    v.push_back({"T16f<N>+NT", [](const float* x, float* y, long R) { T16f<N, true>(x, y, R); }});
  }
  return v;
}

template<class T, int N> void run(int reps, int round) {
  const long R = 200000; const size_t cnt = R * N;
  g_n = N;
  T* x = (T*)aligned_alloc(64, cnt * sizeof(T));
  static long yoff = getenv("YOFF") ? atol(getenv("YOFF")) : 0; // bytes, multiple of 64
  T* y = (T*)((char*)aligned_alloc(64, cnt * sizeof(T) + 8192) + yoff);
  T* yr = (T*)aligned_alloc(64, cnt * sizeof(T));
  std::mt19937_64 rng(12345 + N);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (size_t i = 0; i < cnt; i++) {
    double e = std::ldexp(d(rng), (int)(rng() % 40) - 20); // wide magnitudes -> order matters
    x[i] = (T)e;
    if (i % 97 == 0) x[i] = (T)-0.0;
  }
  ref(x, yr, R, N);
  auto vs = variants<T, N>();
  for (auto& v : vs) {
    memset(y, 0xAB, cnt * sizeof(T));
    v.f(x, y, R);
    if (memcmp(y, yr, cnt * sizeof(T))) { printf("MISMATCH %s n=%d\n", v.name.c_str(), N); exit(1); }
  }
  std::vector<std::vector<double>> tm(vs.size());
  for (int rep = 0; rep < reps + 5; rep++)
    for (size_t k = 0; k < vs.size(); k++) {
      auto t0 = std::chrono::steady_clock::now();
      vs[k].f(x, y, R);
      auto t1 = std::chrono::steady_clock::now();
      if (rep >= 5) tm[k].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  for (size_t k = 0; k < vs.size(); k++) {
    auto& t = tm[k]; std::sort(t.begin(), t.end());
    double med = t[t.size() / 2];
    printf("round=%d %-12s n=%2d %-6s median_ms=%.4f  GB/s=%.2f  p10=%.4f p90=%.4f\n", round, vs[k].name.c_str(), N,
           sizeof(T) == 8 ? "double" : "float", med, 2.0 * cnt * sizeof(T) / med / 1e6, t[t.size() / 10], t[t.size() * 9 / 10]);
  }
  fflush(stdout);
  free(x);  free(yr);
}

int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 300;
  int round = argc > 2 ? atoi(argv[2]) : 0;
  const char* only = getenv("ONLY");
  if (!only || only[0]=='d') { run<double, 16>(reps, round); run<double, 12>(reps, round); run<double, 8>(reps, round); }
  if (!only || only[0]=='f') { run<float, 16>(reps, round); run<float, 12>(reps, round); run<float, 8>(reps, round); }
}
