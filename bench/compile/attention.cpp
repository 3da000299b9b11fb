// SPDX-License-Identifier: MIT
// Compile-time benchmark TU (bench/compile_time.py): a pre-norm causal self-attention block
// with a feed-forward layer, as a user writes it: q/k/v projections with matmul, split into
// heads with view/transpose, scaled scores, a tril mask with masked_fill, softmax, the
// weighted sum, layer norm written as expressions, GELU, residuals; then a backward pass.
// Twin: torch_attention.cpp.
#include <cmath>
#include <cstdint>
#include <cstdio>

import strata;

namespace st = strata;

namespace {
st::Tensor<float> layer_norm(const st::Tensor<float>& x, const st::Tensor<float>& g, const st::Tensor<float>& b) {
  auto mu = x.mean(-1, true);
  auto var = x.var(-1, 0, true);
  return (x - mu) / (var + 1e-5f).sqrt() * g + b;
}

st::Tensor<float> param(std::int64_t rows, std::int64_t cols) {
  return (st::randn<float>({rows, cols}) * 0.02f).eval().requires_grad_();
}
}  // namespace

int main() {
  st::manual_seed(1);
  const std::int64_t B = 4, T = 64, C = 128, H = 4, D = C / H;
  auto x = st::randn<float>({B, T, C});
  auto Wq = param(C, C), Wk = param(C, C), Wv = param(C, C), Wo = param(C, C);
  auto W1 = param(C, 4 * C), W2 = param(4 * C, C);
  auto g1 = st::ones(C).requires_grad_(), be1 = st::zeros(C).requires_grad_();
  auto g2 = st::ones(C).requires_grad_(), be2 = st::zeros(C).requires_grad_();

  auto h = layer_norm(x, g1, be1);
  auto q = h.matmul(Wq).view(B, T, H, D).transpose(1, 2);
  auto k = h.matmul(Wk).view(B, T, H, D).transpose(1, 2);
  auto v = h.matmul(Wv).view(B, T, H, D).transpose(1, 2);
  auto scores = st::matmul(q, k.transpose(-2, -1)) / std::sqrt(float(D));
  auto mask = st::ones(T, T).tril() == 0;
  auto att = scores.masked_fill(mask, -INFINITY).softmax(-1);
  auto y = att.matmul(v).transpose(1, 2).reshape(B, T, C);
  st::Tensor<float> x1 = x + y.matmul(Wo);

  auto h2 = layer_norm(x1, g2, be2);
  auto ff = st::gelu(h2.matmul(W1)).matmul(W2);
  st::Tensor<float> out = x1 + ff;

  auto loss = (out * out).mean() + att.max(-1).values.mean();
  loss.backward();
  auto gnorm = Wq.grad().pow(2).sum().sqrt() + g1.grad().abs().sum();
  auto entropy = -(att * (att + 1e-9f).log()).sum(-1).mean();
  auto same = st::einsum("bhts,bhsd->bhtd", att, v).sub(att.matmul(v)).abs().amax();
  std::printf("loss %.5f grad %.5f entropy %.4f einsum diff %.2g\n", double(loss.item()),
              double(gnorm.item()), double(entropy.item()), double(same.item()));
  return 0;
}
