// SPDX-License-Identifier: MIT
// Creation, shape and joining operators with PyTorch 1.13's names, result types and messages:
// linspace/logspace and the *_like factories; tril/triu, flip, roll, repeat/tile,
// repeat_interleave, pad; cat/stack/hstack/vstack; split/chunk/unbind/tensor_split.
//
// Copies run on the loop engine (one strided copy per piece: cat is one copy per input into
// a narrow of the result, repeat one copy from a stride-0 view, flip one copy from a view with
// negated strides, which the engine walks but the public API cannot build); index-mapped
// copies (reflect/replicate padding, repeat_interleave with a tensor) are one gather loop.
// Splitting returns views. Operators that copy record their backward for floating and
// complex dtypes. Everything heavy is compiled once per dtype in src/manip.cpp.
module;
#include "dtype_list.hpp"
export module strata.manip;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.loop;
import strata.tensor;

namespace strata::detail {
template <class T> inline constexpr bool is_std_complex_v = false;
template <class T> inline constexpr bool is_std_complex_v<std::complex<T>> = true;

/// Throws PyTorch's "value cannot be converted to type <T> without overflow".
[[noreturn]] void throw_scalar_overflow(dtype t);

/// The range c10 checks a scalar against when converting it to the real type R.
template <class R>
struct range_of {
  static constexpr double lowest = static_cast<double>(std::numeric_limits<R>::lowest());
  static constexpr double max = static_cast<double>(std::numeric_limits<R>::max());
  static constexpr bool has_infinity = std::numeric_limits<R>::has_infinity;
  static constexpr bool has_nan = std::numeric_limits<R>::has_quiet_NaN;
};
template <> struct range_of<half> {
  static constexpr double lowest = -65504.0, max = 65504.0;
  static constexpr bool has_infinity = true, has_nan = true;
};
template <> struct range_of<bfloat16> {
  static constexpr double lowest = -3.3895313892515355e38, max = 3.3895313892515355e38;
  static constexpr bool has_infinity = true, has_nan = true;
};

/// c10::overflows: whether the real scalar v does not fit the real type R.
template <class R, class S>
bool overflows(S v) {
  if constexpr (std::is_same_v<R, float128> || std::is_same_v<R, bool> || std::is_same_v<S, bool>) {
    return false;
  } else {
    using lim = range_of<R>;
    const auto d = static_cast<double>(v);
    if constexpr (std::is_integral_v<S>) {
      // An unsigned target lets negative integers wrap (-255 is 1 in uint8).
      if (std::is_unsigned_v<R> && v < 0) return -d > lim::max;
      return d < lim::lowest || d > lim::max;
    } else {
      if (d != d) return !lim::has_nan;
      if (d == std::numeric_limits<double>::infinity() || d == -std::numeric_limits<double>::infinity())
        return !lim::has_infinity;
      return d < lim::lowest || d > lim::max;
    }
  }
}

/// A Python scalar argument (start, end) as torch's Scalar.to<T>(): range-checked with c10's
/// rule, then converted (an integer into an integer type wraps, as c10's cast does).
template <element T, class S>
T scalar_to(S v) {
  using R = typename real_of<T>::type;
  if constexpr (is_std_complex_v<S>) {
    static_assert(is_std_complex_v<T>, "A complex start or end needs a complex result type (PyTorch: the inferred "
                                       "complex dtype can't be safely cast to the passed dtype).");
    if (overflows<R>(v.real()) || overflows<R>(v.imag())) throw_scalar_overflow(dtype_v<T>);
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else {
    static_assert(std::is_arithmetic_v<S>, "start and end must be C++ numbers or std::complex");
    if (overflows<R>(v)) throw_scalar_overflow(dtype_v<T>);
    if constexpr (std::is_integral_v<T> && std::is_integral_v<S>) return static_cast<T>(v);
    else return convert<T>(v);
  }
}
/// A start or end as a double (logspace's single step uses it unrounded).
template <class S>
auto scalar_value(S v) {
  if constexpr (is_std_complex_v<S>) return std::complex<double>(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  else return static_cast<double>(v);
}

template <element T>
Tensor<T> linspace_values(T start, T end, std::int64_t steps);
template <element T>
Tensor<T> logspace_values(T start, T end, std::int64_t steps, double base,
                          std::conditional_t<is_std_complex_v<T>, std::complex<double>, double> first);
template <element T>
Tensor<T> cat_list(std::span<const Tensor<T>> tensors, std::int64_t dim);
template <element T>
Tensor<T> stack_list(std::span<const Tensor<T>> tensors, std::int64_t dim);
template <element T>
Tensor<T> hstack_list(std::span<const Tensor<T>> tensors);
template <element T>
Tensor<T> vstack_list(std::span<const Tensor<T>> tensors);
template <element T>
Tensor<T> roll_list(const Tensor<T>& t, int_list shifts, int_list dims);
template <element T>
Tensor<T> repeat_interleave_by(const Tensor<T>& t, std::int64_t repeats, std::optional<std::int64_t> dim);
template <element T, element I>
Tensor<T> repeat_interleave_by(const Tensor<T>& t, const Tensor<I>& repeats, std::optional<std::int64_t> dim);
template <element I>
Tensor<I> repeat_interleave_counts(const Tensor<I>& repeats);
template <element T>
std::vector<Tensor<T>> split_by(const Tensor<T>& t, std::int64_t split_size, std::int64_t dim);
template <element T>
std::vector<Tensor<T>> tensor_split_by(const Tensor<T>& t, std::int64_t sections, std::int64_t dim);
template <element T>
std::vector<Tensor<T>> tensor_split_at(const Tensor<T>& t, int_list indices, std::int64_t dim);

/// The element type a pack of element types promotes to (torch.result_type of tensors).
template <element T, element... Ts>
struct promote_all { using type = T; };
template <element T, element U, element... Ts>
struct promote_all<T, U, Ts...> { using type = typename promote_all<promote_t<T, U>, Ts...>::type; };

/// Each tensor of a tuple converted to R (the same handle when already R; recorded otherwise).
template <element R, element... Ts>
std::vector<Tensor<R>> promoted(const std::tuple<Tensor<Ts>...>& tensors) {
  std::vector<Tensor<R>> v;
  v.reserve(sizeof...(Ts));
  std::apply([&v](const auto&... t) { (v.push_back(t.template to<R>()), ...); }, tensors);
  return v;
}
template <class U, class T>
using like_t = std::conditional_t<std::is_void_v<U>, T, U>;
}  // namespace strata::detail

export namespace strata {
// ---- creation ----
/// steps values from start to end inclusive (torch.linspace; T defaults to float32). Bitwise
/// PyTorch 1.13's CPU values: the first half counted from start, the second from end, in the
/// pattern of its 256-bit vector kernel.
template <element T = float, class S, class E>
Tensor<T> linspace(S start, E end, std::int64_t steps) {
  static_assert(!std::is_same_v<T, bool>, "linspace is not implemented for bool (PyTorch: \"linspace_cpu\" not implemented for 'Bool').");
  const T s = detail::scalar_to<T>(start);
  const T e = detail::scalar_to<T>(end);
  return detail::linspace_values<T>(s, e, steps);
}
/// steps values base^x for x from start to end inclusive (torch.logspace; T defaults to float32).
template <element T = float, class S, class E>
Tensor<T> logspace(S start, E end, std::int64_t steps, double base = 10.0) {
  static_assert(!std::is_same_v<T, bool> && !std::is_same_v<T, half>,
                "logspace is not implemented for bool and float16 (as in PyTorch 1.13).");
  const T s = detail::scalar_to<T>(start);
  const T e = detail::scalar_to<T>(end);
  if constexpr (detail::is_std_complex_v<T>) {
    return detail::logspace_values<T>(s, e, steps, base, std::complex<double>(detail::scalar_value(start)));
  } else {
    static_assert(!detail::is_std_complex_v<S>, "A complex start needs a complex result type.");
    return detail::logspace_values<T>(s, e, steps, base, detail::scalar_value(start));
  }
}
/// An uninitialized contiguous tensor of t's sizes (element type U, default t's).
template <class U = void, tensor_like X>
Tensor<detail::like_t<U, detail::value_t<X>>> empty_like(const X& x) { return empty<detail::like_t<U, detail::value_t<X>>>(x.sizes()); }
/// A contiguous tensor of zeros with t's sizes (element type U, default t's).
template <class U = void, tensor_like X>
Tensor<detail::like_t<U, detail::value_t<X>>> zeros_like(const X& x) { return zeros<detail::like_t<U, detail::value_t<X>>>(x.sizes()); }
/// A contiguous tensor of ones with t's sizes (element type U, default t's).
template <class U = void, tensor_like X>
Tensor<detail::like_t<U, detail::value_t<X>>> ones_like(const X& x) { return ones<detail::like_t<U, detail::value_t<X>>>(x.sizes()); }
/// A contiguous tensor of t's sizes filled with value, converted as PyTorch casts it (2.7 into
/// an integer tensor is 2).
template <class U = void, tensor_like X, class S>
  requires(element<S> || std::is_arithmetic_v<S>)
Tensor<detail::like_t<U, detail::value_t<X>>> full_like(const X& x, S value) {
  using R = detail::like_t<U, detail::value_t<X>>;
  return full<R>(x.sizes(), detail::convert<R>(value));
}

// ---- shape and copy ----
/// The lower triangle of the last two dims (elements with column - row <= diagonal), the rest 0.
template <element T>
Tensor<T> tril(const Tensor<T>& t, std::int64_t diagonal = 0);
/// The upper triangle of the last two dims (elements with column - row >= diagonal), the rest 0.
template <element T>
Tensor<T> triu(const Tensor<T>& t, std::int64_t diagonal = 0);
/// A copy with the order of elements reversed along each of dims.
template <element T>
Tensor<T> flip(const Tensor<T>& t, int_list dims);
/// Rolls elements shifts[k] places along dims[k] (wrapping around); with no dims and one
/// shift, rolls the flattened tensor and restores its shape.
template <tensor_like X>
Tensor<detail::value_t<X>> roll(const X& x, int_list shifts, int_list dims = {}) {
  return detail::roll_list(detail::as_tensor(x), shifts, dims);
}
/// Rolls the flattened tensor shift places and restores its shape.
template <tensor_like X, std::integral I>
Tensor<detail::value_t<X>> roll(const X& x, I shift) {
  return detail::roll_list(detail::as_tensor(x), {static_cast<std::int64_t>(shift)}, {});
}
/// Rolls shift places along dim.
template <tensor_like X, std::integral I>
Tensor<detail::value_t<X>> roll(const X& x, I shift, std::int64_t dim) {
  return detail::roll_list(detail::as_tensor(x), {static_cast<std::int64_t>(shift)}, {dim});
}
/// The tensor repeated repeats[k] times along dim k (leading repeats add dims), as Tensor.repeat.
template <element T>
Tensor<T> repeat(const Tensor<T>& t, int_list repeats);
/// numpy.tile: repeat, with reps padded with leading 1s to t's rank.
template <element T>
Tensor<T> tile(const Tensor<T>& t, int_list reps);
/// Each element repeated `repeats` times in place along dim (of the flattened tensor when no dim).
template <tensor_like X, std::integral I>
Tensor<detail::value_t<X>> repeat_interleave(const X& x, I repeats, std::optional<std::int64_t> dim = std::nullopt) {
  return detail::repeat_interleave_by(detail::as_tensor(x), static_cast<std::int64_t>(repeats), dim);
}
/// Element i along dim repeated repeats[i] times (repeats: int32/int64, 0-dim or 1-D).
template <tensor_like X, tensor_like R>
Tensor<detail::value_t<X>> repeat_interleave(const X& x, const R& repeats, std::optional<std::int64_t> dim = std::nullopt) {
  using I = detail::value_t<R>;
  static_assert(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>,
                "repeat_interleave: repeats must be an int32 or int64 tensor (PyTorch: \"repeat_interleave_cpu\" "
                "not implemented for other types).");
  return detail::repeat_interleave_by(detail::as_tensor(x), detail::as_tensor(repeats), dim);
}
/// The indices 0, 1, ... each repeated repeats[i] times (of repeats' element type).
template <tensor_like R>
Tensor<detail::value_t<R>> repeat_interleave(const R& repeats) {
  using I = detail::value_t<R>;
  static_assert(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>,
                "repeat_interleave: repeats must be an int32 or int64 tensor (PyTorch: \"repeat_interleave_cpu\" "
                "not implemented for other types).");
  return detail::repeat_interleave_counts(detail::as_tensor(repeats));
}
/// torch.nn.functional.pad: pad lists (before, after) pairs from the last dim backward.
/// mode "constant" fills with value (negative pads crop); "reflect" and "replicate" pad the
/// last 1, 2 or 3 dims of a tensor with one or two more dims (PyTorch's restrictions);
/// "circular" wraps the last 1, 2 or 3 dims of a tensor with two more dims (batch, channel).
template <element T>
Tensor<T> pad(const Tensor<T>& t, int_list pad, std::string_view mode = "constant",
              std::optional<double> value = std::nullopt);

// ---- joining ----
/// Concatenates a vector of tensors along an existing dim.
template <element T>
Tensor<T> cat(const std::vector<Tensor<T>>& tensors, std::int64_t dim = 0) { return detail::cat_list<T>(tensors, dim); }
/// Concatenates tensors of different element types into their promoted type
/// (cat(std::tuple{int32s, doubles}) is float64, as torch.cat); others are converted first.
template <element... Ts>
Tensor<typename detail::promote_all<Ts...>::type> cat(const std::tuple<Tensor<Ts>...>& tensors, std::int64_t dim = 0) {
  using R = typename detail::promote_all<Ts...>::type;
  return detail::cat_list<R>(detail::promoted<R>(tensors), dim);
}
/// Stacks a vector of equal-sized tensors along a new dim.
template <element T>
Tensor<T> stack(const std::vector<Tensor<T>>& tensors, std::int64_t dim = 0) { return detail::stack_list<T>(tensors, dim); }
/// Stacks tensors of different element types into their promoted type.
template <element... Ts>
Tensor<typename detail::promote_all<Ts...>::type> stack(const std::tuple<Tensor<Ts>...>& tensors, std::int64_t dim = 0) {
  using R = typename detail::promote_all<Ts...>::type;
  return detail::stack_list<R>(detail::promoted<R>(tensors), dim);
}
/// hstack of a vector of tensors.
template <element T>
Tensor<T> hstack(const std::vector<Tensor<T>>& tensors) { return detail::hstack_list<T>(tensors); }
/// hstack of tensors of different element types (promoted).
template <element... Ts>
Tensor<typename detail::promote_all<Ts...>::type> hstack(const std::tuple<Tensor<Ts>...>& tensors) {
  using R = typename detail::promote_all<Ts...>::type;
  return detail::hstack_list<R>(detail::promoted<R>(tensors));
}
/// vstack of a vector of tensors.
template <element T>
Tensor<T> vstack(const std::vector<Tensor<T>>& tensors) { return detail::vstack_list<T>(tensors); }
/// vstack of tensors of different element types (promoted).
template <element... Ts>
Tensor<typename detail::promote_all<Ts...>::type> vstack(const std::tuple<Tensor<Ts>...>& tensors) {
  using R = typename detail::promote_all<Ts...>::type;
  return detail::vstack_list<R>(detail::promoted<R>(tensors));
}

/// An entry of a braced list given to cat, stack, hstack or vstack: a tensor of T, or an
/// expression with elements of T (evaluated once), so that {x, pow(x, 2), sin(3 * x)} is a list.
template <element T>
struct tensor_list_entry {
  Tensor<T> tensor;  ///< the tensor, or the expression's result
  /// A tensor of T (the same handle).
  tensor_list_entry(const Tensor<T>& t) : tensor(t) {}  // NOLINT: implicit, as a braced list's element
  /// An expression of elements of T, evaluated.
  template <detail::lazy E>
    requires std::is_same_v<typename E::value_type, T>
  tensor_list_entry(const E& e) : tensor(e.eval()) {}  // NOLINT
};
namespace detail {
template <element T>
std::vector<Tensor<T>> list_tensors(std::initializer_list<tensor_list_entry<T>> entries) {
  std::vector<Tensor<T>> v;
  v.reserve(entries.size());
  for (const auto& e : entries) v.push_back(e.tensor);
  return v;
}
}  // namespace detail
// One non-template overload per dtype, so that a braced list of tensors and expressions of that
// element type converts (a template could not deduce T from a list of different node types).
#define STRATA_JOIN_LISTS(T)                                                                                   \
  /** Concatenates tensors along an existing dim (1-D empty tensors are skipped, as PyTorch's legacy rule). */ \
  inline Tensor<T> cat(std::initializer_list<tensor_list_entry<T>> tensors, std::int64_t dim = 0) {            \
    return detail::cat_list<T>(detail::list_tensors<T>(tensors), dim);                                          \
  }                                                                                                            \
  /** Stacks equal-sized tensors along a new dim. */                                                           \
  inline Tensor<T> stack(std::initializer_list<tensor_list_entry<T>> tensors, std::int64_t dim = 0) {          \
    return detail::stack_list<T>(detail::list_tensors<T>(tensors), dim);                                        \
  }                                                                                                            \
  /** Concatenates column-wise (dim 1; dim 0 for 1-D tensors; 0-dim tensors become 1-D). */                    \
  inline Tensor<T> hstack(std::initializer_list<tensor_list_entry<T>> tensors) {                               \
    return detail::hstack_list<T>(detail::list_tensors<T>(tensors));                                            \
  }                                                                                                            \
  /** Concatenates row-wise (dim 0) after making every tensor at least 2-D (a 1-D [n] is [1, n]). */           \
  inline Tensor<T> vstack(std::initializer_list<tensor_list_entry<T>> tensors) {                               \
    return detail::vstack_list<T>(detail::list_tensors<T>(tensors));                                            \
  }
STRATA_FOR_EACH_DTYPE(STRATA_JOIN_LISTS)
#undef STRATA_JOIN_LISTS

// ---- splitting (views of t) ----
/// Views of split_size elements along dim (the last may be smaller).
template <tensor_like X, std::integral I>
std::vector<Tensor<detail::value_t<X>>> split(const X& x, I split_size, std::int64_t dim = 0) {
  return detail::split_by(detail::as_tensor(x), static_cast<std::int64_t>(split_size), dim);
}
/// Views of the given sizes along dim (they must add up to t.size(dim)).
template <element T>
std::vector<Tensor<T>> split(const Tensor<T>& t, int_list split_sizes, std::int64_t dim = 0);
/// At most `chunks` views of equal size along dim (the last may be smaller; fewer when the
/// size does not allow as many).
template <element T>
std::vector<Tensor<T>> chunk(const Tensor<T>& t, std::int64_t chunks, std::int64_t dim = 0);
/// The slices along dim, each without that dim.
template <element T>
std::vector<Tensor<T>> unbind(const Tensor<T>& t, std::int64_t dim = 0);
/// `sections` views along dim whose sizes differ by at most one (the first ones larger).
template <tensor_like X, std::integral I>
std::vector<Tensor<detail::value_t<X>>> tensor_split(const X& x, I sections, std::int64_t dim = 0) {
  return detail::tensor_split_by(detail::as_tensor(x), static_cast<std::int64_t>(sections), dim);
}
/// Views between the given indices along dim (Python slice bounds: clamped, may be empty).
template <tensor_like X>
std::vector<Tensor<detail::value_t<X>>> tensor_split(const X& x, int_list indices, std::int64_t dim = 0) {
  return detail::tensor_split_at(detail::as_tensor(x), indices, dim);
}
/// tensor_split with an int64 tensor: 0-dim gives the number of sections, 1-D the indices.
template <element T>
std::vector<Tensor<T>> tensor_split(const Tensor<T>& t, const Tensor<std::int64_t>& indices_or_sections,
                                    std::int64_t dim = 0);

// ---- the same for lazy expressions: evaluated once, then as for a tensor ----
/// tril of an expression's result.
template <detail::lazy E>
auto tril(const E& e, std::int64_t diagonal = 0) { return tril(e.eval(), diagonal); }
/// triu of an expression's result.
template <detail::lazy E>
auto triu(const E& e, std::int64_t diagonal = 0) { return triu(e.eval(), diagonal); }
/// flip of an expression's result.
template <detail::lazy E>
auto flip(const E& e, int_list dims) { return flip(e.eval(), dims); }
/// repeat of an expression's result.
template <detail::lazy E>
auto repeat(const E& e, int_list repeats) { return repeat(e.eval(), repeats); }
/// tile of an expression's result.
template <detail::lazy E>
auto tile(const E& e, int_list reps) { return tile(e.eval(), reps); }
/// pad of an expression's result.
template <detail::lazy E>
auto pad(const E& e, int_list pad, std::string_view mode = "constant", std::optional<double> value = std::nullopt) {
  return strata::pad(e.eval(), pad, mode, value);
}
/// split of an expression's result into the given sizes.
template <detail::lazy E>
auto split(const E& e, int_list split_sizes, std::int64_t dim = 0) { return split(e.eval(), split_sizes, dim); }
/// chunk of an expression's result.
template <detail::lazy E>
auto chunk(const E& e, std::int64_t chunks, std::int64_t dim = 0) { return chunk(e.eval(), chunks, dim); }
/// unbind of an expression's result.
template <detail::lazy E>
auto unbind(const E& e, std::int64_t dim = 0) { return unbind(e.eval(), dim); }
/// tensor_split of an expression's result by an int64 tensor.
template <detail::lazy E>
auto tensor_split(const E& e, const Tensor<std::int64_t>& indices_or_sections, std::int64_t dim = 0) {
  return tensor_split(e.eval(), indices_or_sections, dim);
}
}  // namespace strata
