// SPDX-License-Identifier: MIT
// libtorch side-by-side figures for bench/autograd_bench.cpp: the same two forward + backward
// cases, sizes, data and byte counts, written the PyTorch way (leaves with requires_grad,
// loss.backward()), one thread. Plain C++17 without strata; built only when CMake finds Torch
// (bench/CMakeLists.txt). autograd_bench runs this binary (--benchmark_format=csv) when it sits
// beside it and prints strata / libtorch ratios.
//
// Gradients between iterations: set to undefined (`x.mutable_grad() = at::Tensor()`, what
// PyTorch 2's zero_grad() does by default). This is libtorch's fastest reset: the engine then
// hands each leaf the gradient buffer it computed instead of adding it into an old one.
// *_accumulate lets them accumulate instead (grad += new grad in place), as strata's case does.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>

#include <sys/resource.h>

namespace {
constexpr std::int64_t N = std::int64_t{1} << 24;   // AG1: five inputs of 2^24 floats
constexpr std::int64_t N2 = std::int64_t{1} << 22;  // AG2: three inputs of 2^22 floats

// base + (i % 1000) * 1e-3, as the strata benchmarks fill their operands.
at::Tensor filled(std::int64_t n, double base) {
  auto i = at::arange(n, at::kLong).remainder(1000).to(at::kDouble);
  return (i * 1e-3 + base).to(at::kFloat).contiguous();
}
at::Tensor leaf(std::int64_t n, double base) { return filled(n, base).requires_grad_(); }
void bytes(benchmark::State& s, std::int64_t per_iter) {  // a kIsRate counter: bytes_per_second
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * per_iter);
}
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
// One warm-up call, then the timed calls; "faults" counts the page faults an iteration takes
// (glibc's malloc maps every block over 32 MiB afresh, 4 KiB pages unless THP is "always").
template <class F>
void loop(benchmark::State& s, F run) {
  run();
  const long f0 = minor_faults();
  for (auto _ : s) run();
  s.counters["faults"] =
      benchmark::Counter(static_cast<double>(minor_faults() - f0), benchmark::Counter::kAvgIterations);
}
void grads_to_none(std::initializer_list<const at::Tensor*> ts) {
  for (const at::Tensor* t : ts) t->mutable_grad() = at::Tensor();
}

// ---- AG1: loss = sum(r * r), r = (a*b + c*d - e) * 0.5; r computed once, as PyTorch code would ----
at::Tensor ag1_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Tensor& d,
                    const at::Tensor& e) {
  auto r = (a * b + c * d - e) * 0.5;
  return (r * r).sum();
}
void torch_AG1(benchmark::State& s) {
  at::set_num_threads(1);
  auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
  auto run = [&] {
    grads_to_none({&a, &b, &c, &d, &e});
    ag1_loss(a, b, c, d, e).backward();
    benchmark::DoNotOptimize(a.grad().data_ptr());
  };
  loop(s, run);
  bytes(s, 15 * N * 4);  // forward reads 5 inputs; backward reads 5 inputs and writes 5 gradients
}
void torch_AG1_accumulate(benchmark::State& s) {
  at::set_num_threads(1);
  auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
  auto run = [&] {
    ag1_loss(a, b, c, d, e).backward();
    benchmark::DoNotOptimize(a.grad().data_ptr());
  };
  loop(s, run);
  bytes(s, 15 * N * 4);
}

// ---- AG2: y = sum(tanh(exp(-a) * sigmoid(b) + log1p(c * c)) * sin(a)), 10 element-wise ops ----
at::Tensor ag2_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  return (at::tanh(at::exp(-a) * at::sigmoid(b) + at::log1p(c * c)) * at::sin(a)).sum();
}
void torch_AG2(benchmark::State& s) {
  at::set_num_threads(1);
  auto a = leaf(N2, -0.5), b = leaf(N2, -0.5), c = leaf(N2, -0.5);
  auto run = [&] {
    grads_to_none({&a, &b, &c});
    ag2_loss(a, b, c).backward();
    benchmark::DoNotOptimize(a.grad().data_ptr());
  };
  loop(s, run);
  bytes(s, 9 * N2 * 4);  // forward reads 3 inputs; backward reads 3 inputs and writes 3 gradients
}

// ---- peak memory of one backward, measured once (the same method as autograd_bench) ----
double status_mib(const char* key) {  // a "VmRSS:"-style line of /proc/self/status (KiB), in MiB
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) / 1024;
  return -1;
}
bool reset_peak() {  // VmHWM := VmRSS (Linux >= 4.0)
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}
template <class Forward>
void peak_memory(const char* name, std::int64_t grad_bytes, const at::Tensor& probe, Forward forward) {
  const double before_fwd = status_mib("VmRSS:");
  at::Tensor loss = forward();
  const double before = status_mib("VmRSS:");
  if (!reset_peak()) {
    std::printf("memory %s: /proc/self/clear_refs not writable, no figure\n", name);
    return;
  }
  loss.backward();
  const double peak = status_mib("VmHWM:"), after = status_mib("VmRSS:");
  loss = at::Tensor();  // frees the graph
  const double grads = static_cast<double>(grad_bytes) / (1 << 20);
  std::printf("memory %s: graph kept by the forward %.0f MiB; first backward: peak extra %.0f MiB, "
              "kept %.0f MiB; gradients %.0f MiB; peak extra / gradients %.2f\n",
              name, before - before_fwd, peak - before, after - before, grads, (peak - before) / grads);
  benchmark::DoNotOptimize(probe.grad().data_ptr());
}
void report_peak_memory() {
  at::set_num_threads(1);
  {
    auto a = leaf(N, 1), b = leaf(N, 2), c = leaf(N, 3), d = leaf(N, 4), e = leaf(N, 5);
    peak_memory("torch_AG1", 5 * N * 4, a, [&] { return ag1_loss(a, b, c, d, e); });
  }
  {
    auto a = leaf(N2, -0.5), b = leaf(N2, -0.5), c = leaf(N2, -0.5);
    peak_memory("torch_AG2", 3 * N2 * 4, a, [&] { return ag2_loss(a, b, c); });
  }
  std::fflush(stdout);
}
}  // namespace

BENCHMARK(torch_AG1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(torch_AG1_accumulate)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(torch_AG2)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  report_peak_memory();  // first, while nothing else has touched memory
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
