// SPDX-License-Identifier: MIT
// SLEEF's AVX-512F loops, in a translation unit compiled with -mavx512f (CMakeLists.txt), so
// that its vectors pass in registers as SLEEF's entry points take them (src/vmath_isa.hpp).
// src/vmath.cpp calls vmath_avx512() only on a CPU with AVX-512F.
#include <immintrin.h>
#include <sleef.h>
#define STRATA_VMATH_ISA_UNIT
#include "vmath_isa.hpp"

STRATA_VMATH_TABLE(vmath_avx512, avx512f, __m512, 16, __m512d, 8)
