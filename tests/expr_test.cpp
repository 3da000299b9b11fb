// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include "count_allocations.hpp"
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;
using namespace strata;

// (allocation counting: see count_allocations.hpp)

namespace {
using i8 = std::int8_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;

template <class E>
std::pair<std::string, std::vector<double>> run(const E& e) {
  auto r = eval(e);
  return {std::string(dtype_name(r.dtype())), as_doubles(r)};
}

std::map<std::string, std::function<std::pair<std::string, std::vector<double>>()>> golden_cases() {
  auto t = [](std::initializer_list<double> v, auto tag) {
    using T = decltype(tag);
    std::vector<T> out;
    for (double x : v) out.push_back(test::from_double<T>(x));
    return from_vector<T>(out);
  };
  const double nan = std::nan("");
  return {
      {"int32_plus_2.5", [=] { return run(t({1, 2, 3}, i32{}) + 2.5); }},
      {"float_plus_2.0", [=] { return run(t({1.5, 2.25}, float{}) + 2.0); }},
      {"int8_plus_1000", [=] { return run(t({1, 100, -100}, i8{}) + 1000); }},
      {"int8_times_3", [=] { return run(t({100, -100, 127}, i8{}) * 3); }},
      {"uint8_minus_10", [=] { return run(t({0, 5, 200}, u8{}) - 10); }},
      {"int32_overflow", [=] { return run(t({2147483647.0, -2147483648.0}, i32{}) + t({1, -1}, i32{})); }},
      {"int_true_div", [=] { return run(t({7, -7, 1, 0}, i64{}) / t({2, 2, 0, 0}, i64{})); }},
      {"floor_divide_int", [=] { return run(floor_divide(t({7, -7, 7, -7}, i64{}), t({2, 2, -2, -2}, i64{}))); }},
      {"remainder_int", [=] { return run(remainder(t({7, -7, 7, -7}, i64{}), t({3, 3, -3, -3}, i64{}))); }},
      {"fmod_int", [=] { return run(fmod(t({7, -7, 7, -7}, i64{}), t({3, 3, -3, -3}, i64{}))); }},
      {"floor_divide_float", [=] { return run(floor_divide(t({7.5, -7.5, 1.0, -0.0}, double{}), t({2, 2, 0, 3}, double{}))); }},
      {"remainder_float", [=] { return run(remainder(t({7.5, -7.5, 5.0}, double{}), t({2, 2, -3}, double{}))); }},
      {"mixed_promotion", [=] { return run((t({1, 2}, i32{}) + t({0.5, 0.25}, double{})) * t({2, 4}, float{})); }},
      {"half_plus_float", [=] { return run(t({1.5, 2.5}, half{}) + t({0.25, 0.5}, float{})); }},
      {"half_times_0.1", [=] { return run(t({1.0, 3.0}, half{}) * 0.1); }},
      {"bool_plus_bool", [=] { return run(t({1, 1, 0}, bool{}) + t({1, 0, 0}, bool{})); }},
      {"bool_times_int", [=] { return run(t({1, 0}, bool{}) * t({3, 4}, i32{})); }},
      {"where_scalar", [=] { return run(where(t({1, 0}, bool{}), t({1, 2}, i32{}), 2.5)); }},
      {"pow_int", [=] { return run(pow(t({2, 3, -2}, i32{}), 3)); }},
      {"pow_int_float", [=] { return run(pow(t({4, 9}, i32{}), 0.5)); }},
      {"sigmoid_int", [=] { return run(sigmoid(t({0, 1}, i64{}))); }},
      {"abs_int8_min", [=] { return run(abs(t({-128, -5}, i8{}))); }},
      {"neg_int8_min", [=] { return run(-t({-128, 5}, i8{})); }},
      {"round_half_even", [=] { return run(round(t({0.5, 1.5, 2.5, -0.5, -1.5}, float{}))); }},
      {"maximum_nan", [=] { return run(maximum(t({1, nan, 3}, float{}), t({2, 0, nan}, float{}))); }},
      {"clamp_float", [=] { return run(clamp(t({-2, 0.5, 3}, float{}), -1.0, 1.0)); }},
      {"int_lt_float", [=] { return run(t({1, 2, 3}, i32{}) < 2.5); }},
      {"bitwise_int", [=] { return run((t({12, 10}, i32{}) & t({10, 6}, i32{})) ^ t({1, 1}, i32{})); }},
      {"exp_float64", [=] { return run(exp(t({0, 1}, double{}))); }},
  };
}
}  // namespace

TEST_CASE("expressions match PyTorch's results and dtypes (golden)", "[expr][golden]") {
  const auto cases = golden_cases();
  int checked = 0;
  for (const auto& line : golden::lines("expressions.txt")) {
    const auto parts = golden::split(line, '|');
    INFO(line);
    if (parts[1] == "error") continue;  // checked by name below
    const auto it = cases.find(parts[0]);
    REQUIRE(it != cases.end());
    const auto [type, values] = it->second();
    CHECK(type == parts[1]);
    std::istringstream in(parts[2]);
    std::vector<double> want;
    for (std::string tok; in >> tok;) want.push_back(std::stod(tok));
    REQUIRE(values.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      if (std::isnan(want[k])) CHECK(std::isnan(values[k]));
      else CHECK(values[k] == want[k]);
      if (want[k] == 0) CHECK(std::signbit(values[k]) == std::signbit(want[k]));
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.size()));
}

TEST_CASE("errors are worded as PyTorch's (golden)", "[expr][golden][errors]") {
  std::map<std::string, std::string> msg;
  for (const auto& line : golden::lines("expressions.txt")) {
    const auto parts = golden::split(line, '|');
    if (parts[1] == "error") msg[parts[0]] = parts[2];
  }
  auto a = zeros<float>({3});
  CHECK_THROWS_WITH(a += zeros<float>({2, 3}), msg.at("inplace_broadcast_error"));
  CHECK_THROWS_AS(a.assign(zeros<float>({2, 3}) * 2), shape_error);
  CHECK_THROWS_WITH(zeros<float>({2, 3}).expand({2, 2, 3}) += 1, msg.at("inplace_overlap_error"));
  CHECK_THROWS_AS(zeros<float>({2, 3}).expand({2, 2, 3}).assign(zeros<float>({2, 2, 3})), overlap_error);
  CHECK_THROWS_WITH(zeros<float>({3}) + zeros<float>({4}), msg.at("broadcast_error"));
}

TEST_CASE("result types are decided at compile time", "[expr][promotion]") {
  auto i = zeros<i32>({2});
  auto f = zeros<float>({2});
  auto h = zeros<half>({2});
  auto c8 = zeros<i8>({2});
  static_assert(std::is_same_v<decltype(eval(i + 2.5)), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(f + 2.0)), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(c8 + 1000)), Tensor<i8>>);
  static_assert(std::is_same_v<decltype(eval(i / i)), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(i + f)), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(f * zeros<double>({2}))), Tensor<double>>);
  static_assert(std::is_same_v<decltype(eval(h * 2.0)), Tensor<half>>);
  static_assert(std::is_same_v<decltype(eval(i < f)), Tensor<bool>>);
  static_assert(std::is_same_v<decltype(eval(exp(i))), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(abs(zeros<std::complex<double>>({1})))), Tensor<double>>);
  static_assert(std::is_same_v<decltype(eval(where(i > 0, i, 2.5))), Tensor<float>>);
  static_assert(std::is_same_v<decltype(eval(cast<half>(i))), Tensor<half>>);
  static_assert(std::is_same_v<decltype(eval(zeros<bool>({1}) + 1)), Tensor<i64>>);
  CHECK(eval(i + 2.5).to_vector() == std::vector<float>{2.5f, 2.5f});
}

TEST_CASE("an expression holds its tensors: returning it is safe", "[expr]") {
  auto make = [] {
    auto a = arange<float>(4);
    auto b = full<float>({4}, 2.0f);
    auto e = a * b + 1;  // a and b die here; e holds their handles
    return e;
  };
  auto e = make();
  CHECK(eval(e).to_vector() == std::vector<float>{1, 3, 5, 7});
  Tensor<double> d = e;  // converting while evaluating
  CHECK(d.to_vector() == std::vector<double>{1, 3, 5, 7});
}

TEST_CASE("assignment: fresh results, views written through, handles rebound", "[expr][assign]") {
  auto a = arange<float>(6).view({2, 3});
  auto b = from_vector<float>({10, 20, 30});
  Tensor<float> r = a + b;  // fresh
  CHECK(r.to_vector() == std::vector<float>{10, 21, 32, 13, 24, 35});
  auto x = zeros<float>({3, 5});
  x.narrow(1, 1, 3).assign(a.select(0, 1) * 2);  // broadcast into a view
  CHECK(x.to_vector() == std::vector<float>{0, 6, 8, 10, 0, 0, 6, 8, 10, 0, 0, 6, 8, 10, 0});
  x.slice(0, 0, 3, 2) = b.narrow(0, 0, 1) + 1.0f;  // an rvalue view assigned with = writes through
  CHECK(x.select(0, 2).to_vector() == std::vector<float>{11, 11, 11, 11, 11});
  CHECK(x.select(0, 1).to_vector() == std::vector<float>{0, 6, 8, 10, 0});
  auto h = x;  // a handle to x
  h = a + 1;   // an lvalue handle rebinds to the fresh result; x is untouched
  CHECK(h.numel() == 6);
  CHECK(x.numel() == 15);
  CHECK(x.at({0, 0}) == 11.0f);
  auto i = zeros<i32>({3});
  i.assign(from_vector<double>({1.7, -1.7, 2.5}));  // converts like copy_
  CHECK(i.to_vector() == std::vector<i32>{1, -1, 2});
  i.assign(7);
  CHECK(i.to_vector() == std::vector<i32>{7, 7, 7});
  i += 1;
  i *= i;
  CHECK(i.to_vector() == std::vector<i32>{64, 64, 64});
  i.narrow(0, 0, 2) -= 4;
  CHECK(i.to_vector() == std::vector<i32>{60, 60, 64});
  CHECK_THROWS_WITH(zeros<float>({3}).assign(zeros<float>({2, 3}) + 1),
                    "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_THROWS_WITH(zeros<float>({2, 3}).assign(zeros<float>({4}) * 2),  // no broadcast at all
                    "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
}

TEST_CASE("a fresh result follows its inputs' memory order", "[expr][assign]") {
  auto a = arange<float>(12).view({3, 4});
  auto r = eval(a.t() * 2);
  CHECK(r.strides()[0] == 1);
  CHECK(r.strides()[1] == 4);  // r is [4, 3] laid out like a: dim 0 fastest
  CHECK(r.to_vector() == eval(a.t().contiguous() * 2).to_vector());
  auto p = eval(arange<float>(24).view({2, 3, 4}).permute({2, 0, 1}) + 1);
  CHECK(std::vector<std::int64_t>(p.strides().begin(), p.strides().end()) == std::vector<std::int64_t>{1, 12, 4});
}

TEST_CASE("memory overlap: exact alias direct, partial via temporary, self-overlap refused", "[expr][overlap]") {
  const std::int64_t n = 9;
  SECTION("x.assign(x * 2 + 1)") {
    auto x = arange<float>(n);
    x.assign(x * 2 + 1);
    CHECK(x.to_vector() == eval(arange<float>(n) * 2 + 1).to_vector());
  }
  SECTION("shifted slices give NumPy's answer") {
    auto x = arange<float>(n) * arange<float>(n);  // not linear, so a forward walk would differ
    Tensor<float> y = x;
    auto expected = eval(y.slice(0, 0, n - 1).clone() + 1);
    y.slice(0, 1, n).assign(y.slice(0, 0, n - 1) + 1);
    CHECK(y.slice(0, 1, n).to_vector() == expected.to_vector());
    auto z = eval(x);
    auto expected2 = eval(z.slice(0, 1, n).clone() * 3);
    z.slice(0, 0, n - 1).assign(z.slice(0, 1, n) * 3);
    CHECK(z.slice(0, 0, n - 1).to_vector() == expected2.to_vector());
  }
  SECTION("x.assign(x.t() + x)") {
    auto x = eval(arange<float>(16).view({4, 4}) * arange<float>(16).view({4, 4}));
    auto expected = eval(x.t().clone() + x.clone());
    x.assign(x.t() + x);
    CHECK(x.to_vector() == expected.to_vector());
  }
  SECTION("a leaf broadcast from the output's own first row") {
    auto x = eval(arange<float>(12).view({3, 4}) * arange<float>(12).view({3, 4}));
    const Tensor<float> before = x.clone();
    x.assign(x.select(0, 0) + x);  // row 0 is written first: the loop must read a copy of it
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 4; ++j) CHECK(x.at({i, j}) == before.at({0, j}) + before.at({i, j}));
  }
  SECTION("through a temporary of another type than the output") {
    auto xd = eval(arange<double>(n) * 0.1);
    const Tensor<double> before = xd.clone();
    xd.slice(0, 1, n).assign(cast<float>(xd.slice(0, 0, n - 1)) * 3.0f);  // float, written into doubles
    for (std::int64_t i = 1; i < n; ++i)
      CHECK(xd.at({i}) == static_cast<double>(static_cast<float>(before.at({i - 1})) * 3.0f));
    CHECK(xd.at({0}) == 0.0);
  }
  SECTION("interleaved disjoint views need no temporary") {
    auto x = arange<float>(64).view({8, 8});
    auto even = x.slice(1, 0, 8, 2), odd = x.slice(1, 1, 8, 2);
    auto expected = eval(even.clone() + odd.clone());
    even.assign(even + odd);  // once first (one-time set-up), then count
    expected = eval(expected + odd.clone());
    const long before = allocations.load();
    even.assign(even + odd);
    CHECK(allocations.load() == before);  // no temporary was made
    CHECK(even.to_vector() == expected.to_vector());
    CHECK(odd.to_vector() == arange<float>(64).view({8, 8}).slice(1, 1, 8, 2).to_vector());
  }
  SECTION("an output overlapping itself throws") {
    auto x = zeros<float>({4});
    CHECK_THROWS_AS(x.expand({3, 4}).assign(ones<float>({3, 4})), overlap_error);
    CHECK_THROWS_AS(arange<float>(6).unfold(0, 3, 1).assign(zeros<float>({4, 3})), overlap_error);
    CHECK_THROWS_AS(x.as_strided({2, 2}, {1, 1}).assign(1.0f), overlap_error);
    // non-overlapping but unusual strides are fine: offsets {0, 2, 4, 3, 5, 7}
    auto y = zeros<float>({8});
    y.as_strided({3, 2}, {2, 3}).assign(1.0f);
    CHECK(y.to_vector() == std::vector<float>{1, 0, 1, 1, 1, 1, 0, 1});
  }
}

TEST_CASE("integer division by zero throws", "[expr][errors]") {
  auto a = from_vector<i32>({1, 2, 3});
  auto b = from_vector<i32>({1, 0, 1});
  CHECK_THROWS_WITH(eval(floor_divide(a, b)), "ZeroDivisionError");
  CHECK_THROWS_AS(eval(remainder(a, b)), error);
  CHECK_THROWS_AS(eval(fmod(a, 0)), error);
  CHECK(eval(a / b).to_vector()[1] == INFINITY);  // true division gives inf, as PyTorch
  CHECK_THROWS_WITH(pow(a, -1), "Integers to negative integer powers are not allowed.");
  CHECK(eval(floor_divide(from_vector<i32>({INT32_MIN}), -1)).item() == INT32_MIN);  // wraps, no UB
}

TEST_CASE("evaluating a 6-node expression allocates nothing but its output", "[expr][alloc]") {
  auto a = arange<float>(1000), b = arange<float>(1000), c = arange<float>(1000);
  auto out = empty<float>({1000});
  out.assign((a * b + c) * 0.5f - a);  // once first: one-time set-up in the runtime is not per evaluation
  long before = allocations.load();
  out.assign((a * b + c) * 0.5f - a);
  CHECK(allocations.load() - before == 0);
  before = allocations.load();
  auto fresh_alloc = empty<float>({1000});
  const long for_empty = allocations.load() - before;
  before = allocations.load();
  Tensor<float> r = (a * b + c) * 0.5f - a;
  CHECK(allocations.load() - before == for_empty);
  CHECK(r.at({3}) == (3.0f * 3.0f + 3.0f) * 0.5f - 3.0f);
}

TEST_CASE("results are identical for any thread count", "[expr][threads]") {
  auto a = eval(sin(arange<float>(300000).view({600, 500})));
  auto b = eval(cos(arange<float>(300000).view({500, 600}))).t();
  set_num_threads(1);
  Tensor<float> one = exp(a) * b + a.t().t() / (abs(b) + 1);
  set_num_threads(2);
  Tensor<float> two = exp(a) * b + a.t().t() / (abs(b) + 1);
  set_num_threads(1);
  CHECK(one.to_vector() == two.to_vector());
  CHECK(get_num_threads() == 1);
  CHECK_THROWS_AS(set_num_threads(0), error);
}

TEST_CASE("complex and float128 arithmetic", "[expr]") {
  using c64 = std::complex<float>;
  auto z = from_vector<c64>({c64(1, 2), c64(-3, 0.5f)});
  auto r = eval(z * z + 1.0f);
  CHECK(r.to_vector()[0] == c64(1 - 4 + 1, 4));
  CHECK(eval(abs(from_vector<c64>({c64(3, 4)}))).item() == 5.0f);
  CHECK(eval(z == z).to_vector() == std::vector<bool>{true, true});
  auto q = full<float128>({3}, float128(1));
  Tensor<float128> third = q / 3;
  CHECK(third.to_vector()[0] * 3 == float128(1));
  Tensor<float128> e = exp(q) - sqrt(q * 4) + log(q);
  CHECK(abs(e.to_vector()[2] - (exp(float128(1)) - 2)) < float128(1e-30));
  auto big = eval(q.expand({2, 3}).t() + cast<float128>(arange<double>(2)));  // strided float128 path
  CHECK(big.at({2, 1}) == float128(2));
}

TEST_CASE("64-bit indexing: more than 2^31 elements", "[expr][slow]") {
  const std::int64_t n = (std::int64_t{1} << 31) + 100;
  auto a = empty<u8>({n});
  a.narrow(0, n - 200, 200).assign(5);
  a.narrow(0, 0, n - 200).assign(1);
  set_num_threads(2);
  Tensor<u8> r = a + 1;
  set_num_threads(1);
  CHECK(r.at({0}) == 2);
  CHECK(r.at({n - 1}) == 6);
  CHECK(r.at({n - 201}) == 2);
  CHECK(r.at({n - 200}) == 6);
}

TEST_CASE("every-other-element operands: x.slice(1 0 n 2) + x.slice(1 1 n 2)", "[expr]") {
  auto x = eval(arange<float>(96).view({6, 16}) * arange<float>(96).view({6, 16}));
  Tensor<float> r = x.slice(1, 0, 16, 2) + x.slice(1, 1, 16, 2);
  Tensor<float> want = x.slice(1, 0, 16, 2).contiguous() + x.slice(1, 1, 16, 2).contiguous();
  CHECK(r.to_vector() == want.to_vector());
  auto d = zeros<double>({6, 8});
  d.assign(x.slice(1, 1, 16, 2) * 2);  // one operand at stride 2, converted
  CHECK(d.at({5, 7}) == 2.0 * 95 * 95);
}

namespace {
// The channels of interleaved data (x.slice(1, k, {}, ch)): every element of the result
// checked, rows of lengths around the 16- and 8-element vector blocks, the last channel
// ending exactly at the end of the tensor.
template <class T>
void check_channels(std::int64_t ch, std::int64_t n) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << ch << " channels of " << n);
  Tensor<T> x = cast<T>(arange(3 * n * ch).view({3, n * ch}) % 251);
  Tensor<T> sum = zeros<T>({3, n});
  for (std::int64_t k = 0; k < ch; ++k) sum.assign(sum + x.slice(1, k, {}, ch));
  Tensor<T> last = x.slice(1, ch - 1, {}, ch) * 1;
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      T want = 0;
      for (std::int64_t k = 0; k < ch; ++k) want = static_cast<T>(want + x.at({r, j * ch + k}));
      REQUIRE(sum.at({r, j}) == want);
      REQUIRE(last.at({r, j}) == x.at({r, j * ch + ch - 1}));
    }
}
}  // namespace

TEST_CASE("channels of interleaved data: strides of 2, 3 and 4 elements", "[expr]") {
  for (std::int64_t ch : {2, 3, 4, 5})
    for (std::int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000}) {
      check_channels<float>(ch, n);
      check_channels<double>(ch, n);
      check_channels<i32>(ch, n);
      check_channels<i8>(ch, n);
    }
}

namespace {
// Several channels of the same interleaved data in one expression (gathered together from
// shared vectors), in any order, twice, two of three, beside a broadcast operand, into a
// strided output; every element checked against at().
template <class T>
void check_channel_mix(std::int64_t n) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << n << " pixels");
  const Tensor<T> x = cast<T>(arange(3 * 3 * n).view({3, 3 * n}) % 251);
  const auto ch = [&](std::int64_t k) { return x.slice(1, k, {}, 3); };
  const Tensor<T> col = cast<T>(arange(3).view({3, 1}) + 5);
  const Tensor<T> rgb = ch(0) + ch(1) * T(2) + ch(2) * T(3);
  const Tensor<T> bgr = ch(2) * T(3) + ch(1) * T(2) + ch(0);
  const Tensor<T> gb = ch(1) - ch(2);  // the base is channel 1; channel 2 ends the tensor
  const Tensor<T> rb = ch(2) - ch(0);
  const Tensor<T> rrg = ch(0) * ch(0) + ch(1) + col;
  Tensor<T> out = zeros<T>({3, 2 * n});
  out.slice(1, 1, {}, 2).assign(ch(1) * T(2) + ch(0) - col);
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      const T c0 = x.at({r, 3 * j}), c1 = x.at({r, 3 * j + 1}), c2 = x.at({r, 3 * j + 2}), b = col.at({r, 0});
      REQUIRE(rgb.at({r, j}) == static_cast<T>(c0 + c1 * T(2) + c2 * T(3)));
      REQUIRE(bgr.at({r, j}) == static_cast<T>(c2 * T(3) + c1 * T(2) + c0));
      REQUIRE(gb.at({r, j}) == static_cast<T>(c1 - c2));
      REQUIRE(rb.at({r, j}) == static_cast<T>(c2 - c0));
      REQUIRE(rrg.at({r, j}) == static_cast<T>(c0 * c0 + c1 + b));
      REQUIRE(out.at({r, 2 * j + 1}) == static_cast<T>(c1 * T(2) + c0 - b));
      REQUIRE(out.at({r, 2 * j}) == T(0));
    }
}
}  // namespace

// (The [3, n] channels coalesce into one row of 3 * n elements, run in chunks of 512: a
// chunk's last vector block may read the two values interleaved after its last element, only
// the row's last chunk stops a block short. n = 1024 is kept for AddressSanitizer: its last
// chunk is a full 512, a multiple of both block sizes, and 9 * n elements fill the storage's
// 64-byte rounding exactly, so a block reading past the row is a reported heap overflow.)
TEST_CASE("channels of the same interleaved data read together in one expression", "[expr]") {
  for (std::int64_t n : {1, 7, 8, 9, 15, 16, 17, 33, 100, 513, 1000, 1024}) {
    check_channel_mix<float>(n);
    check_channel_mix<double>(n);
    check_channel_mix<i32>(n);
    check_channel_mix<std::int64_t>(n);
  }
}

namespace {
// Single channels of different interleaved data in one expression (read in one loop, up to
// four at a time): five operands (four, then one), a channel pair of one tensor beside
// channels of others, 4- and 8-byte operands mixed (a group of 8-byte channels; single
// channels of both widths interleaved, so two batches are open at once), and a lone channel
// read twice; every element checked against at().
template <class T>
void check_channel_streams(std::int64_t n) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << n << " pixels");
  std::vector<Tensor<T>> xs;
  for (std::int64_t k = 0; k < 5; ++k) xs.push_back(cast<T>((arange(9 * n).view({3, 3 * n}) * (k + 1) + k) % 251));
  const Tensor<double> xd = (arange(9 * n).view({3, 3 * n}) % 7) * 0.5;
  const Tensor<double> xe = (arange(9 * n).view({3, 3 * n}) % 5) * 0.25;
  const auto ch = [&](std::size_t k, std::int64_t c) { return xs[k].slice(1, c, {}, 3); };
  const Tensor<T> five = ch(0, 0) + ch(1, 1) * T(2) + ch(2, 2) * T(3) + ch(3, 0) * T(5) - ch(4, 2);
  const Tensor<T> pair = ch(0, 2) * ch(1, 0) + ch(0, 1) + ch(2, 1);
  const Tensor<double> wide = ch(0, 1) + xd.slice(1, 2, {}, 3) + ch(3, 2) * xd.slice(1, 0, {}, 3);
  const Tensor<double> mixed = ch(0, 0) + xd.slice(1, 1, {}, 3) + ch(1, 1) + ch(2, 2) + xe.slice(1, 2, {}, 3) * ch(3, 0) +
                               ch(4, 1);
  const Tensor<T> twice = ch(0, 0) * ch(0, 0) + ch(1, 1);
  const auto at = [&](std::size_t k, std::int64_t r, std::int64_t j, std::int64_t c) { return xs[k].at({r, 3 * j + c}); };
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      const auto d = [&](std::size_t k, std::int64_t c) { return static_cast<double>(at(k, r, j, c)); };
      REQUIRE(mixed.at({r, j}) == d(0, 0) + xd.at({r, 3 * j + 1}) + d(1, 1) + d(2, 2) + xe.at({r, 3 * j + 2}) * d(3, 0) +
                                      d(4, 1));
      REQUIRE(twice.at({r, j}) == static_cast<T>(at(0, r, j, 0) * at(0, r, j, 0) + at(1, r, j, 1)));
      REQUIRE(five.at({r, j}) == static_cast<T>(at(0, r, j, 0) + at(1, r, j, 1) * T(2) + at(2, r, j, 2) * T(3) +
                                                at(3, r, j, 0) * T(5) - at(4, r, j, 2)));
      REQUIRE(pair.at({r, j}) == static_cast<T>(at(0, r, j, 2) * at(1, r, j, 0) + at(0, r, j, 1) + at(2, r, j, 1)));
      REQUIRE(wide.at({r, j}) == static_cast<double>(at(0, r, j, 1)) + xd.at({r, 3 * j + 2}) +
                                     static_cast<double>(at(3, r, j, 2)) * xd.at({r, 3 * j}));
    }
}
}  // namespace

TEST_CASE("channels of different interleaved data read together in one expression", "[expr]") {
  for (std::int64_t n : {1, 8, 9, 16, 17, 100, 513, 1000, 1024}) {
    check_channel_streams<float>(n);
    check_channel_streams<double>(n);
    check_channel_streams<i32>(n);
    check_channel_streams<std::int64_t>(n);
  }
}

// Channels of float and int32 data beside a unit-stride operand that is also the output (an
// exact alias): rows around a vector's length and the staging's chunks. At n = 1024 the last channel ends the storage exactly (12 * n bytes, a multiple of its
// 64-byte rounding), so a block or tail reading past the row is a reported heap overflow.
TEST_CASE("stride-3 operands of float and int32 data into a unit-stride output", "[expr]") {
  for (std::int64_t n : {1, 15, 16, 17, 18, 32, 33, 47, 48, 49, 1008, 1024}) {
    INFO(n << " pixels");
    const Tensor<float> xf = cast<float>(arange(3 * n) % 251) * 0.5f;
    const Tensor<i32> xi = cast<i32>(arange(3 * n) % 13);
    Tensor<float> u = cast<float>(arange(n));
    u.assign(xf.slice(0, 2, {}, 3) + xi.slice(0, 0, {}, 3) * u);
    for (std::int64_t j = 0; j < n; ++j)
      REQUIRE(u.at({j}) == xf.at({3 * j + 2}) + static_cast<float>(xi.at({3 * j})) * static_cast<float>(j));
  }
}

// Every operand kind beside stride-3 ones: the three channels of one
// tensor (W10a), two channels and a unit-stride operand that is not the output, results of
// another type than the operands (double from float, int64 from int32 by copy_), rows that
// coalesce into one ([2, n] channels of a [2, 3n] tensor), around a vector's length.
TEST_CASE("stride-3 operands beside unit-stride ones, into outputs of another type", "[expr]") {
  for (std::int64_t n : {1, 15, 16, 17, 31, 32, 33, 1024}) {
    INFO(n << " pixels");
    const Tensor<float> x = cast<float>(arange(6 * n).view({2, 3 * n}) % 97) * 0.25f;
    const Tensor<float> w = cast<float>(arange(2 * n).view({2, n}) % 11) - 5.0f;
    const Tensor<i32> xi = cast<i32>(arange(6 * n).view({2, 3 * n}) % 1000) - 500;
    const auto ch = [](const auto& t, std::int64_t c) { return t.slice(1, c, {}, 3); };
    const Tensor<float> gray = ch(x, 0) + ch(x, 1) + ch(x, 2);
    const Tensor<float> scaled = ch(x, 2) * w - ch(x, 0);
    Tensor<double> wide = zeros<double>({2, n});
    wide.assign(ch(x, 1) * w + ch(x, 0));
    Tensor<std::int64_t> longs = zeros<std::int64_t>({2, n});
    longs.copy_(ch(xi, 1));
    Tensor<half> narrow = zeros<half>({2, n});
    narrow.assign(ch(x, 0) - ch(x, 2));
    for (std::int64_t r = 0; r < 2; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        const float c0 = x.at({r, 3 * j}), c1 = x.at({r, 3 * j + 1}), c2 = x.at({r, 3 * j + 2}), wj = w.at({r, j});
        REQUIRE(gray.at({r, j}) == c0 + c1 + c2);
        REQUIRE(scaled.at({r, j}) == c2 * wj - c0);
        REQUIRE(wide.at({r, j}) == static_cast<double>(c1 * wj + c0));
        REQUIRE(longs.at({r, j}) == static_cast<std::int64_t>(xi.at({r, 3 * j + 1})));
        REQUIRE(static_cast<float>(narrow.at({r, j})) == static_cast<float>(half(c0 - c2)));
      }
  }
}

// Integer division of stride-3 operands: elements past the row are never evaluated (they
// would be zero divisors), and a zero divisor anywhere in the row, its last element
// included, throws, as PyTorch does.
TEST_CASE("integer division of stride-3 operands: zero divisors throw, elements past the row are not read", "[expr][errors]") {
  for (std::int64_t n : {17, 18, 31, 32, 33, 40}) {
    INFO(n << " pixels");
    const Tensor<i32> x = cast<i32>(arange(3 * n) % 7) + 1;  // 1 to 7: no zero
    const auto ch = [](const Tensor<i32>& t, std::int64_t c) { return t.slice(0, c, {}, 3); };
    const Tensor<i32> q = eval(floor_divide(ch(x, 0) * 10, ch(x, 1)));
    for (std::int64_t j = 0; j < n; ++j) REQUIRE(q.at({j}) == x.at({3 * j}) * 10 / x.at({3 * j + 1}));
    for (std::int64_t z : {std::int64_t{3}, n - 1}) {  // in the first block; the row's last element
      INFO("zero divisor at " << z);
      Tensor<i32> y = x.clone();
      y.narrow(0, 3 * z + 1, 1).fill_(0);
      CHECK_THROWS_WITH(eval(floor_divide(ch(y, 0), ch(y, 1))), "ZeroDivisionError");
    }
  }
}

namespace {
// Views a pixel apart: y[2::3], y[0::3] and y[3::3] (n elements each, of y's 3n + 3). The
// first two are channels 2 and 0 of one block of three and are read together; the third is
// channel 0 of the next block, too far from the lowest channel to join them, and is read on
// its own. n = 1023 ends y at its storage's end (3n + 3 = 3072 floats).
template <class T>
void check_pixel_apart(std::int64_t n) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << n << " pixels");
  const Tensor<T> y = cast<T>(arange(3 * n + 3) % 251);
  const Tensor<T> out = y.slice(0, 2, 3 * n, 3) * T(3) + y.slice(0, 0, 3 * n, 3) - y.slice(0, 3, 3 * n + 3, 3);
  for (std::int64_t j = 0; j < n; ++j)
    REQUIRE(out.at({j}) == static_cast<T>(y.at({3 * j + 2}) * T(3) + y.at({3 * j}) - y.at({3 * j + 3})));
}
}  // namespace

TEST_CASE("channels a pixel apart: two read together, the third on its own", "[expr]") {
  for (std::int64_t n : {1, 5, 16, 17, 513, 1023}) {
    check_pixel_apart<float>(n);
    check_pixel_apart<double>(n);
  }
}

namespace {
// out = a.t() + b (and the other way round) at sizes around the tile edges, checked element by
// element against at(): transposed inputs, transposed outputs, every element width.
template <class T>
void check_transposed_tiles(std::int64_t r, std::int64_t c) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << r << " x " << c);
  Tensor<T> a = cast<T>(arange(r * c).view({c, r}) % 97);        // read transposed: [r, c]
  Tensor<T> b = cast<T>(arange(r * c).view({r, c}) % 89 + 1);
  Tensor<T> sum = empty<T>({r, c});
  sum.assign(a.t() + b);                                           // input transposed
  Tensor<T> out_t = zeros<T>({c, r});
  out_t.t().assign(b * 2);                                         // output transposed
  Tensor<T> copy = a.t().contiguous();                             // transposed copy
  const T* pa = a.data_ptr();
  const T* pb = b.data_ptr();
  std::int64_t wrong = 0;  // every element (counted, so that a failure does not print 33k lines)
  for (std::int64_t i = 0; i < r; ++i) {
    for (std::int64_t j = 0; j < c; ++j) {
      wrong += sum.data_ptr()[i * c + j] != static_cast<T>(pa[j * r + i] + pb[i * c + j]);
      wrong += out_t.data_ptr()[j * r + i] != static_cast<T>(pb[i * c + j] * 2);
      wrong += copy.data_ptr()[i * c + j] != pa[j * r + i];
    }
  }
  REQUIRE(wrong == 0);
}

// out = x.permute(perm) + y for a contiguous x of `sizes`, every element checked against a
// loop over x's own indices.
template <class T>
std::int64_t permute_add_errors(std::vector<std::int64_t> sizes, std::vector<std::int64_t> perm) {
  const std::int64_t n = sizes[0] * sizes[1] * sizes[2];
  const Tensor<T> x = cast<T>(arange(n).view(sizes) % 113);
  const Tensor<T> y = cast<T>(arange(n).view({sizes[perm[0]], sizes[perm[1]], sizes[perm[2]]}) % 101);
  Tensor<T> out = empty<T>({sizes[perm[0]], sizes[perm[1]], sizes[perm[2]]});
  out.assign(x.permute(perm) + y);
  std::int64_t wrong = 0;
  std::int64_t idx[3];
  for (idx[0] = 0; idx[0] < sizes[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < sizes[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < sizes[2]; ++idx[2]) {
        const std::int64_t at_x = (idx[0] * sizes[1] + idx[1]) * sizes[2] + idx[2];
        const std::int64_t at_out = (idx[perm[0]] * sizes[perm[1]] + idx[perm[1]]) * sizes[perm[2]] + idx[perm[2]];
        wrong += out.data_ptr()[at_out] != static_cast<T>(x.data_ptr()[at_x] + y.data_ptr()[at_out]);
      }
  return wrong;
}
}  // namespace

TEST_CASE("the tile walk: blocks, runs along dim 2, prefetching sizes and threads", "[expr][tile]") {
  // x.permute({2, 1, 0}): the middle dim is short-strided in every operand, so the walk runs
  // each tile along it; (0, 2, 1) and (1, 0, 2) walk blocks of tiles, dim 2 outside.
  for (const std::vector<std::int64_t>& perm : {std::vector<std::int64_t>{2, 1, 0}, {0, 2, 1}, {1, 2, 0}, {2, 0, 1}}) {
    INFO("perm " << perm[0] << perm[1] << perm[2]);
    CHECK(permute_add_errors<float>({20, 37, 300}, perm) == 0);
    CHECK(permute_add_errors<double>({33, 5, 270}, perm) == 0);
    CHECK(permute_add_errors<std::int8_t>({17, 3, 260}, perm) == 0);
  }
  // Big enough to prefetch (elements x operands >= 2^21), edges on every side, one and two
  // threads: the same elements either way.
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    check_transposed_tiles<float>(1030, 1100);
    check_transposed_tiles<double>(1000, 703);
    CHECK(permute_add_errors<float>({70, 40, 300}, {2, 1, 0}) == 0);
    CHECK(permute_add_errors<float>({3, 700, 530}, {0, 2, 1}) == 0);
  }
  set_num_threads(1);
}

namespace {
// Large plans walk rows a few at a time (a piece of each in turn). Every element of outer
// broadcasts (col * row + a), row broadcasts, mixed types, a stride-2 operand and a 3-D plan
// whose row groups cross dim 1's end, against loops over the inputs.
template <class T>
std::int64_t interleaved_errors(std::int64_t r, std::int64_t c) {
  INFO("type " << dtype_name(dtype_v<T>) << ", " << r << " x " << c);
  const Tensor<T> col = cast<T>(arange(r).view({r, 1}) % 7 + 1);
  const Tensor<T> row = cast<T>(arange(c).view({1, c}) % 5);
  const Tensor<T> a = cast<T>(arange(r * c).view({r, c}) % 89);
  const Tensor<T> wide = cast<T>(arange(r * 2 * c).view({r, 2 * c}) % 83);
  Tensor<T> outer = empty<T>({r, c}), plus = empty<T>({r, c}), every_other = empty<T>({r, c});
  Tensor<T> four = empty<T>({r, c}), two_cols = empty<T>({r, c});
  Tensor<double> mixed = empty<double>({r, c});
  outer.assign(col * row + a);  // one broadcast operand, three leaves: read as a value
  four.assign(col * row + a - row);  // four leaves: the broadcast operand through its buffer
  two_cols.assign(col * row + col);  // two broadcast operands: both through buffers
  plus.assign(a + row.view({c}));
  every_other.assign(wide.slice(1, 1, {}, 2) - a);
  mixed.assign(cast<std::int8_t>(col) * cast<float>(row) + cast<double>(a));
  const T *pc = col.data_ptr(), *pr = row.data_ptr(), *pa = a.data_ptr(), *pw = wide.data_ptr();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) {
      const std::int64_t at = i * c + j;
      wrong += outer.data_ptr()[at] != static_cast<T>(pc[i] * pr[j] + pa[at]);
      wrong += four.data_ptr()[at] != static_cast<T>(pc[i] * pr[j] + pa[at] - pr[j]);
      wrong += two_cols.data_ptr()[at] != static_cast<T>(pc[i] * pr[j] + pc[i]);
      wrong += plus.data_ptr()[at] != static_cast<T>(pa[at] + pr[j]);
      wrong += every_other.data_ptr()[at] != static_cast<T>(pw[i * 2 * c + 2 * j + 1] - pa[at]);
      wrong += mixed.data_ptr()[at] != static_cast<double>(static_cast<std::int8_t>(pc[i])) * static_cast<double>(static_cast<float>(pr[j])) +
                                           static_cast<double>(pa[at]);
    }
  return wrong;
}

// x [n, m, k] + y [n, m, 1] (broadcast along the rows) + z [1, 1, k]: groups of rows cross
// dim 1's end; and with x transposed, the tile kernel fills y's rows (per tile when the walk
// runs along dim 2, where y moves).
std::int64_t interleaved_3d_errors(std::int64_t n, std::int64_t m, std::int64_t k) {
  const Tensor<float> x = cast<float>(arange(n * m * k).view({n, m, k}) % 97);
  const Tensor<float> y = cast<float>(arange(n * m).view({n, m, 1}) % 13);
  const Tensor<float> z = cast<float>(arange(k).view({1, 1, k}) % 11);
  Tensor<float> out = empty<float>({n, m, k});
  out.assign(x + y + z);
  const Tensor<float> xt = x.permute({2, 1, 0}).contiguous();  // [k, m, n]
  Tensor<float> back = empty<float>({n, m, k});
  back.assign(xt.permute({2, 1, 0}) + y);  // tiled, y broadcast along the tile rows
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t l = 0; l < k; ++l) {
        const std::int64_t at = (i * m + j) * k + l;
        const float xv = x.data_ptr()[at], yv = y.data_ptr()[i * m + j];
        wrong += out.data_ptr()[at] != xv + yv + z.data_ptr()[l];
        wrong += back.data_ptr()[at] != xv + yv;
      }
  return wrong;
}
}  // namespace

TEST_CASE("large plans of short-stride rows: pieces, remainders, broadcasts and threads", "[expr][tile]") {
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    // elements x operands >= 2^21 (the interleaved walk); 1100 = 17 pieces of 64 and 12 more.
    CHECK(interleaved_errors<float>(701, 1100) == 0);
    CHECK(interleaved_errors<double>(350, 2051) == 0);
    CHECK(interleaved_errors<std::int32_t>(401, 1792) == 0);
    CHECK(interleaved_3d_errors(6, 103, 1000) == 0);  // x's tiles walk along dim 1 (deep runs)
    CHECK(interleaved_3d_errors(3, 7, 30000) == 0);
  }
  set_num_threads(1);
  // below the size, and rows shorter than two pieces: one row at a time, the same values
  CHECK(interleaved_errors<float>(9, 100) == 0);
  CHECK(interleaved_errors<float>(4000, 100) == 0);
}

TEST_CASE("transposed operands and outputs", "[expr][tile]") {
  for (const auto& [r, c] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {70, 131}, {200, 65}, {129, 257}}) {
    check_transposed_tiles<float>(r, c);
    check_transposed_tiles<double>(r, c);
    check_transposed_tiles<std::int16_t>(r, c);
    check_transposed_tiles<std::int64_t>(r, c);
  }
  // complex (16-byte elements) and half go through the scalar block transpose
  const auto z = from_vector<std::complex<float>>(std::vector<std::complex<float>>(100 * 90, {1, 2}), {100, 90});
  const Tensor<std::complex<float>> zt = z.t() + z.t();
  CHECK(zt.at({89, 99}) == std::complex<float>(2, 4));
  const Tensor<half> h = cast<half>(arange(80 * 70).view({80, 70}) % 50);
  const Tensor<half> ht = h.t().contiguous();
  CHECK(static_cast<float>(ht.at({69, 79})) == static_cast<float>(h.at({79, 69})));
  // 3-D permutes
  const auto x = arange<float>(8 * 70 * 90).view({8, 70, 90});
  const Tensor<float> p021 = x.permute({0, 2, 1}) + 1.0f;
  const Tensor<float> p210 = x.permute({2, 1, 0}).contiguous();
  for (std::int64_t i = 0; i < 8; i += 3)
    for (std::int64_t j = 0; j < 70; j += 11)
      for (std::int64_t k = 0; k < 90; k += 13) {
        REQUIRE(p021.at({i, k, j}) == x.at({i, j, k}) + 1.0f);
        REQUIRE(p210.at({k, j, i}) == x.at({i, j, k}));
      }
}
