// SPDX-License-Identifier: MIT
// Optimizers and learning-rate schedulers: PyTorch's torch.optim. Options are set in a chain
// as in libtorch (SGDOptions(0.1).momentum(0.9)); parameters come in groups with options of
// their own. Each step is one fused pass over each parameter (src/optim.cpp): all of the
// update's arithmetic in one loop over the parameter, its gradient and its state, as PyTorch's
// fused kernels, computed in the parameter's type (float for half and bfloat16) in the order
// PyTorch's own step computes it.
module;
#include "options.hpp"
export module strata.optim;
import strata.std;
import strata.error;
import strata.dtype;
import strata.tensor;
import strata.autograd;

export namespace strata::optim {
/// What every optimizer offers a training loop and a learning-rate scheduler.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// One update of every parameter that has a gradient (parameters without one are skipped).
  virtual void step() = 0;
  /// Sets the gradient of every parameter that has one to zero.
  virtual void zero_grad() = 0;
  /// The number of parameter groups.
  virtual std::size_t num_param_groups() const = 0;
  /// Group g's learning rate.
  virtual double get_lr(std::size_t g) const = 0;
  /// Sets group g's learning rate.
  virtual void set_lr(std::size_t g, double lr) = 0;
  /// Writes the state (PyTorch's optimizer.state_dict(): every parameter's step and buffers,
  /// every group's options) to path as a .npz archive.
  virtual void save(const std::string& path) const = 0;
  /// Reads a state written by save into an optimizer of the same kind whose groups hold as many
  /// parameters of the same sizes; all or nothing (a mismatch throws and changes nothing).
  virtual void load(const std::string& path) = 0;
};

/// Writes an optimizer's state to path as a .npz archive (torch::save(optimizer, path)).
inline void save(const Optimizer& optimizer, const std::string& path) { optimizer.save(path); }
/// Reads an optimizer's state written by save (torch::load(optimizer, path)).
inline void load(Optimizer& optimizer, const std::string& path) { optimizer.load(path); }

/// Parameters updated with the same options: the optimizer's defaults when options is empty.
template <element T, class Options>
struct ParamGroup {
  std::vector<Tensor<T>> params;   ///< the group's parameters (leaves that require grad)
  std::optional<Options> options;  ///< the group's own options, else the optimizer's defaults
};

/// SGD's options (torch.optim.SGD's arguments).
class SGDOptions {
 public:
  /// Learning rate lr, no momentum, no weight decay.
  explicit SGDOptions(double lr) : lr_(lr) {}
  /// Learning rate.
  STRATA_OPTION(double, lr, 0)
  /// Momentum factor.
  STRATA_OPTION(double, momentum, 0)
  /// Dampening of the momentum.
  STRATA_OPTION(double, dampening, 0)
  /// Weight decay (an L2 penalty's gradient added to the gradient).
  STRATA_OPTION(double, weight_decay, 0)
  /// Nesterov momentum.
  STRATA_OPTION(bool, nesterov, false)
  /// Maximise the objective instead of minimising it.
  STRATA_OPTION(bool, maximize, false)
};

/// Adam's options (torch.optim.Adam's arguments).
class AdamOptions {
 public:
  /// Learning rate lr (PyTorch's default 1e-3), betas (0.9, 0.999), eps 1e-8, no weight decay.
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  /// The running averages' coefficients, of the gradient and of its square.
  AdamOptions& betas(std::pair<double, double> b) {
    betas_ = b;
    return *this;
  }
  /// The running averages' coefficients.
  std::pair<double, double> betas() const noexcept { return betas_; }
  /// Learning rate.
  STRATA_OPTION(double, lr, 1e-3)
  /// Added to the denominator.
  STRATA_OPTION(double, eps, 1e-8)
  /// Weight decay (an L2 penalty's gradient added to the gradient).
  STRATA_OPTION(double, weight_decay, 0)
  /// The AMSGrad variant (the largest second moment so far in the denominator).
  STRATA_OPTION(bool, amsgrad, false)
  /// Maximise the objective instead of minimising it.
  STRATA_OPTION(bool, maximize, false)

 private:
  std::pair<double, double> betas_{0.9, 0.999};
};

/// AdamW's options (torch.optim.AdamW's arguments): Adam's, with decoupled weight decay 1e-2.
class AdamWOptions {
 public:
  /// Learning rate lr (PyTorch's default 1e-3), betas (0.9, 0.999), eps 1e-8, weight decay 1e-2.
  explicit AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  /// The running averages' coefficients, of the gradient and of its square.
  AdamWOptions& betas(std::pair<double, double> b) {
    betas_ = b;
    return *this;
  }
  /// The running averages' coefficients.
  std::pair<double, double> betas() const noexcept { return betas_; }
  /// Learning rate.
  STRATA_OPTION(double, lr, 1e-3)
  /// Added to the denominator.
  STRATA_OPTION(double, eps, 1e-8)
  /// Decoupled weight decay: the parameter shrinks by lr * weight_decay of itself each step.
  STRATA_OPTION(double, weight_decay, 1e-2)
  /// The AMSGrad variant (the largest second moment so far in the denominator).
  STRATA_OPTION(bool, amsgrad, false)
  /// Maximise the objective instead of minimising it.
  STRATA_OPTION(bool, maximize, false)

 private:
  std::pair<double, double> betas_{0.9, 0.999};
};

/// RMSprop's options (torch.optim.RMSprop's arguments).
class RMSpropOptions {
 public:
  /// Learning rate lr (PyTorch's default 1e-2), alpha 0.99, eps 1e-8, no momentum.
  explicit RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  /// Learning rate.
  STRATA_OPTION(double, lr, 1e-2)
  /// Smoothing constant of the running average of the squared gradient.
  STRATA_OPTION(double, alpha, 0.99)
  /// Added to the denominator.
  STRATA_OPTION(double, eps, 1e-8)
  /// Weight decay (an L2 penalty's gradient added to the gradient).
  STRATA_OPTION(double, weight_decay, 0)
  /// Momentum factor.
  STRATA_OPTION(double, momentum, 0)
  /// Centred RMSprop: the gradient's variance estimate instead of its second moment.
  STRATA_OPTION(bool, centered, false)
  /// Maximise the objective instead of minimising it.
  STRATA_OPTION(bool, maximize, false)
};
}  // namespace strata::optim

namespace strata::detail {
/// Throws PyTorch's error for an option out of range (src/optim.cpp).
void check_options(const optim::SGDOptions& o);
/// Throws PyTorch's error for an option out of range.
void check_options(const optim::AdamOptions& o);
/// Throws PyTorch's error for an option out of range.
void check_options(const optim::AdamWOptions& o);
/// Throws PyTorch's error for an option out of range.
void check_options(const optim::RMSpropOptions& o);

/// An optimizer over parameters of type T with options O and one S of state per parameter:
/// the groups, their options and the state; the update itself is the derived class's.
template <element T, class O, class S>
class optimizer_groups : public optim::Optimizer {
 public:
  /// The parameter groups, each with its options filled in (add groups with add_param_group;
  /// change a group's options through options(g)).
  const std::vector<optim::ParamGroup<T, O>>& param_groups() const noexcept { return groups_; }
  /// Group g's options, to change (PyTorch's param_groups[g][...] = ...).
  O& options(std::size_t g) { return *groups_[checked(g)].options; }
  /// Adds a group (its options the defaults when it has none). A tensor already optimized (the
  /// same elements: data, sizes and strides) is refused, in any group.
  void add_param_group(optim::ParamGroup<T, O> group) {
    if (group.options) check_options(*group.options);
    else group.options = defaults_;
    for (std::size_t i = 0; i < group.params.size(); ++i) {
      const Tensor<T>& p = group.params[i];
      if (!p.is_leaf()) throw error("can't optimize a non-leaf Tensor");
      const auto same = [&](const Tensor<T>& q) {
        return q.data_ptr() == p.data_ptr() && q.sizes() == p.sizes() && q.strides() == p.strides();
      };
      for (std::size_t j = 0; j < i; ++j)
        if (same(group.params[j])) throw error("optimizer contains a parameter group with duplicate parameters");
      for (const auto& g : groups_)
        for (const Tensor<T>& q : g.params)
          if (same(q)) throw error("some parameters appear in more than one parameter group");
    }
    state_.emplace_back(group.params.size());
    groups_.push_back(std::move(group));
  }
  /// The options of groups added without their own.
  const O& defaults() const noexcept { return defaults_; }
  void zero_grad() override {
    for (const auto& g : groups_) strata::zero_grad(g.params);
  }
  std::size_t num_param_groups() const override { return groups_.size(); }
  double get_lr(std::size_t g) const override { return group(g).options->lr(); }
  void set_lr(std::size_t g, double lr) override { groups_[checked(g)].options->lr(lr); }
  void save(const std::string& path) const override;  // src/optim_state.cpp
  void load(const std::string& path) override;

 protected:
  optimizer_groups(std::vector<optim::ParamGroup<T, O>> groups, const O& defaults) : defaults_(defaults) {
    check_options(defaults);
    if (groups.empty() || (groups.size() == 1 && groups[0].params.empty() && !groups[0].options))
      throw error("optimizer got an empty parameter list");
    for (auto& g : groups) add_param_group(std::move(g));
  }
  const optim::ParamGroup<T, O>& group(std::size_t g) const { return groups_[checked(g)]; }
  std::size_t checked(std::size_t g) const {
    if (g >= groups_.size()) throw index_error("optimizer: no parameter group " + std::to_string(g));
    return g;
  }
  O defaults_;
  std::vector<optim::ParamGroup<T, O>> groups_;
  std::vector<std::vector<S>> state_;  ///< per group, per parameter
};

/// Parameters as one group.
template <element T, class O>
std::vector<optim::ParamGroup<T, O>> one_group(std::vector<Tensor<T>> params) {
  std::vector<optim::ParamGroup<T, O>> g(1);
  g[0].params = std::move(params);
  return g;
}

/// The state of one parameter: PyTorch's buffers (undefined until the first step) and the step count.
template <element T>
struct param_state {
  std::int64_t step = 0;
  std::optional<Tensor<T>> a, b, c;  ///< SGD: a = momentum; Adam: a, b, c = exp_avg, exp_avg_sq, max_exp_avg_sq;
                                     ///< RMSprop: a, b, c = square_avg, momentum_buffer, grad_avg
};
}  // namespace strata::detail

export namespace strata::optim {
/// torch.optim.SGD: stochastic gradient descent with optional momentum, dampening, Nesterov
/// momentum and weight decay.
template <element T = float>
class SGD final : public detail::optimizer_groups<T, SGDOptions, detail::param_state<T>> {
 public:
  /// Every parameter in one group with options o.
  SGD(std::vector<Tensor<T>> params, const SGDOptions& o) : SGD(detail::one_group<T, SGDOptions>(std::move(params)), o) {}
  /// Groups of parameters, each with its own options or o.
  SGD(std::vector<ParamGroup<T, SGDOptions>> groups, const SGDOptions& o);
  /// One update of every parameter that has a gradient.
  void step() override;
};
SGD(std::vector<Tensor<float>>, const SGDOptions&)->SGD<float>;
SGD(std::vector<Tensor<double>>, const SGDOptions&)->SGD<double>;
SGD(std::vector<Tensor<half>>, const SGDOptions&)->SGD<half>;
SGD(std::vector<Tensor<bfloat16>>, const SGDOptions&)->SGD<bfloat16>;

/// torch.optim.Adam.
template <element T = float>
class Adam final : public detail::optimizer_groups<T, AdamOptions, detail::param_state<T>> {
 public:
  /// Every parameter in one group with options o.
  explicit Adam(std::vector<Tensor<T>> params, const AdamOptions& o = AdamOptions())
      : Adam(detail::one_group<T, AdamOptions>(std::move(params)), o) {}
  /// Groups of parameters, each with its own options or o.
  Adam(std::vector<ParamGroup<T, AdamOptions>> groups, const AdamOptions& o);
  /// One update of every parameter that has a gradient.
  void step() override;
};
Adam(std::vector<Tensor<float>>)->Adam<float>;
Adam(std::vector<Tensor<double>>)->Adam<double>;
Adam(std::vector<Tensor<half>>)->Adam<half>;
Adam(std::vector<Tensor<bfloat16>>)->Adam<bfloat16>;
Adam(std::vector<Tensor<float>>, const AdamOptions&)->Adam<float>;
Adam(std::vector<Tensor<double>>, const AdamOptions&)->Adam<double>;
Adam(std::vector<Tensor<half>>, const AdamOptions&)->Adam<half>;
Adam(std::vector<Tensor<bfloat16>>, const AdamOptions&)->Adam<bfloat16>;

/// torch.optim.AdamW: Adam with decoupled weight decay.
template <element T = float>
class AdamW final : public detail::optimizer_groups<T, AdamWOptions, detail::param_state<T>> {
 public:
  /// Every parameter in one group with options o.
  explicit AdamW(std::vector<Tensor<T>> params, const AdamWOptions& o = AdamWOptions())
      : AdamW(detail::one_group<T, AdamWOptions>(std::move(params)), o) {}
  /// Groups of parameters, each with its own options or o.
  AdamW(std::vector<ParamGroup<T, AdamWOptions>> groups, const AdamWOptions& o);
  /// One update of every parameter that has a gradient.
  void step() override;
};
AdamW(std::vector<Tensor<float>>)->AdamW<float>;
AdamW(std::vector<Tensor<double>>)->AdamW<double>;
AdamW(std::vector<Tensor<half>>)->AdamW<half>;
AdamW(std::vector<Tensor<bfloat16>>)->AdamW<bfloat16>;
AdamW(std::vector<Tensor<float>>, const AdamWOptions&)->AdamW<float>;
AdamW(std::vector<Tensor<double>>, const AdamWOptions&)->AdamW<double>;
AdamW(std::vector<Tensor<half>>, const AdamWOptions&)->AdamW<half>;
AdamW(std::vector<Tensor<bfloat16>>, const AdamWOptions&)->AdamW<bfloat16>;

/// torch.optim.RMSprop.
template <element T = float>
class RMSprop final : public detail::optimizer_groups<T, RMSpropOptions, detail::param_state<T>> {
 public:
  /// Every parameter in one group with options o.
  explicit RMSprop(std::vector<Tensor<T>> params, const RMSpropOptions& o = RMSpropOptions())
      : RMSprop(detail::one_group<T, RMSpropOptions>(std::move(params)), o) {}
  /// Groups of parameters, each with its own options or o.
  RMSprop(std::vector<ParamGroup<T, RMSpropOptions>> groups, const RMSpropOptions& o);
  /// One update of every parameter that has a gradient.
  void step() override;
};
RMSprop(std::vector<Tensor<float>>)->RMSprop<float>;
RMSprop(std::vector<Tensor<double>>)->RMSprop<double>;
RMSprop(std::vector<Tensor<half>>)->RMSprop<half>;
RMSprop(std::vector<Tensor<bfloat16>>)->RMSprop<bfloat16>;
RMSprop(std::vector<Tensor<float>>, const RMSpropOptions&)->RMSprop<float>;
RMSprop(std::vector<Tensor<double>>, const RMSpropOptions&)->RMSprop<double>;
RMSprop(std::vector<Tensor<half>>, const RMSpropOptions&)->RMSprop<half>;
RMSprop(std::vector<Tensor<bfloat16>>, const RMSpropOptions&)->RMSprop<bfloat16>;

// ---- learning-rate schedulers ----
/// The base of the epoch-driven schedulers (torch.optim.lr_scheduler): each step() moves the
/// epoch on and sets every group's learning rate; constructed at epoch 0 with the groups'
/// current rates as their base rates.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  /// Moves to the next epoch and sets the optimizer's learning rates.
  void step();
  /// The learning rates the last step (or the construction) set, per group.
  std::vector<double> get_last_lr() const { return last_lr_; }
  /// The current epoch (0 after construction).
  std::int64_t last_epoch() const noexcept { return last_epoch_; }

 protected:
  /// Takes the optimizer's current rates as the base rates (then the derived class's
  /// constructor sets epoch 0's rates with initial_step, as PyTorch's does).
  explicit LRScheduler(Optimizer& optimizer);
  /// Sets epoch 0's rates (get_lr at epoch 0: a milestone at 0, a lambda's factor at 0).
  void initial_step();
  /// The rates of the current epoch, from the optimizer's current ones (PyTorch's get_lr).
  virtual std::vector<double> get_lr() const = 0;
  /// Group g's rate in the optimizer now.
  double lr(std::size_t g) const { return optimizer_->get_lr(g); }
  Optimizer* optimizer_;
  std::vector<double> base_lrs_;
  std::int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

/// torch.optim.lr_scheduler.StepLR: the rate times gamma every step_size epochs.
class StepLR final : public LRScheduler {
 public:
  /// Decays by gamma every step_size epochs.
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 private:
  std::vector<double> get_lr() const override;
  std::int64_t step_size_;
  double gamma_;
};

/// torch.optim.lr_scheduler.MultiStepLR: the rate times gamma at each milestone epoch.
class MultiStepLR final : public LRScheduler {
 public:
  /// Decays by gamma at each of the milestones (a milestone given twice decays twice).
  MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1);

 private:
  std::vector<double> get_lr() const override;
  std::vector<std::int64_t> milestones_;
  double gamma_;
};

/// torch.optim.lr_scheduler.ExponentialLR: the rate times gamma every epoch.
class ExponentialLR final : public LRScheduler {
 public:
  /// Decays by gamma every epoch.
  ExponentialLR(Optimizer& optimizer, double gamma);

 private:
  std::vector<double> get_lr() const override;
  double gamma_;
};

/// torch.optim.lr_scheduler.CosineAnnealingLR, in PyTorch's recursive form (which, past
/// T_max, climbs back as PyTorch's does).
class CosineAnnealingLR final : public LRScheduler {
 public:
  /// Anneals from the base rate to eta_min over T_max epochs.
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0);

 private:
  std::vector<double> get_lr() const override;
  std::int64_t t_max_;
  double eta_min_;
};

/// torch.optim.lr_scheduler.LambdaLR: the base rate times lr_lambda(epoch).
class LambdaLR final : public LRScheduler {
 public:
  /// One factor function for every group.
  LambdaLR(Optimizer& optimizer, std::function<double(std::int64_t)> lr_lambda);
  /// One factor function per group.
  LambdaLR(Optimizer& optimizer, std::vector<std::function<double(std::int64_t)>> lr_lambdas);

 private:
  std::vector<double> get_lr() const override;
  std::vector<std::function<double(std::int64_t)>> lambdas_;
};

/// torch.optim.lr_scheduler.ReduceLROnPlateau: cuts the rates by factor when a metric has not
/// improved for patience epochs. mode "min" or "max", threshold_mode "rel" or "abs".
class ReduceLROnPlateau {
 public:
  /// PyTorch's arguments and defaults; min_lr for every group.
  explicit ReduceLROnPlateau(Optimizer& optimizer, std::string_view mode = "min", double factor = 0.1,
                             std::int64_t patience = 10, double threshold = 1e-4,
                             std::string_view threshold_mode = "rel", std::int64_t cooldown = 0, double min_lr = 0,
                             double eps = 1e-8);
  /// One epoch's metric: counts a bad epoch or a new best, and cuts the rates after too many.
  void step(double metric);
  /// The learning rates after the last step, per group.
  std::vector<double> get_last_lr() const;
  /// The epochs stepped so far.
  std::int64_t last_epoch() const noexcept { return last_epoch_; }

 private:
  bool is_better(double a) const;
  Optimizer* optimizer_;
  bool max_, rel_;
  double factor_, threshold_, min_lr_, eps_, best_;
  std::int64_t patience_, cooldown_, cooldown_counter_ = 0, num_bad_epochs_ = 0, last_epoch_ = 0;
};
}  // namespace strata::optim

namespace strata::detail {
extern template class optimizer_groups<float, optim::SGDOptions, param_state<float>>;
extern template class optimizer_groups<double, optim::SGDOptions, param_state<double>>;
extern template class optimizer_groups<float, optim::AdamOptions, param_state<float>>;
extern template class optimizer_groups<double, optim::AdamOptions, param_state<double>>;
extern template class optimizer_groups<float, optim::AdamWOptions, param_state<float>>;
extern template class optimizer_groups<double, optim::AdamWOptions, param_state<double>>;
extern template class optimizer_groups<float, optim::RMSpropOptions, param_state<float>>;
extern template class optimizer_groups<double, optim::RMSpropOptions, param_state<double>>;
extern template class optimizer_groups<half, optim::SGDOptions, param_state<half>>;
extern template class optimizer_groups<bfloat16, optim::SGDOptions, param_state<bfloat16>>;
extern template class optimizer_groups<half, optim::AdamOptions, param_state<half>>;
extern template class optimizer_groups<bfloat16, optim::AdamOptions, param_state<bfloat16>>;
extern template class optimizer_groups<half, optim::AdamWOptions, param_state<half>>;
extern template class optimizer_groups<bfloat16, optim::AdamWOptions, param_state<bfloat16>>;
extern template class optimizer_groups<half, optim::RMSpropOptions, param_state<half>>;
extern template class optimizer_groups<bfloat16, optim::RMSpropOptions, param_state<bfloat16>>;
}  // namespace strata::detail

namespace strata::optim {
extern template class SGD<float>;
extern template class SGD<double>;
extern template class Adam<float>;
extern template class Adam<double>;
extern template class AdamW<float>;
extern template class AdamW<double>;
extern template class RMSprop<float>;
extern template class RMSprop<double>;
extern template class SGD<half>;
extern template class SGD<bfloat16>;
extern template class Adam<half>;
extern template class Adam<bfloat16>;
extern template class AdamW<half>;
extern template class AdamW<bfloat16>;
extern template class RMSprop<half>;
extern template class RMSprop<bfloat16>;
}  // namespace strata::optim

#undef STRATA_OPTION
