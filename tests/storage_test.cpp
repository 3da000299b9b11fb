// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <complex>
#include <cstddef>
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

TEST_CASE("zeroed storage is zero in every element, of every kind", "[storage]") {
  const auto all_zero_bytes = [](const storage& s) {
    const auto* b = static_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.nbytes(); ++i)
      if (b[i] != 0) return false;
    return true;
  };
  // Large enough to come back from the block cache (which holds freed, written blocks).
  for (std::int64_t n : {1, 7, 1 << 20}) {
    {
      storage dirty = storage::allocate<double>(n, init::uninitialized);
      auto* p = static_cast<double*>(dirty.data());
      for (std::int64_t i = 0; i < n; ++i) p[i] = -1.5;
    }
    CHECK(all_zero_bytes(storage::allocate<double>(n, init::zero)));
    CHECK(all_zero_bytes(storage::allocate<std::int16_t>(n, init::zero)));
    CHECK(all_zero_bytes(storage::allocate<bool>(n, init::zero)));
    CHECK(all_zero_bytes(storage::allocate<half>(n, init::zero)));
    const storage c = storage::allocate<std::complex<float>>(n, init::zero);
    CHECK(static_cast<const std::complex<float>*>(c.data())[n - 1] == std::complex<float>(0, 0));
  }
  CHECK_THROWS_AS(storage::allocate<float>(-1, init::zero), shape_error);
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
