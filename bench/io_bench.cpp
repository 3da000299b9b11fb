// SPDX-License-Identifier: MIT
// Loading a 1 GiB tensor (2^28 float32): a .safetensors file mapped (time to the first use of
// the tensor, and to a sum over all of it) beside reading it all (load_npy of the same data,
// and a plain read of the file's bytes into memory, the floor of any reader that copies).
// NumPy's np.load(mmap_mode='r') and np.load of the same files: tools/bench_io_numpy.py.
// The files are written once to STRATA_IO_BENCH_DIR (default /tmp) and stay in the page cache,
// so the figures are for a warm cache: what mapping saves is the copy, not the disk.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
import strata;

namespace st = strata;

namespace {
constexpr std::int64_t n = std::int64_t{1} << 28;  // 1 GiB of float32

std::string dir() {
  const char* d = std::getenv("STRATA_IO_BENCH_DIR");
  return d ? d : "/tmp";
}
const std::string& safetensors_path() {
  static const std::string p = [] {
    const std::string path = dir() + "/strata_io_bench.safetensors";
    if (!std::filesystem::exists(path) || std::filesystem::file_size(path) < static_cast<std::uintmax_t>(4 * n))
      st::save_safetensors<float>(path, {{"w", st::arange<float>(n) / 1024.0f}});
    return path;
  }();
  return p;
}
const std::string& npy_path() {
  static const std::string p = [] {
    const std::string path = dir() + "/strata_io_bench.npy";
    if (!std::filesystem::exists(path) || std::filesystem::file_size(path) < static_cast<std::uintmax_t>(4 * n))
      st::save_npy(path, st::Tensor<float>(st::arange<float>(n) / 1024.0f));
    return path;
  }();
  return p;
}

// Open, look the tensor up and read one element: what a program waits for before it can start.
void BM_safetensors_first_use(benchmark::State& state) {
  const std::string& path = safetensors_path();
  for (auto _ : state) {
    const st::SafetensorsFile f(path);
    const auto w = f.get<float>("w");
    benchmark::DoNotOptimize(w.data_ptr()[n / 2]);
  }
}
// Open and sum every element: every page of the mapping touched once.
void BM_safetensors_sum_all(benchmark::State& state) {
  const std::string& path = safetensors_path();
  for (auto _ : state) {
    const st::SafetensorsFile f(path);
    benchmark::DoNotOptimize(st::sum(f.get<float>("w")).item());
  }
  state.SetBytesProcessed(state.iterations() * 4 * n);
}
// load_npy reads all of it into a fresh tensor, then one element is used.
void BM_npy_load_all(benchmark::State& state) {
  const std::string& path = npy_path();
  for (auto _ : state) {
    const auto w = st::load_npy<float>(path);
    benchmark::DoNotOptimize(w.data_ptr()[n / 2]);
  }
  state.SetBytesProcessed(state.iterations() * 4 * n);
}
// The floor of reading it all: the file's bytes with read(2), a MiB at a time, into a buffer
// on 2 MiB pages (as strata's storage of this size is: on 4 KiB pages the same reads took 1.45 s
// on the machine of docs/PERFORMANCE.md, a virtual machine where each page costs a nested walk).
void BM_read_file(benchmark::State& state) {
  const std::string& path = safetensors_path();
  const std::size_t size = std::filesystem::file_size(path);
  const std::size_t huge = std::size_t{1} << 21, bytes = (size + huge - 1) / huge * huge;
  char* buffer = static_cast<char*>(std::aligned_alloc(huge, bytes));
  madvise(buffer, bytes, MADV_HUGEPAGE);
  std::memset(buffer, 0, bytes);
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    for (std::size_t at = 0; at < size;) {
      const ssize_t got = ::read(fd, buffer + at, std::min<std::size_t>(size - at, std::size_t{1} << 20));
      if (got <= 0) break;
      at += static_cast<std::size_t>(got);
    }
    ::close(fd);
    benchmark::DoNotOptimize(buffer[size / 2]);
  }
  std::free(buffer);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(size));
}
}  // namespace

BENCHMARK(BM_safetensors_first_use)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_safetensors_sum_all)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_npy_load_all)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_read_file)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
