// SPDX-License-Identifier: MIT
// The executor: walks a plan's rows, split over OpenMP threads above the grain.
module;
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <omp.h>
module strata.loop;

namespace strata {
namespace {
std::atomic<int> thread_count{0};  // 0: not set, use OpenMP's maximum
std::atomic<std::int64_t> zero_division_count{0};
}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw error("set_num_threads: expected a positive number of threads, got " + std::to_string(n));
  thread_count.store(n, std::memory_order_relaxed);
}

int get_num_threads() {
  const int n = thread_count.load(std::memory_order_relaxed);
  return n > 0 ? n : std::max(1, omp_get_max_threads());
}
}  // namespace strata

namespace strata::detail {
void flag_zero_division() noexcept { zero_division_count.fetch_add(1, std::memory_order_relaxed); }
std::int64_t zero_divisions() noexcept { return zero_division_count.load(std::memory_order_relaxed); }

namespace {
constexpr std::size_t max_ops = 64;

// Rows [e0, e1) of elements, in the plan's order: partial first row, whole rows, partial last.
void run_elements(const loop_plan& p, std::int64_t e0, std::int64_t e1, row_fn fn, const void* ctx) {
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::size_t ndim = p.sizes.size();
  const std::int64_t n0 = p.sizes[0];
  char* ptrs[max_ops];
  std::int64_t index[64] = {};
  std::int64_t row = e0 / n0, col = e0 % n0;
  for (std::size_t k = 0; k < nops; ++k) ptrs[k] = p.base[k] + col * p.strides[k];
  for (std::size_t d = 1; d < ndim && row > 0; ++d) {
    index[d] = row % p.sizes[d];
    row /= p.sizes[d];
    for (std::size_t k = 0; k < nops; ++k) ptrs[k] += index[d] * p.strides[d * nops + k];
  }
  std::int64_t remaining = e1 - e0;
  for (;;) {
    const std::int64_t len = std::min(n0 - col, remaining);
    fn(ctx, ptrs, p.strides.data(), len);
    remaining -= len;
    if (remaining == 0) return;
    for (std::size_t k = 0; k < nops; ++k) ptrs[k] -= col * p.strides[k];
    col = 0;
    for (std::size_t d = 1; d < ndim; ++d) {  // odometer over the outer dims
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] += p.strides[d * nops + k];
      if (++index[d] < p.sizes[d]) break;
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] -= index[d] * p.strides[d * nops + k];
      index[d] = 0;
    }
  }
}

// Tiles [t0, t1) of a tiled plan; tiles are numbered with dim 0's tiles fastest, then dim 1's,
// then the outer dims.
void run_tiles(const loop_plan& p, std::int64_t t0, std::int64_t t1, row_fn fn, const void* ctx) {
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::int64_t tiles0 = (p.sizes[0] + tile - 1) / tile;
  const std::int64_t tiles1 = (p.sizes[1] + tile_rows - 1) / tile_rows;
  char* ptrs[max_ops];
  for (std::int64_t t = t0; t < t1; ++t) {
    const std::int64_t i0 = (t % tiles0) * tile;
    const std::int64_t j0 = (t / tiles0 % tiles1) * tile_rows;
    std::int64_t outer = t / tiles0 / tiles1;
    for (std::size_t k = 0; k < nops; ++k)
      ptrs[k] = p.base[k] + i0 * p.strides[k] + j0 * p.strides[nops + k];
    for (std::size_t d = 2; d < p.sizes.size() && outer > 0; ++d) {
      const std::int64_t i = outer % p.sizes[d];
      outer /= p.sizes[d];
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] += i * p.strides[d * nops + k];
    }
    const std::int64_t len = std::min(tile, p.sizes[0] - i0);
    const std::int64_t rows = std::min(tile_rows, p.sizes[1] - j0);
    for (std::int64_t j = 0; j < rows; ++j) {
      fn(ctx, ptrs, p.strides.data(), len);
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] += p.strides[nops + k];
    }
  }
}
}  // namespace

void execute(const loop_plan& p, row_fn fn, const void* ctx) {
  if (p.numel == 0) return;
  if (static_cast<std::size_t>(p.nops) > max_ops || p.sizes.size() > 64)
    throw error("strata: an expression with more than 63 tensor leaves or 64 dims is not supported");
  // Below two grains there is nothing to split: run inline, without asking OpenMP anything.
  const std::int64_t chunks = p.numel < 2 * grain ? 1 : std::min<std::int64_t>(get_num_threads(), p.numel / grain);
  std::int64_t units = p.numel;  // elements, or tiles for a tiled plan
  if (p.tiled) {
    units = (p.sizes[0] + tile - 1) / tile * ((p.sizes[1] + tile_rows - 1) / tile_rows);
    for (std::size_t d = 2; d < p.sizes.size(); ++d) units *= p.sizes[d];
  }
  auto run = [&](std::int64_t u0, std::int64_t u1) {
    if (p.tiled) run_tiles(p, u0, u1, fn, ctx);
    else run_elements(p, u0, u1, fn, ctx);
  };
  if (chunks <= 1 || units < chunks) {
    run(0, units);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
  for (std::int64_t c = 0; c < chunks; ++c) run(units * c / chunks, units * (c + 1) / chunks);
}
}  // namespace strata::detail
