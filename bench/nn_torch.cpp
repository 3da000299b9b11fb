// SPDX-License-Identifier: MIT
// libtorch's side of bench/nn_bench.cpp: at::conv2d (oneDNN in Debian's libtorch 1.13) forward
// and forward + backward, and max_pool2d, on copies of the strata benchmark's data; one
// training step of samples/digits_cnn.cpp's network written with torch::nn modules and
// torch::optim::AdamW; and the reference results its checks compare strata's against. Plain
// C++17 (libtorch 1.13's headers), linked into nn_bench when CMake finds Torch.
#include <torch/torch.h>
#include <ATen/native/ConvUtils.h>

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {
// A copy of a contiguous float array as a tensor; with keep, made once per array and sizes
// (the benchmark's arrays live as long as the process; the check's are temporaries, not kept).
torch::Tensor copy_of(const float* p, std::vector<std::int64_t> sizes, bool keep = true) {
  if (!keep) return torch::from_blob(const_cast<float*>(p), sizes, torch::kFloat).clone();
  static std::map<std::pair<const float*, std::vector<std::int64_t>>, torch::Tensor> made;
  auto key = std::make_pair(p, sizes);
  auto it = made.find(key);
  if (it == made.end())
    it = made.emplace(key, torch::from_blob(const_cast<float*>(p), sizes, torch::kFloat).clone()).first;
  return it->second;
}
void write(const torch::Tensor& t, float* out) {
  const torch::Tensor c = t.contiguous();
  std::memcpy(out, c.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(c.numel()));
}

struct conv_args {
  torch::Tensor x, w, b, g;
  std::int64_t groups, pad;
  torch::Tensor run(const torch::Tensor& xi, const torch::Tensor& wi, const torch::Tensor& bi) const {
    return at::conv2d(xi, wi, bi, {1, 1}, {pad, pad}, {1, 1}, groups);
  }
};
conv_args make_args(const float* x, const float* w, const float* b, const float* g, std::int64_t n,
                    std::int64_t cin, std::int64_t h, std::int64_t wd, std::int64_t cout, std::int64_t k,
                    std::int64_t groups, std::int64_t pad, bool keep) {
  const std::int64_t ho = h + 2 * pad - k + 1, wo = wd + 2 * pad - k + 1;
  return {copy_of(x, {n, cin, h, wd}, keep), copy_of(w, {cout, cin / groups, k, k}, keep), copy_of(b, {cout}, keep),
          copy_of(g, {n, cout, ho, wo}, keep), groups, pad};
}

void rate(benchmark::State& s, const char* counter, double per_iteration) {
  s.counters[counter] = benchmark::Counter(per_iteration * static_cast<double>(s.iterations()),
                                          benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
// The process's minor page faults so far: "faults" is their count per iteration (a fresh
// allocation of a large block that the allocator did not keep is touched page by page).
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
void faults(benchmark::State& s, long before) {
  s.counters["faults"] =
      benchmark::Counter(static_cast<double>(minor_faults() - before), benchmark::Counter::kAvgIterations);
}
// As nn_bench.cpp's settle: a multi-threaded run's OpenMP workers spin a while after it.
void settle(benchmark::State& s) {
  if (s.range(0) > 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// samples/digits_cnn.cpp's Net (its PyTorch original) with libtorch's C++ modules.
struct DigitsNet : torch::nn::Module {
  torch::nn::Sequential features{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear head{nullptr};
  DigitsNet() {
    namespace tnn = torch::nn;
    features = register_module(
        "features", tnn::Sequential(tnn::Conv2d(tnn::Conv2dOptions(1, 16, 3).padding(1)), tnn::BatchNorm2d(16),
                                    tnn::ReLU(), tnn::MaxPool2d(tnn::MaxPool2dOptions(2)),
                                    tnn::Conv2d(tnn::Conv2dOptions(16, 32, 3).padding(1)), tnn::BatchNorm2d(32),
                                    tnn::ReLU(), tnn::MaxPool2d(tnn::MaxPool2dOptions(2))));
    dropout = register_module("dropout", tnn::Dropout(0.25));
    head = register_module("head", tnn::Linear(32 * 2 * 2, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) { return head(dropout(features->forward(x).flatten(1))); }
};
// A DigitsNet with the given initial parameters (strata's, in parameters() order), in training mode.
std::shared_ptr<DigitsNet> make_digits_net(const std::vector<torch::Tensor>& init) {
  auto net = std::make_shared<DigitsNet>();
  std::vector<torch::Tensor> params = net->parameters();
  TORCH_CHECK(params.size() == init.size(), "digits_cnn: ", params.size(), " parameters, given ", init.size());
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    TORCH_CHECK(params[i].numel() == init[i].numel(), "digits_cnn: parameter ", i, " has ", params[i].numel(),
                " elements, given ", init[i].numel());
    params[i].copy_(init[i].view_as(params[i]));
  }
  net->train();
  return net;
}
std::vector<torch::Tensor> copy_params(const std::vector<std::pair<const float*, std::int64_t>>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& [p, n] : params)
    out.push_back(torch::from_blob(const_cast<float*>(p), {n}, torch::kFloat).clone());
  return out;
}
torch::Tensor copy_labels(const std::int64_t* y, std::int64_t n) {
  return torch::from_blob(const_cast<std::int64_t*>(y), {n}, torch::kLong).clone();
}

const char* backend_name(at::native::ConvBackend b) {
  using B = at::native::ConvBackend;
  switch (b) {
    case B::Mkldnn: return "Mkldnn (oneDNN)";
    case B::MkldnnEmpty: return "MkldnnEmpty";
    case B::Slow2d: return "Slow2d (im2col + GEMM)";
    case B::SlowDilated2d: return "SlowDilated2d";
    case B::NnpackSpatial: return "NnpackSpatial";
    case B::Winograd3x3Depthwise: return "Winograd3x3Depthwise";
    case B::Xnnpack2d: return "Xnnpack2d";
    case B::Empty: return "Empty";
    default: return "other";
  }
}
}  // namespace

void register_torch_conv(const char* name, bool backward, const float* x, const float* w, const float* b,
                         const float* g, std::int64_t n, std::int64_t cin, std::int64_t h, std::int64_t wd,
                         std::int64_t cout, std::int64_t k, std::int64_t groups, std::int64_t pad, double flop) {
  const conv_args a = make_args(x, w, b, g, n, cin, h, wd, cout, k, groups, pad, true);
  benchmark::RegisterBenchmark(name, [a, backward, flop](benchmark::State& s) {
    at::set_num_threads(static_cast<int>(s.range(0)));
    const long f0 = minor_faults();
  for (auto _ : s) {
      if (!backward) {
        torch::Tensor y = a.run(a.x, a.w, a.b);
        benchmark::DoNotOptimize(y.data_ptr());
      } else {
        // Fresh leaves on the same elements, as in nn_bench.cpp: the gradients are new.
        torch::Tensor xl = a.x.detach().requires_grad_(), wl = a.w.detach().requires_grad_(),
                      bl = a.b.detach().requires_grad_();
        torch::Tensor y = a.run(xl, wl, bl);
        y.backward(a.g);
        benchmark::DoNotOptimize(xl.grad().data_ptr());
        benchmark::DoNotOptimize(wl.grad().data_ptr());
        benchmark::DoNotOptimize(bl.grad().data_ptr());
      }
    }
    faults(s, f0);
    rate(s, "GFLOP/s", flop);
    at::set_num_threads(1);
    settle(s);
  })
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void register_torch_max_pool(const char* name, const float* x, std::int64_t n, std::int64_t c, std::int64_t h,
                             std::int64_t wd, double bytes) {
  const torch::Tensor t = copy_of(x, {n, c, h, wd});
  benchmark::RegisterBenchmark(name, [t, bytes](benchmark::State& s) {
    at::set_num_threads(static_cast<int>(s.range(0)));
    const long f0 = minor_faults();
  for (auto _ : s) {
      torch::Tensor y = torch::max_pool2d(t, {2, 2});
      benchmark::DoNotOptimize(y.data_ptr());
    }
    faults(s, f0);
    rate(s, "GB/s", bytes);
    at::set_num_threads(1);
    settle(s);
  })
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

bool torch_conv_reference(const float* x, const float* w, const float* b, const float* g, std::int64_t n,
                          std::int64_t cin, std::int64_t h, std::int64_t wd, std::int64_t cout, std::int64_t k,
                          std::int64_t groups, std::int64_t pad, float* y, float* gx, float* gw, float* gb) {
  const conv_args a = make_args(x, w, b, g, n, cin, h, wd, cout, k, groups, pad, false);
  torch::Tensor xl = a.x.detach().requires_grad_(), wl = a.w.detach().requires_grad_(),
                bl = a.b.detach().requires_grad_();
  torch::Tensor out = a.run(xl, wl, bl);
  out.backward(a.g);
  write(out.detach(), y);
  write(xl.grad(), gx);
  write(wl.grad(), gw);
  write(bl.grad(), gb);
  return true;
}

bool torch_max_pool_reference(const float* x, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t wd,
                              float* y) {
  write(torch::max_pool2d(copy_of(x, {n, c, h, wd}, false), {2, 2}), y);
  return true;
}

std::string torch_conv_backend(std::int64_t cin, std::int64_t cout, std::int64_t k, std::int64_t groups,
                               std::int64_t pad) {
  const torch::Tensor x = torch::zeros({32, cin, 56, 56}), w = torch::zeros({cout, cin / groups, k, k}),
                      b = torch::zeros({cout});
  const std::vector<std::int64_t> one{1, 1}, zero{0, 0}, padding{pad, pad};
  return backend_name(at::native::select_conv_backend(x, w, b, one, padding, one, false, zero, groups));
}

void register_torch_digits_step(const char* name, const float* x, const std::int64_t* y, std::int64_t n,
                                const std::vector<std::pair<const float*, std::int64_t>>& params) {
  const torch::Tensor xt = copy_of(x, {n, 1, 8, 8}), yt = copy_labels(y, n);
  const std::vector<torch::Tensor> init = copy_params(params);
  benchmark::RegisterBenchmark(name, [xt, yt, init](benchmark::State& s) {
    at::set_num_threads(static_cast<int>(s.range(0)));
    const std::shared_ptr<DigitsNet> net = make_digits_net(init);
    torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(3e-3).weight_decay(1e-4));
    torch::manual_seed(5);  // the dropout's masks
    const long f0 = minor_faults();
    for (auto _ : s) {
      torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(xt), yt);
      opt.zero_grad();
      loss.backward();
      opt.step();
      benchmark::DoNotOptimize(loss.data_ptr());
    }
    faults(s, f0);
    rate(s, "steps/s", 1.0);
    at::set_num_threads(1);
    settle(s);
  })
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

bool torch_digits_reference(const float* x, const std::int64_t* y, std::int64_t n,
                            const std::vector<std::pair<const float*, std::int64_t>>& params, float* logits,
                            float* loss, float* grads) {
  const std::shared_ptr<DigitsNet> net = make_digits_net(copy_params(params));
  const torch::Tensor xt = copy_of(x, {n, 1, 8, 8}, false), yt = copy_labels(y, n);
  // Training mode (batch statistics), without the dropout.
  const torch::Tensor out = net->head(net->features->forward(xt).flatten(1));
  const torch::Tensor l = torch::nn::functional::cross_entropy(out, yt);
  l.backward();
  write(out.detach(), logits);
  *loss = l.item<float>();
  for (const torch::Tensor& p : net->parameters()) {
    write(p.grad(), grads);
    grads += p.numel();
  }
  return true;
}
