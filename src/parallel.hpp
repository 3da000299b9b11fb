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
}  // namespace strata::detail
