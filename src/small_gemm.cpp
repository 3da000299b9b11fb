// SPDX-License-Identifier: MIT
// Products with tiny dims, in front of the BLAS: [M, K] @ [K, N] with K and N of 2 to 8 and M
// long ([N, 3] @ [3, 3]), and [K, M]^T @ [K, N] with M and N of 2 to 8 and K long (a Gram or
// covariance matrix, [200000, 5]^T @ [200000, 5]). The sizes are compile-time constants, so
// the compiler keeps the small matrix in registers and vectorises across rows; OpenBLAS's
// kernels are shaped for large tiles and run these 2-10x slower (docs/PERFORMANCE.md).
#include "blas.hpp"

#include <array>
#include <cstdint>
#include <utility>

namespace strata::detail {
namespace {
constexpr int smallest = 2, largest = 8, sizes = largest - smallest + 1;

/// c[i, j] (+)= sum over k of a[i, k] b[k, j] for i < m: a [m, K] and c [m, N] contiguous,
/// b [K, N] with leading dim ldb (trans_b: stored [N, K]). Each element's products are added
/// in k order from zero.
template <class T, int K, int N>
void tall(const T* __restrict a, const T* b, bool trans_b, std::int64_t ldb, T* __restrict c, std::int64_t m,
          bool accumulate) {
  T w[K * N];
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) w[k * N + j] = trans_b ? b[j * ldb + k] : b[k * ldb + j];
  const auto rows = [&](auto add) {
    for (std::int64_t i = 0; i < m; ++i)
      for (int j = 0; j < N; ++j) {
        T acc = 0;
        for (int k = 0; k < K; ++k) acc += a[i * K + k] * w[k * N + j];
        c[i * N + j] = add ? c[i * N + j] + acc : acc;
      }
  };
  if (accumulate) rows(std::true_type{});
  else rows(std::false_type{});
}

/// Rows of a Gram product summed into partial results a block at a time (as a BLAS blocks its
/// inner dim), so that a long inner dim adds up blocks, not one long chain.
constexpr std::int64_t gram_block = 256;

/// c[i, j] (+)= sum over r < k of a[r, i] b[r, j]: a [k, M] and b [k, N] contiguous, c [M, N]
/// with leading dim ldc. Each element adds its blocks of gram_block rows in order, each block
/// summed in row order from zero.
template <class T, int M, int N>
void gram(const T* __restrict a, const T* __restrict b, T* c, std::int64_t ldc, std::int64_t k, bool accumulate) {
  T total[M * N] = {};
  for (std::int64_t r0 = 0; r0 < k; r0 += gram_block) {
    const std::int64_t r1 = r0 + gram_block < k ? r0 + gram_block : k;
    T part[M * N] = {};
    for (std::int64_t r = r0; r < r1; ++r)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) part[i * N + j] += a[r * M + i] * b[r * N + j];
    for (int e = 0; e < M * N; ++e) total[e] += part[e];
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + total[i * N + j] : total[i * N + j];
}

template <class T>
using tall_fn = void (*)(const T*, const T*, bool, std::int64_t, T*, std::int64_t, bool);
template <class T>
using gram_fn = void (*)(const T*, const T*, T*, std::int64_t, std::int64_t, bool);

template <class T, int R, int... C>
constexpr std::array<tall_fn<T>, sizes> tall_row(std::integer_sequence<int, C...>) {
  return {&tall<T, R, C + smallest>...};
}
template <class T, int... R>
constexpr std::array<std::array<tall_fn<T>, sizes>, sizes> tall_table(std::integer_sequence<int, R...>) {
  return {tall_row<T, R + smallest>(std::make_integer_sequence<int, sizes>{})...};
}
template <class T, int R, int... C>
constexpr std::array<gram_fn<T>, sizes> gram_row(std::integer_sequence<int, C...>) {
  return {&gram<T, R, C + smallest>...};
}
template <class T, int... R>
constexpr std::array<std::array<gram_fn<T>, sizes>, sizes> gram_table(std::integer_sequence<int, R...>) {
  return {gram_row<T, R + smallest>(std::make_integer_sequence<int, sizes>{})...};
}

constexpr bool small(std::int64_t d) { return d >= smallest && d <= largest; }

template <class T>
bool small_gemm_of(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                   std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate) {
  // [m, k] @ [k, n], m long: a row of 64 bytes or more of either small side vectorises worse
  // across rows than the BLAS (doubles of 8: 1.2-3x slower; floats of 8: 0.4-0.6x of it).
  constexpr std::int64_t below = 64 / static_cast<std::int64_t>(sizeof(T));
  if (!trans_a && small(k) && small(n) && k < below && n < below && lda == k && ldc == n) {
    static constexpr auto table = tall_table<T>(std::make_integer_sequence<int, sizes>{});
    table[static_cast<std::size_t>(k - smallest)][static_cast<std::size_t>(n - smallest)](a, b, trans_b, ldb, c, m,
                                                                                          accumulate);
    return true;
  }
  // [k, m]^T @ [k, n], k long: the m x n results in registers.
  if (trans_a && !trans_b && small(m) && small(n) && lda == m && ldb == n && k >= largest) {
    static constexpr auto table = gram_table<T>(std::make_integer_sequence<int, sizes>{});
    table[static_cast<std::size_t>(m - smallest)][static_cast<std::size_t>(n - smallest)](a, b, c, ldc, k, accumulate);
    return true;
  }
  return false;
}
}  // namespace

bool small_gemm(blas_type t, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc, bool accumulate) {
  switch (t) {
    case blas_type::f32:
      return small_gemm_of(trans_a, trans_b, m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b),
                           ldb, static_cast<float*>(c), ldc, accumulate);
    case blas_type::f64:
      return small_gemm_of(trans_a, trans_b, m, n, k, static_cast<const double*>(a), lda,
                           static_cast<const double*>(b), ldb, static_cast<double*>(c), ldc, accumulate);
    default: return false;
  }
}
}  // namespace strata::detail
