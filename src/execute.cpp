// SPDX-License-Identifier: MIT
// The executor: walks a plan's rows with one odometer, splits the work over OpenMP threads
// above the grain, runs reductions as fixed-shape pairwise trees, and reports what a loop
// recorded in its per-call status.
module;
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include "parallel.hpp"
module strata.loop;

namespace strata::detail {
namespace {
std::atomic<int> threads_set{0};  // 0: not set, use OpenMP's maximum
}  // namespace

void set_thread_count(int n) {
  if (n < 1) throw error("set_num_threads: expected a positive number of threads, got " + std::to_string(n));
  threads_set.store(n, std::memory_order_relaxed);
}

int thread_count() {
  const int n = threads_set.load(std::memory_order_relaxed);
  return n > 0 ? n : std::max(1, max_threads());
}

void loop_status::raise() const {
  if (flags_.load(std::memory_order_relaxed) & zero_division_flag) throw error("ZeroDivisionError");
}

namespace {
void check_limits(const loop_plan& p) {
  if (static_cast<std::size_t>(p.nops) > max_operands || p.sizes.size() > max_operands)
    throw error("strata: an expression with more than 63 tensor leaves or 64 dims is not supported");
}

// The one odometer: walks a subset of a plan's dims (`dims`, innermost first), keeping every
// operand's pointer at the current index.
class odometer {
 public:
  odometer(const loop_plan& p, const std::int64_t* dims, std::size_t ndims)
      : p_(p), dims_(dims), ndims_(ndims), nops_(static_cast<std::size_t>(p.nops)) {}

  /// Positions at linear index `at` (mixed radix over the dims) from the pointers `from`.
  void seek(char* const* from, std::int64_t at) {
    std::copy(from, from + nops_, ptrs);
    for (std::size_t i = 0; i < ndims_; ++i) {
      const std::size_t d = dim(i);
      index_[i] = at % p_.sizes[d];
      at /= p_.sizes[d];
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] += index_[i] * p_.strides[d * nops_ + k];
    }
  }
  /// Steps to the next index (wrapping to zero after the last).
  void next() { carry(0); }
  /// Steps dim `from` of the walk to its next index, carrying into the dims outside it (the
  /// dims inside it at index 0: a whole block of them walked).
  void carry(std::size_t from) {
    for (std::size_t i = from; i < ndims_; ++i) {
      const std::size_t d = dim(i);
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] += p_.strides[d * nops_ + k];
      if (++index_[i] < p_.sizes[d]) return;
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] -= index_[i] * p_.strides[d * nops_ + k];
      index_[i] = 0;
    }
  }
  /// Steps m indices ahead, 1 <= m <= left_in_row(): along the innermost dim, then as next().
  void advance(std::int64_t m) {
    if (ndims_ > 0) {
      const std::size_t d = dim(0);
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] += (m - 1) * p_.strides[d * nops_ + k];
      index_[0] += m - 1;
    }
    next();
  }
  /// The index within the first m dims of the walk (mixed radix, the innermost fastest).
  std::int64_t linear(std::size_t m) const {
    std::int64_t at = 0;
    for (std::size_t i = m; i-- > 0;) at = at * p_.sizes[dim(i)] + index_[i];
    return at;
  }
  /// Indices left along the innermost dim before the next one carries (1 with no dims).
  std::int64_t left_in_row() const { return ndims_ == 0 ? 1 : p_.sizes[dim(0)] - index_[0]; }
  /// Number of indices the odometer walks.
  std::int64_t count() const {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < ndims_; ++i) n *= p_.sizes[dim(i)];
    return n;
  }

  char* ptrs[max_operands];

 private:
  std::size_t dim(std::size_t i) const { return static_cast<std::size_t>(dims_[i]); }
  const loop_plan& p_;
  const std::int64_t* dims_;
  std::size_t ndims_, nops_;
  std::int64_t index_[max_operands] = {};
};

// Dims 1..n-1 of a plan (the outer dims of an element-wise walk).
dim_vector outer_dims(const loop_plan& p, std::size_t from) {
  dim_vector d;
  for (std::size_t i = from; i < p.sizes.size(); ++i) d.push_back(static_cast<std::int64_t>(i));
  return d;
}

// The plan size (elements times operands) from which a plan is taken to be beyond the
// caches: tiles prefetch and rows are walked a few at a time. Below it the prefetches only
// cost issue slots and one row's streams are served from cache.
constexpr std::int64_t beyond_cache = std::int64_t{1} << 21;

// Rows out of cache are walked a few at a time, a piece of each in turn: one row at a time
// keeps two or three streams in flight (the output and an operand or two), and a single
// stream cannot reach the memory bandwidth of this Zen 4 core. Measured standalone (one
// thread, [4096, 4096] f32, out = col * row + c): one row at a time 8.0-8.6 ms; 4 rows by
// pieces of 64 elements 6.0 ms (a hand loop keeping 4 rows in registers: 6.1); by pieces of
// 512, 9.4 ms, worse than one row; 8 rows by 128, 7.3 ms. The pieces go to the tile kernel as
// runs of piece x rows tiles: one call a row per piece cost more than the streams gained.
constexpr std::int64_t interleave_streams = 12;

// Rows walked together (1: one at a time) for a plan whose rows are walked by a tile kernel.
std::int64_t interleaved_rows(const loop_plan& p) {
  const auto nops = static_cast<std::size_t>(p.nops);
  if (p.sizes.size() < 2 || p.numel * p.nops < beyond_cache || p.sizes[0] < 2 * piece) return 1;
  std::int64_t streams = 0;
  for (std::size_t k = 0; k < nops; ++k) {
    const std::int64_t s0 = std::abs(p.strides[k]), s1 = std::abs(p.strides[nops + k]);
    if ((s0 & (s0 - 1)) != 0 || s0 > 16) return 1;  // stride 3 and such: rows gathered, not read in place
    if (s0 != 0 && s1 != 0) ++streams;  // a new stretch of memory every row
  }
  return streams == 0 ? 1 : std::clamp<std::int64_t>(interleave_streams / streams, 1, piece_rows);
}

// Rows up to this long are computed as one row (flattens_rows) in runs of flat_run_rows or
// more along dim 1; where dim 1 is shorter, in runs across the outer dims of up to
// flat_table_rows rows (each operand's rows at offsets in a table) as long as the output
// continues; runs shorter still (a thread's share) go row by row.
constexpr std::int64_t flat_row = 48, flat_run_rows = 8, flat_table_rows = 256;

// True when a plan's rows are short and the output continues its row into the next along
// dim 1 (s1 = n0 * s0): a tile kernel then computes runs of rows as one row (flat_rows), each
// input read as one row when it continues too, staged once a run when it repeats its row (s1 =
// 0: w in x[N, 3] * w), and otherwise filled or gathered row by row into the run's chunks.
bool flattens_rows(const loop_plan& p) {
  if (p.sizes.size() < 2 || p.sizes[0] > flat_row) return false;
  return p.strides[static_cast<std::size_t>(p.nops)] == p.sizes[0] * p.strides[0];
}

// Elements [e0, e1) in the plan's order: partial first row, whole rows, partial last. With a
// tile kernel, whole rows go `together` at a time (interleaved_rows) when they are
// consecutive along dim 1: their whole pieces as one run of piece x together tiles, the rest of
// each row to fn; short rows that flattens_rows allows go as runs along dim 1, one flat tile each,
// or across the outer dims when dim 1 is short (the rows of 3 of x.unfold(2, 3, 1).unfold(3, 3,
// 1).permute(...) copied into a contiguous tensor).
void run_elements(const loop_plan& p, std::int64_t e0, std::int64_t e1, row_fn fn, tile_fn tfn, const void* ctx,
                  loop_status* st) {
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::int64_t n0 = p.sizes[0];
  const std::int64_t* s0 = p.strides.data();
  const dim_vector outer = outer_dims(p, 1);
  odometer od(p, outer.data(), outer.size());
  std::int64_t col = e0 % n0;
  od.seek(p.base.data(), e0 / n0);
  std::int64_t remaining = e1 - e0;
  const std::int64_t together = tfn ? interleaved_rows(p) : 1;
  std::int64_t step[max_operands];
  for (std::size_t k = 0; k < nops; ++k) step[k] = piece * s0[k];
  const tile_span sp{s0, s0 + nops, step, n0 / piece, piece, together, p.nops, false};
  const std::int64_t done = sp.count * piece;  // elements of a row in the run
  tile_span flat{s0, s0 + nops, step, 1, n0, 0, p.nops, false, true};
  const bool flat_ok = tfn && flattens_rows(p);
  // Row offsets of the short rows walked across the outer dims, nops a row (one walk's rows in
  // `table`, a group's in `group_table`, below).
  constexpr std::size_t table_size = 4096;
  const bool across = flat_ok && p.sizes.size() > 2 && p.sizes[1] < flat_run_rows &&
                      nops * static_cast<std::size_t>(flat_table_rows) <= table_size;
  // On the heap, and only when the walk across dims uses them: this frame stays small for the
  // rows run (and staged) under it.
  const std::unique_ptr<std::int64_t[]> tables(across ? new std::int64_t[2 * table_size] : nullptr);
  std::int64_t* const table = tables.get();
  std::int64_t* const group_table = across ? table + table_size : nullptr;
  // Where the output continues across dims 1..m too, the rows of those dims lie at the same
  // offsets from every index of the dims outside them (the [channels, 3, 3] window of each
  // output row of an im2col copy): their table is built once, and each block of them aligned
  // on dim m + 1 is one span.
  std::size_t m = 0;
  std::int64_t group = 1;
  if (across) {
    for (std::size_t d = 1; d < p.sizes.size(); ++d) {
      const auto rows = static_cast<std::size_t>(group * p.sizes[d]);
      if (p.strides[d * nops] != n0 * group * s0[0] || rows * nops > table_size) break;
      group *= p.sizes[d];
      m = d;
    }
    if (m < 2 || group < flat_run_rows) m = 0;
    if (m != 0) {
      odometer g(p, outer.data(), m);
      g.seek(p.base.data(), 0);
      for (std::int64_t r = 0; r < group; ++r, g.next())
        for (std::size_t k = 0; k < nops; ++k) group_table[static_cast<std::size_t>(r) * nops + k] = g.ptrs[k] - p.base[k];
    }
  }
  char* ptrs[max_operands];
  for (;;) {
    if (m != 0 && col == 0 && remaining >= group * n0 && od.linear(m) == 0) {
      tile_span rows_span = flat;
      rows_span.n1 = group;
      rows_span.rows_at = group_table;
      tfn(ctx, od.ptrs, rows_span, st);
      remaining -= group * n0;
      if (remaining == 0) return;
      od.carry(m);
      continue;
    }
    const std::int64_t run = flat_ok && col == 0 ? std::min(od.left_in_row(), remaining / n0) : 0;
    if (run >= flat_run_rows) {
      flat.n1 = run;
      tfn(ctx, od.ptrs, flat, st);
      remaining -= flat.n1 * n0;
      if (remaining == 0) return;
      od.advance(flat.n1);
      continue;
    }
    if (across && col == 0 && remaining >= flat_run_rows * n0) {
      // Rows from here while the output continues, each operand's offsets in the table.
      char* first[max_operands];
      std::copy(od.ptrs, od.ptrs + nops, first);
      const std::int64_t most = std::min({flat_table_rows, remaining / n0, m != 0 ? group - od.linear(m) : remaining});
      std::int64_t rows = 0;
      for (; rows < most && od.ptrs[0] == first[0] + rows * n0 * s0[0]; ++rows, od.next())
        for (std::size_t k = 0; k < nops; ++k) table[static_cast<std::size_t>(rows) * nops + k] = od.ptrs[k] - first[k];
      if (rows >= flat_run_rows) {
        tile_span rows_span = flat;
        rows_span.n1 = rows;
        rows_span.rows_at = table;
        tfn(ctx, first, rows_span, st);
      } else {
        for (std::int64_t r = 0; r < rows; ++r) {
          for (std::size_t k = 0; k < nops; ++k) ptrs[k] = first[k] + table[static_cast<std::size_t>(r) * nops + k];
          fn(ctx, ptrs, s0, n0, st);
        }
      }
      remaining -= rows * n0;
      if (remaining == 0) return;
      continue;
    }
    if (col == 0 && together > 1 && remaining >= together * n0 && od.left_in_row() >= together) {
      tfn(ctx, od.ptrs, sp, st);
      for (std::int64_t q = 0; q < together; ++q, od.next()) {
        if (done == n0) continue;
        for (std::size_t k = 0; k < nops; ++k) ptrs[k] = od.ptrs[k] + done * s0[k];
        fn(ctx, ptrs, s0, n0 - done, st);
      }
      remaining -= together * n0;
      if (remaining == 0) return;
      continue;
    }
    const std::int64_t len = std::min(n0 - col, remaining);
    for (std::size_t k = 0; k < nops; ++k) ptrs[k] = od.ptrs[k] + col * s0[k];
    fn(ctx, ptrs, s0, len, st);
    remaining -= len;
    if (remaining == 0) return;
    col = 0;
    od.next();
  }
}

// Tiles per side of a block: tiles are walked block by block (256 x 256 elements), so that
// the rows a tile starts of every operand are continued by its neighbours while they are still
// in L2. A band of whole rows (the walk before) ran W5 at 0.55x of a blocked hand loop.
constexpr std::int64_t block_tiles = 256 / tile;
constexpr std::int64_t block_rows = 256 / tile_rows;

// The place of a tile in its plane of dims 0 and 1, walked block by block: a row of blocks
// (h tile rows), a block in it (w tiles wide), a tile in the block.
class tile_walk {
 public:
  tile_walk(std::int64_t tiles0, std::int64_t tiles1, std::int64_t q) : tiles0_(tiles0), tiles1_(tiles1) {
    brow_ = q / (block_rows * tiles0);
    h_ = std::min(block_rows, tiles1 - brow_ * block_rows);
    q -= brow_ * block_rows * tiles0;
    bcol_ = q / (h_ * block_tiles);
    w_ = std::min(block_tiles, tiles0 - bcol_ * block_tiles);
    q -= bcol_ * h_ * block_tiles;
    ti_ = q % w_;
    tj_ = q / w_;
  }
  /// The tile's first index along dims 0 and 1.
  std::int64_t i0() const { return (bcol_ * block_tiles + ti_) * tile; }
  std::int64_t j0() const { return (brow_ * block_rows + tj_) * tile_rows; }
  /// Whole tiles from this one to the end of its row in the block (dim 0 of size n0).
  std::int64_t left_in_run(std::int64_t n0) const {
    const std::int64_t end = std::min((bcol_ * block_tiles + w_) * tile, n0 / tile * tile);
    return std::max<std::int64_t>(1, end / tile - (bcol_ * block_tiles + ti_));
  }
  /// Steps to the next tile; true when the walk wraps to the plane's first tile.
  bool next() {
    if (++ti_ < w_) return false;
    ti_ = 0;
    if (++tj_ < h_) return false;
    tj_ = 0;
    if (++bcol_ * block_tiles < tiles0_) {
      w_ = std::min(block_tiles, tiles0_ - bcol_ * block_tiles);
      return false;
    }
    bcol_ = 0;
    w_ = std::min(block_tiles, tiles0_);
    if (++brow_ * block_rows < tiles1_) {
      h_ = std::min(block_rows, tiles1_ - brow_ * block_rows);
      return false;
    }
    brow_ = 0;
    h_ = std::min(block_rows, tiles1_);
    return true;
  }

 private:
  std::int64_t tiles0_, tiles1_;
  std::int64_t brow_, h_, bcol_, w_, ti_, tj_;
};

// Tiles [t0, t1) of a tiled plan, handed to tfn in runs. Tiles are numbered block by block
// (dim 0's blocks fastest, dim 0's tiles fastest inside a block: a run is a block's row of
// whole tiles), then the outer dims; but when dim 2 is short-strided in every operand
// (x.permute({2, 1, 0}) + y: a tile then continues the rows of the one before) it is numbered
// fastest, and a run is one tile's place along dim 2. Without tfn, each tile's rows go to fn.
void run_tiles(const loop_plan& p, std::int64_t t0, std::int64_t t1, tile_fn tfn, row_fn fn, const void* ctx,
               loop_status* st) {
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::int64_t tiles0 = (p.sizes[0] + tile - 1) / tile;
  const std::int64_t tiles1 = (p.sizes[1] + tile_rows - 1) / tile_rows;
  const std::int64_t plane = tiles0 * tiles1;
  const std::int64_t* s0 = p.strides.data();
  const std::int64_t* s1 = s0 + nops;
  bool deep = p.sizes.size() > 2;
  for (std::size_t k = 0; deep && k < nops; ++k) deep = std::abs(p.strides[2 * nops + k]) <= 4096;
  const std::int64_t n2 = deep ? p.sizes[2] : 1;
  const dim_vector outer = outer_dims(p, deep ? 3 : 2);
  odometer od(p, outer.data(), outer.size());
  od.seek(p.base.data(), t0 / n2 / plane);
  tile_walk at(tiles0, tiles1, t0 / n2 % plane);
  std::int64_t i2 = t0 % n2;
  std::int64_t step[max_operands];
  for (std::size_t k = 0; k < nops; ++k) step[k] = deep ? p.strides[2 * nops + k] : tile * s0[k];
  tile_span sp{s0, s1, step, 0, 0, 0, p.nops, p.numel * p.nops >= beyond_cache};
  char* ptrs[max_operands];
  for (std::int64_t t = t0; t < t1;) {
    const std::int64_t i0 = at.i0(), j0 = at.j0();
    sp.n0 = std::min(tile, p.sizes[0] - i0);
    sp.n1 = std::min(tile_rows, p.sizes[1] - j0);
    // Whole tiles only in a run along dim 0 (a partial last tile runs alone).
    sp.count = deep ? std::min(n2 - i2, t1 - t) : sp.n0 < tile ? 1 : std::min(at.left_in_run(p.sizes[0]), t1 - t);
    for (std::size_t k = 0; k < nops; ++k) ptrs[k] = od.ptrs[k] + i0 * s0[k] + j0 * s1[k] + i2 * step[k];  // i2 = 0 unless deep
    if (tfn) tfn(ctx, ptrs, sp, st);
    else run_tile_rows(fn, ctx, ptrs, sp, st);
    t += sp.count;
    if (deep) {
      i2 += sp.count;
      if (i2 < n2) continue;
      i2 = 0;
      if (at.next()) od.next();
    } else {
      for (std::int64_t c = 0; c < sp.count; ++c)
        if (at.next()) od.next();
    }
  }
}

}  // namespace

void prefetch_tile(char* const* ptrs, const tile_span& sp, std::int64_t c) {
  // Two tiles ahead, into L2 (prefetcht1): into L1, the 16 rows of a tile (in one set when
  // they lie a multiple of 4 KiB apart, as in x.permute({2, 1, 0})) evict each other before
  // use. Measured on Zen 4, one thread: a.t() + b of [4096, 4096] f32 13.3 ms prefetching
  // into L1, 11.2-11.9 ms into L2; x.permute({2, 1, 0}) + y of [64, 512, 512] 27.6 / 30.0 ms
  // (L1 / none), 14.4-16.3 ms into L2.
  constexpr std::int64_t distance = 2;
  if (!sp.prefetch || c + distance >= sp.count) return;
  for (std::int64_t k = 0; k < sp.nops; ++k) {
    const char* q = ptrs[k] + (c + distance) * sp.step[k];
    const bool rows1 = std::abs(sp.s0[k]) <= std::abs(sp.s1[k]);  // the operand's rows step along dim 1
    const std::int64_t lines = rows1 ? sp.n1 : sp.n0, stride = rows1 ? sp.s1[k] : sp.s0[k];
    for (std::int64_t r = 0; r < lines; ++r) __builtin_prefetch(q + r * stride, 0, 2);
  }
}

void run_tile_rows(row_fn fn, const void* ctx, char* const* ptrs, const tile_span& sp, loop_status* st) {
  const auto nops = static_cast<std::size_t>(sp.nops);
  char* rows[max_operands];
  bool along0 = true;  // each tile continues the one before along dim 0
  for (std::size_t k = 0; along0 && k < nops; ++k) along0 = sp.step[k] == sp.n0 * sp.s0[k];
  if (along0) {  // then a row of the run is one row of count * n0 elements
    for (std::int64_t j = 0; j < sp.n1; ++j) {
      for (std::size_t k = 0; k < nops; ++k) rows[k] = ptrs[k] + j * sp.s1[k];
      fn(ctx, rows, sp.s0, sp.count * sp.n0, st);
    }
    return;
  }
  for (std::int64_t c = 0; c < sp.count; ++c)
    for (std::int64_t j = 0; j < sp.n1; ++j) {
      for (std::size_t k = 0; k < nops; ++k) rows[k] = ptrs[k] + c * sp.step[k] + j * sp.s1[k];
      fn(ctx, rows, sp.s0, sp.n0, st);
    }
}

namespace {
// How many threads a loop of numel elements uses: one below two grains.
std::int64_t threads_for(std::int64_t numel) {
  return numel < 2 * grain ? 1 : std::min<std::int64_t>(thread_count(), numel / grain);
}

// Runs body(c) for c in [0, n) on `threads` threads (inline for one).
template <class Body>
void parallel_for(std::int64_t n, std::int64_t threads, Body body) {
  if (threads <= 1 || n <= 1) {
    for (std::int64_t c = 0; c < n; ++c) body(c);
    return;
  }
  parallel_run(n, static_cast<int>(std::min(threads, n)),
               [](void* ctx, std::int64_t c) { (*static_cast<Body*>(ctx))(c); }, &body);
}
}  // namespace

void execute(const loop_plan& p, row_fn fn, tile_fn tfn, const void* ctx, finish_fn finish) {
  if (p.numel == 0) return;
  check_limits(p);
  loop_status status;
  const std::int64_t chunks = threads_for(p.numel);
  std::int64_t units = p.numel;  // elements, or tiles for a tiled plan
  if (p.tiled) {
    units = (p.sizes[0] + tile - 1) / tile * ((p.sizes[1] + tile_rows - 1) / tile_rows);
    for (std::size_t d = 2; d < p.sizes.size(); ++d) units *= p.sizes[d];
  }
  auto run = [&](std::int64_t u0, std::int64_t u1) {
    if (p.tiled) run_tiles(p, u0, u1, tfn, fn, ctx, &status);
    else run_elements(p, u0, u1, fn, tfn, ctx, &status);
    if (finish) finish();
  };
  if (chunks <= 1 || units < chunks) {
    run(0, units);
  } else {
    parallel_for(chunks, chunks, [&](std::int64_t c) { run(units * c / chunks, units * (c + 1) / chunks); });
  }
  status.raise();
}

// ---- reductions ----
namespace {
/// Raw, 64-byte aligned bytes for accumulators (constructed by the kernel's init).
class scratch {
 public:
  explicit scratch(std::size_t nbytes)
      : p_(static_cast<std::byte*>(::operator new(std::max<std::size_t>(nbytes, 64), std::align_val_t{64}))) {}
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() { ::operator delete(p_, std::align_val_t{64}); }
  std::byte* get() const noexcept { return p_; }

 private:
  std::byte* p_;
};

// True when plan dim d is reduced: the output (operand 0) stays put along it.
bool reduced_dim(const loop_plan& p, std::size_t d) {
  return p.strides[d * static_cast<std::size_t>(p.nops)] == 0 && p.sizes[d] != 1;
}
// The rows per lane period (short_period) when dim 0's short rows along the reduced dim r are
// computed as one run, as the kernel's lanes need (back to back in every input, or as
// runs_as_one allows for a kernel that computes runs); 0 otherwise.
std::int64_t lane_period(const loop_plan& p, std::size_t r, const reduce_kernel& kernel) {
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::int64_t k = short_period(p.sizes[0], kernel.acc_size);
  const std::int64_t* step = &p.strides[r * nops];
  const bool as_one = back_to_back(p.strides.data(), step, nops, p.sizes[0]) ||
                      (kernel.computes_runs && runs_as_one(p.strides.data(), step, nops, p.sizes[0]));
  return k > 0 && as_one ? k : 0;
}

class reduction {
 public:
  reduction(const loop_plan& p, const reduce_kernel& k, loop_status* st)
      : p_(p), k_(k), st_(st), nops_(static_cast<std::size_t>(p.nops)), w_(k.acc_size) {
    for (std::size_t d = 0; d < p.sizes.size(); ++d)
      (reduced_dim(p, d) ? red_ : kept_).push_back(static_cast<std::int64_t>(d));
    const std::int64_t period = leaf_period();
    periodic_leaves_ = period > 0;
    leaf_rows_ = periodic_leaves_ ? reduce_rows * period : reduce_rows;
  }

  void run() {
    if (!red_.empty() && red_[0] == 0) inner();
    else outer();
  }

 private:
  std::byte* at(std::byte* base, std::int64_t i) const { return base + i * w_; }

  // Combines parts[g0..g1) (each len accumulators, `stride` bytes apart) by halving, into
  // parts[g0]: the one tree shape of every sum, so the same leaves always give the same bits.
  void combine_tree(std::byte* parts, std::int64_t g0, std::int64_t g1, std::int64_t len, std::int64_t stride) const {
    if (g1 - g0 == 1) return;
    const std::int64_t gm = g0 + (g1 - g0) / 2;
    combine_tree(parts, g0, gm, len, stride);
    combine_tree(parts, gm, g1, len, stride);
    k_.combine(parts + g0 * stride, parts + gm * stride, len);
  }

  // The top of a tree over nblocks leaves, split into parallel_split groups whose bounds
  // follow the halving of a pairwise tree (the same for any thread count), so combining the
  // groups pairwise in order reproduces one tree shape whatever runs where.
  static std::int64_t split_bounds(std::int64_t nblocks, std::int64_t* bounds) {
    const std::int64_t groups = std::min<std::int64_t>(parallel_split, nblocks);
    auto split = [&](auto&& self, std::int64_t lo, std::int64_t hi, std::int64_t g0, std::int64_t g1) -> void {
      if (g1 - g0 == 1) { bounds[g0] = lo; return; }
      const std::int64_t gm = g0 + (g1 - g0) / 2;
      const std::int64_t mid = lo + (hi - lo) / 2;
      self(self, lo, mid, g0, gm);
      self(self, mid, hi, gm, g1);
    };
    split(split, 0, nblocks, 0, groups);
    bounds[groups] = nblocks;
    return groups;
  }

  // ---- inner reductions (plan dim 0 is reduced): one value per output ----
  std::int64_t rows_per_block() const { return std::max<std::int64_t>(1, reduce_block / p_.sizes[0]); }
  // Blocks per row when a block is a piece of one row (dim 0 of at least reduce_block).
  std::int64_t blocks_per_row() const { return (p_.sizes[0] + reduce_block - 1) / reduce_block; }
  std::int64_t inner_blocks(std::int64_t rows) const {
    const std::int64_t n0 = p_.sizes[0];
    if (n0 >= reduce_block) return rows * blocks_per_row();
    return (rows + rows_per_block() - 1) / rows_per_block();
  }
  // Block b of the output at base into acc (initialised here).
  void inner_block(char* const* base, std::int64_t b, std::byte* acc) const {
    const std::int64_t n0 = p_.sizes[0];
    k_.init(acc, 1);
    odometer rows(p_, red_.data() + 1, red_.size() - 1);
    if (n0 >= reduce_block) {  // a block is a piece of one row
      const std::int64_t per_row = blocks_per_row();
      rows.seek(base, b / per_row);
      const std::int64_t start = b % per_row * reduce_block;
      for (std::size_t k = 1; k < nops_; ++k) rows.ptrs[k] += start * p_.strides[k];
      k_.inner(k_.ctx, rows.ptrs, p_.strides.data(), std::min(reduce_block, n0 - start), acc, st_);
    } else {  // a block is several whole rows
      const std::int64_t r0 = b * rows_per_block(), r1 = std::min(rows.count(), r0 + rows_per_block());
      rows.seek(base, r0);
      for (std::int64_t r = r0; r < r1; ++r, rows.next()) k_.inner(k_.ctx, rows.ptrs, p_.strides.data(), n0, acc, st_);
    }
  }
  // Pairwise over blocks [b0, b1) into acc; tmp holds one accumulator per tree level.
  void inner_tree(char* const* base, std::int64_t b0, std::int64_t b1, std::byte* acc, std::byte* tmp) const {
    if (b1 - b0 <= leaf_batch && pieces_of_one_row(b0, b1)) return batched_tree(base, b0, b1, acc);
    if (b1 - b0 == 1) return inner_block(base, b0, acc);
    const std::int64_t mid = b0 + (b1 - b0) / 2;
    inner_tree(base, b0, mid, acc, tmp + w_);
    inner_tree(base, mid, b1, tmp, tmp + w_);
    k_.combine(acc, tmp, 1);
  }
  // Up to leaf_batch blocks that are consecutive pieces of one long row (a flat sum) have
  // their leaves computed by one rows() call and then combined in inner_tree's shape: the
  // same bits, without a seek and an indirect call per 4096 elements.
  static constexpr std::int64_t leaf_batch = 256;
  bool pieces_of_one_row(std::int64_t b0, std::int64_t b1) const {
    const std::int64_t per_row = blocks_per_row();
    return p_.sizes[0] >= reduce_block && b1 - b0 > 1 && b0 / per_row == (b1 - 1) / per_row;
  }
  void batched_tree(char* const* base, std::int64_t b0, std::int64_t b1, std::byte* acc) const {
    const std::int64_t n0 = p_.sizes[0], per_row = blocks_per_row();
    alignas(64) std::byte leaves[leaf_batch * 64];
    odometer rows(p_, red_.data() + 1, red_.size() - 1);
    rows.seek(base, b0 / per_row);
    const std::int64_t first = b0 % per_row * reduce_block;  // element where block b0 starts
    // The row's last block may be short: it goes to inner() on its own.
    const bool short_tail = b1 % per_row == 0 && n0 % reduce_block != 0;
    const std::int64_t full = b1 - b0 - (short_tail ? 1 : 0);
    char* ptrs[max_operands];
    std::int64_t step[max_operands];
    for (std::size_t k = 1; k < nops_; ++k) {
      ptrs[k] = rows.ptrs[k] + first * p_.strides[k];
      step[k] = reduce_block * p_.strides[k];
    }
    ptrs[0] = reinterpret_cast<char*>(leaves);
    step[0] = w_;
    if (full > 0) k_.rows(k_.ctx, ptrs, p_.strides.data(), reduce_block, full, step, st_, false);
    if (short_tail) {
      std::byte* last = at(leaves, full);
      k_.init(last, 1);
      for (std::size_t k = 1; k < nops_; ++k) ptrs[k] += full * step[k];
      k_.inner(k_.ctx, ptrs, p_.strides.data(), n0 - first - full * reduce_block, last, st_);
    }
    combine_tree(leaves, 0, b1 - b0, 1, w_);
    k_.init(acc, 1);
    k_.store(reinterpret_cast<char*>(acc), 0, leaves, 1);
  }
  // One output at base: its blocks' tree, the top split into groups (run in parallel when asked).
  void inner_output(char* const* base, std::int64_t nblocks, std::int64_t threads) const {
    std::int64_t bounds[parallel_split + 1];
    const std::int64_t groups = split_bounds(nblocks, bounds);
    alignas(64) std::byte parts[parallel_split * 64];
    parallel_for(groups, threads, [&](std::int64_t g) {
      alignas(64) std::byte tmp[66 * 64];  // one accumulator per tree level
      inner_tree(base, bounds[g], bounds[g + 1], at(parts, g), tmp);
    });
    combine_tree(parts, 0, groups, 1, w_);
    k_.store(base[0], 0, parts, 1);
  }

  void inner() {
    const std::int64_t threads = threads_for(p_.numel);
    odometer outputs(p_, kept_.data(), kept_.size());
    const std::int64_t noutputs = outputs.count();
    odometer red_rows(p_, red_.data() + 1, red_.size() - 1);
    const std::int64_t nblocks = inner_blocks(red_rows.count());
    if (red_.size() == 1 && nblocks == 1) {
      // One row per output (x.amax(-1)): runs of outputs along the innermost kept dim go to
      // the kernel in one call. The same bits as the tree's single leaf.
      const std::int64_t pieces = std::min<std::int64_t>(threads, noutputs);
      parallel_for(pieces, threads, [&](std::int64_t c) {
        output_runs(p_.base.data(), noutputs * c / pieces, noutputs * (c + 1) / pieces,
                    [&](char* const* ptrs, const std::int64_t* step, std::int64_t, std::int64_t len) {
                      k_.rows(k_.ctx, ptrs, p_.strides.data(), p_.sizes[0], len, step, st_, false);
                    });
      });
      return;
    }
    // When some reduced dims lie outside kept ones in memory (g[b, j, :] summed over b and
    // the last dim), visiting outputs one by one jumps across memory. Then compute every
    // (block, output) partial in memory order first and run each output's tree over them:
    // the same partials and the same trees, so the same bits.
    const bool outside = !kept_.empty() && red_.size() > 1 && red_.back() > kept_.back();
    if (outside && nblocks > 1 && noutputs * nblocks <= (std::int64_t{1} << 22)) {
      scratch partial(static_cast<std::size_t>(noutputs * nblocks * w_));
      parallel_for(nblocks, threads, [&](std::int64_t b) {
        std::byte* part = at(partial.get(), b * noutputs);
        if (p_.sizes[0] >= reduce_block) {  // a block is a piece of one row (per output)
          odometer od(p_, kept_.data(), kept_.size());
          od.seek(p_.base.data(), 0);
          for (std::int64_t o = 0; o < noutputs; ++o, od.next()) inner_block(od.ptrs, b, at(part, o));
          return;
        }
        // A block is several whole rows: row by row, every output's row added to its partial
        // (inner_block's order of combines), so memory is read in order.
        k_.init(part, noutputs);
        odometer rows(p_, red_.data() + 1, red_.size() - 1);
        const std::int64_t r0 = b * rows_per_block(), r1 = std::min(rows.count(), r0 + rows_per_block());
        rows.seek(p_.base.data(), r0);
        for (std::int64_t r = r0; r < r1; ++r, rows.next())
          output_runs(rows.ptrs, 0, noutputs, [&](char* const* ptrs, const std::int64_t* step, std::int64_t o,
                                                  std::int64_t len) {
            char* p[max_operands];
            std::int64_t to[max_operands];
            std::copy(ptrs, ptrs + nops_, p);
            std::copy(step, step + nops_, to);
            p[0] = reinterpret_cast<char*>(at(part, o));
            to[0] = w_;
            k_.rows(k_.ctx, p, p_.strides.data(), p_.sizes[0], len, to, st_, true);
          });
      });
      parallel_for(noutputs, threads, [&](std::int64_t o) {
        odometer od(p_, kept_.data(), kept_.size());
        od.seek(p_.base.data(), o);
        partial_tree(partial.get(), o, noutputs, nblocks, od.ptrs[0]);
      });
      return;
    }
    if (threads > 1 && noutputs >= threads) {
      parallel_for(threads, threads, [&](std::int64_t c) {
        odometer od(p_, kept_.data(), kept_.size());
        const std::int64_t o0 = noutputs * c / threads, o1 = noutputs * (c + 1) / threads;
        od.seek(p_.base.data(), o0);
        for (std::int64_t o = o0; o < o1; ++o, od.next()) inner_output(od.ptrs, nblocks, 1);
      });
    } else {
      outputs.seek(p_.base.data(), 0);
      for (std::int64_t o = 0; o < noutputs; ++o, outputs.next()) inner_output(outputs.ptrs, nblocks, threads);
    }
  }
  // Calls fn(ptrs, step, o, len) for the outputs [o0, o1) of the plan at base in runs along
  // the innermost kept dim: output o + i's operands at ptrs[k] + i * step[k] for i < len.
  template <class Fn>
  void output_runs(char* const* base, std::int64_t o0, std::int64_t o1, Fn fn) const {
    const std::int64_t run = kept_.empty() ? 1 : p_.sizes[static_cast<std::size_t>(kept_[0])];
    const std::int64_t* step = kept_.empty() ? p_.strides.data() : &p_.strides[static_cast<std::size_t>(kept_[0]) * nops_];
    odometer od(p_, kept_.empty() ? nullptr : kept_.data() + 1, kept_.empty() ? 0 : kept_.size() - 1);
    for (std::int64_t o = o0; o < o1;) {
      const std::int64_t r = o / run, col = o % run, len = std::min(run - col, o1 - o);
      od.seek(base, r);
      char* ptrs[max_operands];
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] = od.ptrs[k] + col * step[k];
      fn(ptrs, step, o, len);
      o += len;
    }
  }
  // Output o's tree over precomputed block partials: the same shape as inner_output's.
  void partial_tree(std::byte* partial, std::int64_t o, std::int64_t noutputs, std::int64_t nblocks,
                    char* out) const {
    std::int64_t bounds[parallel_split + 1];
    const std::int64_t groups = split_bounds(nblocks, bounds);
    alignas(64) std::byte parts[parallel_split * 64], tmp[66 * 64];
    for (std::int64_t g = 0; g < groups; ++g) leaf_tree(partial, o, noutputs, bounds[g], bounds[g + 1], at(parts, g), tmp);
    combine_tree(parts, 0, groups, 1, w_);
    k_.store(out, 0, parts, 1);
  }
  void leaf_tree(std::byte* partial, std::int64_t o, std::int64_t noutputs, std::int64_t b0, std::int64_t b1,
                 std::byte* acc, std::byte* tmp) const {
    if (b1 - b0 == 1) {  // a copy of the partial
      k_.init(acc, 1);
      k_.store(reinterpret_cast<char*>(acc), 0, at(partial, b0 * noutputs + o), 1);
      return;
    }
    const std::int64_t mid = b0 + (b1 - b0) / 2;
    leaf_tree(partial, o, noutputs, b0, mid, acc, tmp + w_);
    leaf_tree(partial, o, noutputs, mid, b1, tmp, tmp + w_);
    k_.combine(acc, tmp, 1);
  }

  // ---- outer reductions (plan dim 0 is kept): a segment of outputs at a time ----
  // Distance between tree-level buffers: a segment (of this plan: at most dim 0's size)
  // rounded up to cache lines plus one line, so that every buffer is 64-byte aligned (a vector
  // of accumulators never straddles two lines) and buffers used together never sit a multiple
  // of 4 KiB apart (4K aliasing stalls loads on stores). Sized by the plan's segment, the
  // scratch of narrow outputs stays small (W7b's 1024 outputs: 0.7 MB, not 2.8 MB of fresh
  // pages a call).
  std::int64_t level_bytes() const {
    const std::int64_t b = (std::min(outer_segment, p_.sizes[0]) * w_ + 63) / 64 * 64 + 64;
    return b % 4096 == 0 ? b + 64 : b;
  }

  // Rows per tree leaf are reduce_rows, or when the kernel reduces short rows back to back in
  // lanes of k rows each (short_period) and the innermost reduced dim holds a whole such leaf,
  // k times as many (the same serial combines per lane): that k, else 0.
  std::int64_t leaf_period() const {
    if (red_.empty()) return 0;
    const auto r0 = static_cast<std::size_t>(red_[0]);
    const std::int64_t k = lane_period(p_, r0, k_);
    return k > 0 && p_.sizes[r0] >= reduce_rows * k ? k : 0;
  }
  void outer_block(char* const* base, std::int64_t b, std::byte* acc, std::int64_t len) const {
    k_.init(acc, len);
    odometer rows(p_, red_.data(), red_.size());
    const std::int64_t r0 = b * leaf_rows_, r1 = std::min(rows.count(), r0 + leaf_rows_);
    rows.seek(base, r0);
    // Runs of rows along the innermost reduced dim go to the kernel in one call, which adds
    // them to the accumulators one at a time (rows of up to 4 KiB of accumulators) or
    // outer_group at a time summed in registers first. The runs depend on the block alone:
    // the same bits for any thread count.
    static constexpr std::int64_t no_step[max_operands] = {};
    const std::int64_t* row_step = red_.empty() ? no_step : &p_.strides[static_cast<std::size_t>(red_[0]) * nops_];
    for (std::int64_t r = r0; r < r1;) {
      const std::int64_t m = std::min(r1 - r, rows.left_in_row());
      k_.outer(k_.ctx, rows.ptrs, p_.strides.data(), len, acc, st_, m, row_step);
      rows.advance(m);
      r += m;
    }
  }
  void outer_tree(char* const* base, std::int64_t b0, std::int64_t b1, std::byte* res, std::int64_t len,
                  std::byte* levels) const {
    if (periodic_leaves_ && (b1 - b0) * len * w_ <= leaf_bytes && batched_outer(base, b0, b1, res, len)) return;
    if (b1 - b0 == 1) return outer_block(base, b0, res, len);
    const std::int64_t mid = b0 + (b1 - b0) / 2;
    outer_tree(base, b0, mid, res, len, levels + level_bytes());
    outer_tree(base, mid, b1, levels, len, levels + level_bytes());
    k_.combine(res, levels, len);
  }

  // Leaves of short rows read as one stream of periods (periodic_leaves_) that lie in one run
  // along the innermost reduced dim are computed by one leaves() call into a buffer, then
  // combined in outer_tree's shape: the same bits, without a seek and an indirect call per
  // leaf (a leaf of [N, 4] doubles is 32 KiB), and a lone leaf in place without periodic()'s
  // lane buffer. False, doing nothing, when the rows cross runs.
  static constexpr std::int64_t leaf_bytes = 16384;
  bool batched_outer(char* const* base, std::int64_t b0, std::int64_t b1, std::byte* res, std::int64_t len) const {
    odometer rows(p_, red_.data(), red_.size());
    const std::int64_t r0 = b0 * leaf_rows_, r1 = std::min(rows.count(), b1 * leaf_rows_);
    rows.seek(base, r0);
    if (rows.left_in_row() < r1 - r0) return false;
    alignas(64) std::byte leaves[leaf_bytes];
    const std::int64_t stride = len * w_;
    k_.leaves(k_.ctx, rows.ptrs, p_.strides.data(), len, st_, r1 - r0,
              &p_.strides[static_cast<std::size_t>(red_[0]) * nops_], leaf_rows_, reinterpret_cast<char*>(leaves), stride);
    combine_tree(leaves, 0, b1 - b0, len, stride);
    k_.init(res, len);
    k_.store(reinterpret_cast<char*>(res), w_, leaves, len);
    return true;
  }

  void outer() {
    const std::int64_t threads = threads_for(p_.numel);
    const std::int64_t n0 = p_.sizes[0];
    const std::int64_t segs = (n0 + outer_segment - 1) / outer_segment;
    odometer kept_outer(p_, kept_.data() + 1, kept_.size() - 1);
    const std::int64_t tasks = kept_outer.count() * segs;
    odometer rows(p_, red_.data(), red_.size());
    const std::int64_t nblocks = std::max<std::int64_t>(1, (rows.count() + leaf_rows_ - 1) / leaf_rows_);
    const bool empty = rows.count() == 0;
    // One segment per tree level per group.
    const std::int64_t per_group = level_bytes() * (2 + std::bit_width(static_cast<std::uint64_t>(nblocks + 1)));
    auto one_task = [&](std::int64_t t, std::byte* parts, std::int64_t tree_threads) {
      odometer od(p_, kept_.data() + 1, kept_.size() - 1);
      od.seek(p_.base.data(), t / segs);
      const std::int64_t start = t % segs * outer_segment;
      const std::int64_t len = std::min(outer_segment, n0 - start);
      char* ptrs[max_operands];
      for (std::size_t k = 0; k < nops_; ++k) ptrs[k] = od.ptrs[k] + start * p_.strides[k];
      std::int64_t bounds[parallel_split + 1];
      const std::int64_t groups = split_bounds(nblocks, bounds);
      parallel_for(groups, tree_threads, [&](std::int64_t g) {
        std::byte* res = parts + g * per_group;
        if (empty) k_.init(res, len);
        else outer_tree(ptrs, bounds[g], bounds[g + 1], res, len, res + level_bytes());
      });
      combine_tree(parts, 0, groups, len, per_group);
      k_.store(ptrs[0], p_.strides[0], parts, len);
    };
    const auto bytes = static_cast<std::size_t>(parallel_split * per_group);
    if (threads > 1 && tasks >= threads) {
      parallel_for(threads, threads, [&](std::int64_t c) {
        scratch parts(bytes);
        for (std::int64_t t = tasks * c / threads; t < tasks * (c + 1) / threads; ++t) one_task(t, parts.get(), 1);
      });
    } else {
      scratch parts(bytes);
      for (std::int64_t t = 0; t < tasks; ++t) one_task(t, parts.get(), threads);
    }
  }

  const loop_plan& p_;
  const reduce_kernel& k_;
  loop_status* st_;
  std::size_t nops_;
  std::int64_t w_;
  dim_vector kept_, red_;  // plan dims, inner first
  std::int64_t leaf_rows_ = reduce_rows;
  bool periodic_leaves_ = false;  // leaves of leaf_rows_ rows read as periods (leaf_period)
};
}  // namespace

namespace {
// A kept dim to walk as dim 0 instead of a short one, so that a task reduces a segment of
// many outputs rather than a few: the longest kept dim when dim 0 is kept but short and its
// rows do not lie back to back (the 3 columns of [N, 3] @ [3, 3] summed over its inner 3);
// the innermost kept dim when several reduced dims hold a few elements per output in all (a
// 2 x 2 window of an unfold view). -1 when dim 0 stays.
std::int64_t longer_vector_dim(const loop_plan& p, const reduce_kernel& kernel) {
  const auto kept = [&](std::size_t d) { return !reduced_dim(p, d); };
  if (p.sizes.size() < 2 || p.sizes[0] > short_row) return -1;
  if (!kept(0)) {
    std::int64_t per_output = 1, first_kept = -1, reduced_dims = 0;
    for (std::size_t d = 0; d < p.sizes.size(); ++d) {
      if (!kept(d)) {
        per_output *= p.sizes[d];
        ++reduced_dims;
      } else if (first_kept < 0) {
        first_kept = static_cast<std::int64_t>(d);
      }
    }
    return reduced_dims > 1 && per_output <= short_row ? first_kept : -1;
  }
  std::int64_t best = -1, reduced = -1;
  for (std::size_t d = 1; d < p.sizes.size(); ++d) {
    if (!kept(d)) {
      if (reduced < 0) reduced = static_cast<std::int64_t>(d);
    } else if (p.sizes[d] >= 4 * p.sizes[0] && (best < 0 || p.sizes[d] > p.sizes[static_cast<std::size_t>(best)])) {
      best = static_cast<std::int64_t>(d);
    }
  }
  if (best < 0 || reduced < 0) return -1;
  return lane_period(p, static_cast<std::size_t>(reduced), kernel) > 0 ? -1 : best;
}
}  // namespace

void reduce_execute(const loop_plan& p, const reduce_kernel& k) {
  check_limits(p);
  if (k.acc_size > 64) throw error("strata: reduction accumulators larger than 64 bytes are not supported");
  loop_status status;
  const loop_plan* plan = &p;
  loop_plan swapped;
  if (const std::int64_t d = longer_vector_dim(p, k); d > 0) {
    swapped = p;
    const auto nops = static_cast<std::size_t>(p.nops), du = static_cast<std::size_t>(d);
    std::swap(swapped.sizes[0], swapped.sizes[du]);
    for (std::size_t j = 0; j < nops; ++j) std::swap(swapped.strides[j], swapped.strides[du * nops + j]);
    plan = &swapped;
  }
  reduction(*plan, k, &status).run();
  status.raise();
}
}  // namespace strata::detail
