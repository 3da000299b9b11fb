// SPDX-License-Identifier: MIT
// The optimizers' steps and the schedulers. Each parameter's update is one pass over its
// elements (split across threads in blocks; the same bits for any thread count), reading the
// parameter, its gradient and its state and writing the parameter and the state, in the
// parameter's type (half and bfloat16: in float, stored back in the type) and in the order of
// operations of PyTorch 1.13's single-tensor steps
// (torch/optim/sgd.py, adam.py, adamw.py, rmsprop.py): `x.mul_(a).add_(y, alpha=b)` is
// x * a + b * y, `addcmul_(y, z, value=c)` is x + c * y * z and `addcdiv_(y, z, value=c)` is
// x + c * y / z (ATen's order). A parameter or gradient that is not contiguous is updated
// through a contiguous copy.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "parallel.hpp"
#include "python_repr.hpp"
module strata.optim;
import strata.loop;

namespace strata::detail {
namespace {
// Calls body(begin, end) over [0, n) in blocks of `grain` elements spread across threads.
template <class Body>
void for_blocks(std::int64_t n, const Body& body) {
  const std::int64_t blocks = (n + grain - 1) / grain;
  const std::int64_t threads = std::min<std::int64_t>(thread_count(), blocks);
  if (threads <= 1) return body(std::int64_t{0}, n);
  struct job {
    const Body* body;
    std::int64_t n, threads;
    static void run(void* ctx, std::int64_t c) {
      const auto& j = *static_cast<const job*>(ctx);
      const std::int64_t blocks = (j.n + grain - 1) / grain;
      const std::int64_t b0 = blocks * c / j.threads, b1 = blocks * (c + 1) / j.threads;
      (*j.body)(b0 * grain, std::min(j.n, b1 * grain));
    }
  } j{&body, n, threads};
  parallel_run(threads, static_cast<int>(threads), &job::run, &j);
}

void require(bool ok, const std::string& message) {
  if (!ok) throw error(message);
}

// The parameter's and gradient's elements, contiguous: in place when they are, else copies
// (written back to the parameter by finish()).
template <class T>
struct dense {
  Tensor<T> p, g;
  const Tensor<T>* param;
  dense(const Tensor<T>& param_, const Tensor<T>& grad) : p(param_.detach()), g(grad), param(&param_) {
    param_.storage().check_writable();
    if (!p.is_contiguous()) p = p.contiguous();
    if (!g.is_contiguous()) g = g.contiguous();
  }
  void finish() const {
    if (p.data_ptr() != param->data_ptr()) param->detach().assign(p);
    else param->storage().bump_version();
  }
};

template <class T>
Tensor<T>& state_tensor(std::optional<Tensor<T>>& slot, const Tensor<T>& like) {
  if (!slot) slot = zeros<T>(like.sizes());
  return *slot;
}

// ---- the updates: blocks of elements, the constants by value and the arrays restrict (so
// the loops vectorise); an option that adds an array to the loop is a template argument, the
// others select ----
// The square root without errno (std::sqrt may set it, which keeps the loops scalar).
template <class T>
T root_of(T x) {
  return __builtin_elementwise_sqrt(x);
}
template <class T>
struct sgd_k {
  T wd, mom, keep, step;
  bool decay, nesterov, maximize, first;
};
// Each element is computed in C = compute_t<T> (half and bfloat16 in float, the constants too)
// and stored in T.
template <bool Momentum, class T, class C = compute_t<T>>
void sgd_block(const sgd_k<C> k, T* __restrict p, const T* __restrict g, T* __restrict buf, std::int64_t i0,
               std::int64_t i1) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const C x = p[i];
    C d = k.maximize ? -C(g[i]) : C(g[i]);
    d = k.decay ? d + k.wd * x : d;
    if constexpr (Momentum) {
      const C b = k.first ? d : C(buf[i]) * k.mom + k.keep * d;
      buf[i] = static_cast<T>(b);
      d = k.nesterov ? d + k.mom * b : b;
    }
    p[i] = static_cast<T>(x + k.step * d);
  }
}
template <class T, class C = compute_t<T>>
void sgd_update(T* p, const T* g, T* buf, std::int64_t n, const optim::SGDOptions& o, bool first) {
  const sgd_k<C> k{C(o.weight_decay()), C(o.momentum()), C(1 - o.dampening()), C(-o.lr()),
                   o.weight_decay() != 0, o.nesterov(), o.maximize(), first};
  for_blocks(n, [&](std::int64_t i0, std::int64_t i1) {
    if (buf) sgd_block<true>(k, p, g, buf, i0, i1);
    else sgd_block<false>(k, p, g, buf, i0, i1);
  });
}

struct adam_step {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled;
  std::int64_t step;
};
template <class T>
struct adam_k {
  T b1, b2, c1, c2, eps, wd, shrink, bc2_sqrt, step;
  bool coupled, decoupled, maximize;
};
template <bool Amsgrad, class T, class C = compute_t<T>>
void adam_block(const adam_k<C> k, T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                T* __restrict vmax, std::int64_t i0, std::int64_t i1) {
  for (std::int64_t i = i0; i < i1; ++i) {
    C d = k.maximize ? -C(g[i]) : C(g[i]);
    const C x = k.decoupled ? C(p[i]) * k.shrink : C(p[i]);
    d = k.coupled ? d + k.wd * x : d;
    const C mi = C(m[i]) * k.b1 + k.c1 * d;
    const C vi = C(v[i]) * k.b2 + k.c2 * d * d;
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
    C second = vi;
    if constexpr (Amsgrad) {  // torch.maximum: a NaN wins
      const C before = vmax[i];
      second = vi > before || vi != vi ? vi : before;
      vmax[i] = static_cast<T>(second);
    }
    const C denom = root_of(second) / k.bc2_sqrt + k.eps;
    p[i] = static_cast<T>(x + k.step * mi / denom);
  }
}
template <class T, class C = compute_t<T>>
void adam_update(T* p, const T* g, T* m, T* v, T* vmax, std::int64_t n, const adam_step& a) {
  const double bc1 = 1 - std::pow(a.beta1, static_cast<double>(a.step));
  const double bc2 = 1 - std::pow(a.beta2, static_cast<double>(a.step));
  const adam_k<C> k{C(a.beta1), C(a.beta2), C(1 - a.beta1), C(1 - a.beta2), C(a.eps), C(a.weight_decay),
                    C(1 - a.lr * a.weight_decay), C(std::sqrt(bc2)), C(-(a.lr / bc1)),
                    !a.decoupled && a.weight_decay != 0, a.decoupled, a.maximize};
  for_blocks(n, [&](std::int64_t i0, std::int64_t i1) {
    if (a.amsgrad) adam_block<true>(k, p, g, m, v, vmax, i0, i1);
    else adam_block<false>(k, p, g, m, v, vmax, i0, i1);
  });
}

template <class T>
struct rmsprop_k {
  T alpha, rest, eps, wd, mom, step;
  bool decay, maximize;
};
template <bool Centered, bool Momentum, class T, class C = compute_t<T>>
void rmsprop_block(const rmsprop_k<C> k, T* __restrict p, const T* __restrict g, T* __restrict sq,
                   T* __restrict buf, T* __restrict avg, std::int64_t i0, std::int64_t i1) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const C x = p[i];
    C d = k.maximize ? -C(g[i]) : C(g[i]);
    d = k.decay ? d + k.wd * x : d;
    const C s = C(sq[i]) * k.alpha + k.rest * d * d;
    sq[i] = static_cast<T>(s);
    C root;
    if constexpr (Centered) {
      const C a = C(avg[i]) * k.alpha + k.rest * d;
      avg[i] = static_cast<T>(a);
      root = root_of(s + C(-1) * a * a);
    } else {
      root = root_of(s);
    }
    root = root + k.eps;
    if constexpr (Momentum) {
      const C b = C(buf[i]) * k.mom + d / root;
      buf[i] = static_cast<T>(b);
      p[i] = static_cast<T>(x + k.step * b);
    } else {
      p[i] = static_cast<T>(x + k.step * d / root);
    }
  }
}
template <class T, class C = compute_t<T>>
void rmsprop_update(T* p, const T* g, T* sq, T* buf, T* avg, std::int64_t n, const optim::RMSpropOptions& o) {
  const rmsprop_k<C> k{C(o.alpha()), C(1 - o.alpha()), C(o.eps()), C(o.weight_decay()), C(o.momentum()), C(-o.lr()),
                       o.weight_decay() != 0, o.maximize()};
  for_blocks(n, [&](std::int64_t i0, std::int64_t i1) {
    if (avg && buf) rmsprop_block<true, true>(k, p, g, sq, buf, avg, i0, i1);
    else if (avg) rmsprop_block<true, false>(k, p, g, sq, buf, avg, i0, i1);
    else if (buf) rmsprop_block<false, true>(k, p, g, sq, buf, avg, i0, i1);
    else rmsprop_block<false, false>(k, p, g, sq, buf, avg, i0, i1);
  });
}

// Calls update(options, state, parameter, p, g) for every parameter that has a gradient, its
// state's step counted, then writes the parameter back (p and g: contiguous elements of the
// parameter and its gradient).
template <class T, class O, class Update>
void each_param(std::vector<optim::ParamGroup<T, O>>& groups, std::vector<std::vector<param_state<T>>>& state,
                const Update& update) {
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const O& o = *groups[gi].options;
    for (std::size_t i = 0; i < groups[gi].params.size(); ++i) {
      const Tensor<T>& param = groups[gi].params[i];
      if (!param.has_grad()) continue;
      param_state<T>& s = state[gi][i];
      const dense<T> d(param, param.grad());
      ++s.step;
      update(o, s, param, d.p.data_ptr(), d.g.data_ptr());
      d.finish();
    }
  }
}

// One Adam or AdamW step over every parameter of the groups.
template <class T, class O>
void adam_groups(std::vector<optim::ParamGroup<T, O>>& groups, std::vector<std::vector<param_state<T>>>& state,
                 bool decoupled) {
  each_param(groups, state, [&](const O& o, param_state<T>& s, const Tensor<T>& param, T* p, const T* g) {
    T* m = state_tensor(s.a, param).data_ptr();
    T* v = state_tensor(s.b, param).data_ptr();
    T* vmax = o.amsgrad() ? state_tensor(s.c, param).data_ptr() : nullptr;
    const adam_step a{o.lr(), o.betas().first, o.betas().second, o.eps(), o.weight_decay(),
                      o.amsgrad(), o.maximize(), decoupled, s.step};
    adam_update(p, g, m, v, vmax, param.numel(), a);
  });
}
}  // namespace

void check_options(const optim::SGDOptions& o) {  // torch.optim.SGD tests `< 0` (a NaN passes)
  require(!(o.lr() < 0), "Invalid learning rate: " + python_repr(o.lr()));
  require(!(o.momentum() < 0), "Invalid momentum value: " + python_repr(o.momentum()));
  require(!(o.weight_decay() < 0), "Invalid weight_decay value: " + python_repr(o.weight_decay()));
  require(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
          "Nesterov momentum requires a momentum and zero dampening");
}
namespace {
template <class O>
void check_adam(const O& o) {
  require(o.lr() >= 0, "Invalid learning rate: " + python_repr(o.lr()));
  require(o.eps() >= 0, "Invalid epsilon value: " + python_repr(o.eps()));
  require(o.betas().first >= 0 && o.betas().first < 1, "Invalid beta parameter at index 0: " + python_repr(o.betas().first));
  require(o.betas().second >= 0 && o.betas().second < 1, "Invalid beta parameter at index 1: " + python_repr(o.betas().second));
  require(o.weight_decay() >= 0, "Invalid weight_decay value: " + python_repr(o.weight_decay()));
}
}  // namespace
void check_options(const optim::AdamOptions& o) { check_adam(o); }
void check_options(const optim::AdamWOptions& o) { check_adam(o); }
void check_options(const optim::RMSpropOptions& o) {
  require(o.lr() >= 0, "Invalid learning rate: " + python_repr(o.lr()));
  require(o.eps() >= 0, "Invalid epsilon value: " + python_repr(o.eps()));
  require(o.momentum() >= 0, "Invalid momentum value: " + python_repr(o.momentum()));
  require(o.weight_decay() >= 0, "Invalid weight_decay value: " + python_repr(o.weight_decay()));
  require(o.alpha() >= 0, "Invalid alpha value: " + python_repr(o.alpha()));
}
}  // namespace strata::detail

namespace strata::optim {
using detail::state_tensor;

template <element T>
SGD<T>::SGD(std::vector<ParamGroup<T, SGDOptions>> groups, const SGDOptions& o)
    : detail::optimizer_groups<T, SGDOptions, detail::param_state<T>>(std::move(groups), o) {}

template <element T>
void SGD<T>::step() {
  detail::each_param(this->groups_, this->state_,
                     [](const SGDOptions& o, detail::param_state<T>& s, const Tensor<T>& param, T* p, const T* g) {
                       const bool first = o.momentum() != 0 && !s.a;
                       T* buf = o.momentum() != 0 ? state_tensor(s.a, param).data_ptr() : nullptr;
                       detail::sgd_update(p, g, buf, param.numel(), o, first);
                     });
}

template <element T>
Adam<T>::Adam(std::vector<ParamGroup<T, AdamOptions>> groups, const AdamOptions& o)
    : detail::optimizer_groups<T, AdamOptions, detail::param_state<T>>(std::move(groups), o) {}
template <element T>
void Adam<T>::step() {
  detail::adam_groups(this->groups_, this->state_, false);
}

template <element T>
AdamW<T>::AdamW(std::vector<ParamGroup<T, AdamWOptions>> groups, const AdamWOptions& o)
    : detail::optimizer_groups<T, AdamWOptions, detail::param_state<T>>(std::move(groups), o) {}
template <element T>
void AdamW<T>::step() {
  detail::adam_groups(this->groups_, this->state_, true);
}

template <element T>
RMSprop<T>::RMSprop(std::vector<ParamGroup<T, RMSpropOptions>> groups, const RMSpropOptions& o)
    : detail::optimizer_groups<T, RMSpropOptions, detail::param_state<T>>(std::move(groups), o) {}
template <element T>
void RMSprop<T>::step() {
  detail::each_param(this->groups_, this->state_,
                     [](const RMSpropOptions& o, detail::param_state<T>& s, const Tensor<T>& param, T* p, const T* g) {
                       T* sq = state_tensor(s.a, param).data_ptr();
                       T* buf = o.momentum() > 0 ? state_tensor(s.b, param).data_ptr() : nullptr;
                       T* avg = o.centered() ? state_tensor(s.c, param).data_ptr() : nullptr;
                       detail::rmsprop_update(p, g, sq, buf, avg, param.numel(), o);
                     });
}

template class SGD<float>;
template class SGD<double>;
template class Adam<float>;
template class Adam<double>;
template class AdamW<float>;
template class AdamW<double>;
template class RMSprop<float>;
template class RMSprop<double>;
template class SGD<half>;
template class SGD<bfloat16>;
template class Adam<half>;
template class Adam<bfloat16>;
template class AdamW<half>;
template class AdamW<bfloat16>;
template class RMSprop<half>;
template class RMSprop<bfloat16>;

// ---- schedulers (PyTorch 1.13's chainable get_lr, stepped once at construction) ----
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(&optimizer) {
  for (std::size_t g = 0; g < optimizer.num_param_groups(); ++g) base_lrs_.push_back(optimizer.get_lr(g));
  last_lr_ = base_lrs_;
}
void LRScheduler::initial_step() {
  last_lr_ = get_lr();
  for (std::size_t g = 0; g < last_lr_.size(); ++g) optimizer_->set_lr(g, last_lr_[g]);
}
void LRScheduler::step() {
  ++last_epoch_;
  last_lr_ = get_lr();
  for (std::size_t g = 0; g < last_lr_.size(); ++g) optimizer_->set_lr(g, last_lr_[g]);
}

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw error("StepLR: step_size must be positive, got " + std::to_string(step_size));
  initial_step();
}
std::vector<double> StepLR::get_lr() const {
  std::vector<double> out;
  for (std::size_t g = 0; g < base_lrs_.size(); ++g)
    out.push_back(last_epoch_ == 0 || last_epoch_ % step_size_ != 0 ? lr(g) : lr(g) * gamma_);
  return out;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  initial_step();
}
std::vector<double> MultiStepLR::get_lr() const {
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  std::vector<double> out;
  for (std::size_t g = 0; g < base_lrs_.size(); ++g)
    out.push_back(hits == 0 ? lr(g) : lr(g) * std::pow(gamma_, static_cast<double>(hits)));
  return out;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}
std::vector<double> ExponentialLR::get_lr() const {
  std::vector<double> out;
  for (std::size_t g = 0; g < base_lrs_.size(); ++g) out.push_back(last_epoch_ == 0 ? lr(g) : lr(g) * gamma_);
  return out;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw error("CosineAnnealingLR: T_max must be positive, got " + std::to_string(T_max));
  initial_step();
}
std::vector<double> CosineAnnealingLR::get_lr() const {
  const double pi = std::numbers::pi, t = static_cast<double>(t_max_), e = static_cast<double>(last_epoch_);
  std::vector<double> out;
  for (std::size_t g = 0; g < base_lrs_.size(); ++g) {
    if (last_epoch_ == 0) out.push_back(lr(g));
    else if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0)
      out.push_back(lr(g) + (base_lrs_[g] - eta_min_) * (1 - std::cos(pi / t)) / 2);
    else
      out.push_back((1 + std::cos(pi * e / t)) / (1 + std::cos(pi * (e - 1) / t)) * (lr(g) - eta_min_) + eta_min_);
  }
  return out;
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(std::int64_t)> lr_lambda)
    : LambdaLR(optimizer, std::vector<std::function<double(std::int64_t)>>(optimizer.num_param_groups(), lr_lambda)) {}
LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<std::function<double(std::int64_t)>> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(std::move(lr_lambdas)) {
  if (lambdas_.size() != base_lrs_.size())
    throw error("Expected " + std::to_string(base_lrs_.size()) + " lr_lambdas, but got " +
                std::to_string(lambdas_.size()));
  initial_step();
}
std::vector<double> LambdaLR::get_lr() const {
  std::vector<double> out;
  for (std::size_t g = 0; g < base_lrs_.size(); ++g) out.push_back(base_lrs_[g] * lambdas_[g](last_epoch_));
  return out;
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, std::string_view mode, double factor, std::int64_t patience,
                                     double threshold, std::string_view threshold_mode, std::int64_t cooldown,
                                     double min_lr, double eps)
    : optimizer_(&optimizer), factor_(factor), threshold_(threshold), min_lr_(min_lr), eps_(eps),
      patience_(patience), cooldown_(cooldown) {
  if (factor >= 1.0) throw error("Factor should be < 1.0.");
  if (mode != "min" && mode != "max") throw error("mode " + std::string(mode) + " is unknown!");
  if (threshold_mode != "rel" && threshold_mode != "abs")
    throw error("threshold mode " + std::string(threshold_mode) + " is unknown!");
  max_ = mode == "max";
  rel_ = threshold_mode == "rel";
  best_ = max_ ? -HUGE_VAL : HUGE_VAL;
}
bool ReduceLROnPlateau::is_better(double a) const {
  if (rel_) return max_ ? a > best_ * (threshold_ + 1) : a < best_ * (1 - threshold_);
  return max_ ? a > best_ + threshold_ : a < best_ - threshold_;
}
void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > patience_) {
    for (std::size_t g = 0; g < optimizer_->num_param_groups(); ++g) {
      const double old_lr = optimizer_->get_lr(g), new_lr = std::max(old_lr * factor_, min_lr_);
      if (old_lr - new_lr > eps_) optimizer_->set_lr(g, new_lr);
    }
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
}
std::vector<double> ReduceLROnPlateau::get_last_lr() const {
  std::vector<double> out;
  for (std::size_t g = 0; g < optimizer_->num_param_groups(); ++g) out.push_back(optimizer_->get_lr(g));
  return out;
}
}  // namespace strata::optim
