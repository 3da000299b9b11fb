// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <cstdint>
import strata;
using namespace strata;

TEST_CASE("storage is 64-byte aligned and shared by copies", "[storage]") {
  for (std::int64_t n : {0, 1, 3, 1000, 1 << 21}) {
    storage s = storage::allocate<float>(n, init::zero);
    CHECK(reinterpret_cast<std::uintptr_t>(s.data()) % 64 == 0);
    CHECK(s.size() == n);
    CHECK(s.nbytes() == static_cast<std::size_t>(n) * 4);
    if (n) CHECK(static_cast<float*>(s.data())[n - 1] == 0.0f);
  }
  storage a = storage::allocate<int>(4, init::zero);
  storage b = a;
  CHECK(a.use_count() == 2);
  CHECK(a.is_alias_of(b));
  CHECK_FALSE(a.is_alias_of(storage::allocate<int>(4, init::zero)));
}

TEST_CASE("storage constructs and destroys non-trivial elements", "[storage][float128]") {
  storage s = storage::allocate<float128>(5, init::uninitialized);
  auto* p = static_cast<float128*>(s.data());
  for (int i = 0; i < 5; ++i) CHECK(p[i] == 0);
  p[2] = float128(1) / 3;  // the leak checker of the asan preset watches the destructor
  CHECK(p[2] * 3 == 1);
}

TEST_CASE("views share storage with their base; clone does not", "[storage][tensor]") {
  Tensor<float> base = zeros<float>({4, 4});
  Tensor<float> v = base.view({2, 8});
  CHECK(v.storage().is_alias_of(base.storage()));
  CHECK(v.data_ptr() == base.data_ptr());
  CHECK(base.storage().use_count() == 2);
  Tensor<float> c = base.clone();
  CHECK_FALSE(c.storage().is_alias_of(base.storage()));
}
