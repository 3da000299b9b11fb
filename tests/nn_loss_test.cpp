// SPDX-License-Identifier: MIT
// strata.nn's dense layers and losses against PyTorch 1.13 (tests/golden/nn.txt, made by
// tools/make_nn_golden.py): values and the gradient of every input for linear, bilinear,
// embedding, every loss and the normalisations with each option, and torch's errors; dropout's statistics, its
// gradient and its independence of the thread count; a ported training step.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>
#include "check_close.hpp"
#include "nn_golden.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;
namespace F = strata::nn::functional;

namespace {
const std::set<std::string> dense_and_losses = {
    "linear",       "bilinear",     "embedding",     "mse_loss",
    "l1_loss",      "smooth_l1_loss", "huber_loss",  "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div",    "nll_loss", "cross_entropy"};
const std::set<std::string> normalisations = {"batch_norm", "layer_norm", "group_norm", "instance_norm"};

template <class T>
st::Tensor<T> make(const nn_golden::tensor_data& d) {
  std::vector<T> v;
  for (double x : d.values) v.push_back(test::from_double<T>(x));
  return st::from_vector<T>(v, d.sizes);
}

// The case's function applied to its inputs (floating inputs in `in`, int64 ones in `idx`).
template <class T>
st::Tensor<T> call(const nn_golden::golden_case& c, std::map<std::string, st::Tensor<T>>& in,
                   std::map<std::string, st::Tensor<std::int64_t>>& idx) {
  const auto opt = [&](const std::string& k, const std::string& fallback) { return c.has(k) ? c.option(k) : fallback; };
  const std::string reduction = opt("reduction", "mean");
  const auto& f = c.function;
  if (f == "linear") {
    if (in.count("bias")) return F::linear(in.at("input"), in.at("weight"), in.at("bias"));
    return F::linear(in.at("input"), in.at("weight"));
  }
  if (f == "bilinear") {
    if (in.count("bias")) return F::bilinear(in.at("input1"), in.at("input2"), in.at("weight"), in.at("bias"));
    return F::bilinear(in.at("input1"), in.at("input2"), in.at("weight"));
  }
  if (f == "embedding") {
    F::EmbeddingFuncOptions o;
    if (c.has("padding_idx")) o.padding_idx(std::stoll(c.option("padding_idx")));
    if (c.has("max_norm")) o.max_norm(std::stod(c.option("max_norm")));
    if (c.has("norm_type")) o.norm_type(std::stod(c.option("norm_type")));
    o.scale_grad_by_freq(opt("scale_grad_by_freq", "0") == "1");
    return F::embedding(idx.at("input"), in.at("weight"), o);
  }
  if (f == "mse_loss") return F::mse_loss(in.at("input"), in.at("target"), F::MSELossFuncOptions().reduction(reduction));
  if (f == "l1_loss") return F::l1_loss(in.at("input"), in.at("target"), F::L1LossFuncOptions().reduction(reduction));
  if (f == "smooth_l1_loss")
    return F::smooth_l1_loss(in.at("input"), in.at("target"),
                             F::SmoothL1LossFuncOptions().reduction(reduction).beta(std::stod(opt("beta", "1"))));
  if (f == "huber_loss")
    return F::huber_loss(in.at("input"), in.at("target"),
                         F::HuberLossFuncOptions().reduction(reduction).delta(std::stod(opt("delta", "1"))));
  if (f == "binary_cross_entropy") {
    F::BinaryCrossEntropyFuncOptions o;
    o.reduction(reduction);
    if (in.count("weight")) o.weight(in.at("weight"));
    return F::binary_cross_entropy(in.at("input"), in.at("target"), o);
  }
  if (f == "binary_cross_entropy_with_logits") {
    F::BinaryCrossEntropyWithLogitsFuncOptions o;
    o.reduction(reduction);
    if (in.count("weight")) o.weight(in.at("weight"));
    if (in.count("pos_weight")) o.pos_weight(in.at("pos_weight"));
    return F::binary_cross_entropy_with_logits(in.at("input"), in.at("target"), o);
  }
  if (f == "kl_div")
    return F::kl_div(in.at("input"), in.at("target"),
                     F::KLDivFuncOptions().reduction(reduction).log_target(opt("log_target", "0") == "1"));
  if (f == "nll_loss") {
    F::NLLLossFuncOptions o;
    o.reduction(reduction).ignore_index(std::stoll(opt("ignore_index", "-100")));
    if (in.count("weight")) o.weight(in.at("weight"));
    return F::nll_loss(in.at("input"), idx.at("target"), o);
  }
  if (f == "cross_entropy") {
    F::CrossEntropyFuncOptions o;
    o.reduction(reduction)
        .ignore_index(std::stoll(opt("ignore_index", "-100")))
        .label_smoothing(std::stod(opt("label_smoothing", "0")));
    if (in.count("weight")) o.weight(in.at("weight"));
    if (idx.count("target")) return F::cross_entropy(in.at("input"), idx.at("target"), o);
    return F::cross_entropy(in.at("input"), in.at("target"), o);
  }
  const auto weight_bias = [&](auto& o) {
    if (in.count("weight")) o.weight(in.at("weight"));
    if (in.count("bias")) o.bias(in.at("bias"));
  };
  if (f == "batch_norm") {
    F::BatchNormFuncOptions o;
    weight_bias(o);
    o.training(opt("training", "0") == "1").momentum(std::stod(opt("momentum", "0.1"))).eps(std::stod(opt("eps", "1e-5")));
    std::optional<st::Tensor<T>> rm, rv;
    if (in.count("running_mean")) rm = in.at("running_mean");
    if (in.count("running_var")) rv = in.at("running_var");
    return F::batch_norm(in.at("input"), rm, rv, o);
  }
  if (f == "layer_norm") {
    F::LayerNormFuncOptions o(nn_golden::ints(c.option("normalized_shape")));
    weight_bias(o);
    o.eps(std::stod(opt("eps", "1e-5")));
    return F::layer_norm(in.at("input"), o);
  }
  if (f == "group_norm") {
    F::GroupNormFuncOptions o(std::stoll(c.option("num_groups")));
    weight_bias(o);
    o.eps(std::stod(opt("eps", "1e-5")));
    return F::group_norm(in.at("input"), o);
  }
  if (f == "instance_norm") {
    F::InstanceNormFuncOptions o;
    weight_bias(o);
    if (in.count("running_mean")) o.running_mean(in.at("running_mean")).running_var(in.at("running_var"));
    o.eps(std::stod(opt("eps", "1e-5")));
    return F::instance_norm(in.at("input"), o);
  }
  throw std::logic_error("no such function in this test: " + f);
}

template <class T>
void run_case(const nn_golden::golden_case& c) {
  INFO("case " << c.id);
  std::map<std::string, st::Tensor<T>> in;
  std::map<std::string, st::Tensor<std::int64_t>> idx;
  for (const auto& [name, d] : c.inputs) {
    if (d.dtype == "int64") {
      idx[name] = make<std::int64_t>(d);
    } else {
      in[name] = make<T>(d);
      if (c.grads.count(name)) in[name].requires_grad_();
    }
  }
  if (!c.error.empty()) {
    CHECK_THROWS_WITH(call<T>(c, in, idx), c.error);
    return;
  }
  st::Tensor<T> out = call<T>(c, in, idx);
  // Within a few roundings of PyTorch's: sums are added in other orders. bfloat16 is computed
  // in float and rounded once, where torch rounds some steps on the way: 2 units of its last
  // place at the tensor's scale.
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  // embedding copies rows and renormalises them as torch does: the same bits (the golden text
  // rounds to 9 digits, so its values are read back as bfloat16 first).
  const auto check_close = [&](const std::vector<double>& got, const std::vector<double>& want) {
    if constexpr (std::is_same_v<T, st::bfloat16>) {
      if (c.function != "embedding") return test::check_close_scaled(got, want, 1.0 / 64);
      std::vector<double> exact;
      for (double w : want) exact.push_back(test::to_double(test::from_double<T>(w)));
      return test::check_close(got, exact, 0);
    }
    test::check_close(got, want, tol);
  };
  CHECK(std::vector<std::int64_t>(out.sizes().begin(), out.sizes().end()) == c.out.sizes);
  check_close(as_doubles(out.detach()), c.out.values);
  for (const std::string running : {"running_mean", "running_var", "weight_after"}) {
    if (!c.extra.count(running)) continue;
    INFO(running << " after the update");
    const std::string name = running == "weight_after" ? "weight" : running;
    check_close(as_doubles(in.at(name).detach()), c.extra.at(running).values);
  }
  if (c.grads.empty()) return;
  out.backward(make<T>({c.dtype, c.out.sizes, c.cot}));
  for (const auto& [name, want] : c.grads) {
    INFO("gradient of " << name);
    REQUIRE(in.at(name).has_grad());
    check_close(as_doubles(in.at(name).grad()), want.values);
  }
}

void run_all(const std::set<std::string>& functions, int at_least) {
  int cases = 0;
  for (const auto& c : nn_golden::read()) {
    if (!functions.count(c.function)) continue;
    ++cases;
    if (c.dtype == "float32") run_case<float>(c);
    else if (c.dtype == "bfloat16") run_case<st::bfloat16>(c);
    else run_case<double>(c);
  }
  CHECK(cases >= at_least);
}
}  // namespace

TEST_CASE("nn: dense layers and losses match PyTorch", "[nn]") { run_all(dense_and_losses, 130); }

TEST_CASE("nn: batch, layer, group and instance norm match PyTorch", "[nn]") { run_all(normalisations, 24); }

TEST_CASE("nn: dropout keeps the expectation, and its mask is the same for any thread count", "[nn]") {
  const auto x = st::ones<double>({200, 500}).requires_grad_();
  st::manual_seed(7);
  const auto y = F::dropout(x, F::DropoutFuncOptions().p(0.3));
  // Kept elements are scaled by 1 / (1 - p); about 70% are kept.
  const auto v = y.detach().to_vector();
  std::int64_t kept = 0;
  for (double e : v) {
    if (e != 0) {
      ++kept;
      CHECK(e == Approx(1 / 0.7).epsilon(1e-15));
    }
  }
  CHECK(std::abs(static_cast<double>(kept) / static_cast<double>(v.size()) - 0.7) < 0.01);
  // The gradient is the mask's scale where kept.
  st::sum(y).backward();
  CHECK(as_doubles(x.grad()) == as_doubles(y.detach()));
  // The same seed gives the same mask on 1 and 2 threads.
  const int threads = st::get_num_threads();
  st::set_num_threads(1);
  st::manual_seed(7);
  const auto one = F::dropout(x.detach(), F::DropoutFuncOptions().p(0.3));
  st::set_num_threads(2);
  st::manual_seed(7);
  const auto two = F::dropout(x.detach(), F::DropoutFuncOptions().p(0.3));
  st::set_num_threads(threads);
  CHECK(as_doubles(one) == as_doubles(two));
  CHECK(as_doubles(one) == as_doubles(y.detach()));
  // Evaluation and p = 0 give the input; p = 1 zeros; p outside [0, 1] is refused as torch does.
  CHECK(as_doubles(F::dropout(x, F::DropoutFuncOptions().training(false))) == as_doubles(x.detach()));
  CHECK(as_doubles(F::dropout(x, F::DropoutFuncOptions().p(1))) == std::vector<double>(v.size(), 0.0));
  CHECK_THROWS_WITH(F::dropout(x, F::DropoutFuncOptions().p(1.5)),
                    "dropout probability has to be between 0 and 1, but got 1.5");
}

TEST_CASE("nn: options refuse what torch refuses", "[nn]") {
  const auto x = st::randn<float>({3, 4});
  const auto t = st::zeros<std::int64_t>({3});
  CHECK_THROWS_WITH(F::mse_loss(x, x, F::MSELossFuncOptions().reduction("average")),
                    "average is not a valid value for reduction");
  CHECK_THROWS_WITH(F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(1.5)),
                    "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
  // Class weights of another dtype than the input's.
  CHECK_THROWS_WITH(F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(st::ones<double>({4}))),
                    "expected scalar type Float but found Double");
  CHECK_THROWS_WITH(F::smooth_l1_loss(x, x, F::SmoothL1LossFuncOptions().beta(-1)),
                    "smooth_l1_loss does not support negative values for beta.");
  // A NaN probability is refused as one outside [0, 1].
  const auto p = st::full<float>({2}, 0.5f);
  const auto nan = st::tensor({0.5f, std::nanf("")});
  CHECK_THROWS_WITH(F::binary_cross_entropy(nan, p), "all elements of input should be between 0 and 1");
  CHECK_THROWS_WITH(F::cross_entropy(x, st::softmax(x, 1), F::CrossEntropyFuncOptions().ignore_index(0)),
                    "ignore_index is not supported for floating point target");
}

TEST_CASE("nn: embedding and nll_loss keep their own indices for the backward", "[nn]") {
  auto w = st::randn<double>({5, 2}).requires_grad_();
  auto idx = st::tensor({std::int64_t{3}, std::int64_t{1}, std::int64_t{3}});
  auto e = F::embedding(idx, w);
  idx.fill_(0);  // written after the forward
  st::sum(e).backward();
  CHECK(as_doubles(w.grad()) == std::vector<double>{0, 0, 1, 1, 0, 0, 2, 2, 0, 0});
}

TEST_CASE("nn: a PyTorch training step ports line by line", "[nn]") {
  // x = torch.randn(16, 5); y = torch.randint(0, 3, (16,))
  // h = F.relu(F.linear(x, w1, b1)); logits = F.linear(F.dropout(h, 0.1), w2, b2)
  // loss = F.cross_entropy(logits, y, label_smoothing=0.05); loss.backward()
  st::manual_seed(3);
  auto x = st::randn<float>({16, 5});
  auto y = st::randint(0, 3, {16});
  auto w1 = (st::randn<float>({8, 5}) * 0.3f).eval().requires_grad_();
  auto b1 = st::zeros<float>({8}).requires_grad_();
  auto w2 = (st::randn<float>({3, 8}) * 0.3f).eval().requires_grad_();
  auto b2 = st::zeros<float>({3}).requires_grad_();
  auto h = st::relu(F::linear(x, w1, b1));
  auto logits = F::linear(F::dropout(h, F::DropoutFuncOptions().p(0.1)), w2, b2);
  auto loss = F::cross_entropy(logits, y, F::CrossEntropyFuncOptions().label_smoothing(0.05));
  loss.backward();
  CHECK(loss.dim() == 0);
  CHECK(std::isfinite(loss.item()));
  CHECK(w1.grad().sizes().vec() == st::dim_vector{8, 5});
  CHECK(b2.grad().sizes().vec() == st::dim_vector{3});
  // The gradient of b2 is the mean over the batch of softmax - smoothed one-hot: it sums to 0.
  CHECK(std::abs(st::sum(b2.grad()).item()) < 1e-6);
}
