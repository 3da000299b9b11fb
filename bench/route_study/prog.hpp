// SPDX-License-Identifier: MIT
// Route B: the program format shared by the user side (lowering) and the library (.cpp interpreter).
#pragma once
#include <cstddef>
#include <cstdint>
namespace sx::b {
enum Opc : std::uint8_t {
  ADD_VV, SUB_VV, MUL_VV, DIV_VV,              // d = a op b
  ADD_VS, SUB_VS, MUL_VS, DIV_VS,              // d = a op s
  SUB_SV, DIV_SV,                              // d = s op a
  GT_VV, GT_VS, SEL,                           // mask (1.0f/0.0f); d = a!=0 ? b : c
  FMA_VVV, FMS_VVV, FNMA_VVV,                  // superinstructions: a*b+c, a*b-c, c-a*b
  FMA_VSV, FMS_VSV, FNMA_VSV,                  // a*s+b, a*s-b, b-a*s
  FMA_VVS, FMS_VVS, FNMA_VVS,                  // a*b+s, a*b-s, s-a*b
  SELGT,                                       // d = a>b ? c : e
  DOT2_VVVV, DOT2_VVVS, DIFF2_VVVV, DIFF2_VVVS,  // level 2: a*b + c*e, a*b + c*s, a*b - c*e, a*b - c*s
  ADDMUL_VVS, SUBMUL_VVS,                      // level 2: (a+b)*s, (a-b)*s
  COPY, BCAST, NOPS
};
enum Kind : std::uint8_t { NONE, LEAF, REG, SCAL, OUT };
struct Arg { std::uint8_t kind = NONE, idx = 0; };
struct Instr { std::uint8_t op = COPY; Arg dst; Arg src[4]; std::uint8_t sidx = 0; };
constexpr int MAXREG = 8, MAXCODE = 32, MAXCHUNK = 4096;
// The one non-template entry point (compiled once, in the library).
void run_program(const Instr* code, int ncode, const float* const* leaves, const float* scalars,
                 float* out, std::size_t n, std::size_t chunk);
}  // namespace sx::b
