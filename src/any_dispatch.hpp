// SPDX-License-Identifier: MIT
// What the AnyTensor units (src/any*.cpp) share: which dtypes a typed operation accepts, and
// on_dtype, the visit of an input's dtype that throws PyTorch's "not implemented" for the rest.
// Included after `module strata.any;` and the imports of strata.expr (declarations only in an
// anonymous namespace: each unit has its own copy).
#pragma once

namespace strata {
namespace {
using detail::visit_dtype;
template <class T>
using tag = std::type_identity<T>;

// The dtypes a typed function accepts (the typed functions refuse the others at compile time;
// the AnyTensor functions throw PyTorch's "not implemented" for them).
template <class T> inline constexpr bool all_v = true;
template <class T> inline constexpr bool nonbool_v = !std::is_same_v<T, bool>;
template <class T> inline constexpr bool real_v = !detail::is_complex_v<T>;
template <class T> inline constexpr bool bitwise_v = std::is_integral_v<T>;
template <class T> inline constexpr bool int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> inline constexpr bool inexact_v = !std::is_integral_v<T>;  // floating or complex
template <class T> inline constexpr bool real_float_v = !std::is_integral_v<T> && !detail::is_complex_v<T>;
template <class T> inline constexpr bool real_nonbool_v = real_v<T> && nonbool_v<T>;
#define STRATA_TRAIT(NAME, V) \
  template <class T> struct NAME { static constexpr bool value = V<T>; };
STRATA_TRAIT(all_t, all_v)
STRATA_TRAIT(real_t_, real_v)
STRATA_TRAIT(inexact_t, inexact_v)
STRATA_TRAIT(real_float_t, real_float_v)
STRATA_TRAIT(real_nonbool_t, real_nonbool_v)
#undef STRATA_TRAIT

// f(x.as<T>()) for x's element type T when OK<T>, else PyTorch's "not implemented" for name.
template <template <class> class OK, class R = AnyTensor, class F>
R on_dtype(const AnyTensor& x, const char* name, F&& f) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) -> R {
    if constexpr (OK<T>::value) return f(x.as<T>());
    else detail::throw_not_implemented(name, x.dtype());
  });
}
[[maybe_unused]] [[noreturn]] void throw_unreachable() {
  throw error("strata: an AnyTensor dispatch reached a dtype it excludes");
}
}  // namespace
}  // namespace strata
