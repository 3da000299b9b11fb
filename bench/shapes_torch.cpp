// SPDX-License-Identifier: MIT
// libtorch's side of bench/shapes_bench.cpp: the same cases, data and threads, written as a
// PyTorch user writes them (each iteration allocates its result). Plain C++17 (libtorch 1.13's
// headers do not compile as C++20 here), linked into shapes_bench when CMake finds Torch.
#include <torch/torch.h>

#include <cstdint>

#include "shapes_cases.hpp"

extern "C" void openblas_set_num_threads(int n);

namespace {
at::Tensor filled(at::IntArrayRef sizes, at::ScalarType type, double base = 1, double step = 1e-3) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  auto i = at::arange(n, at::kLong).remainder(1000).to(at::kDouble);
  return (i * step + base).to(type).reshape(sizes).contiguous();
}

// torch's n threads are its OpenMP threads and OpenBLAS's: at::set_num_threads leaves the count
// of the OpenBLAS both libraries load alone, and without this torch's matrix products ran on
// every core in the one-thread rows. (strata runs OpenBLAS single-threaded inside its own
// threads and sets that on each call.)
template <class Setup>
void run(benchmark::State& s, Setup setup) {
  shapes::run(s, [](int n) { at::set_num_threads(n); openblas_set_num_threads(n); }, setup);
}
void keep(const at::Tensor& t) { benchmark::DoNotOptimize(t.data_ptr()); }

template <at::ScalarType T>
void sum_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] { return [x = filled({shapes::rows, n}, T), dim] { keep(x.sum(dim)); }; });
}
void amax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] { return [x = filled({shapes::rows, n}, at::kFloat), dim] { keep(x.amax(dim)); }; });
}
void mean0_keep(benchmark::State& s) {
  run(s, [] { return [x = filled({shapes::rows, 5}, at::kDouble)] { keep(x.mean(0, true)); }; });
}
void std0_keep(benchmark::State& s) {
  run(s, [] { return [x = filled({shapes::rows, 5}, at::kDouble)] { keep(x.std(0, true, true)); }; });
}
void standardise(benchmark::State& s) {
  run(s, [] {
    return [x = filled({shapes::rows, 5}, at::kDouble)] { keep((x - x.mean(0, true)) / x.std(0, true, true)); };
  });
}
void image_sum(benchmark::State& s) {
  run(s, [] { return [f = filled({shapes::H, shapes::W, 3}, at::kFloat)] { keep(f.sum(-1)); }; });
}
void image_gray(benchmark::State& s) {
  run(s, [] {
    auto img = filled({shapes::H, shapes::W, 3}, at::kByte, 0, 1);
    auto w = at::tensor({0.299f, 0.587f, 0.114f});
    return [img, w] {
      auto gray = (img.to(at::kFloat) / 255 * w).sum(-1);
      keep((gray * 255).clamp(0, 255).round().to(at::kByte).flip({1}).contiguous());
    };
  });
}
void cumsum_line(benchmark::State& s) {
  run(s, [] { return [x = filled({shapes::rows}, at::kDouble)] { keep(x.cumsum(0)); }; });
}
void maxpool(benchmark::State& s) {
  run(s, [] {
    return [x = filled({8, 16, 34, 34}, at::kFloat)] { keep(x.unfold(2, 2, 2).unfold(3, 2, 2).amax({-2, -1})); };
  });
}
void nbody(benchmark::State& s) {
  run(s, [] {
    auto pos = filled({shapes::bodies, 3}, at::kDouble, 0, 0.37);
    auto m = filled({shapes::bodies}, at::kDouble, 1, 1e-3);
    return [pos, m] {
      auto d = pos.unsqueeze(0) - pos.unsqueeze(1);
      auto r2 = (d * d).sum(-1) + 0.01;
      keep((d * (r2.pow(-1.5) * m).unsqueeze(-1)).sum(1));
    };
  });
}
void covariance(benchmark::State& s) {
  run(s, [] { return [x = filled({shapes::rows, 5}, at::kDouble)] { keep(x.t().matmul(x)); }; });
}
void small_matmul(benchmark::State& s) {
  run(s, [] {
    return [x = filled({shapes::rows, 3}, at::kFloat), r = filled({3, 3}, at::kFloat, 0.5, 0.1)] {
      keep(x.matmul(r));
    };
  });
}
template <at::ScalarType T, class F>
void short_case(benchmark::State& s, std::int64_t n, std::int64_t dim, F f) {
  run(s, [&] { return [x = filled({shapes::rows, n}, T), dim, f] { keep(f(x, dim)); }; });
}
void cumsum_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kDouble>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.cumsum(d); });
}
void softmax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kFloat>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.softmax(d); });
}
void argmax_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kFloat>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.argmax(d); });
}
void logsumexp_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kDouble>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.logsumexp({d}); });
}
void softmax_channels(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  run(s, [&] { return [x = filled({16, n, 32, 32}, at::kFloat), dim] { keep(x.softmax(dim)); }; });
}
void var_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kDouble>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.var(at::IntArrayRef{d}); });
}
void norm_short(benchmark::State& s, std::int64_t n, std::int64_t dim) {
  short_case<at::kDouble>(s, n, dim, [](const at::Tensor& x, std::int64_t d) { return x.norm(2, {d}); });
}
void affine3(benchmark::State& s) {
  run(s, [] {
    return [x = filled({shapes::rows, 3}, at::kFloat), w = at::tensor({0.5f, -1.0f, 2.0f}),
            b = at::tensor({1.0f, 2.0f, 3.0f})] { keep(x * w + b); };
  });
}
void conv_unfold_einsum(benchmark::State& s) {
  run(s, [] {
    return [x = filled({8, 16, 34, 34}, at::kFloat), w = filled({32, 16, 3, 3}, at::kFloat, -0.5, 1e-3)] {
      keep(at::einsum("bchwij,ocij->bohw", {x.unfold(2, 3, 1).unfold(3, 3, 1), w}));
    };
  });
}
void conv_im2col_matmul(benchmark::State& s) {
  run(s, [] {
    return [x = filled({8, 16, 34, 34}, at::kFloat), w = filled({32, 16, 3, 3}, at::kFloat, -0.5, 1e-3)] {
      auto cols = x.unfold(2, 3, 1).unfold(3, 3, 1).permute({0, 2, 3, 1, 4, 5}).reshape({8 * 32 * 32, 16 * 9});
      keep(cols.matmul(w.reshape({32, 16 * 9}).t()).reshape({8, 32, 32, 32}).permute({0, 3, 1, 2}).contiguous());
    };
  });
}
}  // namespace

void register_torch_shapes() {
  shapes::cases c{};
  c.sum_short_f = sum_short<at::kFloat>;
  c.sum_short_d = sum_short<at::kDouble>;
  c.sum_short_i = sum_short<at::kInt>;
  c.amax_short_f = amax_short;
  c.mean0_keep = mean0_keep;
  c.std0_keep = std0_keep;
  c.standardise = standardise;
  c.image_sum = image_sum;
  c.image_gray = image_gray;
  c.cumsum_line = cumsum_line;
  c.maxpool = maxpool;
  c.nbody = nbody;
  c.covariance = covariance;
  c.small_matmul = small_matmul;
  c.cumsum_short_d = cumsum_short;
  c.softmax_short_f = softmax_short;
  c.argmax_short_f = argmax_short;
  c.logsumexp_short_d = logsumexp_short;
  c.var_short_d = var_short;
  c.norm_short_d = norm_short;
  c.affine3 = affine3;
  c.conv_unfold_einsum = conv_unfold_einsum;
  c.conv_im2col_matmul = conv_im2col_matmul;
  c.softmax_channels_f = softmax_channels;
  shapes::register_cases("torch", c);
}
