// SPDX-License-Identifier: MIT
// libtorch side-by-side figures for the strata benchmarks: the same cases, sizes, data and
// byte counts as bench/fusion_bench.cpp, bench/reduce_bench.cpp and (torch_ops_*)
// bench/ops_bench.cpp, run on libtorch's CPU kernels (out= variants where libtorch has them,
// so that no allocation is timed). Plain C++17 without strata; built only when CMake finds
// Torch (bench/CMakeLists.txt). Report: tools/bench_report.py; ops_bench runs the torch_ops_*
// rows itself.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>

namespace {
constexpr std::int64_t N = std::int64_t{1} << 24;
constexpr std::int64_t M = 4096;

// base + (i % 1000) * step, as the strata benchmarks fill their operands.
at::Tensor filled(at::IntArrayRef sizes, double base, double step = 1e-3) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  auto i = at::arange(n, at::kLong).remainder(1000).to(at::kDouble);
  return (i * step + base).to(at::kFloat).reshape(sizes).contiguous();
}
void bytes(benchmark::State& s, std::int64_t per_iter) {
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * per_iter);
}
struct threads_guard {
  explicit threads_guard(int n) { at::set_num_threads(n); }
  ~threads_guard() { at::set_num_threads(1); }
};
template <class F>
void loop(benchmark::State& s, F run) {
  run();  // warm-up
  for (auto _ : s) {
    run();
    benchmark::ClobberMemory();
  }
}

// ---- W4: [M, 1] * [1, M] + [M, M]: addcmul ----
void torch_W4_addcmul(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled({M, 1}, 1), b = filled({1, M}, 2), c = filled({M, M}, 3), out = at::empty({M, M});
  loop(s, [&] { at::addcmul_out(out, c, a, b); });
  bytes(s, 2 * M * M * 4);
}
// ---- W5: a.t() + b on [M, M] ----
void torch_W5_add_out(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled({M, M}, 1), b = filled({M, M}, 2), out = at::empty({M, M});
  loop(s, [&] { at::add_out(out, a.t(), b); });
  bytes(s, 3 * M * M * 4);
}
// ---- 3-D permutes of x [64, 512, 512] ----
constexpr std::int64_t P0 = 64, P1 = 512, P2 = 512, PN = P0 * P1 * P2;
void torch_P021_add_out(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled({P0, P1, P2}, 1), y = filled({P0, P2, P1}, 2), out = at::empty({P0, P2, P1});
  loop(s, [&] { at::add_out(out, x.permute({0, 2, 1}), y); });
  bytes(s, 3 * PN * 4);
}
void torch_P210_add_out(benchmark::State& s) {
  threads_guard g(1);
  auto x = filled({P0, P1, P2}, 1), y = filled({P2, P1, P0}, 2), out = at::empty({P2, P1, P0});
  loop(s, [&] { at::add_out(out, x.permute({2, 1, 0}), y); });
  bytes(s, 3 * PN * 4);
}
// ---- W10: three strided operands of one base x [M, 3 * 1024] (two adds, one temporary) ----
void torch_W10_one_base(benchmark::State& s) {
  threads_guard g(1);
  constexpr std::int64_t S3 = 1024;
  auto x = filled({M, 3 * S3}, 1), out = at::empty({M, S3});
  auto a = x.slice(1, 0, 3 * S3, 3), b = x.slice(1, 1, 3 * S3, 3), c = x.slice(1, 2, 3 * S3, 3);
  loop(s, [&] { at::add_out(out, at::add(a, b), c); });
  bytes(s, (3 * M * S3 + M * S3) * 4);
}
// ---- W7: g [32, 512, 1024] summed to [512, 1] (a; keepdim: [1, 512, 1]) and to [1024] (b) ----
constexpr std::int64_t B = 32, J = 512, K = 1024;
void torch_W7a_sum(benchmark::State& s) {
  threads_guard t(1);
  auto g = filled({B, J, K}, 1), out = at::empty({1, J, 1});
  loop(s, [&] { at::sum_out(out, g, at::IntArrayRef{0, 2}, true); });
  bytes(s, B * J * K * 4);
}
void torch_W7b_sum(benchmark::State& s) {
  threads_guard t(1);
  auto g = filled({B, J, K}, 1), out = at::empty({K});
  loop(s, [&] { at::sum_out(out, g, at::IntArrayRef{0, 1}); });
  bytes(s, B * J * K * 4);
}
// ---- narrow columns: sum(x, {0}), x [2^18, 64] ----
void torch_colsum_narrow(benchmark::State& s) {
  threads_guard t(1);
  auto x = filled({(std::int64_t{1} << 24) / 64, 64}, 1), out = at::empty({64});
  loop(s, [&] { at::sum_out(out, x, at::IntArrayRef{0}); });
  bytes(s, (std::int64_t{1} << 24) * 4);
}
// ---- exp and W11 over 2^24 floats ----
void torch_exp_out(benchmark::State& s) {
  threads_guard g(1);
  auto a = filled({N}, -2), out = at::empty({N});
  loop(s, [&] { at::exp_out(out, a); });
  bytes(s, 2 * N * 4);
}
void torch_W11(benchmark::State& s) {  // eager: each op its own pass
  threads_guard g(1);
  auto a = filled({N}, -0.5), b = filled({N}, -0.5), c = filled({N}, -0.5), out = at::empty({N});
  loop(s, [&] { at::add_out(out, at::exp(-a * a) * at::tanh(b), at::sigmoid(c)); });
  bytes(s, 4 * N * 4);
}
// ---- reductions over the rows of [1000, 1000] (1 and 2 threads) and over 2^24 floats ----
constexpr std::int64_t RR = 1000, RC = 1000;
void torch_sum_rows(benchmark::State& s) {
  threads_guard t(static_cast<int>(s.range(0)));
  auto x = filled({RR, RC}, 1), out = at::empty({RR});
  loop(s, [&] { at::sum_out(out, x, {1}); });
  bytes(s, RR * RC * 4);
}
void torch_amax_rows(benchmark::State& s) {
  threads_guard t(static_cast<int>(s.range(0)));
  auto x = filled({RR, RC}, 1), out = at::empty({RR});
  loop(s, [&] { at::amax_out(out, x, {1}); });
  bytes(s, RR * RC * 4);
}
void torch_sum_flat(benchmark::State& s) {
  threads_guard t(1);
  auto x = filled({N}, 1);
  loop(s, [&] { benchmark::DoNotOptimize(at::sum(x)); });
  bytes(s, N * 4);
}
void torch_amax_flat(benchmark::State& s) {
  threads_guard t(1);
  auto x = filled({N}, 1), out = at::empty({});
  loop(s, [&] { at::amax_out(out, x, {0}); });
  bytes(s, N * 4);
}

// ---- issue 11's operators (bench/ops_bench.cpp: the same sizes, data and byte counts) ----
// softmax and log_softmax over the rows of [4096, 1000] in [-2, 2); var over dim 1 and dim 0
// of [4096, 4096] in [1, 2); argmax over dim 1 of [4096, 4096], (i * 7919 % 10007) * 1e-4 - 0.5.
// Each with its out= variant (nothing allocated) and as a user calls it (a fresh result).
constexpr std::int64_t SR = 4096, SC = 1000;
at::Tensor scrambled(at::IntArrayRef sizes) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  auto i = at::arange(n, at::kLong).mul(7919).remainder(10007).to(at::kDouble);
  return (i * 1e-4 - 0.5).to(at::kFloat).reshape(sizes).contiguous();
}
template <class F>
void ops_case(benchmark::State& s, const at::Tensor& x, std::int64_t per_iter, F run) {
  threads_guard g(1);
  loop(s, [&] { run(x); });
  bytes(s, per_iter);
}
void torch_ops_SM_softmax_out(benchmark::State& s) {
  auto out = at::empty({SR, SC});
  ops_case(s, filled({SR, SC}, -2, 4e-3), 2 * SR * SC * 4, [&](const at::Tensor& x) { at::softmax_out(out, x, 1); });
}
void torch_ops_SM_softmax(benchmark::State& s) {
  ops_case(s, filled({SR, SC}, -2, 4e-3), 2 * SR * SC * 4,
           [](const at::Tensor& x) { benchmark::DoNotOptimize(torch::softmax(x, 1)); });
}
void torch_ops_LSM_log_softmax_out(benchmark::State& s) {
  auto out = at::empty({SR, SC});
  ops_case(s, filled({SR, SC}, -2, 4e-3), 2 * SR * SC * 4, [&](const at::Tensor& x) { at::log_softmax_out(out, x, 1); });
}
void torch_ops_LSM_log_softmax(benchmark::State& s) {
  ops_case(s, filled({SR, SC}, -2, 4e-3), 2 * SR * SC * 4,
           [](const at::Tensor& x) { benchmark::DoNotOptimize(torch::log_softmax(x, 1)); });
}
template <std::int64_t Dim>
void torch_ops_var_out(benchmark::State& s) {
  auto out = at::empty({M});
  ops_case(s, filled({M, M}, 1), (M * M + M) * 4, [&](const at::Tensor& x) { at::var_out(out, x, at::IntArrayRef{Dim}); });
}
template <std::int64_t Dim>
void torch_ops_var(benchmark::State& s) {
  ops_case(s, filled({M, M}, 1), (M * M + M) * 4,
           [](const at::Tensor& x) { benchmark::DoNotOptimize(torch::var(x, at::IntArrayRef{Dim})); });
}
void torch_ops_VR_var_out(benchmark::State& s) { torch_ops_var_out<1>(s); }
void torch_ops_VR_var(benchmark::State& s) { torch_ops_var<1>(s); }
void torch_ops_VC_var_out(benchmark::State& s) { torch_ops_var_out<0>(s); }
void torch_ops_VC_var(benchmark::State& s) { torch_ops_var<0>(s); }
void torch_ops_AM_argmax_out(benchmark::State& s) {
  auto out = at::empty({M}, at::kLong);
  ops_case(s, scrambled({M, M}), M * M * 4 + M * 8, [&](const at::Tensor& x) { at::argmax_out(out, x, 1); });
}
void torch_ops_AM_argmax(benchmark::State& s) {
  ops_case(s, scrambled({M, M}), M * M * 4 + M * 8,
           [](const at::Tensor& x) { benchmark::DoNotOptimize(torch::argmax(x, 1)); });
}
}  // namespace

BENCHMARK(torch_W4_addcmul)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_W5_add_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_P021_add_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_P210_add_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_W10_one_base)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_W7a_sum)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_W7b_sum)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_colsum_narrow)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_exp_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_W11)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_sum_rows)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(torch_amax_rows)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(torch_sum_flat)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_amax_flat)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_SM_softmax_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_SM_softmax)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_LSM_log_softmax_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_LSM_log_softmax)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_VR_var_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_VR_var)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_VC_var_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_VC_var)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_AM_argmax_out)->Unit(benchmark::kMillisecond);
BENCHMARK(torch_ops_AM_argmax)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
