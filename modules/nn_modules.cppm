// SPDX-License-Identifier: MIT
// strata.nn's modules (partition :modules), as libtorch's C++ frontend has them, small and
// explicit: a Module holds named parameters, buffers and child modules; layers (Linear, Conv1d,
// Conv2d, BatchNorm1d/2d, LayerNorm, Embedding, Dropout, ReLU, Flatten, MaxPool1d/2d/3d,
// AvgPool1d/2d/3d)
// own their tensors, initialised as PyTorch initialises them, and call strata.nn's functions;
// Sequential chains layers. A module's state_dict (parameters and buffers by dotted name) is
// saved and loaded as a .npz archive (strata.io), which NumPy and PyTorch read.
module;
#include "options.hpp"
export module strata.nn:modules;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
import strata.random;
import strata.autograd;
import strata.io;
import :functional;

export namespace strata::nn {
/// Tensors by dotted name, in a module's order: parameters, buffers, a state_dict.
template <element T>
using named_tensors = std::vector<std::pair<std::string, Tensor<T>>>;

/// A model or layer: named parameters (leaves that require grad), buffers (running
/// statistics) and child modules, with training mode (libtorch's torch::nn::Module).
template <element T = float>
class Module {
 public:
  /// The element type of the module's tensors.
  using value_type = T;
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  /// Moves the registrations (the tensors are handles: nothing is copied).
  Module(Module&&) noexcept = default;
  /// Moves the registrations.
  Module& operator=(Module&&) noexcept = default;

  /// The parameters of this module and its children, depth first in registration order.
  std::vector<Tensor<T>> parameters() const {
    std::vector<Tensor<T>> out;
    for (auto& [name, t] : named_parameters()) out.push_back(t);
    return out;
  }
  /// parameters() with dotted names ("conv1.weight").
  named_tensors<T> named_parameters() const {
    named_tensors<T> out;
    collect(out, "", true, false);
    return out;
  }
  /// The buffers of this module and its children with dotted names.
  named_tensors<T> named_buffers() const {
    named_tensors<T> out;
    collect(out, "", false, true);
    return out;
  }
  /// The direct children with their names.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const noexcept {
    return children_;
  }
  /// Sets training mode here and in every child (dropout and batch norm follow it).
  void train(bool on = true) {
    training_ = on;
    for (auto& [name, child] : children_) child->train(on);
  }
  /// Evaluation mode: train(false).
  void eval() { train(false); }
  /// True in training mode (the default).
  bool is_training() const noexcept { return training_; }
  /// Sets the gradient of every parameter that has one to zero.
  void zero_grad() { strata::zero_grad(parameters()); }
  /// Parameters and buffers by dotted name, each module's own before its children's.
  named_tensors<T> state_dict() const {
    named_tensors<T> out;
    collect(out, "", true, true);
    return out;
  }
  /// Copies each entry of state into the tensor of the same name (not recorded); as PyTorch's
  /// strict load, a missing or unexpected name or other sizes throw and change nothing.
  void load_state_dict(const named_tensors<T>& state) { load_state_dict<T>(state); }
  /// load_state_dict of a state of another floating type, converted as it is copied (PyTorch's
  /// model.to(dtype) is a Net<U> loading a Net<T>'s state_dict).
  template <element S>
  void load_state_dict(const named_tensors<S>& state) {
    static_assert(is_floating_point(dtype_v<S>),
                  "load_state_dict: a state_dict of floating tensors (float, double, half, bfloat16, float128)");
    const named_tensors<T> mine = state_dict();
    std::vector<std::string> missing, unexpected;
    std::vector<std::pair<Tensor<T>, const Tensor<S>*>> copies;
    for (const auto& [name, t] : mine) {
      const Tensor<S>* from = nullptr;
      for (const auto& [n, s] : state)
        if (n == name) from = &s;
      if (!from) {
        missing.push_back(name);
        continue;
      }
      if (from->sizes() != t.sizes())
        throw shape_error("Error(s) in loading state_dict: size mismatch for " + name +
                          ": copying a param with shape " + to_string(from->sizes()) +
                          ", the shape in current model is " + to_string(t.sizes()) + ".");
      copies.emplace_back(t, from);
    }
    for (const auto& [n, s] : state) {
      bool known = false;
      for (const auto& [name, t] : mine) known = known || name == n;
      if (!known) unexpected.push_back(n);
    }
    if (!missing.empty() || !unexpected.empty()) {
      std::string why = "Error(s) in loading state_dict:";
      const auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const std::string& n : v) s += (s.empty() ? "\"" : ", \"") + n + "\"";
        return s + ".";
      };
      if (!missing.empty()) why += " Missing key(s) in state_dict: " + list(missing);
      if (!unexpected.empty()) why += " Unexpected key(s) in state_dict: " + list(unexpected);
      throw error(why);
    }
    const no_grad guard;
    for (const auto& [to, from] : copies) to.copy_(*from);
  }

 protected:
  /// Registers t as a parameter named name (made a leaf that requires grad); returns it.
  Tensor<T> register_parameter(const std::string& name, Tensor<T> t) {
    check_name(name);
    t = t.detach().requires_grad_();
    params_.emplace_back(name, t);
    return t;
  }
  /// Registers t as a buffer named name (saved and loaded, never trained); returns it.
  Tensor<T> register_buffer(const std::string& name, Tensor<T> t) {
    check_name(name);
    buffers_.emplace_back(name, t);
    return t;
  }
  /// Registers a child module named name; returns it.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    static_assert(std::is_base_of_v<Module, M>, "register_module: a strata::nn::Module<T> of the same T");
    check_name(name);
    children_.emplace_back(name, m);
    return m;
  }

 private:
  void check_name(const std::string& name) const {
    if (name.empty() || name.find('.') != std::string::npos)
      throw error("module name can't contain \".\" or be empty, got: \"" + name + "\"");
    for (const auto& [n, t] : params_)
      if (n == name) throw error("attribute '" + name + "' already exists");
    for (const auto& [n, t] : buffers_)
      if (n == name) throw error("attribute '" + name + "' already exists");
    for (const auto& [n, c] : children_)
      if (n == name) throw error("attribute '" + name + "' already exists");
  }
  void collect(named_tensors<T>& out, const std::string& prefix, bool params, bool buffers) const {
    if (params)
      for (const auto& [n, t] : params_) out.emplace_back(prefix + n, t);
    if (buffers)
      for (const auto& [n, t] : buffers_) out.emplace_back(prefix + n, t);
    for (const auto& [n, child] : children_) child->collect(out, prefix + n + ".", params, buffers);
  }

  named_tensors<T> params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

/// A module with forward(x) -> y on tensors of T: what Sequential chains.
template <element T = float>
class Layer : public Module<T> {
 public:
  /// The layer applied to x.
  virtual Tensor<T> forward(const Tensor<T>& x) = 0;
  /// forward(x).
  Tensor<T> operator()(const Tensor<T>& x) { return forward(x); }
};

/// Saves a module's state_dict as a .npz archive (np.load reads it; names are dotted).
template <element T>
void save(const Module<T>& module, const std::string& path) {
  save_npz(path, module.state_dict());
}
/// Loads a .npz archive written by save into a module (or np.savez of a PyTorch state_dict of
/// the module's dtype, without BatchNorm's int64 num_batches_tracked entries).
template <element T>
void load(Module<T>& module, const std::string& path) {
  module.load_state_dict(load_npz<T>(path));
}
}  // namespace strata::nn

namespace strata::nn::detail {
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for weights (kaiming_uniform with
/// a = sqrt(5)) and biases of Linear and Conv.
template <element T>
Tensor<T> fan_in_uniform(int_list sizes, std::int64_t fan_in) {
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  Tensor<T> t = empty<T>(sizes);
  uniform_(t, -bound, bound);
  return t;
}
}  // namespace strata::nn::detail

export namespace strata::nn {
/// y = x @ weight^T + bias, weight [out_features, in_features] (torch.nn.Linear).
template <element T = float>
class Linear : public Layer<T> {
 public:
  /// PyTorch's initialisation: weight and bias U(-1/sqrt(in), 1/sqrt(in)).
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true)
      : weight(this->register_parameter("weight", detail::fan_in_uniform<T>({out_features, in_features}, in_features))) {
    if (bias) this->bias = this->register_parameter("bias", detail::fan_in_uniform<T>({out_features}, in_features));
  }
  Tensor<T> forward(const Tensor<T>& x) override { return functional::linear(x, weight, bias); }
  /// [out_features, in_features].
  Tensor<T> weight;
  /// [out_features], or none.
  std::optional<Tensor<T>> bias;
};

/// A convolution layer's options (torch.nn.ConvNd's arguments).
template <std::size_t D>
class ConvOptions {
 public:
  /// in_channels -> out_channels with windows of kernel_size.
  ConvOptions(std::int64_t in_channels, std::int64_t out_channels, functional::ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Input channels.
  STRATA_OPTION(std::int64_t, in_channels, 0)
  /// Output channels.
  STRATA_OPTION(std::int64_t, out_channels, 0)
  /// The window's size.
  STRATA_OPTION(functional::ExpandingArray<D>, kernel_size, 1)
  /// The windows' step.
  STRATA_OPTION(functional::ExpandingArray<D>, stride, 1)
  /// Zeros added on both sides, or "same" / "valid".
  STRATA_OPTION(functional::ConvPadding<D>, padding, 0)
  /// The spacing of a window's elements.
  STRATA_OPTION(functional::ExpandingArray<D>, dilation, 1)
  /// Channel groups convolved apart.
  STRATA_OPTION(std::int64_t, groups, 1)
  /// False: no bias.
  STRATA_OPTION(bool, bias, true)
};
/// Conv1d's options.
using Conv1dOptions = ConvOptions<1>;
/// Conv2d's options.
using Conv2dOptions = ConvOptions<2>;

/// A D-d convolution layer (torch.nn.Conv1d/Conv2d): weight [out, in / groups, kernel...].
template <std::size_t D, element T = float>
class ConvNd : public Layer<T> {
 public:
  /// PyTorch's initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in / groups * kernel.
  explicit ConvNd(const ConvOptions<D>& options) : options_(options) {
    if (options.groups() <= 0 || options.in_channels() % options.groups() != 0)
      throw error("in_channels must be divisible by groups");
    if (options.out_channels() % options.groups() != 0) throw error("out_channels must be divisible by groups");
    dim_vector sizes{options.out_channels(), options.in_channels() / options.groups()};
    std::int64_t fan_in = options.in_channels() / options.groups();
    for (std::int64_t k : options.kernel_size().vec()) {
      sizes.push_back(k);
      fan_in *= k;
    }
    weight = this->register_parameter("weight", detail::fan_in_uniform<T>(sizes, fan_in));
    if (options.bias()) bias = this->register_parameter("bias", detail::fan_in_uniform<T>({options.out_channels()}, fan_in));
  }
  Tensor<T> forward(const Tensor<T>& x) override {
    functional::ConvFuncOptions<D> o;
    o.stride(options_.stride()).padding(options_.padding()).dilation(options_.dilation()).groups(options_.groups());
    if (bias) o.bias(*bias);
    return strata::detail::conv<D>(x, weight, o);
  }
  /// [out_channels, in_channels / groups, kernel...].
  Tensor<T> weight;
  /// [out_channels], or none.
  std::optional<Tensor<T>> bias;

 private:
  ConvOptions<D> options_;
};
/// A 1-d convolution layer (torch.nn.Conv1d).
template <element T = float>
class Conv1d : public ConvNd<1, T> {
 public:
  /// A layer with these options.
  explicit Conv1d(const Conv1dOptions& options) : ConvNd<1, T>(options) {}
};
/// A 2-d convolution layer (torch.nn.Conv2d).
template <element T = float>
class Conv2d : public ConvNd<2, T> {
 public:
  /// A layer with these options.
  explicit Conv2d(const Conv2dOptions& options) : ConvNd<2, T>(options) {}
};

/// A batch norm layer's options (torch.nn.BatchNorm1d/2d's arguments).
class BatchNormOptions {
 public:
  /// Normalises num_features channels.
  BatchNormOptions(std::int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as BatchNorm2d(16)
  /// The channels (dim 1).
  STRATA_OPTION(std::int64_t, num_features, 0)
  /// Added to the variance before its square root.
  STRATA_OPTION(double, eps, 1e-5)
  /// The running statistics' update weight.
  STRATA_OPTION(double, momentum, 0.1)
  /// A learnt scale and shift per channel.
  STRATA_OPTION(bool, affine, true)
  /// Keeps running statistics (used in evaluation mode).
  STRATA_OPTION(bool, track_running_stats, true)
};
/// Batch normalisation over dim 1 (torch.nn.BatchNorm1d and BatchNorm2d): the batch's
/// statistics in training mode, the running ones in evaluation mode.
template <element T = float>
class BatchNorm : public Layer<T> {
 public:
  /// weight 1, bias 0, running_mean 0, running_var 1, as PyTorch.
  explicit BatchNorm(const BatchNormOptions& options) : options_(options) {
    const std::int64_t c = options.num_features();
    if (options.affine()) {
      weight = this->register_parameter("weight", ones<T>({c}));
      bias = this->register_parameter("bias", zeros<T>({c}));
    }
    if (options.track_running_stats()) {
      running_mean = this->register_buffer("running_mean", zeros<T>({c}));
      running_var = this->register_buffer("running_var", ones<T>({c}));
    }
  }
  Tensor<T> forward(const Tensor<T>& x) override {
    functional::BatchNormFuncOptions o;
    o.training(this->is_training() || !running_mean).momentum(options_.momentum()).eps(options_.eps());
    if (weight) o.weight(*weight).bias(*bias);
    return functional::batch_norm(x, running_mean, running_var, o);
  }
  /// The scale per channel, or none.
  std::optional<Tensor<T>> weight;
  /// The shift per channel, or none.
  std::optional<Tensor<T>> bias;
  /// The running mean per channel, or none.
  std::optional<Tensor<T>> running_mean;
  /// The running (unbiased) variance per channel, or none.
  std::optional<Tensor<T>> running_var;

 private:
  BatchNormOptions options_;
};
/// Batch normalisation of [N, C] or [N, C, L] (torch.nn.BatchNorm1d).
template <element T = float>
class BatchNorm1d : public BatchNorm<T> {
 public:
  /// A layer with these options.
  explicit BatchNorm1d(const BatchNormOptions& options) : BatchNorm<T>(options) {}
  Tensor<T> forward(const Tensor<T>& x) override {
    if (x.dim() != 2 && x.dim() != 3) throw shape_error("expected 2D or 3D input (got " + std::to_string(x.dim()) + "D input)");
    return BatchNorm<T>::forward(x);
  }
};
/// Batch normalisation of [N, C, H, W] (torch.nn.BatchNorm2d).
template <element T = float>
class BatchNorm2d : public BatchNorm<T> {
 public:
  /// A layer with these options.
  explicit BatchNorm2d(const BatchNormOptions& options) : BatchNorm<T>(options) {}
  Tensor<T> forward(const Tensor<T>& x) override {
    if (x.dim() != 4) throw shape_error("expected 4D input (got " + std::to_string(x.dim()) + "D input)");
    return BatchNorm<T>::forward(x);
  }
};

/// Layer normalisation over the trailing normalized_shape dims (torch.nn.LayerNorm).
template <element T = float>
class LayerNorm : public Layer<T> {
 public:
  /// weight 1 and bias 0 of normalized_shape when elementwise_affine.
  explicit LayerNorm(std::vector<std::int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : shape_(std::move(normalized_shape)), eps_(eps) {
    if (elementwise_affine) {
      weight = this->register_parameter("weight", ones<T>(shape_));
      bias = this->register_parameter("bias", zeros<T>(shape_));
    }
  }
  Tensor<T> forward(const Tensor<T>& x) override {
    functional::LayerNormFuncOptions o(shape_);
    o.eps(eps_);
    if (weight) o.weight(*weight).bias(*bias);
    return functional::layer_norm(x, o);
  }
  /// The scale, or none.
  std::optional<Tensor<T>> weight;
  /// The shift, or none.
  std::optional<Tensor<T>> bias;

 private:
  std::vector<std::int64_t> shape_;
  double eps_;
};

/// Embedding's options (torch.nn.Embedding's arguments).
class EmbeddingOptions {
 public:
  /// A table of num_embeddings rows of embedding_dim values.
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// The rows.
  STRATA_OPTION(std::int64_t, num_embeddings, 0)
  /// The values per row.
  STRATA_OPTION(std::int64_t, embedding_dim, 0)
  /// A row that starts at zero and whose gradient stays zero (negative: counted from the end).
  STRATA_OPTION(std::optional<std::int64_t>, padding_idx, std::nullopt)
  /// Each row looked up whose norm exceeds max_norm is first rescaled in place to max_norm.
  STRATA_OPTION(std::optional<double>, max_norm, std::nullopt)
  /// The p of max_norm's p-norm.
  STRATA_OPTION(double, norm_type, 2)
  /// Each row's gradient divided by the number of times the batch looks it up.
  STRATA_OPTION(bool, scale_grad_by_freq, false)
};
/// Rows of a table looked up by index (torch.nn.Embedding): weight [num_embeddings, dim] ~ N(0, 1).
template <element T = float>
class Embedding : public Module<T> {
 public:
  /// N(0, 1) rows, the padding_idx row zero.
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, std::optional<std::int64_t> padding_idx = std::nullopt)
      : Embedding(EmbeddingOptions(num_embeddings, embedding_dim).padding_idx(padding_idx)) {}
  /// N(0, 1) rows, the padding_idx row zero.
  explicit Embedding(const EmbeddingOptions& options)
      : weight(this->register_parameter("weight", randn<T>({options.num_embeddings(), options.embedding_dim()}))),
        options_(options) {
    if (const auto padding_idx = options.padding_idx()) {
      const no_grad guard;
      const std::int64_t n = options.num_embeddings();
      const std::int64_t row = *padding_idx < 0 ? *padding_idx + n : *padding_idx;
      if (row < 0 || row >= n) throw error("Padding_idx must be within num_embeddings");
      weight[row].fill_(T(0));
    }
  }
  /// The rows at the indices: [index sizes..., embedding_dim].
  Tensor<T> forward(const Tensor<std::int64_t>& index) {
    return functional::embedding(index, weight,
                                 functional::EmbeddingFuncOptions()
                                     .padding_idx(options_.padding_idx())
                                     .max_norm(options_.max_norm())
                                     .norm_type(options_.norm_type())
                                     .scale_grad_by_freq(options_.scale_grad_by_freq()));
  }
  /// forward(index).
  Tensor<T> operator()(const Tensor<std::int64_t>& index) { return forward(index); }
  /// [num_embeddings, embedding_dim].
  Tensor<T> weight;

 private:
  EmbeddingOptions options_;
};

/// Zeroes elements with probability p in training mode (torch.nn.Dropout).
template <element T = float>
class Dropout : public Layer<T> {
 public:
  /// Dropout with probability p (checked by the first forward in training mode).
  explicit Dropout(double p = 0.5) : p_(p) {}
  Tensor<T> forward(const Tensor<T>& x) override {
    return functional::dropout(x, functional::DropoutFuncOptions().p(p_).training(this->is_training()));
  }

 private:
  double p_;
};

/// max(x, 0) (torch.nn.ReLU).
template <element T = float>
class ReLU : public Layer<T> {
 public:
  Tensor<T> forward(const Tensor<T>& x) override { return strata::relu(x); }
};

/// Flattens dims start_dim..end_dim (torch.nn.Flatten: from dim 1).
template <element T = float>
class Flatten : public Layer<T> {
 public:
  /// Flattens start_dim..end_dim.
  explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor<T> forward(const Tensor<T>& x) override { return x.flatten(start_, end_); }

 private:
  std::int64_t start_, end_;
};

/// D-d max pooling (torch.nn.MaxPool1d/2d/3d).
template <std::size_t D, element T = float>
class MaxPoolNd : public Layer<T> {
 public:
  /// Pooling with these options (stride defaults to the kernel size).
  explicit MaxPoolNd(functional::MaxPoolFuncOptions<D> options) : options_(std::move(options)) {}
  Tensor<T> forward(const Tensor<T>& x) override { return std::get<0>(strata::detail::max_pool<D>(x, options_)); }

 private:
  functional::MaxPoolFuncOptions<D> options_;
};
/// D-d average pooling (torch.nn.AvgPool1d/2d/3d).
template <std::size_t D, element T = float>
class AvgPoolNd : public Layer<T> {
 public:
  /// Pooling with these options (stride defaults to the kernel size).
  explicit AvgPoolNd(functional::AvgPoolFuncOptions<D> options) : options_(std::move(options)) {}
  Tensor<T> forward(const Tensor<T>& x) override { return strata::detail::avg_pool<D>(x, options_); }

 private:
  functional::AvgPoolFuncOptions<D> options_;
};
// The pooling layers by dimension (each with PyTorch's two constructors).
#define STRATA_POOL_LAYER(Name, Base, D)                                                     \
  template <element T = float>                                                               \
  class Name : public Base<D, T> {                                                           \
   public:                                                                                   \
    explicit Name(functional::Name##FuncOptions options) : Base<D, T>(std::move(options)) {} \
    explicit Name(functional::ExpandingArray<D> kernel_size)                                 \
        : Base<D, T>(functional::Name##FuncOptions(kernel_size)) {}                          \
  };
/// 1-d max pooling (torch.nn.MaxPool1d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(MaxPool1d, MaxPoolNd, 1)
/// 2-d max pooling (torch.nn.MaxPool2d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(MaxPool2d, MaxPoolNd, 2)
/// 3-d max pooling (torch.nn.MaxPool3d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(MaxPool3d, MaxPoolNd, 3)
/// 1-d average pooling (torch.nn.AvgPool1d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(AvgPool1d, AvgPoolNd, 1)
/// 2-d average pooling (torch.nn.AvgPool2d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(AvgPool2d, AvgPoolNd, 2)
/// 3-d average pooling (torch.nn.AvgPool3d): from options, or windows of kernel_size stepped by it.
STRATA_POOL_LAYER(AvgPool3d, AvgPoolNd, 3)
#undef STRATA_POOL_LAYER

/// Layers applied in order (torch.nn.Sequential): children named "0", "1", ...
template <element T = float>
class Sequential : public Layer<T> {
 public:
  /// An empty chain.
  Sequential() = default;
  /// The given layers, moved in.
  template <class... L>
    requires(sizeof...(L) > 0 && (std::is_base_of_v<Layer<T>, std::remove_cvref_t<L>> && ...))
  explicit Sequential(L&&... layers) {
    (push_back(strata::detail::make_shared<std::remove_cvref_t<L>>(std::forward<L>(layers))), ...);
  }
  /// Appends a layer.
  template <class L>
  void push_back(std::shared_ptr<L> layer) {
    static_assert(std::is_base_of_v<Layer<T>, L>, "Sequential holds strata::nn::Layer<T> of its own T");
    layers_.push_back(this->register_module(std::to_string(layers_.size()), std::move(layer)));
  }
  Tensor<T> forward(const Tensor<T>& x) override {
    Tensor<T> y = x;
    for (const auto& layer : layers_) y = layer->forward(y);
    return y;
  }
  /// The number of layers.
  std::size_t size() const noexcept { return layers_.size(); }
  /// Layer i.
  Layer<T>& operator[](std::size_t i) { return *layers_.at(i); }

 private:
  std::vector<std::shared_ptr<Layer<T>>> layers_;
};
/// Sequential<T> from its layers' T.
template <class First, class... Rest>
Sequential(First&&, Rest&&...) -> Sequential<typename std::remove_cvref_t<First>::value_type>;
}  // namespace strata::nn

#undef STRATA_OPTION
