// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <cstdint>
#include <tuple>
import strata;

namespace st = strata;

TEST_CASE("smoke", "[sorting]") {
  auto x = st::from_vector<float>({3, 1, 2});
  auto [v, i] = st::sort(x);
  CHECK(v.to_vector() == std::vector<float>{1, 2, 3});
  CHECK(i.to_vector() == std::vector<std::int64_t>{1, 2, 0});
  st::Tensor<float> c = st::cumsum(x, 0);
  CHECK(c.to_vector() == std::vector<float>{3, 4, 6});
}
