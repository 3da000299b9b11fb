// SPDX-License-Identifier: MIT
// The autograd graph with element types erased (internal, like strata.loop): what a tensor
// that requires grad carries (autograd_meta), the nodes that evaluating or viewing it
// records (grad_node), grad mode, and the engine that runs nodes in reverse topological
// order (src/graph.cpp). The typed halves live with what they differentiate: views and
// copies in strata.tensor, expressions and reductions in strata.expr, where each derivative
// is built from the node types at compile time, and the backward's loop that runs such a
// derivative over a recorded shape (src/grad_loop.cpp). The public face is strata.autograd.
export module strata.graph;
import strata.std;
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
  /// A leaf's post-accumulate-grad hooks: called, in order, once a backward() has added the
  /// last of this backward's gradients into grad (strata.tensor's register_post_accumulate_grad_hook).
  std::vector<std::function<void(const std::shared_ptr<autograd_meta>& self)>> post_accumulate_hooks;
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
  /// True for grad() (leaves' .grad() untouched, their hooks not called).
  bool capture_only() const noexcept { return capture_only_; }

 private:
  bool capture_only_;
  std::vector<std::pair<const autograd_meta*, grad_buffer>> captures_;
};

/// Runs every node reachable from the roots (their pending gradients already seeded) in
/// reverse topological order, then frees the saved values unless retain_graph. In a
/// backward() a leaf's post-accumulate hooks run as soon as the last node that sends it a
/// gradient has run (roots that are leaves: at the end).
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
// ---- backward: derivative loops with the expression behind one function pointer ----
// A derivative is evaluated over contiguous chunks of its operands; the walk, the gathering
// of strided operands, the stores into gradients and the sum_to reductions are code per
// element type (or compiled once in src/), so that a recorded expression instantiates one
// small loop per input and nothing else.

/// How a tape writes the values of an input position's gradient: into a buffer of the
/// gradient's compute type (stored by a grad_store_fn afterwards), or straight into the
/// gradient's contiguous elements, assigning or adding.
enum class grad_write : std::uint8_t { buffer, assign, add };

/// Runs a tree's backward over n elements (see strata.expr's tape): in[k] points at n
/// contiguous elements of operand k; outs[J], when not null, receives n values of input
/// position J's gradient, as how[J] says.
using grad_tape_fn = void (*)(const void* tree, const char* const* in, std::int64_t n, void* const* outs,
                              const grad_write* how, loop_status* st);
/// Writes (add: adds) n values of a gradient's compute type from buf to out, stride bytes apart.
using grad_store_fn = void (*)(const void* buf, std::int64_t n, char* out, std::int64_t stride, bool add);

inline constexpr std::int64_t grad_chunk = 128;           ///< elements per chunk at most (AG1: best of 64-1024)
inline constexpr std::int64_t grad_scratch = 32768;      ///< bytes of gathered operands per chunk
inline constexpr std::int64_t grad_values_bytes = 65536;  ///< bytes of gradient values per chunk

/// The operands a derivative reads, by element size. Each chunk passes contiguous operands
/// in place and gathers strided ones (fills broadcast ones) into scratch.
struct grad_inputs {
  const std::int64_t* itemsize;
  std::size_t count;
  /// Elements per chunk (at most grad_chunk) for which every operand fits the scratch.
  std::int64_t chunk() const;
  /// in[k] = operand k's elements [c, c + len) along a row (ptrs[k], s[k]).
  void gather(char* const* ptrs, const std::int64_t* s, std::int64_t c, std::int64_t len, char* scratch,
              const char** in) const;
};

/// One full-shape gradient written by run_grad_pass.
struct grad_target {
  std::size_t position;     ///< the input position of the tree
  grad_store_fn store;      ///< stores the values into the gradient
  std::int64_t value_size;  ///< bytes of the gradient's compute type
  bool add;                 ///< add into the gradient instead of assigning it
  std::int64_t itemsize;    ///< bytes of the gradient's elements
  bool direct;              ///< the tape may write it in place where contiguous (grad_write)
};

/// A tree's backward and the gradients it writes in one walk.
struct grad_pass {
  const void* tree;
  grad_tape_fn run;
  std::size_t positions;  ///< the tree's input positions
  std::span<const grad_target> targets;
};

/// Runs the pass over the plan: plan operands 0..targets.size()-1 are the gradients, then the
/// inputs described by in.
void run_grad_pass(const loop_plan& plan, const grad_pass& pass, const grad_inputs& in);

/// The values of one input position's gradient, for reduction_kernels (the sum_to of a
/// broadcast input's gradient): operand 0 is the output, 1.. the inputs.
template <class A>
struct grad_values {
  const void* tree;
  grad_tape_fn run;
  std::size_t position;
  std::size_t positions;
  grad_inputs in;

  /// The source a reduction reads (this must outlive it).
  value_source<A> source() const { return {nullptr, &values, this, in.count}; }
  static const A* values(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, A* buf,
                         loop_status* st) {
    const auto& [tree, run, position, positions, in] = *static_cast<const grad_values*>(ctx);
    alignas(64) char scratch[grad_scratch];
    const char* inp[max_operands];
    void* outs[max_operands] = {};
    const grad_write how[max_operands] = {};  // all buffer
    const std::int64_t ch = in.chunk();
    for (std::int64_t c = 0; c < n; c += ch) {
      const std::int64_t len = n - c < ch ? n - c : ch;
      in.gather(ptrs + 1, s + 1, c, len, scratch, inp);
      outs[position] = buf + c;
      run(tree, inp, len, outs, how, st);
    }
    return buf;
  }
};

/// grad_store_fn for a gradient of type T.
template <class T>
void store_grad(const void* buf, std::int64_t n, char* out, std::int64_t stride, bool add) {
  using C = compute_t<T>;
  const C* b = static_cast<const C*>(buf);
  if (stride == static_cast<std::int64_t>(sizeof(T))) {
    T* o = reinterpret_cast<T*>(out);
    if (add)
      for (std::int64_t i = 0; i < n; ++i) o[i] = convert<T>(static_cast<C>(o[i]) + b[i]);
    else
      for (std::int64_t i = 0; i < n; ++i) o[i] = convert<T>(b[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      T* o = reinterpret_cast<T*>(out + i * stride);
      *o = add ? convert<T>(static_cast<C>(*o) + b[i]) : convert<T>(b[i]);
    }
  }
}
}  // namespace strata::detail
