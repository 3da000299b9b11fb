// SPDX-License-Identifier: MIT
// One optimizer step over 10^7 float parameters (issue 34): strata's Adam, AdamW and SGD with
// momentum beside a hand-written fused Adam loop, a plain copy of the parameters (the memory
// bound: a step moves 28 bytes an element for Adam, 20 for SGD with momentum, a copy 8) and,
// when CMake finds Torch, libtorch's torch::optim::Adam and SGD on the same data in the same
// process (bench/optim_torch.cpp). Counters: GB/s of bytes moved.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
import strata;

namespace st = strata;

namespace {
constexpr std::int64_t n = 10'000'000;

void bytes(benchmark::State& s, double per_element) {
  s.counters["GB/s"] = benchmark::Counter(per_element * static_cast<double>(n) * static_cast<double>(s.iterations()),
                                          benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// A parameter with a gradient (from one backward), as before an optimizer step.
st::Tensor<float> parameter() {
  st::manual_seed(1);
  auto w = st::randn<float>({n}).requires_grad_();
  st::sum(w * st::randn<float>({n})).backward();
  return w;
}

template <class Make>
void strata_step(benchmark::State& s, Make make, double per_element) {
  st::set_num_threads(static_cast<int>(s.range(0)));
  auto w = parameter();
  auto opt = make(w);
  opt.step();
  for (auto _ : s) opt.step();
  bytes(s, per_element);
  st::set_num_threads(1);
}
void strata_adam(benchmark::State& s) {
  strata_step(s, [](const st::Tensor<float>& w) { return st::optim::Adam(std::vector{w}, st::optim::AdamOptions(1e-3)); }, 28);
}
void strata_adamw(benchmark::State& s) {
  strata_step(s, [](const st::Tensor<float>& w) { return st::optim::AdamW(std::vector{w}, st::optim::AdamWOptions(1e-3)); }, 28);
}
void strata_sgd(benchmark::State& s) {
  strata_step(s, [](const st::Tensor<float>& w) { return st::optim::SGD(std::vector{w}, st::optim::SGDOptions(0.01).momentum(0.9)); }, 20);
}

// What a performance engineer writes for one thread: one loop over the four arrays.
void hand_adam(benchmark::State& s) {
  std::vector<float> p(n, 1.0f), g(n, 0.5f), m(n, 0.0f), v(n, 0.0f);
  std::int64_t step = 0;
  const auto run = [&] {
    ++step;
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const double bc1 = 1 - std::pow(0.9, static_cast<double>(step)), bc2 = 1 - std::pow(0.999, static_cast<double>(step));
    const float step_size = static_cast<float>(-1e-3 / bc1), bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    float* __restrict pp = p.data();
    const float* __restrict gp = g.data();
    float* __restrict mp = m.data();
    float* __restrict vp = v.data();
    for (std::int64_t i = 0; i < n; ++i) {
      const float mi = mp[i] * b1 + (1 - b1) * gp[i];
      const float vi = vp[i] * b2 + (1 - b2) * gp[i] * gp[i];
      mp[i] = mi;
      vp[i] = vi;
      pp[i] += step_size * (mi / (__builtin_elementwise_sqrt(vi) / bc2_sqrt + eps));  // no errno: vectorises
    }
  };
  run();
  for (auto _ : s) {
    run();
    benchmark::ClobberMemory();
  }
  bytes(s, 28);
}
void hand_copy(benchmark::State& s) {
  std::vector<float> a(n, 1.0f), b(n, 0.0f);
  for (auto _ : s) {
    benchmark::DoNotOptimize(a.data());
    std::memcpy(b.data(), a.data(), sizeof(float) * static_cast<std::size_t>(n));
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  bytes(s, 8);
}
void strata_copy(benchmark::State& s) {
  st::set_num_threads(static_cast<int>(s.range(0)));
  auto a = st::randn<float>({n}), b = st::empty<float>({n});
  for (auto _ : s) b.assign(a);
  bytes(s, 8);
  st::set_num_threads(1);
}

void add(const char* name, void (*f)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name, f)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
}
}  // namespace

void register_torch_optim();  // bench/optim_torch.cpp, or the empty one below without Torch
#ifndef STRATA_OPTIM_TORCH
void register_torch_optim() {}
#endif

int main(int argc, char** argv) {
  add("adam/strata", strata_adam);
  add("adamw/strata", strata_adamw);
  add("sgd_momentum/strata", strata_sgd);
  benchmark::RegisterBenchmark("adam/hand_loop", hand_adam)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("copy/memcpy", hand_copy)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  add("copy/strata", strata_copy);
  register_torch_optim();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
