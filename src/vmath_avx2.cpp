// SPDX-License-Identifier: MIT
// SLEEF's AVX2 and FMA loops, in a translation unit compiled with -mavx2 -mfma (CMakeLists.txt), so
// that its vectors pass in registers as SLEEF's entry points take them (src/vmath_isa.hpp).
// src/vmath.cpp calls vmath_avx2() only on a CPU with AVX2 and FMA.
#include <immintrin.h>
#include <sleef.h>
#define STRATA_VMATH_ISA_UNIT
#include "vmath_isa.hpp"

STRATA_VMATH_TABLE(vmath_avx2, avx2, __m256, 8, __m256d, 4)
