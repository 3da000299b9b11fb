// SPDX-License-Identifier: MIT
// SLEEF's SSE4.1 loops, in a translation unit compiled with -msse4.1 (CMakeLists.txt), so
// that its vectors pass in registers as SLEEF's entry points take them (src/vmath_isa.hpp).
// src/vmath.cpp calls vmath_sse4() only on a CPU with SSE4.1.
#include <immintrin.h>
#include <sleef.h>
#define STRATA_VMATH_ISA_UNIT
#include "vmath_isa.hpp"

STRATA_VMATH_TABLE(vmath_sse4, sse4, __m128, 4, __m128d, 2)
