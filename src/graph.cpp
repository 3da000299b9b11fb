// SPDX-License-Identifier: MIT
// The autograd engine (strata.graph): grad mode, reverse topological order, iterative graph release.
module;
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
module strata.graph;

namespace strata::detail {
namespace {
thread_local bool grad_mode = true;

// Nodes whose last owner went away while another release was draining: destroying a node
// destroys its inputs' metadata, which would destroy their nodes, and so on down a chain.
// Collecting them here and destroying them in a loop keeps the stack flat for any depth.
thread_local std::vector<std::shared_ptr<grad_node>> releasing;
thread_local bool draining = false;
}  // namespace

bool grad_enabled() noexcept { return grad_mode; }
void set_grad_mode(bool enabled) noexcept { grad_mode = enabled; }

autograd_meta::~autograd_meta() {
  if (!grad_fn) return;
  releasing.push_back(std::move(grad_fn));
  if (draining) return;
  draining = true;
  while (!releasing.empty()) {
    std::shared_ptr<grad_node> n = std::move(releasing.back());
    releasing.pop_back();
    n.reset();  // may push more nodes
  }
  draining = false;
}

grad_buffer* backward_context::slot(autograd_meta& m) {
  if (m.grad_fn) return &m.grad_fn->pending;
  if (!capture_only_) return &m.grad;
  for (auto& [meta, buffer] : captures_)
    if (meta == &m) return &buffer;
  return nullptr;
}

void backward_context::capture_pending(const grad_node& n) {
  for (auto& [meta, buffer] : captures_)
    if (meta->grad_fn.get() == &n) buffer = n.pending;
}

void run_backward(std::span<const std::shared_ptr<autograd_meta>> roots, bool retain_graph, backward_context& ctx) {
  // Count, for every reachable node, how many reachable nodes send it a gradient.
  std::unordered_map<grad_node*, std::int64_t> waiting;
  std::vector<std::shared_ptr<grad_node>> stack, keep;
  for (const auto& r : roots)
    if (r->grad_fn && waiting.emplace(r->grad_fn.get(), 0).second) stack.push_back(r->grad_fn);
  while (!stack.empty()) {
    std::shared_ptr<grad_node> n = std::move(stack.back());
    stack.pop_back();
    for (const auto& in : n->inputs) {
      if (!in->grad_fn) continue;
      auto [it, fresh] = waiting.emplace(in->grad_fn.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(in->grad_fn);
    }
    keep.push_back(std::move(n));
  }
  // The leaves with hooks: how many reachable nodes still send each a gradient.
  std::unordered_map<autograd_meta*, std::int64_t> leaf_waiting;
  if (!ctx.capture_only())
    for (const auto& n : keep)
      for (const auto& in : n->inputs)
        if (!in->grad_fn && !in->post_accumulate_hooks.empty()) ++leaf_waiting[in.get()];
  const auto run_hooks = [](const std::shared_ptr<autograd_meta>& leaf) {
    // A copy: a hook may register another one (it runs from the next backward on).
    const auto hooks = leaf->post_accumulate_hooks;
    for (const auto& hook : hooks) hook(leaf);
  };
  // A backward that throws (a hook, a version check) drops the gradients still pending, so
  // that a retry with retain_graph starts clean.
  struct on_throw {
    const std::vector<std::shared_ptr<grad_node>>& keep;
    int exceptions = std::uncaught_exceptions();
    ~on_throw() {
      if (std::uncaught_exceptions() > exceptions)
        for (const auto& n : keep) n->pending.reset();
    }
  } drop_pending{keep};
  // Run them once every gradient for their output has arrived.
  for (const auto& r : roots)
    if (r->grad_fn && waiting[r->grad_fn.get()] == 0) stack.push_back(r->grad_fn);
  const grad_mode_guard guard(false);  // the backward itself is not recorded
  while (!stack.empty()) {
    std::shared_ptr<grad_node> n = std::move(stack.back());
    stack.pop_back();
    if (n->released)
      throw error("Trying to backward through the graph a second time (or directly access saved tensors after "
                  "they have already been freed). Saved intermediate values of the graph are freed when you call "
                  ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                  "graph a second time or if you need to access saved tensors after calling backward.");
    ctx.capture_pending(*n);
    if (n->pending.defined) n->apply(ctx);
    n->pending.reset();
    if (!retain_graph) {
      n->release();
      n->released = true;
    }
    for (const auto& in : n->inputs) {
      if (in->grad_fn) {
        if (--waiting[in->grad_fn.get()] == 0) stack.push_back(in->grad_fn);
      } else if (!leaf_waiting.empty()) {
        const auto it = leaf_waiting.find(in.get());
        if (it != leaf_waiting.end() && --it->second == 0) run_hooks(in);
      }
    }
  }
  if (!ctx.capture_only())
    for (const auto& r : roots)
      if (!r->grad_fn && !r->post_accumulate_hooks.empty()) run_hooks(r);
}

void throw_no_grad_fn() {
  throw error("element 0 of tensors does not require grad and does not have a grad_fn");
}

void throw_version_error(dtype t, int_list sizes, std::uint64_t now, std::uint64_t expected) {
  const std::string name(dtype_name(t));
  throw error("one of the variables needed for gradient computation has been modified by an inplace "
              "operation: [" + name + " " + to_string(sizes) + "] is at version " + std::to_string(now) +
              "; expected version " + std::to_string(expected) + " instead.");
}

void check_inplace(const autograd_meta* m) {
  if (!m || !m->requires_grad || !grad_enabled()) return;
  if (m->view_of_leaf)
    throw error("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  if (!m->grad_fn) throw error("a leaf Variable that requires grad is being used in an in-place operation.");
  throw error("strata does not record in-place operations: this tensor requires grad (it was computed from "
              "tensors that do); evaluate into a new tensor instead, or write under strata::no_grad.");
}

void check_differentiable(dtype t) {
  if (!is_differentiable(t))
    throw error("only Tensors of floating point and complex dtype can require gradients");
}
}  // namespace strata::detail
