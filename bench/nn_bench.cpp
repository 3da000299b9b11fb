// SPDX-License-Identifier: MIT
// strata.nn's convolution and pooling (src/nn_conv.cpp: im2col + OpenBLAS sgemm over tiles of
// output positions) on a ResNet stage's shapes, float32, batch 32, 64 channels of 56 x 56:
//   conv2d_3x3     weight [64, 64, 3, 3], bias, padding 1
//   conv2d_dw3x3   weight [64, 1, 3, 3], bias, padding 1, groups 64 (depthwise)
//   conv2d_1x1     weight [128, 64, 1, 1], bias (strata's GEMM reads the input in place)
// each forward only (_fwd) and forward + backward of sum(y * g) for a fixed random g, with the
// gradients of input, weight and bias (_fwd_bwd: fresh leaves every iteration, so no gradient
// is zeroed nor accumulated into, in either library); max_pool2d 2 x 2 forward; beside, when
// CMake finds Torch, libtorch 1.13's at::conv2d / max_pool2d (oneDNN) on the same data in the
// same process (bench/nn_torch.cpp), and the peak of the GEMM strata's convolution calls: one
// single-threaded cblas_sgemm of the 3x3 convolution's shapes per sample (forward, and the
// backward's two), of the 1x1's, and 1024^3. The kernel OpenBLAS picked is printed first
// (0.3.21 does not know AMD's family 26, Zen 5, and falls back to its AVX2 Haswell kernel;
// OPENBLAS_CORETYPE=SKYLAKEX selects its AVX-512 one, for strata's rows as well).
// Rows: <case>/strata|torch/threads:<n>, <sgemm case>/openblas/threads:1. Counters: GFLOP/s
// (2 N Cout Hout Wout Cin/groups kH kW a forward, 3 times that forward + backward; the bias is
// not counted) and GB/s for max_pool2d (the input read and the output written once; strata
// also writes the int64 indices it keeps for the backward, not counted), and "faults", the
// process's minor page faults per iteration: strata keeps its large blocks (on huge pages),
// libtorch's come from glibc's malloc, which maps and unmaps each, so every iteration touches
// fresh 4 KiB pages unless run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (as autograd_bench
// runs torch_autograd_bench a second time); in a VM such faults can dominate libtorch's time.
// Before the runs, strata's outputs and gradients are checked against libtorch's on the first
// two samples of the batch (elementwise, relative to the largest magnitude).
//
// digits_cnn_step: one training step of samples/digits_cnn.cpp's network (Conv2d(1, 16, 3, pad 1),
// BatchNorm2d(16), ReLU, MaxPool2d(2), Conv2d(16, 32, 3, pad 1), BatchNorm2d(32), ReLU,
// MaxPool2d(2), Dropout(0.25), Linear(128, 10); AdamW(lr 3e-3, weight decay 1e-4)) on a batch of
// 64 random 8 x 8 images with random labels 0..9 (seeded): forward in training mode,
// cross_entropy, zero_grad, backward, step; beside libtorch's torch::nn version of the same
// network started from the same weights. Counter: steps/s (and faults: none in either library,
// with or without glibc's huge pages, as its blocks are small). Each run makes a fresh
// network and optimizer and steps it on the same batch. Checked before the runs: the logits, the
// loss and every parameter's gradient of one training-mode forward and backward without the
// dropout (batch statistics in both batch norms), strata's against libtorch's.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>
import strata;

namespace st = strata;
namespace nn = strata::nn;
namespace F = strata::nn::functional;

// OpenBLAS's CBLAS entry point and thread count (the same library strata's src/blas.cpp calls;
// declared here as in bench/linalg_bench.cpp, since Debian's cblas.h may be netlib's).
extern "C" {
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
char* openblas_get_config(void);
}

// libtorch's half (bench/nn_torch.cpp), or the empty ones below without Torch. The tensors are
// passed as contiguous float arrays; the torch side copies what it keeps.
void register_torch_conv(const char* name, bool backward, const float* x, const float* w, const float* b,
                         const float* g, std::int64_t n, std::int64_t cin, std::int64_t h, std::int64_t wd,
                         std::int64_t cout, std::int64_t k, std::int64_t groups, std::int64_t pad, double flop);
void register_torch_max_pool(const char* name, const float* x, std::int64_t n, std::int64_t c, std::int64_t h,
                             std::int64_t wd, double bytes);
// Writes torch's y, and the gradients of sum(y * g) gx, gw, gb; false without Torch.
bool torch_conv_reference(const float* x, const float* w, const float* b, const float* g, std::int64_t n,
                          std::int64_t cin, std::int64_t h, std::int64_t wd, std::int64_t cout, std::int64_t k,
                          std::int64_t groups, std::int64_t pad, float* y, float* gx, float* gw, float* gb);
bool torch_max_pool_reference(const float* x, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t wd,
                              float* y);
// Which convolution backend libtorch picks for the case (e.g. "Mkldnn"), "" without Torch.
std::string torch_conv_backend(std::int64_t cin, std::int64_t cout, std::int64_t k, std::int64_t groups,
                               std::int64_t pad);
// The digits CNN: x [n, 1, 8, 8], labels y [n], and the initial parameters (contiguous, with
// their element counts) in parameters() order, which libtorch's network copies.
using param_list = std::vector<std::pair<const float*, std::int64_t>>;
void register_torch_digits_step(const char* name, const float* x, const std::int64_t* y, std::int64_t n,
                                const param_list& params);
// Writes torch's logits [n, 10], loss and the parameters' gradients (concatenated, in
// parameters() order) of one training-mode forward without the dropout and its backward.
bool torch_digits_reference(const float* x, const std::int64_t* y, std::int64_t n, const param_list& params,
                            float* logits, float* loss, float* grads);
#ifndef STRATA_NN_TORCH
void register_torch_conv(const char*, bool, const float*, const float*, const float*, const float*, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, double) {}
void register_torch_max_pool(const char*, const float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                             double) {}
bool torch_conv_reference(const float*, const float*, const float*, const float*, std::int64_t, std::int64_t,
                          std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*,
                          float*, float*, float*) {
  return false;
}
bool torch_max_pool_reference(const float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*) {
  return false;
}
std::string torch_conv_backend(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t) { return ""; }
void register_torch_digits_step(const char*, const float*, const std::int64_t*, std::int64_t, const param_list&) {}
bool torch_digits_reference(const float*, const std::int64_t*, std::int64_t, const param_list&, float*, float*,
                            float*) {
  return false;
}
#endif

namespace {
constexpr std::int64_t N = 32, C = 64, H = 56, W = 56;

struct conv_case {
  const char* name;
  std::int64_t cout, k, groups, pad;
  std::int64_t cin_g() const { return C / groups; }
  std::int64_t hout() const { return H + 2 * pad - k + 1; }
  std::int64_t wout() const { return W + 2 * pad - k + 1; }
  double forward_flop() const {
    return 2.0 * static_cast<double>(N * cout * hout() * wout() * cin_g() * k * k);
  }
};
const conv_case cases[] = {
    {"conv2d_3x3", 64, 3, 1, 1},
    {"conv2d_dw3x3", 64, 3, 64, 1},
    {"conv2d_1x1", 128, 1, 1, 0},
};

// The data: x [N, C, H, W], per case a weight, a bias and the g of sum(y * g), all randn (the
// weights scaled by 1 / sqrt(fan-in), so that y is of the order of x).
struct conv_data {
  st::Tensor<float> w, b, g;
};
st::Tensor<float>& input() {
  static st::Tensor<float> x = [] {
    st::manual_seed(1);
    return st::randn<float>({N, C, H, W});
  }();
  return x;
}
conv_data make_data(const conv_case& c) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.cin_g() * c.k * c.k));
  conv_data d;
  d.w = st::randn<float>({c.cout, c.cin_g(), c.k, c.k}) * scale;
  d.b = st::randn<float>({c.cout});
  d.g = st::randn<float>({N, c.cout, c.hout(), c.wout()});
  return d;
}

st::Tensor<float> conv(const conv_case& c, const st::Tensor<float>& x, const st::Tensor<float>& w,
                       const st::Tensor<float>& b) {
  return F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).padding(c.pad).groups(c.groups));
}

struct strata_threads {
  explicit strata_threads(int n) { st::set_num_threads(n); }
  ~strata_threads() { st::set_num_threads(1); }
};
// After a run on two threads, its OpenMP workers spin for a while before they sleep (LLVM's
// libomp: KMP_BLOCKTIME, 200 ms; libtorch's and oneDNN's GOMP_* calls bind to the same libomp,
// which comes first in this binary's libraries); on a 2-core machine the next run would share
// a core with them, so a multi-threaded run waits that out (untimed).
void settle(benchmark::State& s) {
  if (s.range(0) > 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
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

void strata_conv_fwd(benchmark::State& s, const conv_case& c, const conv_data& d) {
  const strata_threads threads(static_cast<int>(s.range(0)));
  const st::Tensor<float>& x = input();
  const long f0 = minor_faults();
  for (auto _ : s) {
    st::Tensor<float> y = conv(c, x, d.w, d.b);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  faults(s, f0);
  rate(s, "GFLOP/s", c.forward_flop());
  settle(s);
}
void strata_conv_fwd_bwd(benchmark::State& s, const conv_case& c, const conv_data& d) {
  const strata_threads threads(static_cast<int>(s.range(0)));
  const st::Tensor<float>& x = input();
  const long f0 = minor_faults();
  for (auto _ : s) {
    // Fresh leaves on the same elements: their gradients are allocated by this backward.
    st::Tensor<float> xl = x.detach().requires_grad_(), wl = d.w.detach().requires_grad_(),
                      bl = d.b.detach().requires_grad_();
    st::Tensor<float> y = conv(c, xl, wl, bl);
    y.backward(d.g);
    benchmark::DoNotOptimize(xl.grad().data_ptr());
    benchmark::DoNotOptimize(wl.grad().data_ptr());
    benchmark::DoNotOptimize(bl.grad().data_ptr());
  }
  faults(s, f0);
  rate(s, "GFLOP/s", 3 * c.forward_flop());
  settle(s);
}
double max_pool_bytes() { return 4.0 * static_cast<double>(N * C * H * W + N * C * (H / 2) * (W / 2)); }
void strata_max_pool(benchmark::State& s) {
  const strata_threads threads(static_cast<int>(s.range(0)));
  const st::Tensor<float>& x = input();
  const long f0 = minor_faults();
  for (auto _ : s) {
    st::Tensor<float> y = F::max_pool2d(x, F::MaxPool2dFuncOptions(2));
    benchmark::DoNotOptimize(y.data_ptr());
  }
  faults(s, f0);
  rate(s, "GB/s", max_pool_bytes());
  settle(s);
}

// ---- the GEMM strata's convolution calls, alone, on one thread ----
struct sgemm_case {
  const char* name;
  bool ta, tb;
  int m, n, k;
};
const sgemm_case sgemms[] = {
    {"sgemm_conv3x3_fwd", false, false, 64, 56 * 56, 64 * 9},         // y = w @ col
    {"sgemm_conv3x3_bwd_input", true, false, 64 * 9, 56 * 56, 64},    // col = w^T @ gy
    {"sgemm_conv3x3_bwd_weight", false, true, 64, 64 * 9, 56 * 56},   // gw += gy @ col^T
    {"sgemm_conv1x1_fwd", false, false, 128, 56 * 56, 64},            // y = w @ x
    {"sgemm_1024", false, false, 1024, 1024, 1024},
};
void openblas_sgemm(benchmark::State& s, const sgemm_case& c) {
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(static_cast<int>(s.range(0)));
  constexpr int row_major = 101, no_trans = 111, trans = 112;
  st::manual_seed(2);
  const std::vector<float> a = st::randn<float>({c.m * c.k}).to_vector(), b = st::randn<float>({c.k * c.n}).to_vector();
  std::vector<float> out(static_cast<std::size_t>(c.m) * static_cast<std::size_t>(c.n));
  const int lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n;
  const long f0 = minor_faults();
  for (auto _ : s) {
    cblas_sgemm(row_major, c.ta ? trans : no_trans, c.tb ? trans : no_trans, c.m, c.n, c.k, 1.0f, a.data(), lda,
                b.data(), ldb, 0.0f, out.data(), c.n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  faults(s, f0);
  rate(s, "GFLOP/s", 2.0 * c.m * c.n * static_cast<double>(c.k));
  openblas_set_num_threads(before);
}

// ---- once, before the runs: strata against libtorch on the first two samples ----
// The largest |a - b| relative to the largest |b|.
// With min_scale, relative to at least that.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b, double min_scale = 0) {
  double diff = 0, scale = min_scale;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}
bool check(const char* what, const std::vector<float>& mine, const std::vector<float>& want, double min_scale = 0,
           const char* scale_name = "max |torch|") {
  const double d = mine.size() == want.size() ? rel_diff(mine, want, min_scale) : INFINITY;
  const bool ok = d < 1e-4;
  std::printf("check %-28s max |strata - torch| / %s = %.1e %s\n", what, scale_name, d, ok ? "ok" : "MISMATCH");
  return ok;
}
bool check_against_torch(const std::vector<conv_data>& data) {
  constexpr std::int64_t n = 2;
  const st::Tensor<float> x = input().narrow(0, 0, n).contiguous();
  bool ok = true, ran = false;
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const conv_case& c = cases[i];
    const conv_data& d = data[i];
    const st::Tensor<float> g = d.g.narrow(0, 0, n).contiguous();
    st::Tensor<float> xl = x.detach().requires_grad_(), wl = d.w.detach().requires_grad_(),
                      bl = d.b.detach().requires_grad_();
    st::Tensor<float> y = conv(c, xl, wl, bl);
    y.backward(g);
    std::vector<float> ty(static_cast<std::size_t>(y.numel())), tgx(static_cast<std::size_t>(x.numel())),
        tgw(static_cast<std::size_t>(d.w.numel())), tgb(static_cast<std::size_t>(d.b.numel()));
    if (!torch_conv_reference(x.data_ptr(), d.w.data_ptr(), d.b.data_ptr(), g.data_ptr(), n, C, H, W, c.cout, c.k,
                              c.groups, c.pad, ty.data(), tgx.data(), tgw.data(), tgb.data()))
      return true;  // no libtorch: nothing to check against
    ran = true;
    const std::string name = c.name;
    ok &= check((name + " y").c_str(), y.to_vector(), ty);
    ok &= check((name + " x.grad").c_str(), xl.grad().to_vector(), tgx);
    ok &= check((name + " w.grad").c_str(), wl.grad().to_vector(), tgw);
    ok &= check((name + " b.grad").c_str(), bl.grad().to_vector(), tgb);
    std::printf("torch's backend for %s: %s\n", c.name,
                torch_conv_backend(C, c.cout, c.k, c.groups, c.pad).c_str());
  }
  if (ran) {
    std::vector<float> ty(static_cast<std::size_t>(n * C * (H / 2) * (W / 2)));
    torch_max_pool_reference(x.data_ptr(), n, C, H, W, ty.data());
    ok &= check("max_pool2d_2x2 y", F::max_pool2d(x, F::MaxPool2dFuncOptions(2)).to_vector(), ty);
  }
  return ok;
}

// ---- one training step of samples/digits_cnn.cpp's network ----
// The sample's Net, as it is there.
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
constexpr std::int64_t digits_batch = 64;
// Always the same initial weights (libtorch's network copies them).
std::unique_ptr<Net> make_net() {
  st::manual_seed(3);
  return std::make_unique<Net>();
}
struct digits_data {
  st::Tensor<float> x;         // [64, 1, 8, 8] in [0, 1), as the sample's pixels
  st::Tensor<std::int64_t> y;  // [64] in 0..9
};
const digits_data& digits() {
  static const digits_data d = [] {
    st::manual_seed(4);
    digits_data r;
    r.x = st::rand<float>({digits_batch, 1, 8, 8});
    r.y = st::randint(10, {digits_batch});
    return r;
  }();
  return d;
}
param_list param_pointers(const Net& net) {
  param_list out;
  for (const st::Tensor<float>& p : net.parameters()) out.emplace_back(p.data_ptr(), p.numel());
  return out;
}
void strata_digits_step(benchmark::State& s) {
  const strata_threads threads(static_cast<int>(s.range(0)));
  const digits_data& d = digits();
  const std::unique_ptr<Net> net = make_net();
  net->train();
  st::optim::AdamW opt(net->parameters(), st::optim::AdamWOptions(3e-3).weight_decay(1e-4));
  st::manual_seed(5);  // the dropout's masks
  const long f0 = minor_faults();
  for (auto _ : s) {
    st::Tensor<float> loss = F::cross_entropy(net->forward(d.x), d.y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  faults(s, f0);
  rate(s, "steps/s", 1.0);
  settle(s);
}
// The check: one training-mode forward without the dropout, cross_entropy and backward.
bool check_digits_against_torch() {
  const digits_data& d = digits();
  const std::unique_ptr<Net> net = make_net();
  net->train();
  const param_list params = param_pointers(*net);
  std::int64_t total = 0;
  for (const auto& p : params) total += p.second;
  std::vector<float> tlogits(static_cast<std::size_t>(digits_batch * 10)), tgrads(static_cast<std::size_t>(total));
  float tloss = 0;
  // libtorch first: it copies the parameters before strata's backward gives them gradients.
  if (!torch_digits_reference(d.x.data_ptr(), d.y.data_ptr(), digits_batch, params, tlogits.data(), &tloss,
                              tgrads.data()))
    return true;
  const st::Tensor<float> logits = net->head->forward(net->features->forward(d.x).flatten(1));
  st::Tensor<float> loss = F::cross_entropy(logits, d.y);
  loss.backward();
  bool ok = check("digits_cnn logits", logits.detach().to_vector(), tlogits);
  ok &= check("digits_cnn loss", {loss.item()}, {tloss});
  // The gradients relative to the network's largest: a convolution's bias ahead of a batch norm
  // in training mode has the gradient 0 (the batch mean cancels it), so both are rounding noise
  // (~1e-7), which a comparison relative to its own magnitude would call a mismatch.
  double largest = 0;
  for (const float g : tgrads) largest = std::max(largest, std::abs(static_cast<double>(g)));
  std::int64_t at = 0;
  for (const auto& [name, p] : net->named_parameters()) {
    const auto first = tgrads.begin() + at, last = first + p.numel();
    ok &= check(("digits_cnn " + name + ".grad").c_str(), p.grad().to_vector(), std::vector<float>(first, last),
                largest, "max |torch grads|");
    at += p.numel();
  }
  return ok;
}

template <class Lambda>
void add(const std::string& name, Lambda f, bool two_threads = true) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), f)->ArgName("threads")->Arg(1);
  if (two_threads) b->Arg(2);
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
}  // namespace

int main(int argc, char** argv) {
  std::printf("OpenBLAS: %s; kernel %s\n", openblas_get_config(), openblas_get_corename());
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!tunables || !std::strstr(tunables, "glibc.malloc.hugetlb=1"))
    std::printf("note: libtorch's large blocks come from glibc's malloc on 4 KiB pages here (see \"faults\"); "
                "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 gives it huge pages, as strata's allocator has\n");
  std::vector<conv_data> data;
  for (const conv_case& c : cases) data.push_back(make_data(c));
  bool agree = check_against_torch(data);
  agree &= check_digits_against_torch();
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const conv_case& c = cases[i];
    const conv_data& d = data[i];
    const std::string name = c.name;
    add(name + "_fwd/strata", [&c, &d](benchmark::State& s) { strata_conv_fwd(s, c, d); });
    register_torch_conv((name + "_fwd/torch").c_str(), false, input().data_ptr(), d.w.data_ptr(), d.b.data_ptr(),
                        d.g.data_ptr(), N, C, H, W, c.cout, c.k, c.groups, c.pad, c.forward_flop());
    add(name + "_fwd_bwd/strata", [&c, &d](benchmark::State& s) { strata_conv_fwd_bwd(s, c, d); });
    register_torch_conv((name + "_fwd_bwd/torch").c_str(), true, input().data_ptr(), d.w.data_ptr(),
                        d.b.data_ptr(), d.g.data_ptr(), N, C, H, W, c.cout, c.k, c.groups, c.pad,
                        3 * c.forward_flop());
  }
  add("max_pool2d_2x2_fwd/strata", strata_max_pool);
  register_torch_max_pool("max_pool2d_2x2_fwd/torch", input().data_ptr(), N, C, H, W, max_pool_bytes());
  add("digits_cnn_step/strata", strata_digits_step);
  {
    const std::unique_ptr<Net> net = make_net();  // libtorch copies its initial parameters here
    register_torch_digits_step("digits_cnn_step/torch", digits().x.data_ptr(), digits().y.data_ptr(), digits_batch,
                               param_pointers(*net));
  }
  for (const sgemm_case& c : sgemms)
    add(std::string(c.name) + "/openblas", [&c](benchmark::State& s) { openblas_sgemm(s, c); }, false);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!agree) {
    std::fprintf(stderr, "nn_bench: strata and libtorch disagree (see the check lines above)\n");
    return 1;
  }
}
