// SPDX-License-Identifier: MIT
// The dispatch overhead of AnyTensor: c = a + b (float32, contiguous) through the run-time
// dtype handle beside Tensor<float>, at 100 elements (where the per-call work shows) and at
// 2^24 (where the loop dominates); also a + 0-dim float64 (promoted to float32 by result_type)
// and a + a wrapped number. Each call makes a new tensor, as `c = a + b` does in PyTorch.
#include <benchmark/benchmark.h>
#include <cstdint>
import strata;

namespace st = strata;

namespace {
void typed_add(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const st::Tensor<float> a = st::rand<float>({n}), b = st::rand<float>({n});
  for (auto _ : state) {
    st::Tensor<float> c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 12);
}
void any_add(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const st::AnyTensor a = st::rand<float>({n}), b = st::rand<float>({n});
  for (auto _ : state) {
    st::AnyTensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 12);
}
void typed_add_number(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const st::Tensor<float> a = st::rand<float>({n});
  for (auto _ : state) {
    st::Tensor<float> c = a + 2.5;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}
void any_add_number(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const st::AnyTensor a = st::rand<float>({n});
  for (auto _ : state) {
    st::AnyTensor c = a + 2.5;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}
void any_add_zero_dim_double(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const st::AnyTensor a = st::rand<float>({n}), s = st::scalar_tensor<double>(2.5);
  for (auto _ : state) {
    st::AnyTensor c = a + s;  // float32: the 0-dim double is converted, the dimensioned tensor is not
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * 8);
}
}  // namespace

BENCHMARK(typed_add)->Arg(100)->Arg(1 << 24)->UseRealTime();
BENCHMARK(any_add)->Arg(100)->Arg(1 << 24)->UseRealTime();
BENCHMARK(typed_add_number)->Arg(100)->Arg(1 << 24)->UseRealTime();
BENCHMARK(any_add_number)->Arg(100)->Arg(1 << 24)->UseRealTime();
BENCHMARK(any_add_zero_dim_double)->Arg(100)->Arg(1 << 24)->UseRealTime();
BENCHMARK_MAIN();
