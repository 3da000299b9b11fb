// SPDX-License-Identifier: MIT
// Element types, their dtype tags, and PyTorch's type promotion.
module;
#include "dtype_list.hpp"
export module strata.dtype;
import strata.std;

namespace strata::detail {
constexpr std::uint16_t float_to_half_bits(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;   // NaN stays a (quiet) NaN
  if (a >= 0x47800000u) return sign | 0x7C00u;  // >= 2^16 (and inf): overflow to inf
  if (a < 0x33000000u) return sign;             // < 2^-25: rounds to zero
  const int e = static_cast<int>(a >> 23) - 127;
  const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  // Normal halves keep 11 significant bits (drop 13); subnormals count units of 2^-24.
  const int shift = e >= -14 ? 13 : -1 - e;
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;  // round to nearest, ties to even
  // For normals q carries the implicit bit; adding it to (e + 14) << 10 lets a rounding
  // carry step into the exponent (up to inf) by itself.
  const std::uint32_t bits = e >= -14 ? (static_cast<std::uint32_t>(e + 14) << 10) + q : q;
  return static_cast<std::uint16_t>(sign | bits);
}

constexpr float half_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 0x1p-24f;  // exact: at most 10 bits
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

constexpr std::uint16_t float_to_bfloat16_bits(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t lsb = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7FFFu + lsb) >> 16);  // ties to even
}
}  // namespace strata::detail

export namespace strata {
/// Element type tags, in PyTorch's names; float128 is quad precision (Boost.Multiprecision).
enum class dtype : std::int8_t {
  bool_, uint8, int8, int16, int32, int64, float16, bfloat16,
  float32, float64, complex64, complex128, float128
};
/// Number of dtypes.
inline constexpr int num_dtypes = 13;

/// IEEE binary16; computes through float, converts with round-to-nearest-even.
struct half {
  std::uint16_t bits;  ///< the raw binary16 pattern (uninitialized by default, like float)
  constexpr half() = default;
  constexpr half(float f) noexcept : bits(detail::float_to_half_bits(f)) {}  // NOLINT: implicit like c10::Half
  /// Builds a half from its raw bit pattern.
  static constexpr half from_bits(std::uint16_t b) noexcept { half h{}; h.bits = b; return h; }
  constexpr operator float() const noexcept { return detail::half_bits_to_float(bits); }  // NOLINT
};

/// Brain float16 (8-bit exponent, 7-bit mantissa); converts with round-to-nearest-even.
struct bfloat16 {
  std::uint16_t bits;  ///< the raw bfloat16 pattern (upper half of a float)
  constexpr bfloat16() = default;
  constexpr bfloat16(float f) noexcept : bits(detail::float_to_bfloat16_bits(f)) {}  // NOLINT
  /// Builds a bfloat16 from its raw bit pattern.
  static constexpr bfloat16 from_bits(std::uint16_t b) noexcept { bfloat16 h{}; h.bits = b; return h; }
  constexpr operator float() const noexcept {  // NOLINT
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  }
};

/// Prints a half as the float it holds.
inline std::ostream& operator<<(std::ostream& os, half h) { return os << static_cast<float>(h); }
/// Prints a bfloat16 as the float it holds.
inline std::ostream& operator<<(std::ostream& os, bfloat16 h) { return os << static_cast<float>(h); }

/// Quad precision (113-bit significand, binary128 exponent range), expression templates off.
using float128 = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<113, boost::multiprecision::digit_base_2, void,
                                         std::int16_t, -16382, 16383>,
    boost::multiprecision::et_off>;

}  // namespace strata


// float128's operators and math functions live in Boost's namespace, which strata.std exports
// to strata's modules only (it is not re-exported): re-export them so that `import strata;`
// alone lets users (and strata's kernels, instantiated in the user's translation unit)
// compute with float128.
export namespace boost::multiprecision {
#define STRATA_USING_FLOAT128(f) using boost::multiprecision::f;
STRATA_FOR_EACH_FLOAT128_FUNCTION(STRATA_USING_FLOAT128)
#undef STRATA_USING_FLOAT128
}  // namespace boost::multiprecision

// Shared by the operator modules (exported in detail).
export namespace strata::detail {
/// The real type of an element type: T itself, or the part type of std::complex<T>.
template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
/// real_of<T>::type.
template <class T> using real_t = typename real_of<T>::type;
/// PyTorch's ScalarType name of a dtype ("Float", "Long"), as its messages print it.
inline std::string scalar_type_name(dtype d) {
  constexpr std::string_view names[num_dtypes] = {"Bool",  "Byte",   "Char",         "Short",         "Int",
                                                  "Long",  "Half",   "BFloat16",     "Float",         "Double",
                                                  "ComplexFloat", "ComplexDouble", "Float128"};
  return std::string(names[static_cast<int>(d)]);
}
/// c10's C++ name of a dtype ("int64_t", "at::Half"), as its conversion messages print it.
inline std::string c10_type_name(dtype d) {
  constexpr std::string_view names[num_dtypes] = {
      "bool",  "uint8_t", "int8_t",       "int16_t", "int",                 "int64_t",              "at::Half",
      "at::BFloat16", "float", "double", "c10::complex<float>", "c10::complex<double>", "strata::float128"};
  return std::string(names[static_cast<int>(d)]);
}
}  // namespace strata::detail

export namespace strata {
/// The four categories promotion orders: bool < integral < floating < complex.
enum class category : std::int8_t { boolean, integral, floating, complex };
}  // namespace strata

namespace strata::detail {
template <class T> struct dtype_of { static constexpr bool known = false; };
#define STRATA_DTYPE_OF(T, D) \
  template <> struct dtype_of<T> { static constexpr bool known = true; static constexpr dtype value = dtype::D; };
STRATA_DTYPE_OF(bool, bool_)
STRATA_DTYPE_OF(std::uint8_t, uint8)
STRATA_DTYPE_OF(std::int8_t, int8)
STRATA_DTYPE_OF(std::int16_t, int16)
STRATA_DTYPE_OF(std::int32_t, int32)
STRATA_DTYPE_OF(std::int64_t, int64)
STRATA_DTYPE_OF(half, float16)
STRATA_DTYPE_OF(bfloat16, bfloat16)
STRATA_DTYPE_OF(float, float32)
STRATA_DTYPE_OF(double, float64)
STRATA_DTYPE_OF(std::complex<float>, complex64)
STRATA_DTYPE_OF(std::complex<double>, complex128)
STRATA_DTYPE_OF(float128, float128)
#undef STRATA_DTYPE_OF

template <dtype D> struct type_of;
template <> struct type_of<dtype::bool_> { using type = bool; };
template <> struct type_of<dtype::uint8> { using type = std::uint8_t; };
template <> struct type_of<dtype::int8> { using type = std::int8_t; };
template <> struct type_of<dtype::int16> { using type = std::int16_t; };
template <> struct type_of<dtype::int32> { using type = std::int32_t; };
template <> struct type_of<dtype::int64> { using type = std::int64_t; };
template <> struct type_of<dtype::float16> { using type = half; };
template <> struct type_of<dtype::bfloat16> { using type = bfloat16; };
template <> struct type_of<dtype::float32> { using type = float; };
template <> struct type_of<dtype::float64> { using type = double; };
template <> struct type_of<dtype::complex64> { using type = std::complex<float>; };
template <> struct type_of<dtype::complex128> { using type = std::complex<double>; };
template <> struct type_of<dtype::float128> { using type = float128; };

// Promotion table in PyTorch's order of rows; float128 (last) sits above float64 among the
// floats. A complex paired with float128 gives complex128: there is no complex quad type.
constexpr dtype b1 = dtype::bool_, u1 = dtype::uint8, i1 = dtype::int8, i2 = dtype::int16,
                i4 = dtype::int32, i8 = dtype::int64, f2 = dtype::float16, bf = dtype::bfloat16,
                f4 = dtype::float32, f8 = dtype::float64, c4 = dtype::complex64,
                c8 = dtype::complex128, q = dtype::float128;
constexpr dtype promotion_table[num_dtypes][num_dtypes] = {
    /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  c4  c8  q  */
    /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8, q},
    /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8, q},
    /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8, q},
    /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8, q},
    /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c4, c8, q},
    /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c4, c8, q},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c4, c8, q},
    /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c4, c8, q},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c4, c8, q},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, q},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c4, c4, c8, c4, c8, c8},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
    /* q  */ {q,  q,  q,  q,  q,  q,  q,  q,  q,  q,  c8, c8, q},
};
}  // namespace strata::detail

export namespace strata {
/// True for the C++ types a Tensor can hold.
template <class T>
concept element = detail::dtype_of<std::remove_cv_t<T>>::known;

/// The dtype tag of element type T.
template <element T>
inline constexpr dtype dtype_v = detail::dtype_of<std::remove_cv_t<T>>::value;

/// The element type of dtype D.
template <dtype D>
using type_of_t = typename detail::type_of<D>::type;

/// PyTorch's name of a dtype ("float32", "int64", "bool", ...).
constexpr std::string_view dtype_name(dtype d) noexcept {
  constexpr std::string_view names[num_dtypes] = {
      "bool",    "uint8",    "int8",    "int16",     "int32",      "int64",   "float16",
      "bfloat16", "float32", "float64", "complex64", "complex128", "float128"};
  return names[static_cast<int>(d)];
}

/// Bytes per element of a dtype.
constexpr std::size_t itemsize(dtype d) noexcept {
  constexpr std::size_t sizes[num_dtypes] = {
      sizeof(bool),  1, 1, 2, 4, 8, 2, 2, 4, 8, sizeof(std::complex<float>),
      sizeof(std::complex<double>), sizeof(float128)};
  return sizes[static_cast<int>(d)];
}

/// The promotion category of a dtype.
constexpr category category_of(dtype d) noexcept {
  switch (d) {
    case dtype::bool_: return category::boolean;
    case dtype::uint8: case dtype::int8: case dtype::int16: case dtype::int32: case dtype::int64:
      return category::integral;
    case dtype::complex64: case dtype::complex128: return category::complex;
    default: return category::floating;
  }
}

/// True for the floating dtypes (float16, bfloat16, float32, float64, float128).
constexpr bool is_floating_point(dtype d) noexcept { return category_of(d) == category::floating; }
/// True for complex64 and complex128.
constexpr bool is_complex(dtype d) noexcept { return category_of(d) == category::complex; }

/// PyTorch's torch.promote_types, extended with float128 above float64.
constexpr dtype promote_types(dtype a, dtype b) noexcept {
  return detail::promotion_table[static_cast<int>(a)][static_cast<int>(b)];
}

/// The element type two element types promote to.
template <element A, element B>
using promote_t = type_of_t<promote_types(dtype_v<A>, dtype_v<B>)>;

/// The result dtype of a tensor of dtype `t` combined with a C++ scalar of category `s`
/// (a "wrapped number"): the scalar may raise the category, never the width within one.
constexpr dtype promote_with_scalar(dtype t, category s) noexcept {
  if (s <= category_of(t)) return t;
  switch (s) {
    case category::integral: return dtype::int64;
    case category::floating: return dtype::float32;  // the default float dtype
    default:  // complex: keep the width of a floating tensor
      return t == dtype::float64 || t == dtype::float128 ? dtype::complex128 : dtype::complex64;
  }
}

/// The element type of a Tensor<T> combined with a C++ scalar of type S.
template <element T, element S>
using promote_scalar_t = type_of_t<promote_with_scalar(dtype_v<T>, category_of(dtype_v<S>))>;

/// Prints a dtype as PyTorch's repr does: "torch.float32" ("strata.float128" for quad).
inline std::ostream& operator<<(std::ostream& os, dtype d) {
  return os << (d == dtype::float128 ? "strata." : "torch.") << dtype_name(d);
}

/// The dtype of true division: integers and bool divide into the default float dtype.
constexpr dtype true_divide_type(dtype d) noexcept {
  return category_of(d) <= category::integral ? dtype::float32 : d;
}
}  // namespace strata
