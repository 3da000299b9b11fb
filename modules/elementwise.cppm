// SPDX-License-Identifier: MIT
// Lazy element-wise expressions: tiny nodes holding tensor handles (and scalars) by value,
// with shape and dtype decided when built; assignment runs one fused loop.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
export module strata.expr:elementwise;
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
  /// Evaluates (recording) and runs backward from the result: sum(loss).backward().
  void backward(bool retain_graph = false) const { eval().backward(std::nullopt, retain_graph); }

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

namespace strata::detail {
// ---- what may appear in an expression ----
template <class T> struct is_tensor : std::false_type {};
template <class T> struct is_tensor<Tensor<T>> : std::true_type {};
template <class X>
concept node = requires { std::remove_cvref_t<X>::is_strata_expression; typename std::remove_cvref_t<X>::leaf_types; };
template <class X>
concept tensor_operand = is_tensor<std::remove_cvref_t<X>>::value;
template <class X>
concept scalar_operand = element<std::remove_cvref_t<X>> && !tensor_operand<X>;
/// A lazy reduction (strata.reduce): as an operand it is evaluated first, once, into a small
/// temporary that the element-wise loop then reads.
template <class X>
concept reduction_operand = requires { std::remove_cvref_t<X>::is_strata_reduction; };
template <class X>
concept operand = node<X> || tensor_operand<X> || scalar_operand<X> || reduction_operand<X>;
/// At least one side is a tensor or an expression (two scalars are plain C++).
template <class A, class B>
concept operands = operand<A> && operand<B> && !(scalar_operand<A> && scalar_operand<B>);

template <class X> struct node_of { using type = X; };
template <class T> struct node_of<Tensor<T>> { using type = leaf_expr<T>; };
template <class X>
  requires requires { X::is_strata_reduction; }
struct node_of<X> { using type = leaf_expr<typename X::value_type>; };
/// The node an operand becomes (a tensor becomes a leaf).
template <class X>
using node_t = typename node_of<std::remove_cvref_t<X>>::type;

/// An operand as a node: subexpressions that are temporaries are moved, not copied.
template <class X>
node_t<X> to_node(X&& x) {
  if constexpr (tensor_operand<X>) {
    const std::uint64_t v = x.storage().version();
    return leaf_expr<typename std::remove_cvref_t<X>::value_type>{{}, std::forward<X>(x), v};
  }
  else if constexpr (reduction_operand<X>) return leaf_expr<typename std::remove_cvref_t<X>::value_type>{{}, x.eval()};
  else return std::forward<X>(x);
}

/// The promoted operand type of a binary operation, by PyTorch's rules (scalars wrapped).
template <class A, class B>
struct common {
  using type = promote_t<typename node_t<A>::value_type, typename node_t<B>::value_type>;
};
template <class A, scalar_operand S>
  requires(!scalar_operand<A>)
struct common<A, S> { using type = promote_scalar_t<typename node_t<A>::value_type, S>; };
template <scalar_operand S, class B>
  requires(!scalar_operand<B>)
struct common<S, B> { using type = promote_scalar_t<typename node_t<B>::value_type, S>; };
/// Two scalars (only in where): each takes its category's default dtype, then they promote.
template <scalar_operand S1, scalar_operand S2>
struct common<S1, S2> {
  using type = type_of_t<promote_types(promote_with_scalar(dtype::bool_, category_of(dtype_v<S1>)),
                                       promote_with_scalar(dtype::bool_, category_of(dtype_v<S2>)))>;
};
template <class A, class B>
using common_t = typename common<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;

/// An operand as a node of an operation computing in Common: scalars are converted once, here.
template <class Common, class X>
auto operand_node(X&& x) {
  if constexpr (scalar_operand<X>) {
    // As PyTorch: the scalar is first cast to the operation's dtype (int8 + 1000 wraps,
    // half * 0.1 multiplies by 0.1 rounded to half), then computed with.
    return scalar_expr<compute_t<Common>>{{}, static_cast<compute_t<Common>>(convert<Common>(x))};
  } else {
    return to_node(std::forward<X>(x));
  }
}

/// The sizes of any operand (a scalar has none).
template <class X>
int_list sizes_of(const X& x) {
  if constexpr (scalar_operand<X>) return {};
  else return x.sizes();
}

// Children are built straight into the parent (one move per level, none for leaves).
template <class Op, class A, class B>
auto make_binary(A&& a, B&& b) {
  using C = common_t<A, B>;
  using NA = decltype(operand_node<C>(std::forward<A>(a)));
  using NB = decltype(operand_node<C>(std::forward<B>(b)));
  dim_vector shape = broadcast_shapes(sizes_of(a), sizes_of(b));
  return binary_expr<Op, NA, NB, C>{{}, operand_node<C>(std::forward<A>(a)), operand_node<C>(std::forward<B>(b)),
                                    std::move(shape)};
}

template <class Op, class A>
auto make_unary(A&& a) {
  return unary_expr<Op, node_t<A>>{{}, to_node(std::forward<A>(a))};
}

// ---- operations: result type and element kernel ----
template <class T> inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T> inline constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;
/// Unsigned arithmetic of at least 32 bits: wraps like PyTorch, without signed-overflow UB.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), std::uint32_t, std::make_unsigned_t<T>>;
template <class T> T wrap_add(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)); }
template <class T> T wrap_sub(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)); }
template <class T> T wrap_mul(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)); }

/// Operations whose result has the operand type.
struct same_type { template <class T> using result_t = T; };
/// Operations giving bool (comparisons, logical operations).
struct to_bool { template <class T> using result_t = bool; };
/// Float-valued functions: integers and bool give the default float dtype.
struct to_float { template <class T> using result_t = std::conditional_t<std::is_integral_v<T>, float, T>; };

struct add_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    if constexpr (is_bool_v<C>) return a || b;
    else if constexpr (is_int_v<C>) return wrap_add(a, b);
    else return a + b;
  }
};
struct sub_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    if constexpr (is_int_v<C>) return wrap_sub(a, b);
    else return a - b;
  }
};
struct mul_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    if constexpr (is_bool_v<C>) return a && b;
    else if constexpr (is_int_v<C>) return wrap_mul(a, b);
    else return a * b;
  }
};
/// True division: integers divide as float32.
struct div_op {
  template <class T> using result_t = type_of_t<true_divide_type(dtype_v<T>)>;
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    using F = compute_t<R>;
    return static_cast<F>(a) / static_cast<F>(b);
  }
};
struct maximum_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    // NaN propagates: a NaN a stays (a < b is false), a NaN b is taken. A select the
    // compiler vectorises, so amax runs as fast as sum.
    if constexpr (std::is_floating_point_v<C>) return (a < b || b != b) ? b : a;
    else return a < b ? b : a;
  }
};
struct minimum_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) return (b < a || b != b) ? b : a;
    else return b < a ? b : a;
  }
};
/// C's fmod: the remainder has the sign of the dividend.
struct fmod_op : same_type {
  static constexpr bool reports_errors = true;
  template <class R, class C> static compute_t<R> apply(C a, C b, loop_status& st) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) { st.zero_division(); return 0; }
      if (b == C(-1)) return 0;  // avoids INT_MIN % -1
      return static_cast<C>(a % b);
    } else {
      using std::fmod;
      return fmod(a, b);
    }
  }
};
/// Python's %: the remainder has the sign of the divisor.
struct remainder_op : same_type {
  static constexpr bool reports_errors = true;
  template <class R, class C> static compute_t<R> apply(C a, C b, loop_status& st) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) { st.zero_division(); return 0; }
      if (b == C(-1)) return 0;
      C r = static_cast<C>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      return r;
    } else {
      using std::fmod;
      C r = fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
/// Python's //: division rounded toward negative infinity.
struct floor_divide_op : same_type {
  static constexpr bool reports_errors = true;
  template <class R, class C> static compute_t<R> apply(C a, C b, loop_status& st) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) { st.zero_division(); return 0; }
      if (b == C(-1)) return wrap_sub(C(0), a);  // avoids INT_MIN / -1
      C q = static_cast<C>(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<C>(q - 1);
      return q;
    } else {
      using std::fmod;
      using std::floor;
      if (b == 0) return a / b;
      const C mod = fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
      if (div == 0) return std::copysign(C(0), a / b);
      const C fl = floor(div);
      return div - fl > C(0.5) ? fl + 1 : fl;
    }
  }
};
struct pow_op : same_type {
  /// The array form for float and double: SLEEF's 1-ulp pow.
  template <class F>
    requires(std::is_same_v<F, float> || std::is_same_v<F, double>)
  static void apply_chunk2(F* x, const F* e, std::int64_t n) { vpow(x, e, x, n); }
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    if constexpr (is_bool_v<C>) {
      return a || !b;
    } else if constexpr (is_int_v<C>) {
      if (b < 0) return a == 1 ? C(1) : (a == C(-1) ? ((b & 1) ? C(-1) : C(1)) : C(0));
      C result = 1;
      C base = a;
      for (auto e = static_cast<std::uint64_t>(b); e; e >>= 1) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    } else {
      using std::pow;
      return pow(a, b);
    }
  }
};
struct bitwise_and_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) { return static_cast<C>(a & b); }
};
struct bitwise_or_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) { return static_cast<C>(a | b); }
};
struct bitwise_xor_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) { return static_cast<C>(a ^ b); }
};
struct logical_and_op : to_bool {
  template <class R, class C> static bool apply(C a, C b) { return a != C(0) && b != C(0); }
};
struct logical_or_op : to_bool {
  template <class R, class C> static bool apply(C a, C b) { return a != C(0) || b != C(0); }
};
struct eq_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a == b; } };
struct ne_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a != b; } };
struct lt_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a < b; } };
struct le_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a <= b; } };
struct gt_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a > b; } };
struct ge_op : to_bool { template <class R, class C> static bool apply(C a, C b) { return a >= b; } };

template <class T> struct complex_value { using type = T; };
template <class T> struct complex_value<std::complex<T>> { using type = T; };

// Unary operations: apply<R>(x) gets x in the operand's compute type.
struct neg_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (is_int_v<X>) return wrap_sub(X(0), x);
    else return -x;
  }
};
/// |x|; complex gives its (real) magnitude.
struct abs_op {
  template <class T> using result_t = std::conditional_t<is_complex_v<T>, typename complex_value<T>::type, T>;
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (is_int_v<X>) return x < 0 ? wrap_sub(X(0), x) : x;
    else { using std::abs; return abs(x); }
  }
};

/// The logistic function in the stable form (no overflow of e^-x for large negative x).
template <class F>
F sigmoid_of(F x) {
  using std::exp;
  const F e = exp(-(x < F(0) ? -x : x));
  const F r = F(1) / (F(1) + e);
  return x >= F(0) ? r : e * r;
}

/// Square root: the IEEE instruction for float and double (no errno, so it vectorises).
template <class F>
F root(F x) {
  if constexpr (std::is_same_v<F, float> || std::is_same_v<F, double>) return __builtin_elementwise_sqrt(x);
  else { using std::sqrt; return sqrt(x); }
}

#define STRATA_FLOAT_UNARY(NAME, EXPR, ...)                                     \
  struct NAME##_op : to_float {                                                 \
    template <class R, class X> static compute_t<R> apply(X x0) {               \
      using F = compute_t<R>;                                                   \
      const F x = static_cast<F>(x0);                                           \
      using std::exp; using std::expm1; using std::log; using std::log1p;       \
      using std::sqrt; using std::sin; using std::cos; using std::tan;          \
      using std::tanh; using std::log2; using std::log10; using std::exp2;      \
      using std::erf; using std::erfc;                                          \
      return EXPR;                                                              \
    }                                                                           \
    __VA_ARGS__                                                                 \
  };
// The array form: SLEEF's 1-ulp vector functions over a chunk (float and double).
#define STRATA_VMATH(FN) \
  template <class F> requires(std::is_same_v<F, float> || std::is_same_v<F, double>) \
  static void apply_chunk(const F* x, F* y, std::int64_t n) { vmath(vfn::FN, x, y, n); }
STRATA_FLOAT_UNARY(exp, exp(x), STRATA_VMATH(exp))
STRATA_FLOAT_UNARY(expm1, expm1(x), STRATA_VMATH(expm1))
STRATA_FLOAT_UNARY(log, log(x), STRATA_VMATH(log))
STRATA_FLOAT_UNARY(log1p, log1p(x), STRATA_VMATH(log1p))
STRATA_FLOAT_UNARY(sin, sin(x), STRATA_VMATH(sin))
STRATA_FLOAT_UNARY(cos, cos(x), STRATA_VMATH(cos))
STRATA_FLOAT_UNARY(tan, tan(x), STRATA_VMATH(tan))
STRATA_FLOAT_UNARY(tanh, tanh(x), STRATA_VMATH(tanh))
// 1 / (1 + e^-x) in the stable form: with e = e^-|x|, 1 / (1 + e) for x >= 0 and e / (1 + e)
// below (so large negative x does not underflow to 0 through an overflowing e^-x).
STRATA_FLOAT_UNARY(sigmoid, sigmoid_of(x),
  template <class F> requires(std::is_same_v<F, float> || std::is_same_v<F, double>)
  static void apply_chunk(const F* x, F* y, std::int64_t n) {
    chunk_buffer<F, vchunk> e;
    for (std::int64_t i = 0; i < n; ++i) e.data[i] = -(x[i] < F(0) ? -x[i] : x[i]);
    vmath(vfn::exp, e.data, e.data, n);
    for (std::int64_t i = 0; i < n; ++i) {
      const F r = F(1) / (F(1) + e.data[i]);
      y[i] = x[i] >= F(0) ? r : e.data[i] * r;
    }
  })
// sqrt is one instruction: without errno (which blocks vectorising std::sqrt) it vectorises.
STRATA_FLOAT_UNARY(sqrt, root(x), )
STRATA_FLOAT_UNARY(rsqrt, F(1) / root(x), )
STRATA_FLOAT_UNARY(log2, log2(x), )
STRATA_FLOAT_UNARY(log10, log10(x), )
STRATA_FLOAT_UNARY(exp2, exp2(x), )
STRATA_FLOAT_UNARY(erf, erf(x), )
STRATA_FLOAT_UNARY(erfc, erfc(x), )
#undef STRATA_VMATH
#undef STRATA_FLOAT_UNARY

struct relu_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) { return x > X(0) ? x : (x != x ? x : X(0)); }
};
struct floor_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (std::is_integral_v<X>) return x;
    else { using std::floor; return floor(x); }
  }
};
struct ceil_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (std::is_integral_v<X>) return x;
    else { using std::ceil; return ceil(x); }
  }
};
/// Rounds half to even, as torch.round.
struct round_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (std::is_integral_v<X>) return x;
    else if constexpr (std::is_floating_point_v<X>) return std::nearbyint(x);
    else {  // float128: round half to even by hand
      using std::floor;
      const X f = floor(x);
      const X diff = x - f;
      if (diff > X(0.5)) return f + 1;
      if (diff < X(0.5)) return f;
      using std::fmod;
      return fmod(f, X(2)) == 0 ? f : f + 1;
    }
  }
};
struct sign_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (is_bool_v<X>) return x;
    else return static_cast<X>((X(0) < x) - (x < X(0)));
  }
};
struct logical_not_op : to_bool {
  template <class R, class X> static bool apply(X x) { return x == X(0); }
};
struct bitwise_not_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (is_bool_v<X>) return !x;
    else return static_cast<X>(~x);
  }
};

struct trunc_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (std::is_integral_v<X>) return x;
    else { using std::trunc; return trunc(x); }
  }
};
/// The complex conjugate (real values unchanged).
struct conj_op : same_type {
  template <class R, class X> static compute_t<R> apply(X x) {
    if constexpr (is_complex_v<X>) return std::conj(x);
    else return x;
  }
};
/// min(max(x, lo), hi) with NaN propagating (lo > hi gives hi, as PyTorch).
template <class C>
struct clamp_op : same_type {
  C lo, hi;
  template <class R, class X> compute_t<R> apply(X x) const {
    const X a = maximum_op::apply<R>(x, static_cast<X>(lo));
    return minimum_op::apply<R>(a, static_cast<X>(hi));
  }
};

// ---- classification, special functions and shifts ----
/// NaN (a complex value is NaN when either part is).
template <class X>
bool nan_of(X x) {
  if constexpr (is_complex_v<X>) return x.real() != x.real() || x.imag() != x.imag();
  else if constexpr (std::is_integral_v<X>) return false;
  else return x != x;
}
/// Infinite (either part of a complex value).
template <class X>
bool inf_of(X x) {
  if constexpr (is_complex_v<X>) return inf_of(x.real()) || inf_of(x.imag());
  else if constexpr (std::is_integral_v<X>) return false;
  else return x == std::numeric_limits<X>::infinity() || x == -std::numeric_limits<X>::infinity();
}
struct isnan_op : to_bool {
  template <class R, class X> static bool apply(X x) { return nan_of(x); }
};
struct isinf_op : to_bool {
  template <class R, class X> static bool apply(X x) { return inf_of(x); }
};
struct isfinite_op : to_bool {
  template <class R, class X> static bool apply(X x) { return !nan_of(x) && !inf_of(x); }
};
struct isposinf_op : to_bool {
  template <class R, class X> static bool apply(X x) {
    if constexpr (std::is_integral_v<X>) return false;
    else return x == std::numeric_limits<X>::infinity();
  }
};
struct isneginf_op : to_bool {
  template <class R, class X> static bool apply(X x) {
    if constexpr (std::is_integral_v<X>) return false;
    else return x == -std::numeric_limits<X>::infinity();
  }
};
/// NaN, +inf and -inf replaced by given values (each part of a complex value; integers unchanged).
template <class F>
struct nan_to_num_op : same_type {
  F nan, posinf, neginf;
  template <class X> X part(X x) const {
    if (x != x) return static_cast<X>(nan);
    if (x == std::numeric_limits<X>::infinity()) return static_cast<X>(posinf);
    if (x == -std::numeric_limits<X>::infinity()) return static_cast<X>(neginf);
    return x;
  }
  template <class R, class X> compute_t<R> apply(X x) const {
    if constexpr (std::is_integral_v<X>) return x;
    else if constexpr (is_complex_v<X>) return X(part(x.real()), part(x.imag()));
    else return part(x);
  }
};
/// (1 / beta) log(1 + e^(beta x)), and x itself where beta x > threshold (PyTorch's softplus).
template <class F>
struct softplus_op : same_type {
  F beta, threshold;
  template <class R, class X> compute_t<R> apply(X x) const {
    using std::exp; using std::log1p;
    const X bx = x * static_cast<X>(beta);
    return bx > static_cast<X>(threshold) ? x : log1p(exp(bx)) / static_cast<X>(beta);
  }
};
/// GELU: x Phi(x) (exact, through erf) or PyTorch's tanh approximation.
struct gelu_op : same_type {
  bool tanh_form = false;
  template <class R, class X> compute_t<R> apply(X x) const {
    using std::erf; using std::tanh;
    if (tanh_form) {
      const X k_beta = X(0.7978845608028654), k_kappa = X(0.044715);  // sqrt(2 / pi)
      return X(0.5) * x * (X(1) + tanh(k_beta * (x + k_kappa * x * x * x)));
    }
    return x * X(0.5) * (X(1) + erf(x * X(0.7071067811865476)));  // 1 / sqrt(2)
  }
};
/// GELU's derivative (PyTorch's GeluBackward formulas; not differentiated further).
struct gelu_grad_op : same_type {
  bool tanh_form = false;
  template <class R, class X> compute_t<R> apply(X x) const {
    using std::erf; using std::exp; using std::tanh;
    if (tanh_form) {
      const X k_beta = X(0.7978845608028654), k_kappa = X(0.044715);
      const X inner = k_beta * (x + k_kappa * x * x * x);
      const X t = tanh(inner);
      const X left = X(0.5) * x, right = X(1) + t;
      const X d_inner = k_beta * (X(1) + X(3) * k_kappa * x * x);
      return X(0.5) * right + left * (X(1) - t * t) * d_inner;
    }
    const X cdf = X(0.5) * (X(1) + erf(x * X(0.7071067811865476)));
    const X pdf = exp(X(-0.5) * x * x) * X(0.3989422804014327);  // 1 / sqrt(2 pi)
    return cdf + x * pdf;
  }
};
/// log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps >= 0 (PyTorch's logit).
struct logit_op : to_float {
  double eps = -1;
  template <class R, class X> compute_t<R> apply(X x) const {
    using F = compute_t<R>;
    F z = static_cast<F>(x);
    if (eps >= 0) {
      const F lo = static_cast<F>(eps), hi = static_cast<F>(1 - eps);
      z = z < lo ? lo : (z > hi ? hi : z);
    }
    using std::log;
    return log(z / (F(1) - z));
  }
};
struct hypot_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) { using std::hypot; return hypot(a, b); }
};
struct atan2_op : to_float {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    using F = compute_t<R>;
    using std::atan2;
    return atan2(static_cast<F>(a), static_cast<F>(b));
  }
};
struct copysign_op : to_float {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    using F = compute_t<R>;
    using std::copysign;
    return copysign(static_cast<F>(a), static_cast<F>(b));
  }
};
/// a << b; shifts outside [0, bits) give 0 (defined here, unlike C++).
struct lshift_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    constexpr C bits = static_cast<C>(8 * sizeof(R));
    if (b < C(0) || b >= bits) return C(0);
    return static_cast<C>(static_cast<wrap_t<C>>(a) << b);
  }
};
/// a >> b (arithmetic for signed types); shifts outside [0, bits) fill with the sign.
struct rshift_op : same_type {
  template <class R, class C> static compute_t<R> apply(C a, C b) {
    constexpr C bits = static_cast<C>(8 * sizeof(R));
    if (b < C(0) || b >= bits) return a < C(0) ? C(-1) : C(0);
    return static_cast<C>(a >> b);
  }
};

// ---- the assignment funnel ----
// What does not depend on the expression (shape and overlap checks, the loop's operands and
// plan) is compiled once, in src/assign.cpp: a user's translation unit instantiates only the
// leaves' views, the kernel and the calls below.
/// A tensor as the funnel sees it, whatever its element type.
struct leaf_view {
  const storage* store;
  int_list sizes;
  int_list strides;
  std::int64_t offset;
  char* data;
  std::int64_t itemsize;
  std::uint64_t version = unversioned;  ///< the storage's version when the expression was built
};
template <element T>
leaf_view view_of(const Tensor<T>& t) {
  return leaf_view{&t.storage(), t.sizes(), t.strides(), t.storage_offset(), reinterpret_cast<char*>(t.data_ptr()),
                   sizeof(T)};
}
/// Collects an expression's leaves as views, with the versions they were built at.
struct leaf_collector {
  static constexpr bool with_version = true;
  leaf_view* leaves;
  template <std::size_t I, class T>
  void operator()(const Tensor<T>& t, std::uint64_t version) const {
    leaves[I] = view_of(t);
    leaves[I].version = version;
  }
  template <std::size_t I, class T>
  void operator()(const Tensor<T>& t) const { leaves[I] = view_of(t); }
};
/// Sets ops[k + 1] and layouts[k + 1] to leaf k broadcast to sizes (which the caller has
/// checked they broadcast to), k < count; true when every leaf is contiguous with exactly sizes.
bool broadcast_leaves(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops, layout* layouts);
/// The loop of dst = e, unless it must go through a temporary.
struct assign_plan {
  loop_plan plan;      ///< operand 0 dst, then the leaves (when not via_temporary)
  bool via_temporary;  ///< a leaf overlaps dst so that the result must be evaluated first
};
/// Prepares dst = e for an expression of sizes e_sizes with these leaves: checks that e
/// broadcasts to dst's shape and that dst may be written, sets ops and layouts as
/// broadcast_leaves does, and plans the loop (returned, not assigned: a loop_plan moved is a
/// copy of its inline buffers).
assign_plan prepare_assign(const leaf_view& dst, int_list e_sizes, const leaf_view* leaves, std::size_t count,
                           loop_operand* ops, layout* layouts);
/// The element strides of a fresh output of sizes for these leaves (their memory order); sets
/// ops[1..count] and layouts as broadcast_leaves does, and *contiguous to its result.
dim_vector prepare_fresh(int_list sizes, const leaf_view* leaves, std::size_t count, loop_operand* ops,
                         layout* layouts, bool* contiguous);
/// The loop of out = e into out, a fresh tensor laid out by prepare_fresh (ops[0] is set here).
loop_plan plan_fresh(const leaf_view& out, bool contiguous, loop_operand* ops, std::size_t count);

/// The leaves of e as views and as loop operands (operand 0 is the output).
template <class E>
struct leaf_operands {
  static constexpr std::size_t count = E::leaf_count;
  leaf_view leaves[count > 0 ? count : 1];
  loop_operand ops[count + 1];
  layout layouts[count + 1];  // each leaf's view broadcast to the loop's sizes

  explicit leaf_operands(const E& e) { e.template for_each_leaf<0>(leaf_collector{leaves}); }
  /// ... broadcast to sizes (a reduction's input shape).
  leaf_operands(const E& e, int_list sizes) : leaf_operands(e) { broadcast_leaves(sizes, leaves, count, ops, layouts); }
  leaf_operands(const leaf_operands&) = delete;  // ops point into this object
};

/// A fresh tensor holding e, laid out in its inputs' memory order (not recorded).
template <element O, class E>
Tensor<O> eval_unrecorded(const E& e) {
  leaf_operands<E> ls(e);
  bool contiguous = false;
  const dim_vector strides = prepare_fresh(e.sizes(), ls.leaves, ls.count, ls.ops, ls.layouts, &contiguous);
  Tensor<O> out(storage::allocate<O>(numel_of(e.sizes()), init::uninitialized), e.sizes(), strides, 0);
  run_kernel<O>(plan_fresh(view_of(out), contiguous, ls.ops, ls.count), e);
  return out;
}
/// A fresh tensor holding e, recorded for autograd when e's leaves require grad.
template <element O, class E>
Tensor<O> eval_fresh(const E& e) {
  Tensor<O> out = eval_unrecorded<O>(e);
  record(e, out);
  return out;
}

/// The view of a tensor, as the overlap analysis reads it.
template <element T>
layout layout_of(const Tensor<T>& t) {
  return layout{t.sizes().vec(), t.strides().vec(), t.storage_offset()};
}

/// dst = e: e broadcasts to dst's shape; overlapping memory never gives a wrong answer.
template <element O, class E>
void assign_into(const Tensor<O>& dst, const E& e) {
  leaf_operands<E> ls(e);
  const assign_plan a = prepare_assign(view_of(dst), e.sizes(), ls.leaves, ls.count, ls.ops, ls.layouts);
  if (a.via_temporary) {
    dst.copy_(eval_unrecorded<typename E::value_type>(e));  // (same-type copy_ is compiled once)
    return;
  }
  run_kernel<O>(a.plan, e);
}

template <class A, class B>
constexpr void require_ordered() {
  static_assert(!is_complex_v<common_t<A, B>>, "Ordering comparisons (<, <=, >, >=) are not defined for complex values.");
}
template <class A, class B>
constexpr void require_bitwise() {
  static_assert(std::is_integral_v<common_t<A, B>>, "Bitwise operators need integer or bool operands, as in PyTorch.");
}
}  // namespace strata::detail

export namespace strata {
/// A lazy element-wise expression or reduction (what `a + b`, `exp(x)` or `sum(x)` return).
template <class E>
concept expression = detail::lazy_expression<std::remove_cvref_t<E>>;

/// Evaluates an expression into a fresh tensor (laid out in its inputs' memory order).
template <expression E>
auto eval(const E& e) { return e.eval(); }
/// A tensor is already evaluated: the same handle (for generic code).
template <element T>
Tensor<T> eval(const Tensor<T>& t) { return t; }

// PyTorch's view functions (torch.diagonal, torch.transpose, ...): the methods of x as a
// tensor (an expression is evaluated first).
/// x.diagonal(offset, dim1, dim2).
template <tensor_like X>
auto diagonal(const X& x, std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) {
  return detail::as_tensor(x).diagonal(offset, dim1, dim2);
}
/// x.transpose(dim0, dim1).
template <tensor_like X>
auto transpose(const X& x, std::int64_t dim0, std::int64_t dim1) { return detail::as_tensor(x).transpose(dim0, dim1); }
/// x.t().
template <tensor_like X>
auto t(const X& x) { return detail::as_tensor(x).t(); }
/// x.permute(dims).
template <tensor_like X>
auto permute(const X& x, int_list dims) { return detail::as_tensor(x).permute(dims); }
/// x.reshape(sizes).
template <tensor_like X>
auto reshape(const X& x, int_list sizes) { return detail::as_tensor(x).reshape(sizes); }
/// x.flatten(start_dim, end_dim).
template <tensor_like X>
auto flatten(const X& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1) {
  return detail::as_tensor(x).flatten(start_dim, end_dim);
}
/// x.squeeze().
template <tensor_like X>
auto squeeze(const X& x) { return detail::as_tensor(x).squeeze(); }
/// x.squeeze(dim).
template <tensor_like X>
auto squeeze(const X& x, std::int64_t dim) { return detail::as_tensor(x).squeeze(dim); }
/// x.unsqueeze(dim).
template <tensor_like X>
auto unsqueeze(const X& x, std::int64_t dim) { return detail::as_tensor(x).unsqueeze(dim); }
/// x.narrow(dim, start, length).
template <tensor_like X>
auto narrow(const X& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  return detail::as_tensor(x).narrow(dim, start, length);
}
/// x.select(dim, index).
template <tensor_like X>
auto select(const X& x, std::int64_t dim, std::int64_t index) { return detail::as_tensor(x).select(dim, index); }
/// x.movedim(source, destination).
template <tensor_like X>
auto movedim(const X& x, std::int64_t source, std::int64_t destination) {
  return detail::as_tensor(x).movedim(source, destination);
}

// Arithmetic. `/` is true division (integers divide as float32).
/// a + b, broadcasting, with PyTorch's promotion.
template <class A, class B> requires detail::operands<A, B>
auto operator+(A&& a, B&& b) { return detail::make_binary<detail::add_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a - b (not for two bool operands, as in PyTorch).
template <class A, class B> requires detail::operands<A, B>
auto operator-(A&& a, B&& b) {
  static_assert(!std::is_same_v<detail::common_t<A, B>, bool>,
                "Subtraction, the `-` operator, with two bool tensors is not supported; use the ^ operator instead.");
  return detail::make_binary<detail::sub_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a * b.
template <class A, class B> requires detail::operands<A, B>
auto operator*(A&& a, B&& b) { return detail::make_binary<detail::mul_op>(std::forward<A>(a), std::forward<B>(b)); }
/// True division a / b: integer operands give float32.
template <class A, class B> requires detail::operands<A, B>
auto operator/(A&& a, B&& b) { return detail::make_binary<detail::div_op>(std::forward<A>(a), std::forward<B>(b)); }
/// -a.
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto operator-(A&& a) {
  static_assert(!std::is_same_v<typename detail::node_t<A>::value_type, bool>,
                "Negation, the `-` operator, on a bool tensor is not supported; use logical_not instead.");
  return detail::make_unary<detail::neg_op>(std::forward<A>(a));
}

// Comparisons give bool.
/// a == b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator==(A&& a, B&& b) { return detail::make_binary<detail::eq_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a != b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator!=(A&& a, B&& b) { return detail::make_binary<detail::ne_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a < b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator<(A&& a, B&& b) { detail::require_ordered<A, B>(); return detail::make_binary<detail::lt_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a <= b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator<=(A&& a, B&& b) { detail::require_ordered<A, B>(); return detail::make_binary<detail::le_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a > b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator>(A&& a, B&& b) { detail::require_ordered<A, B>(); return detail::make_binary<detail::gt_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a >= b element-wise (bool).
template <class A, class B> requires detail::operands<A, B>
auto operator>=(A&& a, B&& b) { detail::require_ordered<A, B>(); return detail::make_binary<detail::ge_op>(std::forward<A>(a), std::forward<B>(b)); }

// Bitwise (integers and bool) and logical operations.
/// a & b.
template <class A, class B> requires detail::operands<A, B>
auto operator&(A&& a, B&& b) { detail::require_bitwise<A, B>(); return detail::make_binary<detail::bitwise_and_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a | b.
template <class A, class B> requires detail::operands<A, B>
auto operator|(A&& a, B&& b) { detail::require_bitwise<A, B>(); return detail::make_binary<detail::bitwise_or_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a ^ b.
template <class A, class B> requires detail::operands<A, B>
auto operator^(A&& a, B&& b) { detail::require_bitwise<A, B>(); return detail::make_binary<detail::bitwise_xor_op>(std::forward<A>(a), std::forward<B>(b)); }
/// ~a (logical not for bool).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto operator~(A&& a) {
  static_assert(std::is_integral_v<typename detail::node_t<A>::value_type>, "Bitwise operators need integer or bool operands, as in PyTorch.");
  return detail::make_unary<detail::bitwise_not_op>(std::forward<A>(a));
}
/// a && b element-wise, on truthiness (bool).
template <class A, class B> requires detail::operands<A, B>
auto logical_and(A&& a, B&& b) { return detail::make_binary<detail::logical_and_op>(std::forward<A>(a), std::forward<B>(b)); }
/// a || b element-wise, on truthiness (bool).
template <class A, class B> requires detail::operands<A, B>
auto logical_or(A&& a, B&& b) { return detail::make_binary<detail::logical_or_op>(std::forward<A>(a), std::forward<B>(b)); }
/// !a element-wise (bool).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto logical_not(A&& a) { return detail::make_unary<detail::logical_not_op>(std::forward<A>(a)); }

// Binary functions.
/// Element-wise maximum (NaN propagates).
template <class A, class B> requires detail::operands<A, B>
auto maximum(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "maximum is not defined for complex values.");
  return detail::make_binary<detail::maximum_op>(std::forward<A>(a), std::forward<B>(b));
}
/// Element-wise minimum (NaN propagates).
template <class A, class B> requires detail::operands<A, B>
auto minimum(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "minimum is not defined for complex values.");
  return detail::make_binary<detail::minimum_op>(std::forward<A>(a), std::forward<B>(b));
}
/// C's fmod (sign of the dividend); integer division by zero throws.
template <class A, class B> requires detail::operands<A, B>
auto fmod(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "fmod is not defined for complex values.");
  return detail::make_binary<detail::fmod_op>(std::forward<A>(a), std::forward<B>(b));
}
/// Python's % (sign of the divisor); integer division by zero throws.
template <class A, class B> requires detail::operands<A, B>
auto remainder(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "remainder is not defined for complex values.");
  return detail::make_binary<detail::remainder_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a % b: Python's remainder (sign of the divisor), as PyTorch's Tensor.__mod__.
template <class A, class B> requires detail::operands<A, B>
auto operator%(A&& a, B&& b) { return remainder(std::forward<A>(a), std::forward<B>(b)); }
/// Python's // (rounds toward negative infinity); integer division by zero throws.
template <class A, class B> requires detail::operands<A, B>
auto floor_divide(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "floor_divide is not defined for complex values.");
  return detail::make_binary<detail::floor_divide_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a raised to b (tensor or scalar exponent); integers to negative scalar powers throw.
template <class A, class B> requires detail::operands<A, B>
auto pow(A&& a, B&& b) {
  using BD = std::remove_cvref_t<B>;
  if constexpr (detail::scalar_operand<B> && std::is_integral_v<BD> && std::is_integral_v<detail::common_t<A, B>> &&
                !std::is_same_v<BD, bool>) {
    if (b < 0) throw error("Integers to negative integer powers are not allowed.");
  }
  return detail::make_binary<detail::pow_op>(std::forward<A>(a), std::forward<B>(b));
}

// Unary functions.
#define STRATA_UNARY(NAME, OP, COMPLEX_OK)                                                        \
  template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)                   \
  auto NAME(A&& a) {                                                                         \
    static_assert(COMPLEX_OK || !detail::is_complex_v<typename detail::node_t<A>::value_type>,    \
                  #NAME " is not supported for complex values.");                                \
    return detail::make_unary<detail::OP>(std::forward<A>(a));                                                     \
  }
/// e^x (integers and bool give float32, as every float function below).
STRATA_UNARY(exp, exp_op, true)
/// e^x - 1, accurate near 0.
STRATA_UNARY(expm1, expm1_op, false)
/// Natural logarithm.
STRATA_UNARY(log, log_op, true)
/// log(1 + x), accurate near 0.
STRATA_UNARY(log1p, log1p_op, false)
/// Square root.
STRATA_UNARY(sqrt, sqrt_op, true)
/// 1 / sqrt(x).
STRATA_UNARY(rsqrt, rsqrt_op, false)
/// Sine.
STRATA_UNARY(sin, sin_op, true)
/// Cosine.
STRATA_UNARY(cos, cos_op, true)
/// Tangent.
STRATA_UNARY(tan, tan_op, true)
/// Hyperbolic tangent.
STRATA_UNARY(tanh, tanh_op, true)
/// 1 / (1 + e^-x).
STRATA_UNARY(sigmoid, sigmoid_op, false)
/// Rounds down (integers unchanged).
STRATA_UNARY(floor, floor_op, false)
/// Rounds up (integers unchanged).
STRATA_UNARY(ceil, ceil_op, false)
/// Rounds half to even, as torch.round (integers unchanged).
STRATA_UNARY(round, round_op, false)
/// -1, 0 or 1 in the input's type.
STRATA_UNARY(sign, sign_op, false)
/// Base-2 logarithm.
STRATA_UNARY(log2, log2_op, false)
/// Base-10 logarithm.
STRATA_UNARY(log10, log10_op, false)
/// 2^x.
STRATA_UNARY(exp2, exp2_op, false)
/// The error function.
STRATA_UNARY(erf, erf_op, false)
/// The complementary error function 1 - erf(x), accurate where erf(x) is near 1.
STRATA_UNARY(erfc, erfc_op, false)
/// True where x is NaN (bool; integers never are).
STRATA_UNARY(isnan, isnan_op, true)
/// True where x is +inf or -inf (either part of a complex value).
STRATA_UNARY(isinf, isinf_op, true)
/// True where x is neither NaN nor infinite.
STRATA_UNARY(isfinite, isfinite_op, true)
#undef STRATA_UNARY
/// |x| (complex gives the real magnitude; integers wrap at the minimum like PyTorch).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto abs(A&& a) {
  static_assert(!std::is_same_v<typename detail::node_t<A>::value_type, bool>, "abs is not supported for bool tensors.");
  return detail::make_unary<detail::abs_op>(std::forward<A>(a));
}
/// -x.
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto neg(A&& a) { return -std::forward<A>(a); }
/// max(x, 0) (NaN propagates).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto relu(A&& a) {
  using V = typename detail::node_t<A>::value_type;
  static_assert(!std::is_same_v<V, bool> && !detail::is_complex_v<V>, "relu needs a real, non-bool input.");
  return detail::make_unary<detail::relu_op>(std::forward<A>(a));
}
/// Converts an expression's elements to T (like copy_).
template <element T, class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto cast(A&& a) {
  auto na = detail::to_node(std::forward<A>(a));
  return cast_expr<T, decltype(na)>{{}, std::move(na)};
}

/// Clamps x to [lo, hi] (scalar bounds; NaN propagates; lo > hi gives hi, as PyTorch).
template <class A, class L, class H>
  requires(detail::operand<A> && !detail::scalar_operand<A> && detail::scalar_operand<L> && detail::scalar_operand<H>)
auto clamp(A&& x, L lo, H hi) {
  using V = typename detail::node_t<A>::value_type;
  using C = detail::common_t<scalar_expr<detail::common_t<A, L>>, H>;
  static_assert(!detail::is_complex_v<C>, "clamp is not defined for complex values.");
  using F = detail::compute_t<C>;
  const detail::clamp_op<F> op{{}, static_cast<F>(detail::convert<C>(lo)), static_cast<F>(detail::convert<C>(hi))};
  if constexpr (std::is_same_v<V, C>) {
    auto n = detail::to_node(std::forward<A>(x));
    return unary_expr<detail::clamp_op<F>, decltype(n)>{{}, std::move(n), op};
  } else {
    auto n = cast<C>(std::forward<A>(x));
    return unary_expr<detail::clamp_op<F>, decltype(n)>{{}, std::move(n), op};
  }
}
/// Clamps x to [lo, hi] where a bound is a tensor or an expression (broadcast with x):
/// minimum(maximum(x, lo), hi), so lo > hi gives hi and NaN propagates, as PyTorch.
template <class A, class L, class H>
  requires(detail::operand<A> && !detail::scalar_operand<A> && detail::operands<L, H> &&
           !(detail::scalar_operand<L> && detail::scalar_operand<H>))
auto clamp(A&& x, L&& lo, H&& hi) {
  return minimum(maximum(std::forward<A>(x), std::forward<L>(lo)), std::forward<H>(hi));
}
/// Rounds toward zero (integers unchanged).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto trunc(A&& a) {
  static_assert(!detail::is_complex_v<typename detail::node_t<A>::value_type>, "trunc is not supported for complex values.");
  return detail::make_unary<detail::trunc_op>(std::forward<A>(a));
}
/// The complex conjugate (real expressions unchanged).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto conj(A&& a) { return detail::make_unary<detail::conj_op>(std::forward<A>(a)); }

/// cond ? x : y element-wise; cond must be bool; x and y promote like a binary operation.
template <class C, class X, class Y>
  requires(detail::operand<C> && !detail::scalar_operand<C> && detail::operand<X> && detail::operand<Y>)
auto where(C&& cond, X&& x, Y&& y) {
  static_assert(std::is_same_v<typename detail::node_t<C>::value_type, bool>, "where() needs a bool condition.");
  using Common = detail::common_t<X, Y>;
  auto nc = detail::to_node(std::forward<C>(cond));
  auto nx = detail::operand_node<Common>(std::forward<X>(x));
  auto ny = detail::operand_node<Common>(std::forward<Y>(y));
  dim_vector shape = broadcast_shapes(nc.sizes(), nx.sizes(), ny.sizes());
  return where_expr<decltype(nc), decltype(nx), decltype(ny), Common>{
      {}, std::move(nc), std::move(nx), std::move(ny), std::move(shape)};
}

namespace detail {
template <class A>
constexpr void require_floating() {
  using V = typename node_t<A>::value_type;
  static_assert(!std::is_integral_v<V>, "This function needs a floating input (PyTorch: not implemented for integer "
                                        "or bool tensors): cast<float>() the input first.");
}
template <class A, class B>
constexpr void require_real_floating() {
  static_assert(!std::is_integral_v<common_t<A, B>> && !is_complex_v<common_t<A, B>>,
                "This function needs real floating operands (PyTorch: not implemented for integer, bool or complex "
                "tensors).");
}
}  // namespace detail

/// True where x is +inf (not for complex values).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto isposinf(A&& a) {
  static_assert(!detail::is_complex_v<typename detail::node_t<A>::value_type>, "isposinf does not support complex inputs.");
  return detail::make_unary<detail::isposinf_op>(std::forward<A>(a));
}
/// True where x is -inf (not for complex values).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto isneginf(A&& a) {
  static_assert(!detail::is_complex_v<typename detail::node_t<A>::value_type>, "isneginf does not support complex inputs.");
  return detail::make_unary<detail::isneginf_op>(std::forward<A>(a));
}
/// NaN, +inf and -inf replaced by nan, posinf and neginf (defaults: 0 and the dtype's largest
/// and lowest finite values, as PyTorch); integers are unchanged.
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto nan_to_num(A&& a, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                std::optional<double> neginf = std::nullopt) {
  using V = typename detail::node_t<A>::value_type;
  using P = typename detail::complex_value<V>::type;  // a part's type
  using F = typename detail::complex_value<detail::compute_t<V>>::type;
  const auto part = [](double v) { return static_cast<F>(detail::convert<P>(v)); };
  F hi{}, lo{};
  if constexpr (!std::is_integral_v<P>) {
    F largest = std::numeric_limits<F>::max();  // P's largest finite value
    if constexpr (std::is_same_v<P, half>) largest = F(65504);
    else if constexpr (std::is_same_v<P, bfloat16>) largest = F(3.3895313892515355e38);
    hi = posinf ? part(*posinf) : largest;
    lo = neginf ? part(*neginf) : -largest;
  }
  const detail::nan_to_num_op<F> op{{}, std::is_integral_v<P> ? F{} : part(nan), hi, lo};
  auto n = detail::to_node(std::forward<A>(a));
  return unary_expr<detail::nan_to_num_op<F>, decltype(n)>{{}, std::move(n), op};
}
/// PyTorch's softplus: log(1 + e^(beta x)) / beta, reverting to x where beta x > threshold.
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto softplus(A&& a, double beta = 1.0, double threshold = 20.0) {
  detail::require_floating<A>();
  using F = detail::compute_t<typename detail::node_t<A>::value_type>;
  static_assert(!detail::is_complex_v<F>, "softplus is not defined for complex values.");
  auto n = detail::to_node(std::forward<A>(a));
  return unary_expr<detail::softplus_op<F>, decltype(n)>{{}, std::move(n), {{}, static_cast<F>(beta), static_cast<F>(threshold)}};
}
/// GELU, x Phi(x); approximate = "tanh" uses PyTorch's tanh approximation.
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto gelu(A&& a, std::string_view approximate = "none") {
  detail::require_floating<A>();
  static_assert(!detail::is_complex_v<typename detail::node_t<A>::value_type>, "gelu is not defined for complex values.");
  if (approximate != "none" && approximate != "tanh") throw error("approximate argument must be either none or tanh.");
  auto n = detail::to_node(std::forward<A>(a));
  return unary_expr<detail::gelu_op, decltype(n)>{{}, std::move(n), {{}, approximate == "tanh"}};
}
/// SiLU (swish): x * sigmoid(x).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto silu(A&& a) {
  detail::require_floating<A>();
  auto n = detail::to_node(std::forward<A>(a));
  return n * sigmoid(n);
}
/// log(x / (1 - x)); with eps >= 0, x is first clamped to [eps, 1 - eps] and the gradient is 0
/// outside (PyTorch's logit; integers give float32).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto logit(A&& a, std::optional<double> eps = std::nullopt) {
  static_assert(!detail::is_complex_v<typename detail::node_t<A>::value_type>, "logit is not defined for complex values.");
  auto n = detail::to_node(std::forward<A>(a));
  return unary_expr<detail::logit_op, decltype(n)>{{}, std::move(n), {{}, eps ? *eps : -1.0}};
}
/// x * x (bool gives int64, as torch.square).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto square(A&& a) {
  if constexpr (std::is_same_v<typename detail::node_t<A>::value_type, bool>) {
    return cast<std::int64_t>(std::forward<A>(a));  // b * b == b
  } else {
    auto n = detail::to_node(std::forward<A>(a));
    return n * n;
  }
}
/// 1 / x (integers give float32).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto reciprocal(A&& a) { return 1 / std::forward<A>(a); }
/// The fractional part x - trunc(x), with x's sign (floating inputs).
template <class A> requires(detail::operand<A> && !detail::scalar_operand<A>)
auto frac(A&& a) {
  detail::require_floating<A>();
  auto n = detail::to_node(std::forward<A>(a));
  return n - trunc(n);
}
/// sqrt(a^2 + b^2) without overflow or underflow (real floating operands).
template <class A, class B> requires detail::operands<A, B>
auto hypot(A&& a, B&& b) {
  detail::require_real_floating<A, B>();
  return detail::make_binary<detail::hypot_op>(std::forward<A>(a), std::forward<B>(b));
}
/// The angle of the point (b, a), in (-pi, pi] (integers give float32).
template <class A, class B> requires detail::operands<A, B>
auto atan2(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "atan2 is not defined for complex values.");
  return detail::make_binary<detail::atan2_op>(std::forward<A>(a), std::forward<B>(b));
}
/// |a| with the sign of b (integers give float32).
template <class A, class B> requires detail::operands<A, B>
auto copysign(A&& a, B&& b) {
  static_assert(!detail::is_complex_v<detail::common_t<A, B>>, "copysign is not defined for complex values.");
  return detail::make_binary<detail::copysign_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a << b on integers (shifts outside [0, bits) give 0).
template <class A, class B> requires detail::operands<A, B>
auto bitwise_left_shift(A&& a, B&& b) {
  static_assert(detail::is_int_v<detail::common_t<A, B>>, "Shifts need integer operands, as in PyTorch.");
  return detail::make_binary<detail::lshift_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a >> b on integers, arithmetic for signed types (shifts outside [0, bits) fill with the sign).
template <class A, class B> requires detail::operands<A, B>
auto bitwise_right_shift(A&& a, B&& b) {
  static_assert(detail::is_int_v<detail::common_t<A, B>>, "Shifts need integer operands, as in PyTorch.");
  return detail::make_binary<detail::rshift_op>(std::forward<A>(a), std::forward<B>(b));
}
/// a << b: bitwise_left_shift.
template <class A, class B> requires detail::operands<A, B>
auto operator<<(A&& a, B&& b) { return bitwise_left_shift(std::forward<A>(a), std::forward<B>(b)); }
/// a >> b: bitwise_right_shift.
template <class A, class B> requires detail::operands<A, B>
auto operator>>(A&& a, B&& b) { return bitwise_right_shift(std::forward<A>(a), std::forward<B>(b)); }
/// start + weight * (end - start), in PyTorch's two-sided form (exact at weight 1).
template <tensor_like S, tensor_like E, class W> requires detail::scalar_operand<W>
auto lerp(const S& start_or_expr, const E& end_or_expr, W weight) {
  using T = detail::value_t<S>;
  static_assert(std::is_same_v<T, detail::value_t<E>>, "lerp: start and end must have the same dtype (as PyTorch).");
  static_assert(!std::is_integral_v<T>, "lerp needs floating tensors (PyTorch: not implemented for integers).");
  const Tensor<T> start = detail::as_tensor(start_or_expr), end = detail::as_tensor(end_or_expr);
  const double w = static_cast<double>(weight);
  // start + (end - start) w where |w| < 0.5, else end + (end - start)(w - 1): one expression type.
  const bool small = w < 0.5 && w > -0.5;
  return (small ? start : end) + (end - start) * (small ? w : w - 1);
}
/// lerp with a weight tensor (broadcast).
template <tensor_like S, tensor_like E, tensor_like W>
auto lerp(const S& start_or_expr, const E& end_or_expr, const W& weight_or_expr) {
  using T = detail::value_t<S>;
  static_assert(std::is_same_v<T, detail::value_t<E>> && std::is_same_v<T, detail::value_t<W>>,
                "lerp: start, end and weight must have the same dtype (as PyTorch).");
  static_assert(!std::is_integral_v<T>, "lerp needs floating tensors (PyTorch: not implemented for integers).");
  const Tensor<T> start = detail::as_tensor(start_or_expr), end = detail::as_tensor(end_or_expr),
                  weight = detail::as_tensor(weight_or_expr);
  return where(abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight));
}
/// input + value * t1 * t2.
template <class I, class A, class B, class S = int>
  requires(detail::operand<I> && detail::operand<A> && detail::operand<B> && detail::scalar_operand<S>)
auto addcmul(I&& input, A&& t1, B&& t2, S value = 1) {
  return std::forward<I>(input) + value * std::forward<A>(t1) * std::forward<B>(t2);
}
/// input + value * t1 / t2 (floating operands: PyTorch rejects integer addcdiv).
template <class I, class A, class B, class S = int>
  requires(detail::operand<I> && detail::operand<A> && detail::operand<B> && detail::scalar_operand<S>)
auto addcdiv(I&& input, A&& t1, B&& t2, S value = 1) {
  static_assert(!std::is_integral_v<detail::common_t<A, B>>,
                "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
                "a true division of tensor1 and tensor2.");
  return std::forward<I>(input) + value * std::forward<A>(t1) / std::forward<B>(t2);
}

/// PyTorch's can_cast: no cast to a lower category (complex to real, float to integer, to bool).
constexpr bool can_cast(dtype from, dtype to) noexcept { return category_of(from) <= category_of(to); }

// In-place operators follow PyTorch: the result must be castable to the destination.
#define STRATA_COMPOUND(OP, SYM)                                                                        \
  /** t SYM= e: t.assign(t SYM e), checked at compile time with can_cast. */                             \
  template <element T, class E> requires detail::operand<E>                                             \
  const Tensor<T>& operator OP(const Tensor<T>& t, const E& e) {                                         \
    auto expr = t SYM e;                                                                                 \
    static_assert(can_cast(dtype_v<typename decltype(expr)::value_type>, dtype_v<T>),                    \
                  "The result type of this in-place operation cannot be cast to the destination's dtype "  \
                  "(e.g. a float result into an integer tensor); use cast<T>() or an out-of-place op.");   \
    return t.assign(expr);                                                                               \
  }
STRATA_COMPOUND(+=, +)
STRATA_COMPOUND(-=, -)
STRATA_COMPOUND(*=, *)
STRATA_COMPOUND(/=, /)
STRATA_COMPOUND(&=, &)
STRATA_COMPOUND(|=, |)
STRATA_COMPOUND(^=, ^)
#undef STRATA_COMPOUND
}  // namespace strata

// ---- autograd: derivatives built from the node types ----
// A recorded expression keeps its tree (tensor handles and scalars, no intermediate values).
// Backward rebuilds it as a "ref tree" whose leaves read the loop's pointer for their position
// in the original tree, so that the tree, the upstream gradient and the tape's slots share one
// list of loop operands; the tape (below) is then built from the node types at compile time.
export namespace strata {
/// A leaf of a backward step: reads loop operand J (an input or a tape slot) wherever it sits.
template <element T, std::size_t J>
struct ref_leaf : expression_base<ref_leaf<T, J>> {
  using value_type = T;
  using leaf_types = detail::type_list<>;
  static constexpr std::size_t leaf_count = 0;
  dim_vector shape;  ///< the operand's sizes
  /// The operand's sizes.
  int_list sizes() const noexcept { return shape; }
  /// Element i of operand J.
  template <std::size_t I, class P>
  detail::compute_t<T> at(const P& p, std::int64_t i) const { return static_cast<detail::compute_t<T>>(detail::get<J>(p.ptrs)[i]); }
  /// No leaves of its own (the operands belong to the derivative's loop).
  template <std::size_t I, class F>
  void for_each_leaf(F&&) const {}
};

}  // namespace strata

namespace strata::detail {
/// No gradient flows this way (comparisons, floor, the condition of where, ...).
struct no_flow {};

/// x, conjugated when complex (PyTorch's gradients of complex functions use conj(f'(z))).
template <class X>
auto conj_of(const X& x) {
  if constexpr (is_complex_v<typename X::value_type>) return strata::conj(x);
  else return x;
}

// ---- the ref tree: leaf at position J reads operand J ----
template <std::size_t J, class T>
auto refify(const leaf_expr<T>& n) { return ref_leaf<T, J>{{}, n.t.sizes().vec()}; }
template <std::size_t J, class C>
auto refify(const scalar_expr<C>& n) { return n; }
template <std::size_t J, class Op, class A>
auto refify(const unary_expr<Op, A>& n);
template <std::size_t J, class T, class A>
auto refify(const cast_expr<T, A>& n);
template <std::size_t J, class Op, class A, class B, class C>
auto refify(const binary_expr<Op, A, B, C>& n);
template <std::size_t J, class Cd, class X, class Y, class C>
auto refify(const where_expr<Cd, X, Y, C>& n);

template <std::size_t J, class Op, class A>
auto refify(const unary_expr<Op, A>& n) {
  auto a = refify<J>(n.a);
  return unary_expr<Op, decltype(a)>{{}, std::move(a), n.op};
}
template <std::size_t J, class T, class A>
auto refify(const cast_expr<T, A>& n) {
  auto a = refify<J>(n.a);
  return cast_expr<T, decltype(a)>{{}, std::move(a)};
}
template <std::size_t J, class Op, class A, class B, class C>
auto refify(const binary_expr<Op, A, B, C>& n) {
  auto a = refify<J>(n.a);
  auto b = refify<J + A::leaf_count>(n.b);
  return binary_expr<Op, decltype(a), decltype(b), C>{{}, std::move(a), std::move(b), n.shape};
}
template <std::size_t J, class Cd, class X, class Y, class C>
auto refify(const where_expr<Cd, X, Y, C>& n) {
  auto c = refify<J>(n.c);
  auto x = refify<J + Cd::leaf_count>(n.x);
  auto y = refify<J + Cd::leaf_count + X::leaf_count>(n.y);
  return where_expr<decltype(c), decltype(x), decltype(y), C>{{}, std::move(c), std::move(x), std::move(y), n.shape};
}

// ---- the rules: the gradient of an operation's operand(s) given the output's, g ----
// PyTorch 1.13's derivatives.yaml, with the operands recomputed instead of saved.
template <class Op>
struct grad_rule {  // operations with no gradient: comparisons, logical and bitwise, rounding
  template <class N, class G> static no_flow da(const N&, const G&) { return {}; }
  template <class N, class G> static no_flow db(const N&, const G&) { return {}; }
};
template <> struct grad_rule<neg_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return -g; }
};
template <> struct grad_rule<conj_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return strata::conj(g); }
};
template <> struct grad_rule<abs_op> {  // sign(x), 0 at 0; x / |x| for complex
  template <class N, class G> static auto da(const N& n, const G& g) {
    if constexpr (is_complex_v<typename decltype(n.a)::value_type>)
      return g * where(strata::abs(n.a) == 0, 0, n.a / strata::abs(n.a));
    else
      return g * strata::sign(n.a);
  }
};
template <> struct grad_rule<exp_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * conj_of(strata::exp(n.a)); }
};
template <> struct grad_rule<expm1_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * strata::exp(n.a); }
};
template <> struct grad_rule<log_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g / conj_of(n.a); }
};
template <> struct grad_rule<log1p_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g / (n.a + 1); }
};
template <> struct grad_rule<sqrt_op> {  // inf at 0, as PyTorch
  template <class N, class G> static auto da(const N& n, const G& g) { return g / (conj_of(strata::sqrt(n.a)) * 2); }
};
template <> struct grad_rule<rsqrt_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * (strata::rsqrt(n.a) * strata::rsqrt(n.a) * strata::rsqrt(n.a)) * -0.5;
  }
};
template <> struct grad_rule<sin_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * conj_of(strata::cos(n.a)); }
};
template <> struct grad_rule<cos_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return -(g * conj_of(strata::sin(n.a))); }
};
template <> struct grad_rule<tan_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * conj_of(strata::tan(n.a) * strata::tan(n.a) + 1);
  }
};
template <> struct grad_rule<tanh_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * conj_of(1 - strata::tanh(n.a) * strata::tanh(n.a));
  }
};
template <> struct grad_rule<sigmoid_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * (strata::sigmoid(n.a) * (1 - strata::sigmoid(n.a)));
  }
};
template <> struct grad_rule<relu_op> {  // 0 at 0, as PyTorch's threshold_backward
  template <class N, class G> static auto da(const N& n, const G& g) { return where(n.a > 0, g, 0); }
};
template <class C> struct grad_rule<clamp_op<C>> {  // the closed interval [lo, hi] passes the gradient
  template <class N, class G> static auto da(const N& n, const G& g) {
    return where(logical_and(n.a >= n.op.lo, n.a <= n.op.hi), g, 0);
  }
};
template <> struct grad_rule<add_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return g; }
  template <class N, class G> static auto db(const N&, const G& g) { return g; }
};
template <> struct grad_rule<sub_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return g; }
  template <class N, class G> static auto db(const N&, const G& g) { return -g; }
};
template <> struct grad_rule<mul_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * conj_of(n.b); }
  template <class N, class G> static auto db(const N& n, const G& g) { return g * conj_of(n.a); }
};
template <> struct grad_rule<div_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g / conj_of(n.b); }
  template <class N, class G> static auto db(const N& n, const G& g) { return -(g * conj_of(n.a / n.b / n.b)); }
};
template <> struct grad_rule<maximum_op> {  // ties split the gradient in halves
  template <class N, class G> static auto da(const N& n, const G& g) { return where(n.a < n.b, 0, where(n.a == n.b, g * 0.5, g)); }
  template <class N, class G> static auto db(const N& n, const G& g) { return where(n.a > n.b, 0, where(n.a == n.b, g * 0.5, g)); }
};
template <> struct grad_rule<minimum_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return where(n.a > n.b, 0, where(n.a == n.b, g * 0.5, g)); }
  template <class N, class G> static auto db(const N& n, const G& g) { return where(n.a < n.b, 0, where(n.a == n.b, g * 0.5, g)); }
};
template <> struct grad_rule<pow_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return where(n.b == 0, 0, g * conj_of(n.b * strata::pow(n.a, n.b - 1)));
  }
  template <class N, class G> static auto db(const N& n, const G& g) {
    if constexpr (is_complex_v<typename N::common_type>)
      return g * conj_of(strata::pow(n.a, n.b) * strata::log(n.a));
    else
      return where(logical_and(n.a == 0, n.b >= 0), 0, g * (strata::pow(n.a, n.b) * strata::log(n.a)));
  }
};
template <> struct grad_rule<fmod_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return g; }
  template <class N, class G> static auto db(const N& n, const G& g) { return -(g * strata::trunc(n.a / n.b)); }
};
template <> struct grad_rule<remainder_op> {
  template <class N, class G> static auto da(const N&, const G& g) { return g; }
  template <class N, class G> static auto db(const N& n, const G& g) { return -(g * strata::floor(n.a / n.b)); }
};

template <> struct grad_rule<log2_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g / (n.a * 0.6931471805599453); }
};
template <> struct grad_rule<log10_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g / (n.a * 2.302585092994046); }
};
template <> struct grad_rule<exp2_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * (strata::exp2(n.a) * 0.6931471805599453); }
};
template <> struct grad_rule<erf_op> {  // 2 / sqrt(pi) e^(-x^2)
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * (strata::exp(-(n.a * n.a)) * 1.1283791670955126);
  }
};
template <> struct grad_rule<erfc_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * (strata::exp(-(n.a * n.a)) * -1.1283791670955126);
  }
};
template <class F> struct grad_rule<nan_to_num_op<F>> {
  template <class N, class G> static auto da(const N& n, const G& g) { return where(strata::isfinite(n.a), g, 0); }
};
template <class F> struct grad_rule<softplus_op<F>> {  // 1 where beta x > threshold, else sigmoid(beta x)
  template <class N, class G> static auto da(const N& n, const G& g) {
    return where(n.a * n.op.beta > n.op.threshold, g, g * strata::sigmoid(n.a * n.op.beta));
  }
};
template <> struct grad_rule<gelu_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * unary_expr<gelu_grad_op, std::remove_cvref_t<decltype(n.a)>>{{}, n.a, {{}, n.op.tanh_form}};
  }
};
template <> struct grad_rule<logit_op> {  // 1 / (x (1 - x)), 0 outside [eps, 1 - eps]
  template <class N, class G> static auto da(const N& n, const G& g) {
    const bool clamped = n.op.eps >= 0;
    const double lo = clamped ? n.op.eps : -std::numeric_limits<double>::infinity();
    const double hi = clamped ? 1 - n.op.eps : std::numeric_limits<double>::infinity();
    return where(logical_or(n.a < lo, n.a > hi), 0, g / (n.a * (1 - n.a)));
  }
};
template <> struct grad_rule<hypot_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * n.a / strata::hypot(n.a, n.b); }
  template <class N, class G> static auto db(const N& n, const G& g) { return g * n.b / strata::hypot(n.a, n.b); }
};
template <> struct grad_rule<atan2_op> {
  template <class N, class G> static auto da(const N& n, const G& g) { return g * n.b / (n.a * n.a + n.b * n.b); }
  template <class N, class G> static auto db(const N& n, const G& g) { return -(g * n.a) / (n.a * n.a + n.b * n.b); }
};
template <> struct grad_rule<copysign_op> {  // result / a, 0 where a is 0; none to b
  template <class N, class G> static auto da(const N& n, const G& g) {
    return where(n.a == 0, 0, g * (strata::copysign(n.a, n.b) / n.a));
  }
  template <class N, class G> static no_flow db(const N&, const G&) { return {}; }
};

/// Summation, as a reduction operation (the sum_to of a broadcast input's gradient; sum()).
struct sum_r {
  template <class A> static A identity() { return A(0); }
  template <class A> static A combine(A a, A b) { return add_op::apply<A>(a, b); }
};

// ---- the chunk tape: the whole backward of a tree, one chunk at a time ----
// A recorded tree is differentiated as a performance engineer would by hand: for each chunk
// of elements, a forward sweep evaluates every node that holds vector math once into a small
// buffer (a "slot"; plain arithmetic is recomputed where it is read), then a reverse sweep
// takes each node's adjoint to its children by the node's rule (grad_rule), reading the
// children's values from their slots. No transcendental is evaluated twice, no intermediate
// outlives the chunk, and every input's gradient comes out of the same sweep.
// Slots are numbered in pre-order, two per internal node (its value, then its adjoint); the
// step expressions read operands and slots through ref leaves (operand J, slot M + s).

template <class N> inline constexpr std::size_t slot_count = 0;  // ref leaves (inputs) and scalars
template <class Op, class A>
inline constexpr std::size_t slot_count<unary_expr<Op, A>> = 2 + slot_count<A>;
template <class T, class A>
inline constexpr std::size_t slot_count<cast_expr<T, A>> = 2 + slot_count<A>;
template <class Op, class A, class B, class C>
inline constexpr std::size_t slot_count<binary_expr<Op, A, B, C>> = 2 + slot_count<A> + slot_count<B>;
template <class Cd, class X, class Y, class C>
inline constexpr std::size_t slot_count<where_expr<Cd, X, Y, C>> = 2 + slot_count<Cd> + slot_count<X> + slot_count<Y>;

template <class N> inline constexpr bool is_scalar_node = false;
template <class C> inline constexpr bool is_scalar_node<scalar_expr<C>> = true;
template <class N> inline constexpr std::size_t ref_position = 0;
template <class T, std::size_t J> inline constexpr std::size_t ref_position<ref_leaf<T, J>> = J;
template <class N> struct binary_op;
template <class Op, class A, class B, class C> struct binary_op<binary_expr<Op, A, B, C>> { using type = Op; };

/// The type a node's value (and adjoint) is kept in.
template <class N>
using slot_t = compute_t<typename N::value_type>;

/// The element types of a tree's slots, in slot order.
template <class N> struct slot_types { using type = type_list<>; };
template <class Op, class A> struct slot_types<unary_expr<Op, A>> {
  using N = unary_expr<Op, A>;
  using type = typename concat<type_list<slot_t<N>, slot_t<N>>, typename slot_types<A>::type>::type;
};
template <class T, class A> struct slot_types<cast_expr<T, A>> {
  using N = cast_expr<T, A>;
  using type = typename concat<type_list<slot_t<N>, slot_t<N>>, typename slot_types<A>::type>::type;
};
template <class Op, class A, class B, class C> struct slot_types<binary_expr<Op, A, B, C>> {
  using N = binary_expr<Op, A, B, C>;
  using type = typename concat_all<type_list<slot_t<N>, slot_t<N>>, typename slot_types<A>::type,
                                   typename slot_types<B>::type>::type;
};
template <class Cd, class X, class Y, class C> struct slot_types<where_expr<Cd, X, Y, C>> {
  using N = where_expr<Cd, X, Y, C>;
  using type = typename concat_all<type_list<slot_t<N>, slot_t<N>>, typename slot_types<Cd>::type,
                                   typename slot_types<X>::type, typename slot_types<Y>::type>::type;
};

/// True when node N's value is kept in its slot: when its subtree holds vector math. Plain
/// arithmetic is cheaper to recompute inside each step that reads it than to pass through L1.
template <class N>
inline constexpr bool kept = slot_count<N> != 0 && uses_vmath<N>();

template <std::size_t M, std::size_t S, class Op, class A>
auto rebuilt(const unary_expr<Op, A>& n);
template <std::size_t M, std::size_t S, class T, class A>
auto rebuilt(const cast_expr<T, A>& n);
template <std::size_t M, std::size_t S, class Op, class A, class B, class C>
auto rebuilt(const binary_expr<Op, A, B, C>& n);
template <std::size_t M, std::size_t S, class Cd, class X, class Y, class C>
auto rebuilt(const where_expr<Cd, X, Y, C>& n);

/// What reads node n's value inside a step: n itself for an input or a scalar, its slot when
/// kept, else n recomputed from its children's readers (S: n's first slot; M: the number of
/// operands before the slots).
template <std::size_t M, std::size_t S, class N>
auto reader(const N& n) {
  if constexpr (slot_count<N> == 0) return n;
  else if constexpr (kept<N>) return ref_leaf<slot_t<N>, M + S>{{}, n.sizes().vec()};
  else return rebuilt<M, S>(n);
}
/// n with its children replaced by their readers (children's slots follow n's two).
template <std::size_t M, std::size_t S, class Op, class A>
auto rebuilt(const unary_expr<Op, A>& n) {
  auto a = reader<M, S + 2>(n.a);
  return unary_expr<Op, decltype(a)>{{}, std::move(a), n.op};
}
template <std::size_t M, std::size_t S, class T, class A>
auto rebuilt(const cast_expr<T, A>& n) {
  auto a = reader<M, S + 2>(n.a);
  return cast_expr<T, decltype(a)>{{}, std::move(a)};
}
template <std::size_t M, std::size_t S, class Op, class A, class B, class C>
auto rebuilt(const binary_expr<Op, A, B, C>& n) {
  auto a = reader<M, S + 2>(n.a);
  auto b = reader<M, S + 2 + slot_count<A>>(n.b);
  return binary_expr<Op, decltype(a), decltype(b), C>{{}, std::move(a), std::move(b), n.shape};
}
template <std::size_t M, std::size_t S, class Cd, class X, class Y, class C>
auto rebuilt(const where_expr<Cd, X, Y, C>& n) {
  auto c = reader<M, S + 2>(n.c);
  auto x = reader<M, S + 2 + slot_count<Cd>>(n.x);
  auto y = reader<M, S + 2 + slot_count<Cd> + slot_count<X>>(n.y);
  return where_expr<decltype(c), decltype(x), decltype(y), C>{{}, std::move(c), std::move(x), std::move(y), n.shape};
}

/// One step of a sweep: evaluate e into slot K, or (ToInput) into input position K's gradient.
template <class E, bool ToInput, std::size_t K, class W>
struct tape_step {
  using write_type = W;
  static constexpr bool to_input = ToInput;
  static constexpr std::size_t target = K;
  E e;
};

/// The forward sweep of n (first slot S): children first, then n into its value slot.
template <std::size_t M, std::size_t S, class N>
auto forward_steps(const N& n) {
  if constexpr (!kept<N>) {  // recomputed by its readers; below it, nothing is kept either
    return std::tuple<>{};
  } else {
    auto own = [&] {
      auto e = rebuilt<M, S>(n);
      return std::make_tuple(tape_step<decltype(e), false, S, slot_t<N>>{std::move(e)});
    };
    if constexpr (requires { n.c; }) {
      using Cd = decltype(n.c);
      using X = decltype(n.x);
      return std::tuple_cat(forward_steps<M, S + 2>(n.c), forward_steps<M, S + 2 + slot_count<Cd>>(n.x),
                            forward_steps<M, S + 2 + slot_count<Cd> + slot_count<X>>(n.y), own());
    } else if constexpr (requires { n.b; }) {
      return std::tuple_cat(forward_steps<M, S + 2>(n.a), forward_steps<M, S + 2 + slot_count<decltype(n.a)>>(n.b),
                            own());
    } else {
      return std::tuple_cat(forward_steps<M, S + 2>(n.a), own());
    }
  }
}

/// The operations in a step expression (ref leaves and scalars cost nothing).
template <class D> inline constexpr std::size_t op_count = 64;  // anything else: never inlined
template <class T, std::size_t J> inline constexpr std::size_t op_count<ref_leaf<T, J>> = 0;
template <class C> inline constexpr std::size_t op_count<scalar_expr<C>> = 0;
template <class Op, class A> inline constexpr std::size_t op_count<unary_expr<Op, A>> = 1 + op_count<A>;
template <class T, class A> inline constexpr std::size_t op_count<cast_expr<T, A>> = 1 + op_count<A>;
template <class Op, class A, class B, class C>
inline constexpr std::size_t op_count<binary_expr<Op, A, B, C>> = 1 + op_count<A> + op_count<B>;
template <class Cd, class X, class Y, class C>
inline constexpr std::size_t op_count<where_expr<Cd, X, Y, C>> = 1 + op_count<Cd> + op_count<X> + op_count<Y>;

/// True when an adjoint is passed on as an expression instead of through its node's slot: a
/// few operations without vector math (an add's or a cast's adjoint is its parent's; a scale
/// or a product with a leaf adds one operation), cheaper to recompute in each step below than
/// to store and load. Longer chains are cut by a slot once they exceed the bound.
template <class D>
inline constexpr bool inline_adjoint = op_count<D> <= 3 && !uses_vmath<D>();

template <std::size_t M, std::size_t S, class N, class G>
auto reverse_steps(const N& n, const G& g);

/// Sends adjoint d to child c (first slot S): into the gradient of input J when c is the ref
/// leaf of position J; into c's adjoint slot, or as an expression when inline_adjoint, followed
/// by c's own reverse steps; nothing for a scalar or no_flow.
template <std::size_t M, std::size_t S, class N, class D>
auto send(const N& c, D&& d) {
  using Dv = std::remove_cvref_t<D>;
  if constexpr (std::is_same_v<Dv, no_flow>) {
    return std::tuple<>{};
  } else if constexpr (is_scalar_node<N> || !differentiable_v<typename N::value_type>) {
    return std::tuple<>{};
  } else if constexpr (slot_count<N> == 0) {
    return std::make_tuple(tape_step<Dv, true, ref_position<N>, slot_t<N>>{std::forward<D>(d)});
  } else if constexpr (inline_adjoint<Dv>) {
    return reverse_steps<M, S>(c, d);
  } else {
    return std::tuple_cat(std::make_tuple(tape_step<Dv, false, S + 1, slot_t<N>>{std::forward<D>(d)}),
                          reverse_steps<M, S>(c, ref_leaf<slot_t<N>, M + S + 1>{{}, c.sizes().vec()}));
  }
}

/// The reverse sweep below n (first slot S), whose adjoint is g: n's rule sends it to each
/// child, and each child's subtree continues (parents before children).
template <std::size_t M, std::size_t S, class N, class G>
auto reverse_steps(const N& n, const G& g) {
  if constexpr (slot_count<N> == 0 || !differentiable_v<typename N::value_type>) {
    return std::tuple<>{};
  } else {
    const auto r = rebuilt<M, S>(n);
    if constexpr (requires { n.c; }) {  // where: nothing to the condition
      using Cd = decltype(n.c);
      using X = decltype(n.x);
      constexpr std::size_t sx = S + 2 + slot_count<Cd>, sy = sx + slot_count<X>;
      return std::tuple_cat(send<M, sx>(n.x, where(r.c, g, 0)), send<M, sy>(n.y, where(r.c, 0, g)));
    } else if constexpr (requires { n.b; }) {
      using Op = typename binary_op<N>::type;
      constexpr std::size_t sb = S + 2 + slot_count<decltype(n.a)>;
      return std::tuple_cat(send<M, S + 2>(n.a, grad_rule<Op>::da(r, g)), send<M, sb>(n.b, grad_rule<Op>::db(r, g)));
    } else if constexpr (requires { n.op; }) {
      using Op = std::remove_cvref_t<decltype(n.op)>;
      return send<M, S + 2>(n.a, grad_rule<Op>::da(r, g));
    } else {  // cast: the adjoint passes, rounded to the operand's type
      using Ta = typename std::remove_cvref_t<decltype(n.a)>::value_type;
      if constexpr (std::is_same_v<compute_t<Ta>, compute_t<typename G::value_type>>) return send<M, S + 2>(n.a, g);
      else return send<M, S + 2>(n.a, cast_expr<Ta, G>{{}, g});
    }
  }
}

/// Writes n <= tape_chunk elements of step e into out, converted to W.
template <class W, class E, class P>
void write_chunk(const E& e, const P& p, std::int64_t n, W* out) {
  using V = compute_t<typename E::value_type>;
  if constexpr (uses_vmath<E>()) {
    if constexpr (std::is_same_v<V, W>) {
      e.template eval_chunk<0>(p, 0, n, out);
    } else {
      chunk_buffer<V, vchunk> buf;
      e.template eval_chunk<0>(p, 0, n, buf.data);
      for (std::int64_t i = 0; i < n; ++i) out[i] = convert<W>(buf.data[i]);
    }
  } else if constexpr (std::is_trivially_copyable_v<W>) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = convert<W>(static_cast<V>(e.template at<0>(p, i)));
  } else {  // float128: out may be raw memory, construct in it (the values die with the chunk)
    static_assert(std::is_trivially_destructible_v<W>);
    for (std::int64_t i = 0; i < n; ++i) ::new (out + i) W(convert<W>(static_cast<V>(e.template at<0>(p, i))));
  }
}

/// Writes n <= tape_chunk elements of step e straight into a contiguous gradient of L
/// (assigning, or adding in L's compute type: the bits store_grad would give). The gradient
/// shares no memory with the operands (backprop_leaves copies any that would): `out` is
/// __restrict, so the loop is vectorised without run-time alias checks.
template <class L, class E, class P>
void write_grad(const E& e, const P& p, std::int64_t n, L* __restrict out, bool add) {
  using V = compute_t<typename E::value_type>;
  using C = compute_t<L>;
  if constexpr (uses_vmath<E>()) {
    chunk_buffer<V, vchunk> buf;
    e.template eval_chunk<0>(p, 0, n, buf.data);
    if (add) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = convert<L>(static_cast<C>(out[i]) + convert<C>(buf.data[i]));
    } else {
      for (std::int64_t i = 0; i < n; ++i) out[i] = convert<L>(convert<C>(buf.data[i]));
    }
  } else if (add) {
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = convert<L>(static_cast<C>(out[i]) + convert<C>(static_cast<V>(e.template at<0>(p, i))));
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = convert<L>(convert<C>(static_cast<V>(e.template at<0>(p, i))));
  }
}
/// The gradients a tape writes in place (grad_write): float and double.
template <class L>
inline constexpr bool direct_grad = std::is_same_v<L, float> || std::is_same_v<L, double>;

inline constexpr std::int64_t tape_chunk = 256;  ///< elements per sweep

/// A tree's sweeps, built once per backward: Fwd and Rev are tuples of tape_step; Ls are the
/// operands' element types, Ss the slots'.
template <class Fwd, class Rev, class Ls, class Ss>
struct tape;
template <class Fwd, class Rev, class... Ls, class... Ss>
struct tape<Fwd, Rev, type_list<Ls...>, type_list<Ss...>> {
  Fwd fwd;
  Rev rev;

  /// True when some step writes the gradient of input position J.
  template <std::size_t J>
  static constexpr bool reaches() {
    return []<std::size_t... K>(std::index_sequence<K...>) {
      return ((std::tuple_element_t<K, Rev>::to_input && std::tuple_element_t<K, Rev>::target == J) || ...);
    }(std::make_index_sequence<std::tuple_size_v<Rev>>{});
  }

  /// True when the steps write input positions' gradients in increasing position order (send
  /// visits a node's children left to right, each subtree whole, as refify numbers them).
  static constexpr bool writes_in_order() {
    return []<std::size_t... K>(std::index_sequence<K...>) {
      bool ordered = true;
      std::size_t next = 0;  // the lowest position the next write may have
      ((std::tuple_element_t<K, Rev>::to_input
            ? (ordered = ordered && std::tuple_element_t<K, Rev>::target >= next,
               next = std::tuple_element_t<K, Rev>::target + 1)
            : next),
       ...);
      return ordered;
    }(std::make_index_sequence<std::tuple_size_v<Rev>>{});
  }

  /// grad_tape_fn: in[k] holds n contiguous elements of operand k; outs[J] (when not null)
  /// receives n values of input position J's gradient, as how[J] says.
  static void run(const void* self, const char* const* in, std::int64_t n, void* const* outs, const grad_write* how,
                  loop_status* st) {
    const tape& t = *static_cast<const tape*>(self);
    pack<chunk_buffer<Ss, tape_chunk>...> slots;
    for (std::int64_t c = 0; c < n; c += tape_chunk) {
      const std::int64_t len = n - c < tape_chunk ? n - c : tape_chunk;
      [&]<std::size_t... L, std::size_t... K>(std::index_sequence<L...>, std::index_sequence<K...>) {
        const row_args<pack<const Ls*..., const Ss*...>> p{
            make_pack<const Ls*..., const Ss*...>(reinterpret_cast<const Ls*>(in[L]) + c..., get<K>(slots).data...), st};
        auto step = [&](const auto& s) {
          using S = std::remove_cvref_t<decltype(s)>;
          using W = typename S::write_type;
          if constexpr (S::to_input) {
            using G = typename leaf_at<S::target, type_list<Ls...>>::type;  // the gradient's type
            if (!outs[S::target]) return;
            if constexpr (direct_grad<G>) {
              if (how[S::target] != grad_write::buffer) {
                write_grad<G>(s.e, p, len, static_cast<G*>(outs[S::target]) + c, how[S::target] == grad_write::add);
                return;
              }
            }
            write_chunk<W>(s.e, p, len, static_cast<W*>(outs[S::target]) + c);
          } else {
            write_chunk<W>(s.e, p, len, get<S::target>(slots).data);
          }
        };
        std::apply([&](const auto&... s) { (step(s), ...); }, t.fwd);
        std::apply([&](const auto&... s) { (step(s), ...); }, t.rev);
      }(std::index_sequence_for<Ls...>{}, std::index_sequence_for<Ss...>{});
    }
  }
};

template <class L> struct tensor_tuple;
template <class... Ts> struct tensor_tuple<type_list<Ts...>> { using type = std::tuple<Tensor<Ts>...>; };

/// sum_to(gradient of input position `position`, sizes), as one fused reduction over the
/// recorded shape (the tape run for that position alone).
template <class T>
Tensor<T> grad_sum_to(const void* tree, grad_tape_fn run, std::size_t position, std::size_t positions,
                      const grad_inputs& in, std::span<const loop_operand> inputs, int_list full, int_list sizes) {
  using A = compute_t<T>;
  dim_vector keep(full.size(), 1);
  for (std::size_t j = 0; j < sizes.size(); ++j) keep[full.size() - sizes.size() + j] = sizes[j];
  Tensor<A> acc = empty<A>(keep);
  if (numel_of(full) == 0) {
    acc.fill_(A(0));
  } else if (acc.numel() > 0) {
    std::array<loop_operand, max_operands> ops;
    const dim_vector out_strides = broadcast_strides(acc.sizes(), acc.strides(), full);
    ops[0] = loop_operand{reinterpret_cast<char*>(acc.data_ptr()), out_strides, sizeof(A)};
    for (std::size_t k = 0; k < inputs.size(); ++k) ops[k + 1] = inputs[k];
    const reduction_kernels<sum_r, A, grad_values<A>> rk{{tree, run, position, positions, in}};
    reduce_execute(make_plan(full, std::span<const loop_operand>(ops.data(), inputs.size() + 1)), rk.erased());
  }
  if constexpr (std::is_same_v<A, T>) return acc.view(sizes);
  else return acc.template to<T>().view(sizes);
}

/// What every leaf of one backward shares: the tape and the operands it reads.
struct leaf_grad_pass {
  const void* tree;
  grad_tape_fn run;
  std::size_t positions;  ///< the tree's leaves
  grad_inputs in;
  std::span<const loop_operand> inputs;
  int_list full;  ///< the tree's shape
};

/// The gradient of the leaf at input position i into its slot. Nothing reaches it: zeros (if
/// the slot is empty). A broadcast leaf: one fused sum_to, now. A leaf of the tree's full
/// shape: true, and op/stride/target describe the gradient for the pass to write (assigned
/// into a fresh buffer, or added where the slot holds one or an earlier position wrote it).
/// A function of L alone, shared by every tree with such a leaf.
template <class L>
bool plan_leaf_grad(const Tensor<L>& leaf, grad_buffer& slot, std::size_t i, bool reaches, const leaf_grad_pass& pass,
                    std::span<grad_buffer*> written, loop_operand& op, dim_vector& stride, grad_target& target) {
  if (!reaches) {
    if (!slot.defined) autograd_access<Tensor<L>>::accumulate(slot, zeros<L>(leaf.sizes()));
    return false;
  }
  if constexpr (differentiable_v<L>) {
    if (!(leaf.sizes() == pass.full)) {
      autograd_access<Tensor<L>>::accumulate(
          slot, grad_sum_to<L>(pass.tree, pass.run, i, pass.positions, pass.in, pass.inputs, pass.full, leaf.sizes()));
      return false;
    }
    bool add = false;
    bool again = false;
    for (std::size_t j = 0; j < i; ++j) again = again || written[j] == &slot;
    if (again) {
      add = true;
    } else if (!slot.defined) {
      slot = autograd_access<Tensor<L>>::buffer(empty<L>(pass.full));
      slot.owned = true;
    } else {
      if (!slot.owned) {  // someone else's elements (a seed, a view's gradient): add into a copy
        slot = autograd_access<Tensor<L>>::buffer(autograd_access<Tensor<L>>::tensor(slot).clone());
        slot.owned = true;
      }
      add = true;
    }
    written[i] = &slot;
    const Tensor<L> out = autograd_access<Tensor<L>>::tensor(slot);
    out.storage().bump_version();
    stride = out.strides().vec();
    op = loop_operand{reinterpret_cast<char*>(out.data_ptr()), stride, sizeof(L)};
    target = grad_target{i, &store_grad<L>, static_cast<std::int64_t>(sizeof(compute_t<L>)), add, sizeof(L),
                         direct_grad<L>};
    return true;
  } else {
    return false;  // reaches is false for every leaf that is not differentiable
  }
}

/// Sends the gradients of e's leaves to their slots. de, built by make_de(reader of e's
/// value, ref leaves of the extra tensors), is the gradient reaching e's root. Inputs with
/// e's full shape are written by one walk over it (one tape sweep per chunk for all of them);
/// each broadcast input by one fused sum_to whose values come from the same tape.
template <class E, class... Xs, class MakeDe>
void backprop_leaves(const E& e, backward_context& ctx, const std::tuple<Tensor<Xs>...>& extra, MakeDe make_de) {
  constexpr std::size_t N = E::leaf_count;
  constexpr std::size_t M = N + sizeof...(Xs);
  using all_leaves = typename concat<typename E::leaf_types, type_list<Xs...>>::type;
  typename tensor_tuple<typename E::leaf_types>::type leaves;
  std::array<autograd_meta*, N> metas{};
  e.template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) {
    std::get<I>(leaves) = t.detach();
    if (t.requires_grad()) metas[I] = autograd_access<Tensor<T>>::meta(t).get();
  });
  auto tensors = std::tuple_cat(leaves, extra);
  // An operand that shares memory with a gradient this backward adds into in place (a user's
  // x.grad() inside the expression) is read from a copy: gradients are written while the
  // operands are still read (by the pass, after each broadcast input's sum_to), and PyTorch's
  // out-of-place accumulation never changes an operand either.
  std::array<const void*, N> accumulated{};
  for (std::size_t i = 0; i < N; ++i)
    if (grad_buffer* sl = metas[i] ? ctx.slot(*metas[i]) : nullptr; sl && sl->defined && sl->owned)
      accumulated[i] = sl->data.data();
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    ((std::get<J>(tensors).storage().data() &&
              std::find(accumulated.begin(), accumulated.end(), std::get<J>(tensors).storage().data()) != accumulated.end()
          ? void(std::get<J>(tensors) = std::get<J>(tensors).clone())
          : void()),
     ...);
  }(std::make_index_sequence<M>{});
  const auto root = refify<0>(e);
  using R = std::remove_cvref_t<decltype(root)>;
  auto de = [&]<std::size_t... X>(std::index_sequence<X...>) {
    return make_de(reader<M, 0>(root), ref_leaf<Xs, N + X>{{}, std::get<X>(extra).sizes().vec()}...);
  }(std::index_sequence_for<Xs...>{});
  auto rev = send<M, 0>(root, std::move(de));
  auto fwd = forward_steps<M, 0>(root);
  using tape_t = tape<decltype(fwd), decltype(rev), all_leaves, typename slot_types<R>::type>;
  const tape_t tp{std::move(fwd), std::move(rev)};
  const grad_tape_fn run = &tape_t::run;
  const dim_vector full = e.sizes().vec();

  // The operands the tape reads: the recorded tensors, then the extra ones.
  std::array<loop_operand, N + M> ops;
  std::array<dim_vector, N + M> strides;
  std::array<std::int64_t, M> itemsize{};
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    ((itemsize[J] = static_cast<std::int64_t>(sizeof(typename std::tuple_element_t<J, std::remove_cvref_t<decltype(tensors)>>::value_type)),
      strides[N + J] = broadcast_strides(std::get<J>(tensors).sizes(), std::get<J>(tensors).strides(), full),
      ops[N + J] = loop_operand{reinterpret_cast<char*>(std::get<J>(tensors).data_ptr()), strides[N + J], itemsize[J]}),
     ...);
  }(std::make_index_sequence<M>{});
  const grad_inputs in{itemsize.data(), M};
  const std::span<const loop_operand> inputs(ops.data() + N, M);

  // Full-shape inputs become targets of one pass; broadcast ones are summed here. Where a
  // tensor appears at several positions, the first (lowest) position assigns a fresh gradient
  // and the later ones add, which is also right when the tape writes gradients in place as it
  // goes, because it writes them in position order.
  static_assert(tape_t::writes_in_order());
  std::array<grad_target, N> targets{};
  std::array<grad_buffer*, N> written{};
  std::size_t K = 0;
  const leaf_grad_pass pass{&tp, run, N, in, inputs, full};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (([&] {
       grad_buffer* slot = metas[I] ? ctx.slot(*metas[I]) : nullptr;
       using L = typename leaf_at<I, typename E::leaf_types>::type;
       constexpr bool reaches = differentiable_v<L> && tape_t::template reaches<I>();
       if (slot && plan_leaf_grad(std::get<I>(tensors), *slot, I, reaches, pass, written,
                                  ops[K], strides[K], targets[K]))
         ++K;
     }()),
     ...);
  }(std::make_index_sequence<N>{});
  if (K == 0 || numel_of(full) == 0) return;
  // The inputs move up behind the K targets.
  for (std::size_t j = 0; j < M; ++j) ops[K + j] = inputs[j];
  run_grad_pass(make_plan(full, std::span<const loop_operand>(ops.data(), K + M)),
                grad_pass{&tp, run, N, std::span<const grad_target>(targets.data(), K)}, in);
}

/// The versions of e's tensors now.
template <class E>
std::array<std::uint64_t, E::leaf_count> versions_of(const E& e) {
  std::array<std::uint64_t, E::leaf_count> v{};
  e.template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) { v[I] = t.storage().version(); });
  return v;
}
/// Throws PyTorch's error when a tensor of e was written in place since it was recorded.
template <class E>
void check_versions(const E& e, const std::array<std::uint64_t, E::leaf_count>& saved) {
  e.template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) {
    if (t.storage().version() != saved[I]) throw_version_error(dtype_v<T>, t.sizes(), t.storage().version(), saved[I]);
  });
}

/// The node an evaluated expression records: its tree, and the versions of its tensors.
template <class E, element Out>
struct expr_node final : grad_node {
  std::optional<E> e;
  std::array<std::uint64_t, E::leaf_count> versions{};
  explicit expr_node(const E& x) : e(x) {}
  void apply(backward_context& ctx) override {
    check_versions(*e, versions);
    const Tensor<Out> g = autograd_access<Tensor<Out>>::tensor(pending);
    backprop_leaves(*e, ctx, std::make_tuple(g), [](const auto&, const auto& gref) { return gref; });
  }
  void release() noexcept override { e.reset(); }
};

/// Links node n (whose inputs are e's tensors that require grad) as the producer of out.
template <class E, element O>
void link(const E& e, const std::shared_ptr<grad_node>& n, Tensor<O>& out) {
  e.template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) {
    if (t.requires_grad()) n->inputs.push_back(autograd_access<Tensor<T>>::meta(t));
  });
  autograd_access<Tensor<O>>::set_grad_fn(out, n);
}

template <element O, class E>
void record(const E& e, Tensor<O>& out) {
  if constexpr (differentiable_v<O>) {
    if (!grad_enabled() || !e.requires_grad()) return;
    auto n = std::make_shared<expr_node<E, O>>(e);
    n->versions = versions_of(e);
    link(e, n, out);
  }
}
}  // namespace strata::detail
