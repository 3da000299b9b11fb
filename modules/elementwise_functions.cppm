// SPDX-License-Identifier: MIT
// The public operators and functions that build expressions (a + b, exp(x), where, clamp,
// the compound assignments).
export module strata.expr:functions;
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
