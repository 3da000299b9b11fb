// SPDX-License-Identifier: MIT
// Route B library side: precompiled chunk ops + the interpreter. Compiled once (-O3 -march=native).
#include "prog.hpp"
#include <algorithm>
namespace sx::b {
namespace {
using OpFn = void (*)(float*, const float*, const float*, const float*, const float*, float, std::size_t);
// Each op: one simple restrict loop; clang vectorises it with zmm. (d may equal a source register:
// element i is read before it is written, at the same index, so the in-place use is safe.)
// both values loaded unconditionally: written as `m ? b[i] : c[i]`, clang selects the *pointer* and
// emits a gather (vgatherqps), 5-10x slower
[[gnu::always_inline]] inline float sel1(bool m, float t, float f) { return m ? t : f; }
#define OPDEF(name, expr)                                                                          \
  [[gnu::noinline, clang::no_builtin("memcpy", "memset")]] void name(float* __restrict d, const float* __restrict a, const float* __restrict b, \
                              const float* __restrict c, const float* __restrict e, float s, std::size_t n) { \
    (void)a; (void)b; (void)c; (void)e; (void)s;                                                   \
    for (std::size_t i = 0; i < n; ++i) d[i] = (expr);                                             \
  }
OPDEF(add_vv, a[i] + b[i]) OPDEF(sub_vv, a[i] - b[i]) OPDEF(mul_vv, a[i] * b[i]) OPDEF(div_vv, a[i] / b[i])
OPDEF(add_vs, a[i] + s) OPDEF(sub_vs, a[i] - s) OPDEF(mul_vs, a[i] * s) OPDEF(div_vs, a[i] / s)
OPDEF(sub_sv, s - a[i]) OPDEF(div_sv, s / a[i])
OPDEF(gt_vv, a[i] > b[i] ? 1.0f : 0.0f) OPDEF(gt_vs, a[i] > s ? 1.0f : 0.0f) OPDEF(sel, sel1(a[i] != 0.0f, b[i], c[i]))
OPDEF(fma_vvv, a[i] * b[i] + c[i]) OPDEF(fms_vvv, a[i] * b[i] - c[i]) OPDEF(fnma_vvv, c[i] - a[i] * b[i])
OPDEF(fma_vsv, a[i] * s + b[i]) OPDEF(fms_vsv, a[i] * s - b[i]) OPDEF(fnma_vsv, b[i] - a[i] * s)
OPDEF(fma_vvs, a[i] * b[i] + s) OPDEF(fms_vvs, a[i] * b[i] - s) OPDEF(fnma_vvs, s - a[i] * b[i])
OPDEF(selgt, sel1(a[i] > b[i], c[i], e[i]))
OPDEF(dot2_vvvv, a[i] * b[i] + c[i] * e[i]) OPDEF(dot2_vvvs, a[i] * b[i] + c[i] * s)
OPDEF(diff2_vvvv, a[i] * b[i] - c[i] * e[i]) OPDEF(diff2_vvvs, a[i] * b[i] - c[i] * s)
OPDEF(addmul_vvs, (a[i] + b[i]) * s) OPDEF(submul_vvs, (a[i] - b[i]) * s) OPDEF(copy, a[i]) OPDEF(bcast, s)
#undef OPDEF
constexpr OpFn table[NOPS] = {add_vv, sub_vv, mul_vv, div_vv, add_vs, sub_vs, mul_vs, div_vs, sub_sv, div_sv,
                              gt_vv, gt_vs, sel, fma_vvv, fms_vvv, fnma_vvv, fma_vsv, fms_vsv, fnma_vsv,
                              fma_vvs, fms_vvs, fnma_vvs, selgt, dot2_vvvv, dot2_vvvs, diff2_vvvv, diff2_vvvs,
                              addmul_vvs, submul_vvs, copy, bcast};
// scratch registers: one aligned buffer, registers chunk+64 floats apart (no 4 KiB aliasing between them)
alignas(64) thread_local float scratch[MAXREG * (MAXCHUNK + 64)];
struct Dec { OpFn fn; float* d; const float* s[4]; std::size_t dm, sm[4]; float sc; };
}  // namespace

void run_program(const Instr* code, int ncode, const float* const* leaves, const float* scalars,
                 float* out, std::size_t n, std::size_t chunk) {
  chunk = std::min(chunk, std::size_t(MAXCHUNK));
  const std::size_t rs = std::min(chunk, n) + 64;   // register stride (floats), a multiple of 16
  float* regs = scratch;
  Dec dec[MAXCODE];
  for (int k = 0; k < ncode; ++k) {      // decode once per call: resolve operands to base pointers
    const Instr& in = code[k];
    Dec& d = dec[k];
    d.fn = table[in.op];
    d.sc = scalars[in.sidx];             // scalars always has >= 1 slot
    d.d = in.dst.kind == OUT ? out : regs + in.dst.idx * rs;
    d.dm = in.dst.kind == OUT;
    for (int j = 0; j < 4; ++j) {
      const Arg a = in.src[j];
      d.s[j] = a.kind == LEAF ? leaves[a.idx] : a.kind == REG ? regs + a.idx * rs : nullptr;
      d.sm[j] = a.kind == LEAF;
    }
  }
  for (std::size_t base = 0; base < n; base += chunk) {
    const std::size_t len = std::min(chunk, n - base);
    for (int k = 0; k < ncode; ++k) {
      const Dec& d = dec[k];
      d.fn(d.d + base * d.dm, d.s[0] + base * d.sm[0], d.s[1] + base * d.sm[1], d.s[2] + base * d.sm[2],
           d.s[3] + base * d.sm[3], d.sc, len);
    }
  }
}
}  // namespace sx::b
