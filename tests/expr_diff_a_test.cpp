// SPDX-License-Identifier: MIT
// Differential test, part A: arithmetic, promotion, wrap-around, reduced floats, where.
#include "expr_diff.hpp"
#include <cstdint>
import strata;
using namespace strata;
using diff::check_form;
using i8 = std::int8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;

constexpr int runs = 150;

TEST_CASE("differential: float arithmetic", "[expr][diff]") {
  check_form<float, float, float>("a + b * c", [](auto a, auto b, auto c) { return a + b * c; }, runs, 1);
  check_form<float, float, float, float, float>(
      "(a*b + c*d - e) * 0.5", [](auto a, auto b, auto c, auto d, auto e) { return (a * b + c * d - e) * 0.5; }, runs, 2);
  check_form<float, float, float, float>(
      "((a + b) * (c - d)) / (abs(a) + 1)", [](auto a, auto b, auto c, auto d) { return ((a + b) * (c - d)) / (abs(a) + 1); }, runs, 3);
  check_form<double, double>("2.0 - a / b", [](auto a, auto b) { return 2.0 - a / b; }, runs, 4);
}

TEST_CASE("differential: mixed types promote as loaded", "[expr][diff]") {
  check_form<i32, float>("a + b (int32 + float32)", [](auto a, auto b) { return a + b; }, runs, 10);
  check_form<float, double>("a * b (float32 * float64)", [](auto a, auto b) { return a * b; }, runs, 11);
  check_form<i32, i32>("a / b (true division)", [](auto a, auto b) { return a / b; }, runs, 12);
  check_form<i32>("a + 2.5", [](auto a) { return a + 2.5; }, runs, 13);
  check_form<u8, i8, i16>("(a + b) / (c + 1.5)", [](auto a, auto b, auto c) { return (a + b) / (c + 1.5); }, runs, 14);
  check_form<double, i32>("cast<int32>(a) + b", [](auto a, auto b) { return cast<i32>(a) + b; }, runs, 15);
}

TEST_CASE("differential: integer wrap-around", "[expr][diff]") {
  check_form<i8, i8>("-(a - b) int8", [](auto a, auto b) { return -(a - b); }, runs, 20);
  check_form<i16, u8, i8>("a * b + c", [](auto a, auto b, auto c) { return a * b + c; }, runs, 21);
  check_form<i8>("a + 1000 (int8)", [](auto a) { return a + 1000; }, runs, 22);
  check_form<i32, i32, i32>("maximum(a, b) - minimum(a, c)", [](auto a, auto b, auto c) { return maximum(a, b) - minimum(a, c); }, runs, 23);
  check_form<u8, i64>("a * b * b", [](auto a, auto b) { return a * b * b; }, runs, 24);
}

TEST_CASE("differential: half and bfloat16 compute in float", "[expr][diff]") {
  check_form<half>("a * 2.0 (half)", [](auto a) { return a * 2.0; }, runs, 30);
  check_form<half, half, float>("(a + b) * c", [](auto a, auto b, auto c) { return (a + b) * c; }, runs, 31);
  check_form<bfloat16, half>("a + b (bf16 + half)", [](auto a, auto b) { return a + b; }, runs, 32);
  check_form<bfloat16, bfloat16>("a - b * 3", [](auto a, auto b) { return a - b * 3; }, runs, 33);
}

TEST_CASE("differential: where and comparisons", "[expr][diff]") {
  check_form<float, float>("where(a > b, a, b * 2)", [](auto a, auto b) { return where(a > b, a, b * 2); }, runs, 40);
  check_form<bool, i64, double>("where(a, b, c)", [](auto a, auto b, auto c) { return where(a, b, c); }, runs, 41);
  check_form<float, i32>("logical_and(a > 0, b < 0)", [](auto a, auto b) { return logical_and(a > 0, b < 0); }, runs, 42);
  check_form<u8, i8>("a >= b", [](auto a, auto b) { return a >= b; }, runs, 43);
  check_form<i32>("where(a > 2, a, 0.5)", [](auto a) { return where(a > 2, a, 0.5); }, runs, 44);
}
