// SPDX-License-Identifier: MIT
// libtorch's side of bench/optim_bench.cpp: torch::optim::Adam, AdamW and SGD with momentum
// over the same 10^7 float parameters. Plain C++17 (libtorch 1.13's headers), linked into
// optim_bench when CMake finds Torch.
#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {
constexpr std::int64_t n = 10'000'000;

template <class Make>
void torch_step(benchmark::State& s, Make make, double per_element) {
  at::set_num_threads(static_cast<int>(s.range(0)));
  torch::manual_seed(1);
  auto w = torch::randn({n}).requires_grad_();
  (w * torch::randn({n})).sum().backward();
  auto opt = make(w);
  opt.step();
  for (auto _ : s) opt.step();
  s.counters["GB/s"] = benchmark::Counter(per_element * static_cast<double>(n) * static_cast<double>(s.iterations()),
                                          benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  at::set_num_threads(1);
}
void torch_adam(benchmark::State& s) {
  torch_step(s, [](const torch::Tensor& w) { return torch::optim::Adam({w}, torch::optim::AdamOptions(1e-3)); }, 28);
}
void torch_adamw(benchmark::State& s) {
  torch_step(s, [](const torch::Tensor& w) { return torch::optim::AdamW({w}, torch::optim::AdamWOptions(1e-3)); }, 28);
}
void torch_sgd(benchmark::State& s) {
  torch_step(s, [](const torch::Tensor& w) { return torch::optim::SGD({w}, torch::optim::SGDOptions(0.01).momentum(0.9)); }, 20);
}
}  // namespace

void register_torch_optim() {
  for (auto [name, f] : {std::pair{"adam/torch", &torch_adam}, std::pair{"adamw/torch", &torch_adamw},
                         std::pair{"sgd_momentum/torch", &torch_sgd}})
    benchmark::RegisterBenchmark(name, f)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
}
