// SPDX-License-Identifier: MIT
// prints the lowered programs (debug aid)
#include "route_b.hpp"
#include <cstdio>
using namespace sx;
const char* names[] = {"add_vv","sub_vv","mul_vv","div_vv","add_vs","sub_vs","mul_vs","div_vs","sub_sv","div_sv","gt_vv","gt_vs","sel",
 "fma_vvv","fms_vvv","fnma_vvv","fma_vsv","fms_vsv","fnma_vsv","fma_vvs","fms_vvs","fnma_vvs","selgt","dot2_vvvv","dot2_vvvs","diff2_vvvv","diff2_vvvs","addmul_vvs","submul_vvs","copy","bcast"};
const char* kinds = "-LRSO";
template <b::Opts O, class E> void dump(const char* t, const E&) {
  constexpr const b::Prog& P = b::prog_v<E, O>;
  std::printf("%s (super=%d copy=%d direct=%d): %d instrs, %d regs\n", t, O.super, O.copy_leaves, O.direct_out, P.n, P.nregs);
  for (int k = 0; k < P.n; ++k) {
    auto& in = P.code[k];
    std::printf("  %c%d = %s(", kinds[in.dst.kind], in.dst.idx, names[in.op]);
    for (auto a : in.src) if (a.kind) std::printf("%c%d ", kinds[a.kind], a.idx);
    std::printf(") s%d\n", in.sidx);
  }
}
int main() {
  Tensor a{}, b{}, c{}, d{}, e{};
  auto w2 = (a * b + c * d - e) * 0.5f; auto w3 = ((a + b) * (a - b) + a * 0.25f - b * b) / (a * a + 1.0f);
  auto w4 = where(a > b, a - b, c * 2.0f);
  dump<b::Opts{0, false, false}>("W2", w2); dump<b::Opts{1, false, true}>("W2", w2); dump<b::Opts{2, false, true}>("W2", w2);
  dump<b::Opts{0, true, false}>("W2", w2);
  dump<b::Opts{0, false, true}>("W3", w3); dump<b::Opts{1, false, true}>("W3", w3); dump<b::Opts{2, false, true}>("W3", w3);
  dump<b::Opts{0, false, true}>("W4", w4); dump<b::Opts{2, false, true}>("W4", w4);
}
