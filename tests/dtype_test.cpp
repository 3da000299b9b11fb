// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <cstdint>
import strata;
using namespace strata;

TEST_CASE("smoke", "[dtype]") {
  auto t = zeros<float>({2, 3});
  CHECK(t.numel() == 6);
  CHECK(to_string(arange(6).view({2, 3})) == "tensor([[0, 1, 2],\n        [3, 4, 5]])");
}
