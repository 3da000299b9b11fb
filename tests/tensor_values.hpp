// SPDX-License-Identifier: MIT
// A tensor's elements as doubles, for comparing with golden values of any dtype.
#pragma once
#include <vector>
import strata;

template <class T>
std::vector<double> as_doubles(const strata::Tensor<T>& t) {
  std::vector<double> out;
  for (const T& v : t.to_vector()) out.push_back(strata::detail::convert<double>(v));
  return out;
}
