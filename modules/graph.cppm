// SPDX-License-Identifier: MIT
// The autograd graph with element types erased (internal, like strata.loop): what a tensor
// that requires grad carries (autograd_meta), the nodes that evaluating or viewing it
// records (grad_node), grad mode, and the engine that runs nodes in reverse topological
// order (src/graph.cpp). The typed halves live with what they differentiate: views and
// copies in strata.tensor, expressions and reductions in strata.expr, where each derivative
// is built from the node types at compile time. The public face is strata.autograd.
module;
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>
export module strata.graph;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.loop;

export namespace strata::detail {
/// True when evaluations and views record the graph (per thread; on by default).
bool grad_enabled() noexcept;
/// Turns recording on or off for the calling thread.
void set_grad_mode(bool enabled) noexcept;
/// Grad mode off for its lifetime (the engine's own evaluations are not recorded).
class grad_mode_guard {
 public:
  explicit grad_mode_guard(bool enabled) : previous_(grad_enabled()) { set_grad_mode(enabled); }
  ~grad_mode_guard() { set_grad_mode(previous_); }
  grad_mode_guard(const grad_mode_guard&) = delete;
  grad_mode_guard& operator=(const grad_mode_guard&) = delete;

 private:
  bool previous_;
};
/// Reaches a tensor's autograd metadata (specialized for Tensor<T> in strata.tensor).
template <class T>
struct autograd_access;
/// A gradient whose element type its owner knows: the storage and view of a Tensor<T>.
struct grad_buffer {
  storage data;
  layout view;
  bool defined = false;
  bool owned = false;  ///< autograd made these elements (added into in place; else copied first)
  void reset() noexcept { *this = grad_buffer{}; }
};

struct grad_node;

/// What a tensor handle that takes part in autograd carries (shared by copies of the handle).
struct autograd_meta {
  bool requires_grad = false;
  bool view_of_leaf = false;          ///< a view of a leaf that requires grad
  grad_buffer grad;                   ///< a leaf's accumulated gradient
  std::shared_ptr<grad_node> grad_fn;  ///< the node that computed this tensor (none: a leaf)
  autograd_meta() = default;
  autograd_meta(const autograd_meta&) = delete;
  autograd_meta& operator=(const autograd_meta&) = delete;
  /// Hands grad_fn to an iterative release, so that dropping a long chain of nodes does not
  /// recurse once per node.
  ~autograd_meta();
};

class backward_context;

/// One recorded evaluation or view: it turns the gradient of its output (pending) into
/// gradients of its inputs.
struct grad_node {
  std::vector<std::shared_ptr<autograd_meta>> inputs;  ///< the inputs that need a gradient
  grad_buffer pending;                                  ///< the output's gradient so far
  bool released = false;                                ///< saved values freed by a backward
  grad_node() = default;
  grad_node(const grad_node&) = delete;
  grad_node& operator=(const grad_node&) = delete;
  virtual ~grad_node() = default;
  /// Sends the gradients of the inputs (from pending) to ctx.slot(input).
  virtual void apply(backward_context& ctx) = 0;
  /// Frees what the node saved (the recorded expression, saved outputs).
  virtual void release() noexcept = 0;
};

/// Where gradients go during one backward or grad() call.
class backward_context {
 public:
  /// backward(): leaves accumulate into their .grad(); grad(): only into captures.
  explicit backward_context(bool capture_only) : capture_only_(capture_only) {}
  /// The buffer a gradient for the tensor with meta m accumulates into (nullptr: nowhere).
  grad_buffer* slot(autograd_meta& m);
  /// grad(): records that m's gradient is wanted (index k of the result).
  void capture(const autograd_meta* m) { captures_.push_back({m, {}}); }
  /// grad(): the gradient captured for the k-th captured tensor.
  grad_buffer& captured(std::size_t k) { return captures_[k].second; }
  /// Copies a node's output gradient to the captures that ask for it (grad() of a non-leaf).
  void capture_pending(const grad_node& n);

 private:
  bool capture_only_;
  std::vector<std::pair<const autograd_meta*, grad_buffer>> captures_;
};

/// Runs every node reachable from the roots (their pending gradients already seeded) in
/// reverse topological order, then frees the saved values unless retain_graph.
void run_backward(std::span<const std::shared_ptr<autograd_meta>> roots, bool retain_graph, backward_context& ctx);

/// Throws PyTorch's error for backward() on a tensor that does not require grad.
[[noreturn]] void throw_no_grad_fn();
/// Throws PyTorch's error for a saved tensor modified in place after it was recorded.
[[noreturn]] void throw_version_error(dtype t, int_list sizes, std::uint64_t now, std::uint64_t expected);
/// Throws when a tensor that requires grad is written in place while grad mode is on.
void check_inplace(const autograd_meta* m);
/// True for the dtypes that may require grad: floating and complex.
constexpr bool is_differentiable(dtype t) {
  return category_of(t) == category::floating || category_of(t) == category::complex;
}
/// is_differentiable for an element type (only these ever record a node).
template <class T>
inline constexpr bool differentiable_v = is_differentiable(dtype_v<T>);
/// Throws unless a tensor of this dtype may require grad (floating and complex only).
void check_differentiable(dtype t);
}  // namespace strata::detail
