// SPDX-License-Identifier: MIT
// The standard library's (and Boost.Multiprecision's) names that strata's interfaces use, included once: every other module
// imports this one instead of including the headers in its own global module fragment, so the
// standard library is parsed, stored and merged once per build instead of once per module.
// Internal: no module re-exports it, so a user's code sees only the headers it includes itself.
module;
#include <boost/multiprecision/cpp_bin_float.hpp>
#include "dtype_list.hpp"
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <istream>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
export module strata.std;

export namespace std {
using std::abs;
using std::apply;
using std::array;
using std::as_const;
using std::atan2;
using std::atomic;
using std::bit_cast;
using std::ceil;
using std::complex;
using std::conditional_t;
using std::conj;
using std::construct_at;
using std::copy;
using std::copysign;
using std::cos;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::false_type;
using std::floor;
using std::fmod;
using std::forward;
using std::function;
using std::gcd;
using std::get;
using std::hypot;
using std::ifstream;
using std::index_sequence;
using std::index_sequence_for;
using std::initializer_list;
using std::int16_t;
using std::int32_t;
using std::int64_t;
using std::int8_t;
using std::integral;
using std::integral_constant;
using std::is_arithmetic_v;
using std::is_floating_point_v;
using std::is_integral_v;
using std::is_base_of_v;
using std::is_same_v;
using std::is_trivially_copyable_v;
using std::is_trivially_destructible_v;
using std::is_unsigned_v;
using std::is_void_v;
using std::isinf;
using std::istream;
using std::lock_guard;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::make_index_sequence;
using std::make_tuple;
using std::make_unsigned_t;
using std::max;
using std::memcpy;
using std::memmove;
using std::memory_order_relaxed;
using std::min;
using std::move;
using std::mutex;
using std::nearbyint;
using std::nullopt;
using std::nullopt_t;
using std::numeric_limits;
using std::ofstream;
using std::optional;
using std::ostream;
using std::pair;
using std::pow;
using std::ptrdiff_t;
using std::remove_cv_t;
using std::remove_cvref_t;
using std::rotate;
using std::runtime_error;
using std::same_as;
using std::shared_ptr;
using std::sin;
using std::size_t;
using std::span;
using std::sqrt;
using std::streamsize;
using std::string;
using std::string_view;
using std::tan;
using std::tanh;
using std::to_string;
using std::true_type;
using std::trunc;
using std::tuple;
using std::tuple_element;
using std::tuple_size;
using std::type_identity;
using std::type_identity_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;
using std::uintptr_t;
using std::vector;
// Operators and functions found by argument-dependent lookup on the types above.
using std::operator==;
using std::operator<=>;
using std::operator+;
using std::operator-;
using std::operator*;
using std::operator/;
using std::operator<<;
using std::operator>>;
}  // namespace std

// float128 (Boost's number) finds its operators and functions by argument-dependent lookup.
export namespace boost::multiprecision {
using boost::multiprecision::number;
using boost::multiprecision::cpp_bin_float;
using boost::multiprecision::digit_base_2;
using boost::multiprecision::et_off;
#define STRATA_USING_FLOAT128(f) using boost::multiprecision::f;
STRATA_FOR_EACH_FLOAT128_FUNCTION(STRATA_USING_FLOAT128)
#undef STRATA_USING_FLOAT128
}  // namespace boost::multiprecision

// make_shared is a friend of shared_ptr, and clang refuses a friend whose name a using
// declaration in the same namespace redeclares: it is exported under strata::detail.
export namespace strata::detail {
using std::make_shared;
}  // namespace strata::detail

// The iterators of vector and string are __gnu_cxx's; their comparisons and arithmetic too.
export namespace __gnu_cxx {
using __gnu_cxx::operator==;
using __gnu_cxx::operator<=>;
using __gnu_cxx::operator+;
using __gnu_cxx::operator-;
}  // namespace __gnu_cxx
