// SPDX-License-Identifier: MIT
// User-side expression types shared by both routes (minimal).
#pragma once
#include <cstddef>
#include <type_traits>
namespace sx {
enum class Op : unsigned char { Add, Sub, Mul, Div };
struct Leaf { const float* p; };
struct Scal { float v; };
template <Op O, class L, class R> struct Bin { L l; R r; };
template <class L, class R> struct Gt { L l; R r; };
template <class C, class T, class F> struct Where { C c; T t; F f; };
struct Tensor { float* p; std::size_t n; };

template <class T> struct is_node : std::false_type {};
template <> struct is_node<Leaf> : std::true_type {};
template <> struct is_node<Scal> : std::true_type {};
template <Op O, class L, class R> struct is_node<Bin<O, L, R>> : std::true_type {};
template <class L, class R> struct is_node<Gt<L, R>> : std::true_type {};
template <class C, class T, class F> struct is_node<Where<C, T, F>> : std::true_type {};
template <class T> concept NodeLike = is_node<T>::value || std::is_same_v<T, Tensor>;
template <class T> concept Operand = NodeLike<T> || std::is_arithmetic_v<T>;

template <class T> constexpr auto wrap(const T& t) {
  if constexpr (is_node<T>::value) return t;
  else if constexpr (std::is_arithmetic_v<T>) return Scal{float(t)};
  else return Leaf{t.p};
}
template <class T> struct wrap_s { using type = Leaf; };
template <class T> requires is_node<T>::value struct wrap_s<T> { using type = T; };
template <class T> requires std::is_arithmetic_v<T> struct wrap_s<T> { using type = Scal; };
template <class T> using wrap_t = typename wrap_s<T>::type;
#define SX_BIN(sym, O)                                                                 \
  template <Operand L, Operand R> requires(NodeLike<L> || NodeLike<R>)                  \
  constexpr Bin<O, wrap_t<L>, wrap_t<R>> operator sym(const L& l, const R& r) {         \
    return {wrap(l), wrap(r)};                                                          \
  }
SX_BIN(+, Op::Add) SX_BIN(-, Op::Sub) SX_BIN(*, Op::Mul) SX_BIN(/, Op::Div)
#undef SX_BIN
template <Operand L, Operand R> requires(NodeLike<L> || NodeLike<R>)
constexpr Gt<wrap_t<L>, wrap_t<R>> operator>(const L& l, const R& r) { return {wrap(l), wrap(r)}; }
template <class C, Operand T, Operand F>
constexpr Where<C, wrap_t<T>, wrap_t<F>> where(const C& c, const T& t, const F& f) { return {c, wrap(t), wrap(f)}; }
}  // namespace sx
