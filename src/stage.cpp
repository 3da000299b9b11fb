// SPDX-License-Identifier: MIT
// The staging executor of element-wise loops: for each row (or run of tiles) of a plan it
// decides, once, how every operand reaches the expression's arithmetic — read in place,
// filled (broadcast), gathered by stride, taken as a channel of interleaved data, or
// transposed in tiles — moves the data, and calls the expression's unit-stride loops
// (compute_fns). Compiled once: a user's translation unit instantiates only those loops.
module;
#include <algorithm>
#include <cstdint>
#include <cstring>
module strata.loop;

namespace strata::detail {
namespace {
// Elements of a row staged at a time: the buffers of every operand stay in L1 together.
constexpr std::int64_t stage_chunk = 512;
// Bytes of staging buffers a row may use (every operand's chunk, 64-byte aligned).
constexpr std::int64_t stage_bytes = 40960;
// Bytes of buffers a run of tiles may use (each buffered operand holds one tile).
constexpr std::int64_t tile_bytes = 65536;

constexpr std::int64_t round64(std::int64_t b) { return (b + 63) / 64 * 64; }

bool unit_strides(const compute_fns& f, const std::int64_t* s) {
  for (std::size_t k = 0; k < f.nops; ++k)
    if (s[k] != f.widths[k]) return false;
  return true;
}

// The longest chunk (a multiple of 16 elements, at most stage_chunk) whose buffers fit.
std::int64_t chunk_for(const compute_fns& f) {
  std::int64_t chunk = stage_chunk;
  for (;;) {
    std::int64_t bytes = 0;
    for (std::size_t k = 0; k < f.nops; ++k) bytes += round64(chunk * f.widths[k]);
    if (bytes <= stage_bytes || chunk == 16) return chunk;
    chunk /= 2;
  }
}

// n elements, every operand unit-stride: a plain copy's row moved, anything else computed.
void unit_row(const void* kctx, const compute_fns& f, char* const* p, std::int64_t n, loop_status* st) {
  if (f.copy) std::memmove(p[0], p[1], static_cast<std::size_t>(n * f.widths[0]));
  else f.contiguous(kctx, p, n, st);
}

// A row whose operands are not all unit-stride: cut into chunks; broadcast operands are
// filled once a row, strided ones gathered each chunk (plan_gather decides once a row which
// are read together: channels of the same data, streams of several), unit-stride ones read
// in place; a strided output is written to a buffer and scattered.
void staged_row(const void* kctx, const compute_fns& f, char* const* ptrs, const std::int64_t* s, std::int64_t n,
                loop_status* st) {
  const std::int64_t* w = f.widths;
  const std::size_t nin = f.nops - 1;
  const std::int64_t chunk = chunk_for(f);
  alignas(64) char scratch[stage_bytes];
  char* buf[max_operands];
  std::int64_t at = 0;
  for (std::size_t k = 0; k < f.nops; ++k) {
    buf[k] = scratch + at;
    at += round64(chunk * w[k]);
  }
  for (std::size_t k = 1; k <= nin; ++k)
    if (s[k] == 0) gather(ptrs[k], 0, n < chunk ? n : chunk, w[k], buf[k]);
  const char* in[max_operands];
  gather_job jobs[max_operands];
  const std::size_t njobs = plan_gather(ptrs + 1, s + 1, w + 1, nin, buf + 1, in, jobs);
  const bool out_unit = s[0] == w[0];
  char* p[max_operands];
  for (std::int64_t c = 0; c < n; c += chunk) {
    const std::int64_t len = n - c < chunk ? n - c : chunk;
    if (njobs != 0) gather_jobs(jobs, njobs, c, len, n);
    p[0] = out_unit ? ptrs[0] + c * s[0] : buf[0];
    for (std::size_t k = 1; k <= nin; ++k)
      p[k] = s[k] == w[k] ? ptrs[k] + c * s[k] : const_cast<char*>(in[k - 1]);
    unit_row(kctx, f, p, len, st);
    if (!out_unit) scatter(buf[0], len, w[0], ptrs[0] + c * s[0], s[0]);
  }
}

// Any row: the element type's own strided loop, one unit-stride call, or staged.
void any_row(const void* kctx, const compute_fns& f, char* const* ptrs, const std::int64_t* s, std::int64_t n,
             loop_status* st) {
  if (f.strided) return f.strided(kctx, ptrs, s, n, st);
  if (unit_strides(f, s)) return unit_row(kctx, f, ptrs, n, st);
  staged_row(kctx, f, ptrs, s, n, st);
}

struct stage_ctx {
  const void* kctx;
  const compute_fns* f;
};

// n1 short rows of n0 elements (a flat tile_span) computed as one row, in chunks of whole
// rows: an operand that continues its row into the next is read as one row (in place, or
// gathered by its stride); one that repeats its row (s1 = 0) is staged once as a chunk of
// whole rows, which every chunk reads; any other has its rows gathered one by one into the
// chunk (one broadcast along the row, s0 = 0, has each row's value filled n0 times; a plain
// copy gathers straight into the output). The output continues its
// rows. Rows across several dims (sp.rows_at) are each operand's rows at its offsets: an operand
// whose offsets continue its row, or stay at the first row, is read or staged as above, any
// other gathered row by row. `per` (at least 2) rows make a chunk. Not inlined: its buffers are on the stack only
// while it runs, never beside those of the rows a caller runs one by one.
[[gnu::noinline]] void flat_rows_staged(const void* kctx, const compute_fns& f, char* const* ptrs, const tile_span& sp,
                                        std::int64_t per, loop_status* st) {
  const std::int64_t* w = f.widths;
  const std::size_t nin = f.nops - 1;
  const std::int64_t n0 = sp.n0, n1 = sp.n1;
  enum class how : unsigned char { run, repeated, by_row };
  const std::int64_t chunk = per * n0, n = n0 * n1;
  const std::int64_t staged_rows = per < n1 ? per : n1, staged = staged_rows * n0;  // a run shorter than a chunk
  alignas(64) char scratch[stage_bytes];
  char* buf[max_operands];
  std::int64_t s[max_operands];  // each operand's stride along the one row; 0 when staged here
  how kind[max_operands];
  std::int64_t at = 0;
  const std::int64_t* rows_at = sp.rows_at;
  const auto nops = static_cast<std::size_t>(sp.nops);
  for (std::size_t k = 0; k < f.nops; ++k) {
    buf[k] = scratch + at;
    at += round64(chunk * w[k]);
    const std::int64_t s0 = sp.s0[k], s1 = sp.s1[k];
    if (rows_at) {  // the output continues (k = 0: not checked); an input that does not, seen at once
      bool run = true, same = k != 0;
      for (std::int64_t j = 0; k != 0 && j < n1 && (run || same); ++j) {
        const std::int64_t o = rows_at[static_cast<std::size_t>(j) * nops + k];
        run = run && o == j * n0 * s0;
        same = same && o == 0;
      }
      kind[k] = run ? how::run : same ? how::repeated : how::by_row;
    } else {
      kind[k] = s1 == n0 * s0 ? how::run : s1 == 0 ? how::repeated : how::by_row;
    }
    s[k] = kind[k] == how::run ? s0 : 0;
    if (k == 0) continue;
    if (kind[k] == how::run && s0 == 0) gather(ptrs[k], 0, staged, w[k], buf[k]);  // one value throughout
    else if (kind[k] == how::repeated)
      for (std::int64_t r = 0; r < staged_rows; ++r) gather(ptrs[k], s0, n0, w[k], buf[k] + r * n0 * w[k]);
  }
  const char* in[max_operands];
  gather_job jobs[max_operands];
  const std::size_t njobs = plan_gather(ptrs + 1, s + 1, w + 1, nin, buf + 1, in, jobs);
  const bool out_unit = s[0] == w[0];
  const bool direct = f.copy && out_unit && kind[1] == how::by_row;  // rows gathered into the output
  char* p[max_operands];
  for (std::int64_t r = 0; r < n1; r += per) {
    const std::int64_t rows = n1 - r < per ? n1 - r : per, c = r * n0, len = rows * n0;
    if (njobs != 0) gather_jobs(jobs, njobs, c, len, n);
    p[0] = out_unit ? ptrs[0] + c * s[0] : buf[0];
    for (std::size_t k = 1; k <= nin; ++k) {
      char* dst = direct ? p[0] : buf[k];
      if (kind[k] == how::by_row && rows_at)
        gather_rows_at(ptrs[k], sp.s0[k], rows_at + static_cast<std::size_t>(r) * nops + k, sp.nops, n0, rows, w[k], dst);
      else if (kind[k] == how::by_row)
        gather_rows(ptrs[k] + r * sp.s1[k], sp.s0[k], sp.s1[k], n0, rows, w[k], dst);
      p[k] = s[k] == w[k] ? ptrs[k] + c * s[k] : const_cast<char*>(in[k - 1]);
    }
    if (!direct) unit_row(kctx, f, p, len, st);
    if (!out_unit) scatter(buf[0], len, w[0], ptrs[0] + c * s[0], s[0]);
  }
}

// A flat tile_span: staged as one row (flat_rows_staged) when a chunk holds two rows or more
// and the run has two; otherwise row by row (and always for elements that are not trivially
// copyable, which never go through buffers).
void flat_rows(const void* kctx, const compute_fns& f, char* const* ptrs, const tile_span& sp, loop_status* st) {
  const std::int64_t per = chunk_for(f) / sp.n0;  // rows a chunk
  if (!f.strided && per >= 2 && sp.n1 >= 2) return flat_rows_staged(kctx, f, ptrs, sp, per, st);
  char* p[max_operands];
  const auto nops = static_cast<std::size_t>(sp.nops);
  for (std::int64_t j = 0; j < sp.n1; ++j) {
    for (std::size_t k = 0; k < f.nops; ++k)
      p[k] = ptrs[k] + (sp.rows_at ? sp.rows_at[static_cast<std::size_t>(j) * nops + k] : j * sp.s1[k]);
    any_row(kctx, f, p, sp.s0, sp.n0, st);
  }
}

void row_entry(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st) {
  const auto& c = *static_cast<const stage_ctx*>(ctx);
  any_row(c.kctx, *c.f, ptrs, s, n, st);
}

// An operand that is unit-stride along dim 1 but not along dim 0 (a.t() in a.t() + b): rows
// along dim 0 would read it one cache line per element.
bool transposed(std::int64_t s0, std::int64_t s1, std::int64_t w) { return s1 == w && s0 != w && s0 != 0; }

// A run of tiles (a tiled plan's, or pieces of rows walked a few at a time): transposed
// operands are transposed into L1 buffers in register-sized blocks and operands broadcast
// along dim 0 filled into them, so that every row runs on unit-stride data; a transposed
// output is written to a buffer and transposed back. Whole tiles are staged as many at a time
// as the buffers hold and computed by one call at the tile's known length; a partial tile's
// rows run one by one.
void tile_entry(const void* ctx, char* const* ptrs, const tile_span& sp, loop_status* st) {
  const auto& c = *static_cast<const stage_ctx*>(ctx);
  const compute_fns& f = *c.f;
  if (sp.flat) return flat_rows(c.kctx, f, ptrs, sp, st);
  const std::int64_t* w = f.widths;
  const std::size_t nops = f.nops;
  const std::int64_t *s0 = sp.s0, *s1 = sp.s1;
  const std::int64_t n0 = sp.n0, n1 = sp.n1;
  if (n0 * n1 > tile * tile_rows) return run_tile_rows(&row_entry, ctx, ptrs, sp, st);
  bool in_t[max_operands], from_buf[max_operands], once[max_operands];
  std::int64_t rs[max_operands];
  const bool out_t = transposed(s0[0], s1[0], w[0]);
  bool transposes = out_t, whole_rows = n0 == tile || n0 == piece;
  std::int64_t per_tile = 0, fixed = 0;  // buffer bytes a tile needs, and once a run
  for (std::size_t k = 0; k < nops; ++k) {
    in_t[k] = k == 0 ? out_t : transposed(s0[k], s1[k], w[k]);
    from_buf[k] = in_t[k] || (k > 0 && s0[k] == 0 && n0 > 1);  // broadcast along dim 0: filled
    // (a filled operand the run does not move, as along dim 0, is filled once a run)
    once[k] = from_buf[k] && !in_t[k] && sp.step[k] == 0;
    rs[k] = from_buf[k] ? w[k] : s0[k];
    transposes = transposes || in_t[k];
    whole_rows = whole_rows && rs[k] == w[k];
    if (from_buf[k]) (once[k] ? fixed : per_tile) += round64(n0 * n1 * w[k]);
  }
  if (!transposes && !whole_rows) return run_tile_rows(&row_entry, ctx, ptrs, sp, st);
  if (fixed + per_tile > tile_bytes) return run_tile_rows(&row_entry, ctx, ptrs, sp, st);
  // Tiles staged together: as many as the buffers hold (all of a run without per-tile buffers).
  const std::int64_t group = !whole_rows ? 1 : per_tile == 0 ? sp.count : std::max<std::int64_t>(1, (tile_bytes - fixed) / per_tile);
  alignas(64) char scratch[tile_bytes];
  char* buf[max_operands];
  std::int64_t step[max_operands], tstep[max_operands], used = fixed;
  std::int64_t at_fixed = 0;
  for (std::size_t k = 0; k < nops; ++k) {
    const std::int64_t bytes = round64(n0 * n1 * w[k]);
    buf[k] = nullptr;
    if (once[k]) {  // one tile's buffer, first
      buf[k] = scratch + at_fixed;
      at_fixed += bytes;
    } else if (from_buf[k]) {  // a buffer for each tile of a group, after those
      buf[k] = scratch + used;
      used += bytes * group;
    }
    step[k] = from_buf[k] ? n0 * w[k] : s1[k];  // row j of operand k: row0[k] + j * step[k]
    tstep[k] = !from_buf[k] ? sp.step[k] : once[k] ? 0 : bytes;  // tile t: + t * tstep[k]
  }
  for (std::size_t k = 1; k < nops; ++k)
    if (once[k]) fill_rows(ptrs[k], s1[k], n0, n1, w[k], buf[k]);
  char* row0[max_operands];
  char* p[max_operands];
  for (std::int64_t t0 = 0; t0 < sp.count; t0 += group) {
    const std::int64_t g = std::min(group, sp.count - t0);
    for (std::int64_t t = t0; t < t0 + g; ++t) {
      if (sp.prefetch) prefetch_tile(ptrs, sp, t);
      const std::int64_t slot = t - t0;
      for (std::size_t k = 1; k < nops; ++k) {
        if (!from_buf[k] || once[k]) continue;
        const char* at = ptrs[k] + t * sp.step[k];
        char* to = buf[k] + slot * tstep[k];
        if (in_t[k]) transpose_in(at, s0[k], w[k], to, n0, n1);
        else fill_rows(at, s1[k], n0, n1, w[k], to);
      }
    }
    for (std::size_t k = 0; k < nops; ++k) row0[k] = from_buf[k] ? buf[k] : ptrs[k] + t0 * sp.step[k];
    if (whole_rows && f.copy) {
      for (std::int64_t t = 0; t < g; ++t)
        for (std::int64_t j = 0; j < n1; ++j)
          std::memmove(row0[0] + t * tstep[0] + j * step[0], row0[1] + t * tstep[1] + j * step[1],
                       static_cast<std::size_t>(n0 * w[0]));
    } else if (whole_rows) {
      (n0 == tile ? f.rows16 : f.rows64)(c.kctx, row0, tstep, step, g, n1, st);
    } else {
      for (std::int64_t j = 0; j < n1; ++j) {
        for (std::size_t k = 0; k < nops; ++k) p[k] = row0[k] + j * step[k];
        any_row(c.kctx, f, p, rs, n0, st);
      }
    }
    if (out_t)
      for (std::int64_t t = t0; t < t0 + g; ++t)
        transpose_out(buf[0] + (t - t0) * tstep[0], w[0], ptrs[0] + t * sp.step[0], s0[0], n0, n1);
  }
}
}  // namespace

void run_compute(const loop_plan& plan, const void* ctx, const compute_fns& fns) {
  const stage_ctx c{ctx, &fns};
  execute(plan, &row_entry, fns.strided ? nullptr : &tile_entry, &c);
}

void compute_row(const void* ctx, const compute_fns& fns, char* const* ptrs, const std::int64_t* s, std::int64_t n,
                 loop_status* st) {
  any_row(ctx, fns, ptrs, s, n, st);
}

void compute_runs(const void* ctx, const compute_fns& fns, char* const* ptrs, const std::int64_t* s,
                  const std::int64_t* step, std::int64_t n, std::int64_t runs, loop_status* st) {
  const tile_span sp{s, step, nullptr, 1, n, runs, static_cast<std::int64_t>(fns.nops), false, true};
  flat_rows(ctx, fns, ptrs, sp, st);
}
}  // namespace strata::detail
