// SPDX-License-Identifier: MIT
// The only door to the BLAS (OpenBLAS through its CBLAS interface, behind small-matrix kernels
// for tiny dims): plain translation units,
// so that no module interface or consumer sees the BLAS's headers or declarations.
#pragma once
#include <cstdint>

namespace strata::detail {
/// The element types the BLAS multiplies.
enum class blas_type { f32, f64, c64, c128 };
/// C = op(A) op(B) (accumulate: C += op(A) op(B)) for row-major C (m x n, leading dim ldc), A (m x k, or k x m when trans_a)
/// and B (k x n, or n x k when trans_b); every size and leading dim fits an int. Runs on the
/// calling thread (OpenBLAS single-threaded); callers split the work over their threads.
void blas_gemm(blas_type t, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc,
               bool accumulate = false);
/// The same product by src/small_gemm.cpp's kernels when its shape is one of theirs (float or
/// double; [m, k] @ [k, n] with k, n of 2-8 (doubles 2-7) and rows of A and C back to back, or
/// [k, m]^T @ [k, n] with m, n of 2-8, k >= 8 and rows of both back to back); false, touching
/// nothing, otherwise. blas_gemm tries it first.
bool small_gemm(blas_type t, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc,
                bool accumulate);
}  // namespace strata::detail
