// SPDX-License-Identifier: MIT
// What may appear in an expression, the result type of an operation, and the op functors
// (the element kernels of every operation: arithmetic, comparisons, math, classification).
export module strata.expr:ops;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.loop;
import strata.graph;
import :nodes;

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
      using std::copysign;
      using std::fmod;
      using std::floor;
      if (b == 0) return a / b;
      const C mod = fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
      if (div == 0) return copysign(C(0), a / b);
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
}  // namespace strata::detail
