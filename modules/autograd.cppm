// SPDX-License-Identifier: MIT
// Autograd's public face: grad mode and its guards, the functional grad() and zero_grad().
// Recording and the engine are strata.graph (internal); the derivatives are strata.tensor's
// (views, copies) and strata.expr's (expressions, reductions).
export module strata.autograd;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.loop;
import strata.graph;
import strata.tensor;

export namespace strata {
/// True when evaluations and views record the graph for backward (per thread; on by default).
inline bool is_grad_enabled() noexcept { return detail::grad_enabled(); }
/// Turns recording on or off for the calling thread (torch.set_grad_enabled).
inline void set_grad_enabled(bool enabled) noexcept { detail::set_grad_mode(enabled); }

/// Nothing is recorded while one is alive (PyTorch's `with torch.no_grad():`), on this thread.
class no_grad {
 public:
  no_grad() : guard_(false) {}

 private:
  detail::grad_mode_guard guard_;
};

/// Recording is on while one is alive, also inside a no_grad scope (torch.enable_grad()).
class enable_grad {
 public:
  enable_grad() : guard_(true) {}

 private:
  detail::grad_mode_guard guard_;
};
}  // namespace strata

export namespace strata {
/// The gradients of output with respect to inputs, returned instead of added to their
/// grad() (torch.autograd.grad); grad_output defaults to 1 for a one-element output.
template <element T, element U>
std::vector<Tensor<U>> grad(const Tensor<T>& output, const std::vector<Tensor<U>>& inputs,
                            const std::optional<std::type_identity_t<Tensor<T>>>& grad_output = std::nullopt,
                            bool retain_graph = false) {
  using out_access = detail::autograd_access<Tensor<T>>;
  using in_access = detail::autograd_access<Tensor<U>>;
  if (!output.requires_grad()) detail::throw_no_grad_fn();
  detail::backward_context ctx(true);
  for (const Tensor<U>& in : inputs) {
    if (!in.requires_grad()) throw error("One of the differentiated Tensors does not require grad");
    ctx.capture(in_access::meta(in).get());
  }
  out_access::run_backward(output, grad_output, retain_graph, ctx);
  std::vector<Tensor<U>> result;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const detail::grad_buffer& b = ctx.captured(k);
    if (!b.defined)
      throw error("One of the differentiated Tensors appears to not have been used in the graph. Set "
                  "allow_unused=True if this is the desired behavior.");
    result.push_back(in_access::tensor(b));
  }
  return result;
}

/// grad() of an expression's result (evaluated, recording, first).
template <detail::lazy_expression E, element U>
std::vector<Tensor<U>> grad(const E& output, const std::vector<Tensor<U>>& inputs,
                            const std::optional<Tensor<typename E::value_type>>& grad_output = std::nullopt,
                            bool retain_graph = false) {
  return grad(output.eval(), inputs, grad_output, retain_graph);
}

/// Sets the gradient of each tensor that has one to zero (as optimizer.zero_grad()).
template <element... Ts>
void zero_grad(const Tensor<Ts>&... tensors) {
  ((tensors.has_grad() ? void(tensors.grad().fill_(detail::convert<Ts>(0))) : void()), ...);
}
/// Sets the gradient of each tensor of a list that has one to zero (a model's parameters).
template <element T>
void zero_grad(const std::vector<Tensor<T>>& tensors) {
  for (const Tensor<T>& t : tensors) zero_grad(t);
}
}  // namespace strata
