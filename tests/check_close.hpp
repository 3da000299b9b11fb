// SPDX-License-Identifier: MIT
// Comparing element values (as doubles) with expected ones, within a tolerance.
#pragma once
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace test {
/// Checks |got - want| <= tol * (1 + |want|) element by element; a NaN wanted needs a NaN,
/// an infinity the same infinity.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i])) CHECK(got[i] == want[i]);
    else CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}
/// Checks |got - want| <= tol * max|want| element by element: for a tensor rounded to a short
/// type as a whole, where an element near zero carries the error of the tensor's scale.
inline void check_close_scaled(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i] << ", scale " << scale);
    CHECK(std::abs(got[i] - want[i]) <= tol * scale);
  }
}
}  // namespace test
