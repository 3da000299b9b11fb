// SPDX-License-Identifier: MIT
// A two-layer perceptron learns scikit-learn's 8x8 handwritten digits (samples/data, exported by
// tools/export_digits.py): 64 pixels -> 64 hidden units (ReLU) -> 10 logits, a numerically
// stable log-softmax, the negative log-likelihood, autograd and minibatch SGD (strata::optim) with
// a cosine learning-rate schedule. Prints the
// loss per epoch and the test accuracy; exits with 1 unless the accuracy is above 90%.
// Usage: digits_mlp [data directory]  (default: the source tree's samples/data)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>
import strata;

namespace st = strata;

namespace {
// A [fan_in, fan_out] weight matrix uniform in +-1/sqrt(fan_in), as torch.nn.Linear starts
// (strata has no random tensors yet, so std::mt19937 fills a vector).
st::Tensor<float> uniform_weights(std::int64_t fan_in, std::int64_t fan_out, std::mt19937& rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::vector<float> w(static_cast<std::size_t>(fan_in * fan_out));
  for (float& v : w) v = uniform(rng);
  return st::from_vector<float>(w, {fan_in, fan_out});
}

// log(softmax(z)) over each row. Subtracting the row's maximum m cancels out mathematically but
// keeps exp() from overflowing; m is a constant for backward (detach), as in torch.log_softmax.
st::Tensor<float> log_softmax(const st::Tensor<float>& z) {
  auto s = z - st::amax(z, {1}, true).eval().detach();
  return s - st::log(st::sum(st::exp(s), {1}, true));
}
}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : STRATA_DIGITS_DIR;
  const auto images = st::load_npy<std::uint8_t>(dir + "/digits_images.npy");  // [1797, 64], 0..16
  const auto labels = st::load_npy<std::int64_t>(dir + "/digits_labels.npy");  // [1797], 0..9
  st::Tensor<float> x = images / 16.0f;  // pixels in [0, 1] (uint8 / float scalar is float32)
  // One row per image, 1 in the column of its digit: the loss reads the true class through it.
  st::Tensor<float> onehot = st::cast<float>(labels.unsqueeze(1) == st::arange<std::int64_t>(10));

  // Every fifth image is held out for testing (359 of them; the last two images are left out
  // so that the images group by five). The file is not in random order, so a held-out tail
  // would test on other writers than the training set's; the views below need no copies
  // except reshape, which gathers the four training images of each group into [1436, 64].
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
    st::Tensor<float> h = st::relu(st::matmul(in, w1) + b1);  // [batch, hidden]; b1 broadcasts
    return st::Tensor<float>(st::matmul(h, w2) + b2);         // [batch, 10]
  };

  st::optim::SGD opt({w1, b1, w2, b2}, st::optim::SGDOptions(0.1));
  st::optim::CosineAnnealingLR schedule(opt, 20);  // from 0.1 down to 0 over the 20 epochs
  const std::int64_t batch = 20, n = x_train.size(0);
  for (int epoch = 1; epoch <= 20; ++epoch) {
    double total = 0;
    for (std::int64_t i = 0; i < n; i += batch) {
      const std::int64_t rows = std::min(batch, n - i);
      // The mean over the batch of -log p(true digit).
      opt.zero_grad();  // gradients accumulate across backward calls, as in PyTorch
      st::Tensor<float> loss =
          -st::mean(st::sum(y_train.narrow(0, i, rows) * log_softmax(logits(x_train.narrow(0, i, rows))), {1}));
      loss.backward();
      opt.step();
      total += static_cast<double>(loss.item()) * static_cast<double>(rows);
    }
    schedule.step();
    std::cout << "epoch " << std::setw(2) << epoch << "  loss " << std::fixed << std::setprecision(4)
              << total / static_cast<double>(n) << "\n";
  }

  // No argmax yet: an image counts as right when its true digit's logit is the row's largest
  // (a tie, which float logits all but never have, would count too).
  st::no_grad guard;
  st::Tensor<float> z = logits(x_test);
  const float right = st::sum(y_test * st::cast<float>(z == st::amax(z, {1}, true))).item();
  const float accuracy = right / static_cast<float>(x_test.size(0));
  std::cout << "test accuracy " << std::setprecision(2) << 100 * accuracy << "% (" << static_cast<int>(right)
            << " of " << x_test.size(0) << ")" << (accuracy > 0.9f ? "\n" : ": not above 90%, FAILED\n");
  return accuracy > 0.9f ? 0 : 1;
}
