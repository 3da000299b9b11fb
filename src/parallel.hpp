// SPDX-License-Identifier: MIT
// The only door to OpenMP: a plain (non-module) translation unit, so that -fopenmp touches
// neither the module interfaces nor any consumer of strata.
#pragma once
#include <cstdint>

namespace strata::detail {
/// Calls body(ctx, i) for i in [0, n) on `threads` OpenMP threads, statically scheduled.
void parallel_run(std::int64_t n, int threads, void (*body)(void* ctx, std::int64_t i), void* ctx);
/// OpenMP's maximum number of threads.
int max_threads();

/// Calls body(first, last) over [0, n) split into `parts` contiguous ranges (at most n), the
/// ranges run on up to `threads` threads; the split depends on n and parts only.
template <class Body>
void run_in_parts(std::int64_t n, std::int64_t parts, int threads, const Body& body) {
  parts = parts < n ? parts : n;
  if (parts < 1) parts = 1;
  struct job {
    const Body* body;
    std::int64_t n, parts;
    static void run(void* ctx, std::int64_t i) {
      const auto& j = *static_cast<const job*>(ctx);
      (*j.body)(j.n * i / j.parts, j.n * (i + 1) / j.parts);
    }
  } j{&body, n, parts};
  if (parts == 1 || threads <= 1) {
    for (std::int64_t i = 0; i < parts; ++i) job::run(&j, i);
    return;
  }
  parallel_run(parts, static_cast<int>(parts < threads ? parts : threads), &job::run, &j);
}
}  // namespace strata::detail
