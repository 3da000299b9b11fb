// SPDX-License-Identifier: MIT
// strata.nn for half and bfloat16: each function converts its floating inputs and tensor
// options to float, runs the float function and converts the result back, every conversion
// recorded for autograd (the gradients come back through the same conversions, rounded once).
// This is what PyTorch's CPU kernels do for these types: they load them, compute and accumulate
// in float, and round the result. In-place updates (batch_norm's running statistics) are
// written back into the caller's tensors.
module;
#include <cstdint>
#include <optional>
#include <tuple>
module strata.nn;
import strata.autograd;

namespace strata::detail {
namespace {
namespace F = strata::nn::functional;

template <element T>
Tensor<float> up(const Tensor<T>& t) {
  return t.template to<float>();
}
template <element T>
std::optional<Tensor<float>> up(const std::optional<Tensor<T>>& t) {
  if (!t) return std::nullopt;
  return up(*t);
}
template <element T>
Tensor<T> down(const Tensor<float>& t) {
  return t.template to<T>();
}
// Copies a float update back into the caller's tensor of T, outside autograd.
template <element T>
void write_back(const Tensor<T>& to, const Tensor<float>& from) {
  const no_grad guard;
  to.copy_(from);
}

// The options with their tensor options of type T converted to float (a tensor of another type
// throws the "expected scalar type" error of the option's getter): whichever of weight, bias,
// pos_weight and the running statistics the options class has.
#define STRATA_UP(name)                                         \
  if constexpr (requires { o.template name##_as<T>(); })        \
    if (const auto* t = o.template name##_as<T>()) w.name(up(*t));
template <element T, class O>
O up_options(const O& o) {
  O w = o;
  STRATA_UP(weight)
  STRATA_UP(bias)
  STRATA_UP(pos_weight)
  STRATA_UP(running_mean)
  STRATA_UP(running_var)
  return w;
}
#undef STRATA_UP
}  // namespace

#define STRATA_NN_LOWP_DEFINE(T)                                                                                   \
  template <>                                                                                                      \
  Tensor<T> linear<T>(const Tensor<T>& x, const Tensor<T>& w, const std::optional<Tensor<T>>& b) {                 \
    return down<T>(linear<float>(up(x), up(w), up(b)));                                                            \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> bilinear<T>(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& w,                              \
                        const std::optional<Tensor<T>>& b) {                                                       \
    return down<T>(bilinear<float>(up(x1), up(x2), up(w), up(b)));                                                 \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> mse_loss<T>(const Tensor<T>& x, const Tensor<T>& y, const F::MSELossFuncOptions& o) {                  \
    return down<T>(mse_loss<float>(up(x), up(y), o));                                                              \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> l1_loss<T>(const Tensor<T>& x, const Tensor<T>& y, const F::L1LossFuncOptions& o) {                    \
    return down<T>(l1_loss<float>(up(x), up(y), o));                                                               \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> smooth_l1_loss<T>(const Tensor<T>& x, const Tensor<T>& y, const F::SmoothL1LossFuncOptions& o) {       \
    return down<T>(smooth_l1_loss<float>(up(x), up(y), o));                                                        \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> huber_loss<T>(const Tensor<T>& x, const Tensor<T>& y, const F::HuberLossFuncOptions& o) {              \
    return down<T>(huber_loss<float>(up(x), up(y), o));                                                            \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> binary_cross_entropy<T>(const Tensor<T>& x, const Tensor<T>& y,                                        \
                                    const F::BinaryCrossEntropyFuncOptions& o) {                                   \
    return down<T>(binary_cross_entropy<float>(up(x), up(y), up_options<T>(o)));                                   \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> binary_cross_entropy_with_logits<T>(const Tensor<T>& x, const Tensor<T>& y,                            \
                                                const F::BinaryCrossEntropyWithLogitsFuncOptions& o) {             \
    return down<T>(binary_cross_entropy_with_logits<float>(up(x), up(y), up_options<T>(o)));                       \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> kl_div<T>(const Tensor<T>& x, const Tensor<T>& y, const F::KLDivFuncOptions& o) {                      \
    return down<T>(kl_div<float>(up(x), up(y), o));                                                                \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> nll_loss<T>(const Tensor<T>& x, const Tensor<std::int64_t>& target, const F::NLLLossFuncOptions& o) {  \
    return down<T>(nll_loss<float>(up(x), target, up_options<T>(o)));                                              \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> cross_entropy<T>(const Tensor<T>& x, const Tensor<std::int64_t>& target,                              \
                             const F::CrossEntropyFuncOptions& o) {                                                \
    return down<T>(cross_entropy<float>(up(x), target, up_options<T>(o)));                                         \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> cross_entropy_probs<T>(const Tensor<T>& x, const Tensor<T>& target, const F::CrossEntropyFuncOptions& o) { \
    return down<T>(cross_entropy_probs<float>(up(x), up(target), up_options<T>(o)));                               \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> batch_norm<T>(const Tensor<T>& x, const std::optional<Tensor<T>>& running_mean,                        \
                          const std::optional<Tensor<T>>& running_var, const F::BatchNormFuncOptions& o) {         \
    const std::optional<Tensor<float>> mean = up(running_mean), var = up(running_var);                             \
    Tensor<T> y = down<T>(batch_norm<float>(up(x), mean, var, up_options<T>(o)));                                   \
    if (o.training() && mean) write_back(*running_mean, *mean);                                                    \
    if (o.training() && var) write_back(*running_var, *var);                                                       \
    return y;                                                                                                      \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> layer_norm<T>(const Tensor<T>& x, const F::LayerNormFuncOptions& o) {                                  \
    return down<T>(layer_norm<float>(up(x), up_options<T>(o)));                                                     \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> group_norm<T>(const Tensor<T>& x, const F::GroupNormFuncOptions& o) {                                  \
    return down<T>(group_norm<float>(up(x), up_options<T>(o)));                                                     \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> instance_norm<T>(const Tensor<T>& x, const F::InstanceNormFuncOptions& o) {                            \
    const F::InstanceNormFuncOptions w = up_options<T>(o);                                                         \
    Tensor<T> y = down<T>(instance_norm<float>(up(x), w));                                                         \
    if (o.use_input_stats()) {                                                                                     \
      if (const auto* mean = o.template running_mean_as<T>()) write_back(*mean, *w.template running_mean_as<float>()); \
      if (const auto* var = o.template running_var_as<T>()) write_back(*var, *w.template running_var_as<float>());     \
    }                                                                                                              \
    return y;                                                                                                      \
  }                                                                                                                \
  template <>                                                                                                      \
  Tensor<T> convolution<T>(const Tensor<T>& x, const Tensor<T>& w, const Tensor<T>* bias, const conv_params& p) {  \
    const std::optional<Tensor<float>> b = bias ? std::optional(up(*bias)) : std::nullopt;                         \
    return down<T>(convolution<float>(up(x), up(w), b ? &*b : nullptr, p));                                        \
  }                                                                                                                \
  template <>                                                                                                      \
  std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling<T>(const Tensor<T>& x, const pool_params& p) {               \
    auto [y, indices] = pooling<float>(up(x), p);                                                                  \
    return {down<T>(y), indices};                                                                                  \
  }
STRATA_NN_LOWP_DEFINE(half)
STRATA_NN_LOWP_DEFINE(bfloat16)
#undef STRATA_NN_LOWP_DEFINE
}  // namespace strata::detail
