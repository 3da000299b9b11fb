// SPDX-License-Identifier: MIT
// Tensor<T>: a handle on shared storage plus (sizes, strides, offset); views change only
// that metadata. The geometry of every view is a plain function in src/views.cpp; copies
// and fills run on the loop engine.
module;
#include "dtype_list.hpp"
export module strata.tensor;
import strata.std;
export import strata.error;
export import strata.dtype;
export import strata.shape;
export import strata.storage;
export import :methods;
import strata.loop;
import strata.graph;

namespace strata::detail {
/// A contiguous layout of the given sizes at offset 0.
layout contiguous_layout(int_list sizes);
/// Strides that let (old_sizes, old_strides) be viewed as new_sizes, if any (PyTorch's rule).
std::optional<dim_vector> view_strides(int_list old_sizes, int_list old_strides, int_list new_sizes);
/// Replaces a single -1 in shape by the size that makes numel elements.
dim_vector infer_size(int_list shape, std::int64_t numel);
/// Checks an as_strided geometry against a storage of storage_size elements.
layout as_strided_layout(int_list sizes, int_list strides, std::int64_t offset,
                         std::int64_t storage_size);
layout view_layout(const layout& l, int_list sizes);
layout expand_layout(const layout& l, int_list sizes);
layout narrow_layout(const layout& l, std::int64_t dim, std::int64_t start, std::int64_t length);
layout slice_layout(const layout& l, std::int64_t dim, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, std::int64_t step);
layout select_layout(const layout& l, std::int64_t dim, std::int64_t index);
layout permute_layout(const layout& l, int_list dims);
layout transpose_layout(const layout& l, std::int64_t dim0, std::int64_t dim1);
layout t_layout(const layout& l);
layout movedim_layout(const layout& l, int_list source, int_list destination);
layout diagonal_layout(const layout& l, std::int64_t offset, std::int64_t dim1, std::int64_t dim2);
layout unfold_layout(const layout& l, std::int64_t dim, std::int64_t size, std::int64_t step);
layout squeeze_layout(const layout& l);
layout squeeze_layout(const layout& l, std::int64_t dim);
layout unsqueeze_layout(const layout& l, std::int64_t dim);
/// The sizes flatten(start, end) asks for.
dim_vector flatten_sizes(int_list sizes, std::int64_t start, std::int64_t end);
/// Storage offset of a checked (negative-wrapping) index list.
std::int64_t element_offset(const layout& l, int_list index);
/// Checks that a tensor has exactly one element (for item()).
void check_single_element(std::int64_t numel);

/// A leaf read by the copy kernel: one operand, element i at p.ptrs[I][i].
template <class U>
struct copy_source {
  using value_type = U;
  static constexpr bool is_plain_leaf = true;  ///< into a tensor of U, rows are moved, not computed
  using leaf_types = type_list<U>;
  static constexpr std::size_t leaf_count = 1;
  template <std::size_t I, class P>
  compute_t<U> at(const P& p, std::int64_t i) const { return static_cast<compute_t<U>>(detail::get<I>(p.ptrs)[i]); }
};
/// No operands: every element is value.
template <class T>
struct fill_source {
  using value_type = T;
  using leaf_types = type_list<>;
  static constexpr std::size_t leaf_count = 0;
  T value;
  template <std::size_t I, class P>
  compute_t<T> at(const P&, std::int64_t) const { return static_cast<compute_t<T>>(value); }
};

/// dst + src: operand 1 is the destination read back, operand 2 the source (gradient sums).
template <class T>
struct add_source {
  using value_type = T;
  using leaf_types = type_list<T, T>;
  static constexpr std::size_t leaf_count = 2;
  template <std::size_t I, class P>
  compute_t<T> at(const P& p, std::int64_t i) const {
    return static_cast<compute_t<T>>(detail::get<I>(p.ptrs)[i]) + static_cast<compute_t<T>>(detail::get<I + 1>(p.ptrs)[i]);
  }
};

/// Runs kernel<O, Src> over dst and (optionally) one source operand broadcast to dst.
template <class O, class Src>
void run_unary_loop(const layout& dst, O* dst_data, const Src& src, const layout* from, char* from_data,
                    std::int64_t from_size) {
  loop_operand ops[2];
  ops[0] = loop_operand{reinterpret_cast<char*>(dst_data), dst.strides, sizeof(O)};
  std::size_t n = 1;
  bool flat = is_contiguous(dst.sizes, dst.strides);
  if (from) {
    ops[n++] = loop_operand{from_data, from->strides, from_size};
    flat = flat && is_contiguous(from->sizes, from->strides);
  }
  const std::span<const loop_operand> span(ops, n);
  const std::int64_t numel = numel_of(dst.sizes);
  run_kernel<O>(flat ? flat_plan(numel, span) : make_plan(dst.sizes, span), src);
}
}  // namespace strata::detail

export namespace strata {
/// Sets how many threads strata's loops may use (at least 1).
void set_num_threads(int n);
/// How many threads strata's loops may use (default: OpenMP's maximum).
int get_num_threads();

template <element T>
class Tensor;

/// A tensor of uninitialized elements (zeros for non-trivial types such as float128); T
/// defaults to float32, PyTorch's default dtype.
template <element T = float>
Tensor<T> empty(int_list sizes);

// ---- advanced indexing (strata.indexing): tensor_index is defined at the end of this file ----
class tensor_index;
}  // namespace strata

// Exported (in detail): the operator modules record their nodes with record_function and
// check in-place writes with check_inplace_source, and strata.indexing specializes indexing_ops.
export namespace strata::detail {
/// Tensor's index and index_put_ members, supplied by strata.indexing (as reductions are by
/// strata.expr): this module cannot import the module that implements them.
template <class T>
struct indexing_ops;

/// How a view's gradient reaches its base.
enum class view_kind {
  general,   ///< laid into a zero tensor of the base's sizes through the same view
  expand,    ///< summed back to the base's sizes
  identity,  ///< a copy (clone, to<U>): converted to the base's dtype
};
template <element T, class Replay>
void record_view(const Tensor<T>& base, Tensor<T>& view, Replay replay, view_kind kind);
}  // namespace strata::detail

// For strata's other modules (joins, gathers, sorts, scans), so exported (in detail).
export namespace strata::detail {
/// A recorded operation that is not an expression (joins, gathers, sorts, scans): its backward
/// is a function of the output's gradient giving the gradient of input i, in input i's sizes.
/// Tensors the backward reads are checked for in-place changes before it runs.
template <element T>
struct function_node final : grad_node {
  using backward_fn = std::function<Tensor<T>(const Tensor<T>& grad, std::size_t input)>;
  backward_fn backward;
  std::vector<std::size_t> input_of;  // inputs[k] is operation input input_of[k]
  std::vector<Tensor<T>> saved;
  std::vector<std::uint64_t> versions;

  void apply(backward_context& ctx) override {
    for (std::size_t i = 0; i < saved.size(); ++i)
      if (saved[i].storage().version() != versions[i])
        throw_version_error(dtype_v<T>, saved[i].sizes(), saved[i].storage().version(), versions[i]);
    const Tensor<T> g = autograd_access<Tensor<T>>::tensor(pending);
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (grad_buffer* slot = ctx.slot(*inputs[k])) accumulate_grad(*slot, backward(g, input_of[k]));
  }
  void release() noexcept override {
    backward = nullptr;
    saved.clear();
  }
};

/// Records out = op(inputs) when grad mode is on and an input requires grad: on backward,
/// backward(grad, i) is the gradient of inputs[i] (called only for inputs that require grad).
/// saved: tensors backward reads (besides grad), checked for in-place changes.
template <element T>
void record_function(Tensor<T>& out, std::span<const Tensor<T>> inputs, typename function_node<T>::backward_fn backward,
                     std::span<const Tensor<T>> saved = {}) {
  if constexpr (differentiable_v<T>) {
    if (!grad_enabled()) return;
    using access = autograd_access<Tensor<T>>;
    auto node = strata::detail::make_shared<function_node<T>>();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad()) continue;
      node->inputs.push_back(access::meta(inputs[i]));
      node->input_of.push_back(i);
    }
    if (node->inputs.empty()) return;
    for (const Tensor<T>& s : saved) {
      node->saved.push_back(s.detach());
      node->versions.push_back(s.storage().version());
    }
    node->backward = std::move(backward);
    access::set_grad_fn(out, std::move(node));
  }
}

}  // namespace strata::detail

export namespace strata::detail {
template <element In, element Out>
void record_copy(const Tensor<In>& source, Tensor<Out>& copy);
/// Adds a gradient into a slot (which takes it when empty).
template <element T>
void accumulate_grad(grad_buffer& slot, const Tensor<T>& g);
/// True when every element of view l lies in [base, base + n).
inline bool within_block(const layout& l, std::int64_t base, std::int64_t n) {
  std::int64_t lo = l.offset, hi = l.offset;
  for (std::size_t d = 0; d < l.sizes.size(); ++d) {
    if (l.sizes[d] == 0) return true;
    const std::int64_t span = (l.sizes[d] - 1) * l.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return lo >= base && hi < base + n;
}

/// Throws when a source that requires grad is written into an existing tensor (not recorded).
void check_inplace_source(bool source_requires_grad);
}  // namespace strata::detail

export namespace strata {

/// A strided n-dimensional array of T over shared storage (a handle, like at::Tensor:
/// copies share the elements; clone() copies them).
template <element T>
class Tensor : public tensor_methods<Tensor<T>> {
 public:
  using value_type = T;

  /// An empty 1-D tensor (sizes [0]; allocates nothing).
  Tensor() : layout_(detail::contiguous_layout({0})) {}
  /// A view of an existing storage, checked as as_strided is.
  Tensor(storage s, int_list sizes, int_list strides, std::int64_t storage_offset)
      : storage_(std::move(s)),
        layout_(detail::as_strided_layout(sizes, strides, storage_offset, storage_.size())) {}

  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  /// Rebinds this handle (an lvalue) to other's elements, as at::Tensor does.
  Tensor& operator=(const Tensor&) & = default;
  /// Rebinds this handle (an lvalue) to other's elements.
  Tensor& operator=(Tensor&&) & noexcept = default;
  /// Writing to a temporary view writes through: t[0] = other copies other into row 0.
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  /// Writing to a temporary view writes through: t[0][1] = 3 sets that element.
  Tensor& operator=(T value) && { return fill_(value); }
  /// Evaluates a lazy expression into a fresh tensor laid out in its inputs' memory order
  /// (its elements converted to T like copy_).
  template <detail::lazy_expression E>
  Tensor(const E& e) : Tensor(e.template to<T>()) {}  // NOLINT: implicit, as `Tensor t = a + b;`
  /// A converted copy of a tensor of another element type (as t.to<T>()).
  template <element U>
    requires(!std::is_same_v<U, T>)
  explicit Tensor(const Tensor<U>& other) : Tensor(other.template to<T>()) {}
  /// An lvalue handle assigned an expression rebinds to its fresh result.
  template <detail::lazy_expression E>
  Tensor& operator=(const E& e) & { return *this = Tensor(e); }
  /// A temporary view assigned an expression writes through: x.narrow(0, 1, 3) = a + b.
  template <detail::lazy_expression E>
  Tensor& operator=(const E& e) && { assign(e); return *this; }
  /// Writes src (an expression, tensor or scalar) into this tensor's elements in one fused loop,
  /// broadcasting src to this shape and converting like copy_.
  template <class E>
  const Tensor& assign(const E& src) const {
    if constexpr (detail::lazy_expression<E>) {
      detail::check_inplace(meta_.get());
      detail::check_inplace_source(src.requires_grad());
      // The version moves after the evaluation (also when it throws part way), so that an
      // expression reading this tensor (x.assign(x * 2 + 1)) sees the version it was built at.
      struct bump_after {
        const strata::storage& s;
        ~bump_after() { s.bump_version(); }
      } bump{storage_};
      src.eval_into(*this);
    }
    else if constexpr (requires { typename E::value_type; src.storage(); }) copy_(src);
    else {
      static_assert(element<E>, "assign() takes a tensor, an expression or a scalar of one of strata's dtypes.");
      fill_(detail::convert<T>(src));
    }
    return *this;
  }
  ~Tensor() = default;

  /// Sizes of every dim.
  int_list sizes() const noexcept { return layout_.sizes; }
  /// Size of dim d (negative d counts from the end).
  std::int64_t size(std::int64_t d) const { return layout_.sizes[wrap_existing_dim(d, dim())]; }
  /// Strides of every dim, in elements.
  int_list strides() const noexcept { return layout_.strides; }
  /// Stride of dim d (negative d counts from the end).
  std::int64_t stride(std::int64_t d) const { return layout_.strides[wrap_existing_dim(d, dim())]; }
  /// Offset of element 0 in the storage, in elements.
  std::int64_t storage_offset() const noexcept { return layout_.offset; }
  /// Number of dims.
  std::int64_t dim() const noexcept { return static_cast<std::int64_t>(layout_.sizes.size()); }
  /// Number of elements.
  std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (const std::int64_t s : layout_.sizes) n *= s;
    return n;
  }
  /// The dtype tag of T.
  static constexpr strata::dtype dtype() noexcept { return dtype_v<T>; }
  /// Bytes per element.
  static constexpr std::int64_t element_size() noexcept { return sizeof(T); }
  /// Address of element 0 (elements are reached through strides from here).
  T* data_ptr() const noexcept { return static_cast<T*>(storage_.data()) + layout_.offset; }
  /// The shared storage.
  const strata::storage& storage() const noexcept { return storage_; }
  /// True when both tensors view the same storage.
  template <element U>
  bool is_alias_of(const Tensor<U>& o) const noexcept { return storage_.is_alias_of(o.storage()); }
  /// PyTorch's contiguity test (strides of size-1 dims do not matter).
  bool is_contiguous() const { return strata::is_contiguous(layout_.sizes, layout_.strides); }
  /// The element type U version of this tensor: this tensor itself when U is T, else a
  /// contiguous converted copy (PyTorch's t.to(dtype)).
  template <element U>
  Tensor<U> to() const {
    if constexpr (std::is_same_v<U, T>) {
      return *this;
    } else {
      Tensor<U> out = empty<U>(sizes());
      out.copy_(detach());
      if (requires_grad() && detail::grad_enabled()) detail::record_copy(*this, out);
      return out;
    }
  }

  /// This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const { return is_contiguous() ? *this : clone(); }
  /// This tensor (already evaluated; as an expression's eval(), so code may call it on any result).
  Tensor eval() const { return *this; }
  /// A contiguous deep copy.
  Tensor clone() const {
    Tensor out = empty<T>(sizes());
    out.copy_(detach());
    if (requires_grad() && detail::grad_enabled()) detail::record_copy(*this, out);
    return out;
  }
  /// The single element of a one-element tensor.
  T item() const {
    detail::check_single_element(numel());
    return *data_ptr();
  }
  /// The single element converted to U (libtorch's t.item<float>()).
  template <element U>
  U item() const { return detail::convert<U>(item()); }
  /// Checked element access by an index list (negative indices wrap).
  T& at(int_list index) const {
    return static_cast<T*>(storage_.data())[detail::element_offset(layout_, index)];
  }
  /// Elements in logical row-major order.
  std::vector<T> to_vector() const {
    const Tensor c = contiguous();
    return std::vector<T>(c.data_ptr(), c.data_ptr() + c.numel());
  }
  /// Sets every element to value; returns *this.
  /// An expanded tensor's shared elements are written once each, as PyTorch's fill_ does.
  const Tensor& fill_(T value) const {
    detail::check_inplace(meta_.get());
    detail::layout distinct = layout_;  // stride-0 dims repeat one element: write it once
    for (std::size_t d = 0; d < distinct.sizes.size(); ++d)
      if (distinct.strides[d] == 0) distinct.sizes[d] = std::min<std::int64_t>(distinct.sizes[d], 1);
    detail::check_writable(distinct);
    storage_.check_writable();
    storage_.bump_version();
    const detail::fill_source<T> src{value};
    detail::run_unary_loop(distinct, data_ptr(), src, nullptr, nullptr, 0);
    return *this;
  }
  /// Sets every element to value; returns *this.
  Tensor& fill_(T value) { std::as_const(*this).fill_(value); return *this; }
  /// Sets every element to 0; returns *this.
  const Tensor& zero_() const { return fill_(T{}); }
  /// *this += other (torch's add_); returns *this.
  template <class B>
  const Tensor& add_(const B& other) const { return *this += other; }
  /// *this += other * alpha.
  template <class B, class S>
  const Tensor& add_(const B& other, S alpha) const { return *this += other * alpha; }
  /// *this -= other (torch's sub_).
  template <class B>
  const Tensor& sub_(const B& other) const { return *this -= other; }
  /// *this -= other * alpha.
  template <class B, class S>
  const Tensor& sub_(const B& other, S alpha) const { return *this -= other * alpha; }
  /// *this *= other (torch's mul_).
  template <class B>
  const Tensor& mul_(const B& other) const { return *this *= other; }
  /// *this /= other (torch's div_).
  template <class B>
  const Tensor& div_(const B& other) const { return *this /= other; }
  /// Clamps the elements in place to [lo, hi] (torch's clamp_).
  template <class L, class H>
  const Tensor& clamp_(L lo, H hi) const { return assign(this->clamp(lo, hi)); }
  /// masked_fill_(*this, mask, value): value where mask is true.
  template <class M, class V>
  const Tensor& masked_fill_(const M& mask, const V& value) const {
    detail::calls::call_masked_fill_(*this, mask, value);
    return *this;
  }
  /// scatter_(*this, dim, index, src).
  template <class I, class S>
  const Tensor& scatter_(std::int64_t dim, const I& index, const S& src) const {
    detail::calls::call_scatter_(*this, dim, index, src);
    return *this;
  }
  /// scatter_add_(*this, dim, index, src).
  template <class I, class S>
  const Tensor& scatter_add_(std::int64_t dim, const I& index, const S& src) const {
    detail::calls::call_scatter_add_(*this, dim, index, src);
    return *this;
  }
  /// index_add_(*this, dim, index, source, alpha).
  template <class I, class S>
  const Tensor& index_add_(std::int64_t dim, const I& index, const S& source, double alpha = 1.0) const {
    detail::calls::call_index_add_(*this, dim, index, source, alpha);
    return *this;
  }
  /// Copies src (broadcast to this shape, converted like PyTorch's copy_) into this view.
  template <element U>
  const Tensor& copy_(const Tensor<U>& src) const {
    const detail::layout from = detail::expand_layout(src.layout_, sizes());
    detail::check_inplace(meta_.get());
    detail::check_inplace_source(src.requires_grad());
    detail::check_writable(layout_);
    storage_.check_writable();
    storage_.bump_version();
    if (storage_.is_alias_of(src.storage())) {
      if (detail::needs_temporary(detail::memory_overlap(layout_, sizeof(T), from, sizeof(U)), sizeof(T), sizeof(U)))
        return copy_(src.clone());
    }
    const detail::copy_source<U> source;
    detail::run_unary_loop(layout_, data_ptr(), source, &from, reinterpret_cast<char*>(src.data_ptr()),
                           sizeof(U));
    return *this;
  }
  /// Copies src into this view; returns *this.
  template <element U>
  Tensor& copy_(const Tensor<U>& src) { std::as_const(*this).copy_(src); return *this; }

  // ---- autograd ----
  /// Marks this leaf as needing a gradient (floating and complex dtypes only).
  Tensor& requires_grad_(bool requires_grad = true) & {
    set_requires_grad(requires_grad);
    return *this;
  }
  /// requires_grad_ on a temporary: from_vector<float>({1, 2, 3}).requires_grad_().
  Tensor requires_grad_(bool requires_grad = true) && {
    set_requires_grad(requires_grad);
    return std::move(*this);
  }
  /// True when backward computes a gradient for this tensor.
  bool requires_grad() const noexcept { return meta_ && meta_->requires_grad; }
  /// True unless a recorded operation computed this tensor.
  bool is_leaf() const noexcept { return !meta_ || !meta_->grad_fn; }
  /// True once a backward has given this leaf a gradient.
  bool has_grad() const noexcept { return meta_ && meta_->grad.defined; }
  /// The gradient accumulated into this leaf (its sizes and dtype); throws before any.
  Tensor grad() const {
    if (!has_grad())
      throw error("grad(): this tensor has no gradient yet (has_grad() is false): only leaves that require "
                  "grad get one, from backward()");
    return Tensor(meta_->grad.data, meta_->grad.view);
  }
  /// The same elements, cut from the graph (does not require grad).
  Tensor detach() const { return Tensor(storage_, layout_); }
  /// Computes the gradient of this tensor with respect to every leaf that requires grad and
  /// adds it to their grad(); gradient defaults to 1 for a one-element tensor. The graph's
  /// saved values are freed unless retain_graph.
  void backward(const std::optional<Tensor>& gradient = std::nullopt, bool retain_graph = false) const {
    if (!requires_grad()) detail::throw_no_grad_fn();
    detail::backward_context ctx(false);
    detail::autograd_access<Tensor>::run_backward(*this, gradient, retain_graph, ctx);
  }
  /// Calls hook(*this) in each backward() as soon as this leaf's gradient for that pass is
  /// accumulated into grad() (torch's register_post_accumulate_grad_hook), while the rest of
  /// the backward is still to run.
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
    if (!requires_grad()) throw error("cannot register a hook on a tensor that doesn't require gradient");
    if (!is_leaf()) throw error("post accumulate grad hooks cannot be registered on non-leaf tensors");
    // The hook holds the leaf's storage and view, not its metadata (which owns the hook).
    meta_->post_accumulate_hooks.push_back(
        [s = storage_, l = layout_, h = std::move(hook)](const std::shared_ptr<detail::autograd_meta>& m) {
          h(detail::autograd_access<Tensor>::assemble(s, l, m));
        });
  }

  // ---- views: metadata only, sharing storage ----
  /// The same elements with new sizes (one may be -1); throws when strides do not allow it.
  Tensor view(int_list sizes) const {
    return derived(detail::view_layout(layout_, sizes), [s = sizes.vec()](const Tensor& g) { return g.view(s); });
  }
  /// view({s0, s1, ...}): x.view(2, -1).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  Tensor view(I... sizes) const { return view({static_cast<std::int64_t>(sizes)...}); }
  /// view() when possible, else a contiguous copy with the new sizes.
  Tensor reshape(int_list sizes) const {
    const dim_vector target = detail::infer_size(sizes, numel());
    if (detail::view_strides(layout_.sizes, layout_.strides, target)) return view(target);
    return clone().view(target);
  }
  /// reshape({s0, s1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  Tensor reshape(I... sizes) const { return reshape({static_cast<std::int64_t>(sizes)...}); }
  /// An arbitrary strided view of the same storage (bounds-checked).
  Tensor as_strided(int_list sizes, int_list strides, std::optional<std::int64_t> storage_offset = {}) const {
    detail::layout l = detail::as_strided_layout(sizes, strides, storage_offset.value_or(layout_.offset),
                                                 storage_.size());
    if (!requires_grad() || !detail::grad_enabled()) return with(std::move(l));
    // The view is relative to the storage; its gradient maps back to this tensor's elements
    // when they are the contiguous block it starts at.
    if (!is_contiguous() || !detail::within_block(l, layout_.offset, numel()))
      throw error("as_strided of a tensor that requires grad: the view must stay within the tensor's "
                  "elements, and the tensor must be contiguous (call contiguous() first)");
    auto replay = [l, base = layout_.offset](const Tensor& g) { return g.as_strided(l.sizes, l.strides, l.offset - base); };
    return derived(std::move(l), std::move(replay));
  }
  /// Repeats size-1 dims (stride 0) and adds leading dims; -1 keeps a size.
  Tensor expand(int_list sizes) const {
    return derived(detail::expand_layout(layout_, sizes), [](const Tensor& g) { return g; }, detail::view_kind::expand);
  }
  /// expand({s0, s1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  Tensor expand(I... sizes) const { return expand({static_cast<std::int64_t>(sizes)...}); }
  /// expand(other.sizes()) (other a tensor or an expression).
  template <class U>
  Tensor expand_as(const U& other) const { return expand(other.sizes()); }
  /// expand(sizes), as torch.broadcast_to.
  Tensor broadcast_to(int_list sizes) const { return expand(sizes); }
  /// length elements of dim from start.
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    return derived(detail::narrow_layout(layout_, dim, start, length),
                   [=](const Tensor& g) { return g.narrow(dim, start, length); });
  }
  /// Python's t[start:end:step] along dim (negative and out-of-range bounds clamp).
  Tensor slice(std::int64_t dim = 0, std::optional<std::int64_t> start = {},
               std::optional<std::int64_t> end = {}, std::int64_t step = 1) const {
    return derived(detail::slice_layout(layout_, dim, start, end, step),
                   [=](const Tensor& g) { return g.slice(dim, start, end, step); });
  }
  /// Removes dim, keeping index along it.
  Tensor select(std::int64_t dim, std::int64_t index) const {
    return derived(detail::select_layout(layout_, dim, index), [=](const Tensor& g) { return g.select(dim, index); });
  }
  /// select(0, i).
  Tensor operator[](std::int64_t i) const { return select(0, i); }
  /// Reorders dims: result dim k is dims[k] of this tensor.
  Tensor permute(int_list dims) const {
    return derived(detail::permute_layout(layout_, dims), [d = dims.vec()](const Tensor& g) { return g.permute(d); });
  }
  /// permute({d0, d1, ...}): x.permute(1, 0).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  Tensor permute(I... dims) const { return permute({static_cast<std::int64_t>(dims)...}); }
  /// Swaps two dims.
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const {
    return derived(detail::transpose_layout(layout_, dim0, dim1),
                   [=](const Tensor& g) { return g.transpose(dim0, dim1); });
  }
  /// transpose(0, 1) for tensors of at most 2 dims.
  Tensor t() const { return derived(detail::t_layout(layout_), [](const Tensor& g) { return g.t(); }); }
  /// Moves dims source to positions destination, keeping the others in order.
  Tensor movedim(int_list source, int_list destination) const {
    return derived(detail::movedim_layout(layout_, source, destination),
                   [s = source.vec(), d = destination.vec()](const Tensor& g) { return g.movedim(s, d); });
  }
  /// movedim for one dim.
  Tensor movedim(std::int64_t source, std::int64_t destination) const {
    return movedim(int_list{source}, int_list{destination});
  }
  /// The diagonal of dims (dim1, dim2) shifted by offset, as a new last dim.
  Tensor diagonal(std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) const {
    return derived(detail::diagonal_layout(layout_, offset, dim1, dim2),
                   [=](const Tensor& g) { return g.diagonal(offset, dim1, dim2); });
  }
  /// All windows of size elements along dim, step apart, as a new last dim.
  Tensor unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const {
    return derived(detail::unfold_layout(layout_, dim, size, step),
                   [=](const Tensor& g) { return g.unfold(dim, size, step); });
  }
  /// Removes every size-1 dim.
  Tensor squeeze() const { return derived(detail::squeeze_layout(layout_), [](const Tensor& g) { return g.squeeze(); }); }
  /// Removes dim if its size is 1.
  Tensor squeeze(std::int64_t dim) const {
    return derived(detail::squeeze_layout(layout_, dim), [=](const Tensor& g) { return g.squeeze(dim); });
  }
  /// Inserts a size-1 dim at dim.
  Tensor unsqueeze(std::int64_t dim) const {
    return derived(detail::unsqueeze_layout(layout_, dim), [=](const Tensor& g) { return g.unsqueeze(dim); });
  }
  /// Merges dims start..end into one (a view when strides allow, else a copy).
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const {
    const dim_vector target = detail::flatten_sizes(layout_.sizes, start_dim, end_dim);
    if (dim() > 0 && wrap_dim(start_dim, dim()) == wrap_dim(end_dim, dim())) return *this;
    return reshape(target);
  }

  // ---- advanced indexing (needs strata.indexing; templates, so that the explicit
  // instantiations in src/tensor.cpp do not instantiate them) ----
  /// libtorch's t.index({...}): integers, slices, ellipsis and none give a view; bool masks and
  /// index tensors (PyTorch's advanced indexing) give a copy.
  template <class I = tensor_index, class Self = Tensor>
  Tensor index(std::initializer_list<std::type_identity_t<I>> indices) const {
    return detail::indexing_ops<Self>::index(*this, std::span<const I>(indices.begin(), indices.size()));
  }
  /// index() with the entries in a vector.
  template <class I = tensor_index, class Self = Tensor>
  Tensor index(const std::vector<std::type_identity_t<I>>& indices) const {
    return detail::indexing_ops<Self>::index(*this, std::span<const I>(indices));
  }
  /// libtorch's t.index_put_({...}, values): writes values (a tensor of this dtype broadcast to
  /// the shape index() would give, or a scalar) where index() reads; with accumulate, adds them
  /// (repeated indices add up). Returns *this.
  template <class V, class I = tensor_index, class Self = Tensor>
  const Tensor& index_put_(std::initializer_list<std::type_identity_t<I>> indices, const V& values,
                           bool accumulate = false) const {
    detail::indexing_ops<Self>::index_put_(*this, std::span<const I>(indices.begin(), indices.size()), values,
                                           accumulate);
    return *this;
  }
  /// index_put_() with the entries in a vector.
  template <class V, class I = tensor_index, class Self = Tensor>
  const Tensor& index_put_(const std::vector<std::type_identity_t<I>>& indices, const V& values,
                           bool accumulate = false) const {
    detail::indexing_ops<Self>::index_put_(*this, std::span<const I>(indices), values, accumulate);
    return *this;
  }

 private:
  template <element U> friend class Tensor;
  friend struct detail::autograd_access<Tensor>;
  Tensor(strata::storage s, detail::layout l) : storage_(std::move(s)), layout_(std::move(l)) {}
  Tensor with(detail::layout l) const { return Tensor(storage_, std::move(l)); }
  // A view that, when this tensor requires grad, records how its gradient reaches this one.
  template <class Replay>
  Tensor derived(detail::layout l, Replay replay, detail::view_kind kind = detail::view_kind::general) const {
    Tensor out(storage_, std::move(l));
    if (requires_grad() && detail::grad_enabled()) detail::record_view(*this, out, std::move(replay), kind);
    return out;
  }
  void set_requires_grad(bool on) {
    if (on) detail::check_differentiable(dtype());
    if (!is_leaf() && !on)
      throw error("you can only change requires_grad flags of leaf variables. If you want to use a computed "
                  "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    if (!meta_ && !on) return;
    if (!meta_) meta_ = strata::detail::make_shared<detail::autograd_meta>();
    meta_->requires_grad = on;
  }

  strata::storage storage_;
  detail::layout layout_;
  std::shared_ptr<detail::autograd_meta> meta_;  ///< set once autograd is involved
};

/// `strata::Tensor y = x * 2;` deduces the element type of the expression.
template <detail::lazy_expression E>
Tensor(const E&) -> Tensor<typename E::value_type>;

namespace detail {
template <class X> struct is_tensor_handle : std::false_type {};
template <class T> struct is_tensor_handle<Tensor<T>> : std::true_type {};
}  // namespace detail
/// What every function that takes a tensor accepts: a Tensor<T> or a lazy expression (a node,
/// a reduction, a softmax or einsum node), which is evaluated where a tensor is needed.
template <class X>
concept tensor_like = detail::is_tensor_handle<std::remove_cvref_t<X>>::value ||
                      detail::lazy_expression<std::remove_cvref_t<X>>;
namespace detail {
/// x as a tensor: the same handle for a tensor, the evaluated result for an expression.
template <class X>
decltype(auto) as_tensor(const X& x) {
  if constexpr (is_tensor_handle<X>::value) return (x);
  else return x.eval();
}
/// The element type of a tensor or an expression.
template <class X>
using value_t = typename std::remove_cvref_t<X>::value_type;
/// True when X is a lazy expression (not a Tensor).
template <class X>
concept lazy = lazy_expression<std::remove_cvref_t<X>>;
}  // namespace detail

template <element T>
Tensor<T> empty(int_list sizes) {
  const std::int64_t n = numel_of(sizes);
  return Tensor<T>(storage::allocate<T>(n, init::uninitialized), sizes, contiguous_strides(sizes), 0);
}
namespace detail {
/// The dtype PyTorch gives a Python number of C++ type V: bool, int64 for integers, the default
/// float32 for double, complex64 for complex<double>; strata's own types (half, float128) stay.
template <class V>
using default_dtype_t =
    std::conditional_t<std::is_same_v<V, bool>, bool,
                       std::conditional_t<std::is_integral_v<V>, std::int64_t,
                                          std::conditional_t<std::is_same_v<V, double>, float,
                                                             std::conditional_t<std::is_same_v<V, std::complex<double>>,
                                                                                std::complex<float>, V>>>>;
/// T, or the default dtype of V when T is void.
template <class T, class V>
using dtype_or_t = std::conditional_t<std::is_void_v<T>, default_dtype_t<V>, T>;
}  // namespace detail

/// A tensor filled with value; without T, the dtype is PyTorch's for the value (float32 for a
/// floating number, int64 for an integer, bool).
template <class T = void, class V = T>
auto full(int_list sizes, V value) {
  using R = detail::dtype_or_t<T, V>;
  static_assert(element<R>, "full: the element type must be one of strata's dtypes");
  Tensor<R> t = empty<R>(sizes);
  t.fill_(detail::convert<R>(value));
  return t;
}
/// A tensor of zeros (float32 unless T is given).
template <element T = float>
Tensor<T> zeros(int_list sizes) {
  const std::int64_t n = numel_of(sizes);
  return Tensor<T>(storage::allocate<T>(n, init::zero), sizes, contiguous_strides(sizes), 0);
}
/// A tensor of ones (float32 unless T is given).
template <element T = float>
Tensor<T> ones(int_list sizes) { return full<T>(sizes, detail::convert<T>(1)); }
/// zeros({s0, s1, ...}): zeros(2, 3).
template <element T = float, std::integral... I>
  requires(sizeof...(I) >= 2)
Tensor<T> zeros(I... sizes) { return zeros<T>({static_cast<std::int64_t>(sizes)...}); }
/// ones({s0, s1, ...}).
template <element T = float, std::integral... I>
  requires(sizeof...(I) >= 2)
Tensor<T> ones(I... sizes) { return ones<T>({static_cast<std::int64_t>(sizes)...}); }

/// A 0-dim tensor holding value (torch::tensor(2.5)); T defaults to PyTorch's dtype for it.
template <class T = void, class V>
  requires element<V>
auto tensor(V value) {
  using R = detail::dtype_or_t<T, V>;
  Tensor<R> t = empty<R>({});
  *t.data_ptr() = detail::convert<R>(value);
  return t;
}
/// A 1-D tensor of values (torch::tensor({1.f, 2.f})); T defaults to PyTorch's dtype for them
/// (a list of doubles gives float32, of integers int64).
template <class T = void, class V>
auto tensor(std::initializer_list<V> values) {
  using R = detail::dtype_or_t<T, V>;
  Tensor<R> t = empty<R>({static_cast<std::int64_t>(values.size())});
  R* p = t.data_ptr();
  for (const V& v : values) *p++ = detail::convert<R>(v);
  return t;
}
/// A 2-D tensor of rows of equal length (torch::tensor({{1, 2}, {3, 4}})).
template <class T = void, class V>
auto tensor(std::initializer_list<std::initializer_list<V>> rows) {
  using R = detail::dtype_or_t<T, V>;
  const auto n = static_cast<std::int64_t>(rows.size());
  const std::int64_t m = n > 0 ? static_cast<std::int64_t>(rows.begin()->size()) : 0;
  Tensor<R> t = empty<R>({n, m});
  R* p = t.data_ptr();
  std::int64_t i = 0;
  for (const auto& row : rows) {
    if (static_cast<std::int64_t>(row.size()) != m)
      throw shape_error("tensor: expected sequence of length " + std::to_string(m) + " at dim 1 (got " +
                        std::to_string(row.size()) + ")");
    for (const V& v : row) p[i++] = detail::convert<R>(v);
  }
  return t;
}
/// A 0-dim tensor of value, float32 unless T is given (torch.scalar_tensor).
template <element T = float, class V>
  requires element<V>
Tensor<T> scalar_tensor(V value) { return tensor<T>(value); }

/// A tensor holding values with the given sizes, e.g. from_vector<float>(v, {2, 3}).
template <element T>
Tensor<T> from_vector(const std::vector<T>& values, int_list sizes) {
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  if (numel_of(sizes) != n)
    throw shape_error("from_vector: shape " + to_string(sizes) + " is invalid for input of size " +
                      std::to_string(n));
  Tensor<T> t = empty<T>(sizes);
  T* p = t.data_ptr();
  for (std::int64_t i = 0; i < n; ++i) p[i] = values[static_cast<std::size_t>(i)];
  return t;
}
/// A 1-D tensor holding values.
template <element T>
Tensor<T> from_vector(const std::vector<T>& values) {
  return from_vector<T>(values, {static_cast<std::int64_t>(values.size())});
}
/// A tensor from a braced list of values, e.g. from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).
template <element T>
Tensor<T> from_vector(std::initializer_list<T> values, int_list sizes) {
  return from_vector<T>(std::vector<T>(values), sizes);
}
/// A 1-D tensor from a braced list of values.
template <element T>
Tensor<T> from_vector(std::initializer_list<T> values) { return from_vector<T>(std::vector<T>(values)); }

/// A tensor over memory strata does not own (torch::from_blob): nothing is copied, and
/// deleter(data) runs once, when the last view of the elements goes (without a deleter the
/// memory must outlive every view). Strides are in elements and not negative.
template <element T>
Tensor<T> from_blob(T* data, int_list sizes, int_list strides, std::function<void(T*)> deleter = {}) {
  if (sizes.size() != strides.size())
    throw shape_error("from_blob: " + std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) +
                      " strides");
  std::int64_t extent = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0) throw shape_error("from_blob: negative sizes and strides are not supported");
    extent = sizes[d] == 0 || extent == 0 ? 0 : extent + (sizes[d] - 1) * strides[d];
  }
  std::shared_ptr<void> owner;
  if (deleter) owner = std::shared_ptr<void>(static_cast<void*>(data), [d = std::move(deleter), data](void*) { d(data); });
  return Tensor<T>(storage::borrow(data, extent, std::move(owner)), sizes, strides, 0);
}
/// from_blob over contiguous elements.
template <element T>
Tensor<T> from_blob(T* data, int_list sizes, std::function<void(T*)> deleter = {}) {
  dim_vector strides(sizes.size(), 1);
  for (std::size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<std::int64_t>(sizes[d], 1);
  return from_blob<T>(data, sizes, strides, std::move(deleter));
}

/// The values start, start+step, ... below end; T defaults to int64 for integer
/// arguments and float32 otherwise, as torch.arange.
template <class T = void, class A, class B, class C = int>
auto arange(A start, B end, C step = 1) {
  using R = std::conditional_t<!std::is_void_v<T>, T,
                               std::conditional_t<std::is_integral_v<A> && std::is_integral_v<B> &&
                                                      std::is_integral_v<C>,
                                                  std::int64_t, float>>;
  static_assert(element<R>, "arange: the element type must be one of strata's dtypes");
  std::int64_t n = 0;
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>) {
    const auto s = static_cast<std::int64_t>(start), e = static_cast<std::int64_t>(end),
               st = static_cast<std::int64_t>(step);
    if (st == 0) throw error("arange: step must be nonzero");
    if ((st > 0 && e < s) || (st < 0 && e > s))
      throw error("arange: upper bound and larger bound inconsistent with step sign");
    n = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
  } else {
    const double s = static_cast<double>(start), e = static_cast<double>(end),
                 st = static_cast<double>(step);
    if (st == 0) throw error("arange: step must be nonzero");
    if ((st > 0 && e < s) || (st < 0 && e > s))
      throw error("arange: upper bound and larger bound inconsistent with step sign");
    const double len = (e - s) / st;
    if (!(len < 0x1p62)) throw error("arange: invalid size, possible overflow");
    n = static_cast<std::int64_t>(len);
    if (static_cast<double>(n) < len) ++n;  // ceil
  }
  Tensor<R> t = empty<R>({n});
  R* p = t.data_ptr();
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>)
      p[i] = detail::convert<R>(static_cast<std::int64_t>(start) + i * static_cast<std::int64_t>(step));
    else
      p[i] = detail::convert<R>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(step));
  }
  return t;
}
/// 0, 1, ..., end-1.
template <class T = void, class A>
auto arange(A end) { return arange<T>(A{0}, end, 1); }

/// An n x m matrix with ones on the diagonal (m defaults to n).
template <element T>
Tensor<T> eye(std::int64_t n, std::optional<std::int64_t> m = {}) {
  const std::int64_t cols = m.value_or(n);
  if (n < 0) throw shape_error("n must be greater or equal to 0, got " + std::to_string(n));
  if (cols < 0) throw shape_error("m must be greater or equal to 0, got " + std::to_string(cols));
  Tensor<T> t = zeros<T>({n, cols});
  t.diagonal().fill_(detail::convert<T>(1));
  return t;
}
}  // namespace strata

export namespace strata::detail {
inline void check_inplace_source(bool source_requires_grad) {
  if (source_requires_grad && grad_enabled())
    throw error("strata does not record in-place operations: the value written requires grad, and writing it "
                "into an existing tensor would cut it from the graph; evaluate into a new tensor instead "
                "(Tensor y = e), or write under strata::no_grad.");
}

/// The autograd side of a Tensor<T>, for strata's own modules.
template <element T>
struct autograd_access<Tensor<T>> {
  static const std::shared_ptr<autograd_meta>& meta(const Tensor<T>& t) noexcept { return t.meta_; }
  /// Makes t the output of node n.
  static void set_grad_fn(Tensor<T>& t, std::shared_ptr<grad_node> n, bool view_of_leaf = false) {
    auto m = strata::detail::make_shared<autograd_meta>();
    m->requires_grad = true;
    m->view_of_leaf = view_of_leaf;
    m->grad_fn = std::move(n);
    t.meta_ = std::move(m);
  }
  static Tensor<T> tensor(const grad_buffer& b) { return Tensor<T>(b.data, b.view); }
  /// A Tensor<T> of a type-erased handle's parts (strata.any): its storage, view and autograd side.
  static Tensor<T> assemble(storage s, layout l, std::shared_ptr<autograd_meta> m) {
    Tensor<T> t(std::move(s), std::move(l));
    t.meta_ = std::move(m);
    return t;
  }
  /// t's view (sizes, strides, offset).
  static const layout& view(const Tensor<T>& t) noexcept { return t.layout_; }
  static grad_buffer buffer(const Tensor<T>& t) { return grad_buffer{t.storage_, t.layout_, true, false}; }
  /// Adds g into slot (which takes g when empty; see accumulate_grad).
  static void accumulate(grad_buffer& slot, const Tensor<T>& g) { accumulate_grad(slot, g); }
  /// Seeds output's gradient (gradient, or 1 for a one-element output, with PyTorch's
  /// messages) and runs every node reachable from output (backward() and strata::grad()).
  static void run_backward(const Tensor<T>& output, const std::optional<Tensor<T>>& gradient, bool retain_graph,
                           backward_context& ctx) {
    Tensor<T> seed;
    if (gradient) {
      if (!(gradient->sizes() == output.sizes()))
        throw shape_error("Mismatch in shape: grad_output[0] has a shape of " + to_string(gradient->sizes()) +
                          " and output[0] has a shape of " + to_string(output.sizes()) + ".");
      seed = gradient->detach().clone();
    } else {
      if (output.numel() != 1) throw error("grad can be implicitly created only for scalar outputs");
      seed = full<T>(output.sizes(), convert<T>(1));
    }
    if (grad_buffer* slot = ctx.slot(*output.meta_)) accumulate_grad(*slot, seed);
    const std::shared_ptr<autograd_meta> roots[1] = {output.meta_};
    detail::run_backward(roots, retain_graph, ctx);
  }
};

template <element T>
void accumulate_grad(grad_buffer& slot, const Tensor<T>& g) {
  using access = autograd_access<Tensor<T>>;
  if (!slot.defined) {
    // Taken as is when dense (owned when nobody else holds it), as PyTorch's AccumulateGrad.
    const bool dense = g.is_contiguous();
    slot = access::buffer(dense ? g : g.clone());
    slot.owned = !dense || g.storage().use_count() == 1;
    return;
  }
  const Tensor<T> current = access::tensor(slot);
  const Tensor<T> sum = slot.owned ? current : current.clone();
  loop_operand ops[3] = {{reinterpret_cast<char*>(sum.data_ptr()), sum.strides(), sizeof(T)},
                         {reinterpret_cast<char*>(sum.data_ptr()), sum.strides(), sizeof(T)},
                         {reinterpret_cast<char*>(g.data_ptr()), dim_vector{}, sizeof(T)}};
  const dim_vector gs = broadcast_strides(g.sizes(), g.strides(), sum.sizes());
  ops[2].strides = gs;
  sum.storage().bump_version();
  run_kernel<T>(make_plan(sum.sizes(), ops), add_source<T>{});
  slot = access::buffer(sum);
  slot.owned = true;
}

/// dst[k] += src[k] one element at a time, for views whose elements share memory
/// (overlapping unfold windows, as_strided): each shared element sums every contribution.
template <element T>
void scatter_add(const Tensor<T>& dst, const Tensor<T>& src) {
  const Tensor<T> s = src.contiguous();
  const T* from = s.data_ptr();
  T* base = dst.data_ptr();
  const int_list sizes = dst.sizes(), strides = dst.strides();
  const std::size_t nd = sizes.size();
  dim_vector index(nd, 0);
  std::int64_t offset = 0;
  for (std::int64_t i = 0, n = dst.numel(); i < n; ++i) {
    base[offset] = convert<T>(static_cast<compute_t<T>>(base[offset]) + static_cast<compute_t<T>>(from[i]));
    for (std::size_t d = nd; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

/// The gradient of a view or copy: laid back into the base's sizes (and dtype). The view is
/// replayed on a zero tensor through a std::function, so that this code exists once per
/// element type, not once per view.
template <element In, element Out>
struct view_node final : grad_node {
  dim_vector base_sizes;
  std::function<Tensor<In>(const Tensor<In>&)> replay;  // general views only
  view_kind kind;
  view_node(dim_vector sizes, std::function<Tensor<In>(const Tensor<In>&)> r, view_kind k)
      : base_sizes(std::move(sizes)), replay(std::move(r)), kind(k) {}

  void apply(backward_context& ctx) override {
    grad_buffer* slot = ctx.slot(*inputs[0]);
    if (!slot) return;
    const Tensor<Out> g = autograd_access<Tensor<Out>>::tensor(pending);
    if (kind == view_kind::identity) {
      accumulate_grad(*slot, g.template to<In>());
      return;
    }
    if constexpr (std::is_same_v<In, Out>) {
      if (kind == view_kind::expand) {
        accumulate_grad(*slot, Tensor<In>(reductions<Tensor<In>>::sum_to(g, base_sizes)));
        return;
      }
      const Tensor<In> whole = zeros<In>(base_sizes);
      const Tensor<In> part = replay(whole);
      if (has_internal_overlap(part.sizes(), part.strides())) scatter_add(part, g);
      else part.copy_(g);
      accumulate_grad(*slot, whole);
    }
  }
  void release() noexcept override { replay = nullptr; }
};

template <element T, class Replay>
void record_view(const Tensor<T>& base, Tensor<T>& view, Replay replay, view_kind kind) {
  if constexpr (differentiable_v<T>) {
    using access = autograd_access<Tensor<T>>;
    std::function<Tensor<T>(const Tensor<T>&)> fn;
    if (kind == view_kind::general) fn = std::move(replay);
    auto node = strata::detail::make_shared<view_node<T, T>>(base.sizes().vec(), std::move(fn), kind);
    node->inputs.push_back(access::meta(base));
    access::set_grad_fn(view, std::move(node), base.is_leaf() || access::meta(base)->view_of_leaf);
  }
}

template <element In, element Out>
void record_copy(const Tensor<In>& source, Tensor<Out>& copy) {
  if constexpr (differentiable_v<In> && differentiable_v<Out>) {
    auto node = strata::detail::make_shared<view_node<In, Out>>(source.sizes().vec(), nullptr, view_kind::identity);
    node->inputs.push_back(autograd_access<Tensor<In>>::meta(source));
    autograd_access<Tensor<Out>>::set_grad_fn(copy, std::move(node));
  }
}
}  // namespace strata::detail

// ---- compiled once ----
// The per-dtype machinery (Tensor<T>'s non-template members, the fill and same-type copy
// loops, the gradient nodes of views and copies, gradient accumulation) is instantiated in
// src/tensor.cpp; a user's translation unit instantiates only its own expressions.
#define STRATA_TENSOR_INSTANCES(T)                                                                              \
  extern template class Tensor<T>;                                                                              \
  extern template const Tensor<T>& Tensor<T>::copy_<T>(const Tensor<T>&) const;                                 \
  namespace detail {                                                                                            \
  extern template void run_unary_loop<T, fill_source<T>>(const layout&, T*, const fill_source<T>&, const layout*, \
                                                         char*, std::int64_t);                                  \
  extern template void run_unary_loop<T, copy_source<T>>(const layout&, T*, const copy_source<T>&, const layout*, \
                                                         char*, std::int64_t);                                  \
  }
#define STRATA_GRAD_INSTANCES(T)                                          \
  namespace detail {                                                      \
  extern template struct view_node<T, T>;                                 \
  extern template void accumulate_grad<T>(grad_buffer&, const Tensor<T>&); \
  extern template void scatter_add<T>(const Tensor<T>&, const Tensor<T>&); \
  }
namespace strata {
STRATA_FOR_EACH_DTYPE(STRATA_TENSOR_INSTANCES)
STRATA_FOR_EACH_GRAD_DTYPE(STRATA_GRAD_INSTANCES)
}  // namespace strata
#undef STRATA_TENSOR_INSTANCES
#undef STRATA_GRAD_INSTANCES

// ---- advanced indexing (strata.indexing): the entries of Tensor::index and index_put_ ----
export namespace strata {
/// Python's start:stop:step in a tensor_index: an unset bound means the whole dim; negative
/// bounds count from the end and out-of-range bounds clamp; step must be positive.
struct slice {
  std::optional<std::int64_t> start;  ///< first index (unset: 0)
  std::optional<std::int64_t> stop;   ///< one past the last (unset: the dim's size)
  std::int64_t step = 1;              ///< distance between indices
};
/// The type of strata::ellipsis.
struct ellipsis_t {
  explicit constexpr ellipsis_t() = default;
};
/// Python's `...` in a tensor_index: as many whole dims as the other entries leave.
inline constexpr ellipsis_t ellipsis{};
/// The type of strata::none.
struct none_t {
  explicit constexpr none_t() = default;
};
/// Python's None in a tensor_index: a new dim of size 1.
inline constexpr none_t none{};

/// One entry of t.index({...}) and t.index_put_({...}, v), as libtorch's TensorIndex: an
/// integer (select), a slice, ellipsis, none, a bool mask, or an int64 or int32 index tensor
/// (an expression such as x > 0 is evaluated first).
class tensor_index {
 public:
  /// What the entry holds.
  enum class kind { integer, slice, ellipsis, none, mask, tensor };
  /// An integer: selects one index of a dim (negative counts from the end).
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  tensor_index(I i) : kind_(kind::integer), integer_(static_cast<std::int64_t>(i)) {}  // NOLINT: implicit
  /// A slice of a dim.
  tensor_index(strata::slice s) : kind_(kind::slice), slice_(s) {}  // NOLINT
  /// `...`.
  tensor_index(ellipsis_t) : kind_(kind::ellipsis) {}  // NOLINT
  /// A new dim of size 1.
  tensor_index(none_t) : kind_(kind::none) {}  // NOLINT
  /// A bool mask over as many dims as it has (its true elements' coordinates).
  tensor_index(Tensor<bool> mask) : kind_(kind::mask), mask_(std::move(mask)) {}  // NOLINT
  /// Index tensors broadcast together (PyTorch's advanced indexing).
  tensor_index(Tensor<std::int64_t> indices) : kind_(kind::tensor), indices_(std::move(indices)) {}  // NOLINT
  /// An int32 index tensor (converted to int64).
  tensor_index(const Tensor<std::int32_t>& indices)  // NOLINT
      : tensor_index(indices.template to<std::int64_t>()) {}
  /// Any other element type cannot index.
  template <element U>
    requires(!std::is_same_v<U, bool> && !std::is_same_v<U, std::int64_t> && !std::is_same_v<U, std::int32_t>)
  tensor_index(const Tensor<U>&) : kind_(kind::none) {  // NOLINT
    static_assert(sizeof(U) == 0, "tensors used as indices must be bool (a mask), int64 or int32 tensors");
  }
  /// An expression (x > 0, idx + 1), evaluated.
  template <detail::lazy_expression E>
  tensor_index(const E& e) : tensor_index(e.template to<typename E::value_type>()) {}  // NOLINT

  /// What the entry holds.
  kind type() const noexcept { return kind_; }
  /// The integer (kind::integer).
  std::int64_t as_integer() const noexcept { return integer_; }
  /// The slice (kind::slice).
  const strata::slice& as_slice() const noexcept { return slice_; }
  /// The mask (kind::mask).
  const Tensor<bool>& as_mask() const noexcept { return mask_; }
  /// The index tensor (kind::tensor).
  const Tensor<std::int64_t>& as_tensor() const noexcept { return indices_; }

 private:
  kind kind_;
  std::int64_t integer_ = 0;
  strata::slice slice_;
  Tensor<bool> mask_;
  Tensor<std::int64_t> indices_;
};
}  // namespace strata
