// SPDX-License-Identifier: MIT
// strata.nn's functions (partition :functional): PyTorch's torch.nn.functional, for float and double
// tensors, and half and bfloat16 ones computed in float, with autograd. Options are set in a chain as in libtorch's C++ frontend
// (F::cross_entropy(x, y, F::CrossEntropyFuncOptions().label_smoothing(0.1))); names, defaults,
// shape rules and error messages are PyTorch 1.13's. The functions are compiled once
// (src/nn_loss.cpp): a user's file instantiates only the thin wrappers below.
module;
#include "options.hpp"
export module strata.nn:functional;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.random;

namespace strata::detail {
/// An optional floating tensor held by an options class (class weights, pos_weight, a norm's
/// weight): the function that reads it asks for its own element type.
class optional_float_tensor {
 public:
  template <element T>
  void set(const Tensor<T>& t) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, float128> ||
                      std::is_same_v<T, half> || std::is_same_v<T, bfloat16>,
                  "strata.nn takes floating tensors (PyTorch's layers: floating types)");
    f_.reset();
    d_.reset();
    q_.reset();
    h_.reset();
    b_.reset();
    slot<T>() = t;
  }
  /// The tensor as Tensor<T> (nullptr when none); a tensor of another type throws PyTorch's
  /// "expected scalar type" error.
  template <element T>
  const Tensor<T>* get() const {
    if (const auto& mine = const_cast<optional_float_tensor*>(this)->slot<T>()) return &*mine;
    const char* held = f_ ? "Float" : d_ ? "Double" : q_ ? "Float128" : h_ ? "Half" : b_ ? "BFloat16" : nullptr;
    if (!held) return nullptr;
    throw dtype_error(std::string("expected scalar type ") + name(dtype_v<T>) + " but found " + held);
  }

 private:
  template <class T>
  std::optional<Tensor<T>>& slot() {
    if constexpr (std::is_same_v<T, float>) return f_;
    else if constexpr (std::is_same_v<T, double>) return d_;
    else if constexpr (std::is_same_v<T, half>) return h_;
    else if constexpr (std::is_same_v<T, bfloat16>) return b_;
    else return q_;
  }
  static const char* name(dtype t) {
    switch (t) {
      case dtype::float32: return "Float";
      case dtype::float64: return "Double";
      case dtype::float16: return "Half";
      case dtype::bfloat16: return "BFloat16";
      default: return "Float128";
    }
  }
  std::optional<Tensor<float>> f_;
  std::optional<Tensor<double>> d_;
  std::optional<Tensor<float128>> q_;
  std::optional<Tensor<half>> h_;
  std::optional<Tensor<bfloat16>> b_;
};
}  // namespace strata::detail

// A tensor option (class weights, pos_weight): a setter for floating tensors.
#define STRATA_TENSOR_OPTION(name)              \
 public:                                        \
  template <element T>                          \
  auto& name(const Tensor<T>& t) {              \
    name##_.set(t);                             \
    return *this;                               \
  }                                             \
  template <element T>                          \
  const Tensor<T>* name##_as() const {          \
    return name##_.template get<T>();           \
  }                                             \
                                                \
 private:                                       \
  detail::optional_float_tensor name##_;

export namespace strata::nn::functional {
/// mse_loss's options: reduction "mean" (default), "sum" or "none".
class MSELossFuncOptions {
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
};
/// l1_loss's options.
class L1LossFuncOptions {
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
};
/// smooth_l1_loss's options.
class SmoothL1LossFuncOptions {
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
  /// Where the loss turns from quadratic to linear (0: l1_loss).
  STRATA_OPTION(double, beta, 1.0)
};
/// huber_loss's options.
class HuberLossFuncOptions {
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
  /// Where the loss turns from quadratic to linear (> 0).
  STRATA_OPTION(double, delta, 1.0)
};
/// binary_cross_entropy's options.
class BinaryCrossEntropyFuncOptions {
  /// A weight for each element's loss (broadcast to the input's sizes).
  STRATA_TENSOR_OPTION(weight)
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
};
/// binary_cross_entropy_with_logits's options.
class BinaryCrossEntropyWithLogitsFuncOptions {
  /// A weight for each element's loss (broadcast to the input's sizes).
  STRATA_TENSOR_OPTION(weight)
  /// How the elements' losses are combined: "mean", "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
  /// A weight for the positive examples, per class (broadcast along the last dim).
  STRATA_TENSOR_OPTION(pos_weight)
};
/// kl_div's options.
class KLDivFuncOptions {
  /// "mean" (over every element), "batchmean" (over the first dim), "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
  /// True when the target is given as log-probabilities.
  STRATA_OPTION(bool, log_target, false)
};
/// nll_loss's options.
class NLLLossFuncOptions {
  /// A weight for each class (C elements).
  STRATA_TENSOR_OPTION(weight)
  /// A target value that contributes nothing (and is not counted by "mean").
  STRATA_OPTION(std::int64_t, ignore_index, -100)
  /// "mean" (weighted by the targets' class weights), "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
};
/// cross_entropy's options.
class CrossEntropyFuncOptions {
  /// A weight for each class (C elements).
  STRATA_TENSOR_OPTION(weight)
  /// A target class that contributes nothing (class-index targets only).
  STRATA_OPTION(std::int64_t, ignore_index, -100)
  /// "mean" (weighted by the targets' class weights), "sum" or "none".
  STRATA_OPTION(std::string, reduction, "mean")
  /// The share of the target spread uniformly over the classes, in [0, 1].
  STRATA_OPTION(double, label_smoothing, 0.0)
};
/// dropout's options.
class DropoutFuncOptions {
  /// The probability that an element is zeroed, in [0, 1].
  STRATA_OPTION(double, p, 0.5)
  /// False: the input is returned unchanged (evaluation).
  STRATA_OPTION(bool, training, true)
};
/// embedding's options.
class EmbeddingFuncOptions {
  /// A row whose gradient stays zero (negative: counted from the end).
  STRATA_OPTION(std::optional<std::int64_t>, padding_idx, std::nullopt)
  /// Each row looked up whose norm exceeds max_norm is first rescaled in place to max_norm.
  STRATA_OPTION(std::optional<double>, max_norm, std::nullopt)
  /// The p of max_norm's p-norm.
  STRATA_OPTION(double, norm_type, 2)
  /// Each row's gradient divided by the number of times the batch looks it up.
  STRATA_OPTION(bool, scale_grad_by_freq, false)
};

/// batch_norm's options.
class BatchNormFuncOptions {
  /// A scale per channel.
  STRATA_TENSOR_OPTION(weight)
  /// A shift per channel.
  STRATA_TENSOR_OPTION(bias)
  /// True: normalise by the batch's statistics (and update the running ones); false: by the
  /// running statistics.
  STRATA_OPTION(bool, training, false)
  /// The running statistics' update weight.
  STRATA_OPTION(double, momentum, 0.1)
  /// Added to the variance before its square root.
  STRATA_OPTION(double, eps, 1e-5)
};
/// layer_norm's options.
class LayerNormFuncOptions {
 public:
  /// Normalises over the trailing dims of these sizes.
  LayerNormFuncOptions(std::vector<std::int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  /// The trailing sizes normalised over.
  const std::vector<std::int64_t>& normalized_shape() const noexcept { return normalized_shape_; }
  /// A scale per element of normalized_shape.
  STRATA_TENSOR_OPTION(weight)
  /// A shift per element of normalized_shape.
  STRATA_TENSOR_OPTION(bias)
  /// Added to the variance before its square root.
  STRATA_OPTION(double, eps, 1e-5)

 private:
  std::vector<std::int64_t> normalized_shape_;
};
/// group_norm's options.
class GroupNormFuncOptions {
 public:
  /// Normalises each of num_groups groups of channels.
  GroupNormFuncOptions(std::int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  /// The number of channel groups.
  STRATA_OPTION(std::int64_t, num_groups, 1)
  /// A scale per channel.
  STRATA_TENSOR_OPTION(weight)
  /// A shift per channel.
  STRATA_TENSOR_OPTION(bias)
  /// Added to the variance before its square root.
  STRATA_OPTION(double, eps, 1e-5)
};
/// instance_norm's options.
class InstanceNormFuncOptions {
  /// Running means per channel, updated in place when use_input_stats.
  STRATA_TENSOR_OPTION(running_mean)
  /// Running variances per channel, updated in place when use_input_stats.
  STRATA_TENSOR_OPTION(running_var)
  /// A scale per channel.
  STRATA_TENSOR_OPTION(weight)
  /// A shift per channel.
  STRATA_TENSOR_OPTION(bias)
  /// True: normalise by each instance's statistics; false: by the running ones.
  STRATA_OPTION(bool, use_input_stats, true)
  /// The running statistics' update weight.
  STRATA_OPTION(double, momentum, 0.1)
  /// Added to the variance before its square root.
  STRATA_OPTION(double, eps, 1e-5)
};

/// D sizes given as one repeated or as D values (libtorch's ExpandingArray): kernel sizes,
/// strides, paddings, dilations.
template <std::size_t D>
class ExpandingArray {
 public:
  /// The same value for every dim.
  ExpandingArray(std::int64_t v) { values_.fill(v); }  // NOLINT: implicit, as stride(2)
  /// One value per dim.
  ExpandingArray(std::initializer_list<std::int64_t> v) {  // NOLINT: implicit, as stride({2, 1})
    if (v.size() != D)
      throw error("expected " + std::to_string(D) + " values, but got " + std::to_string(v.size()));
    std::copy(v.begin(), v.end(), values_.begin());
  }
  /// The values as sizes.
  dim_vector vec() const {
    dim_vector out;
    for (std::int64_t v : values_) out.push_back(v);
    return out;
  }

 private:
  std::array<std::int64_t, D> values_{};
};
/// A convolution's padding: sizes, or "same" (the output keeps the input's sizes; stride 1)
/// or "valid" (no padding).
template <std::size_t D>
class ConvPadding {
 public:
  /// The same padding on both sides of every dim.
  ConvPadding(std::int64_t v) : sizes_(v) {}  // NOLINT: implicit, as padding(1)
  /// One padding per dim.
  ConvPadding(std::initializer_list<std::int64_t> v) : sizes_(v) {}  // NOLINT: implicit
  /// One padding per dim.
  ConvPadding(ExpandingArray<D> v) : sizes_(v) {}  // NOLINT: implicit
  /// "same" or "valid".
  ConvPadding(const std::string& mode) : sizes_(0), mode_(mode) {  // NOLINT: implicit
    if (mode_ != "same" && mode_ != "valid") throw error("Invalid padding string: '" + mode_ + "'");
  }
  /// "same" or "valid", as a literal.
  template <std::size_t N>
  ConvPadding(const char (&mode)[N]) : ConvPadding(std::string(mode)) {}  // NOLINT: implicit, as padding("same")
  /// The sizes (zeros for a mode).
  dim_vector vec() const { return sizes_.vec(); }
  /// "same", "valid", or empty for sizes.
  const std::string& mode() const { return mode_; }

 private:
  ExpandingArray<D> sizes_;
  std::string mode_;
};
/// conv1d/2d/3d's options.
template <std::size_t D>
class ConvFuncOptions {
  /// A bias added to each output channel.
  STRATA_TENSOR_OPTION(bias)
  /// The windows' step.
  STRATA_OPTION(ExpandingArray<D>, stride, 1)
  /// Zeros added on both sides of each spatial dim, or "same" / "valid".
  STRATA_OPTION(ConvPadding<D>, padding, 0)
  /// The spacing of a window's elements.
  STRATA_OPTION(ExpandingArray<D>, dilation, 1)
  /// Channel groups convolved apart (in and out channels divisible by it).
  STRATA_OPTION(std::int64_t, groups, 1)
};
/// conv1d's options.
using Conv1dFuncOptions = ConvFuncOptions<1>;
/// conv2d's options.
using Conv2dFuncOptions = ConvFuncOptions<2>;
/// conv3d's options.
using Conv3dFuncOptions = ConvFuncOptions<3>;
/// conv_transpose1d/2d/3d's options.
template <std::size_t D>
class ConvTransposeFuncOptions {
  /// A bias added to each output channel.
  STRATA_TENSOR_OPTION(bias)
  /// The step of the convolution this one transposes.
  STRATA_OPTION(ExpandingArray<D>, stride, 1)
  /// The padding of the convolution this one transposes (removed from the output).
  STRATA_OPTION(ExpandingArray<D>, padding, 0)
  /// Extra size on one side of the output (smaller than the stride or the dilation).
  STRATA_OPTION(ExpandingArray<D>, output_padding, 0)
  /// Channel groups convolved apart.
  STRATA_OPTION(std::int64_t, groups, 1)
  /// The spacing of a window's elements.
  STRATA_OPTION(ExpandingArray<D>, dilation, 1)
};
/// conv_transpose1d's options.
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
/// conv_transpose2d's options.
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
/// conv_transpose3d's options.
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
/// max_pool1d/2d/3d's options: the stride defaults to the kernel size.
template <std::size_t D>
class MaxPoolFuncOptions {
 public:
  /// Windows of kernel_size, stepped by kernel_size.
  MaxPoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  /// The window's size.
  STRATA_OPTION(ExpandingArray<D>, kernel_size, 1)
  /// The windows' step.
  STRATA_OPTION(ExpandingArray<D>, stride, 1)
  /// -inf added on both sides (at most half the kernel).
  STRATA_OPTION(ExpandingArray<D>, padding, 0)
  /// The spacing of a window's elements.
  STRATA_OPTION(ExpandingArray<D>, dilation, 1)
  /// Rounds the output size up (a last window that starts inside the input is kept).
  STRATA_OPTION(bool, ceil_mode, false)
};
/// max_pool1d's options.
using MaxPool1dFuncOptions = MaxPoolFuncOptions<1>;
/// max_pool2d's options.
using MaxPool2dFuncOptions = MaxPoolFuncOptions<2>;
/// max_pool3d's options.
using MaxPool3dFuncOptions = MaxPoolFuncOptions<3>;
/// avg_pool1d/2d/3d's options: the stride defaults to the kernel size.
template <std::size_t D>
class AvgPoolFuncOptions {
 public:
  /// Windows of kernel_size, stepped by kernel_size.
  AvgPoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  /// The window's size.
  STRATA_OPTION(ExpandingArray<D>, kernel_size, 1)
  /// The windows' step.
  STRATA_OPTION(ExpandingArray<D>, stride, 1)
  /// Zeros added on both sides (at most half the kernel).
  STRATA_OPTION(ExpandingArray<D>, padding, 0)
  /// Rounds the output size up.
  STRATA_OPTION(bool, ceil_mode, false)
  /// True: padding zeros count in the average's divisor.
  STRATA_OPTION(bool, count_include_pad, true)
  /// A divisor used for every window instead of its size.
  STRATA_OPTION(std::optional<std::int64_t>, divisor_override, std::nullopt)
};
/// avg_pool1d's options.
using AvgPool1dFuncOptions = AvgPoolFuncOptions<1>;
/// avg_pool2d's options.
using AvgPool2dFuncOptions = AvgPoolFuncOptions<2>;
/// avg_pool3d's options.
using AvgPool3dFuncOptions = AvgPoolFuncOptions<3>;
/// adaptive_avg_pool / adaptive_max_pool's options: the output's spatial sizes.
template <std::size_t D>
class AdaptivePoolFuncOptions {
 public:
  /// Pools to output_size.
  AdaptivePoolFuncOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}  // NOLINT
  /// The output's spatial sizes.
  STRATA_OPTION(ExpandingArray<D>, output_size, 1)
};
/// adaptive_avg_pool1d's options.
using AdaptiveAvgPool1dFuncOptions = AdaptivePoolFuncOptions<1>;
/// adaptive_avg_pool2d's options.
using AdaptiveAvgPool2dFuncOptions = AdaptivePoolFuncOptions<2>;
/// adaptive_avg_pool3d's options.
using AdaptiveAvgPool3dFuncOptions = AdaptivePoolFuncOptions<3>;
/// adaptive_max_pool1d's options.
using AdaptiveMaxPool1dFuncOptions = AdaptivePoolFuncOptions<1>;
/// adaptive_max_pool2d's options.
using AdaptiveMaxPool2dFuncOptions = AdaptivePoolFuncOptions<2>;
/// adaptive_max_pool3d's options.
using AdaptiveMaxPool3dFuncOptions = AdaptivePoolFuncOptions<3>;
}  // namespace strata::nn::functional

#undef STRATA_TENSOR_OPTION

namespace strata::detail {
/// The layers take float and double, and half and bfloat16 computed in float (src/nn_lowp.cpp).
template <class X>
constexpr void require_float_layer() {
  using T = value_t<X>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half> ||
                    std::is_same_v<T, bfloat16>,
                "strata.nn takes float, double, half or bfloat16 tensors (convert with .to<float>() first)");
}
/// The convolutions, pooling and normalisations take float128 too (compiled for it in src/).
template <class X>
constexpr void require_float_or_quad_layer() {
  using T = value_t<X>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, float128> ||
                    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>,
                "strata.nn's convolutions, pooling and normalisations take float, double, half, bfloat16 or "
                "float128 tensors");
}
template <class X, class Y>
constexpr void require_same_layer_dtype() {
  static_assert(std::is_same_v<value_t<X>, value_t<Y>>,
                "strata.nn: the tensors must share one dtype (PyTorch: expected scalar type Float but found Double)");
}
namespace F = strata::nn::functional;
template <element T>
Tensor<T> linear(const Tensor<T>& x, const Tensor<T>& w, const std::optional<Tensor<T>>& b);
template <element T>
Tensor<T> bilinear(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& w, const std::optional<Tensor<T>>& b);
template <element T>
Tensor<T> mse_loss(const Tensor<T>& x, const Tensor<T>& y, const F::MSELossFuncOptions& o);
template <element T>
Tensor<T> l1_loss(const Tensor<T>& x, const Tensor<T>& y, const F::L1LossFuncOptions& o);
template <element T>
Tensor<T> smooth_l1_loss(const Tensor<T>& x, const Tensor<T>& y, const F::SmoothL1LossFuncOptions& o);
template <element T>
Tensor<T> huber_loss(const Tensor<T>& x, const Tensor<T>& y, const F::HuberLossFuncOptions& o);
template <element T>
Tensor<T> binary_cross_entropy(const Tensor<T>& x, const Tensor<T>& y, const F::BinaryCrossEntropyFuncOptions& o);
template <element T>
Tensor<T> binary_cross_entropy_with_logits(const Tensor<T>& x, const Tensor<T>& y,
                                           const F::BinaryCrossEntropyWithLogitsFuncOptions& o);
template <element T>
Tensor<T> kl_div(const Tensor<T>& x, const Tensor<T>& y, const F::KLDivFuncOptions& o);
template <element T>
Tensor<T> nll_loss(const Tensor<T>& x, const Tensor<std::int64_t>& target, const F::NLLLossFuncOptions& o);
template <element T>
Tensor<T> cross_entropy(const Tensor<T>& x, const Tensor<std::int64_t>& target, const F::CrossEntropyFuncOptions& o);
template <element T>
Tensor<T> cross_entropy_probs(const Tensor<T>& x, const Tensor<T>& target, const F::CrossEntropyFuncOptions& o);
template <element T>
Tensor<T> dropout(const Tensor<T>& x, const F::DropoutFuncOptions& o, generator& gen);
template <element T>
Tensor<T> embedding(const Tensor<std::int64_t>& index, const Tensor<T>& w, const F::EmbeddingFuncOptions& o);

template <element T>
Tensor<T> batch_norm(const Tensor<T>& x, const std::optional<Tensor<T>>& running_mean,
                     const std::optional<Tensor<T>>& running_var, const F::BatchNormFuncOptions& o);
template <element T>
Tensor<T> layer_norm(const Tensor<T>& x, const F::LayerNormFuncOptions& o);
template <element T>
Tensor<T> group_norm(const Tensor<T>& x, const F::GroupNormFuncOptions& o);
template <element T>
Tensor<T> instance_norm(const Tensor<T>& x, const F::InstanceNormFuncOptions& o);

/// A convolution's geometry, its spatial dims' count = stride.size().
struct conv_params {
  dim_vector stride, padding, dilation, output_padding;
  std::string padding_mode;  // "same", "valid", or empty: padding
  std::int64_t groups = 1;
  bool transposed = false;
};
template <element T>
Tensor<T> convolution(const Tensor<T>& x, const Tensor<T>& w, const Tensor<T>* bias, const conv_params& p);
template <std::size_t D, class X, class W>
Tensor<value_t<X>> conv(const X& input, const W& weight, const F::ConvFuncOptions<D>& o) {
  require_float_or_quad_layer<X>();
  require_same_layer_dtype<X, W>();
  using T = value_t<X>;
  const conv_params p{o.stride().vec(), o.padding().vec(), o.dilation().vec(), dim_vector(D, 0), o.padding().mode(),
                      o.groups(), false};
  return convolution<T>(as_tensor(input), as_tensor(weight), o.template bias_as<T>(), p);
}
template <std::size_t D, class X, class W>
Tensor<value_t<X>> conv_transpose(const X& input, const W& weight, const F::ConvTransposeFuncOptions<D>& o) {
  require_float_or_quad_layer<X>();
  require_same_layer_dtype<X, W>();
  using T = value_t<X>;
  const conv_params p{o.stride().vec(), o.padding().vec(), o.dilation().vec(), o.output_padding().vec(), "",
                      o.groups(), true};
  return convolution<T>(as_tensor(input), as_tensor(weight), o.template bias_as<T>(), p);
}

/// A pooling's geometry; kernel holds the output sizes when adaptive.
struct pool_params {
  dim_vector kernel, stride, padding, dilation;
  bool ceil_mode = false, count_include_pad = true, max = true, adaptive = false;
  std::int64_t divisor_override = 0;  // 0: none
};
template <element T>
std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling(const Tensor<T>& x, const pool_params& p);
template <std::size_t D, class X>
std::tuple<Tensor<value_t<X>>, Tensor<std::int64_t>> max_pool(const X& input, const F::MaxPoolFuncOptions<D>& o) {
  require_float_or_quad_layer<X>();
  const pool_params p{o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), o.dilation().vec(), o.ceil_mode(),
                      true, true, false, 0};
  return pooling<value_t<X>>(as_tensor(input), p);
}
template <std::size_t D, class X>
Tensor<value_t<X>> avg_pool(const X& input, const F::AvgPoolFuncOptions<D>& o) {
  require_float_or_quad_layer<X>();
  if (o.divisor_override() && *o.divisor_override() == 0) throw error("divisor must be not zero");
  const pool_params p{o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), dim_vector(D, 1), o.ceil_mode(),
                      o.count_include_pad(), false, false, o.divisor_override().value_or(0)};
  return std::get<0>(pooling<value_t<X>>(as_tensor(input), p));
}
template <std::size_t D, class X>
std::tuple<Tensor<value_t<X>>, Tensor<std::int64_t>> adaptive_pool(const X& input, const F::AdaptivePoolFuncOptions<D>& o,
                                                                   bool max) {
  require_float_or_quad_layer<X>();
  const pool_params p{o.output_size().vec(), dim_vector(D, 1), dim_vector(D, 0), dim_vector(D, 1), false, true, max,
                      true, 0};
  return pooling<value_t<X>>(as_tensor(input), p);
}
}  // namespace strata::detail

export namespace strata::nn::functional {
/// x @ weight^T + bias: weight [out, in], bias [out], x [..., in].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> linear(const X& input, const W& weight,
                                  const std::optional<Tensor<detail::value_t<X>>>& bias = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, W>();
  return detail::linear(detail::as_tensor(input), detail::as_tensor(weight), bias);
}
/// x1^T A_o x2 + bias_o for each output o: weight [out, in1, in2], x1 [..., in1], x2 [..., in2].
template <tensor_like X1, tensor_like X2, tensor_like W>
Tensor<detail::value_t<X1>> bilinear(const X1& input1, const X2& input2, const W& weight,
                                     const std::optional<Tensor<detail::value_t<X1>>>& bias = {}) {
  detail::require_float_layer<X1>();
  detail::require_same_layer_dtype<X1, X2>();
  detail::require_same_layer_dtype<X1, W>();
  return detail::bilinear(detail::as_tensor(input1), detail::as_tensor(input2), detail::as_tensor(weight), bias);
}
/// The squared error (x - y)^2, combined by options.reduction (target broadcast to x).
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> mse_loss(const X& input, const Y& target, const MSELossFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::mse_loss(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// The absolute error |x - y|, combined by options.reduction.
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> l1_loss(const X& input, const Y& target, const L1LossFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::l1_loss(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = x - y).
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> smooth_l1_loss(const X& input, const Y& target, const SmoothL1LossFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::smooth_l1_loss(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (d = x - y).
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> huber_loss(const X& input, const Y& target, const HuberLossFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::huber_loss(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// -w (y log x + (1 - y) log(1 - x)) for probabilities x in [0, 1] (logs clamped at -100).
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> binary_cross_entropy(const X& input, const Y& target,
                                                const BinaryCrossEntropyFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::binary_cross_entropy(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// binary_cross_entropy of sigmoid(x), computed stably from the logits x.
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> binary_cross_entropy_with_logits(const X& input, const Y& target,
                                                            const BinaryCrossEntropyWithLogitsFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::binary_cross_entropy_with_logits(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// The Kullback-Leibler divergence y (log y - x) of a target y from log-probabilities x.
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> kl_div(const X& input, const Y& target, const KLDivFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  detail::require_same_layer_dtype<X, Y>();
  return detail::kl_div(detail::as_tensor(input), detail::as_tensor(target), options);
}
/// -w[t] x[n, t] for log-probabilities x [N, C, d...] (or [C]) and class indices t [N, d...].
template <tensor_like X>
Tensor<detail::value_t<X>> nll_loss(const X& input, const Tensor<std::int64_t>& target,
                                    const NLLLossFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  return detail::nll_loss(detail::as_tensor(input), target, options);
}
/// nll_loss of log_softmax(x) over the class dim for class indices (int64 target), or the
/// cross-entropy with class probabilities (a floating target of x's sizes).
template <tensor_like X, tensor_like Y>
Tensor<detail::value_t<X>> cross_entropy(const X& input, const Y& target, const CrossEntropyFuncOptions& options = {}) {
  detail::require_float_layer<X>();
  if constexpr (std::is_same_v<detail::value_t<Y>, std::int64_t>) {
    return detail::cross_entropy(detail::as_tensor(input), detail::as_tensor(target), options);
  } else {
    static_assert(std::is_same_v<detail::value_t<X>, detail::value_t<Y>>,
                  "cross_entropy: the target is class indices (int64) or probabilities of the input's dtype");
    return detail::cross_entropy_probs(detail::as_tensor(input), detail::as_tensor(target), options);
  }
}
/// Zeroes each element with probability p and scales the rest by 1 / (1 - p) while training
/// (the mask drawn from gen: the same for any thread count); the input itself otherwise.
template <tensor_like X>
Tensor<detail::value_t<X>> dropout(const X& input, const DropoutFuncOptions& options = {},
                                   generator& gen = default_generator()) {
  detail::require_float_layer<X>();
  return detail::dropout(detail::as_tensor(input), options, gen);
}
/// The rows of weight [num_embeddings, dim] at the indices: a tensor [index sizes..., dim].
template <tensor_like W>
Tensor<detail::value_t<W>> embedding(const Tensor<std::int64_t>& input, const W& weight,
                                     const EmbeddingFuncOptions& options = {}) {
  detail::require_float_layer<W>();
  return detail::embedding(input, detail::as_tensor(weight), options);
}

/// Normalises each channel (dim 1) of x [N, C, ...] by the batch's mean and variance when
/// training (updating the running statistics in place), else by the running statistics.
template <tensor_like X>
Tensor<detail::value_t<X>> batch_norm(const X& input, const std::optional<Tensor<detail::value_t<X>>>& running_mean,
                                      const std::optional<Tensor<detail::value_t<X>>>& running_var,
                                      const BatchNormFuncOptions& options = {}) {
  detail::require_float_or_quad_layer<X>();
  return detail::batch_norm(detail::as_tensor(input), running_mean, running_var, options);
}
/// Normalises over the trailing normalized_shape dims of each sample.
template <tensor_like X>
Tensor<detail::value_t<X>> layer_norm(const X& input, const LayerNormFuncOptions& options) {
  detail::require_float_or_quad_layer<X>();
  return detail::layer_norm(detail::as_tensor(input), options);
}
/// Normalises each group of channels of each sample of x [N, C, ...].
template <tensor_like X>
Tensor<detail::value_t<X>> group_norm(const X& input, const GroupNormFuncOptions& options) {
  detail::require_float_or_quad_layer<X>();
  return detail::group_norm(detail::as_tensor(input), options);
}
/// Normalises each channel of each sample of x [N, C, ...] over its spatial dims.
template <tensor_like X>
Tensor<detail::value_t<X>> instance_norm(const X& input, const InstanceNormFuncOptions& options = {}) {
  detail::require_float_or_quad_layer<X>();
  return detail::instance_norm(detail::as_tensor(input), options);
}

/// A 1-d convolution: input [N, C_in, L] (or [C_in, L]), weight [C_out, C_in / groups, k].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv1d(const X& input, const W& weight, const Conv1dFuncOptions& options = {}) {
  return detail::conv<1>(input, weight, options);
}
/// A 2-d convolution: input [N, C_in, H, W] (or unbatched), weight [C_out, C_in / groups, kH, kW].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv2d(const X& input, const W& weight, const Conv2dFuncOptions& options = {}) {
  return detail::conv<2>(input, weight, options);
}
/// A 3-d convolution: input [N, C_in, D, H, W] (or unbatched), weight [C_out, C_in / groups, kD, kH, kW].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv3d(const X& input, const W& weight, const Conv3dFuncOptions& options = {}) {
  return detail::conv<3>(input, weight, options);
}
/// The transposed 1-d convolution (conv1d's input gradient): weight [C_in, C_out / groups, k].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv_transpose1d(const X& input, const W& weight,
                                            const ConvTranspose1dFuncOptions& options = {}) {
  return detail::conv_transpose<1>(input, weight, options);
}
/// The transposed 2-d convolution: weight [C_in, C_out / groups, kH, kW].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv_transpose2d(const X& input, const W& weight,
                                            const ConvTranspose2dFuncOptions& options = {}) {
  return detail::conv_transpose<2>(input, weight, options);
}
/// The transposed 3-d convolution: weight [C_in, C_out / groups, kD, kH, kW].
template <tensor_like X, tensor_like W>
Tensor<detail::value_t<X>> conv_transpose3d(const X& input, const W& weight,
                                            const ConvTranspose3dFuncOptions& options = {}) {
  return detail::conv_transpose<3>(input, weight, options);
}
/// The maximum of each window over [N, C, L] (or [C, L]).
template <tensor_like X>
Tensor<detail::value_t<X>> max_pool1d(const X& input, const MaxPool1dFuncOptions& options) {
  return std::get<0>(detail::max_pool<1>(input, options));
}
/// The maximum of each window over [N, C, H, W] (or [C, H, W]).
template <tensor_like X>
Tensor<detail::value_t<X>> max_pool2d(const X& input, const MaxPool2dFuncOptions& options) {
  return std::get<0>(detail::max_pool<2>(input, options));
}
/// The maximum of each window over [N, C, D, H, W] (or [C, D, H, W]).
template <tensor_like X>
Tensor<detail::value_t<X>> max_pool3d(const X& input, const MaxPool3dFuncOptions& options) {
  return std::get<0>(detail::max_pool<3>(input, options));
}
/// max_pool1d and where each maximum is (its index in the flattened input plane).
template <tensor_like X>
std::tuple<Tensor<detail::value_t<X>>, Tensor<std::int64_t>> max_pool1d_with_indices(const X& input,
                                                                                      const MaxPool1dFuncOptions& options) {
  return detail::max_pool<1>(input, options);
}
/// max_pool2d and where each maximum is (its index in the flattened input plane).
template <tensor_like X>
std::tuple<Tensor<detail::value_t<X>>, Tensor<std::int64_t>> max_pool2d_with_indices(const X& input,
                                                                                      const MaxPool2dFuncOptions& options) {
  return detail::max_pool<2>(input, options);
}
/// max_pool3d and where each maximum is (its index in the flattened input volume).
template <tensor_like X>
std::tuple<Tensor<detail::value_t<X>>, Tensor<std::int64_t>> max_pool3d_with_indices(const X& input,
                                                                                      const MaxPool3dFuncOptions& options) {
  return detail::max_pool<3>(input, options);
}
/// The mean of each window over [N, C, L] (or [C, L]).
template <tensor_like X>
Tensor<detail::value_t<X>> avg_pool1d(const X& input, const AvgPool1dFuncOptions& options) {
  return detail::avg_pool<1>(input, options);
}
/// The mean of each window over [N, C, H, W] (or [C, H, W]).
template <tensor_like X>
Tensor<detail::value_t<X>> avg_pool2d(const X& input, const AvgPool2dFuncOptions& options) {
  return detail::avg_pool<2>(input, options);
}
/// The mean of each window over [N, C, D, H, W] (or [C, D, H, W]).
template <tensor_like X>
Tensor<detail::value_t<X>> avg_pool3d(const X& input, const AvgPool3dFuncOptions& options) {
  return detail::avg_pool<3>(input, options);
}
/// Means over windows that split [N, C, L] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_avg_pool1d(const X& input, const AdaptiveAvgPool1dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<1>(input, options, false));
}
/// Means over windows that split [N, C, H, W] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_avg_pool2d(const X& input, const AdaptiveAvgPool2dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<2>(input, options, false));
}
/// Means over windows that split [N, C, D, H, W] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_avg_pool3d(const X& input, const AdaptiveAvgPool3dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<3>(input, options, false));
}
/// Maxima over windows that split [N, C, L] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_max_pool1d(const X& input, const AdaptiveMaxPool1dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<1>(input, options, true));
}
/// Maxima over windows that split [N, C, H, W] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_max_pool2d(const X& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<2>(input, options, true));
}
/// Maxima over windows that split [N, C, D, H, W] into output_size parts.
template <tensor_like X>
Tensor<detail::value_t<X>> adaptive_max_pool3d(const X& input, const AdaptiveMaxPool3dFuncOptions& options) {
  return std::get<0>(detail::adaptive_pool<3>(input, options, true));
}
/// adaptive_max_pool2d and where each maximum is (its index in the flattened input plane).
template <tensor_like X>
std::tuple<Tensor<detail::value_t<X>>, Tensor<std::int64_t>> adaptive_max_pool2d_with_indices(
    const X& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return detail::adaptive_pool<2>(input, options, true);
}
}  // namespace strata::nn::functional

#undef STRATA_OPTION

// ---- compiled once (src/nn_loss.cpp) ----
#define STRATA_NN_INSTANCES(T)                                                                                     \
  namespace strata::detail {                                                                                       \
  extern template Tensor<T> linear<T>(const Tensor<T>&, const Tensor<T>&, const std::optional<Tensor<T>>&);         \
  extern template Tensor<T> bilinear<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,                      \
                                        const std::optional<Tensor<T>>&);                                          \
  extern template Tensor<T> mse_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::MSELossFuncOptions&);          \
  extern template Tensor<T> l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::L1LossFuncOptions&);            \
  extern template Tensor<T> smooth_l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::SmoothL1LossFuncOptions&); \
  extern template Tensor<T> huber_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::HuberLossFuncOptions&);      \
  extern template Tensor<T> binary_cross_entropy<T>(const Tensor<T>&, const Tensor<T>&,                           \
                                                    const F::BinaryCrossEntropyFuncOptions&);                      \
  extern template Tensor<T> binary_cross_entropy_with_logits<T>(const Tensor<T>&, const Tensor<T>&,               \
                                                                const F::BinaryCrossEntropyWithLogitsFuncOptions&); \
  extern template Tensor<T> kl_div<T>(const Tensor<T>&, const Tensor<T>&, const F::KLDivFuncOptions&);              \
  extern template Tensor<T> nll_loss<T>(const Tensor<T>&, const Tensor<std::int64_t>&, const F::NLLLossFuncOptions&); \
  extern template Tensor<T> cross_entropy<T>(const Tensor<T>&, const Tensor<std::int64_t>&,                       \
                                             const F::CrossEntropyFuncOptions&);                                   \
  extern template Tensor<T> cross_entropy_probs<T>(const Tensor<T>&, const Tensor<T>&,                            \
                                                   const F::CrossEntropyFuncOptions&);                             \
  extern template Tensor<T> dropout<T>(const Tensor<T>&, const F::DropoutFuncOptions&, generator&);               \
  extern template Tensor<T> embedding<T>(const Tensor<std::int64_t>&, const Tensor<T>&,                           \
                                         const F::EmbeddingFuncOptions&);                                          \
  extern template Tensor<T> batch_norm<T>(const Tensor<T>&, const std::optional<Tensor<T>>&,                     \
                                          const std::optional<Tensor<T>>&, const F::BatchNormFuncOptions&);        \
  extern template Tensor<T> layer_norm<T>(const Tensor<T>&, const F::LayerNormFuncOptions&);                       \
  extern template Tensor<T> group_norm<T>(const Tensor<T>&, const F::GroupNormFuncOptions&);                       \
  extern template Tensor<T> instance_norm<T>(const Tensor<T>&, const F::InstanceNormFuncOptions&);                 \
  extern template Tensor<T> convolution<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>*, const conv_params&); \
  extern template std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling<T>(const Tensor<T>&, const pool_params&);    \
  }
STRATA_NN_INSTANCES(float)
STRATA_NN_INSTANCES(double)
#undef STRATA_NN_INSTANCES
// float128 too for the convolutions, pooling and normalisations (src/nn_conv.cpp, src/nn_norm.cpp),
// where the tests check their gradients against finite differences.
namespace strata::detail {
extern template Tensor<float128> batch_norm<float128>(const Tensor<float128>&, const std::optional<Tensor<float128>>&,
                                                      const std::optional<Tensor<float128>>&,
                                                      const F::BatchNormFuncOptions&);
extern template Tensor<float128> layer_norm<float128>(const Tensor<float128>&, const F::LayerNormFuncOptions&);
extern template Tensor<float128> group_norm<float128>(const Tensor<float128>&, const F::GroupNormFuncOptions&);
extern template Tensor<float128> instance_norm<float128>(const Tensor<float128>&, const F::InstanceNormFuncOptions&);
extern template Tensor<float128> convolution<float128>(const Tensor<float128>&, const Tensor<float128>&,
                                                       const Tensor<float128>*, const conv_params&);
extern template std::tuple<Tensor<float128>, Tensor<std::int64_t>> pooling<float128>(const Tensor<float128>&,
                                                                                     const pool_params&);
}  // namespace strata::detail
// half and bfloat16 (src/nn_lowp.cpp): each function computes in float, its floating inputs and
// tensor options converted up and its result down, every conversion recorded for autograd, as
// PyTorch's CPU kernels accumulate these types in float. dropout and embedding, which only copy
// and scale, run in the type itself.
#define STRATA_NN_LOWP(T)                                                                                          \
  namespace strata::detail {                                                                                       \
  template <>                                                                                                      \
  Tensor<T> linear<T>(const Tensor<T>&, const Tensor<T>&, const std::optional<Tensor<T>>&);                        \
  template <>                                                                                                      \
  Tensor<T> bilinear<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&, const std::optional<Tensor<T>>&);     \
  template <>                                                                                                      \
  Tensor<T> mse_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::MSELossFuncOptions&);                          \
  template <>                                                                                                      \
  Tensor<T> l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::L1LossFuncOptions&);                            \
  template <>                                                                                                      \
  Tensor<T> smooth_l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::SmoothL1LossFuncOptions&);               \
  template <>                                                                                                      \
  Tensor<T> huber_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::HuberLossFuncOptions&);                      \
  template <>                                                                                                      \
  Tensor<T> binary_cross_entropy<T>(const Tensor<T>&, const Tensor<T>&, const F::BinaryCrossEntropyFuncOptions&);   \
  template <>                                                                                                      \
  Tensor<T> binary_cross_entropy_with_logits<T>(const Tensor<T>&, const Tensor<T>&,                               \
                                                const F::BinaryCrossEntropyWithLogitsFuncOptions&);                \
  template <>                                                                                                      \
  Tensor<T> kl_div<T>(const Tensor<T>&, const Tensor<T>&, const F::KLDivFuncOptions&);                              \
  template <>                                                                                                      \
  Tensor<T> nll_loss<T>(const Tensor<T>&, const Tensor<std::int64_t>&, const F::NLLLossFuncOptions&);               \
  template <>                                                                                                      \
  Tensor<T> cross_entropy<T>(const Tensor<T>&, const Tensor<std::int64_t>&, const F::CrossEntropyFuncOptions&);     \
  template <>                                                                                                      \
  Tensor<T> cross_entropy_probs<T>(const Tensor<T>&, const Tensor<T>&, const F::CrossEntropyFuncOptions&);          \
  template <>                                                                                                      \
  Tensor<T> batch_norm<T>(const Tensor<T>&, const std::optional<Tensor<T>>&, const std::optional<Tensor<T>>&,       \
                          const F::BatchNormFuncOptions&);                                                         \
  template <>                                                                                                      \
  Tensor<T> layer_norm<T>(const Tensor<T>&, const F::LayerNormFuncOptions&);                                       \
  template <>                                                                                                      \
  Tensor<T> group_norm<T>(const Tensor<T>&, const F::GroupNormFuncOptions&);                                       \
  template <>                                                                                                      \
  Tensor<T> instance_norm<T>(const Tensor<T>&, const F::InstanceNormFuncOptions&);                                 \
  template <>                                                                                                      \
  Tensor<T> convolution<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>*, const conv_params&);              \
  template <>                                                                                                      \
  std::tuple<Tensor<T>, Tensor<std::int64_t>> pooling<T>(const Tensor<T>&, const pool_params&);                    \
  extern template Tensor<T> dropout<T>(const Tensor<T>&, const F::DropoutFuncOptions&, generator&);               \
  extern template Tensor<T> embedding<T>(const Tensor<std::int64_t>&, const Tensor<T>&,                           \
                                         const F::EmbeddingFuncOptions&);                                          \
  }
STRATA_NN_LOWP(strata::half)
STRATA_NN_LOWP(strata::bfloat16)
#undef STRATA_NN_LOWP
