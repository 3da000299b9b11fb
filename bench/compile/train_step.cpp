// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): an MLP training step as a user writes
// it. Two hidden layers (relu, tanh), the cross-entropy written out with log_softmax and
// gather, backward(), SGD with momentum under no_grad, a few epochs over random data.
// Twin: torch_train_step.cpp.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

import strata;

namespace st = strata;

int main() {
  st::manual_seed(0);
  const std::int64_t n = 512, d_in = 32, hidden = 64, classes = 10, batch = 64;
  auto X = st::randn<float>({n, d_in});
  auto y = st::randint(0, classes, {n});

  auto W1 = (st::randn<float>({d_in, hidden}) / std::sqrt(float(d_in))).eval().requires_grad_();
  auto b1 = st::zeros(hidden).requires_grad_();
  auto W2 = (st::randn<float>({hidden, hidden}) / 8).eval().requires_grad_();
  auto b2 = st::zeros(hidden).requires_grad_();
  auto W3 = (st::randn<float>({hidden, classes}) / 8).eval().requires_grad_();
  auto b3 = st::zeros(classes).requires_grad_();
  std::vector<st::Tensor<float>> params{W1, b1, W2, b2, W3, b3};
  std::vector<st::Tensor<float>> velocity;
  for (auto& p : params) velocity.push_back(st::zeros_like(p));

  auto forward = [&](const st::Tensor<float>& x) {
    auto h1 = (st::matmul(x, W1) + b1).relu();
    auto h2 = st::tanh(h1.matmul(W2) + b2);
    return st::Tensor<float>(h2.matmul(W3) + b3);
  };

  const float lr = 0.05f, momentum = 0.9f, weight_decay = 1e-4f;
  auto loss = st::Tensor<float>();
  for (int epoch = 0; epoch < 5; ++epoch) {
    auto perm = st::randperm(n);
    for (std::int64_t i = 0; i < n; i += batch) {
      auto idx = perm.narrow(0, i, batch);
      auto xb = X.index_select(0, idx);
      auto yb = y.index_select(0, idx);
      auto logits = forward(xb);
      auto logp = logits.log_softmax(1);
      auto nll = -logp.gather(1, yb.unsqueeze(1)).squeeze(1);
      auto l2 = (W1 * W1).sum() + (W2 * W2).sum() + (W3 * W3).sum();
      loss = nll.mean() + weight_decay / 2 * l2;
      loss.backward();
      {
        st::no_grad guard;
        for (std::size_t k = 0; k < params.size(); ++k) {
          velocity[k].assign(momentum * velocity[k] + params[k].grad());
          params[k] -= lr * velocity[k];
        }
      }
      st::zero_grad(W1, b1, W2, b2, W3, b3);
    }
  }
  st::no_grad guard;
  auto pred = forward(X).argmax(1);
  auto acc = (pred == y).to<float>().mean().item();
  std::printf("loss %.4f train accuracy %.3f\n", double(loss.item()), double(acc));
  return 0;
}
