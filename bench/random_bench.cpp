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

// strata: sample(t, gen) into a touched tensor (no page faults timed), on s.range(0) threads.
template <class Sample>
void strata_case(benchmark::State& s, Sample sample) {
  threads_guard g(static_cast<int>(s.range(0)));
  strata::generator gen(seed);
  auto t = strata::zeros<float>({N});
  for (auto _ : s) {
    sample(t, gen);
    benchmark::ClobberMemory();
  }
  bytes(s);
}
// A hand loop: fill(out) over a touched vector.
template <class Fill>
void hand_case(benchmark::State& s, Fill fill) {
  std::vector<float> out(static_cast<std::size_t>(N));
  for (auto _ : s) {
    fill(out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  bytes(s);
}
// The Philox stream as a plain loop: four floats per block, from per_block(words, out).
template <class PerBlock>
void philox_case(benchmark::State& s, PerBlock per_block) {
  std::uint64_t offset = 0;
  hand_case(s, [&](float* p) {
    for (std::int64_t j = 0; j < N / 4; ++j) per_block(block(offset + static_cast<std::uint64_t>(j)), p + 4 * j);
    offset += N / 4;
  });
}
template <class Distribution>
void mt19937_case(benchmark::State& s, Distribution dist) {
  std::mt19937 engine(seed);
  hand_case(s, [&](float* p) {
    for (std::int64_t i = 0; i < N; ++i) p[i] = dist(engine);
  });
}

// ---- uniform [0, 1) ----
void rand_strata(benchmark::State& s) {
  strata_case(s, [](const strata::Tensor<float>& t, strata::generator& gen) { strata::uniform_(t, 0, 1, gen); });
}
void rand_hand_philox(benchmark::State& s) {
  philox_case(s, [](const std::array<std::uint32_t, 4>& w, float* p) {
    for (std::size_t k = 0; k < 4; ++k) p[k] = static_cast<float>(w[k] >> 8) * 0x1p-24f;
  });
}
void rand_hand_mt19937(benchmark::State& s) { mt19937_case(s, std::uniform_real_distribution<float>(0.0f, 1.0f)); }

// ---- standard normal ----
void randn_strata(benchmark::State& s) {
  strata_case(s, [](const strata::Tensor<float>& t, strata::generator& gen) { strata::normal_(t, 0, 1, gen); });
}
void randn_hand_philox(benchmark::State& s) {
  philox_case(s, [](const std::array<std::uint32_t, 4>& w, float* p) {
    for (std::size_t k = 0; k < 4; k += 2) {  // Box-Muller on words (k, k + 1)
      const float u1 = static_cast<float>(static_cast<std::int32_t>(w[k] >> 1)) * 0x1p-31f + 0x1p-32f;
      const float angle = static_cast<float>(w[k + 1] >> 8) * 0x1p-24f * 6.2831853f;
      const float r = std::sqrt(-2.0f * std::log(u1));
      p[k] = r * std::cos(angle);
      p[k + 1] = r * std::sin(angle);
    }
  });
}
void randn_hand_mt19937(benchmark::State& s) { mt19937_case(s, std::normal_distribution<float>(0.0f, 1.0f)); }
}  // namespace

BENCHMARK(rand_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(rand_hand_philox)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(rand_hand_mt19937)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_strata)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_hand_philox)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(randn_hand_mt19937)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
