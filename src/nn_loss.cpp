// SPDX-License-Identifier: MIT
// strata.nn's dense layers, losses, dropout and embedding. Losses whose gradient is the
// derivative of their formula are fused expressions (recorded by the expression engine);
// those whose gradient PyTorch defines differently at the edges (binary_cross_entropy's
// clamped logs, kl_div's xlogy) or that index by class (nll_loss, embedding) compute their
// values without the graph and record their own backward, written as PyTorch 1.13 writes it.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "python_repr.hpp"
module strata.nn;
import strata.graph;
import strata.expr;
import strata.linalg;
import strata.loop;

namespace strata::detail {
namespace {
enum class reduction { none, mean, sum, batchmean };

reduction reduction_of(const std::string& r, bool batchmean = false) {
  if (r == "none") return reduction::none;
  if (r == "mean") return reduction::mean;
  if (r == "sum") return reduction::sum;
  if (batchmean && r == "batchmean") return reduction::batchmean;
  throw error(r + " is not a valid value for reduction");
}

// An element-wise loss expression combined as r says (recorded by the expression engine).
template <class T, class E>
Tensor<T> reduce_expr(const E& e, reduction r) {
  if (r == reduction::none) return Tensor<T>(e);
  if (r == reduction::sum) return Tensor<T>(strata::sum(e));
  return Tensor<T>(strata::mean(e));
}

// A loss whose element values l were computed without the graph: l combined as r says, with
// a recorded backward in which grad_of(gl, i) is input i's gradient given the gradient gl of
// l's elements (a 0-d tensor, broadcast, unless r is none); summed down to input i's sizes.
template <class T>
Tensor<T> reduce_recorded(const Tensor<T>& l, reduction r, std::vector<Tensor<T>> inputs,
                          std::function<Tensor<T>(const Tensor<T>& gl, std::size_t i)> grad_of) {
  const double n = static_cast<double>(l.numel());
  const double divisor = r == reduction::mean        ? n
                         : r == reduction::batchmean ? (l.dim() == 0 ? 1.0 : static_cast<double>(l.size(0)))
                                                     : 1.0;
  Tensor<T> out;
  {
    const grad_mode_guard off(false);
    if (r == reduction::none) out = l;
    else if (r == reduction::mean) out = Tensor<T>(strata::mean(l));
    else if (r == reduction::sum) out = Tensor<T>(strata::sum(l));
    else out = Tensor<T>(strata::sum(l) / static_cast<T>(divisor));
  }
  if (!grad_enabled()) return out;
  std::vector<dim_vector> sizes;
  for (const Tensor<T>& t : inputs) sizes.push_back(t.sizes().vec());
  record_function<T>(out, inputs,
                     [r, divisor, sizes = std::move(sizes), grad_of = std::move(grad_of)](const Tensor<T>& g, std::size_t i) {
                       const Tensor<T> gl = r == reduction::none || divisor == 1.0 ? g : Tensor<T>(g / static_cast<T>(divisor));
                       Tensor<T> gi = grad_of(gl, i);
                       if (gi.sizes() != int_list(sizes[i])) gi = Tensor<T>(strata::sum_to(gi, sizes[i]));
                       return gi;
                     },
                     inputs);
  return out;
}

// A 0-d one: the weight of a loss given none.
template <class T>
Tensor<T> weight_or_one(const Tensor<T>* w) {
  return w ? *w : full<T>({}, T(1));
}

}  // namespace

template <element T>
Tensor<T> linear(const Tensor<T>& x, const Tensor<T>& w, const std::optional<Tensor<T>>& b) {
  Tensor<T> y = strata::matmul(x, w.t());
  if (!b) return y;
  return Tensor<T>(y + *b);
}

template <element T>
Tensor<T> bilinear(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& w, const std::optional<Tensor<T>>& b) {
  if (w.dim() != 3) throw shape_error("bilinear(): weight must be three-dimensional but got " + std::to_string(w.dim()));
  const dim_vector s1 = x1.sizes().vec(), s2 = x2.sizes().vec();
  if (s1.size() != s2.size() || s1.empty() || !std::equal(s1.begin(), s1.end() - 1, s2.begin()))
    throw shape_error("bilinear(): input batch dimensions do not match: got " + to_string(x1.sizes()) + " and " +
                      to_string(x2.sizes()));
  if (x1.size(-1) != w.size(1))
    throw shape_error("bilinear(): input1 size does not match weight size: got " + std::to_string(x1.size(-1)) +
                      " but expected " + std::to_string(w.size(1)));
  if (x2.size(-1) != w.size(2))
    throw shape_error("bilinear(): input2 size does not match weight size: got " + std::to_string(x2.size(-1)) +
                      " but expected " + std::to_string(w.size(2)));
  Tensor<T> y = strata::einsum("...i,oij,...j->...o", x1, w, x2);
  if (!b) return y;
  return Tensor<T>(y + *b);
}

template <element T>
Tensor<T> mse_loss(const Tensor<T>& x, const Tensor<T>& y, const nn::functional::MSELossFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  return reduce_expr<T>((x - y) * (x - y), r);
}

template <element T>
Tensor<T> l1_loss(const Tensor<T>& x, const Tensor<T>& y, const nn::functional::L1LossFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  return reduce_expr<T>(strata::abs(x - y), r);
}

template <element T>
Tensor<T> smooth_l1_loss(const Tensor<T>& x, const Tensor<T>& y, const nn::functional::SmoothL1LossFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  const double beta = o.beta();
  if (beta < 0) throw error("smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return reduce_expr<T>(strata::abs(x - y), r);
  const auto d = x - y;
  const auto z = strata::abs(d);
  const T b = static_cast<T>(beta);
  return reduce_expr<T>(strata::where(z < b, T(0.5) * d * d / b, z - T(0.5) * b), r);
}

template <element T>
Tensor<T> huber_loss(const Tensor<T>& x, const Tensor<T>& y, const nn::functional::HuberLossFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  if (!(o.delta() > 0)) throw error("huber_loss does not support non-positive values for delta.");
  const auto d = x - y;
  const auto z = strata::abs(d);
  const T delta = static_cast<T>(o.delta());
  return reduce_expr<T>(strata::where(z < delta, T(0.5) * d * d, delta * (z - T(0.5) * delta)), r);
}

template <element T>
Tensor<T> binary_cross_entropy(const Tensor<T>& x, const Tensor<T>& y,
                               const nn::functional::BinaryCrossEntropyFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  if (x.sizes() != y.sizes())
    throw error("Using a target size (" + torch_size(y.sizes().vec()) + ") that is different to the input size (" +
                torch_size(x.sizes().vec()) + ") is deprecated. Please ensure they have the same size.");
  {
    const grad_mode_guard off(false);  // NaN fails too, as in PyTorch
    if (x.numel() > 0 && !(Tensor<T>(strata::amin(x)).item() >= 0 && Tensor<T>(strata::amax(x)).item() <= 1))
      throw error("all elements of input should be between 0 and 1");
  }
  const Tensor<T> w = weight_or_one(o.template weight_as<T>());
  Tensor<T> l;
  {
    const grad_mode_guard off(false);
    // ATen's CPU kernel: (y - 1) max(log(1 - x), -100) - y max(log(x), -100), times the weight.
    l = Tensor<T>(((y - T(1)) * strata::maximum(strata::log1p(-x), T(-100)) -
                   y * strata::maximum(strata::log(x), T(-100))) * w);
  }
  return reduce_recorded<T>(l, r, {x, y}, [x = x.detach(), y = y.detach(), w](const Tensor<T>& g, std::size_t i) {
    // ATen's EPSILON is the float 1e-12.
    if (i == 0) return Tensor<T>(g * w * (x - y) / strata::maximum((T(1) - x) * x, static_cast<T>(1e-12f)));
    return Tensor<T>(g * w * (strata::log1p(-x) - strata::log(x)));  // -logit(x), unclamped as ATen's
  });
}

template <element T>
Tensor<T> binary_cross_entropy_with_logits(const Tensor<T>& x, const Tensor<T>& y,
                                           const nn::functional::BinaryCrossEntropyWithLogitsFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  if (x.sizes() != y.sizes())
    throw error("Target size (" + torch_size(y.sizes().vec()) + ") must be the same as input size (" +
                torch_size(x.sizes().vec()) + ")");
  const Tensor<T> w = weight_or_one(o.template weight_as<T>());
  // ATen's formula: (1 - y) x + lw (log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0), with
  // lw = 1 + (pos_weight - 1) y.
  const auto m = strata::relu(-x);
  const auto softplus_neg = strata::log(strata::exp(-m) + strata::exp(-x - m)) + m;
  if (const Tensor<T>* pw = o.template pos_weight_as<T>())
    return reduce_expr<T>(((T(1) - y) * x + ((*pw - T(1)) * y + T(1)) * softplus_neg) * w, r);
  return reduce_expr<T>(((T(1) - y) * x + softplus_neg) * w, r);
}

template <element T>
Tensor<T> kl_div(const Tensor<T>& x, const Tensor<T>& y, const nn::functional::KLDivFuncOptions& o) {
  const reduction r = reduction_of(o.reduction(), true);
  Tensor<T> l;
  {
    const grad_mode_guard off(false);
    if (o.log_target()) l = Tensor<T>(strata::exp(y) * (y - x));
    else l = Tensor<T>(strata::where(y == T(0), T(0), y * strata::log(y)) - y * x);
  }
  if (o.log_target())
    return reduce_recorded<T>(l, r, {x, y}, [x = x.detach(), y = y.detach()](const Tensor<T>& g, std::size_t i) {
      if (i == 0) return Tensor<T>(-g * strata::exp(y));
      return Tensor<T>(g * strata::exp(y) * (y - x + T(1)));
    });
  // The gradient of xlogy(y, y) - y x as PyTorch's composite gives it: NaN where y = 0.
  return reduce_recorded<T>(l, r, {x, y}, [x = x.detach(), y = y.detach()](const Tensor<T>& g, std::size_t i) {
    if (i == 0) return Tensor<T>(-g * y);
    return Tensor<T>(g * (strata::where(y == T(0), T(0), strata::log(y)) + y / y - x));
  });
}

namespace {
// nll_loss over log-probabilities x [N, C, S...] (or [C] with a 0-d target): the loss (its
// reduced value, or one value per target) and the sum of the counted targets' weights.
template <class T>
struct nll_result {
  Tensor<T> loss;
  double total_weight = 0;
};

template <class T>
nll_result<T> nll_forward(const Tensor<T>& x, const Tensor<std::int64_t>& target, const Tensor<T>* weight,
                          std::int64_t ignore_index, reduction r) {
  if (x.dim() < 1) throw shape_error("Expected 1 or more dimensions (got " + std::to_string(x.dim()) + ")");
  if (x.dim() != 1 && (target.dim() == 0 || x.size(0) != target.size(0)))
    throw shape_error("Expected input batch_size (" + std::to_string(x.size(0)) + ") to match target batch_size (" +
                      std::to_string(target.dim() == 0 ? 1 : target.size(0)) + ").");
  const std::int64_t C = x.dim() == 1 ? x.size(0) : x.size(1);
  dim_vector out_sizes;
  if (x.dim() == 1) {
    if (target.dim() != 0) throw shape_error("1D target tensor expected, multi-target not supported");
  } else {
    out_sizes.push_back(x.size(0));
    for (std::int64_t d = 2; d < x.dim(); ++d) out_sizes.push_back(x.size(d));
    if (target.sizes() != int_list(out_sizes)) {
      if (x.dim() == 2) throw shape_error("0D or 1D target tensor expected, multi-target not supported");
      throw shape_error("Expected target size " + to_string(out_sizes) + ", got " + to_string(target.sizes()));
    }
  }
  if (weight && weight->numel() != C)
    throw shape_error("weight tensor should be defined either for all " + std::to_string(C) +
                      " classes or no classes but got weight tensor of shape: " + to_string(weight->sizes()));
  const std::int64_t N = x.dim() == 1 ? 1 : x.size(0);
  const std::int64_t S = x.dim() <= 2 ? 1 : x.numel() / std::max<std::int64_t>(1, N * C);
  const Tensor<T> xc = x.contiguous();
  const Tensor<std::int64_t> tc = target.contiguous();
  const Tensor<T> wc = weight ? weight->contiguous() : Tensor<T>();
  const T* xp = xc.data_ptr();
  const std::int64_t* tp = tc.data_ptr();
  const T* wp = weight ? wc.data_ptr() : nullptr;
  Tensor<T> per = r == reduction::none ? empty<T>(out_sizes) : Tensor<T>();
  T* pp = r == reduction::none ? per.data_ptr() : nullptr;
  double total = 0, total_weight = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t s = 0; s < S; ++s) {
      const std::int64_t t = tp[n * S + s];
      double value = 0;
      if (t != ignore_index) {
        if (t < 0 || t >= C) throw index_error("Target " + std::to_string(t) + " is out of bounds.");
        const double wt = wp ? static_cast<double>(wp[t]) : 1.0;
        value = -wt * static_cast<double>(xp[(n * C + t) * S + s]);
        total += value;
        total_weight += wt;
      }
      if (pp) pp[n * S + s] = static_cast<T>(value);
    }
  if (r == reduction::none) return {per, total_weight};
  return {full<T>({}, static_cast<T>(r == reduction::mean ? total / total_weight : total)), total_weight};
}

// Records nll_loss's backward: -w[t] (times the output's gradient) at each target's class.
template <class T>
void record_nll(Tensor<T>& out, const Tensor<T>& x, const Tensor<std::int64_t>& target, const Tensor<T>* weight,
                std::int64_t ignore_index, reduction r, double total_weight) {
  const Tensor<T> inputs[1] = {x};
  record_function<T>(out, inputs,
                     [sizes = x.sizes().vec(), t = target.clone(), w = weight ? weight->contiguous() : Tensor<T>(),
                      has_w = weight != nullptr, ignore_index, r, total_weight](const Tensor<T>& g, std::size_t) {
                       const std::int64_t C = sizes.size() == 1 ? sizes[0] : sizes[1];
                       const std::int64_t N = sizes.size() == 1 ? 1 : sizes[0];
                       const std::int64_t S = t.numel() / std::max<std::int64_t>(1, N);
                       Tensor<T> gx = zeros<T>(sizes);
                       const Tensor<T> gc = g.contiguous();
                       T* out = gx.data_ptr();
                       const T* gp = gc.data_ptr();
                       const std::int64_t* tp = t.data_ptr();
                       const T* wp = has_w ? w.data_ptr() : nullptr;
                       const double scale = r == reduction::mean ? 1.0 / total_weight : 1.0;
                       for (std::int64_t n = 0; n < N; ++n)
                         for (std::int64_t s = 0; s < S; ++s) {
                           const std::int64_t c = tp[n * S + s];
                           if (c == ignore_index) continue;
                           const double gv = static_cast<double>(r == reduction::none ? gp[n * S + s] : gp[0]);
                           const double wt = wp ? static_cast<double>(wp[c]) : 1.0;
                           out[(n * C + c) * S + s] = static_cast<T>(-wt * gv * scale);
                         }
                       return gx;
                     });
}
}  // namespace

template <element T>
Tensor<T> nll_loss(const Tensor<T>& x, const Tensor<std::int64_t>& target, const nn::functional::NLLLossFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  const Tensor<T>* w = o.template weight_as<T>();
  nll_result<T> res = nll_forward(x, target, w, o.ignore_index(), r);
  if (grad_enabled() && x.requires_grad()) record_nll(res.loss, x, target, w, o.ignore_index(), r, res.total_weight);
  return res.loss;
}

namespace {
void check_label_smoothing(double e) {
  if (!(e >= 0 && e <= 1))
    throw error("label_smoothing must be between 0.0 and 1.0. Got: " + python_repr(e));
}
// The class weights viewed to broadcast along x's class dim.
template <class T>
Tensor<T> class_view(const Tensor<T>& w, std::int64_t dims, std::int64_t class_dim) {
  dim_vector shape(static_cast<std::size_t>(dims), 1);
  shape[static_cast<std::size_t>(class_dim)] = w.numel();
  return w.reshape(shape);
}
}  // namespace

template <element T>
Tensor<T> cross_entropy(const Tensor<T>& x, const Tensor<std::int64_t>& target,
                        const nn::functional::CrossEntropyFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  const double eps = o.label_smoothing();
  check_label_smoothing(eps);
  const Tensor<T>* w = o.template weight_as<T>();
  if (x.dim() < 1) throw shape_error("Expected 1 or more dimensions (got 0)");
  const std::int64_t class_dim = x.dim() == 1 ? 0 : 1;
  const std::int64_t C = x.size(class_dim);
  const Tensor<T> logp = strata::log_softmax(x, class_dim);
  nll_result<T> res = nll_forward(logp, target, w, o.ignore_index(), r);
  if (grad_enabled() && logp.requires_grad())
    record_nll(res.loss, logp, target, w, o.ignore_index(), r, res.total_weight);
  if (eps == 0) return res.loss;
  // PyTorch's label smoothing: (1 - eps) nll + eps / C * (the weighted sum of -log p over the
  // classes, zero at ignored targets, combined as the nll is).
  const Tensor<T> wv = w ? class_view(*w, x.dim(), class_dim) : full<T>({}, T(1));
  const Tensor<T> smooth = strata::where(target == o.ignore_index(), T(0), -strata::sum(logp * wv, {class_dim}));
  Tensor<T> ret = r == reduction::none ? smooth
                  : r == reduction::sum ? Tensor<T>(strata::sum(smooth))
                                        : Tensor<T>(strata::sum(smooth) / static_cast<T>(res.total_weight));
  return Tensor<T>(T(1 - eps) * res.loss + ret * static_cast<T>(eps / static_cast<double>(C)));
}

template <element T>
Tensor<T> cross_entropy_probs(const Tensor<T>& x, const Tensor<T>& target, const nn::functional::CrossEntropyFuncOptions& o) {
  const reduction r = reduction_of(o.reduction());
  const double eps = o.label_smoothing();
  check_label_smoothing(eps);
  if (x.dim() < 1) throw shape_error("Expected 1 or more dimensions (got 0)");
  // PyTorch takes a target of other sizes for class indices, and refuses it as nll_loss does.
  if (x.sizes() != target.sizes()) {
    if (x.dim() <= 2) throw shape_error("0D or 1D target tensor expected, multi-target not supported");
    throw shape_error("Expected target size " + to_string(x.sizes()) + ", got " + to_string(target.sizes()));
  }
  if (o.ignore_index() != -100) throw error("ignore_index is not supported for floating point target");
  const std::int64_t class_dim = x.dim() == 1 ? 0 : 1;
  const std::int64_t C = x.size(class_dim);
  const Tensor<T>* w = o.template weight_as<T>();
  if (w && w->numel() != C)
    throw shape_error("weight tensor should be defined either for all " + std::to_string(C) +
                      " classes or no classes but got weight tensor of shape: " + to_string(w->sizes()));
  const Tensor<T> logp = strata::log_softmax(x, class_dim);
  const Tensor<T> wv = w ? class_view(*w, x.dim(), class_dim) : full<T>({}, T(1));
  const Tensor<T> q = eps > 0 ? Tensor<T>(target * T(1 - eps) + static_cast<T>(eps / static_cast<double>(C))) : target;
  if (r == reduction::none) return Tensor<T>(-strata::sum(logp * q * wv, {class_dim}));
  if (r == reduction::sum) return Tensor<T>(-strata::sum(logp * q * wv));
  return Tensor<T>(-strata::sum(logp * q * wv) / static_cast<T>(static_cast<double>(x.numel() / C)));
}

template <element T>
Tensor<T> dropout(const Tensor<T>& x, const nn::functional::DropoutFuncOptions& o, generator& gen) {
  const double p = o.p();
  if (!(p >= 0 && p <= 1)) throw error("dropout probability has to be between 0 and 1, but got " + python_repr(p));
  if (!o.training() || p == 0 || x.numel() == 0) return x;
  if (p == 1) return Tensor<T>(x * T(0));
  // ATen's order: a 0/1 mask, divided by 1 - p, multiplies the input. Half's and bfloat16's
  // masks are drawn in float (float's mask for the same generator state), the scale rounded once.
  using C = compute_t<T>;
  const Tensor<T> scale = [&] {
    if constexpr (std::is_same_v<C, T>) {
      return Tensor<T>(strata::bernoulli(x.detach(), 1 - p, gen) / static_cast<T>(1 - p));
    } else {
      const Tensor<C> noise = strata::bernoulli(empty<C>(x.sizes()), 1 - p, gen);
      return Tensor<C>(noise / static_cast<C>(1 - p)).template to<T>();
    }
  }();
  return Tensor<T>(x * scale);
}

// torch.embedding_renorm_: each distinct row the indices name whose norm_type-norm exceeds
// max_norm is scaled in place by max_norm / (norm + 1e-7), outside autograd (ATen's order).
template <element T>
void renorm_rows(const Tensor<T>& w, std::vector<std::int64_t> rows, double max_norm, double norm_type) {
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const Tensor<T> wd = w.detach();
  wd.storage().check_writable();
  T* base = wd.data_ptr();
  const std::int64_t D = w.size(1), s0 = w.stride(0), s1 = w.stride(1);
  bool changed = false;
  for (const std::int64_t r : rows) {
    T* row = base + r * s0;
    double norm = 0;
    for (std::int64_t j = 0; j < D; ++j) {
      const double a = std::abs(static_cast<double>(row[j * s1]));
      if (norm_type == 0) norm += a != 0;
      else if (std::isinf(norm_type)) norm = j == 0 ? a : norm_type > 0 ? std::max(norm, a) : std::min(norm, a);
      else norm += std::pow(a, norm_type);
    }
    if (norm_type != 0 && !std::isinf(norm_type)) norm = std::pow(norm, 1 / norm_type);
    norm = static_cast<double>(static_cast<T>(static_cast<compute_t<T>>(norm)));  // ATen: row.norm(p) is a T, read as a double
    if (!(norm > max_norm)) continue;
    const T scale = static_cast<T>(static_cast<compute_t<T>>(max_norm / (norm + 1e-7)));  // row *= scale, in T
    for (std::int64_t j = 0; j < D; ++j) row[j * s1] = static_cast<T>(row[j * s1] * scale);
    changed = true;
  }
  if (changed) wd.storage().bump_version();
}

template <element T>
Tensor<T> embedding(const Tensor<std::int64_t>& index, const Tensor<T>& w, const nn::functional::EmbeddingFuncOptions& o) {
  if (w.dim() != 2) throw shape_error("'weight' must be 2-D");
  const std::int64_t V = w.size(0), D = w.size(1);
  std::int64_t pad = -1;
  if (o.padding_idx()) {
    pad = *o.padding_idx();
    if (pad >= V || pad < -V) throw error("Padding_idx must be within num_embeddings");
    if (pad < 0) pad += V;
  }
  const Tensor<std::int64_t> ic = index.clone();  // the backward's own: the caller may write index
  const std::int64_t n = ic.numel();
  const std::int64_t* ip = ic.data_ptr();
  for (std::int64_t k = 0; k < n; ++k)
    if (ip[k] < 0 || ip[k] >= V) throw index_error("index out of range in self");
  if (o.max_norm()) renorm_rows(w, std::vector<std::int64_t>(ip, ip + n), *o.max_norm(), o.norm_type());
  const Tensor<T> wc = w.contiguous();
  dim_vector sizes = index.sizes().vec();
  sizes.push_back(D);
  Tensor<T> out = empty<T>(sizes);
  for (std::int64_t k = 0; k < n; ++k)
    std::copy_n(wc.data_ptr() + ip[k] * D, D, out.data_ptr() + k * D);
  const Tensor<T> inputs[1] = {w};
  const bool by_freq = o.scale_grad_by_freq();
  record_function<T>(out, inputs, [ic, V, D, pad, by_freq](const Tensor<T>& g, std::size_t) {
    Tensor<T> gw = zeros<T>({V, D});
    const Tensor<T> gc = g.contiguous();
    const std::int64_t* ip = ic.data_ptr();
    const std::int64_t n = ic.numel();
    std::vector<std::int64_t> counts(by_freq ? static_cast<std::size_t>(V) : 0);
    for (std::int64_t k = 0; by_freq && k < n; ++k) ++counts[static_cast<std::size_t>(ip[k])];
    for (std::int64_t k = 0; k < n; ++k) {
      if (ip[k] == pad) continue;
      T* row = gw.data_ptr() + ip[k] * D;
      const T* from = gc.data_ptr() + k * D;
      if (by_freq) {  // ATen: row += (1 / count) * grad
        const T scale = static_cast<T>(compute_t<T>(1) / static_cast<compute_t<T>>(counts[static_cast<std::size_t>(ip[k])]));
        for (std::int64_t j = 0; j < D; ++j) row[j] = static_cast<T>(row[j] + scale * from[j]);
      } else {
        for (std::int64_t j = 0; j < D; ++j) row[j] = static_cast<T>(row[j] + from[j]);
      }
    }
    return gw;
  });
  return out;
}

#define STRATA_NN_DEFINE(T)                                                                                     \
  template Tensor<T> linear<T>(const Tensor<T>&, const Tensor<T>&, const std::optional<Tensor<T>>&);            \
  template Tensor<T> bilinear<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,                         \
                                 const std::optional<Tensor<T>>&);                                             \
  template Tensor<T> mse_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::MSELossFuncOptions&);             \
  template Tensor<T> l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::L1LossFuncOptions&);               \
  template Tensor<T> smooth_l1_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::SmoothL1LossFuncOptions&);   \
  template Tensor<T> huber_loss<T>(const Tensor<T>&, const Tensor<T>&, const F::HuberLossFuncOptions&);         \
  template Tensor<T> binary_cross_entropy<T>(const Tensor<T>&, const Tensor<T>&,                              \
                                             const F::BinaryCrossEntropyFuncOptions&);                         \
  template Tensor<T> binary_cross_entropy_with_logits<T>(const Tensor<T>&, const Tensor<T>&,                  \
                                                         const F::BinaryCrossEntropyWithLogitsFuncOptions&);   \
  template Tensor<T> kl_div<T>(const Tensor<T>&, const Tensor<T>&, const F::KLDivFuncOptions&);                 \
  template Tensor<T> nll_loss<T>(const Tensor<T>&, const Tensor<std::int64_t>&, const F::NLLLossFuncOptions&);  \
  template Tensor<T> cross_entropy<T>(const Tensor<T>&, const Tensor<std::int64_t>&,                          \
                                      const F::CrossEntropyFuncOptions&);                                      \
  template Tensor<T> cross_entropy_probs<T>(const Tensor<T>&, const Tensor<T>&, const F::CrossEntropyFuncOptions&); \
  template Tensor<T> dropout<T>(const Tensor<T>&, const F::DropoutFuncOptions&, generator&);                  \
  template Tensor<T> embedding<T>(const Tensor<std::int64_t>&, const Tensor<T>&, const F::EmbeddingFuncOptions&);
STRATA_NN_DEFINE(float)
STRATA_NN_DEFINE(double)
#undef STRATA_NN_DEFINE
// half and bfloat16: dropout and embedding in the type itself (the other functions compute in
// float: src/nn_lowp.cpp).
#define STRATA_NN_LOWP_DEFINE(T)                                                                                \
  template Tensor<T> dropout<T>(const Tensor<T>&, const F::DropoutFuncOptions&, generator&);                  \
  template Tensor<T> embedding<T>(const Tensor<std::int64_t>&, const Tensor<T>&, const F::EmbeddingFuncOptions&);
STRATA_NN_LOWP_DEFINE(half)
STRATA_NN_LOWP_DEFINE(bfloat16)
#undef STRATA_NN_LOWP_DEFINE
}  // namespace strata::detail
