// SPDX-License-Identifier: MIT
// GEMM on OpenBLAS. The CBLAS prototypes are declared here (they are a fixed C ABI) rather
// than included, because Debian installs several cblas.h (netlib's, OpenBLAS's) behind
// alternatives; the library linked is OpenBLAS (CMake's FindBLAS with BLA_VENDOR OpenBLAS).
#include "blas.hpp"

#include <mutex>

extern "C" {
// CBLAS enums are C enums: CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112.
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);
void cblas_cgemm(int order, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int lda,
                 const void* b, int ldb, const void* beta, void* c, int ldc);
void cblas_zgemm(int order, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int lda,
                 const void* b, int ldb, const void* beta, void* c, int ldc);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
}

namespace strata::detail {
namespace {
constexpr int row_major = 101, no_trans = 111, trans = 112;
std::mutex blas_threads_mutex;

// OpenBLAS runs single-threaded inside strata's own parallel loop (src/linalg_evaluate.cpp splits the
// GEMMs over OpenMP's threads), so strata has one pool of threads and never runs two at once.
// OpenBLAS's count is process-wide: someone else may have changed it since, so it is checked
// (one load) on every call.
void single_threaded() {
  if (openblas_get_num_threads() == 1) return;
  const std::lock_guard lock(blas_threads_mutex);
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}
}  // namespace

void blas_gemm(blas_type t, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc,
               bool accumulate) {
  if (small_gemm(t, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, accumulate)) return;
  single_threaded();
  const int ta = trans_a ? trans : no_trans, tb = trans_b ? trans : no_trans;
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int LA = static_cast<int>(lda), LB = static_cast<int>(ldb), LC = static_cast<int>(ldc);
  switch (t) {
    case blas_type::f32:
      cblas_sgemm(row_major, ta, tb, M, N, K, 1.0f, static_cast<const float*>(a), LA, static_cast<const float*>(b), LB,
                  accumulate ? 1.0f : 0.0f, static_cast<float*>(c), LC);
      break;
    case blas_type::f64:
      cblas_dgemm(row_major, ta, tb, M, N, K, 1.0, static_cast<const double*>(a), LA, static_cast<const double*>(b),
                  LB, accumulate ? 1.0 : 0.0, static_cast<double*>(c), LC);
      break;
    case blas_type::c64: {
      const float one[2] = {1, 0}, zero[2] = {0, 0};
      cblas_cgemm(row_major, ta, tb, M, N, K, one, a, LA, b, LB, accumulate ? one : zero, c, LC);
      break;
    }
    case blas_type::c128: {
      const double one[2] = {1, 0}, zero[2] = {0, 0};
      cblas_zgemm(row_major, ta, tb, M, N, K, one, a, LA, b, LB, accumulate ? one : zero, c, LC);
      break;
    }
  }
}
}  // namespace strata::detail
