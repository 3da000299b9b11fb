// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): attention.cpp written with libtorch 1.13
// (C++17), line for line.
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace {
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& g, const torch::Tensor& b) {
  auto mu = x.mean(-1, true);
  auto var = x.var(-1, false, true);
  return (x - mu) / (var + 1e-5f).sqrt() * g + b;
}

torch::Tensor param(std::int64_t rows, std::int64_t cols) {
  return (torch::randn({rows, cols}) * 0.02f).requires_grad_();
}
}  // namespace

int main() {
  torch::manual_seed(1);
  const std::int64_t B = 4, T = 64, C = 128, H = 4, D = C / H;
  auto x = torch::randn({B, T, C});
  auto Wq = param(C, C), Wk = param(C, C), Wv = param(C, C), Wo = param(C, C);
  auto W1 = param(C, 4 * C), W2 = param(4 * C, C);
  auto g1 = torch::ones(C).requires_grad_(), be1 = torch::zeros(C).requires_grad_();
  auto g2 = torch::ones(C).requires_grad_(), be2 = torch::zeros(C).requires_grad_();

  auto h = layer_norm(x, g1, be1);
  auto q = h.matmul(Wq).view({B, T, H, D}).transpose(1, 2);
  auto k = h.matmul(Wk).view({B, T, H, D}).transpose(1, 2);
  auto v = h.matmul(Wv).view({B, T, H, D}).transpose(1, 2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(float(D));
  auto mask = torch::ones({T, T}).tril() == 0;
  auto att = scores.masked_fill(mask, -INFINITY).softmax(-1);
  auto y = att.matmul(v).transpose(1, 2).reshape({B, T, C});
  torch::Tensor x1 = x + y.matmul(Wo);

  auto h2 = layer_norm(x1, g2, be2);
  auto ff = torch::gelu(h2.matmul(W1)).matmul(W2);
  torch::Tensor out = x1 + ff;

  auto loss = (out * out).mean() + std::get<0>(att.max(-1)).mean();
  loss.backward();
  auto gnorm = Wq.grad().pow(2).sum().sqrt() + g1.grad().abs().sum();
  auto entropy = -(att * (att + 1e-9f).log()).sum(-1).mean();
  auto same = torch::einsum("bhts,bhsd->bhtd", {att, v}).sub(att.matmul(v)).abs().amax();
  std::printf("loss %.5f grad %.5f entropy %.4f einsum diff %.2g\n", double(loss.item<float>()),
              double(gnorm.item<float>()), double(entropy.item<float>()), double(same.item<float>()));
  return 0;
}
