// SPDX-License-Identifier: MIT
// strata.distributed under `mpirun -np 2` (plain timing: Google Benchmark's runner does not
// coordinate ranks). Part 1: all_reduce (sum) of float32 tensors of 4 KiB - 256 MiB, bus
// bandwidth (bytes * 2 (n - 1) / n per second, NCCL's definition) of raw MPI_Allreduce on the
// same buffer, of strata's all_reduce of a contiguous tensor, and of a strided one (every other
// row of a [rows, 2, 256] buffer: packed and unpacked by the fused engine). Part 2: a data-
// parallel training step (an MLP, forward + backward + SGD) without communication (no_sync),
// with DistributedDataParallel's all-reduce after the backward, and overlapped with it; the
// hidden fraction is the share of the communication time the overlap removed from the step.
// Every figure is the median over repetitions, timed between barriers, on rank 0.
// Usage: mpirun -np 2 distributed_bench [max MiB (256)]
#include <mpi.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
import strata;
import strata.distributed;
namespace st = strata;
namespace dist = strata::distributed;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// The median times of each of fs over reps rounds, the functions interleaved within a round
// (so that all see the same machine), each run started together on every rank; a run's time
// is the maximum over the ranks (a collective is as slow as its slowest rank).
std::vector<double> median_seconds(int reps, const std::vector<std::function<void()>>& fs) {
  std::vector<std::vector<double>> times(fs.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < fs.size(); ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      fs[k]();
      double t = seconds_since(t0), slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      times[k].push_back(slowest);
    }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

void all_reduce_bandwidth(std::int64_t max_mib, int rank, int world) {
  if (rank == 0)
    std::printf("all_reduce float32, %d ranks: bus bandwidth GB/s (median)\n%10s %10s %10s %8s %10s %8s\n", world,
                "bytes", "MPI", "strata", "ratio", "strided", "ratio");
  const double bus = 2.0 * (world - 1) / world;
  for (std::int64_t bytes = 4096; bytes <= max_mib * 1024 * 1024; bytes *= 4) {
    const std::int64_t n = bytes / 4;
    const int reps = bytes <= (1 << 20) ? 200 : bytes <= (16 << 20) ? 30 : 9;
    const st::Tensor<float> t = st::full({n}, 1.0f);
    const st::AnyTensor any = t;
    // Every other row of 256 floats (1 KiB runs): half of a buffer twice the size.
    const std::int64_t rows = std::max<std::int64_t>(n / 256, 1), cols = n / rows;
    const st::AnyTensor strided = st::AnyTensor(st::full({rows, 2, cols}, 1.0f)).select(1, 0);
    const std::vector<double> m = median_seconds(
        reps, {[&] { MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
               [&] { dist::all_reduce(any); }, [&] { dist::all_reduce(strided); }});
    const double mpi = m[0], ours = m[1], gap = m[2];
    if (rank == 0) {
      const double b = static_cast<double>(bytes) * bus / 1e9;
      std::printf("%10lld %10.2f %10.2f %8.2f %10.2f %8.2f\n", static_cast<long long>(bytes), b / mpi, b / ours,
                  mpi / ours, b / gap, ours / gap);
    }
  }
}

// An MLP of `layers` [width, width] layers (tanh) on a batch, float32, the mean squared error.
struct model {
  std::vector<st::Tensor<float>> weights, biases;
  model(int layers, std::int64_t width) {
    for (int l = 0; l < layers; ++l) {
      weights.push_back((st::randn({width, width}) / std::sqrt(static_cast<float>(width))).eval().requires_grad_());
      biases.push_back(st::zeros<float>({width}).requires_grad_());
    }
  }
  std::vector<st::AnyTensor> parameters() const {
    std::vector<st::AnyTensor> ps;
    for (std::size_t l = 0; l < weights.size(); ++l) {
      ps.push_back(weights[l]);
      ps.push_back(biases[l]);
    }
    return ps;
  }
  void step(const st::Tensor<float>& x, const st::Tensor<float>& y) const {
    st::Tensor<float> h = x;
    for (std::size_t l = 0; l < weights.size(); ++l) h = st::tanh(h.matmul(weights[l]) + biases[l]);
    st::Tensor<float> loss = ((h - y) * (h - y)).mean();
    loss.backward();
    st::no_grad guard;
    for (std::size_t l = 0; l < weights.size(); ++l) {
      weights[l] -= 0.01f * weights[l].grad();
      biases[l] -= 0.01f * biases[l].grad();
      weights[l].grad().zero_();
      biases[l].grad().zero_();
    }
  }
};

void ddp_step(int rank, int world) {
  const int layers = 8;
  const std::int64_t width = 1024, batch = 64;
  const st::Tensor<float> x = st::randn({batch, width}), y = st::randn({batch, width});
  if (rank == 0)
    std::printf("\ndata-parallel step: %d x [%lld, %lld] float32 layers (%.1f MiB of gradients), batch %lld per "
                "rank, %d ranks; ms (median of 21, the three modes interleaved)\n",
                layers, static_cast<long long>(width), static_cast<long long>(width),
                layers * (width * width + width) * 4.0 / (1 << 20), static_cast<long long>(batch), world);
  for (const double cap : {25.0, 4.0}) {
    // Three models, one per mode: no communication (no_sync), all-reduce after the backward,
    // all-reduce overlapped with it.
    const model m0(layers, width), m1(layers, width), m2(layers, width);
    dist::DistributedDataParallel d0(m0.parameters(), dist::DDPOptions().bucket_cap(cap));
    dist::DistributedDataParallel d1(m1.parameters(), dist::DDPOptions().bucket_cap(cap).overlap_backward(false));
    dist::DistributedDataParallel d2(m2.parameters(), dist::DDPOptions().bucket_cap(cap));
    for (const model* m : {&m0, &m1, &m2}) m->step(x, y);  // warm-up: the buckets become the gradients
    double waits[3] = {};
    const std::vector<double> t = median_seconds(21, {[&] {
                                                       auto guard = d0.no_sync();
                                                       m0.step(x, y);
                                                     },
                                                     [&] {
                                                       m1.step(x, y);
                                                       waits[1] += d1.last_wait_seconds();
                                                     },
                                                     [&] {
                                                       m2.step(x, y);
                                                       waits[2] += d2.last_wait_seconds();
                                                     }});
    if (rank == 0) {
      const double comm = t[1] - t[0], hidden = (t[1] - t[2]) / comm;
      std::printf("%.0f MiB buckets (%zu): no communication %.2f, all-reduce after the backward %.2f (waited %.2f), "
                  "overlapped %.2f (waited %.2f); communication %.2f ms, hidden by the overlap %.0f%%\n",
                  cap, d2.buckets().size(), 1e3 * t[0], 1e3 * t[1], 1e3 * waits[1] / 21, 1e3 * t[2],
                  1e3 * waits[2] / 21, 1e3 * comm, 100 * hidden);
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  dist::init_process_group();
  st::set_num_threads(1);  // one core per rank
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const std::int64_t max_mib = argc > 1 ? std::atoll(argv[1]) : 256;
  all_reduce_bandwidth(max_mib, rank, world);
  ddp_step(rank, world);
  dist::destroy_process_group();
  return 0;
}
