// SPDX-License-Identifier: MIT
// AnyTensor's binary operators and functions, where, clamp and the in-place operators: the
// operands are converted to their result_type (a no-op when it is already theirs), then one
// visit_dtype runs the typed operation on Tensor<T> operands.
module;
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>
#include "any_ops.hpp"
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
#include "any_dispatch.hpp"

namespace strata {
namespace {
// FLOAT: PyTorch computes it in float32 for integer and bool operands, each converted from its
// own dtype (true division, atan2, copysign: -1 of int8 with uint8 divides as -1.0f, not 255).
#define STRATA_BINARY_OP_IN(NAME, OK, FLOAT, EXPR)                          \
  struct NAME##_f {                                                         \
    static constexpr const char* name = #NAME;                              \
    static constexpr bool integers_as_float = FLOAT;                        \
    template <class T> static constexpr bool ok = OK<T>;                    \
    template <class A, class B>                                             \
    auto operator()(const A& a, const B& b) const { return EXPR; }          \
  };
#define STRATA_BINARY_OP(NAME, OK, EXPR) STRATA_BINARY_OP_IN(NAME, OK, false, EXPR)
STRATA_BINARY_OP(add, all_v, a + b)
STRATA_BINARY_OP(sub, nonbool_v, a - b)
STRATA_BINARY_OP(mul, all_v, a * b)
STRATA_BINARY_OP_IN(div, all_v, true, a / b)
STRATA_BINARY_OP(eq, all_v, a == b)
STRATA_BINARY_OP(ne, all_v, a != b)
STRATA_BINARY_OP(lt, real_v, a < b)
STRATA_BINARY_OP(le, real_v, a <= b)
STRATA_BINARY_OP(gt, real_v, a > b)
STRATA_BINARY_OP(ge, real_v, a >= b)
STRATA_BINARY_OP(bitwise_and, bitwise_v, a & b)
STRATA_BINARY_OP(bitwise_or, bitwise_v, a | b)
STRATA_BINARY_OP(bitwise_xor, bitwise_v, a ^ b)
STRATA_BINARY_OP(lshift, int_v, a << b)
STRATA_BINARY_OP(rshift, int_v, a >> b)
STRATA_BINARY_OP(pow, nonbool_v, strata::pow(a, b))
STRATA_BINARY_OP(maximum, real_v, strata::maximum(a, b))
STRATA_BINARY_OP(minimum, real_v, strata::minimum(a, b))
STRATA_BINARY_OP(fmod, real_nonbool_v, strata::fmod(a, b))
STRATA_BINARY_OP(remainder, real_nonbool_v, strata::remainder(a, b))
STRATA_BINARY_OP(floor_divide, real_nonbool_v, strata::floor_divide(a, b))
STRATA_BINARY_OP_IN(atan2, real_v, true, strata::atan2(a, b))
STRATA_BINARY_OP(hypot, real_float_v, strata::hypot(a, b))
STRATA_BINARY_OP_IN(copysign, real_v, true, strata::copysign(a, b))
STRATA_BINARY_OP(logical_and, all_v, strata::logical_and(a, b))
STRATA_BINARY_OP(logical_or, all_v, strata::logical_or(a, b))
#undef STRATA_BINARY_OP
#undef STRATA_BINARY_OP_IN

bool is_bool(const AnyTensor& x) { return x.dtype() == dtype::bool_; }
bool is_bool(const Scalar& x) { return x.kind() == category::boolean; }

// op(a, b) with both converted to the common dtype c (float32 for integers where Op computes
// in float): b is a tensor (to<T>() converts it unless it is already of T) or a wrapped number
// (to<T>() gives its value as a T, which the typed operation takes as a scalar: a scalar of
// the tensor's type keeps the tensor's dtype). PyTorch refuses a bool operand of a subtraction
// whatever the other one is.
template <class A, class B>
void check_sub(const A& a, const B& b) {
  if (is_bool(a) || is_bool(b))
    throw dtype_error("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                      "invert a mask, use the `~` or `logical_not()` operator instead.");
}
template <class Op, class A, class B>
AnyTensor run_binary(const A& a, const B& b, dtype c) {
  if constexpr (std::is_same_v<Op, sub_f>) check_sub(a, b);
  if constexpr (Op::integers_as_float) c = true_divide_type(c);
  return visit_dtype(c, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (Op::integers_as_float && std::is_integral_v<T>) throw_unreachable();  // c is float32 then
    else if constexpr (Op::template ok<T>) return Op{}(a.template to<T>(), b.template to<T>());
    else detail::throw_not_implemented(Op::name, c);
  });
}
// A wrapped number as a 0-dim tensor of the result dtype (its value converted as PyTorch
// converts it), for a number before a tensor in an operation that does not commute.
AnyTensor wrap(const Scalar& s, dtype c) { return scalar_tensor(s, c); }
// The operation with its operands swapped, where that is exact: number op tensor becomes
// tensor op' number (one kernel per dtype for both orders).
template <class Op> struct mirror { using type = void; };
template <> struct mirror<add_f> { using type = add_f; };
template <> struct mirror<mul_f> { using type = mul_f; };
template <> struct mirror<eq_f> { using type = eq_f; };
template <> struct mirror<ne_f> { using type = ne_f; };
template <> struct mirror<lt_f> { using type = gt_f; };
template <> struct mirror<le_f> { using type = ge_f; };
template <> struct mirror<gt_f> { using type = lt_f; };
template <> struct mirror<ge_f> { using type = le_f; };
template <> struct mirror<bitwise_and_f> { using type = bitwise_and_f; };
template <> struct mirror<bitwise_or_f> { using type = bitwise_or_f; };
template <> struct mirror<bitwise_xor_f> { using type = bitwise_xor_f; };
template <> struct mirror<logical_and_f> { using type = logical_and_f; };
template <> struct mirror<logical_or_f> { using type = logical_or_f; };

template <class Op>
AnyTensor binary(const AnyTensor& a, const AnyTensor& b) { return run_binary<Op>(a, b, result_type(a, b)); }
template <class Op>
AnyTensor binary(const AnyTensor& a, const Scalar& b) {
  const dtype c = result_type(a, b);
  if constexpr (std::is_same_v<Op, pow_f>) {
    if (category_of(c) <= category::integral && b.kind() == category::integral && b.to<std::int64_t>() < 0)
      throw error("Integers to negative integer powers are not allowed.");
  }
  return run_binary<Op>(a, b, c);
}
template <class Op>
AnyTensor binary(const Scalar& a, const AnyTensor& b) {
  if constexpr (std::is_same_v<Op, sub_f>) check_sub(a, b);
  // number / tensor is reciprocal(tensor) * number, as PyTorch computes it.
  if constexpr (std::is_same_v<Op, div_f>) return binary<mul_f>(strata::reciprocal(b), a);
  else if constexpr (!std::is_void_v<typename mirror<Op>::type>) return binary<typename mirror<Op>::type>(b, a);
  else {
    const dtype c = result_type(a, b);
    return run_binary<Op>(wrap(a, c), b, c);
  }
}

// The dtype an in-place op writes: the result type (true division: float for integers),
// which must cast to the destination's dtype.
dtype inplace_result(const AnyTensor& self, dtype c, bool true_division) {
  const dtype r = true_division ? true_divide_type(c) : c;
  if (!can_cast(r, self.dtype()))
    throw dtype_error("result type " + detail::scalar_type_name(r) + " can't be cast to the desired output type " +
                      detail::scalar_type_name(self.dtype()));
  return r;
}
// self op= other: in the typed engine when the result dtype is self's, else computed in the
// result dtype and copied back (PyTorch computes in the common dtype, then casts).
template <class Op, class B>
void compound(const AnyTensor& self, const B& other, dtype c, bool true_division) {
  if constexpr (std::is_same_v<Op, sub_f>) check_sub(self, other);
  const dtype r = inplace_result(self, c, true_division);
  if (r != self.dtype() || c != self.dtype()) {
    self.copy_(run_binary<Op>(self, other, c));
    return;
  }
  visit_dtype(c, [&]<class T>(tag<T>) {
    if constexpr (Op::integers_as_float && std::is_integral_v<T>) {
      throw_unreachable();  // the result is float32, not self's dtype: copied above
    } else if constexpr (Op::template ok<T>) {
      const Tensor<T> s = self.as<T>();
      s.assign(Op{}(s, other.template to<T>()));
    } else {
      detail::throw_not_implemented(Op::name, c);
    }
  });
}
}  // namespace

#define STRATA_DEFINE_BINARY(F, OP)                                                                \
  AnyTensor F(const AnyTensor& a, const AnyTensor& b) { return binary<OP##_f>(a, b); }            \
  AnyTensor F(const AnyTensor& a, const Scalar& b) { return binary<OP##_f>(a, b); }               \
  AnyTensor F(const Scalar& a, const AnyTensor& b) { return binary<OP##_f>(a, b); }
STRATA_ANY_BINARY(STRATA_DEFINE_BINARY)
#undef STRATA_DEFINE_BINARY

#define STRATA_DEFINE_COMPOUND(SYM, OP, TRUE_DIVISION)                                  \
  const AnyTensor& AnyTensor::operator SYM(const AnyTensor& other) const {              \
    compound<OP##_f>(*this, other, result_type(*this, other), TRUE_DIVISION);           \
    return *this;                                                                       \
  }                                                                                     \
  const AnyTensor& AnyTensor::operator SYM(const Scalar& value) const {                 \
    compound<OP##_f>(*this, value, result_type(*this, value), TRUE_DIVISION);           \
    return *this;                                                                       \
  }
STRATA_DEFINE_COMPOUND(+=, add, false)
STRATA_DEFINE_COMPOUND(-=, sub, false)
STRATA_DEFINE_COMPOUND(*=, mul, false)
STRATA_DEFINE_COMPOUND(/=, div, true)
#undef STRATA_DEFINE_COMPOUND

// add_ and sub_ with alpha: self op= alpha * other, computed in the result type of self and
// other; a floating alpha is refused for an integral or bool result, a bool alpha for any
// other result, as PyTorch.
namespace {
AnyTensor scaled(const AnyTensor& self, const AnyTensor& other, const Scalar& alpha) {
  const dtype c = result_type(self, other);
  if (category_of(c) <= category::integral && alpha.kind() > category::integral)
    throw dtype_error("For integral input tensors, argument alpha must not be a floating point number.");
  if (c != dtype::bool_ && alpha.kind() == category::boolean)
    throw dtype_error("Boolean alpha only supported for Boolean results.");
  detail::check_fits(alpha, c);
  const AnyTensor o = other.to(c);
  if (c == dtype::bool_) return alpha.to<bool>() ? o : zeros_like(o);  // alpha * other, as bool
  return o * alpha;
}
}  // namespace
const AnyTensor& AnyTensor::add_(const AnyTensor& other, const Scalar& alpha) const {
  return *this += scaled(*this, other, alpha);
}
const AnyTensor& AnyTensor::sub_(const AnyTensor& other, const Scalar& alpha) const {
  check_sub(*this, other);
  return *this -= scaled(*this, other, alpha);
}

// ---- where and clamp ----
AnyTensor where(const AnyTensor& cond, const AnyTensor& x, const AnyTensor& y) {
  const Tensor<bool> c = cond.as<bool>();
  const dtype r = result_type(x, y);
  return visit_dtype(r, [&]<class T>(tag<T>) -> AnyTensor { return strata::where(c, x.to<T>(), y.to<T>()); });
}
AnyTensor where(const AnyTensor& cond, const AnyTensor& x, const Scalar& y) {
  return where(cond, x, wrap(y, result_type(x, y)));
}
AnyTensor where(const AnyTensor& cond, const Scalar& x, const AnyTensor& y) {
  return where(cond, wrap(x, result_type(x, y)), y);
}
AnyTensor clamp(const AnyTensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  if (!lo && !hi) throw error("torch.clamp: At least one of 'min' or 'max' must not be None");
  dtype r = x.dtype();
  if (lo) r = promote_with_scalar(r, lo->kind());  // a tensor with a wrapped number
  if (hi) r = promote_with_scalar(r, hi->kind());
  // The typed clamp with number bounds: one kernel, and the gradient passes on the closed
  // interval [lo, hi] as PyTorch's (a missing bound is the dtype's widest).
  return visit_dtype(r, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (!real_nonbool_v<T>) {
      detail::throw_not_implemented("clamp", r);
    } else {
      constexpr double inf = std::numeric_limits<double>::infinity();
      T low, high;
      if constexpr (std::is_integral_v<T>) {
        low = std::numeric_limits<T>::lowest();
        high = std::numeric_limits<T>::max();
      } else {
        low = detail::convert<T>(-inf);
        high = detail::convert<T>(inf);
      }
      if (lo) detail::check_fits(*lo, r), low = lo->to<T>();
      if (hi) detail::check_fits(*hi, r), high = hi->to<T>();
      return strata::clamp(x.to<T>(), low, high);
    }
  });
}
AnyTensor clamp(const AnyTensor& x, const std::optional<AnyTensor>& lo, const std::optional<AnyTensor>& hi) {
  if (!lo && !hi) throw error("torch.clamp: At least one of 'min' or 'max' must not be None");
  // torch.clamp with tensor bounds is minimum(maximum(x, lo), hi) in result_type(x, lo, hi).
  dtype r = x.dtype();
  if (lo && hi) r = result_type(std::vector<AnyTensor>{x, *lo, *hi});
  else r = result_type(x, lo ? *lo : *hi);
  return visit_dtype(r, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (!real_nonbool_v<T>) detail::throw_not_implemented("clamp", r);
    else if (lo && hi) return strata::clamp(x.to<T>(), lo->to<T>(), hi->to<T>());
    else if (lo) return strata::maximum(x.to<T>(), lo->to<T>());
    else return strata::minimum(x.to<T>(), hi->to<T>());
  });
}
const AnyTensor& AnyTensor::clamp_(const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) const {
  const AnyTensor r = strata::clamp(*this, lo, hi);
  if (!can_cast(r.dtype(), dtype()))
    throw dtype_error("result type " + detail::scalar_type_name(r.dtype()) +
                      " can't be cast to the desired output type " + detail::scalar_type_name(dtype()));
  return copy_(r);
}
AnyTensor clamp_min(const AnyTensor& x, const Scalar& lo) { return clamp(x, lo, std::nullopt); }
AnyTensor clamp_max(const AnyTensor& x, const Scalar& hi) { return clamp(x, std::nullopt, hi); }
}  // namespace strata
