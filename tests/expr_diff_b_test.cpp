// SPDX-License-Identifier: MIT
// Differential test, part B: math functions, integer division family, bitwise, complex.
#include "expr_diff.hpp"
#include <complex>
#include <cstdint>
import strata;
using namespace strata;
using diff::check_form;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

constexpr int runs = 150;

TEST_CASE("differential: math functions", "[expr][diff]") {
  check_form<float, double>("abs(a) + sqrt(abs(b))", [](auto a, auto b) { return abs(a) + sqrt(abs(b)); }, runs, 50);
  check_form<float, float>("exp(a) * sigmoid(b)", [](auto a, auto b) { return exp(a) * sigmoid(b); }, runs, 51);
  check_form<double, float>("tanh(a) - relu(b)", [](auto a, auto b) { return tanh(a) - relu(b); }, runs, 52);
  check_form<float, float>("clamp(a, -1, 1) * b", [](auto a, auto b) { return clamp(a, -1.0, 1.0) * b; }, runs, 53);
  check_form<float, float, float>("sign(a) * floor(b) + ceil(c) - round(c)",
                                  [](auto a, auto b, auto c) { return sign(a) * floor(b) + ceil(c) - round(c); }, runs, 54);
  check_form<float, float>("log1p(abs(a)) * expm1(b)", [](auto a, auto b) { return log1p(abs(a)) * expm1(b); }, runs, 55);
  check_form<i32, float>("pow(a, 2) + pow(b, 3)", [](auto a, auto b) { return pow(a, 2) + pow(b, 3); }, runs, 56);
  check_form<i32>("exp(a) (int gives float32)", [](auto a) { return exp(a / 10); }, runs, 57);
}

TEST_CASE("differential: floor division and remainders", "[expr][diff]") {
  check_form<i32, i32>("floor_divide(a, b*2+1) + remainder(a, b*2+1)",
                       [](auto a, auto b) { return floor_divide(a, b * 2 + 1) + remainder(a, b * 2 + 1); }, runs, 60);
  check_form<i64, i64>("remainder(a, b*2+1) - fmod(a, b*2+1)",
                       [](auto a, auto b) { return remainder(a, b * 2 + 1) - fmod(a, b * 2 + 1); }, runs, 61);
  check_form<double, double>("floor_divide(a, b) float", [](auto a, auto b) { return floor_divide(a, b); }, runs, 62);
}

TEST_CASE("differential: bitwise and logical", "[expr][diff]") {
  check_form<i32, i32, i16>("(a & b) | (a ^ c)", [](auto a, auto b, auto c) { return (a & b) | (a ^ c); }, runs, 70);
  check_form<bool, bool>("~a & b", [](auto a, auto b) { return ~a & b; }, runs, 71);
  check_form<u8>("~a", [](auto a) { return ~a; }, runs, 72);
  check_form<bool, i32>("a * b + a (bool promotes)", [](auto a, auto b) { return a * b + a; }, runs, 73);
}

TEST_CASE("differential: complex", "[expr][diff]") {
  check_form<c64, c64, float>("a * b + c", [](auto a, auto b, auto c) { return a * b + c; }, runs, 80);
  check_form<c128, c128>("exp(a) + abs(b)", [](auto a, auto b) { return exp(a) + abs(b); }, runs, 81);
  check_form<c64, c64>("a == b", [](auto a, auto b) { return a == b; }, runs, 82);
  check_form<c128, double>("a / b - a", [](auto a, auto b) { return a / b - a; }, runs, 83);
}
