// SPDX-License-Identifier: MIT
// strata.manip against PyTorch 1.13 (tests/golden/manip.txt, written by
// tools/make_manip_golden.py, whose header describes the records): values of every operator
// over random shapes, layouts and dtypes (exact, and bitwise for linspace), gradients of the
// copying operators, and every error with its message. Then PyTorch's documentation
// examples, the mixed-type joins, and the views that splitting returns.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
using ints = std::vector<std::int64_t>;
using strings = std::vector<std::string>;

strings words(const std::string& s) {
  std::istringstream in(s);
  strings out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}
// "[1,-2]" -> {1, -2}; "[[1,2]]" -> {1, 2} (the nesting is read separately).
ints int_list(const std::string& s) {
  ints out;
  std::string cur;
  for (const char c : s) {
    if (c == '-' || (c >= '0' && c <= '9')) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(std::stoll(cur));
      cur.clear();
    }
  }
  return out;
}
std::optional<std::int64_t> opt_int(const std::string& s) {
  if (s == "-") return std::nullopt;
  return std::stoll(s);
}

// ---- records ----
struct input {
  std::string dtype, layout;
  ints sizes, base;
  strings values;
};
struct result {
  ints sizes;
  strings values;
};
struct golden_case {
  std::string op, dtype;
  strings args;
  std::vector<input> xs;
  std::vector<result> ys;
  strings w;
  std::vector<strings> grads;
  std::string err_type, err;
};

std::vector<golden_case> read_cases() {
  std::vector<golden_case> cases;
  for (const std::string& line : golden::lines("manip.txt")) {
    const std::string key = line.substr(0, line.find(' '));
    const auto colon = line.find(" : ");
    const strings head = words(line.substr(0, colon));
    const strings tail = colon == std::string::npos ? strings{} : words(line.substr(colon + 3));
    if (key == "case") {
      golden_case c;
      c.op = head[1];
      c.dtype = head[2];
      c.args.assign(head.begin() + 4, head.end());
      cases.push_back(c);
    } else if (key == "x") {
      input in{head[1], head[2], golden::parse_shape(head[3]), {}, tail};
      if (head.size() > 4) in.base = golden::parse_shape(head[4]);
      cases.back().xs.push_back(in);
    } else if (key == "y") {
      cases.back().ys.push_back({golden::parse_shape(head[1]), tail});
    } else if (key == "w") {
      cases.back().w = tail;
    } else if (key == "g") {
      cases.back().grads.push_back(tail);
    } else if (key == "err") {
      cases.back().err_type = head[1];
      cases.back().err = line.substr(line.find(head[1]) + head[1].size() + 1);
    }
  }
  return cases;
}

// ---- values ----
template <class T>
T parse(const std::string& s) {
  if constexpr (test::is_complex_v<T>) {
    const auto c = s.find(':');
    using R = typename T::value_type;
    return T(static_cast<R>(std::stod(s.substr(0, c))), static_cast<R>(std::stod(s.substr(c + 1))));
  } else if constexpr (std::is_same_v<T, bool>) {
    return s == "1";
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::stoll(s));
  } else if constexpr (std::is_same_v<T, double>) {
    return std::stod(s);
  } else {
    return T(std::stof(s));  // float, half, bfloat16: the shortest float32 text
  }
}
template <class T>
st::Tensor<T> tensor_of(const strings& values, const ints& sizes) {
  std::vector<T> v;
  for (const auto& s : values) v.push_back(parse<T>(s));
  return st::from_vector<T>(v, sizes);
}
// An input with its layout: contiguous, transposed (all dims reversed), stepped (every other
// element of the last dim) or expanded from a smaller base.
template <class T>
st::Tensor<T> make_input(const input& in) {
  if (in.layout == "e") return tensor_of<T>(in.values, in.base).expand(in.sizes);
  const st::Tensor<T> v = tensor_of<T>(in.values, in.sizes);
  if (in.layout == "t") {
    ints rev(in.sizes.rbegin(), in.sizes.rend()), perm;
    for (std::int64_t d = static_cast<std::int64_t>(rev.size()) - 1; d >= 0; --d) perm.push_back(d);
    st::Tensor<T> x = st::empty<T>(rev).permute(perm);
    x.copy_(v);
    return x;
  }
  if (in.layout == "s") {
    ints big = in.sizes;
    big.back() *= 2;
    st::Tensor<T> x = st::zeros<T>(big).slice(-1, 0, std::nullopt, 2);
    x.copy_(v);
    return x;
  }
  return v;
}

// Same values, NaN matching NaN; tol > 0 compares within tol relative instead.
template <class T>
void check_values(const st::Tensor<T>& got, const result& want, double tol) {
  REQUIRE(got.sizes() == st::int_list(want.sizes));
  const std::vector<T> g = got.to_vector();
  REQUIRE(g.size() == want.values.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const std::complex<double> a = test::to_cdouble(g[i]), b = test::to_cdouble(parse<T>(want.values[i]));
    INFO("element " << i << ": got " << a << ", want " << b);
    const auto same = [tol](double x, double y) {
      if (std::isnan(y)) return std::isnan(x);
      if (tol == 0 || std::isinf(y)) return x == y;
      return std::abs(x - y) <= tol * (1 + std::abs(y));
    };
    CHECK((same(a.real(), b.real()) && same(a.imag(), b.imag())));
  }
}

// ---- running one case ----
template <class F>
void with_type(const std::string& dt, F&& f) {
  if (dt == "b") f.template operator()<bool>();
  else if (dt == "u8") f.template operator()<std::uint8_t>();
  else if (dt == "i8") f.template operator()<std::int8_t>();
  else if (dt == "i32") f.template operator()<std::int32_t>();
  else if (dt == "i64") f.template operator()<std::int64_t>();
  else if (dt == "f16") f.template operator()<st::half>();
  else if (dt == "bf16") f.template operator()<st::bfloat16>();
  else if (dt == "f32") f.template operator()<float>();
  else if (dt == "f64") f.template operator()<double>();
  else if (dt == "c64") f.template operator()<std::complex<float>>();
  else if (dt == "c128") f.template operator()<std::complex<double>>();
  else FAIL("unknown dtype " << dt);
}

// A scalar argument "i:5", "f:0.5" or "c:1:2" passed to f with its C++ type.
template <class F>
auto with_scalar(const std::string& s, F&& f) {
  if (s[0] == 'i') return f(static_cast<std::int64_t>(std::stoll(s.substr(2))));
  if (s[0] == 'f') return f(std::stod(s.substr(2)));
  const auto c = s.find(':', 2);
  return f(std::complex<double>(std::stod(s.substr(2, c - 2)), std::stod(s.substr(c + 1))));
}

template <class T>
std::vector<st::Tensor<T>> creation(const golden_case& c) {
  const std::int64_t steps = std::stoll(c.args[2]);
  const auto call = [&](auto a, auto b) -> st::Tensor<T> {
    using A = decltype(a);
    using B = decltype(b);
    constexpr bool complex_arg = test::is_complex_v<A> || test::is_complex_v<B>;
    if constexpr (complex_arg && !test::is_complex_v<T>) {
      FAIL("a complex scalar for a real dtype");
      return {};
    } else if (c.op == "linspace") {
      if constexpr (std::is_same_v<T, bool>) FAIL("linspace of bool");
      else return st::linspace<T>(a, b, steps);
    } else {
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, st::half>) FAIL("logspace of bool or half");
      else return st::logspace<T>(a, b, steps, std::stod(c.args[3]));
    }
    return {};
  };
  return {with_scalar(c.args[0], [&](auto a) { return with_scalar(c.args[1], [&](auto b) { return call(a, b); }); })};
}

template <class T, class I>
st::Tensor<T> interleave_by_tensor(const st::Tensor<T>& x, const std::string& tok, std::optional<std::int64_t> dim) {
  if (tok.rfind("scalar:", 0) == 0) return st::repeat_interleave(x, st::full<I>({}, static_cast<I>(std::stoll(tok.substr(7)))), dim);
  std::vector<I> r;
  for (const std::int64_t v : int_list(tok)) r.push_back(static_cast<I>(v));
  const auto n = static_cast<std::int64_t>(r.size());
  const st::Tensor<I> reps = tok.rfind("[[", 0) == 0 ? st::from_vector<I>(r, {1, n}) : st::from_vector<I>(r, {n});
  return st::repeat_interleave(x, reps, dim);
}

template <class T>
std::vector<st::Tensor<T>> run_op(const golden_case& c, const std::vector<st::Tensor<T>>& xs) {
  const strings& a = c.args;
  const std::string& op = c.op;
  if (op == "linspace" || op == "logspace") return creation<T>(c);
  if (op == "cat") return {st::cat(xs, std::stoll(a[0]))};
  if (op == "stack") return {st::stack(xs, std::stoll(a[0]))};
  if (op == "hstack") return {st::hstack(xs)};
  if (op == "vstack") return {st::vstack(xs)};
  const st::Tensor<T>& x = xs.at(0);
  if (op == "tril") return {st::tril(x, std::stoll(a[0]))};
  if (op == "triu") return {st::triu(x, std::stoll(a[0]))};
  if (op == "flip") return {st::flip(x, int_list(a[0]))};
  if (op == "roll") return {st::roll(x, int_list(a[0]), int_list(a[1]))};
  if (op == "repeat") return {st::repeat(x, int_list(a[0]))};
  if (op == "tile") return {st::tile(x, int_list(a[0]))};
  if (op == "repeat_interleave") {
    const std::optional<std::int64_t> dim = opt_int(a[2]);
    if (a[0] == "int") return {st::repeat_interleave(x, std::stoll(a[1]), dim)};
    if (a[0] == "i32") return {interleave_by_tensor<T, std::int32_t>(x, a[1], dim)};
    return {interleave_by_tensor<T, std::int64_t>(x, a[1], dim)};
  }
  if (op == "pad") {
    const std::optional<double> value = a[2] == "-" ? std::nullopt : std::optional<double>(std::stod(a[2]));
    return {st::pad(x, int_list(a[0]), a[1], value)};
  }
  const std::int64_t dim = std::stoll(a.back());
  if (op == "split") return st::split(x, std::stoll(a[0]), dim);
  if (op == "split_sizes") return st::split(x, int_list(a[0]), dim);
  if (op == "chunk") return st::chunk(x, std::stoll(a[0]), dim);
  if (op == "unbind") return st::unbind(x, dim);
  if (op == "tensor_split") return st::tensor_split(x, std::stoll(a[0]), dim);
  if (op == "tensor_split_indices") return st::tensor_split(x, int_list(a[0]), dim);
  if (op == "tensor_split_tensor") {
    if (a[0].rfind("scalar:", 0) == 0) return st::tensor_split(x, st::full<std::int64_t>({}, std::stoll(a[0].substr(7))), dim);
    const ints v = int_list(a[0]);
    const auto n = static_cast<std::int64_t>(v.size());
    return st::tensor_split(x, a[0].rfind("[[", 0) == 0 ? st::from_vector<std::int64_t>(v, {1, n}) : st::from_vector<std::int64_t>(v, {n}), dim);
  }
  FAIL("unknown op " << op);
  return {};
}

bool splits(const std::string& op) {
  return op == "split" || op == "split_sizes" || op == "chunk" || op == "unbind" || op.rfind("tensor_split", 0) == 0;
}

template <class T>
void run_case(const golden_case& c) {
  std::vector<st::Tensor<T>> xs;
  for (const input& in : c.xs) xs.push_back(make_input<T>(in));
  if (!c.err.empty()) {
    try {
      run_op<T>(c, xs);
      FAIL("no error; PyTorch: " << c.err);
    } catch (const st::error& e) {
      CHECK(std::string(e.what()) == c.err);
      if (c.err_type == "IndexError") CHECK(dynamic_cast<const st::index_error*>(&e) != nullptr);
    }
    return;
  }
  const std::vector<st::Tensor<T>> ys = run_op<T>(c, xs);
  REQUIRE(ys.size() == c.ys.size());
  const double tol = c.op == "logspace" && test::is_complex_v<T> ? 1e-6 : 0;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    check_values(ys[i], c.ys[i], tol);
    if (splits(c.op)) CHECK(ys[i].is_alias_of(xs[0]));  // views, never copies
    else if (!xs.empty()) CHECK(ys[i].is_contiguous());
  }
  if constexpr (st::is_floating_point(st::dtype_v<T>) || st::is_complex(st::dtype_v<T>)) {
    if (c.w.empty()) return;
    for (st::Tensor<T>& x : xs) x.requires_grad_();
    run_op<T>(c, xs)[0].backward(tensor_of<T>(c.w, c.ys[0].sizes));
    const double gtol = std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>> ? 1e-12 : 1e-5;
    REQUIRE(c.grads.size() == xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO("gradient of input " << i);
      const st::Tensor<T> g = xs[i].has_grad() ? xs[i].grad() : st::zeros<T>(xs[i].sizes());
      check_values(g, result{c.xs[i].sizes, c.grads[i]}, gtol);
    }
  }
}

void run_golden(const golden_case& c) {
  INFO("case " << c.op << " " << c.dtype << " |" << [&] {
    std::string s;
    for (const auto& w : c.args) s += " " + w;
    for (const auto& x : c.xs) s += " x" + x.layout + st::to_string(x.sizes);
    return s;
  }());
  if (c.op == "repeat_interleave_counts") {
    const auto counts = [&]<class I>() {
      const input& in = c.xs[0];
      const st::Tensor<I> r = tensor_of<I>(in.values, in.sizes);
      if (!c.err.empty()) {
        CHECK_THROWS_WITH(st::repeat_interleave(r), c.err);
        return;
      }
      check_values(st::repeat_interleave(r), c.ys[0], 0);
    };
    if (c.dtype == "i32") counts.template operator()<std::int32_t>();
    else counts.template operator()<std::int64_t>();
    return;
  }
  with_type(c.dtype, [&]<class T>() { run_case<T>(c); });
}
}  // namespace

TEST_CASE("manip: every operator against PyTorch 1.13 (values, gradients, errors)", "[manip][golden]") {
  const std::vector<golden_case> cases = read_cases();
  CHECK(cases.size() > 700);
  for (const golden_case& c : cases) run_golden(c);
}

TEST_CASE("manip: PyTorch's documentation examples", "[manip]") {
  const auto i64 = [](std::vector<std::int64_t> v, ints sizes) { return st::from_vector<std::int64_t>(v, sizes); };
  const auto values = [](const auto& t) { return t.to_vector(); };
  SECTION("linspace and logspace") {
    CHECK(values(st::linspace(3, 10, 5)) == std::vector<float>{3.0f, 4.75f, 6.5f, 8.25f, 10.0f});
    CHECK(values(st::linspace(-10, 10, 5)) == std::vector<float>{-10, -5, 0, 5, 10});
    CHECK(values(st::linspace(-10, 10, 1)) == std::vector<float>{-10});
    test::check_close(as_doubles(st::logspace(-10, 10, 5)), {1e-10, 1e-5, 1, 1e5, 1e10}, 1e-6);
    test::check_close(as_doubles(st::logspace(0.1, 1.0, 5)), {1.2589, 2.1135, 3.5481, 5.9566, 10.0}, 1e-4);
    CHECK(values(st::logspace(2, 2, 1, 2)) == std::vector<float>{4});
    CHECK(st::linspace<std::int64_t>(0.5, 9.7, 5).to_vector() == std::vector<std::int64_t>{0, 2, 4, 6, 9});
  }
  SECTION("flip, roll") {
    const auto x = st::arange<std::int64_t>(8).view({2, 2, 2});
    CHECK(values(st::flip(x, {0, 1})) == std::vector<std::int64_t>{6, 7, 4, 5, 2, 3, 0, 1});
    const auto y = i64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
    CHECK(values(st::roll(y, 1)) == std::vector<std::int64_t>{8, 1, 2, 3, 4, 5, 6, 7});
    CHECK(values(st::roll(y, 1, 0)) == std::vector<std::int64_t>{7, 8, 1, 2, 3, 4, 5, 6});
    CHECK(values(st::roll(y, -1, 0)) == std::vector<std::int64_t>{3, 4, 5, 6, 7, 8, 1, 2});
    CHECK(values(st::roll(y, {2, 1}, {0, 1})) == std::vector<std::int64_t>{6, 5, 8, 7, 2, 1, 4, 3});
  }
  SECTION("repeat, tile, repeat_interleave") {
    const auto x = i64({1, 2, 3}, {3});
    CHECK(st::repeat(x, {4, 2}).sizes() == st::int_list{4, 6});
    CHECK(st::repeat(x, {4, 2, 1}).sizes() == st::int_list{4, 2, 3});
    CHECK(values(st::tile(x, {2})) == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3});
    const auto y = i64({1, 2, 3, 4}, {2, 2});
    CHECK(values(st::tile(y, {2, 2})) == std::vector<std::int64_t>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
    CHECK(values(st::repeat_interleave(x, 2)) == std::vector<std::int64_t>{1, 1, 2, 2, 3, 3});
    CHECK(values(st::repeat_interleave(y, 2)) == std::vector<std::int64_t>{1, 1, 2, 2, 3, 3, 4, 4});
    CHECK(values(st::repeat_interleave(y, 3, 1)) == std::vector<std::int64_t>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4});
    const auto r = st::repeat_interleave(y, i64({1, 2}, {2}), 0);
    CHECK(r.sizes() == st::int_list{3, 2});
    CHECK(values(r) == std::vector<std::int64_t>{1, 2, 3, 4, 3, 4});
    CHECK(values(st::repeat_interleave(i64({2, 3}, {2}))) == std::vector<std::int64_t>{0, 0, 1, 1, 1});
  }
  SECTION("tril, triu") {
    const auto a = st::arange<float>(12).view({3, 4});
    CHECK(values(st::tril(a)) == std::vector<float>{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0});
    CHECK(values(st::triu(a, 1)) == std::vector<float>{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
    CHECK(values(st::tril(a, -1)) == std::vector<float>{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
  }
  SECTION("pad's shapes") {
    const auto t4d = st::empty<float>({3, 3, 4, 2});
    CHECK(st::pad(t4d, {1, 1}).sizes() == st::int_list{3, 3, 4, 4});
    CHECK(st::pad(t4d, {1, 1, 2, 2}).sizes() == st::int_list{3, 3, 8, 4});
    CHECK(st::pad(t4d, {0, 1, 2, 1, 3, 3}).sizes() == st::int_list{3, 9, 7, 3});
    const auto r = st::pad(st::arange<float>(6).view({1, 2, 3}), {2, 1}, "reflect");
    CHECK(values(r) == std::vector<float>{2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4});
    CHECK(values(st::pad(st::arange<float>(3).view({1, 3}), {2, 1}, "replicate")) == std::vector<float>{0, 0, 0, 1, 2, 2});
    CHECK(values(st::pad(st::arange<float>(3).view({1, 3}), {1, -1}, "constant", 7.0)) == std::vector<float>{7, 0, 1});
  }
  SECTION("circular pad wraps around what the negative pads leave, as PyTorch 1.13") {
    const auto x = st::arange<float>(5).view({1, 1, 5});
    CHECK(values(st::pad(x, {2, 3}, "circular")) == std::vector<float>{3, 4, 0, 1, 2, 3, 4, 0, 1, 2});
    CHECK(values(st::pad(x, {2, -1}, "circular")) == std::vector<float>{2, 3, 0, 1, 2, 3});  // wraps over 0..3
    CHECK(values(st::pad(x, {-1, 2}, "circular")) == std::vector<float>{1, 2, 3, 4, 1, 2});  // wraps over 1..4
    CHECK(values(st::pad(x, {5, 5}, "circular")).size() == 15);
    CHECK(st::pad(x, {-5, 0}, "circular").sizes() == st::int_list{1, 1, 0});
    // 2-D: the corners take both wraps
    const auto z = st::arange<float>(12).view({1, 1, 3, 4});
    CHECK(values(st::pad(z, {1, 2, 2, -1}, "circular")) ==
          std::vector<float>{3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5, 3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5});
    // PyTorch reads its own unwritten output (or refuses an overlap) when a pad wraps past
    // the cropped size; strata refuses
    CHECK_THROWS_WITH(st::pad(x, {2, -4}, "circular"), "Padding value causes wrapping around more than once.");
    CHECK_THROWS_WITH(st::pad(x, {-5, 5}, "circular"), "Padding value causes wrapping around more than once.");
    // the gradient sums every copy back onto its source
    auto a = st::arange<double>(5).view({1, 1, 5}).requires_grad_();
    st::pad(a, {3, 2}, "circular").backward(st::arange<double>(10).view({1, 1, 10}));
    CHECK(values(a.grad()) == std::vector<double>{11, 13, 5, 7, 9});
  }
  SECTION("joining") {
    const auto a = i64({1, 2, 3}, {3}), b = i64({4, 5, 6}, {3});
    CHECK(values(st::hstack({a, b})) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
    CHECK(st::vstack({a, b}).sizes() == st::int_list{2, 3});
    CHECK(values(st::stack({a, b}, 1)) == std::vector<std::int64_t>{1, 4, 2, 5, 3, 6});
    const auto x = st::arange<float>(6).view({2, 3});
    CHECK(st::cat({x, x, x}, 0).sizes() == st::int_list{6, 3});
    CHECK(st::cat({x, x, x}, 1).sizes() == st::int_list{2, 9});
  }
  SECTION("splitting") {
    const auto x = st::arange<std::int64_t>(8);
    const auto p = st::tensor_split(x, 3);
    REQUIRE(p.size() == 3);
    CHECK(values(p[0]) == std::vector<std::int64_t>{0, 1, 2});
    CHECK(values(p[2]) == std::vector<std::int64_t>{6, 7});
    const auto q = st::tensor_split(st::arange<std::int64_t>(7), {1, 6});
    REQUIRE(q.size() == 3);
    CHECK(values(q[1]) == std::vector<std::int64_t>{1, 2, 3, 4, 5});
    const auto s = st::split(st::arange<std::int64_t>(10).view({5, 2}), {1, 4});
    CHECK(s[1].sizes() == st::int_list{4, 2});
    CHECK(st::chunk(st::arange<std::int64_t>(11), 6).size() == 6);
    CHECK(st::chunk(st::arange<std::int64_t>(12), 6).size() == 6);
    CHECK(st::chunk(st::arange<std::int64_t>(13), 6).size() == 5);
  }
}

TEST_CASE("manip: tensors of different element types promote as PyTorch's", "[manip]") {
  const auto i = st::from_vector<std::int32_t>({1, 2}, {1, 2});
  const auto d = st::from_vector<double>({0.5, 1.5}, {1, 2});
  const st::Tensor<double> c = st::cat(std::tuple{i, d});
  CHECK(c.to_vector() == std::vector<double>{1, 2, 0.5, 1.5});
  const auto b = st::from_vector<bool>({true, false});
  const auto u = st::from_vector<std::uint8_t>({7, 200});
  CHECK(st::cat(std::tuple{b, u}).to_vector() == std::vector<std::uint8_t>{1, 0, 7, 200});
  const auto s8 = st::from_vector<std::int8_t>({-1});
  const st::Tensor<std::int16_t> w = st::cat(std::tuple{s8, u, s8});
  CHECK(w.to_vector() == std::vector<std::int16_t>{-1, 7, 200, -1});
  // a 1-D empty tensor is skipped but still takes part in the promotion
  const st::Tensor<double> e = st::cat(std::tuple{st::empty<double>({0}), st::from_vector<float>({1, 2})});
  CHECK(e.to_vector() == std::vector<double>{1, 2});
  CHECK(st::stack(std::tuple{i, d}).sizes() == st::int_list{2, 1, 2});
  CHECK(st::hstack(std::tuple{i, d}).dtype() == st::dtype::float64);
  CHECK(st::vstack(std::tuple{i, d}).sizes() == st::int_list{2, 2});
  // gradients reach each input in its own dtype
  auto f = st::from_vector<float>({1, 2}).requires_grad_();
  auto g = st::from_vector<double>({3}).requires_grad_();
  st::Tensor<double> y = st::cat(std::tuple{f, g});
  st::sum(y * st::from_vector<double>({1, 2, 3})).backward();
  CHECK(f.grad().to_vector() == std::vector<float>{1, 2});
  CHECK(g.grad().to_vector() == std::vector<double>{3});
}

TEST_CASE("manip: split, chunk, unbind and tensor_split return views of the input", "[manip][view]") {
  auto x = st::arange<float>(12).view({3, 4});
  for (const auto& parts : {st::split(x, 2, 1), st::chunk(x, 3, 0), st::unbind(x, 1), st::tensor_split(x, {1, 3}, 1)})
    for (const auto& p : parts) CHECK(p.is_alias_of(x));
  const auto rows = st::unbind(x, 0);
  rows[1].fill_(-1.0f);  // writes through to x
  CHECK(x.at({1, 2}) == -1.0f);
  const auto cols = st::split(x, {1, 3}, 1);
  CHECK(cols[1].data_ptr() == x.data_ptr() + 1);
  CHECK(cols[1].strides() == st::int_list{4, 1});
  // a gradient through a piece lands in its part of the input
  auto y = st::arange<double>(6).requires_grad_();
  const auto pieces = st::chunk(y, 3);
  st::sum(pieces[1] * 3.0).backward();
  CHECK(y.grad().to_vector() == std::vector<double>{0, 0, 3, 3, 0, 0});
}

TEST_CASE("manip: copies record gradients only when asked", "[manip][autograd]") {
  auto x = st::arange<float>(6).view({2, 3}).requires_grad_();
  {
    st::no_grad guard;
    CHECK_FALSE(st::flip(x, {0}).requires_grad());
    CHECK_FALSE(st::cat({x, x}).requires_grad());
  }
  CHECK(st::flip(x, {0}).requires_grad());
  CHECK_FALSE(st::flip(x.detach(), {0}).requires_grad());
  // a chain: pad(repeat(roll(x)))
  st::Tensor<float> y = st::pad(st::repeat(st::roll(x, 1, 1), {2, 1}), {1, 1}, "reflect");
  st::sum(y).backward();
  // reflect pad of width 1 on 3 columns reads column 1 three times (itself and both mirrors);
  // the roll put column 0 of x there
  CHECK(x.grad().to_vector() == std::vector<float>{6, 2, 2, 6, 2, 2});
}

TEST_CASE("manip: large inputs (threads, many pieces)", "[manip]") {
  const std::int64_t n = 700;
  const auto a = st::arange<float>(n * n).view({n, n});
  const st::Tensor<float> c = st::cat({a, a.t(), a}, 1);
  CHECK(c.sizes() == st::int_list{n, 3 * n});
  CHECK(c.at({5, 7}) == a.at({5, 7}));
  CHECK(c.at({5, n + 7}) == a.at({7, 5}));
  CHECK(c.at({n - 1, 3 * n - 1}) == a.at({n - 1, n - 1}));
  const st::Tensor<float> f = st::flip(a, {0, 1});
  CHECK(f.at({0, 0}) == a.at({n - 1, n - 1}));
  CHECK(f.at({3, 9}) == a.at({n - 4, n - 10}));
  const auto l = st::linspace(0.0, 1.0, 100001);
  CHECK(l.at({0}) == 0.0f);
  CHECK(l.at({100000}) == 1.0f);
  CHECK(l.at({50000}) == 0.5f);
}

TEST_CASE("manip: edge cases PyTorch accepts", "[manip]") {
  // a repeats tensor is not checked along an empty dim; an empty roll never looks at its dim
  CHECK(st::repeat_interleave(st::zeros<float>({0, 3}), st::full<std::int64_t>({}, -1), 0).sizes() == st::int_list{0, 3});
  CHECK(st::roll(st::zeros<float>({0, 3}), 1, 5).sizes() == st::int_list{0, 3});
  // all inputs 1-D and empty: the dim is never checked, the result is [0]
  CHECK(st::cat({st::empty<float>({0}), st::empty<float>({0})}, 5).sizes() == st::int_list{0});
  // a 0-dim tensor flips along dim 0 or -1 (nothing to do), rolls as a flat tensor
  const auto s = st::full<float>({}, 3.0f);
  CHECK(st::flip(s, {-1}).item() == 3.0f);
  CHECK(st::roll(s, 5).item() == 3.0f);
  CHECK(st::repeat(s, {}).dim() == 0);
  // reflect takes an explicit value of 0; constant casts its value as PyTorch's fill does
  CHECK(st::pad(st::ones<float>({2, 3}), {1, 1}, "reflect", 0.0).sizes() == st::int_list{2, 5});
  CHECK(st::pad(st::ones<std::int32_t>({1, 1}), {1, 0}, "constant", 2.7).to_vector() == std::vector<std::int32_t>{2, 1});
  CHECK(st::pad(st::ones<bool>({1, 1}), {1, 0}, "constant", -2.0).to_vector() == std::vector<bool>{true, true});
  // *_like: contiguous results of t's sizes, in t's or the given element type
  const auto t = st::arange<float>(6).view({2, 3}).t();
  CHECK(st::zeros_like(t).strides() == st::int_list{2, 1});
  CHECK(st::ones_like<std::int64_t>(t).to_vector() == std::vector<std::int64_t>(6, 1));
  CHECK(st::full_like(st::ones<std::int32_t>({2}), 2.7).to_vector() == std::vector<std::int32_t>{2, 2});
  CHECK(st::full_like<double>(t, 0.5).dtype() == st::dtype::float64);
  CHECK(st::empty_like(t).sizes() == st::int_list{3, 2});
  // uint8 takes negative integer ends as c10 does (wrapping), not negative floats
  CHECK(st::linspace<std::uint8_t>(-255, 0, 3).to_vector() == std::vector<std::uint8_t>{1, 0, 0});
  CHECK_THROWS_WITH(st::linspace<std::uint8_t>(-1.0, 0, 3), "value cannot be converted to type uint8_t without overflow");
}

TEST_CASE("manip: float128 (strata's own dtype) through the same operators", "[manip]") {
  using q = st::float128;
  const auto l = st::linspace<q>(0, 1, 5);
  CHECK(l.to_vector() == std::vector<q>{0, 0.25, 0.5, 0.75, 1});
  CHECK(st::logspace<q>(0, 2, 3).to_vector() == std::vector<q>{1, 10, 100});
  auto x = st::arange<q>(6).view({2, 3}).requires_grad_();
  st::Tensor<q> y = st::pad(st::flip(x, {1}), {1, 1}, "reflect");
  CHECK(y.to_vector() == std::vector<q>{1, 2, 1, 0, 1, 4, 5, 4, 3, 4});
  st::sum(y).backward();
  CHECK(x.grad().to_vector() == std::vector<q>{1, 3, 1, 1, 3, 1});
}
