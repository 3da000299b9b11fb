// SPDX-License-Identifier: MIT
// Autograd's derivatives built from the node types at compile time: the ref tree, the rules
// (PyTorch 1.13's derivatives.yaml) and the chunk tape that runs a tree's backward.
module;
#include "dtype_list.hpp"
export module strata.expr:derivatives;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;
import :nodes;
import :ops;
import :funnel;
import :functions;

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
    return g * (strata::exp(-strata::square(n.a)) * 1.1283791670955126);
  }
};
template <> struct grad_rule<erfc_op> {
  template <class N, class G> static auto da(const N& n, const G& g) {
    return g * (strata::exp(-strata::square(n.a)) * -1.1283791670955126);
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
  template <class F>
  void each(F& f) const { f(*this); }
  template <class F>
  static constexpr void each_type(F& f) { f(std::type_identity<tape_step>{}); }
};

/// A sweep's steps are tape_steps, no_steps, or two sweeps in sequence: plain aggregates,
/// which cost the compiler far less than tuples concatenated by tuple_cat.
struct no_steps {
  template <class F>
  void each(F&) const {}
  template <class F>
  static constexpr void each_type(F&) {}
};
template <class A, class B>
struct step_seq {
  A a;
  B b;
  template <class F>
  void each(F& f) const { a.each(f); b.each(f); }
  template <class F>
  static constexpr void each_type(F& f) { A::each_type(f); B::each_type(f); }
};
/// Steps a, then steps b.
template <class A, class B>
auto then(A a, B b) {
  if constexpr (std::is_same_v<A, no_steps>) return b;
  else if constexpr (std::is_same_v<B, no_steps>) return a;
  else return step_seq<A, B>{std::move(a), std::move(b)};
}

/// The forward sweep of n (first slot S): children first, then n into its value slot.
template <std::size_t M, std::size_t S, class N>
auto forward_steps(const N& n) {
  if constexpr (!kept<N>) {  // recomputed by its readers; below it, nothing is kept either
    return no_steps{};
  } else {
    auto own = [&] {
      auto e = rebuilt<M, S>(n);
      return tape_step<decltype(e), false, S, slot_t<N>>{std::move(e)};
    };
    if constexpr (requires { n.c; }) {
      using Cd = decltype(n.c);
      using X = decltype(n.x);
      return then(then(then(forward_steps<M, S + 2>(n.c), forward_steps<M, S + 2 + slot_count<Cd>>(n.x)),
                       forward_steps<M, S + 2 + slot_count<Cd> + slot_count<X>>(n.y)),
                  own());
    } else if constexpr (requires { n.b; }) {
      return then(then(forward_steps<M, S + 2>(n.a), forward_steps<M, S + 2 + slot_count<decltype(n.a)>>(n.b)), own());
    } else {
      return then(forward_steps<M, S + 2>(n.a), own());
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
    return no_steps{};
  } else if constexpr (is_scalar_node<N> || !differentiable_v<typename N::value_type>) {
    return no_steps{};
  } else if constexpr (slot_count<N> == 0) {
    return tape_step<Dv, true, ref_position<N>, slot_t<N>>{std::forward<D>(d)};
  } else if constexpr (inline_adjoint<Dv>) {
    return reverse_steps<M, S>(c, d);
  } else {
    return then(tape_step<Dv, false, S + 1, slot_t<N>>{std::forward<D>(d)},
                reverse_steps<M, S>(c, ref_leaf<slot_t<N>, M + S + 1>{{}, c.sizes().vec()}));
  }
}

/// The reverse sweep below n (first slot S), whose adjoint is g: n's rule sends it to each
/// child, and each child's subtree continues (parents before children).
template <std::size_t M, std::size_t S, class N, class G>
auto reverse_steps(const N& n, const G& g) {
  if constexpr (slot_count<N> == 0 || !differentiable_v<typename N::value_type>) {
    return no_steps{};
  } else {
    const auto r = rebuilt<M, S>(n);
    if constexpr (requires { n.c; }) {  // where: nothing to the condition
      using Cd = decltype(n.c);
      using X = decltype(n.x);
      constexpr std::size_t sx = S + 2 + slot_count<Cd>, sy = sx + slot_count<X>;
      return then(send<M, sx>(n.x, where(r.c, g, 0)), send<M, sy>(n.y, where(r.c, 0, g)));
    } else if constexpr (requires { n.b; }) {
      using Op = typename binary_op<N>::type;
      constexpr std::size_t sb = S + 2 + slot_count<decltype(n.a)>;
      return then(send<M, S + 2>(n.a, grad_rule<Op>::da(r, g)), send<M, sb>(n.b, grad_rule<Op>::db(r, g)));
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
    for (std::int64_t i = 0; i < n; ++i) std::construct_at(out + i, convert<W>(static_cast<V>(e.template at<0>(p, i))));
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

/// A tree's sweeps, built once per backward: Fwd and Rev are sequences of tape_step; Ls are the
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
    bool r = false;
    auto f = [&]<class S>(std::type_identity<S>) { r = r || (S::to_input && S::target == J); };
    Rev::each_type(f);
    return r;
  }

  /// True when the steps write input positions' gradients in increasing position order (send
  /// visits a node's children left to right, each subtree whole, as refify numbers them).
  static constexpr bool writes_in_order() {
    bool ordered = true;
    std::size_t next = 0;  // the lowest position the next write may have
    auto f = [&]<class S>(std::type_identity<S>) {
      if (S::to_input) {
        ordered = ordered && S::target >= next;
        next = S::target + 1;
      }
    };
    Rev::each_type(f);
    return ordered;
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
        t.fwd.each(step);
        t.rev.each(step);
      }(std::index_sequence_for<Ls...>{}, std::index_sequence_for<Ss...>{});
    }
  }
};

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
    const grad_values<A> values{tree, run, position, positions, in};
    const reduction_kernels<sum_r, A> rk{values.source()};
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

/// The functions of a tensor's element type that a backward over type-erased tensors needs,
/// compiled once per dtype in src/backprop.cpp.
struct tape_tensor_fns {
  /// A copy of the tensor b views (its elements cloned).
  grad_buffer (*clone)(const grad_buffer& b);
  /// plan_leaf_grad for the leaf b views.
  bool (*plan)(const grad_buffer& leaf, grad_buffer& slot, std::size_t i, bool reaches, const leaf_grad_pass& pass,
               std::span<grad_buffer*> written, loop_operand& op, dim_vector& stride, grad_target& target);
};
template <class T>
grad_buffer clone_tensor(const grad_buffer& b) {
  return autograd_access<Tensor<T>>::buffer(autograd_access<Tensor<T>>::tensor(b).clone());
}
template <class T>
bool plan_tensor_grad(const grad_buffer& leaf, grad_buffer& slot, std::size_t i, bool reaches, const leaf_grad_pass& pass,
                      std::span<grad_buffer*> written, loop_operand& op, dim_vector& stride, grad_target& target) {
  return plan_leaf_grad<T>(autograd_access<Tensor<T>>::tensor(leaf), slot, i, reaches, pass, written, op, stride, target);
}
#define STRATA_TAPE_TENSOR_INSTANCES(T)                                                                         \
  extern template grad_buffer clone_tensor<T>(const grad_buffer&);                                                \
  extern template bool plan_tensor_grad<T>(const grad_buffer&, grad_buffer&, std::size_t, bool, const leaf_grad_pass&, \
                                           std::span<grad_buffer*>, loop_operand&, dim_vector&, grad_target&);
STRATA_FOR_EACH_DTYPE(STRATA_TAPE_TENSOR_INSTANCES)
#undef STRATA_TAPE_TENSOR_INSTANCES
template <class T>
inline constexpr tape_tensor_fns tape_fns_of{&clone_tensor<T>, &plan_tensor_grad<T>};

/// A tensor a tape reads, its element type erased: a leaf of the recorded tree (with its
/// autograd metadata when it requires grad) or an extra operand of the seed.
struct tape_tensor {
  grad_buffer t;
  std::int64_t itemsize = 0;
  autograd_meta* meta = nullptr;
  const tape_tensor_fns* fns = nullptr;
};
template <class T>
tape_tensor tape_tensor_of(const Tensor<T>& t) {
  return {autograd_access<Tensor<T>>::buffer(t), sizeof(T),
          t.requires_grad() ? autograd_access<Tensor<T>>::meta(t).get() : nullptr, &tape_fns_of<T>};
}
#define STRATA_TAPE_TENSOR_OF(T) extern template tape_tensor tape_tensor_of<T>(const Tensor<T>&);
STRATA_FOR_EACH_DTYPE(STRATA_TAPE_TENSOR_OF)
#undef STRATA_TAPE_TENSOR_OF

/// A tree's tape, its type erased: run(tape, ...) sweeps it; reaches[i] is true when some
/// step writes the gradient of input position i.
struct erased_tape {
  const void* tape;
  grad_tape_fn run;
  std::span<const bool> reaches;
};

/// Runs tape tp over tensors (the tree's `leaves` leaves, then the seed's extra operands) on
/// the recorded shape `full`, sending each leaf that requires grad its gradient (src/backprop.cpp).
void backprop(const erased_tape& tp, std::span<tape_tensor> tensors, std::size_t leaves, int_list full,
              backward_context& ctx);

/// Sends the gradients of e's leaves to their slots. de, built by make_de(reader of e's
/// value, ref leaves of the extra tensors), is the gradient reaching e's root. The tape (one
/// sweep per chunk computing the gradients of all inputs) is built here; the rest of the
/// backward runs in compiled code (backprop).
template <class E, class... Xs, class MakeDe>
void backprop_leaves(const E& e, backward_context& ctx, const std::tuple<Tensor<Xs>...>& extra, MakeDe make_de) {
  constexpr std::size_t N = E::leaf_count;
  constexpr std::size_t M = N + sizeof...(Xs);
  using all_leaves = typename concat<typename E::leaf_types, type_list<Xs...>>::type;
  const auto root = refify<0>(e);
  using R = std::remove_cvref_t<decltype(root)>;
  auto de = [&]<std::size_t... X>(std::index_sequence<X...>) {
    return make_de(reader<M, 0>(root), ref_leaf<Xs, N + X>{{}, std::get<X>(extra).sizes().vec()}...);
  }(std::index_sequence_for<Xs...>{});
  auto rev = send<M, 0>(root, std::move(de));
  auto fwd = forward_steps<M, 0>(root);
  using tape_t = tape<decltype(fwd), decltype(rev), all_leaves, typename slot_types<R>::type>;
  // Where a tensor appears at several positions, backprop lets the first (lowest) position
  // assign a fresh gradient and the later ones add: right when the tape writes gradients in
  // place as it goes only because it writes them in position order.
  static_assert(tape_t::writes_in_order());
  const tape_t tp{std::move(fwd), std::move(rev)};
  static constexpr auto reaches = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<bool, N>{(differentiable_v<typename leaf_at<I, typename E::leaf_types>::type> &&
                                tape_t::template reaches<I>())...};
  }(std::make_index_sequence<N>{});

  std::array<tape_tensor, M> tensors;
  e.template for_each_leaf<0>([&]<std::size_t I, class T>(const Tensor<T>& t) { tensors[I] = tape_tensor_of(t); });
  [&]<std::size_t... X>(std::index_sequence<X...>) {
    ((tensors[N + X] = tape_tensor_of(std::get<X>(extra))), ...);
  }(std::index_sequence_for<Xs...>{});
  backprop(erased_tape{&tp, &tape_t::run, reaches}, tensors, N, e.sizes(), ctx);
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
    auto n = strata::detail::make_shared<expr_node<E, O>>(e);
    n->versions = versions_of(e);
    link(e, n, out);
  }
}
}  // namespace strata::detail
