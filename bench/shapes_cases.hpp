// SPDX-License-Identifier: MIT
// The cases of bench/shapes_bench.cpp, registered under one name scheme for strata and for
// libtorch (bench/shapes_torch.cpp): `<case>/<library>/threads:<n>`. Plain C++17.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

namespace shapes {
inline constexpr std::int64_t rows = 200000;      ///< rows of the [rows, n] data matrices
inline constexpr std::int64_t H = 1080, W = 1920;  ///< the image cases' [H, W, 3]
inline constexpr std::int64_t bodies = 1024;      ///< the n-body case's particles

using fn = void (*)(benchmark::State&);
using short_fn = void (*)(benchmark::State&, std::int64_t n, std::int64_t dim);

/// One library's implementation of every case.
struct cases {
  short_fn sum_short_f, sum_short_d, sum_short_i;  ///< sum(x, {dim}), x [rows, n] float/double/int32
  short_fn amax_short_f;                           ///< amax(x, {dim}), x [rows, n] float
  fn mean0_keep, std0_keep;                        ///< mean(x, {0}, true), std(x, {0}, 1, true), x [rows, 5] double
  fn standardise;                                  ///< (x - mean(x, {0}, true)) / std(x, {0}, 1, true), inline
  fn image_sum, image_gray;                        ///< sum(f, {-1}) of [H, W, 3] float; the uint8 gray pipeline
  fn cumsum_line;                                  ///< cumsum of rows doubles
  fn maxpool;                                      ///< 2x2 max-pool by unfold + amax, [8, 16, 34, 34] float
  fn nbody;                                        ///< accelerations of bodies particles (double)
  fn covariance, small_matmul;                     ///< [rows, 5]^T @ [rows, 5] double; [rows, 3] @ [3, 3] float
  short_fn cumsum_short_d;                         ///< cumsum(x, dim), x [rows, n] double
  short_fn softmax_short_f, argmax_short_f;        ///< softmax(x, dim), argmax(x, dim), x [rows, n] float
  short_fn logsumexp_short_d, var_short_d, norm_short_d;  ///< logsumexp, var, 2-norm over {dim}, [rows, n] double
  fn affine3;                                      ///< x * w + b, x [rows, 3] float, w and b [3]
  fn conv_unfold_einsum, conv_im2col_matmul;       ///< 3x3 conv of [8, 16, 34, 34] by [32, 16, 3, 3], float
  short_fn softmax_channels_f;                     ///< softmax(x, 1), x [16, n, 32, 32] float (dim unused)
};

/// Times one case: the library's thread count set to the state's argument (set_threads), then
/// the callable setup() returns, warmed up once, timed per iteration.
template <class SetThreads, class Setup>
void run(benchmark::State& s, SetThreads set_threads, Setup setup) {
  set_threads(static_cast<int>(s.range(0)));
  auto f = setup();
  f();
  for (auto _ : s) {
    f();
    benchmark::ClobberMemory();
  }
  set_threads(1);
}

inline void add(const std::string& name, const std::string& lib, fn f) {
  for (int threads : {1, 2})
    benchmark::RegisterBenchmark((name + "/" + lib + "/threads:" + std::to_string(threads)).c_str(), f)
        ->Arg(threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}
inline void add_short(const std::string& name, const std::string& lib, short_fn f, std::int64_t n, std::int64_t dim) {
  for (int threads : {1, 2})
    benchmark::RegisterBenchmark((name + "/" + lib + "/threads:" + std::to_string(threads)).c_str(),
                                 [f, n, dim](benchmark::State& s) { f(s, n, dim); })
        ->Arg(threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

/// Registers every case of c under lib's name.
inline void register_cases(const std::string& lib, const cases& c) {
  for (std::int64_t dim : {0, 1})
    for (std::int64_t n : {2, 3, 4, 5, 7, 8, 16}) {
      const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(n) + "]/dim" + std::to_string(dim);
      add_short("sum_double" + shape, lib, c.sum_short_d, n, dim);
      if (n == 3 || n == 5 || n == 7) {
        add_short("sum_float" + shape, lib, c.sum_short_f, n, dim);
        add_short("sum_int32" + shape, lib, c.sum_short_i, n, dim);
        add_short("amax_float" + shape, lib, c.amax_short_f, n, dim);
      }
    }
  for (std::int64_t dim : {0, 1})
    for (std::int64_t n : {3, 5, 16}) {
      const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(n) + "]/dim" + std::to_string(dim);
      add_short("cumsum_double" + shape, lib, c.cumsum_short_d, n, dim);
      add_short("softmax_float" + shape, lib, c.softmax_short_f, n, dim);
      add_short("argmax_float" + shape, lib, c.argmax_short_f, n, dim);
      add_short("logsumexp_double" + shape, lib, c.logsumexp_short_d, n, dim);
      add_short("var_double" + shape, lib, c.var_short_d, n, dim);
      add_short("norm_double" + shape, lib, c.norm_short_d, n, dim);
    }
  for (std::int64_t n : {4, 16})
    add_short("softmax_channels_float[16," + std::to_string(n) + ",32,32]/dim1", lib, c.softmax_channels_f, n, 1);
  add("mean_keep[200000,5]/dim0", lib, c.mean0_keep);
  add("std_keep[200000,5]/dim0", lib, c.std0_keep);
  add("standardise_inline[200000,5]", lib, c.standardise);
  add("sum_image[1080,1920,3]/dim-1", lib, c.image_sum);
  add("gray_pipeline_uint8[1080,1920,3]", lib, c.image_gray);
  add("cumsum[200000]", lib, c.cumsum_line);
  add("maxpool2x2_unfold[8,16,34,34]", lib, c.maxpool);
  add("nbody_accel[1024]", lib, c.nbody);
  add("covariance[200000,5]", lib, c.covariance);
  add("matmul[200000,3]x[3,3]", lib, c.small_matmul);
  add("affine_float[200000,3]", lib, c.affine3);
  add("conv3x3_unfold_einsum[8,16,34,34]", lib, c.conv_unfold_einsum);
  add("conv3x3_im2col_matmul[8,16,34,34]", lib, c.conv_im2col_matmul);
}
}  // namespace shapes
