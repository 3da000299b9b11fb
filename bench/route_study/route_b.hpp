// SPDX-License-Identifier: MIT
// Route B user side: assignment lowers the expression type to a program at compile time
// and calls the extern run_program. Only `collect` (gathering pointers/scalars) is per expression.
#pragma once
#include "expr_core.hpp"
#include "prog.hpp"
namespace sx::b {
struct Opts { int super = 2; bool copy_leaves = false, direct_out = true; std::size_t chunk = 1024; };
struct Prog {
  Instr code[MAXCODE]{}; int n = 0, nregs = 0, nleaves = 0, nscal = 0; bool busy[MAXREG]{};
  constexpr int alloc() {
    for (int i = 0; i < MAXREG; ++i) if (!busy[i]) { busy[i] = true; if (i + 1 > nregs) nregs = i + 1; return i; }
    throw "out of registers";
  }
  constexpr void release(Arg a) { if (a.kind == REG) busy[a.idx] = false; }
  // sources are released before the destination is allocated: d may reuse a source register
  constexpr Arg emit(Opc op, Arg a, Arg b = {}, Arg c = {}, Arg e = {}) {
    Instr in{}; in.op = op; Arg s[4] = {a, b, c, e};
    for (int k = 0; k < 4; ++k) {
      if (s[k].kind == SCAL) { in.sidx = s[k].idx; s[k] = {}; }
      in.src[k] = s[k]; release(s[k]);
    }
    in.dst = {REG, std::uint8_t(alloc())};
    if (n == MAXCODE) throw "program too long";
    code[n++] = in; return in.dst;
  }
  constexpr Arg vec(Arg a) { return a.kind == SCAL ? emit(BCAST, a) : a; }  // scalar -> register
};
template <Opts O> struct Lower {
  static constexpr Arg go(Prog& p, std::type_identity<Leaf>) {
    Arg a{LEAF, std::uint8_t(p.nleaves++)};
    return O.copy_leaves ? p.emit(COPY, a) : a;
  }
  static constexpr Arg go(Prog& p, std::type_identity<Scal>) { return {SCAL, std::uint8_t(p.nscal++)}; }
  template <class T> static constexpr Arg low(Prog& p) { return go(p, std::type_identity<T>{}); }
  template <class T> static constexpr bool is_mul = false;
  template <class L, class R> static constexpr bool is_mul<Bin<Op::Mul, L, R>> = true;
  // x*y (+|-) z  with op family base = FMA_VVV / FMS_VVV / FNMA_VVV
  static constexpr Arg fused(Prog& p, int fam, Arg x, Arg y, Arg z) {
    if (x.kind == SCAL) { Arg t = x; x = y; y = t; }
    if (x.kind == SCAL) x = p.vec(x);
    if (y.kind == SCAL && z.kind == SCAL) z = p.vec(z);
    if (y.kind == SCAL) return p.emit(Opc(FMA_VSV + fam), x, z, y);   // a*s (+-) b
    if (z.kind == SCAL) return p.emit(Opc(FMA_VVS + fam), x, y, z);
    return p.emit(Opc(FMA_VVV + fam), x, y, z);
  }
  template <class T> static constexpr bool is_addsub = false;
  template <class L, class R> static constexpr bool is_addsub<Bin<Op::Add, L, R>> = true;
  template <class L, class R> static constexpr bool is_addsub<Bin<Op::Sub, L, R>> = true;
  template <Op OP, class L, class R> static constexpr Arg go(Prog& p, std::type_identity<Bin<OP, L, R>>) {
    if constexpr (O.super >= 2 && OP == Op::Mul && is_addsub<L> && std::is_same_v<R, Scal>) {   // (x +- y) * s
      Arg x = p.vec(low<decltype(L::l)>(p)), y = p.vec(low<decltype(L::r)>(p)), s = low<R>(p);
      return p.emit(std::is_same_v<L, Bin<Op::Add, decltype(L::l), decltype(L::r)>> ? ADDMUL_VVS : SUBMUL_VVS, x, y, s);
    } else if constexpr (O.super >= 2 && (OP == Op::Add || OP == Op::Sub) && is_mul<L> && is_mul<R>) {  // x*y +- z*w
      Arg x = p.vec(low<decltype(L::l)>(p)), y = p.vec(low<decltype(L::r)>(p));
      Arg z = low<decltype(R::l)>(p), w = low<decltype(R::r)>(p);
      if (z.kind == SCAL) { Arg t = z; z = w; w = t; }
      z = p.vec(z);
      const int base = OP == Op::Add ? DOT2_VVVV : DIFF2_VVVV;
      return p.emit(Opc(base + (w.kind == SCAL)), x, y, z, w);
    } else if constexpr (O.super && (OP == Op::Add || OP == Op::Sub) && is_mul<L>) {
      Arg x = low<decltype(L::l)>(p), y = low<decltype(L::r)>(p), z = low<R>(p);
      return fused(p, OP == Op::Add ? 0 : 1, x, y, z);
    } else if constexpr (O.super && (OP == Op::Add || OP == Op::Sub) && is_mul<R>) {
      Arg z = low<L>(p), x = low<decltype(R::l)>(p), y = low<decltype(R::r)>(p);
      return fused(p, OP == Op::Add ? 0 : 2, x, y, z);
    } else {
      Arg a = low<L>(p), b = low<R>(p);
      constexpr bool comm = OP == Op::Add || OP == Op::Mul;
      constexpr int k = int(OP);
      if (a.kind == SCAL && b.kind == SCAL) a = p.vec(a);
      if (b.kind == SCAL) return p.emit(Opc(ADD_VS + k), a, b);
      if (a.kind == SCAL) {
        if constexpr (comm) return p.emit(Opc(ADD_VS + k), b, a);
        else return p.emit(OP == Op::Sub ? SUB_SV : DIV_SV, b, a);
      }
      return p.emit(Opc(ADD_VV + k), a, b);
    }
  }
  template <class L, class R> static constexpr Arg go(Prog& p, std::type_identity<Gt<L, R>>) {
    Arg a = p.vec(low<L>(p)), b = low<R>(p);
    return p.emit(b.kind == SCAL ? GT_VS : GT_VV, a, b);
  }
  template <class L, class R, class T, class F>
  static constexpr Arg go(Prog& p, std::type_identity<Where<Gt<L, R>, T, F>>) {
    if constexpr (O.super) {
      Arg a = p.vec(low<L>(p)), b = p.vec(low<R>(p)), t = p.vec(low<T>(p)), f = p.vec(low<F>(p));
      return p.emit(SELGT, a, b, t, f);
    } else {
      Arg m = low<Gt<L, R>>(p), t = p.vec(low<T>(p)), f = p.vec(low<F>(p));
      return p.emit(SEL, m, t, f);
    }
  }
};
template <class E, Opts O> consteval Prog lower() {
  Prog p; Arg r = Lower<O>::template low<E>(p);
  if (r.kind != REG) r = p.emit(COPY, p.vec(r));
  if (O.direct_out) p.code[p.n - 1].dst = {OUT, 0};   // last op writes the output chunk
  else { Instr s{}; s.op = COPY; s.src[0] = r; s.dst = {OUT, 0}; p.code[p.n++] = s; }
  return p;
}
template <class E, Opts O> inline constexpr Prog prog_v = lower<E, O>();

template <Op O, class L, class R> void collect(const Bin<O, L, R>&, const float**, float*, int&, int&);
template <class L, class R> void collect(const Gt<L, R>&, const float**, float*, int&, int&);
template <class C, class T, class F> void collect(const Where<C, T, F>&, const float**, float*, int&, int&);
// runtime: gather leaf pointers and scalar values in the same left-to-right order
inline void collect(const Leaf& x, const float** l, float*, int& nl, int&) { l[nl++] = x.p; }
inline void collect(const Scal& s, const float**, float* sc, int&, int& ns) { sc[ns++] = s.v; }
template <Op O, class L, class R> inline void collect(const Bin<O, L, R>& e, const float** l, float* s, int& nl, int& ns) { collect(e.l, l, s, nl, ns); collect(e.r, l, s, nl, ns); }
template <class L, class R> inline void collect(const Gt<L, R>& e, const float** l, float* s, int& nl, int& ns) { collect(e.l, l, s, nl, ns); collect(e.r, l, s, nl, ns); }
template <class C, class T, class F> inline void collect(const Where<C, T, F>& e, const float** l, float* s, int& nl, int& ns) { collect(e.c, l, s, nl, ns); collect(e.t, l, s, nl, ns); collect(e.f, l, s, nl, ns); }

template <Opts O = Opts{}, class E> void assign(Tensor& out, const E& e) {
#ifdef SX_NO_LOWER   // compile-time experiment only: skip the consteval lowering (wrong program)
  static constexpr Prog P{};
#else
  constexpr const Prog& P = prog_v<E, O>;
#endif
  const float* leaves[P.nleaves > 0 ? P.nleaves : 1]; float sc[P.nscal > 0 ? P.nscal : 1];
  int nl = 0, ns = 0; collect(e, leaves, sc, nl, ns);
  run_program(P.code, P.n, leaves, sc, out.p, out.n, O.chunk);
}
}  // namespace sx::b
