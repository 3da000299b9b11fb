// SPDX-License-Identifier: MIT
// Moving elements between strided operands and the loops' unit-stride buffers: gathers (and
// broadcast fills), scatters, and tile transposes in registers. They depend on an element's
// width only, so they are compiled once, here, and shared by every expression, reduction and
// derivative (none of this is instantiated in a user's translation unit).
module;
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
module strata.loop;

namespace strata::detail {
namespace {
// Interleaved three-channel data (RGB), W = 4 or 8 bytes an element, in vectors of B = 64 / W
// lanes: the compiler's own stride-3 loop is slower than scalar loads here, so a block of 3B
// elements is loaded as three vectors and each channel taken out by two shuffles.
template <std::int64_t W>
using vec3 = std::conditional_t<W == 4, std::uint32_t, std::uint64_t> __attribute__((ext_vector_type(64 / W)));

// Stores channel Ch of the block held in a, b, c (its elements Ch, Ch + 3, Ch + 6, ..., in
// order) at dst + i elements. Vectors pass by reference: 64-byte vectors by value would have
// an ABI that depends on whether AVX-512 is enabled.
template <std::int64_t W, int Ch>
void take_channel(const vec3<W>& a, const vec3<W>& b, const vec3<W>& c, std::int64_t i, char* dst) {
  vec3<W> r;
  if constexpr (W == 4 && Ch == 0) {
    const auto t = __builtin_shufflevector(a, b, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
  } else if constexpr (W == 4 && Ch == 1) {
    const auto t = __builtin_shufflevector(a, b, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
  } else if constexpr (W == 4) {
    const auto t = __builtin_shufflevector(a, b, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
  } else if constexpr (Ch == 0) {
    const auto t = __builtin_shufflevector(a, b, 0, 3, 6, 9, 12, 15, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 5, 10, 13);
  } else if constexpr (Ch == 1) {
    const auto t = __builtin_shufflevector(a, b, 1, 4, 7, 10, 13, 0, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 8, 11, 14);
  } else {
    const auto t = __builtin_shufflevector(a, b, 2, 5, 8, 11, 14, 0, 0, 0);
    r = __builtin_shufflevector(t, c, 0, 1, 2, 3, 4, 9, 12, 15);
  }
  std::memcpy(dst + i * W, &r, sizeof r);
}

template <std::int64_t W>
void load3(const char* src, std::int64_t i, vec3<W>& a, vec3<W>& b, vec3<W>& c) {
  constexpr std::int64_t B = 64 / W;
  std::memcpy(&a, src + 3 * i * W, sizeof a);
  std::memcpy(&b, src + (3 * i + B) * W, sizeof b);
  std::memcpy(&c, src + (3 * i + 2 * B) * W, sizeof c);
}

// The element a block of vectors may end at (exclusive), for n elements of an operand with
// room elements from the first on (those after n belong to later chunks of the row): a block
// of B elements from i reads up to element 3 * (i + B) - 1 of its data, so it is loaded only
// when element i + B exists and the loads never leave the span of the operand at the base.
inline std::int64_t block_end(std::int64_t n, std::int64_t room) { return room > n ? n : n - 1; }

// The channels k in Mask (bit k) of one operand's interleaved data: dst[k][i] = src[3 * i + k],
// i < n, all from the same vectors (room: as block_end). (Neither loop is unrolled: measured
// faster on this memory-bound loop, W10 of bench/fusion_bench.)
template <std::int64_t W, unsigned Mask>
void gather3(const char* __restrict src, std::int64_t n, std::int64_t room, char* __restrict d0,
             char* __restrict d1, char* __restrict d2) {
  std::int64_t i = 0;
  if constexpr (W == 4 || W == 8) {
    const std::int64_t end = block_end(n, room);
#pragma clang loop unroll(disable)
    for (; i + 64 / W <= end; i += 64 / W) {
      vec3<W> a, b, c;
      load3<W>(src, i, a, b, c);
      if constexpr ((Mask & 1u) != 0) take_channel<W, 0>(a, b, c, i, d0);
      if constexpr ((Mask & 2u) != 0) take_channel<W, 1>(a, b, c, i, d1);
      if constexpr ((Mask & 4u) != 0) take_channel<W, 2>(a, b, c, i, d2);
    }
  }
#pragma clang loop vectorize(disable) unroll(disable)
  for (; i < n; ++i) {
    if constexpr ((Mask & 1u) != 0) std::memcpy(d0 + i * W, src + 3 * i * W, W);
    if constexpr ((Mask & 2u) != 0) std::memcpy(d1 + i * W, src + (3 * i + 1) * W, W);
    if constexpr ((Mask & 4u) != 0) std::memcpy(d2 + i * W, src + (3 * i + 2) * W, W);
  }
}

// gather3 for the channels in mask (two or three of them).
template <std::int64_t W>
void gather3_channels(const char* src, std::int64_t n, std::int64_t room, unsigned mask, char* const* d) {
  char* const d0 = d[0];
  char* const d1 = d[1];
  char* const d2 = d[2];
  switch (mask) {
    case 3: return gather3<W, 3>(src, n, room, d0, d1, d2);
    case 5: return gather3<W, 5>(src, n, room, d0, d1, d2);
    case 6: return gather3<W, 6>(src, n, room, d0, d1, d2);
    default: return gather3<W, 7>(src, n, room, d0, d1, d2);
  }
}

// Channel 0 of C operands of different interleaved data at once: dst[k][i] = src[k][3 * i],
// i < n, k < C (room: as block_end). One loop over all C streams keeps them all in flight;
// gathered one after another, each stream would wait on memory alone (W10 three bases: 8%
// faster than that).
template <std::int64_t W, int C>
void gather3_streams(const char* const* src, std::int64_t n, std::int64_t room, char* const* dst) {
  const char* s[C];
  char* d[C];
  for (int k = 0; k < C; ++k) {
    s[k] = src[k];
    d[k] = dst[k];
  }
  std::int64_t i = 0;
  const std::int64_t end = block_end(n, room);
#pragma clang loop unroll(disable)
  for (; i + 64 / W <= end; i += 64 / W) {
    for (int k = 0; k < C; ++k) {
      vec3<W> a, b, c;
      load3<W>(s[k], i, a, b, c);
      take_channel<W, 0>(a, b, c, i, d[k]);
    }
  }
#pragma clang loop vectorize(disable) unroll(disable)
  for (; i < n; ++i)
    for (int k = 0; k < C; ++k) std::memcpy(d[k] + i * W, s[k] + 3 * i * W, W);
}

// gather3_streams for C = count streams (1 to 4).
template <std::int64_t W>
void gather3_batch(const char* const* src, int count, std::int64_t n, std::int64_t room, char* const* dst) {
  switch (count) {
    case 1: return gather3_streams<W, 1>(src, n, room, dst);
    case 2: return gather3_streams<W, 2>(src, n, room, dst);
    case 3: return gather3_streams<W, 3>(src, n, room, dst);
    default: return gather3_streams<W, 4>(src, n, room, dst);
  }
}

// gather() for W-byte elements: strides of 0 (a fill), 2, 3 and 4 elements take loops that
// vectorise.
template <std::int64_t W>
void gather_w(const char* src, std::int64_t stride, std::int64_t n, char* __restrict dst) {
  if (stride == 0) {
    char v[W];
    std::memcpy(v, src, W);
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * W, v, W);
  } else if (stride == 2 * W) {
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * W, src + 2 * i * W, W);
  } else if (stride == 3 * W) {
    gather3<W, 1>(src, n, n, dst, nullptr, nullptr);
  } else if (stride == 4 * W) {
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * W, src + 4 * i * W, W);
  } else {
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * W, src + i * stride, W);
  }
}

template <std::int64_t W>
void scatter_w(const char* __restrict src, std::int64_t n, char* dst, std::int64_t stride) {
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + i * W, W);
}

// The widest vector the build has, in bytes: a block transpose fills whole vectors, so that
// the row loop's loads of the transposed data match the stores that wrote it (a 64-byte load
// of data written by two 32-byte stores cannot be forwarded and stalls).
#if defined(__AVX512F__)
inline constexpr std::int64_t vector_bytes = 64;
#elif defined(__AVX__)
inline constexpr std::int64_t vector_bytes = 32;
#else
inline constexpr std::int64_t vector_bytes = 16;
#endif
template <std::int64_t W>
using block_vec = std::conditional_t<W == 4, std::uint32_t, std::uint64_t> __attribute__((ext_vector_type(vector_bytes / W)));

// out lane i = lane i / 2 + h of a (even i) or of b (odd i), h = 0 (low halves) or B / 2 (high
// halves). Vectors pass by reference: by value, their ABI would depend on the ISA flags.
template <int B, int H, class V, std::size_t... I>
void interleave(const V& a, const V& b, V& out, std::index_sequence<I...>) {
  out = __builtin_shufflevector(a, b, (I % 2 == 0 ? static_cast<int>(I / 2) + H : B + static_cast<int>(I / 2) + H)...);
}

// Transposes a B x B block of W-byte elements, B = vector_bytes / W (16 floats or 8 doubles
// with AVX-512, 8 or 4 with AVX, 4 or 2 with SSE): row r of src (r * s0 bytes on) holds B
// consecutive elements; row c of dst (c * d0 bytes on) receives element c of every src row,
// in row order. log2(B) rounds, each interleaving row k with row k + B / 2 (one two-source
// permute per output row).
template <std::int64_t W>
void transpose_regs(const char* src, std::int64_t s0, char* dst, std::int64_t d0) {
  using V = block_vec<W>;
  constexpr int B = static_cast<int>(vector_bytes / W);
  V r[B], t[B];
  for (int k = 0; k < B; ++k) std::memcpy(&r[k], src + k * s0, sizeof(V));
  for (int round = 1; round < B; round *= 2) {
    for (int k = 0; k < B / 2; ++k) {
      interleave<B, 0>(r[k], r[k + B / 2], t[2 * k], std::make_index_sequence<B>{});
      interleave<B, B / 2>(r[k], r[k + B / 2], t[2 * k + 1], std::make_index_sequence<B>{});
    }
    for (int k = 0; k < B; ++k) r[k] = t[k];
  }
  for (int k = 0; k < B; ++k) std::memcpy(dst + k * d0, &r[k], sizeof(V));
}

// Copies an n0 x n1 block of W-byte elements: element (i, j) is at a + i * a0 + j * a1 and
// goes to b + i * b0 + j * b1. One side is unit-stride along dim 1 (a1 == W when rows_in_a,
// else b1 == W) and the other along dim 0; B x B blocks are transposed in registers, the
// edges copied element by element.
template <std::int64_t W, bool rows_in_a>
void transpose_w(const char* a, std::int64_t a0, std::int64_t a1, char* b, std::int64_t b0,
                 std::int64_t b1, std::int64_t n0, std::int64_t n1) {
  constexpr std::int64_t B = W == 4 || W == 8 ? vector_bytes / W : 1;
  std::int64_t i = 0;
  if constexpr (B > 1) {
    for (; i + B <= n0; i += B) {
      std::int64_t j = 0;
      for (; j + B <= n1; j += B) {
        const char* s = a + i * a0 + j * a1;
        char* d = b + i * b0 + j * b1;
        if constexpr (rows_in_a) transpose_regs<W>(s, a0, d, b1);
        else transpose_regs<W>(s, a1, d, b0);
      }
      for (; j < n1; ++j)
        for (std::int64_t ii = i; ii < i + B; ++ii) std::memcpy(b + ii * b0 + j * b1, a + ii * a0 + j * a1, W);
    }
  }
  for (; i < n0; ++i)
    for (std::int64_t j = 0; j < n1; ++j) std::memcpy(b + i * b0 + j * b1, a + i * a0 + j * a1, W);
}

// Runs f.template operator()<W>() for the widths with code of their own (1, 2, 4, 8 and 16
// bytes: every dtype's width); false for any other width.
template <class F>
bool with_width(std::int64_t w, F&& f) {
  switch (w) {
    case 1: f.template operator()<1>(); return true;
    case 2: f.template operator()<2>(); return true;
    case 4: f.template operator()<4>(); return true;
    case 8: f.template operator()<8>(); return true;
    case 16: f.template operator()<16>(); return true;
    default: return false;
  }
}

// Element (i, j), w bytes, from a + i * a0 + j * a1 to b + i * b0 + j * b1: the widths with
// no block transpose.
void copy_block(const char* a, std::int64_t a0, std::int64_t a1, char* b, std::int64_t b0, std::int64_t b1,
                std::int64_t n0, std::int64_t n1, std::int64_t w) {
  for (std::int64_t i = 0; i < n0; ++i)
    for (std::int64_t j = 0; j < n1; ++j) std::memcpy(b + i * b0 + j * b1, a + i * a0 + j * a1, static_cast<std::size_t>(w));
}
}  // namespace

void gather(const char* src, std::int64_t stride, std::int64_t n, std::int64_t w, char* dst) {
  if (!with_width(w, [&]<std::int64_t W>() { gather_w<W>(src, stride, n, dst); }))
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * w, src + i * stride, static_cast<std::size_t>(w));
}

void fill_rows(const char* src, std::int64_t s1, std::int64_t n0, std::int64_t n1, std::int64_t w, char* dst) {
  for (std::int64_t j = 0; j < n1; ++j) gather(src + j * s1, 0, n0, w, dst + j * n0 * w);
}

namespace {
// n bytes (at most 64) copied by two fixed-size copies that may overlap, inlined where a call
// of memcpy would cost more than a short row's copy.
void copy_short(char* dst, const char* src, std::int64_t n) {
  const auto two = [&]<std::size_t K>() {
    std::memcpy(dst, src, K);
    std::memcpy(dst + n - K, src + n - K, K);
  };
  if (n >= 32) two.template operator()<32>();
  else if (n >= 16) two.template operator()<16>();
  else if (n >= 8) two.template operator()<8>();
  else if (n >= 4) two.template operator()<4>();
  else std::memcpy(dst, src, static_cast<std::size_t>(n));
}
}  // namespace

void gather_rows_at(const char* src, std::int64_t s0, const std::int64_t* at, std::int64_t step, std::int64_t n0,
                    std::int64_t n1, std::int64_t w, char* dst) {
  const std::int64_t bytes = n0 * w;
  if (s0 == w && bytes <= 64) {
    for (std::int64_t j = 0; j < n1; ++j) copy_short(dst + j * bytes, src + at[j * step], bytes);
    return;
  }
  if (s0 == w) {
    for (std::int64_t j = 0; j < n1; ++j)
      std::memcpy(dst + j * bytes, src + at[j * step], static_cast<std::size_t>(bytes));
    return;
  }
  for (std::int64_t j = 0; j < n1; ++j) gather(src + at[j * step], s0, n0, w, dst + j * bytes);
}

void gather_rows(const char* src, std::int64_t s0, std::int64_t s1, std::int64_t n0, std::int64_t n1, std::int64_t w,
                 char* dst) {
  const std::int64_t bytes = n0 * w;
  if (s0 == w && bytes <= 64) {
    for (std::int64_t j = 0; j < n1; ++j) copy_short(dst + j * bytes, src + j * s1, bytes);
    return;
  }
  if (s0 == w) {  // unit-stride rows: one copy each
    for (std::int64_t j = 0; j < n1; ++j) std::memcpy(dst + j * bytes, src + j * s1, static_cast<std::size_t>(bytes));
    return;
  }
  for (std::int64_t j = 0; j < n1; ++j) gather(src + j * s1, s0, n0, w, dst + j * bytes);
}

std::size_t plan_gather(char* const* ptrs, const std::int64_t* s, const std::int64_t* w, std::size_t count,
                        char* const* buf, const char** in, gather_job* jobs) {
  std::size_t njobs = 0;
  std::uint64_t done = 0;  // operands already served by a channel group (count <= max_operands)
  gather_job* singles[2] = {nullptr, nullptr};  // the open batch of single channels, by width 4 / 8
  for (std::size_t k = 0; k < count; ++k) {
    if ((done >> k) & 1u) continue;
    const std::int64_t wk = w[k], sk = s[k];
    if (sk == wk) continue;  // read in place
    in[k] = buf[k];
    if (sk == 0) continue;  // a broadcast operand: its buffer holds the row's value
    if (sk != 3 * wk || (wk != 4 && wk != 8)) {
      jobs[njobs++] = {gather_job::kind::strided, 1, sk, wk, {ptrs[k]}, {buf[k]}};
      continue;
    }
    // Operands reading other channels of the same interleaved data (the same stride, at most
    // two elements apart): gathered in one pass over the shared vectors. Offsets are compared
    // as addresses. The vector loads stay in the span of the operand at the base (the lowest
    // channel); the scalar tail reads each channel's own elements.
    const auto at = [&](std::size_t j) { return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(ptrs[j])); };
    const auto near = [&](std::size_t j) {
      const std::int64_t d = at(j) - at(k);
      return !((done >> j) & 1u) && s[j] == sk && w[j] == wk && d >= -2 * wk && d <= 2 * wk && d % wk == 0;
    };
    std::int64_t lo = 0;
    for (std::size_t j = k + 1; j < count; ++j)
      if (near(j) && at(j) - at(k) < lo) lo = at(j) - at(k);
    gather_job g{gather_job::kind::channels, 0, sk, wk, {ptrs[k] + lo}, {nullptr, nullptr, nullptr, nullptr}};
    for (std::size_t j = k; j < count; ++j) {
      if (j != k && !near(j)) continue;
      const std::int64_t slot = (at(j) - at(k) - lo) / wk;
      if (slot > 2) continue;
      if (g.dst[slot] == nullptr) {
        g.dst[slot] = buf[j];
        g.count |= 1 << slot;
      }
      in[j] = g.dst[slot];  // the same channel read twice shares one buffer
      done |= std::uint64_t{1} << j;
    }
    if (g.count != 1) {
      jobs[njobs++] = g;
      continue;
    }
    // One channel of its data: read beside the other operands' single channels.
    gather_job*& b = singles[wk == 4 ? 0 : 1];
    if (b == nullptr || b->count == 4) {
      b = &jobs[njobs++];
      *b = {gather_job::kind::streams, 0, sk, wk, {}, {}};
    }
    b->src[b->count] = ptrs[k];
    b->dst[b->count] = buf[k];
    ++b->count;
  }
  return njobs;
}

void gather_jobs(const gather_job* jobs, std::size_t count, std::int64_t c, std::int64_t len, std::int64_t n) {
  for (std::size_t j = 0; j < count; ++j) {
    const gather_job& g = jobs[j];
    const std::int64_t at = c * g.stride;
    switch (g.how) {
      case gather_job::kind::strided: gather(g.src[0] + at, g.stride, len, g.w, g.dst[0]); break;
      case gather_job::kind::channels:
        if (g.w == 4) gather3_channels<4>(g.src[0] + at, len, n - c, static_cast<unsigned>(g.count), g.dst);
        else gather3_channels<8>(g.src[0] + at, len, n - c, static_cast<unsigned>(g.count), g.dst);
        break;
      case gather_job::kind::streams: {
        const char* src[4];
        for (int k = 0; k < g.count; ++k) src[k] = g.src[k] + at;
        if (g.w == 4) gather3_batch<4>(src, g.count, len, n - c, g.dst);
        else gather3_batch<8>(src, g.count, len, n - c, g.dst);
        break;
      }
    }
  }
}

void scatter(const char* src, std::int64_t n, std::int64_t w, char* dst, std::int64_t stride) {
  if (!with_width(w, [&]<std::int64_t W>() { scatter_w<W>(src, n, dst, stride); }))
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + i * w, static_cast<std::size_t>(w));
}

void transpose_in(const char* src, std::int64_t s0, std::int64_t w, char* dst, std::int64_t n0, std::int64_t n1) {
  // Element (i, j) at src + i * s0 + j * w goes to dst[j * n0 + i].
  switch (w) {
    case 4: return transpose_w<4, true>(src, s0, 4, dst, 4, n0 * 4, n0, n1);
    case 8: return transpose_w<8, true>(src, s0, 8, dst, 8, n0 * 8, n0, n1);
    default: return copy_block(src, s0, w, dst, w, n0 * w, n0, n1, w);
  }
}

void transpose_out(const char* buf, std::int64_t w, char* out, std::int64_t s0, std::int64_t n0, std::int64_t n1) {
  // buf[j * n0 + i] goes to element (i, j) at out + i * s0 + j * w.
  switch (w) {
    case 4: return transpose_w<4, false>(buf, 4, n0 * 4, out, s0, 4, n0, n1);
    case 8: return transpose_w<8, false>(buf, 8, n0 * 8, out, s0, 8, n0, n1);
    default: return copy_block(buf, w, n0 * w, out, s0, w, n0, n1, w);
  }
}
}  // namespace strata::detail
