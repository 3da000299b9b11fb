// SPDX-License-Identifier: MIT
// Sampling 2^24 floats: strata's uniform_ and normal_ (what rand and randn run, into a
// preallocated tensor so that no allocation is timed) on 1 and 2 threads, beside hand loops
// in the same binary: the same Philox4x32-10 stream with the same conversions written as a
// plain scalar loop (strata::philox4x32_10, std::log/cos/sin), and std::mt19937 with
// std::uniform_real_distribution / std::normal_distribution for reference. Bytes counted:
// every output element written once.
#include <benchmark/benchmark.h>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>
import strata;

namespace {
constexpr std::int64_t N = std::int64_t{1} << 24;
constexpr std::uint64_t seed = 1234;

void bytes(benchmark::State& s) { s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * N * 4); }
struct threads_guard {
  explicit threads_guard(int n) { strata::set_num_threads(n); }
  ~threads_guard() { strata::set_num_threads(1); }
};

std::array<std::uint32_t, 4> block(std::uint64_t c) {
  return strata::philox4x32_10({static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32), 0, 0},
                               {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

// ---- uniform [0, 1) ----
void rand_strata(benchmark::State& s) {
  threads_guard g(static_cast<int>(s.range(0)));
  strata::generator gen(seed);
  auto t = strata::zeros<float>({N});  // touched: no page faults timed
  for (auto _ : s) {
    strata::uniform_(t, 0, 1, gen);
    benchmark::ClobberMemory();
  }
  bytes(s);
}
void rand_hand_philox(benchmark::State& s) {
  std::vector<float> out(static_cast<std::size_t>(N));
  std::uint64_t offset = 0;
  for (auto _ : s) {
    float* p = out.data();
    for (std::int64_t j = 0; j < N / 4; ++j) {
      const auto w = block(offset + static_cast<std::uint64_t>(j));
      for (int k = 0; k < 4; ++k) p[4 * j + k] = static_cast<float>(w[static_cast<std::size_t>(k)] >> 8) * 0x1p-24f;
    }
    offset += N / 4;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  bytes(s);
}
void rand_hand_mt19937(benchmark::State& s) {
  std::vector<float> out(static_cast<std::size_t>(N));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (auto _ : s) {
    for (float& v : out) v = dist(engine);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  bytes(s);
}

// ---- standard normal ----
void randn_strata(benchmark::State& s) {
  threads_guard g(static_cast<int>(s.range(0)));
  strata::generator gen(seed);
  auto t = strata::zeros<float>({N});
  for (auto _ : s) {
    strata::normal_(t, 0, 1, gen);
    benchmark::ClobberMemory();
  }
  bytes(s);
}
void randn_hand_philox(benchmark::State& s) {
  std::vector<float> out(static_cast<std::size_t>(N));
  std::uint64_t offset = 0;
  for (auto _ : s) {
    float* p = out.data();
    for (std::int64_t j = 0; j < N / 4; ++j) {
      const auto w = block(offset + static_cast<std::uint64_t>(j));
      for (int k = 0; k < 4; k += 2) {  // Box-Muller on words (k, k + 1)
        const float u1 = static_cast<float>(static_cast<std::int32_t>(w[static_cast<std::size_t>(k)] >> 1)) * 0x1p-31f + 0x1p-32f;
        const float angle = static_cast<float>(w[static_cast<std::size_t>(k + 1)] >> 8) * 0x1p-24f * 6.2831853f;
        const float r = std::sqrt(-2.0f * std::log(u1));
        p[4 * j + k] = r * std::cos(angle);
        p[4 * j + k + 1] = r * std::sin(angle);
      }
    }
    offset += N / 4;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  bytes(s);
}
void randn_hand_mt19937(benchmark::State& s) {
  std::vector<float> out(static_cast<std::size_t>(N));
  std::mt19937 engine(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto _ : s) {
    for (float& v : out) v = dist(engine);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  bytes(s);
}
}  // namespace

BENCHMARK(rand_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(rand_hand_philox)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(rand_hand_mt19937)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_hand_philox)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_hand_mt19937)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
