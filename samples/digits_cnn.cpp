// SPDX-License-Identifier: MIT
// A small convolutional network learns scikit-learn's 8x8 handwritten digits (samples/data),
// ported line by line from this PyTorch program:
//
//   class Net(nn.Module):
//       def __init__(self):
//           super().__init__()
//           self.features = nn.Sequential(
//               nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
//               nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
//           self.dropout = nn.Dropout(0.25)
//           self.head = nn.Linear(32 * 2 * 2, 10)
//       def forward(self, x):
//           return self.head(self.dropout(self.features(x).flatten(1)))
//
//   model = Net()
//   opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
//   sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
//   for epoch in range(epochs):
//       model.train()
//       perm = torch.randperm(n)
//       for i in range(0, n, 64):
//           idx = perm[i:i + 64]
//           loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
//           opt.zero_grad(); loss.backward(); opt.step()
//       sched.step()
//   model.eval()
//   accuracy = (model(x_test).argmax(1) == y_test).float().mean()
//   torch.save(model.state_dict(), path)   # then a new Net loads it and predicts the same
//
// Prints the loss per epoch and the test accuracy; exits with 1 unless the accuracy is at least
// 98% and the reloaded model predicts exactly what the trained one does.
// Usage: digits_cnn [data directory]  (default: the source tree's samples/data)
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
import strata;

namespace st = strata;
namespace nn = strata::nn;
namespace F = strata::nn::functional;

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

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : STRATA_DIGITS_DIR;
  const auto images = st::load_npy<std::uint8_t>(dir + "/digits_images.npy");  // [1797, 64], 0..16
  const auto labels = st::load_npy<std::int64_t>(dir + "/digits_labels.npy");  // [1797], 0..9
  const st::Tensor<float> pixels = images / 16.0f;  // in [0, 1]
  const st::Tensor<float> x = pixels.view({-1, 1, 8, 8});

  // Every fifth image is held out for testing, as in digits_mlp.
  const st::Tensor<float> x_groups = x.narrow(0, 0, 1795).view({359, 5, 1, 8, 8});
  const st::Tensor<std::int64_t> y_groups = labels.narrow(0, 0, 1795).view({359, 5});
  const st::Tensor<float> x_train = x_groups.narrow(1, 0, 4).reshape({-1, 1, 8, 8});
  const st::Tensor<std::int64_t> y_train = y_groups.narrow(1, 0, 4).reshape({-1});
  const st::Tensor<float> x_test = x_groups.select(1, 4);
  const st::Tensor<std::int64_t> y_test = y_groups.select(1, 4);

  st::manual_seed(0);
  Net model;
  const int epochs = 40;
  st::optim::AdamW opt(model.parameters(), st::optim::AdamWOptions(3e-3).weight_decay(1e-4));
  st::optim::CosineAnnealingLR sched(opt, epochs);
  const std::int64_t n = x_train.size(0), batch = 64;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    model.train();
    const auto perm = st::randperm(n);
    double total = 0;
    for (std::int64_t i = 0; i < n; i += batch) {
      const auto idx = perm.narrow(0, i, std::min(batch, n - i));
      auto loss = F::cross_entropy(model.forward(x_train.index_select(0, idx)), y_train.index_select(0, idx));
      opt.zero_grad();
      loss.backward();
      opt.step();
      total += static_cast<double>(loss.item()) * static_cast<double>(idx.size(0));
    }
    sched.step();
    std::cout << "epoch " << std::setw(2) << epoch << "  loss " << std::fixed << std::setprecision(4)
              << total / static_cast<double>(n) << "\n";
  }

  model.eval();
  st::no_grad guard;
  const auto predicted = st::argmax(model.forward(x_test), 1);
  const double accuracy = st::mean(st::cast<double>(predicted == y_test)).item();
  std::cout << "test accuracy " << std::setprecision(2) << 100 * accuracy << "% of " << x_test.size(0) << "\n";

  // Saved as .npz (np.load reads it: one array per parameter and running statistic), then
  // loaded into a freshly initialised network.
  const std::string path = "digits_cnn.npz";
  nn::save(model, path);
  Net reloaded;
  nn::load(reloaded, path);
  reloaded.eval();
  const bool same = st::Tensor<bool>(st::all(st::argmax(reloaded.forward(x_test), 1) == predicted)).item();
  std::cout << "reloaded from " << path << ": " << (same ? "same predictions" : "DIFFERENT predictions") << "\n";
  const bool ok = accuracy >= 0.98 && same;
  if (!ok) std::cout << "FAILED: expected at least 98% and the same predictions after reloading\n";
  return ok ? 0 : 1;
}
