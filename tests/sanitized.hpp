// SPDX-License-Identifier: MIT
// Randomised property tests under a sanitizer: the sanitizer presets build at -O0 with every
// access checked, where the naive references of the largest property tests take minutes;
// they run fewer random cases there (the layout tests a quarter: the first cases of the same
// seeds; the einsum GEMM test its two copying variants), all of them in release.
#pragma once

namespace test {
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif
/// The random cases to run of `iterations`: all of them, a quarter (at least one) when sanitized.
constexpr int cases(int iterations) { return sanitized ? (iterations + 3) / 4 : iterations; }
}  // namespace test
