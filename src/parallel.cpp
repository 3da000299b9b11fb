// SPDX-License-Identifier: MIT
// OpenMP behind a function pointer (see parallel.hpp); compiled with the OpenMP flags.
#include "parallel.hpp"

#include <omp.h>

namespace strata::detail {
void parallel_run(std::int64_t n, int threads, void (*body)(void* ctx, std::int64_t i), void* ctx) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) body(ctx, i);
}

int max_threads() { return omp_get_max_threads(); }
}  // namespace strata::detail
