// SPDX-License-Identifier: MIT
// samples/digits_mlp.cpp and samples/digits_cnn.cpp trained data-parallel (strata.distributed,
// torch's DistributedDataParallel): every rank holds the whole model, takes its share of each
// global batch (rank r: images r, r + world, r + 2 world, ... of the batch, as torch's
// DistributedSampler deals them), and DistributedDataParallel averages the gradients over the
// ranks during the backward. Each rank's loss is its images' share of the global batch's mean,
// so the average gradient is the one-process gradient of the same batch: for the MLP,
// `mpirun -np 2` prints the loss curve and accuracy of `mpirun -np 1` (to rounding). The CNN's
// batch norm normalises each rank's images by their own statistics (as torch's DDP without
// SyncBatchNorm) and its dropout draws per rank, so its curve is close to, not the same as,
// the one-process run; its running statistics are rank 0's on every rank (broadcast_buffers).
// Usage: mpirun -np 2 digits_ddp [mlp|cnn] [data directory]  (README: running as root, a hostfile)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>
import strata;
import strata.distributed;

namespace st = strata;
namespace nn = strata::nn;
namespace F = strata::nn::functional;
namespace dist = strata::distributed;

namespace {
// A [fan_in, fan_out] weight matrix uniform in +-1/sqrt(fan_in), as torch.nn.Linear starts.
st::Tensor<float> uniform_weights(std::int64_t fan_in, std::int64_t fan_out, std::mt19937& rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::vector<float> w(static_cast<std::size_t>(fan_in * fan_out));
  for (float& v : w) v = uniform(rng);
  return st::from_vector<float>(w, {fan_in, fan_out});
}
}  // namespace

// The two-layer perceptron of digits_mlp.cpp; true when the test accuracy is above 90%.
bool train_mlp(const std::string& dir) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const auto images = st::load_npy<std::uint8_t>(dir + "/digits_images.npy");  // [1797, 64], 0..16
  const auto labels = st::load_npy<std::int64_t>(dir + "/digits_labels.npy");  // [1797], 0..9
  st::Tensor<float> x = images / 16.0f;
  st::Tensor<float> onehot = st::cast<float>(labels.unsqueeze(1) == st::arange<std::int64_t>(10));
  // Every fifth image is held out for testing, as in digits_mlp.
  auto fives = [](const st::Tensor<float>& t) { return t.narrow(0, 0, 1795).view({359, 5, t.size(1)}); };
  const st::Tensor<float> x_train = fives(x).narrow(1, 0, 4).reshape({-1, 64});
  const st::Tensor<float> y_train = fives(onehot).narrow(1, 0, 4).reshape({-1, 10});
  const st::Tensor<float> x_test = fives(x).select(1, 4);
  const st::Tensor<float> y_test = fives(onehot).select(1, 4);

  std::mt19937 rng(42);
  const std::int64_t hidden = 64;
  auto w1 = uniform_weights(64, hidden, rng).requires_grad_();
  auto b1 = st::zeros<float>({hidden}).requires_grad_();
  auto w2 = uniform_weights(hidden, 10, rng).requires_grad_();
  auto b2 = st::zeros<float>({10}).requires_grad_();
  auto logits = [&](const st::Tensor<float>& in) {
    st::Tensor<float> h = st::relu(st::matmul(in, w1) + b1);
    return st::Tensor<float>(st::matmul(h, w2) + b2);
  };
  // Rank 0's parameters go to every rank; gradients are averaged during each backward.
  dist::DistributedDataParallel ddp({w1, b1, w2, b2});

  st::optim::SGD opt({w1, b1, w2, b2}, st::optim::SGDOptions(0.1));
  st::optim::CosineAnnealingLR schedule(opt, 20);
  const std::int64_t batch = 20, n = x_train.size(0);
  for (int epoch = 1; epoch <= 20; ++epoch) {
    double mine_total = 0;  // this rank's share of the epoch's summed loss
    for (std::int64_t i = 0; i < n; i += batch) {
      const std::int64_t rows = std::min(batch, n - i);
      // This rank's images of the batch: every world-th, from its rank on.
      const auto mine = st::arange<std::int64_t>(rank, rows, world) + i;
      const auto xb = x_train.index_select(0, mine), yb = y_train.index_select(0, mine);
      opt.zero_grad();
      // The sum of -log p(true digit) over this rank's images, scaled so that the average over
      // the ranks is the mean over the whole batch.
      auto z = logits(xb);
      st::Tensor<float> nll = -st::sum(yb * st::log_softmax(z, 1));
      st::Tensor<float> loss = nll * (static_cast<float>(world) / static_cast<float>(rows));
      loss.backward();
      opt.step();
      mine_total += static_cast<double>(nll.item());
    }
    schedule.step();
    auto total = st::tensor<double>({mine_total});
    dist::all_reduce(total);  // the epoch's loss over every rank's images
    if (rank == 0)
      std::cout << "epoch " << std::setw(2) << epoch << "  loss " << std::fixed << std::setprecision(4)
                << total.item() / static_cast<double>(n) << "\n";
  }

  st::no_grad guard;
  st::Tensor<float> z = logits(x_test);
  const float right = st::sum(y_test * st::cast<float>(z == st::amax(z, {1}, true))).item();
  const float accuracy = right / static_cast<float>(x_test.size(0));
  if (rank == 0)
    std::cout << "test accuracy " << std::setprecision(2) << 100 * accuracy << "% (" << static_cast<int>(right)
              << " of " << x_test.size(0) << ") on " << world << (world == 1 ? " rank" : " ranks")
              << (accuracy > 0.9f ? "\n" : ": not above 90%, FAILED\n");
  return accuracy > 0.9f;
}

// The convolutional network of digits_cnn.cpp.
struct Net : nn::Module<float> {
  std::shared_ptr<nn::Sequential<float>> features = register_module(
      "features", std::make_shared<nn::Sequential<float>>(
                      nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::BatchNorm2d(16), nn::ReLU(), nn::MaxPool2d(2),
                      nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2)));
  std::shared_ptr<nn::Dropout<float>> dropout = register_module("dropout", std::make_shared<nn::Dropout<float>>(0.25));
  std::shared_ptr<nn::Linear<float>> head = register_module("head", std::make_shared<nn::Linear<float>>(32 * 2 * 2, 10));

  st::Tensor<float> forward(const st::Tensor<float>& x) {
    return head->forward(dropout->forward(features->forward(x).flatten(1)));
  }
};

// digits_cnn.cpp data-parallel: a shared permutation per epoch (the same seed on every rank),
// each rank on its share of every batch of 64; true when the test accuracy is at least 97%.
bool train_cnn(const std::string& dir) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const auto images = st::load_npy<std::uint8_t>(dir + "/digits_images.npy");
  const auto labels = st::load_npy<std::int64_t>(dir + "/digits_labels.npy");
  const st::Tensor<float> x = (images / 16.0f).view({-1, 1, 8, 8});
  const st::Tensor<float> x_groups = x.narrow(0, 0, 1795).view({359, 5, 1, 8, 8});
  const st::Tensor<std::int64_t> y_groups = labels.narrow(0, 0, 1795).view({359, 5});
  const st::Tensor<float> x_train = x_groups.narrow(1, 0, 4).reshape({-1, 1, 8, 8});
  const st::Tensor<std::int64_t> y_train = y_groups.narrow(1, 0, 4).reshape({-1});
  const st::Tensor<float> x_test = x_groups.select(1, 4);
  const st::Tensor<std::int64_t> y_test = y_groups.select(1, 4);

  st::manual_seed(0);
  Net model;
  dist::DistributedDataParallel ddp(model);  // parameters and batch norm's running statistics
  const int epochs = 40;
  st::optim::AdamW opt(model.parameters(), st::optim::AdamWOptions(3e-3).weight_decay(1e-4));
  st::optim::CosineAnnealingLR sched(opt, epochs);
  const std::int64_t n = x_train.size(0), batch = 64;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    model.train();
    const auto perm = st::randperm(n);
    double mine_total = 0;
    for (std::int64_t i = 0; i < n; i += batch) {
      const std::int64_t rows = std::min(batch, n - i);
      const auto idx = perm.narrow(0, i, rows).index_select(0, st::arange<std::int64_t>(rank, rows, world));
      st::Tensor<float> nll = F::cross_entropy(model.forward(x_train.index_select(0, idx)), y_train.index_select(0, idx),
                                               F::CrossEntropyFuncOptions().reduction("sum"));
      st::Tensor<float> loss = nll * (static_cast<float>(world) / static_cast<float>(rows));
      opt.zero_grad();
      loss.backward();
      opt.step();
      mine_total += static_cast<double>(nll.item());
    }
    sched.step();
    auto total = st::tensor<double>({mine_total});
    dist::all_reduce(total);
    if (rank == 0)
      std::cout << "epoch " << std::setw(2) << epoch << "  loss " << std::fixed << std::setprecision(4)
                << total.item() / static_cast<double>(n) << "\n";
  }
  model.eval();
  st::no_grad guard;
  const auto predicted = st::argmax(model.forward(x_test), 1);
  const double accuracy = st::mean(st::cast<double>(predicted == y_test)).item();
  if (rank == 0)
    std::cout << "test accuracy " << std::setprecision(2) << 100 * accuracy << "% of " << x_test.size(0) << " on "
              << world << (world == 1 ? " rank" : " ranks") << (accuracy >= 0.97 ? "\n" : ": below 97%, FAILED\n");
  return accuracy >= 0.97;
}

int main(int argc, char** argv) {
  dist::init_process_group();
  const std::string model = argc > 1 ? argv[1] : "mlp";
  const std::string dir = argc > 2 ? argv[2] : STRATA_DIGITS_DIR;
  const bool ok = model == "cnn" ? train_cnn(dir) : train_mlp(dir);
  dist::destroy_process_group();
  return ok ? 0 : 1;
}
