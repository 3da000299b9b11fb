// SPDX-License-Identifier: MIT
// PyTorch programs ported line by line, as a user's codebase would write them: qualified
// names, `auto` everywhere, method chains, int dims, expressions passed into every function
// family. Values are checked against tests/golden/port.txt, which tools/make_port_golden.py
// computes with torch 1.13 from the same programs written in Python (each case's name is the
// function there).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "check_close.hpp"
#include "golden.hpp"

import strata;
namespace st = strata;

namespace {
struct golden_value {
  std::string dtype;
  std::vector<std::int64_t> sizes;
  std::vector<double> values;
};

// One line a value: <name> <dtype> <sizes: 2x3, or "scalar"> <values...>
const std::map<std::string, golden_value>& goldens() {
  static const std::map<std::string, golden_value> all = [] {
    std::map<std::string, golden_value> m;
    for (const std::string& line : golden::lines("port.txt")) {
      std::istringstream in(line);
      std::string name, shape;
      golden_value v;
      in >> name >> v.dtype >> shape;
      if (shape != "scalar")
        for (const std::string& s : golden::split(shape, 'x')) v.sizes.push_back(std::stoll(s));
      // float32 values are written with 9 digits, which round-trip through float exactly
      for (std::string w; in >> w;)
        v.values.push_back(v.dtype == "float32" ? static_cast<double>(std::stof(w)) : std::stod(w));
      m[name] = v;
    }
    return m;
  }();
  return all;
}

std::string printed(st::dtype d) {
  std::ostringstream s;
  s << d;
  return s.str();
}

/// Checks x (a tensor or an expression) against the golden value `name`: dtype, sizes, values.
template <class X>
void check(const std::string& name, const X& x, double tol = 1e-6) {
  INFO("golden value " << name);
  const auto it = goldens().find(name);
  REQUIRE(it != goldens().end());
  const golden_value& want = it->second;
  const auto t = st::eval(x);
  CHECK(printed(t.dtype()) == "torch." + want.dtype);
  CHECK(std::vector<std::int64_t>(t.sizes()) == want.sizes);
  std::vector<double> got;
  for (const auto v : t.to_vector()) got.push_back(static_cast<double>(v));
  test::check_close(got, want.values, tol);
}
}  // namespace

TEST_CASE("linear regression with SGD", "[port]") {
  auto X = st::arange(20).to<float>().view(10, 2) / 10;
  auto y = X.matmul(st::tensor({{2.0f}, {-1.0f}})) + 0.5;
  auto w = st::zeros({2, 1}).requires_grad_();
  auto b = st::zeros({1}).requires_grad_();
  auto loss = st::Tensor<float>();
  for (int step = 0; step < 20; ++step) {
    auto pred = X.matmul(w) + b;
    loss = (pred - y).pow(2).mean();
    loss.backward();
    {
      st::no_grad guard;
      w -= 0.1 * w.grad();
      b -= 0.1 * b.grad();
    }
    w.grad().zero_();
    b.grad().zero_();
  }
  check("linreg_w", w, 1e-5);
  check("linreg_b", b, 1e-5);
  check("linreg_loss", loss, 1e-5);
}

TEST_CASE("an MLP classifier with cross-entropy", "[port]") {
  auto X = st::linspace(-1, 1, 24).view(6, 4);
  auto y = st::tensor({0, 1, 2, 1, 0, 2});
  auto W1 = ((st::arange(32) % 7 - 3) / 10).view(4, 8).requires_grad_();
  auto b1 = st::zeros(8).requires_grad_();
  auto W2 = ((st::arange(24) % 5 - 2) / 5).view(8, 3).requires_grad_();
  auto b2 = st::zeros(3).requires_grad_();
  auto loss = st::Tensor<float>();
  for (int step = 0; step < 5; ++step) {
    auto h = (X.matmul(W1) + b1).relu();
    auto z = h.matmul(W2) + b2;
    loss = -z.log_softmax(1).gather(1, y.unsqueeze(1)).mean();
    loss.backward();
    st::no_grad guard;
    for (auto& p : {W1, b1, W2, b2}) {
      p -= 0.5 * p.grad();
      p.grad().zero_();
    }
  }
  check("mlp_loss", loss, 1e-5);
  check("mlp_W2", W2, 1e-5);
  auto logits = (X.matmul(W1) + b1).relu().matmul(W2) + b2;
  auto pred = logits.argmax(1);
  check("mlp_pred", pred);
  check("mlp_acc", (pred == y).to<float>().mean());
  check("mlp_probs", logits.softmax(-1), 1e-5);
  auto [best, best_at] = logits.max(1);
  check("mlp_max_values", best, 1e-5);
  check("mlp_max_indices", std::get<1>(logits.max(1)));
  check("mlp_max_values", std::get<0>(st::max(logits, 1)), 1e-5);
  check("mlp_onehot", st::one_hot(y, 3));
}

TEST_CASE("causal self-attention", "[port]") {
  auto q = st::arange(64).to<float>().view(2, 4, 8).sin();
  auto k = st::arange(64).to<float>().view(2, 4, 8).cos();
  auto v = (st::arange(64).to<float>() / 64).view(2, 4, 8);
  auto scores = q.matmul(k.transpose(-2, -1)) / std::sqrt(8.0);
  auto mask = st::ones(4, 4).tril() == 0;
  auto attn = scores.masked_fill(mask, -INFINITY).softmax(-1);
  auto out = attn.matmul(v);
  check("attn_weights", attn, 1e-5);
  check("attn_out", out, 1e-5);
  check("attn_einsum", st::einsum("bij,bjd->bid", attn, v), 1e-5);
  check("attn_rowsum", st::matmul(st::softmax(scores, -1), v).sum(-1), 1e-5);
}

TEST_CASE("a convolution and a max-pool written with unfold", "[port]") {
  auto img = (st::arange(36).to<float>() / 36).view(1, 1, 6, 6);
  auto kern = st::tensor({{1.0f, 0.0f, -1.0f}, {2.0f, 0.0f, -2.0f}, {1.0f, 0.0f, -1.0f}});
  auto patches = img.unfold(2, 3, 1).unfold(3, 3, 1);
  auto conv = (patches * kern).sum({-2, -1});
  auto pooled = conv.unfold(2, 2, 2).unfold(3, 2, 2).amax({-2, -1});
  check("conv_out", conv, 1e-5);
  check("conv_pool", pooled, 1e-5);
  auto cols = patches.reshape(16, 9);
  check("conv_im2col", cols.matmul(kern.reshape(9)).view(1, 1, 4, 4), 1e-5);
}

TEST_CASE("n-body accelerations", "[port]") {
  auto pos = st::tensor({{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}}).to<double>();
  auto m = st::tensor<double>({1, 2, 3, 4});
  auto d = pos.unsqueeze(0) - pos.unsqueeze(1);
  auto r2 = (d * d).sum(-1) + 0.01;
  auto acc = (d * (r2.pow(-1.5) * m).unsqueeze(-1)).sum(1);
  check("nbody_acc", acc, 1e-12);
  auto vel = st::zeros<double>({4, 3});
  vel += 0.1 * acc;
  check("nbody_vel", vel, 1e-12);
  check("nbody_energy", (0.5 * m * (vel * vel).sum(1)).sum(), 1e-12);
}

TEST_CASE("column statistics", "[port]") {
  auto X = st::arange(30).to<double>().view(10, 3).sin() * 10;
  auto Xs = (X - X.mean(0, true)) / X.std(0, 1, true);
  check("stats_standardised", Xs, 1e-12);
  auto Xc = X - X.mean(0);
  auto cov = Xc.t().matmul(Xc) / (X.size(0) - 1);
  check("stats_cov", cov, 1e-12);
  check("stats_median", std::get<0>(X.median(0)), 1e-12);
  check("stats_argmin", X.argmin(1));
  check("stats_var", X.var(1), 1e-12);
  check("stats_norm", X.norm(2, 1), 1e-12);
  check("stats_logsumexp", (X / 10).logsumexp(1), 1e-12);
  check("stats_cumsum", X.cumsum(0), 1e-12);
  auto [top, top_at] = X.abs().topk(2, 0);
  check("stats_topk", top, 1e-12);
  check("stats_topk_at", top_at);
  check("stats_sort", std::get<0>(X.sum(1).sort(0, true)), 1e-12);
}

TEST_CASE("a uint8 image pipeline adds channels in index order", "[port]") {
  auto img = (st::arange(1080 * 19 * 3) * 37 % 256).to<std::uint8_t>().view(1080, 19, 3);
  auto w = st::tensor({0.299, 0.587, 0.114});
  auto gray = (img.to<float>() / 255 * w).sum(-1);
  // Bitwise: a fused sum over 3 channels adds (a + b) + c, as torch does.
  check("image_gray", gray, 0);
  auto g8 = (gray * 255).clamp(0, 255).round().to<std::uint8_t>();
  check("image_u8", g8, 0);
  check("image_flip", g8.flip(1).narrow(0, 0, 2), 0);
}

TEST_CASE("layer norm and GELU with gradients", "[port]") {
  auto x = (st::arange(24).to<double>().view(2, 3, 4) * 0.37).sin().eval().requires_grad_();
  auto g = st::linspace<double>(0.5, 1.5, 4).requires_grad_();
  auto mu = x.mean(-1, true);
  auto var = x.var(-1, 0, true);
  auto y = (x - mu) / (var + 1e-5).sqrt() * g;
  auto out = st::gelu(y);
  out.sum().backward();
  check("ln_out", out, 1e-12);
  check("ln_grad_x", x.grad(), 1e-10);
  check("ln_grad_g", g.grad(), 1e-10);
}

TEST_CASE("dtype rules a port meets", "[port]") {
  auto i = st::tensor({1, 2, 3});
  check("dtype_true_div", i / 2);
  check("dtype_int_plus_float", i.to<std::int32_t>() + 2.5);
  check("dtype_u8_plus_i8", st::tensor<std::uint8_t>({200, 100}) + st::tensor<std::int8_t>({-1, 1}));
  check("dtype_sum_int", i.to<std::int32_t>().sum());
  check("dtype_count", (i > 1).sum());
  check("dtype_zeros", st::zeros({2, 2}));
  check("dtype_scalar", st::scalar_tensor(2.5));
  check("dtype_full", st::full({2}, 1.5));
  CHECK(st::tensor({1.5, 2.5}).dtype() == st::dtype::float32);
  CHECK(st::tensor(true).dtype() == st::dtype::bool_);
  CHECK(i[0].item<double>() == 1.0);
}

TEST_CASE("every function family takes expressions", "[port]") {
  auto x = st::arange(12).to<float>().view(3, 4);
  auto idx = st::tensor({2, 0});
  // joins: tensors and expressions mixed in one list
  check("family_cat", st::cat({x, st::pow(x, 2), st::sin(3 * x)}, 1), 1e-6);
  check("family_stack", st::stack({x.sum(0), x.mean(0), x.amax(0)}), 1e-6);
  // indexing
  check("family_index_select", (x * 2).index_select(0, idx));
  check("family_gather", st::gather(x + 1, 1, st::tensor({{0, 3}, {1, 2}, {2, 1}})));
  check("family_scatter", st::zeros({3, 4}).scatter(1, st::tensor({{0}, {1}, {2}}), x.narrow(1, 0, 1) * 10));
  check("family_masked_fill", (x - 5).masked_fill(x > 6, 0));
  check("family_masked_select", x.masked_select(x.remainder(3) == 0));
  check("family_take", (x + 0.5).take(idx));
  check("family_nonzero", (x.remainder(5) == 0).nonzero());
  check("family_bincount", st::bincount(st::tensor({1, 1, 3, 0, 3, 3})));
  // manipulation
  check("family_flip", (x + 1).flip(0, 1));
  check("family_roll", (x * 1).roll(1, 1));
  check("family_repeat", x.narrow(0, 0, 1).repeat(2, 1));
  check("family_tril", (x + 1).tril());
  check("family_chunk", (x * 3).chunk(2, 1)[1]);
  check("family_split", st::split(x - 1, 2, 1)[0]);
  // sorting and scans
  check("family_argsort", (x.sin()).argsort(1));
  check("family_cumprod", (x / 10 + 1).cumprod(1), 1e-6);
  check("family_kthvalue", std::get<0>((x.cos()).kthvalue(2, 1)), 1e-6);
  check("family_quantile", (x * 1.5).quantile(0.3, 1), 1e-6);
  check("family_quantile_all", x.sin().quantile(st::tensor({0.25, 0.5, 1.0})), 1e-6);
  check("family_quantile_nearest", x.quantile(0.25, 0, true, "nearest"), 1e-6);  // rank 0.5: half to even
  check("family_nanquantile", st::nanquantile(x.masked_fill(x.remainder(4) == 1, NAN), 0.75, 1), 1e-6);
  // reductions with int dims
  check("family_sum_int_dim", st::sum(x, 1));
  check("family_mean_keepdim", x.mean(1, true));
  check("family_logsumexp", st::logsumexp(x / 4, 0), 1e-6);
  check("family_permute", (x + 0).view(3, 2, 2).permute(2, 0, 1));
  check("family_view_flat", x.view(-1).narrow(0, 5, 3));
  check("family_reshape", (x * 2).reshape(-1));
  check("family_std_squeeze", st::std(x, {0}, 1, true).squeeze(0), 1e-6);
  check("family_amax_index", st::amax(x, {1})[0]);
  check("family_t", (x * x).t());
  check("family_unsqueeze", (1 + 0.05 * st::arange(3)).unsqueeze(1));
  // products
  check("family_mm", (x / 2).mm(x.t()));
  check("family_outer", st::outer(x.sum(1), x.amax(1)));
  check("family_dot", (x[0] + 1).dot(x[1]));
  check("family_einsum_trace", st::einsum("ii->", x.narrow(1, 0, 3) * 2));
  // types and helpers
  check("family_type_as", x.type_as(st::zeros<double>({1})) / 3, 1e-12);
  check("family_clamp", x.clamp(2, 7));
  check("family_where", x.where(x > 5, -x));
  check("family_diagonal", st::diagonal(x * 2, 1));
  auto sizes = std::vector<std::int64_t>(x.sizes());
  CHECK(sizes == std::vector<std::int64_t>{3, 4});
  CHECK(st::from_vector<std::int64_t>(x.sizes()).to_vector() == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("an expression evaluated after an input was written in place throws", "[port][stale]") {
  auto x = st::arange(3).to<float>();
  auto y = x * 2;
  x += 1;
  CHECK_THROWS_WITH(st::Tensor(y), Catch::Contains("written in place after the expression was built"));
  CHECK_THROWS_WITH(y.to_vector(), Catch::Contains("written in place"));
  // Writing the output of the expression that reads it is fine.
  x.assign(x * 2 + 1);
  CHECK(x.to_vector() == std::vector<float>{3, 5, 7});
  x += x;
  CHECK(x.to_vector() == std::vector<float>{6, 10, 14});
  // Reductions, softmax and einsum nodes read their inputs when evaluated too.
  auto s = st::arange(4).to<float>();
  auto m = st::mean(s);
  auto p = st::softmax(s, 0);
  auto e = st::einsum("i,i->", s, s);
  auto n = s.sum(0);
  s.fill_(0);
  CHECK_THROWS_WITH(m.item(), Catch::Contains("written in place"));
  CHECK_THROWS_WITH(p.eval(), Catch::Contains("written in place"));
  CHECK_THROWS_WITH(e.eval(), Catch::Contains("written in place"));
  CHECK_THROWS_WITH(n.eval(), Catch::Contains("written in place"));
  // Evaluated first, a result keeps its values (torch's eager answer).
  auto z = st::arange(3).to<float>();
  st::Tensor kept = z * 2;
  z.fill_(5);
  CHECK(kept.to_vector() == std::vector<float>{0, 2, 4});
}

TEST_CASE("fill_ and zero_ on an expanded tensor write the shared elements", "[port]") {
  auto base = st::zeros(3);
  auto e = base.expand(2, 3);
  e.fill_(5);
  CHECK(base.to_vector() == std::vector<float>{5, 5, 5});
  e.zero_();
  CHECK(base.to_vector() == std::vector<float>{0, 0, 0});
  CHECK_THROWS_AS(e.add_(1), st::overlap_error);
}

TEST_CASE("npy_header tells a file's dtype before loading it", "[port]") {
  const auto path = (std::filesystem::temp_directory_path() / "strata_port_header.npy").string();
  st::save_npy(path, st::arange(6).view(2, 3) * 2);
  auto info = st::npy_header(path);
  CHECK(info.dtype == st::dtype::int64);
  CHECK(info.sizes == std::vector<std::int64_t>{2, 3});
  CHECK_FALSE(info.fortran_order);
  CHECK(st::load_npy<std::int64_t>(path).to_vector() == std::vector<std::int64_t>{0, 2, 4, 6, 8, 10});
  std::filesystem::remove(path);
}

TEST_CASE("idioms a newcomer's ports met", "[port]") {
  auto x = st::arange(12).to<float>().view(3, 4);  // row sums 6, 22, 38
  // a reduction of a reduction, as in a cross-entropy loss
  CHECK(x.sum(1).mean().item() == 22.0f);
  CHECK(x.amax(1).mean().item() == 7.0f);  // (3 + 7 + 11) / 3
  CHECK(x.sum(1).mean(0).item() == 22.0f);
  // torch.max(a, b) and torch.min(a, b) are element-wise; x.max(1).values names a result
  auto lo = st::full({4}, 2.0f), hi = st::full({3, 1}, 9.0f);
  CHECK(st::max(x.narrow(0, 0, 1), lo).to_vector() == std::vector<float>{2, 2, 2, 3});
  CHECK(st::min(x.narrow(0, 2, 1), st::full({4}, 9.0f)).to_vector() == std::vector<float>{8, 9, 9, 9});
  CHECK(x.max(1).values.to_vector() == std::vector<float>{3, 7, 11});
  // clamp with tensor bounds (broadcast), and with lo > hi giving hi, as torch
  CHECK(x.clamp(lo, hi).narrow(0, 2, 1).to_vector() == std::vector<float>{8, 9, 9, 9});
  CHECK(x.clamp(lo, lo - 1).narrow(0, 0, 1).to_vector() == std::vector<float>{1, 1, 1, 1});
  // bincount(input, weights, minlength) in torch's order; no weights is std::nullopt
  auto y = st::tensor({1, 1, 3});
  CHECK(st::bincount(y, std::nullopt, 6).to_vector() == std::vector<std::int64_t>{0, 2, 0, 1, 0, 0});
  CHECK(st::bincount(y, st::tensor({0.5, 0.25, 2.0})).to_vector() == std::vector<float>{0, 0.75f, 0, 2});
  // in-place methods write through (each forwards to its free function)
  auto z = st::zeros({3, 4});
  z.masked_fill_(x > 9, 1);
  z.index_add_(0, st::tensor({0}), x.narrow(0, 0, 1) * 2);
  z.scatter_(1, st::tensor({{3}, {3}, {0}}), 5.0f);
  z.clamp_(0, 4);
  CHECK(z.to_vector() == std::vector<float>{0, 2, 4, 4, 0, 0, 0, 4, 4, 0, 1, 1});
  z.add_(x, 2).mul_(0.5);
  CHECK(z.narrow(0, 0, 1).to_vector() == std::vector<float>{0, 2, 4, 5});
  CHECK(x.clamp_min(10).narrow(0, 2, 1).to_vector() == std::vector<float>{10, 10, 10, 11});
  // lerp of expressions
  CHECK(st::lerp(x * 0, x + 4, 0.5).narrow(0, 0, 1).to_vector() == std::vector<float>{2, 2.5f, 3, 3.5f});
  // quantile modes that pick an element keep infinities (no interpolation)
  CHECK(std::isinf(st::tensor({1.0f, INFINITY}).quantile(0.5, std::nullopt, false, "higher").item()));
  CHECK_THROWS_WITH(x.quantile(1.5), "quantile() q must be in the range [0, 1] but got 1.5");
  // random samples around an expression of means (std 0: the means themselves)
  CHECK(st::normal(st::zeros(3) + 1, 0.0).to_vector() == std::vector<float>{1, 1, 1});
  CHECK(st::normal(x.narrow(0, 0, 1) * 2, st::zeros(4)).to_vector() == std::vector<float>{0, 2, 4, 6});
}
