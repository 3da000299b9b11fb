// SPDX-License-Identifier: MIT
// Expression nodes: the tiny types an expression tree is built of (leaf, scalar, unary,
// binary, where, cast), holding tensor handles and scalars by value, and expression_base,
// the members every node shares.
export module strata.expr:nodes;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;

namespace strata::detail {
template <element O, class E>
Tensor<O> eval_fresh(const E& e);
/// Child x's elements [i0, i0 + n) converted to C, into out.
template <std::size_t I, class C, class X, class P>
void chunk_as(const X& x, const P& p, std::int64_t i0, std::int64_t n, C* out) {
  using CX = compute_t<typename X::value_type>;
  if constexpr (std::is_same_v<CX, C>) {
    x.template eval_chunk<I>(p, i0, n, out);
  } else {
    chunk_buffer<CX, vchunk> tmp;
    x.template eval_chunk<I>(p, i0, n, tmp.data);
    for (std::int64_t j = 0; j < n; ++j) out[j] = convert<C>(tmp.data[j]);
  }
}
template <element O, class E>
void assign_into(const Tensor<O>& dst, const E& e);
/// Records out = e for backward when e requires grad and grad mode is on.
template <element O, class E>
void record(const E& e, Tensor<O>& out);
}  // namespace strata::detail

export namespace strata {

/// The members every lazy node shares: it reads like a tensor (sizes, dtype, item, printing)
/// and is evaluated when assigned, printed or read.
template <class D>
struct expression_base : tensor_methods<D> {
  static constexpr bool is_strata_expression = true;
  static constexpr bool has_vmath = false;  ///< some node below evaluates by array functions
  /// Elements [i0, i0 + n) of the result (n <= 512) into out, in the compute type.
  template <std::size_t I, class P, class F>
  void eval_chunk(const P& p, std::int64_t i0, std::int64_t n, F* out) const {
    for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(self().template at<I>(p, i0 + j));
  }
  /// The result's dtype.
  static constexpr strata::dtype dtype() noexcept { return dtype_v<typename D::value_type>; }
  /// Number of dims of the result.
  std::int64_t dim() const { return static_cast<std::int64_t>(self().sizes().size()); }
  /// Size of dim d of the result (negative d counts from the end).
  std::int64_t size(std::int64_t d) const { return self().sizes()[static_cast<std::size_t>(wrap_existing_dim(d, dim()))]; }
  /// Number of elements of the result.
  std::int64_t numel() const { return numel_of(self().sizes()); }
  /// Evaluates into a fresh tensor (laid out in the inputs' memory order).
  auto eval() const { return self().template to<typename D::value_type>(); }
  /// Evaluates into a fresh tensor of element type U (PyTorch's .to(dtype)).
  template <element U>
  Tensor<U> to() const { return detail::eval_fresh<U>(self()); }
  /// The single element of a one-element result.
  auto item() const { return eval().item(); }
  /// The single element converted to U.
  template <element U>
  U item() const { return eval().template item<U>(); }
  /// The result's elements in row-major order.
  auto to_vector() const { return eval().to_vector(); }
  /// Writes the result into dst (broadcast to dst's shape, converted like copy_): what
  /// dst.assign(*this) does.
  template <element O>
  void eval_into(const Tensor<O>& dst) const { detail::assign_into(dst, self()); }
  /// True when some tensor in the expression requires grad (its result then records a node).
  bool requires_grad() const {
    bool r = false;
    self().template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) { r = r || t.requires_grad(); });
    return r;
  }
  /// The result as a new leaf that requires grad ((torch.arange(5) / 20).requires_grad_()).
  auto requires_grad_(bool requires_grad = true) const { return eval().detach().requires_grad_(requires_grad); }
  /// Evaluates (recording) and runs backward from the result: sum(loss).backward().
  void backward(bool retain_graph = false) const { eval().backward(std::nullopt, retain_graph); }
  /// Evaluates (recording) and runs backward from the result with its gradient
  /// (loss.backward(gradient, retain_graph); {} for the default of ones).
  template <class V = D>
  void backward(const std::optional<Tensor<typename V::value_type>>& gradient, bool retain_graph = false) const {
    eval().backward(gradient, retain_graph);
  }

  // ---- views and copies of the result: the expression is evaluated first, then viewed ----
  /// eval().view(sizes).
  auto view(int_list sizes) const { return eval().view(sizes); }
  /// eval().view(s0, s1, ...).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto view(I... sizes) const { return eval().view(sizes...); }
  /// eval().reshape(sizes).
  auto reshape(int_list sizes) const { return eval().reshape(sizes); }
  /// eval().reshape(s0, s1, ...).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto reshape(I... sizes) const { return eval().reshape(sizes...); }
  /// eval().permute(dims).
  auto permute(int_list dims) const { return eval().permute(dims); }
  /// eval().permute(d0, d1, ...).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto permute(I... dims) const { return eval().permute(dims...); }
  /// eval().transpose(dim0, dim1).
  auto transpose(std::int64_t dim0, std::int64_t dim1) const { return eval().transpose(dim0, dim1); }
  /// eval().t().
  auto t() const { return eval().t(); }
  /// eval().unsqueeze(dim).
  auto unsqueeze(std::int64_t dim) const { return eval().unsqueeze(dim); }
  /// eval().squeeze().
  auto squeeze() const { return eval().squeeze(); }
  /// eval().squeeze(dim).
  auto squeeze(std::int64_t dim) const { return eval().squeeze(dim); }
  /// eval().flatten(start_dim, end_dim).
  auto flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const { return eval().flatten(start_dim, end_dim); }
  /// eval().narrow(dim, start, length).
  auto narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const { return eval().narrow(dim, start, length); }
  /// eval().slice(dim, start, end, step).
  auto slice(std::int64_t dim = 0, std::optional<std::int64_t> start = {}, std::optional<std::int64_t> end = {},
             std::int64_t step = 1) const {
    return eval().slice(dim, start, end, step);
  }
  /// eval().select(dim, index).
  auto select(std::int64_t dim, std::int64_t index) const { return eval().select(dim, index); }
  /// eval()[i].
  auto operator[](std::int64_t i) const { return eval()[i]; }
  /// eval().expand(sizes).
  auto expand(int_list sizes) const { return eval().expand(sizes); }
  /// eval().expand(s0, s1, ...).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto expand(I... sizes) const { return eval().expand(sizes...); }
  /// eval().expand_as(other).
  template <class U>
  auto expand_as(const U& other) const { return eval().expand(other.sizes()); }
  /// eval().movedim(source, destination).
  auto movedim(std::int64_t source, std::int64_t destination) const { return eval().movedim(source, destination); }
  /// eval().diagonal(offset, dim1, dim2).
  auto diagonal(std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) const {
    return eval().diagonal(offset, dim1, dim2);
  }
  /// eval().unfold(dim, size, step).
  auto unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const { return eval().unfold(dim, size, step); }
  /// eval().index({...}) (libtorch's indexing of the result).
  auto index(std::initializer_list<tensor_index> indices) const { return eval().index(indices); }
  /// The result, evaluated and made contiguous (the evaluation follows the inputs' memory
  /// order, so a transposed input gives a transposed result, as in PyTorch).
  auto contiguous() const { return eval().contiguous(); }
  /// The result, evaluated into a fresh tensor.
  auto clone() const { return eval(); }
  /// The result, evaluated, cut from the graph.
  auto detach() const { return eval().detach(); }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};

/// A leaf: a tensor handle, read through the loop's pointer for leaf I.
template <element T>
struct leaf_expr : expression_base<leaf_expr<T>> {
  using value_type = T;
  using leaf_types = detail::type_list<T>;
  static constexpr std::size_t leaf_count = 1;
  static constexpr bool is_plain_leaf = true;  ///< read in place by reductions
  Tensor<T> t;  ///< the tensor (a handle sharing its storage)
  /// Its storage's version when the expression was built (detail::unversioned: not checked):
  /// an evaluation after an in-place write to it throws instead of reading the new values.
  std::uint64_t version = detail::unversioned;
  /// The tensor's sizes.
  int_list sizes() const noexcept { return t.sizes(); }
  /// The tensor, checked not to have been written in place since the expression was built.
  const Tensor<T>& fresh() const {
    if (version != detail::unversioned && version != t.storage().version())
      detail::throw_stale_input(version, t.storage().version());
    return t;
  }
  /// Element i of leaf I in a row.
  template <std::size_t I, class P>
  detail::compute_t<T> at(const P& p, std::int64_t i) const { return static_cast<detail::compute_t<T>>(detail::get<I>(p.ptrs)[i]); }
  /// Calls f.template operator()<I>(t) (with the version too when f asks for it).
  template <std::size_t I, class F>
  void for_each_leaf(F&& f) const {
    if constexpr (requires { std::remove_cvref_t<F>::with_version; }) f.template operator()<I>(t, version);
    else f.template operator()<I>(t);
  }
};

/// A C++ scalar already converted to the compute type of the operation it takes part in.
template <class C>
struct scalar_expr : expression_base<scalar_expr<C>> {
  using value_type = C;
  using leaf_types = detail::type_list<>;
  static constexpr std::size_t leaf_count = 0;
  C value;  ///< the value
  /// No dims: a scalar broadcasts to anything.
  int_list sizes() const noexcept { return {}; }
  /// The value.
  template <std::size_t I, class P>
  C at(const P&, std::int64_t) const { return value; }
  /// No leaves.
  template <std::size_t I, class F>
  void for_each_leaf(F&&) const {}
};

/// op(a) element-wise; Op::result_t<T> is the result type for an operand of type T.
template <class Op, class A>
struct unary_expr : expression_base<unary_expr<Op, A>> {
  using value_type = typename Op::template result_t<typename A::value_type>;
  using leaf_types = typename A::leaf_types;
  static constexpr std::size_t leaf_count = A::leaf_count;
  static constexpr bool has_vmath = A::has_vmath || detail::chunk_op<Op, detail::compute_t<value_type>>;
  A a;  ///< the operand
  [[no_unique_address]] Op op{};  ///< the operation (holds clamp's bounds; empty for the rest)
  /// The operand's sizes.
  int_list sizes() const noexcept { return a.sizes(); }
  /// Element i of the result.
  template <std::size_t I, class P>
  detail::compute_t<value_type> at(const P& p, std::int64_t i) const {
    return op.template apply<value_type>(a.template at<I>(p, i));
  }
  /// Elements [i0, i0 + n): array functions (SLEEF) where the operation has them.
  template <std::size_t I, class P, class F>
  void eval_chunk(const P& p, std::int64_t i0, std::int64_t n, F* out) const {
    if constexpr (!has_vmath) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = at<I>(p, i0 + j);
    } else if constexpr (detail::chunk_op<Op, F>) {
      using Ptr = std::remove_cvref_t<decltype(detail::get<I>(p.ptrs))>;
      if constexpr (std::is_same_v<A, leaf_expr<F>> && std::is_same_v<Ptr, const F*>) {
        Op::apply_chunk(detail::get<I>(p.ptrs) + i0, out, n);  // a contiguous operand, read in place
      } else {
        detail::chunk_as<I>(a, p, i0, n, out);
        Op::apply_chunk(out, out, n);
      }
    } else {
      using CA = detail::compute_t<typename A::value_type>;
      detail::chunk_buffer<CA, detail::vchunk> tmp;
      a.template eval_chunk<I>(p, i0, n, tmp.data);
      for (std::int64_t j = 0; j < n; ++j) out[j] = op.template apply<value_type>(tmp.data[j]);
    }
  }
  /// Visits the operand's leaves.
  template <std::size_t I, class F>
  void for_each_leaf(F&& f) const { a.template for_each_leaf<I>(f); }
};

/// op(a, b) element-wise after converting both to Common (the promoted operand type).
template <class Op, class A, class B, class Common>
struct binary_expr : expression_base<binary_expr<Op, A, B, Common>> {
  using common_type = Common;
  using value_type = typename Op::template result_t<Common>;
  using leaf_types = typename detail::concat<typename A::leaf_types, typename B::leaf_types>::type;
  static constexpr std::size_t leaf_count = A::leaf_count + B::leaf_count;
  static constexpr bool has_vmath = A::has_vmath || B::has_vmath || detail::chunk_op2<Op, detail::compute_t<Common>>;
  A a;  ///< left operand
  B b;  ///< right operand
  dim_vector shape;  ///< the broadcast shape
  /// The broadcast shape.
  int_list sizes() const noexcept { return shape; }
  /// Element i of the result; operations that can fail (integer division by zero) report
  /// through the row's status.
  template <std::size_t I, class P>
  detail::compute_t<value_type> at(const P& p, std::int64_t i) const {
    using C = detail::compute_t<Common>;
    const C x = detail::convert<C>(a.template at<I>(p, i));
    const C y = detail::convert<C>(b.template at<I + A::leaf_count>(p, i));
    return combine(x, y, p);
  }
  /// Elements [i0, i0 + n): both operands a chunk at a time, then the operation.
  template <std::size_t I, class P, class F>
  void eval_chunk(const P& p, std::int64_t i0, std::int64_t n, F* out) const {
    using C = detail::compute_t<Common>;
    if constexpr (!has_vmath) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(at<I>(p, i0 + j));
    } else {
      detail::chunk_buffer<C, detail::vchunk> x, y;
      detail::chunk_as<I>(a, p, i0, n, x.data);
      detail::chunk_as<I + A::leaf_count>(b, p, i0, n, y.data);
      if constexpr (detail::chunk_op2<Op, C> && std::is_same_v<F, C>) {
        Op::apply_chunk2(x.data, y.data, n);
        for (std::int64_t j = 0; j < n; ++j) out[j] = x.data[j];
      } else {
        for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(combine(x.data[j], y.data[j], p));
      }
    }
  }

 private:
  template <class C, class P>
  static detail::compute_t<value_type> combine(C x, C y, const P& p) {
    if constexpr (requires { Op::reports_errors; }) return Op::template apply<value_type>(x, y, *p.status);
    else return Op::template apply<value_type>(x, y);
  }

 public:
  /// Visits both operands' leaves.
  template <std::size_t I, class F>
  void for_each_leaf(F&& f) const {
    a.template for_each_leaf<I>(f);
    b.template for_each_leaf<I + A::leaf_count>(f);
  }
};

/// where(cond, x, y) with x and y converted to Common.
template <class Cond, class X, class Y, class Common>
struct where_expr : expression_base<where_expr<Cond, X, Y, Common>> {
  using value_type = Common;
  using leaf_types = typename detail::concat_all<typename Cond::leaf_types, typename X::leaf_types,
                                                 typename Y::leaf_types>::type;
  static constexpr std::size_t leaf_count = Cond::leaf_count + X::leaf_count + Y::leaf_count;
  static constexpr bool has_vmath = Cond::has_vmath || X::has_vmath || Y::has_vmath;
  Cond c;  ///< the condition
  X x;     ///< taken where c is true
  Y y;     ///< taken where c is false
  dim_vector shape;  ///< the broadcast shape
  /// The broadcast shape.
  int_list sizes() const noexcept { return shape; }
  /// Element i of the result.
  template <std::size_t I, class P>
  detail::compute_t<Common> at(const P& p, std::int64_t i) const {
    using C = detail::compute_t<Common>;
    // Both sides are computed (no branch) so that the loop stays vectorisable.
    const C vx = detail::convert<C>(x.template at<I + Cond::leaf_count>(p, i));
    const C vy = detail::convert<C>(y.template at<I + Cond::leaf_count + X::leaf_count>(p, i));
    return c.template at<I>(p, i) ? vx : vy;
  }
  /// Elements [i0, i0 + n), each operand a chunk at a time.
  template <std::size_t I, class P, class F>
  void eval_chunk(const P& p, std::int64_t i0, std::int64_t n, F* out) const {
    using C = detail::compute_t<Common>;
    if constexpr (!has_vmath) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(at<I>(p, i0 + j));
    } else {
      detail::chunk_buffer<detail::compute_t<typename Cond::value_type>, detail::vchunk> cb;
      detail::chunk_buffer<C, detail::vchunk> xb, yb;
      c.template eval_chunk<I>(p, i0, n, cb.data);
      detail::chunk_as<I + Cond::leaf_count>(x, p, i0, n, xb.data);
      detail::chunk_as<I + Cond::leaf_count + X::leaf_count>(y, p, i0, n, yb.data);
      for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(cb.data[j] ? xb.data[j] : yb.data[j]);
    }
  }
  /// Visits the leaves of c, x and y.
  template <std::size_t I, class F>
  void for_each_leaf(F&& f) const {
    c.template for_each_leaf<I>(f);
    x.template for_each_leaf<I + Cond::leaf_count>(f);
    y.template for_each_leaf<I + Cond::leaf_count + X::leaf_count>(f);
  }
};

/// cast<T>(a): converts like copy_ (rounding to T when T is half or bfloat16).
template <element T, class A>
struct cast_expr : expression_base<cast_expr<T, A>> {
  using value_type = T;
  using leaf_types = typename A::leaf_types;
  static constexpr std::size_t leaf_count = A::leaf_count;
  A a;  ///< the operand
  /// The operand's sizes.
  int_list sizes() const noexcept { return a.sizes(); }
  static constexpr bool has_vmath = A::has_vmath;
  /// Element i, converted.
  template <std::size_t I, class P>
  detail::compute_t<T> at(const P& p, std::int64_t i) const {
    using V = detail::compute_t<typename A::value_type>;
    return static_cast<detail::compute_t<T>>(detail::convert<T>(static_cast<V>(a.template at<I>(p, i))));
  }
  /// Elements [i0, i0 + n), converted.
  template <std::size_t I, class P, class F>
  void eval_chunk(const P& p, std::int64_t i0, std::int64_t n, F* out) const {
    using V = detail::compute_t<typename A::value_type>;
    if constexpr (!has_vmath) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<F>(at<I>(p, i0 + j));
    } else {
      detail::chunk_buffer<V, detail::vchunk> tmp;
      a.template eval_chunk<I>(p, i0, n, tmp.data);
      for (std::int64_t j = 0; j < n; ++j)
        out[j] = static_cast<F>(static_cast<detail::compute_t<T>>(detail::convert<T>(tmp.data[j])));
    }
  }
  /// Visits the operand's leaves.
  template <std::size_t I, class F>
  void for_each_leaf(F&& f) const { a.template for_each_leaf<I>(f); }
};
}  // namespace strata
