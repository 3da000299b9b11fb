// SPDX-License-Identifier: MIT
// The shapes real programs have (issue 33): reductions along or across a short dim, scans,
// window reductions over unfold views, reductions nested in expressions, tiny matrix
// products, a short innermost broadcast. Every case runs on 1 and 2 threads; when CMake finds
// Torch, bench/shapes_torch.cpp registers the same cases on libtorch in this process
// (`<case>/torch/...` beside `<case>/strata/...`), on the same data (base + (i % 1000) * step).
// Each iteration evaluates into a fresh result, as a user's program does. Report:
// `python3 tools/shapes_report.py build/release` (medians of rounds, ratios).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "shapes_cases.hpp"
import strata;

void shapes_hand_cumsum16(const double* v, double* w, std::size_t rows, int threads);  // shapes_hand.cpp

namespace st = strata;

namespace {
template <class T>
st::Tensor<T> filled(st::int_list sizes, double base = 1, double step = 1e-3) {
  auto t = st::empty<T>(sizes);
  T* p = t.data_ptr();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(base + static_cast<double>(i % 1000) * step);
  return t;
}

/// Evaluates x (a tensor or an expression) and keeps the result from being optimised away.
template <class X>
void keep(const X& x) {
  if constexpr (requires { x.eval(); }) {
    auto t = x.eval();
    benchmark::DoNotOptimize(t.data_ptr());
  } else {
    benchmark::DoNotOptimize(x.data_ptr());
  }
}

/// Runs one case: setup returns the callable timed per iteration.
template <class Setup>
void run(benchmark::State& s, Setup setup) {
  shapes::run(s, [](int n) { st::set_num_threads(n); }, setup);
}

template <class T>
void sum_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] {
    return [x = filled<T>({shapes::rows, n}), dim] { keep(st::sum(x, {dim})); };
  });
}
template <class T>
void amax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] {
    return [x = filled<T>({shapes::rows, n}), dim] { keep(st::amax(x, {dim})); };
  });
}
void mean0_keep(benchmark::State& s) {
  run(s, [] { return [x = filled<double>({shapes::rows, 5})] { keep(st::mean(x, {0}, true)); }; });
}
void std0_keep(benchmark::State& s) {
  run(s, [] { return [x = filled<double>({shapes::rows, 5})] { keep(st::std(x, {0}, 1, true)); }; });
}
void standardise(benchmark::State& s) {
  run(s, [] {
    return [x = filled<double>({shapes::rows, 5})] {
      keep((x - st::mean(x, {0}, true)) / st::std(x, {0}, 1, true));
    };
  });
}
void image_sum(benchmark::State& s) {
  run(s, [] {
    return [f = filled<float>({shapes::H, shapes::W, 3})] { keep(st::sum(f, {-1})); };
  });
}
void image_gray(benchmark::State& s) {
  run(s, [] {
    auto img = filled<std::uint8_t>({shapes::H, shapes::W, 3}, 0, 1);
    auto w = st::tensor({0.299f, 0.587f, 0.114f});
    return [img, w] {
      auto gray = st::sum(img.to<float>() / 255 * w, {-1});
      keep((gray * 255).clamp(0, 255).round().to<std::uint8_t>().flip({1}).contiguous());
    };
  });
}
void cumsum_line(benchmark::State& s) {
  run(s, [] { return [x = filled<double>({shapes::rows})] { keep(st::cumsum(x, 0)); }; });
}
void maxpool(benchmark::State& s) {
  run(s, [] {
    return [x = filled<float>({8, 16, 34, 34})] {
      keep(st::amax(x.unfold(2, 2, 2).unfold(3, 2, 2), {-2, -1}));
    };
  });
}
void nbody(benchmark::State& s) {
  run(s, [] {
    auto pos = filled<double>({shapes::bodies, 3}, 0, 0.37);
    auto m = filled<double>({shapes::bodies}, 1, 1e-3);
    return [pos, m] {
      auto d = (pos.unsqueeze(0) - pos.unsqueeze(1)).eval();
      auto r2 = (st::sum(d * d, {-1}) + 0.01).eval();
      keep(st::sum(d * (st::pow(r2, -1.5) * m).unsqueeze(-1), {1}));
    };
  });
}
void covariance(benchmark::State& s) {
  run(s, [] {
    return [x = filled<double>({shapes::rows, 5})] { keep(st::matmul(x.t(), x)); };
  });
}
void small_matmul(benchmark::State& s) {
  run(s, [] {
    return [x = filled<float>({shapes::rows, 3}), r = filled<float>({3, 3}, 0.5, 0.1)] {
      keep(st::matmul(x, r));
    };
  });
}
template <class T, class F>
void short_case(benchmark::State& s, std::int64_t n, std::int64_t dim, F f) {
  run(s, [&] { return [x = filled<T>({shapes::rows, n}), dim, f] { keep(f(x, dim)); }; });
}
void cumsum_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<double>(s, n, dim, [](const auto& x, std::int64_t d) { return st::cumsum(x, d); });
}
void softmax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<float>(s, n, dim, [](const auto& x, std::int64_t d) { return st::softmax(x, d); });
}
void argmax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<float>(s, n, dim, [](const auto& x, std::int64_t d) { return st::argmax(x, d); });
}
void logsumexp_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<double>(s, n, dim, [](const auto& x, std::int64_t d) { return st::logsumexp(x, {d}); });
}
void softmax_channels(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] { return [x = filled<float>({16, n, 32, 32}), dim] { keep(st::softmax(x, dim)); }; });
}
void var_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<double>(s, n, dim, [](const auto& x, std::int64_t d) { return st::var(x, {d}); });
}
void norm_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<double>(s, n, dim, [](const auto& x, std::int64_t d) { return st::norm(x, 2, {d}); });
}
void affine3(benchmark::State& s) {
  run(s, [] {
    return [x = filled<float>({shapes::rows, 3}), w = st::tensor({0.5f, -1.0f, 2.0f}), b = st::tensor({1.0f, 2.0f, 3.0f})] {
      keep(x * w + b);
    };
  });
}
void conv_unfold_einsum(benchmark::State& s) {
  run(s, [] {
    return [x = filled<float>({8, 16, 34, 34}), w = filled<float>({32, 16, 3, 3}, -0.5, 1e-3)] {
      keep(st::einsum("bchwij,ocij->bohw", x.unfold(2, 3, 1).unfold(3, 3, 1), w));
    };
  });
}
void conv_im2col_matmul(benchmark::State& s) {
  run(s, [] {
    return [x = filled<float>({8, 16, 34, 34}), w = filled<float>({32, 16, 3, 3}, -0.5, 1e-3)] {
      auto cols = x.unfold(2, 3, 1).unfold(3, 3, 1).permute({0, 2, 3, 1, 4, 5}).reshape({8 * 32 * 32, 16 * 9});
      keep(cols.matmul(w.reshape({32, 16 * 9}).t()).reshape({8, 32, 32, 32}).permute({0, 3, 1, 2}).contiguous());
    };
  });
}
// Hand-written loops beside the cases whose time may be a bound (docs/PERFORMANCE.md): what a
// performance engineer writes (for one thread, and for two where the threads' split is the
// question), on the same data in memory strata allocates (its alignment and huge pages), the
// result written into memory allocated once.
// sum(x, {0}) of x [rows, 4]: one pass over the rows as one run, 64 lanes (eight vectors, lane j
// holding column j % 4) in registers, folded at the end; no accuracy bound, no tree.
void hand_sum4_dim0(benchmark::State& s) {
  const auto x = filled<double>({shapes::rows, 4});
  const double* __restrict v = x.data_ptr();
  const auto total = static_cast<std::size_t>(x.numel());
  double out[4];
  for (auto _ : s) {
    double lane[64] = {};
    std::size_t i = 0;
    for (; i + 64 <= total; i += 64)
      for (std::size_t j = 0; j < 64; ++j) lane[j] += v[i + j];
    for (std::size_t j = 0; i + j < total; ++j) lane[j] += v[i + j];
    for (std::size_t j = 0; j < 4; ++j) {
      out[j] = lane[j];
      for (std::size_t r = 1; r < 16; ++r) out[j] += lane[r * 4 + j];
    }
    benchmark::DoNotOptimize(out);
  }
}
// cumsum of rows doubles: the chain of dependent additions.
void hand_cumsum_line(benchmark::State& s) {
  const auto x = filled<double>({shapes::rows});
  auto y = st::empty<double>({shapes::rows});
  const double* __restrict v = x.data_ptr();
  double* __restrict w = y.data_ptr();
  const auto n = static_cast<std::size_t>(x.numel());
  for (auto _ : s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) w[i] = acc += v[i];
    benchmark::DoNotOptimize(w);
    benchmark::ClobberMemory();
  }
}
// cumsum(x, 1) of x [rows, 16] on 1 or 2 threads (bench/shapes_hand.cpp, OpenMP): each row's
// chain of 16 additions, the rows independent and overlapped by the core (left to itself, clang
// vectorises across rows with gathers and scatters, eight times slower on Zen 5).
void hand_cumsum16_dim1(benchmark::State& s) {
  const auto x = filled<double>({shapes::rows, 16});
  auto y = st::empty<double>({shapes::rows, 16});
  const auto threads = static_cast<int>(s.range(0));
  for (auto _ : s) {
    shapes_hand_cumsum16(x.data_ptr(), y.data_ptr(), static_cast<std::size_t>(shapes::rows), threads);
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::ClobberMemory();
  }
}
void add_hand(const std::string& name, shapes::fn f, int threads = 1) {
  benchmark::RegisterBenchmark((name + "/hand/threads:" + std::to_string(threads)).c_str(), f)
      ->Arg(threads)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}
}  // namespace

void register_strata_shapes() {
  shapes::register_cases("strata", {
    .sum_short_f = sum_short<float>, .sum_short_d = sum_short<double>, .sum_short_i = sum_short<std::int32_t>,
    .amax_short_f = amax_short<float>, .mean0_keep = mean0_keep, .std0_keep = std0_keep,
    .standardise = standardise, .image_sum = image_sum, .image_gray = image_gray, .cumsum_line = cumsum_line,
    .maxpool = maxpool, .nbody = nbody, .covariance = covariance, .small_matmul = small_matmul, .cumsum_short_d = cumsum_short,
    .softmax_short_f = softmax_short, .argmax_short_f = argmax_short, .logsumexp_short_d = logsumexp_short,
    .var_short_d = var_short, .norm_short_d = norm_short, .affine3 = affine3,
    .conv_unfold_einsum = conv_unfold_einsum, .conv_im2col_matmul = conv_im2col_matmul,
    .softmax_channels_f = softmax_channels});
  add_hand("sum_double[" + std::to_string(shapes::rows) + ",4]/dim0", hand_sum4_dim0);
  add_hand("cumsum[200000]", hand_cumsum_line);
  for (int threads : {1, 2})
    add_hand("cumsum_double[" + std::to_string(shapes::rows) + ",16]/dim1", hand_cumsum16_dim1, threads);
}

void register_torch_shapes();  // shapes_torch.cpp, or the empty one below without Torch

#ifndef STRATA_SHAPES_TORCH
void register_torch_shapes() {}
#endif

int main(int argc, char** argv) {
  register_strata_shapes();
  register_torch_shapes();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
