// SPDX-License-Identifier: MIT
// strata.nn's normalisations: batch, layer, group and instance norm. Layer, group and instance
// norm and batch norm's evaluation are one fused expression (x - mean) / sqrt(var + eps) *
// weight + bias over the statistics, which are fused reductions themselves (the biased
// variance, as PyTorch normalises with), so autograd differentiates through the statistics.
// Batch norm in training, the layer of every CNN, has a loop of its own per channel, forward
// and backward, as ATen's. Running statistics are
// updated in place without the graph, with the unbiased variance, as PyTorch updates them.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>
#include "parallel.hpp"
#include "python_repr.hpp"
module strata.nn;
import strata.graph;
import strata.loop;
import strata.expr;

namespace strata::detail {
namespace {
// The sizes [1, C, 1, ...] that broadcast a per-channel tensor over x's dim 1.
dim_vector channel_sizes(std::int64_t dims, std::int64_t channels) {
  dim_vector s(static_cast<std::size_t>(dims), 1);
  s[1] = channels;
  return s;
}
// t viewed as `sizes`, or a 0-d `fill` when t is none (an identity scale or shift).
template <class T>
Tensor<T> broadcast_or(const Tensor<T>* t, int_list sizes, T fill) {
  return t ? t->reshape(sizes) : full<T>({}, fill);
}
template <class T>
void check_channels(const Tensor<T>* t, std::int64_t channels, const char* what) {
  if (t && t->numel() != channels)
    throw shape_error(std::string(what) + " should contain " + std::to_string(channels) + " elements not " +
                      std::to_string(t->numel()));
}
// (x - mean) / sqrt(var + eps) * w + b, recorded as one expression.
template <class T>
Tensor<T> normalized(const Tensor<T>& x, const Tensor<T>& mean, const Tensor<T>& var, double eps, const Tensor<T>& w,
                     const Tensor<T>& b) {
  return Tensor<T>((x - mean) / strata::sqrt(var + static_cast<T>(eps)) * w + b);
}
// running = (1 - momentum) running + momentum value, in place, without the graph.
template <class T>
void update_running(const Tensor<T>& running, const Tensor<T>& value, double momentum) {
  const grad_mode_guard off(false);
  running.copy_(Tensor<T>(static_cast<T>(1 - momentum) * running + static_cast<T>(momentum) * value));
}
// The per-channel tensors of batch and instance norm, checked against x's C channels, and the
// scale and shift viewed to broadcast over dim 1.
template <class T>
struct channel_affine {
  dim_vector chan;
  Tensor<T> w, b;
};
template <class T>
channel_affine<T> checked_channels(const Tensor<T>& x, const Tensor<T>* rm, const Tensor<T>* rv, const Tensor<T>* w,
                                   const Tensor<T>* b) {
  const std::int64_t C = x.size(1);
  check_channels(rm, C, "running_mean");
  check_channels(rv, C, "running_var");
  check_channels(w, C, "weight");
  check_channels(b, C, "bias");
  dim_vector chan = channel_sizes(x.dim(), C);
  return {chan, broadcast_or(w, chan, T(1)), broadcast_or(b, chan, T(0))};
}
// Batch norm in training mode over x [N, C, P] (contiguous): per channel (split over threads),
// the mean and biased variance in double (float128 for float128; two passes), then y = (x - mean) * invstd * w + b.
// The backward is ATen's: with xhat = (x - mean) * invstd and the channel sums of g and of
// g * xhat, dx = w * invstd * (g - sum(g) / M - xhat * sum(g * xhat) / M), dw = sum(g * xhat),
// db = sum(g). Each channel is summed by one task in one order: the same bits for any thread count.
// The sum over n < N, k < P of term(n, k) in A, in 8 lanes (element k of a row goes to lane
// k % 8) added in a fixed order at the end: independent chains the compiler vectorises, the
// same bits for any thread count.
template <class A, class F>
A lane_sum(std::int64_t N, std::int64_t P, const F& term) {
  A acc[8] = {};
  for (std::int64_t n = 0; n < N; ++n) {
    std::int64_t k = 0;
    for (; k + 8 <= P; k += 8)
      for (int j = 0; j < 8; ++j) acc[j] += term(n, k + j);
    for (; k < P; ++k) acc[k % 8] += term(n, k);
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}
// The statistics' type: double, or float128 for float128 tensors.
template <class T>
using stat_t = std::conditional_t<std::is_same_v<T, float128>, float128, double>;
template <class A>
struct batch_stats {
  std::vector<A> mean, invstd, var;
};
template <class T, class A = stat_t<T>>
batch_stats<A> batch_norm_train(const Tensor<T>& x, const T* w, const T* b, double eps, Tensor<T>& y) {
  const std::int64_t N = x.size(0), C = x.size(1), P = x.numel() / std::max<std::int64_t>(1, N * C);
  const A M = static_cast<A>(N * P);
  batch_stats<A> st{std::vector<A>(C), std::vector<A>(C), std::vector<A>(C)};
  const T* xp = x.data_ptr();
  T* yp = y.data_ptr();
  run_in_parts(C, thread_count(), thread_count(), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t c = first; c < last; ++c) {
      const auto at = [&](std::int64_t n, std::int64_t k) { return static_cast<A>(xp[(n * C + c) * P + k]); };
      const A mean = lane_sum<A>(N, P, at) / M;
      const A sq = lane_sum<A>(N, P, [&](std::int64_t n, std::int64_t k) {
        const A d = at(n, k) - mean;
        return d * d;
      });
      using std::sqrt;
      const A var = sq / M, invstd = 1 / sqrt(var + static_cast<A>(eps));
      st.mean[c] = mean;
      st.var[c] = var;
      st.invstd[c] = invstd;
      const T scale = static_cast<T>(invstd * (w ? static_cast<A>(w[c]) : A(1)));
      const T shift = static_cast<T>((b ? static_cast<A>(b[c]) : A(0)) - mean * static_cast<A>(scale));
      for (std::int64_t n = 0; n < N; ++n) {
        const T* from = xp + (n * C + c) * P;
        T* to = yp + (n * C + c) * P;
        for (std::int64_t i = 0; i < P; ++i) to[i] = from[i] * scale + shift;
      }
    }
  });
  return st;
}

}  // namespace

template <element T>
Tensor<T> batch_norm(const Tensor<T>& x, const std::optional<Tensor<T>>& running_mean,
                     const std::optional<Tensor<T>>& running_var, const nn::functional::BatchNormFuncOptions& o) {
  if (x.dim() < 2) throw shape_error("batch_norm: expected an input of 2 or more dims, but got " + to_string(x.sizes()));
  const std::int64_t C = x.size(1);
  const Tensor<T>* rm = running_mean ? &*running_mean : nullptr;
  const Tensor<T>* rv = running_var ? &*running_var : nullptr;
  const auto [chan, w, b] = checked_channels(x, rm, rv, o.template weight_as<T>(), o.template bias_as<T>());
  if (!o.training()) {
    if (!rm || !rv) throw error("running_mean and running_var must be defined in evaluation mode");
    return normalized(x, rm->reshape(chan), rv->reshape(chan), o.eps(), w, b);
  }
  const std::int64_t count = C == 0 ? 0 : x.numel() / C;
  if (count <= 1)
    throw error("Expected more than 1 value per channel when training, got input size " + torch_size(x.sizes().vec()));
  const Tensor<T>* weight = o.template weight_as<T>();
  const Tensor<T>* bias = o.template bias_as<T>();
  const Tensor<T> xc = x.contiguous();
  const Tensor<T> wc = weight ? weight->contiguous() : Tensor<T>(), bc = bias ? bias->contiguous() : Tensor<T>();
  Tensor<T> y = empty<T>(x.sizes());
  using A = stat_t<T>;
  const auto stats = std::make_shared<const batch_stats<A>>(
      batch_norm_train(xc, weight ? wc.data_ptr() : nullptr, bias ? bc.data_ptr() : nullptr, o.eps(), y));
  const auto running = [&](const std::vector<A>& v, double scale) {
    Tensor<T> t = empty<T>({C});
    for (std::int64_t c = 0; c < C; ++c) t.data_ptr()[c] = static_cast<T>(v[static_cast<std::size_t>(c)] * static_cast<A>(scale));
    return t;
  };
  if (rm) update_running(*rm, running(stats->mean, 1.0), o.momentum());
  if (rv) update_running(*rv, running(stats->var, static_cast<double>(count) / static_cast<double>(count - 1)), o.momentum());
  std::vector<Tensor<T>> inputs{x};
  if (weight) inputs.push_back(*weight);
  if (bias) inputs.push_back(*bias);
  record_function<T>(
      y, inputs,
      [xc, wc, stats, has_w = weight != nullptr, first_bias = std::size_t(weight ? 2 : 1)](const Tensor<T>& g, std::size_t i) {
        const Tensor<T> gc = g.contiguous();
        const std::int64_t N = xc.size(0), C = xc.size(1), P = xc.numel() / std::max<std::int64_t>(1, N * C);
        const A M = static_cast<A>(N * P);
        const T* xp = xc.data_ptr();
        const T* gp = gc.data_ptr();
        Tensor<T> out = i == 0 ? empty<T>(xc.sizes()) : empty<T>({C});
        T* op = out.data_ptr();
        run_in_parts(C, thread_count(), thread_count(), [&](std::int64_t first, std::int64_t last) {
          for (std::int64_t c = first; c < last; ++c) {
            const A mean = stats->mean[static_cast<std::size_t>(c)], invstd = stats->invstd[static_cast<std::size_t>(c)];
            const auto g_at = [&](std::int64_t n, std::int64_t k) { return static_cast<A>(gp[(n * C + c) * P + k]); };
            const A sum_g = lane_sum<A>(N, P, g_at);
            const A sum_gx = lane_sum<A>(N, P, [&](std::int64_t n, std::int64_t k) {
              return g_at(n, k) * (static_cast<A>(xp[(n * C + c) * P + k]) - mean);
            });
            const A sum_gxhat = sum_gx * invstd;
            if (i != 0) {
              op[c] = static_cast<T>(i == first_bias ? sum_g : sum_gxhat);
              continue;
            }
            const A wv = has_w ? static_cast<A>(wc.data_ptr()[c]) : A(1);
            // The sums in A, the elements in T as ATen's vectorised loop has them.
            const T scale = static_cast<T>(wv * invstd), grad_mean = static_cast<T>(sum_g / M),
                    proj = static_cast<T>(sum_gxhat / M * invstd), m = static_cast<T>(mean);
            for (std::int64_t n = 0; n < N; ++n) {
              const T* gr = gp + (n * C + c) * P;
              const T* xr = xp + (n * C + c) * P;
              T* to = op + (n * C + c) * P;
              for (std::int64_t k = 0; k < P; ++k) to[k] = (gr[k] - grad_mean - (xr[k] - m) * proj) * scale;
            }
          }
        });
        return i == 0 ? Tensor<T>(out.view(xc.sizes())) : out;
      },
      std::span<const Tensor<T>>(inputs.data(), weight ? 2 : 1));  // x and the weight are read
  return y;
}

template <element T>
Tensor<T> layer_norm(const Tensor<T>& x, const nn::functional::LayerNormFuncOptions& o) {
  const std::vector<std::int64_t>& shape = o.normalized_shape();
  const std::int64_t k = static_cast<std::int64_t>(shape.size());
  bool fits = x.dim() >= k && k > 0;
  for (std::int64_t i = 0; fits && i < k; ++i) fits = x.size(x.dim() - k + i) == shape[static_cast<std::size_t>(i)];
  if (!fits) {
    std::string star = "[*";
    for (std::int64_t s : shape) star += ", " + std::to_string(s);
    throw shape_error("Given normalized_shape=" + to_string(int_list(shape)) + ", expected input with shape " + star +
                      "], but got input of size" + to_string(x.sizes()));
  }
  const Tensor<T>* w = o.template weight_as<T>();
  const Tensor<T>* b = o.template bias_as<T>();
  for (const Tensor<T>* t : {w, b})
    if (t && t->sizes() != int_list(shape))
      throw shape_error("layer_norm: expected weight and bias of sizes " + to_string(int_list(shape)) + ", got " +
                        to_string(t->sizes()));
  dim_vector dims;
  for (std::int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  const Tensor<T> mean = strata::mean(x, dims, true);
  const Tensor<T> var = strata::var(x, dims, 0, true);
  return normalized(x, mean, var, o.eps(), w ? *w : full<T>({}, T(1)), b ? *b : full<T>({}, T(0)));
}

template <element T>
Tensor<T> group_norm(const Tensor<T>& x, const nn::functional::GroupNormFuncOptions& o) {
  if (x.dim() < 2) throw shape_error("group_norm: expected an input of 2 or more dims, but got " + to_string(x.sizes()));
  const std::int64_t N = x.size(0), C = x.size(1), G = o.num_groups();
  if (G <= 0 || C % G != 0)
    throw shape_error("Expected number of channels in input to be divisible by num_groups, but got input of shape " +
                      to_string(x.sizes()) + " and num_groups=" + std::to_string(G));
  check_channels(o.template weight_as<T>(), C, "weight");
  check_channels(o.template bias_as<T>(), C, "bias");
  const Tensor<T> xg = x.reshape({N, G, -1});
  const Tensor<T> mean = strata::mean(xg, {2}, true);
  const Tensor<T> var = strata::var(xg, {2}, 0, true);
  const Tensor<T> y = normalized(xg, mean, var, o.eps(), full<T>({}, T(1)), full<T>({}, T(0))).reshape(x.sizes());
  const dim_vector chan = channel_sizes(x.dim(), C);
  if (!o.template weight_as<T>() && !o.template bias_as<T>()) return y;
  return Tensor<T>(y * broadcast_or(o.template weight_as<T>(), chan, T(1)) +
                   broadcast_or(o.template bias_as<T>(), chan, T(0)));
}

template <element T>
Tensor<T> instance_norm(const Tensor<T>& x, const nn::functional::InstanceNormFuncOptions& o) {
  if (x.dim() < 3) throw shape_error("instance_norm: expected an input of 3 or more dims, but got " + to_string(x.sizes()));
  const std::int64_t C = x.size(1);
  const Tensor<T>* rm = o.template running_mean_as<T>();
  const Tensor<T>* rv = o.template running_var_as<T>();
  const auto [chan, w, b] = checked_channels(x, rm, rv, o.template weight_as<T>(), o.template bias_as<T>());
  if (!o.use_input_stats()) {
    if (!rm || !rv) throw error("Expected running_mean and running_var to be defined when use_input_stats is false");
    return normalized(x, rm->reshape(chan), rv->reshape(chan), o.eps(), w, b);
  }
  dim_vector dims;
  for (std::int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const std::int64_t count = x.numel() / std::max<std::int64_t>(1, x.size(0) * C);
  if (count <= 1)
    throw error("Expected more than 1 spatial element when training, got input size " + torch_size(x.sizes().vec()));
  const Tensor<T> mean = strata::mean(x, dims, true);
  const Tensor<T> var = strata::var(x, dims, 0, true);
  // The running statistics take the mean over the samples of each instance's statistics.
  if (rm) update_running(*rm, Tensor<T>(strata::mean(mean.detach().reshape({x.size(0), C}), {0})), o.momentum());
  if (rv)
    update_running(*rv,
                   Tensor<T>(strata::mean(var.detach().reshape({x.size(0), C}), {0}) *
                             static_cast<T>(static_cast<double>(count) / static_cast<double>(count - 1))),
                   o.momentum());
  return normalized(x, mean, var, o.eps(), w, b);
}

#define STRATA_NN_NORM_DEFINE(T)                                                                              \
  template Tensor<T> batch_norm<T>(const Tensor<T>&, const std::optional<Tensor<T>>&,                        \
                                   const std::optional<Tensor<T>>&, const F::BatchNormFuncOptions&);          \
  template Tensor<T> layer_norm<T>(const Tensor<T>&, const F::LayerNormFuncOptions&);                         \
  template Tensor<T> group_norm<T>(const Tensor<T>&, const F::GroupNormFuncOptions&);                         \
  template Tensor<T> instance_norm<T>(const Tensor<T>&, const F::InstanceNormFuncOptions&);
STRATA_NN_NORM_DEFINE(float)
STRATA_NN_NORM_DEFINE(double)
STRATA_NN_NORM_DEFINE(float128)
#undef STRATA_NN_NORM_DEFINE
}  // namespace strata::detail
