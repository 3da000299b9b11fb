// SPDX-License-Identifier: MIT
// A deliberately naive reference for element-wise expressions: one element at a time, as a
// runtime-typed value (`ref`) carrying its dtype, with PyTorch's semantics written out
// directly (integers wrap after every operation; floats are computed in double).
// It shares nothing with strata's loop engine; only the dtype promotion table is reused
// (that table has its own golden test).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include "tensor_values.hpp"
import strata;

namespace reference {
using strata::dtype;
using cd = std::complex<double>;

inline bool is_int(dtype t) { return strata::category_of(t) <= strata::category::integral; }

// Wraps v to the width of integer dtype t (two's complement), bool to 0/1.
inline std::int64_t wrap(std::int64_t v, dtype t) {
  switch (t) {
    case dtype::bool_: return v != 0;
    case dtype::uint8: return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v));
    case dtype::int8: return static_cast<std::int8_t>(static_cast<std::uint64_t>(v));
    case dtype::int16: return static_cast<std::int16_t>(static_cast<std::uint64_t>(v));
    case dtype::int32: return static_cast<std::int32_t>(static_cast<std::uint64_t>(v));
    default: return v;
  }
}

struct ref {
  dtype t;
  std::int64_t i = 0;  // integers and bool
  cd v = 0;            // floats (real part) and complex

  double real() const { return is_int(t) ? static_cast<double>(i) : v.real(); }
  cd value() const { return is_int(t) ? cd(static_cast<double>(i), 0) : v; }

  // Converts as copy_ does (floats truncate toward zero into integers; values here are small).
  ref to(dtype d) const {
    ref r{d};
    if (is_int(d)) {
      if (d == dtype::bool_) r.i = is_int(t) ? i != 0 : (v != cd(0, 0));
      else r.i = wrap(is_int(t) ? i : static_cast<std::int64_t>(std::trunc(v.real())), d);
    } else if (strata::is_complex(d)) {
      r.v = value();
    } else {
      r.v = real();
    }
    return r;
  }
};

inline ref from_int(std::int64_t v, dtype t) { return ref{t, wrap(v, t), 0}; }
inline ref from_real(double v, dtype t) { return ref{t, 0, cd(v, 0)}; }
inline ref from_complex(cd v, dtype t) { return ref{t, 0, v}; }

// A C++ scalar in an expression: a "wrapped number" of its category.
struct scalar {
  strata::category c;
  ref r;
};
inline scalar S(double v) { return {strata::category::floating, from_real(v, dtype::float64)}; }
inline scalar S(int v) { return {strata::category::integral, from_int(v, dtype::int64)}; }
inline scalar S(bool v) { return {strata::category::boolean, from_int(v, dtype::bool_)}; }

inline dtype common(const ref& a, const ref& b) { return strata::promote_types(a.t, b.t); }
inline dtype common(const ref& a, const scalar& s) { return strata::promote_with_scalar(a.t, s.c); }

template <class F>
ref arith(const ref& a0, const ref& b0, dtype c, F f) {
  const ref a = a0.to(c), b = b0.to(c);
  if (is_int(c)) return from_int(static_cast<std::int64_t>(f(cd(static_cast<double>(a.i)), cd(static_cast<double>(b.i))).real()), c);
  return from_complex(f(a.v, b.v), c);
}

inline ref add(const ref& a, const ref& b, dtype c) {
  if (c == dtype::bool_) return from_int(a.to(c).i | b.to(c).i, c);
  if (is_int(c)) return from_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(a.to(c).i) + static_cast<std::uint64_t>(b.to(c).i)), c);
  return arith(a, b, c, [](cd x, cd y) { return x + y; });
}
inline ref sub(const ref& a, const ref& b, dtype c) {
  if (is_int(c)) return from_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(a.to(c).i) - static_cast<std::uint64_t>(b.to(c).i)), c);
  return arith(a, b, c, [](cd x, cd y) { return x - y; });
}
inline ref mul(const ref& a, const ref& b, dtype c) {
  if (c == dtype::bool_) return from_int(a.to(c).i & b.to(c).i, c);
  if (is_int(c)) return from_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(a.to(c).i) * static_cast<std::uint64_t>(b.to(c).i)), c);
  return arith(a, b, c, [](cd x, cd y) { return x * y; });
}

inline ref operator+(const ref& a, const ref& b) { return add(a, b, common(a, b)); }
inline ref operator-(const ref& a, const ref& b) { return sub(a, b, common(a, b)); }
inline ref operator*(const ref& a, const ref& b) { return mul(a, b, common(a, b)); }
inline ref operator/(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  const dtype r = strata::true_divide_type(c);
  return from_complex(a.to(c).value() / b.to(c).value(), r).to(r);
}
inline ref operator+(const ref& a, const scalar& s) { return add(a, s.r, common(a, s)); }
inline ref operator-(const ref& a, const scalar& s) { return sub(a, s.r, common(a, s)); }
inline ref operator*(const ref& a, const scalar& s) { return mul(a, s.r, common(a, s)); }
inline ref operator/(const ref& a, const scalar& s) {
  const dtype c = common(a, s);
  const dtype r = strata::true_divide_type(c);
  return from_complex(a.to(c).value() / s.r.to(c).value(), r).to(r);
}
inline ref operator-(const ref& a) {
  if (is_int(a.t)) return from_int(static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(a.i)), a.t);
  return from_complex(-a.v, a.t);
}

inline ref cmp(const ref& a, const ref& b, dtype c, int op) {
  const ref x = a.to(c), y = b.to(c);
  bool r = false;
  if (is_int(c)) {
    switch (op) { case 0: r = x.i == y.i; break; case 1: r = x.i != y.i; break; case 2: r = x.i < y.i; break;
                  case 3: r = x.i <= y.i; break; case 4: r = x.i > y.i; break; default: r = x.i >= y.i; }
  } else {
    switch (op) { case 0: r = x.v == y.v; break; case 1: r = x.v != y.v; break; case 2: r = x.v.real() < y.v.real(); break;
                  case 3: r = x.v.real() <= y.v.real(); break; case 4: r = x.v.real() > y.v.real(); break;
                  default: r = x.v.real() >= y.v.real(); }
  }
  return from_int(r, dtype::bool_);
}
inline ref operator==(const ref& a, const ref& b) { return cmp(a, b, common(a, b), 0); }
inline ref operator>(const ref& a, const ref& b) { return cmp(a, b, common(a, b), 4); }
inline ref operator>=(const ref& a, const ref& b) { return cmp(a, b, common(a, b), 5); }
inline ref operator<(const ref& a, const scalar& s) { return cmp(a, s.r, common(a, s), 2); }
inline ref operator>(const ref& a, const scalar& s) { return cmp(a, s.r, common(a, s), 4); }

inline ref bitop(const ref& a, const ref& b, int op) {
  const dtype c = common(a, b);
  const std::int64_t x = a.to(c).i, y = b.to(c).i;
  return from_int(op == 0 ? (x & y) : op == 1 ? (x | y) : (x ^ y), c);
}
inline ref operator&(const ref& a, const ref& b) { return bitop(a, b, 0); }
inline ref operator|(const ref& a, const ref& b) { return bitop(a, b, 1); }
inline ref operator^(const ref& a, const ref& b) { return bitop(a, b, 2); }
inline ref operator~(const ref& a) { return a.t == dtype::bool_ ? from_int(!a.i, a.t) : from_int(~a.i, a.t); }
inline ref logical_and(const ref& a, const ref& b) { return from_int(a.value() != cd(0) && b.value() != cd(0), dtype::bool_); }

inline ref where(const ref& c, const ref& x, const ref& y) {
  const dtype t = common(x, y);
  return c.i ? x.to(t) : y.to(t);
}
inline ref where(const ref& c, const ref& x, const scalar& y) {
  const dtype t = common(x, y);
  return c.i ? x.to(t) : y.r.to(t);
}

inline dtype float_type(dtype t) { return is_int(t) ? dtype::float32 : t; }
template <class F>
ref float_fn(const ref& a, F f) { return from_complex(f(a.value()), float_type(a.t)).to(float_type(a.t)); }
inline ref exp(const ref& a) { return float_fn(a, [](cd x) { return std::exp(x); }); }
inline ref sqrt(const ref& a) { return float_fn(a, [](cd x) { return std::sqrt(x); }); }
inline ref tanh(const ref& a) { return float_fn(a, [](cd x) { return std::tanh(x); }); }
inline ref sigmoid(const ref& a) { return float_fn(a, [](cd x) { return 1.0 / (1.0 + std::exp(-x)); }); }
inline ref log1p(const ref& a) { return float_fn(a, [](cd x) { return cd(std::log1p(x.real())); }); }
inline ref expm1(const ref& a) { return float_fn(a, [](cd x) { return cd(std::expm1(x.real())); }); }
inline ref abs(const ref& a) {
  if (is_int(a.t)) return from_int(a.i < 0 ? -a.i : a.i, a.t);
  if (strata::is_complex(a.t)) return from_real(std::abs(a.v), a.t == dtype::complex64 ? dtype::float32 : dtype::float64);
  return from_real(std::abs(a.v.real()), a.t);
}
inline ref relu(const ref& a) { return is_int(a.t) ? from_int(a.i > 0 ? a.i : 0, a.t) : from_real(a.v.real() > 0 ? a.v.real() : 0.0, a.t); }
inline ref sign(const ref& a) {
  const double x = a.real();
  return is_int(a.t) ? from_int((x > 0) - (x < 0), a.t) : from_real((x > 0) - (x < 0), a.t);
}
inline ref floor(const ref& a) { return is_int(a.t) ? a : from_real(std::floor(a.real()), a.t); }
inline ref ceil(const ref& a) { return is_int(a.t) ? a : from_real(std::ceil(a.real()), a.t); }
inline ref round(const ref& a) { return is_int(a.t) ? a : from_real(std::nearbyint(a.real()), a.t); }
inline ref maximum(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  const ref x = a.to(c), y = b.to(c);
  if (is_int(c)) return x.i < y.i ? y : x;
  if (std::isnan(x.v.real())) return x;
  if (std::isnan(y.v.real())) return y;
  return x.v.real() < y.v.real() ? y : x;
}
inline ref minimum(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  const ref x = a.to(c), y = b.to(c);
  if (is_int(c)) return y.i < x.i ? y : x;
  if (std::isnan(x.v.real())) return x;
  if (std::isnan(y.v.real())) return y;
  return y.v.real() < x.v.real() ? y : x;
}
inline ref clamp(const ref& a, double lo, double hi) {
  const dtype c = common(a, S(lo));
  const double x = a.to(c).real();
  if (std::isnan(x)) return a.to(c);
  return from_real(std::min(std::max(x, lo), hi), c).to(c);
}
// Integer floor division / remainders by the textbook definitions (divisors nonzero here).
inline ref floor_divide(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  if (is_int(c)) {
    const std::int64_t x = a.to(c).i, y = b.to(c).i;
    return from_int(static_cast<std::int64_t>(std::floor(static_cast<long double>(x) / y)), c);
  }
  const double x = a.to(c).real(), y = b.to(c).real();
  if (y == 0) return from_real(x / y, c);
  const double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
  if (div == 0) return from_real(std::copysign(0.0, x / y), c);
  const double fl = std::floor(div);
  return from_real(div - fl > 0.5 ? fl + 1 : fl, c);
}
inline ref remainder(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  const std::int64_t x = a.to(c).i, y = b.to(c).i;
  std::int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return from_int(r, c);
}
inline ref fmod(const ref& a, const ref& b) {
  const dtype c = common(a, b);
  return from_int(a.to(c).i % b.to(c).i, c);
}
inline ref pow(const ref& a, int e) {
  const dtype c = common(a, S(e));
  if (is_int(c)) {
    std::int64_t r = 1;
    for (int k = 0; k < e; ++k) r = wrap(static_cast<std::int64_t>(static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(a.to(c).i)), c);
    return from_int(r, c);
  }
  return from_real(std::pow(a.to(c).real(), e), c);
}
template <class T>
ref cast(const ref& a) { return a.to(strata::dtype_v<T>); }

// Plain C++ numbers on either side are wrapped scalars.
template <class N> concept number = std::is_arithmetic_v<N>;
template <number N> ref operator+(const ref& a, N n) { return a + S(n); }
template <number N> ref operator+(N n, const ref& a) { return a + S(n); }
template <number N> ref operator-(const ref& a, N n) { return a - S(n); }
template <number N> ref operator-(N n, const ref& a) { return sub(S(n).r, a, common(a, S(n))); }
template <number N> ref operator*(const ref& a, N n) { return a * S(n); }
template <number N> ref operator*(N n, const ref& a) { return a * S(n); }
template <number N> ref operator/(const ref& a, N n) { return a / S(n); }
template <number N> ref operator<(const ref& a, N n) { return a < S(n); }
template <number N> ref operator>(const ref& a, N n) { return a > S(n); }
template <number N> ref where(const ref& c, const ref& x, N y) { return where(c, x, S(y)); }

/// Reads element k (row-major) of a tensor as a ref.
template <class T>
ref load(const std::vector<T>& v, std::size_t k) {
  constexpr dtype d = strata::dtype_v<T>;
  if constexpr (std::is_integral_v<T>) return from_int(static_cast<std::int64_t>(v[k]), d);
  else if constexpr (test::is_complex_v<T>) return from_complex(cd(v[k].real(), v[k].imag()), d);
  else return from_real(test::to_double(v[k]), d);
}
}  // namespace reference
