// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include "golden.hpp"
import strata;
using namespace strata;

namespace {
dtype parse_dtype(const std::string& s) {
  for (int i = 0; i < num_dtypes; ++i)
    if (dtype_name(static_cast<dtype>(i)) == s) return static_cast<dtype>(i);
  if (s == "complex32") return dtype::complex64;  // PyTorch's ComplexHalf: strata has none
  throw std::runtime_error("unknown dtype " + s);
}

category parse_category(const std::string& s) {
  if (s == "bool") return category::boolean;
  if (s == "int") return category::integral;
  if (s == "float") return category::floating;
  return category::complex;
}

// Nearest bfloat16 to f by brute force (compare distances in double), ties to even.
std::uint16_t naive_bfloat16(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t lo = static_cast<std::uint16_t>(u >> 16);
  const std::uint16_t hi = static_cast<std::uint16_t>(lo + 1);
  const double x = f;
  const double dlo = std::abs(x - std::bit_cast<float>(std::uint32_t{lo} << 16));
  const float fhi = std::bit_cast<float>(std::uint32_t{hi} << 16);
  const double dhi = std::abs(x - static_cast<double>(fhi));  // inf when hi overflows
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}
}  // namespace

TEST_CASE("promote_types matches PyTorch's table for all 12x12 pairs", "[dtype][promotion]") {
  int pairs = 0;
  for (const auto& line : golden::lines("promotion.txt")) {
    std::istringstream in(line);
    std::string kind, a, b, r;
    in >> kind >> a >> b;
    if (kind == "pair") {
      in >> r;
      INFO(line);
      CHECK(promote_types(parse_dtype(a), parse_dtype(b)) == parse_dtype(r));
      ++pairs;
    } else if (kind == "scalar") {
      in >> r;
      INFO(line);
      CHECK(promote_with_scalar(parse_dtype(a), parse_category(b)) == parse_dtype(r));
    } else if (kind == "div") {
      INFO(line);
      CHECK(true_divide_type(parse_dtype(a)) == parse_dtype(b));
    }
  }
  CHECK(pairs == 144);
}

TEST_CASE("float128 sits above float64 among floats", "[dtype][promotion]") {
  for (int i = 0; i < num_dtypes; ++i) {
    const auto d = static_cast<dtype>(i);
    CHECK(promote_types(d, dtype::float128) == promote_types(dtype::float128, d));
    if (!is_complex(d)) CHECK(promote_types(d, dtype::float128) == dtype::float128);
    else CHECK(promote_types(d, dtype::float128) == dtype::complex128);
  }
  static_assert(std::is_same_v<promote_t<float128, double>, float128>);
  static_assert(std::is_same_v<promote_t<float128, std::int64_t>, float128>);
  static_assert(promote_with_scalar(dtype::float128, category::floating) == dtype::float128);
  static_assert(promote_with_scalar(dtype::float128, category::complex) == dtype::complex128);
}

TEST_CASE("float128 floor_divide rounds toward -inf and keeps zero's sign, as float64 does", "[dtype][float128]") {
  // torch.floor_divide(tensor([7.5, -7.5, 1.0, -1.0, -0.0, 3.0]), tensor([2., 2., 0., 4., 3., 4.]))
  //   == tensor([3., -4., inf, -1., -0., 0.])
  const auto a = strata::tensor<strata::float128>({7.5, -7.5, 1.0, -1.0, -0.0, 3.0});
  const auto b = strata::tensor<strata::float128>({2.0, 2.0, 0.0, 4.0, 3.0, 4.0});
  const auto q = strata::Tensor<strata::float128>(strata::floor_divide(a, b));
  const std::vector<double> want = {3.0, -4.0, std::numeric_limits<double>::infinity(), -1.0, -0.0, 0.0};
  const auto got = q.to_vector();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO(i);
    CHECK(static_cast<double>(got[i]) == want[i]);
    CHECK(std::signbit(static_cast<double>(got[i])) == std::signbit(want[i]));
  }
}

TEST_CASE("promote_t and the scalar rule in C++ types", "[dtype][promotion]") {
  static_assert(std::is_same_v<promote_t<std::uint8_t, std::int8_t>, std::int16_t>);
  static_assert(std::is_same_v<promote_t<half, bfloat16>, float>);
  static_assert(std::is_same_v<promote_t<float, std::complex<double>>, std::complex<double>>);
  static_assert(std::is_same_v<promote_t<double, std::complex<float>>, std::complex<double>>);
  static_assert(std::is_same_v<promote_t<bool, bool>, bool>);
  // Tensor<int32_t> + 2.5 is float32; Tensor<float> + 2.0 stays float32; Tensor<int8_t> + 1000 stays int8.
  static_assert(std::is_same_v<promote_scalar_t<std::int32_t, double>, float>);
  static_assert(std::is_same_v<promote_scalar_t<float, double>, float>);
  static_assert(std::is_same_v<promote_scalar_t<std::int8_t, int>, std::int8_t>);
  static_assert(std::is_same_v<promote_scalar_t<bool, int>, std::int64_t>);
  static_assert(std::is_same_v<promote_scalar_t<double, std::complex<double>>, std::complex<double>>);
  static_assert(std::is_same_v<promote_scalar_t<half, double>, half>);
  static_assert(true_divide_type(dtype::int32) == dtype::float32);
  static_assert(true_divide_type(dtype::float64) == dtype::float64);
}

TEST_CASE("dtype names and sizes and the type trait", "[dtype]") {
  static_assert(dtype_v<float> == dtype::float32);
  static_assert(dtype_v<const std::int16_t> == dtype::int16);
  static_assert(std::is_same_v<type_of_t<dtype::bfloat16>, bfloat16>);
  static_assert(std::is_same_v<type_of_t<dtype::float128>, float128>);
  static_assert(!element<std::string>);
  static_assert(!element<long double>);
  static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);
  CHECK(dtype_name(dtype::bool_) == "bool");
  CHECK(dtype_name(dtype::complex128) == "complex128");
  CHECK(dtype_name(dtype::float128) == "float128");
  CHECK(itemsize(dtype::int64) == 8);
  CHECK(itemsize(dtype::float16) == 2);
  CHECK(itemsize(dtype::complex64) == 8);
  CHECK(itemsize(dtype::float128) == sizeof(float128));
  CHECK(std::numeric_limits<float128>::digits == 113);
}

TEST_CASE("half: every bit pattern round-trips through float", "[dtype][half]") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const half h = half::from_bits(static_cast<std::uint16_t>(b));
    const float f = h;
    const _Float16 ref = std::bit_cast<_Float16>(static_cast<std::uint16_t>(b));
    if (std::isnan(f)) {
      CHECK(std::isnan(static_cast<float>(ref)));
      CHECK(std::isnan(static_cast<float>(half(f))));
      continue;
    }
    REQUIRE(f == static_cast<float>(ref));
    REQUIRE(half(f).bits == b);
  }
}

TEST_CASE("half: float to half rounds to nearest even like the compiler's _Float16", "[dtype][half]") {
  std::mt19937 gen(1);
  std::uniform_int_distribution<std::uint32_t> bits;
  const float edges[] = {65504.f, 65519.99f, 65520.f, 1e10f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f,
                         0x1.8p-24f, 0x1p-14f, 0x1.ffcp-15f, 1.0009765625f, 1.00146484375f,
                         -0.0f, std::numeric_limits<float>::infinity(), 2049.f, 2051.f};
  for (float f : edges) {
    INFO(f);
    CHECK(half(f).bits == std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)));
    CHECK(half(-f).bits == std::bit_cast<std::uint16_t>(static_cast<_Float16>(-f)));
  }
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(bits(gen));
    if (std::isnan(f)) continue;
    REQUIRE(half(f).bits == std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)));
  }
}

TEST_CASE("bfloat16 rounds to nearest even", "[dtype][bfloat16]") {
  CHECK(bfloat16(1.0f).bits == 0x3F80);
  CHECK(static_cast<float>(bfloat16(3.140625f)) == 3.140625f);
  CHECK(bfloat16(std::bit_cast<float>(0x3F808000u)).bits == 0x3F80);  // tie, even stays
  CHECK(bfloat16(std::bit_cast<float>(0x3F818000u)).bits == 0x3F82);  // tie, odd rounds up
  CHECK(bfloat16(std::bit_cast<float>(0x3F808001u)).bits == 0x3F81);
  CHECK(std::isnan(static_cast<float>(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isinf(static_cast<float>(bfloat16(std::numeric_limits<float>::max()))));
  std::mt19937 gen(2);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::bit_cast<float>(bits(gen));
    if (std::isnan(f) || std::isinf(f) || std::abs(f) > 0x1.fep127f) continue;
    REQUIRE(bfloat16(f).bits == naive_bfloat16(f));
  }
}

// One element converted as a tensor conversion (copy_) does it.
template <class To, class From>
To convert(From v) {
  return Tensor<To>(from_vector<From>({v})).item();
}

TEST_CASE("element conversion follows PyTorch's casts", "[dtype][convert]") {
  CHECK(convert<std::int32_t>(2.9) == 2);
  CHECK(convert<std::int32_t>(-2.9f) == -2);
  CHECK(convert<std::int32_t>(3e9) == INT32_MIN);  // as x86 cvttsd2si, and PyTorch on it
  CHECK(convert<std::int64_t>(std::numeric_limits<double>::quiet_NaN()) == INT64_MIN);
  CHECK(convert<std::int8_t>(300.0) == 44);  // via int32, then modulo 2^8
  CHECK(convert<std::uint8_t>(-1.0) == 255);
  CHECK(convert<std::int8_t>(std::int64_t{1000}) == -24);
  CHECK(convert<bool>(0.5f) == true);
  CHECK(convert<bool>(std::complex<float>(0, 1)) == true);
  CHECK(convert<float>(std::complex<double>(1.5, 9)) == 1.5f);
  CHECK(convert<std::complex<float>>(2) == std::complex<float>(2, 0));
  CHECK(convert<half>(1.0009765625).bits == 0x3C01);
  CHECK(convert<float>(bfloat16(2.0f)) == 2.0f);
  CHECK(convert<std::int64_t>(true) == 1);
  const float128 third = float128(1) / 3;
  CHECK(convert<double>(third) == 1.0 / 3);
  CHECK(convert<std::int32_t>(float128(-7.75)) == -7);
  CHECK(convert<float128>(std::int64_t{1} << 62) == float128(4611686018427387904.0));
  CHECK(convert<std::int64_t>(float128(1e30)) == INT64_MIN);
}
