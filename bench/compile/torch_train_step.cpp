// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): train_step.cpp written with libtorch 1.13
// (C++17), line for line.
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  torch::manual_seed(0);
  const std::int64_t n = 512, d_in = 32, hidden = 64, classes = 10, batch = 64;
  auto X = torch::randn({n, d_in});
  auto y = torch::randint(0, classes, {n});

  auto W1 = (torch::randn({d_in, hidden}) / std::sqrt(float(d_in))).requires_grad_();
  auto b1 = torch::zeros(hidden).requires_grad_();
  auto W2 = (torch::randn({hidden, hidden}) / 8).requires_grad_();
  auto b2 = torch::zeros(hidden).requires_grad_();
  auto W3 = (torch::randn({hidden, classes}) / 8).requires_grad_();
  auto b3 = torch::zeros(classes).requires_grad_();
  std::vector<torch::Tensor> params{W1, b1, W2, b2, W3, b3};
  std::vector<torch::Tensor> velocity;
  for (auto& p : params) velocity.push_back(torch::zeros_like(p));

  auto forward = [&](const torch::Tensor& x) {
    auto h1 = (torch::matmul(x, W1) + b1).relu();
    auto h2 = torch::tanh(h1.matmul(W2) + b2);
    return h2.matmul(W3) + b3;
  };

  const float lr = 0.05f, momentum = 0.9f, weight_decay = 1e-4f;
  auto loss = torch::Tensor();
  for (int epoch = 0; epoch < 5; ++epoch) {
    auto perm = torch::randperm(n);
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
        torch::NoGradGuard guard;
        for (std::size_t k = 0; k < params.size(); ++k) {
          velocity[k].copy_(momentum * velocity[k] + params[k].grad());
          params[k] -= lr * velocity[k];
        }
      }
      for (auto& p : params) p.mutable_grad().zero_();
    }
  }
  torch::NoGradGuard guard;
  auto pred = forward(X).argmax(1);
  auto acc = (pred == y).to(torch::kFloat).mean().item<float>();
  std::printf("loss %.4f train accuracy %.3f\n", double(loss.item<float>()), double(acc));
  return 0;
}
