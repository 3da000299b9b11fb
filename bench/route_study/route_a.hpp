// SPDX-License-Identifier: MIT
// Route A: fused template loop, instantiated per expression in the user's TU.
#pragma once
#include "expr_core.hpp"
namespace sx::a {
template <Op O, class L, class R> float ev(const Bin<O, L, R>&, std::size_t);
template <class L, class R> bool ev(const Gt<L, R>&, std::size_t);
template <class C, class T, class F> float ev(const Where<C, T, F>&, std::size_t);
inline float ev(const Leaf& x, std::size_t i) { return x.p[i]; }
inline float ev(const Scal& s, std::size_t) { return s.v; }
template <Op O, class L, class R> inline float ev(const Bin<O, L, R>& b, std::size_t i) {
  float x = ev(b.l, i), y = ev(b.r, i);
  if constexpr (O == Op::Add) return x + y;
  else if constexpr (O == Op::Sub) return x - y;
  else if constexpr (O == Op::Mul) return x * y;
  else return x / y;
}
template <class L, class R> inline bool ev(const Gt<L, R>& g, std::size_t i) { return ev(g.l, i) > ev(g.r, i); }
template <class C, class T, class F> inline float ev(const Where<C, T, F>& w, std::size_t i) {
  float t = ev(w.t, i), f = ev(w.f, i);   // both sides evaluated (element-wise select)
  return ev(w.c, i) ? t : f;
}
// One plain indexed loop; the output is not __restrict (run-time alias checks, as in strata's row).
template <class E> void assign(Tensor& out, const E& e) {
  float* o = out.p;
  for (std::size_t i = 0, n = out.n; i < n; ++i) o[i] = ev(e, i);
}
}  // namespace sx::a
