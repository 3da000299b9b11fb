// SPDX-License-Identifier: MIT
// The threaded hand-written loops of bench/shapes (a plain translation unit compiled with
// OpenMP, as src/parallel.cpp is; the benchmark's module units are not).
#include <cstddef>

#include <omp.h>

/// cumsum along the rows of 16 of x [rows, 16] on `threads` OpenMP threads: each thread one
/// contiguous block of rows, each row a chain of 16 dependent additions (left to itself, clang
/// vectorises across rows with gathers and scatters, eight times slower on Zen 5).
void shapes_hand_cumsum16(const double* __restrict v, double* __restrict w, std::size_t rows, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto parts = static_cast<std::size_t>(omp_get_num_threads());
    const auto part = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t end = rows * (part + 1) / parts * 16;
#pragma clang loop vectorize(disable)
    for (std::size_t r = rows * part / parts * 16; r < end; r += 16) {
      double acc = 0;
      for (std::size_t j = 0; j < 16; ++j) w[r + j] = acc += v[r + j];
    }
  }
}
