// SPDX-License-Identifier: MIT
// Element values as doubles (and back), for comparing with golden values of any dtype.
#pragma once
#include <complex>
#include <type_traits>
#include <vector>
import strata;

namespace test {
template <class T> inline constexpr bool is_complex_v = false;
template <class T> inline constexpr bool is_complex_v<std::complex<T>> = true;

/// One element as a double (the real part of a complex).
template <class T>
double to_double(const T& v) {
  if constexpr (is_complex_v<T>) return static_cast<double>(v.real());
  else return static_cast<double>(v);
}
/// One element as a complex<double>.
template <class T>
std::complex<double> to_cdouble(const T& v) {
  if constexpr (is_complex_v<T>) return {static_cast<double>(v.real()), static_cast<double>(v.imag())};
  else return {to_double(v), 0.0};
}
/// A double as an element of type T (for values T represents: no range or rounding games).
template <class T>
T from_double(double x) {
  if constexpr (is_complex_v<T>) return T(static_cast<typename T::value_type>(x), 0);
  else if constexpr (std::is_same_v<T, bool>) return x != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<long long>(x));
  else if constexpr (std::is_same_v<T, strata::half> || std::is_same_v<T, strata::bfloat16>) return T(static_cast<float>(x));
  else return static_cast<T>(x);
}
}  // namespace test

template <class T>
std::vector<double> as_doubles(const strata::Tensor<T>& t) {
  std::vector<double> out;
  for (const T& v : t.to_vector()) out.push_back(test::to_double(v));
  return out;
}
