// SPDX-License-Identifier: MIT
// strata.nn on half and bfloat16: every layer and loss computes in float and rounds its result
// once, so its values and the gradients of every input are, bit for bit, the float function's on
// the same (exactly widened) inputs and cotangent, rounded to the type. dropout and embedding run
// in the type itself. Layers with running statistics write them back into the caller's tensors.
// (tests/golden/nn.txt's bfloat16 cases compare with torch 1.13 in nn_loss_test and nn_conv_test.)
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>
#include "tensor_values.hpp"
import strata;

namespace st = strata;
namespace F = strata::nn::functional;

namespace {
// Values every short type holds exactly: multiples of 1/64 in [-3, 3] (or (0.05, 0.95) for
// probabilities).
st::Tensor<float> exact(st::int_list sizes, std::uint64_t seed, bool probability = false) {
  st::generator g(seed);
  st::Tensor<float> r = st::randn<float>(sizes, g);
  if (probability) r = st::rand<float>(sizes, g) * 0.9f + 0.05f;
  return st::Tensor<float>(st::clamp(st::round(r * 64.0f) / 64.0f, -3.0f, 3.0f));
}

template <class L>
void check_same_bits(const st::Tensor<L>& got, const st::Tensor<float>& want) {
  CHECK(got.sizes() == want.sizes());
  CHECK(as_doubles(got) == as_doubles(want.detach().template to<L>()));
}

// f applied to the inputs as tensors of L and as float: the L result and the L gradient of every
// input equal the float ones rounded to L. f takes a vector of tensors of one type.
template <class L, class Fn>
void check_as_float(const std::vector<st::Tensor<float>>& inputs, Fn f) {
  std::vector<st::Tensor<L>> low;
  std::vector<st::Tensor<float>> wide;
  for (const auto& x : inputs) {
    low.push_back(x.template to<L>().requires_grad_());
    wide.push_back(x.clone().requires_grad_());
  }
  const st::Tensor<L> y = f(low);
  const st::Tensor<float> yf = f(wide);
  check_same_bits(y.detach(), yf);
  const st::Tensor<L> cot = exact(y.sizes(), 99).template to<L>();
  y.backward(cot);
  yf.backward(cot.template to<float>());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    REQUIRE(low[i].has_grad() == wide[i].has_grad());  // class weights have none, as in torch
    if (!wide[i].has_grad()) continue;
    check_same_bits(low[i].grad(), wide[i].grad());
  }
}

template <class L>
void check_layers() {
  using V = std::vector<st::Tensor<float>>;
  SECTION("linear and bilinear") {
    check_as_float<L>(V{exact({4, 3}, 1), exact({5, 3}, 2), exact({5}, 3)},
                      [](const auto& t) { return F::linear(t[0], t[1], t[2]); });
    check_as_float<L>(V{exact({4, 3}, 1), exact({4, 2}, 2), exact({5, 3, 2}, 3), exact({5}, 4)},
                      [](const auto& t) { return F::bilinear(t[0], t[1], t[2], t[3]); });
  }
  SECTION("regression losses") {
    const V xy{exact({3, 4}, 1), exact({3, 4}, 2)};
    check_as_float<L>(xy, [](const auto& t) { return F::mse_loss(t[0], t[1]); });
    check_as_float<L>(xy, [](const auto& t) { return F::l1_loss(t[0], t[1], F::L1LossFuncOptions().reduction("sum")); });
    check_as_float<L>(xy, [](const auto& t) {
      return F::smooth_l1_loss(t[0], t[1], F::SmoothL1LossFuncOptions().beta(0.5).reduction("none"));
    });
    check_as_float<L>(xy, [](const auto& t) { return F::huber_loss(t[0], t[1], F::HuberLossFuncOptions().delta(2)); });
    check_as_float<L>(V{exact({3, 4}, 1), exact({3, 4}, 2, true)},
                      [](const auto& t) { return F::kl_div(t[0], t[1], F::KLDivFuncOptions().reduction("batchmean")); });
  }
  SECTION("binary cross-entropy with weights (tensor options of the input's type)") {
    check_as_float<L>(V{exact({3, 4}, 1, true), exact({3, 4}, 2, true), exact({4}, 3, true)}, [](const auto& t) {
      return F::binary_cross_entropy(t[0], t[1], F::BinaryCrossEntropyFuncOptions().weight(t[2]));
    });
    check_as_float<L>(V{exact({3, 4}, 1), exact({3, 4}, 2, true), exact({4}, 3, true), exact({4}, 4, true)},
                      [](const auto& t) {
                        return F::binary_cross_entropy_with_logits(
                            t[0], t[1], F::BinaryCrossEntropyWithLogitsFuncOptions().weight(t[2]).pos_weight(t[3]));
                      });
  }
  SECTION("classification losses") {
    const auto target = st::tensor<std::int64_t>({0, 4, 2, 4, -100});
    check_as_float<L>(V{exact({5, 5}, 1), exact({5}, 2, true)}, [&](const auto& t) {
      return F::cross_entropy(t[0], target, F::CrossEntropyFuncOptions().weight(t[1]).label_smoothing(0.1));
    });
    check_as_float<L>(V{exact({5, 5}, 1), exact({5}, 2, true)}, [&](const auto& t) {
      return F::nll_loss(t[0], target, F::NLLLossFuncOptions().weight(t[1]).reduction("sum"));
    });
    check_as_float<L>(V{exact({5, 5}, 1), exact({5, 5}, 2, true)},
                      [](const auto& t) { return F::cross_entropy(t[0], t[1]); });
  }
  SECTION("convolutions") {
    check_as_float<L>(V{exact({2, 4, 9}, 1), exact({6, 2, 3}, 2), exact({6}, 3)}, [](const auto& t) {
      return F::conv1d(t[0], t[1], F::Conv1dFuncOptions().bias(t[2]).groups(2).padding(1));
    });
    check_as_float<L>(V{exact({2, 3, 7, 6}, 1), exact({4, 3, 3, 3}, 2), exact({4}, 3)}, [](const auto& t) {
      return F::conv2d(t[0], t[1], F::Conv2dFuncOptions().bias(t[2]).stride(2).padding(1));
    });
    check_as_float<L>(V{exact({1, 2, 4, 5, 5}, 1), exact({3, 2, 2, 3, 3}, 2)},
                      [](const auto& t) { return F::conv3d(t[0], t[1], F::Conv3dFuncOptions().padding("same")); });
    check_as_float<L>(V{exact({2, 3, 4, 4}, 1), exact({3, 2, 3, 3}, 2), exact({2}, 3)}, [](const auto& t) {
      return F::conv_transpose2d(t[0], t[1], F::ConvTranspose2dFuncOptions().bias(t[2]).stride(2));
    });
  }
  SECTION("pooling") {
    const V x{exact({2, 3, 7, 8}, 1)};
    check_as_float<L>(x, [](const auto& t) {
      return F::max_pool2d(t[0], F::MaxPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true));
    });
    check_as_float<L>(x, [](const auto& t) {
      return F::avg_pool2d(t[0], F::AvgPool2dFuncOptions(3).stride(2).padding(1).count_include_pad(false));
    });
    check_as_float<L>(x, [](const auto& t) { return F::adaptive_avg_pool2d(t[0], F::AdaptiveAvgPool2dFuncOptions({3, 5})); });
    check_as_float<L>(x, [](const auto& t) { return F::adaptive_max_pool2d(t[0], F::AdaptiveMaxPool2dFuncOptions(3)); });
    const auto [y, indices] = F::max_pool2d_with_indices(x[0].template to<L>(), F::MaxPool2dFuncOptions(2));
    const auto [yf, indices_f] = F::max_pool2d_with_indices(x[0], F::MaxPool2dFuncOptions(2));
    CHECK(indices.to_vector() == indices_f.to_vector());
  }
  SECTION("normalisations") {
    const V xwb{exact({3, 4, 5}, 1), exact({4}, 2), exact({4}, 3)};
    check_as_float<L>(V{exact({3, 4, 5}, 1)},
                      [](const auto& t) { return F::layer_norm(t[0], F::LayerNormFuncOptions({5}).eps(1e-3)); });
    check_as_float<L>(V{exact({3, 4, 5}, 1), exact({5}, 2), exact({5}, 3)}, [](const auto& t) {
      return F::layer_norm(t[0], F::LayerNormFuncOptions({5}).weight(t[1]).bias(t[2]));
    });
    check_as_float<L>(xwb, [](const auto& t) {
      return F::group_norm(t[0], F::GroupNormFuncOptions(2).weight(t[1]).bias(t[2]));
    });
    check_as_float<L>(xwb, [](const auto& t) {
      return F::batch_norm(t[0], std::nullopt, std::nullopt, F::BatchNormFuncOptions().weight(t[1]).bias(t[2]).training(true));
    });
    check_as_float<L>(xwb, [](const auto& t) { return F::instance_norm(t[0], F::InstanceNormFuncOptions().weight(t[1]).bias(t[2])); });
  }
}

// The running statistics a training step writes: those of the float function, rounded to L,
// in the caller's own tensors.
template <class L>
void check_running_statistics() {
  const st::Tensor<float> x = exact({6, 3, 4}, 1), mean0 = exact({3}, 2), var0 = exact({3}, 3, true);
  const st::Tensor<L> mean = mean0.template to<L>(), var = var0.template to<L>();
  const st::Tensor<float> mean_f = mean0.clone(), var_f = var0.clone();
  const auto o = F::BatchNormFuncOptions().training(true).momentum(0.25);
  F::batch_norm(x.template to<L>(), mean, var, o);
  F::batch_norm(x, mean_f, var_f, o);
  check_same_bits(mean, mean_f);
  check_same_bits(var, var_f);
  CHECK(as_doubles(mean) != as_doubles(mean0.template to<L>()));  // it did move

  const st::Tensor<L> imean = mean0.template to<L>(), ivar = var0.template to<L>();
  const st::Tensor<float> imean_f = mean0.clone(), ivar_f = var0.clone();
  F::instance_norm(x.template to<L>(), F::InstanceNormFuncOptions().running_mean(imean).running_var(ivar));
  F::instance_norm(x, F::InstanceNormFuncOptions().running_mean(imean_f).running_var(ivar_f));
  check_same_bits(imean, imean_f);
  check_same_bits(ivar, ivar_f);
}
}  // namespace

TEST_CASE("nn on half: each layer is the float layer rounded once", "[nn]") { check_layers<st::half>(); }
TEST_CASE("nn on bfloat16: each layer is the float layer rounded once", "[nn]") { check_layers<st::bfloat16>(); }

TEST_CASE("nn on half and bfloat16: running statistics are written back", "[nn]") {
  check_running_statistics<st::half>();
  check_running_statistics<st::bfloat16>();
}

TEST_CASE("nn on half and bfloat16: tensor options of another type are refused as torch refuses them", "[nn]") {
  const auto x = st::zeros<st::bfloat16>({2, 3});
  const auto target = st::tensor<std::int64_t>({0, 2});
  CHECK_THROWS_WITH(F::cross_entropy(x, target, F::CrossEntropyFuncOptions().weight(st::ones<float>({3}))),
                    "expected scalar type BFloat16 but found Float");
  CHECK_THROWS_WITH(F::cross_entropy(st::zeros<float>({2, 3}), target,
                                     F::CrossEntropyFuncOptions().weight(st::ones<st::half>({3}))),
                    "expected scalar type Float but found Half");
}

TEST_CASE("nn on half and bfloat16: dropout and embedding in the type itself", "[nn]") {
  // p = 0.5 scales by 2, exact in every type: the same mask as float's for the same seed.
  const st::Tensor<float> x = exact({50, 40}, 1);
  st::manual_seed(3);
  const auto y = F::dropout(x.to<st::half>(), F::DropoutFuncOptions().p(0.5));
  st::manual_seed(3);
  const auto yf = F::dropout(x, F::DropoutFuncOptions().p(0.5));
  check_same_bits(y, yf);

  // A row looked up twice gets its gradient added in the type, one add at a time (torch's
  // index_add_ in bfloat16): 1 + 2^-8 + 2^-8 stays 1 in bfloat16 (each add rounds to even).
  const auto w = st::zeros<st::bfloat16>({3, 2}).requires_grad_();
  const auto index = st::tensor<std::int64_t>({1, 1, 1, 0});
  const auto e = F::embedding(index, w, F::EmbeddingFuncOptions().padding_idx(0));
  CHECK(std::vector<std::int64_t>(e.sizes().begin(), e.sizes().end()) == std::vector<std::int64_t>{4, 2});
  const auto g = st::tensor<float>({{1.f, 1.f}, {0.00390625f, 0.5f}, {0.00390625f, 0.5f}, {7.f, 7.f}}).to<st::bfloat16>();
  e.backward(g);
  CHECK(as_doubles(w.grad()) == std::vector<double>{0, 0, 1, 2, 0, 0});
}

TEST_CASE("nn on bfloat16: a module trains in the type", "[nn]") {
  // A ported bfloat16 PyTorch snippet: model.to(torch.bfloat16); loss.backward(); opt.step()
  // written with the type as the modules' template argument.
  st::manual_seed(0);
  st::nn::Sequential<st::bfloat16> model(st::nn::Conv2d<st::bfloat16>(st::nn::Conv2dOptions(1, 4, 3).padding(1)),
                                         st::nn::BatchNorm2d<st::bfloat16>(4), st::nn::ReLU<st::bfloat16>(),
                                         st::nn::Flatten<st::bfloat16>(),
                                         st::nn::Linear<st::bfloat16>(4 * 5 * 5, 3));
  const auto x = st::randn<float>({8, 1, 5, 5}).to<st::bfloat16>();
  const auto y = st::tensor<std::int64_t>({0, 1, 2, 0, 1, 2, 0, 1});
  const auto loss = F::cross_entropy(model(x), y);
  loss.backward();
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(p.has_grad());
    CHECK(p.grad().sizes() == p.sizes());
  }
  CHECK(std::isfinite(static_cast<float>(loss.item())));
  // The running statistics moved from their initial zeros and ones.
  const auto buffers = model.named_buffers();
  REQUIRE(buffers.size() == 2);
  CHECK(as_doubles(buffers[0].second) != std::vector<double>(4, 0.0));
}

namespace {
// One step of an optimizer over a parameter of L equals the float step rounded to L (each
// element is computed in float; the state starts at zero, so nothing rounded enters the step).
template <class L, class Make>
void check_first_step(Make make) {
  const st::Tensor<float> p0 = exact({37}, 5), g = exact({37}, 6);
  auto p = p0.to<L>().requires_grad_();
  auto pf = p0.clone().requires_grad_();
  st::sum(p * g.to<L>()).backward();
  st::sum(pf * g).backward();
  auto opt = make(std::vector<st::Tensor<L>>{p});
  auto opt_f = make(std::vector<st::Tensor<float>>{pf});
  opt.step();
  opt_f.step();
  check_same_bits(p.detach(), pf.detach());
}

template <class L>
void check_optimizers() {
  check_first_step<L>([](auto params) {
    using P = typename decltype(params)::value_type::value_type;
    return st::optim::SGD<P>(params, st::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01));
  });
  check_first_step<L>([](auto params) {
    using P = typename decltype(params)::value_type::value_type;
    return st::optim::Adam<P>(params, st::optim::AdamOptions(1e-2).amsgrad(true).weight_decay(0.1));
  });
  check_first_step<L>([](auto params) {
    using P = typename decltype(params)::value_type::value_type;
    return st::optim::AdamW<P>(params, st::optim::AdamWOptions(1e-2));
  });
  check_first_step<L>([](auto params) {
    using P = typename decltype(params)::value_type::value_type;
    return st::optim::RMSprop<P>(params, st::optim::RMSpropOptions(1e-2).centered(true).momentum(0.5));
  });
}
}  // namespace

TEST_CASE("optim on half and bfloat16: a step is computed in float and stored in the type", "[nn]") {
  check_optimizers<st::half>();
  check_optimizers<st::bfloat16>();
  // Steps on a bfloat16 quadratic with the state kept in bfloat16: the loss goes down. (The rate
  // itself is a float: the first steps above would differ if 1e-2 were rounded to bfloat16.)
  const auto target = exact({64}, 7).to<st::bfloat16>();
  auto w = st::zeros<st::bfloat16>({64}).requires_grad_();
  st::optim::Adam<st::bfloat16> opt({w}, st::optim::AdamOptions(0.05));
  float first = 0, last = 0;
  for (int i = 0; i < 40; ++i) {
    opt.zero_grad();
    const st::Tensor<st::bfloat16> loss = st::mean(st::square(w - target));
    loss.backward();
    opt.step();
    (i == 0 ? first : last) = static_cast<float>(loss.item());
  }
  CHECK(last < first / 10);
}

TEST_CASE("nn: a module loads a state_dict of another dtype (PyTorch's model.to(dtype))", "[nn]") {
  st::manual_seed(1);
  st::nn::Linear<float> model(5, 3);
  st::nn::Linear<double> model64(5, 3);
  st::nn::Linear<st::bfloat16> model16(5, 3);
  model64.load_state_dict(model.state_dict());
  model16.load_state_dict(model.state_dict());
  CHECK(as_doubles(model64.weight) == as_doubles(model.weight));
  CHECK(as_doubles(*model64.bias) == as_doubles(*model.bias));
  check_same_bits(model16.weight, model.weight);
  CHECK(model16.weight.requires_grad());  // still the module's own parameter
  const auto x = st::randn<float>({2, 5});
  const auto y64 = as_doubles(model64(x.to<double>()).detach()), y = as_doubles(model(x).detach());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y64[i] == Approx(y[i]).epsilon(1e-6));
  st::nn::Linear<double> wrong(5, 4);
  CHECK_THROWS_WITH(wrong.load_state_dict(model.state_dict()),
                    Catch::Contains("size mismatch for weight: copying a param with shape [3, 5], the shape in "
                                    "current model is [4, 5]"));
}

// A PyTorch program ported line by line, as first written:
//   model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3)).to(torch.bfloat16)
//   opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
//   x = torch.randn(256, 4).to(torch.bfloat16); y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
//   for step in range(150):
//       loss = F.cross_entropy(model(x), y)
//       opt.zero_grad(); loss.backward(); opt.step()
//   acc = (model(x).argmax(1) == y).float().mean()
TEST_CASE("nn on bfloat16: a ported training loop learns", "[nn]") {
  namespace nn = strata::nn;
  st::manual_seed(0);
  auto model = nn::Sequential(nn::Linear<st::bfloat16>(4, 32), nn::ReLU<st::bfloat16>(), nn::Linear<st::bfloat16>(32, 3));
  auto opt = st::optim::AdamW(model.parameters(), st::optim::AdamWOptions(1e-2));
  auto x = st::randn<float>({256, 4}).to<st::bfloat16>();
  auto y = (x.select(1, 0) > 0).to<std::int64_t>() + (x.select(1, 1) > 0).to<std::int64_t>();
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    auto loss = F::cross_entropy(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = static_cast<float>(loss.item());
  }
  auto acc = (model(x).argmax(1) == y).to<float>().mean().item();
  CHECK(last < first / 2);
  CHECK(acc > 0.9f);
}
