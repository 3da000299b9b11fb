// SPDX-License-Identifier: MIT
// strata.linalg against PyTorch 1.13: golden data that tools/make_linalg_golden.py writes
// (its docstring describes the record format).
//  * linalg_einsum.txt: random equations (1-4 operands, ellipses, repeated and upper-case
//    labels, size-1 and zero-size dims, 0-dim, permuted, narrowed, stepped and expanded
//    operands) in every dtype torch's einsum computes, fixed equations with known answers, and
//    every error form with torch's exact message.
//  * linalg_einsum_large.txt: contractions big enough for the GEMM path (sampled outputs).
//  * linalg_einsum_grad.txt: float64 gradients of sum(einsum(...) * w) for each operand's base.
//  * linalg_matmul.txt: matmul for every rank combination 1-4 (broadcast batch dims), mm, bmm,
//    mv, dot, outer, tensordot, float64 gradients, and their errors.
// Runtime dtypes reach a bounded set of instantiations: einsum's vector form once per dtype,
// its variadic form for float and double with 1-3 operands, the binary functions for five
// dtypes. Mixed-dtype products are compile-time errors here (tests/compile_fail/), so their
// golden records, torch's run-time messages, are skipped.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "golden.hpp"
import strata;
using namespace strata;

namespace {
using ints = std::vector<std::int64_t>;
using strings = std::vector<std::string>;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

strings words(const std::string& line) {
  std::istringstream in(line);
  strings out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// The tokens after the first " : " of a line.
strings after_colon(const std::string& line) {
  const auto p = line.find(" : ");
  if (p == std::string::npos) return {};
  return words(line.substr(p + 3));
}

std::vector<double> to_doubles(const strings& w) {
  std::vector<double> out;
  for (const auto& s : w) out.push_back(std::strtod(s.c_str(), nullptr));
  return out;
}

// ---- the records ----
struct operand_spec {
  std::string dtype;
  ints base;
  strings views;
  enum class fill { values, zeros, gen } how = fill::values;
  strings values;
  std::uint64_t seed = 0;
};

struct record {
  std::string id, fn, ref;
  std::string eq;
  std::string api = "vector";
  strings dims;  // tensordot: "dims n" or "dims [..] [..]" (the words after "dims")
  std::vector<operand_spec> ops;
  std::string out_dtype;
  ints out_shape;
  std::size_t sample = 1;
  strings out;
  std::vector<double> mag;
  std::vector<double> w;
  std::map<std::size_t, strings> grad;
  std::map<std::size_t, std::vector<double>> gmag;
  std::optional<std::string> error;

  std::string title() const {
    std::string s = id + " " + fn + " (" + ref + ")";
    if (!eq.empty() || fn == "einsum") s += " \"" + eq + "\"";
    for (const auto& o : ops) {
      s += " " + o.dtype + to_string(int_list(o.base));
      for (const auto& v : o.views) s += "|" + v;
    }
    return s;
  }
};

std::vector<record> read_records(const std::string& file) {
  std::vector<record> out;
  record r;
  for (const std::string& line : golden::lines(file)) {
    if (line[0] == '#') continue;
    const strings w = words(line);
    const std::string& k = w[0];
    if (k == "case") {
      r = record{};
      r.id = w[1];
      r.fn = w[2];
      r.ref = w[3];
    } else if (k == "eq") {
      const auto a = line.find('"'), b = line.rfind('"');
      r.eq = line.substr(a + 1, b - a - 1);
    } else if (k == "api") {
      r.api = w[1];
    } else if (k == "dims") {
      r.dims.assign(w.begin() + 1, w.end());
    } else if (k == "op") {
      operand_spec o;
      o.dtype = w[1];
      o.base = golden::parse_shape(w[2]);
      if (w[3] != "-") o.views = golden::split(w[3], '|');
      if (w[4] == "zeros") {
        o.how = operand_spec::fill::zeros;
      } else if (w[4] == "gen") {
        o.how = operand_spec::fill::gen;
        o.seed = std::stoull(w[5]);
      } else {
        o.values = after_colon(line);
      }
      r.ops.push_back(o);
    } else if (k == "out") {
      r.out_dtype = w[1];
      r.out_shape = golden::parse_shape(w[2]);
      if (w[3] == "sample") r.sample = std::stoul(w[4]);
      r.out = after_colon(line);
    } else if (k == "mag") {
      r.mag = to_doubles(after_colon(line));
    } else if (k == "w") {
      r.w = to_doubles(after_colon(line));
    } else if (k == "grad") {
      r.grad[std::stoul(w[1])] = after_colon(line);
    } else if (k == "gmag") {
      r.gmag[std::stoul(w[1])] = to_doubles(after_colon(line));
    } else if (k == "error") {
      r.error = line.substr(6);
    } else if (k == "end") {
      out.push_back(r);
    } else {
      throw std::runtime_error("bad golden line: " + line);
    }
  }
  return out;
}

// ---- values ----
template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

template <class T>
T parse_value(const std::string& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s != "0";
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::stoll(s));
  } else if constexpr (is_complex_v<T>) {
    const auto c = s.find(',');
    using R = typename T::value_type;
    return T(parse_value<R>(s.substr(0, c)), parse_value<R>(s.substr(c + 1)));
  } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float128>) {
    return T(std::strtod(s.c_str(), nullptr));  // float128 cases reuse float64 data
  } else {  // float, half, bfloat16: the shortest float32 repr, parsed as float32
    return T(std::strtof(s.c_str(), nullptr));
  }
}

/// d converted to T (through float for the 16-bit floats and float32-based types).
template <class T>
T from_double(double d) {
  if constexpr (is_complex_v<T>) return T(static_cast<typename T::value_type>(d), 0);
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return T(static_cast<float>(d));
  else return static_cast<T>(d);
}

/// The test's copy of the generator's LCG: values in [-1, 1) with 2^-12 steps.
std::vector<double> lcg_values(std::uint64_t seed, std::int64_t n) {
  std::vector<double> out;
  std::uint64_t s = seed;
  for (std::int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto v = static_cast<std::int64_t>((s >> 33) % 8191) - 4095;
    out.push_back(static_cast<double>(v) / 4096.0);
  }
  return out;
}

template <class T>
Tensor<T> apply_view(const Tensor<T>& x, const std::string& tok) {
  const strings p = golden::split(tok, ':');
  const std::string& op = p[0];
  if (op == "permute") return x.permute(golden::parse_shape(p[1]));
  if (op == "transpose") return x.transpose(std::stoll(p[1]), std::stoll(p[2]));
  if (op == "t") return x.t();
  if (op == "narrow") return x.narrow(std::stoll(p[1]), std::stoll(p[2]), std::stoll(p[3]));
  if (op == "expand") return x.expand(golden::parse_shape(p[1]));
  if (op == "asstrided") return x.as_strided(golden::parse_shape(p[1]), golden::parse_shape(p[2]), std::stoll(p[3]));
  throw std::runtime_error("unknown view " + tok);
}

/// The operand's base tensor (a leaf, requiring grad when asked) and the operand built from it.
template <class T>
std::pair<Tensor<T>, Tensor<T>> make_operand(const operand_spec& o, bool requires_grad = false) {
  Tensor<T> base = zeros<T>(o.base);
  if (o.how == operand_spec::fill::values) {
    std::vector<T> v;
    for (const auto& s : o.values) v.push_back(parse_value<T>(s));
    base = from_vector<T>(v, o.base);
  } else if (o.how == operand_spec::fill::gen) {
    std::vector<T> v;
    for (double d : lcg_values(o.seed, numel_of(o.base))) v.push_back(from_double<T>(d));
    base = from_vector<T>(v, o.base);
  }
  if (requires_grad) base.requires_grad_();
  Tensor<T> x = base;
  for (const auto& v : o.views) x = apply_view(x, v);
  return {base, x};
}

// ---- comparing ----
template <class T>
double rtol_of() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, c64>) return 1e-5;
  else if constexpr (std::is_same_v<T, half>) return 1e-2;
  else if constexpr (std::is_same_v<T, bfloat16>) return 4e-2;
  else return 1e-12;
}

template <class T>
c128 as_c128(const T& x) {
  if constexpr (is_complex_v<T>) return c128(static_cast<double>(x.real()), static_cast<double>(x.imag()));
  else return c128(static_cast<double>(x), 0.0);
}

template <class T>
std::string show(const T& x) {
  std::ostringstream o;
  o.precision(17);
  if constexpr (std::is_integral_v<T>) o << static_cast<std::int64_t>(x);
  else if constexpr (is_complex_v<T>) o << x;
  else o << static_cast<double>(x);
  return o.str();
}

/// "" when got (all elements) matches want (every step-th element): integers exactly (bool as
/// want != 0), floats within rtol * mag.
template <class T>
std::string compare(const std::vector<T>& got, const strings& want, const std::vector<double>& mag,
                    std::size_t step, double rtol) {
  const std::size_t expected = want.size();
  if ((got.size() + step - 1) / step != expected)
    return "element count " + std::to_string(got.size()) + ", want " + std::to_string(expected) + " (step " +
           std::to_string(step) + ")";
  for (std::size_t i = 0; i < expected; ++i) {
    const T g = got[i * step];
    bool ok;
    std::string wanted = want[i];
    if constexpr (std::is_same_v<T, bool>) {
      ok = g == (std::stoll(want[i]) != 0);
    } else if constexpr (std::is_integral_v<T>) {
      ok = static_cast<std::int64_t>(g) == std::stoll(want[i]);
    } else {
      const c128 e = as_c128(parse_value<std::conditional_t<is_complex_v<T>, c128, double>>(want[i]));
      const c128 gc = as_c128(g);
      const double m = i < mag.size() ? mag[i] : 0.0;
      if (std::isnan(e.real()) || std::isnan(e.imag())) ok = std::isnan(gc.real()) || std::isnan(gc.imag());
      else if (std::isinf(e.real()) || std::isinf(e.imag())) ok = gc == e;
      else ok = std::abs(gc - e) <= rtol * m;
      wanted += " (mag " + show(m) + ")";
    }
    if (!ok) return "element " + std::to_string(i * step) + ": got " + show(g) + ", want " + wanted;
  }
  return "";
}

/// Runs f; returns the message of the strata::error it throws ("" when none), or a note for
/// any other exception.
template <class F>
std::optional<std::string> error_of(F&& f) {
  try {
    f();
  } catch (const strata::error& e) {
    return std::string(e.what());
  } catch (const std::exception& e) {
    return std::string("<not a strata::error> ") + e.what();
  }
  return std::nullopt;
}

std::string check_error(const record& r, const std::optional<std::string>& got) {
  if (!got) return "no error, want: " + *r.error;
  if (*got != *r.error) return "message\n    got:  " + *got + "\n    want: " + *r.error;
  return "";
}

// ---- dtype dispatch ----
template <class T>
struct tag {
  using type = T;
};

template <class F>
decltype(auto) with_dtype(const std::string& d, F&& f) {
  if (d == "f32") return f(tag<float>{});
  if (d == "f64") return f(tag<double>{});
  if (d == "c64") return f(tag<c64>{});
  if (d == "c128") return f(tag<c128>{});
  if (d == "i8") return f(tag<std::int8_t>{});
  if (d == "i16") return f(tag<std::int16_t>{});
  if (d == "i32") return f(tag<std::int32_t>{});
  if (d == "i64") return f(tag<std::int64_t>{});
  if (d == "u8") return f(tag<std::uint8_t>{});
  if (d == "bool") return f(tag<bool>{});
  if (d == "f16") return f(tag<half>{});
  if (d == "bf16") return f(tag<bfloat16>{});
  throw std::runtime_error("unknown dtype " + d);
}

// ---- einsum ----
template <class T>
Tensor<T> einsum_variadic(const std::string& eq, const std::vector<Tensor<T>>& x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    switch (x.size()) {
      case 1: return einsum(eq, x[0]);
      case 2: return einsum(eq, x[0], x[1]);
      case 3: return einsum(eq, x[0], x[1], x[2]);
      default: break;
    }
  }
  throw std::runtime_error("the test compiles the variadic form for float and double with 1-3 operands only");
}

template <class T>
std::string einsum_values(const record& r) {
  std::vector<Tensor<T>> x;
  for (const auto& o : r.ops) x.push_back(make_operand<T>(o).second);
  std::string problems;
  Tensor<T> y;
  if (r.api == "variadic") {
    y = einsum_variadic<T>(r.eq, x);
  } else {
    const einsum_expr<T> e = einsum(r.eq, x);
    if (!(e.sizes() == int_list(r.out_shape))) problems += "expression sizes " + to_string(e.sizes()) + "; ";
    if (e.dim() != static_cast<std::int64_t>(r.out_shape.size())) problems += "expression dim; ";
    if (e.numel() != numel_of(r.out_shape)) problems += "expression numel; ";
    y = e.eval();
  }
  if (!(y.sizes() == int_list(r.out_shape)))
    return problems + "sizes " + to_string(y.sizes()) + ", want " + to_string(int_list(r.out_shape));
  return problems + compare(y.to_vector(), r.out, r.mag, r.sample, rtol_of<T>());
}

/// True when the operands' dtypes differ: strata refuses those products at compile time.
bool mixed_dtypes(const record& r) {
  for (const auto& o : r.ops)
    if (o.dtype != r.ops[0].dtype) return true;
  return false;
}

template <class... Ts, std::size_t... I>
std::optional<std::string> einsum_error_variadic(const record& r, std::index_sequence<I...>) {
  const std::tuple<Tensor<Ts>...> x{make_operand<Ts>(r.ops[I]).second...};
  using T = std::tuple_element_t<0, std::tuple<Ts...>>;
  return error_of([&] {
    const Tensor<T> y = einsum(r.eq, std::get<I>(x)...);
    static_cast<void>(y);
  });
}

template <class... Ts>
std::optional<std::string> einsum_error_variadic(const record& r) {
  if (r.ops.size() != sizeof...(Ts)) throw std::runtime_error("operand count");
  return einsum_error_variadic<Ts...>(r, std::index_sequence_for<Ts...>{});
}

std::string einsum_error(const record& r) {
  if (r.api == "vector") {
    if (r.ops.empty())
      return check_error(r, error_of([&] {
        const Tensor<float> y = einsum(r.eq, std::vector<Tensor<float>>{});
        static_cast<void>(y);
      }));
    return with_dtype(r.ops[0].dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      std::vector<Tensor<T>> x;
      for (const auto& o : r.ops) {
        if (o.dtype != r.ops[0].dtype) throw std::runtime_error("the vector form takes one dtype");
        x.push_back(make_operand<T>(o).second);
      }
      return check_error(r, error_of([&] {
        const Tensor<T> y = einsum(r.eq, x);
        static_cast<void>(y);
      }));
    });
  }
  std::string sig;
  for (const auto& o : r.ops) sig += (sig.empty() ? "" : ",") + o.dtype;
  std::optional<std::string> got;
  // Operands of different dtypes do not compile (tests/compile_fail/einsum_mixed.cpp); torch's
  // run-time message for them is the one thing strata does not reproduce.
  if (mixed_dtypes(r)) return {};
  if (sig == "f32") got = einsum_error_variadic<float>(r);
  else if (sig == "f32,f32") got = einsum_error_variadic<float, float>(r);
  else throw std::runtime_error("no variadic instantiation for " + sig);
  return check_error(r, got);
}

std::string einsum_record(const record& r) {
  if (r.error) return einsum_error(r);
  return with_dtype(r.ops.empty() ? r.out_dtype : r.ops[0].dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    return einsum_values<T>(r);
  });
}

// ---- gradients (float64): loss = sum(f(operands) * w), every base's gradient ----
std::string check_grads(const record& r, const std::vector<Tensor<double>>& leaves, const Tensor<double>& y) {
  if (!(y.sizes() == int_list(r.out_shape))) return "sizes " + to_string(y.sizes());
  std::string problems = compare(y.detach().to_vector(), r.out, r.mag, 1, 1e-12);
  if (!problems.empty()) return "value " + problems;
  const Tensor<double> w = from_vector<double>(r.w, r.out_shape);
  const Tensor<double> loss = sum(y * w);
  loss.backward();
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const strings& want = r.grad.at(k);
    std::vector<double> got;
    if (leaves[k].has_grad()) {
      const Tensor<double> g = leaves[k].grad();
      if (!(g.sizes() == leaves[k].sizes())) problems += "grad " + std::to_string(k) + " sizes " + to_string(g.sizes()) + "; ";
      got = g.to_vector();
    } else {
      got.assign(static_cast<std::size_t>(leaves[k].numel()), 0.0);  // torch: no gradient, or zeros
    }
    const std::string p = compare(got, want, r.gmag.at(k), 1, 1e-12);
    if (!p.empty()) problems += "grad " + std::to_string(k) + ": " + p + "; ";
  }
  return problems;
}

std::string einsum_grad_record(const record& r) {
  std::vector<Tensor<double>> leaves, x;
  for (const auto& o : r.ops) {
    auto [base, op] = make_operand<double>(o, true);
    leaves.push_back(base);
    x.push_back(op);
  }
  const Tensor<double> y = einsum(r.eq, x);
  return check_grads(r, leaves, y);
}

// ---- matmul, mm, bmm, mv, dot, outer, tensordot ----
template <class A, class B>
Tensor<A> binary(const record& r, const Tensor<A>& a, const Tensor<B>& b) {
  const std::string& f = r.fn;
  if (f == "matmul") return matmul(a, b);
  if (f == "mm") return mm(a, b);
  if (f == "bmm") return bmm(a, b);
  if (f == "mv") return mv(a, b);
  if (f == "dot") return dot(a, b);
  if (f == "outer") return outer(a, b);
  if (f == "tensordot") {
    if (r.dims.size() == 1) return tensordot(a, b, std::stoll(r.dims[0]));
    const ints da = golden::parse_shape(r.dims[0]), db = golden::parse_shape(r.dims[1]);
    return tensordot(a, b, int_list(da), int_list(db));
  }
  throw std::runtime_error("unknown function " + f);
}

template <class T>
std::string binary_values(const record& r) {
  if (!r.w.empty()) {
    if constexpr (std::is_same_v<T, double>) {
      auto [a0, a] = make_operand<double>(r.ops[0], true);
      auto [b0, b] = make_operand<double>(r.ops[1], true);
      return check_grads(r, {a0, b0}, binary(r, a, b));
    }
    throw std::runtime_error("gradient cases are float64");
  }
  const Tensor<T> y = binary(r, make_operand<T>(r.ops[0]).second, make_operand<T>(r.ops[1]).second);
  if (!(y.sizes() == int_list(r.out_shape)))
    return "sizes " + to_string(y.sizes()) + ", want " + to_string(int_list(r.out_shape));
  return compare(y.to_vector(), r.out, r.mag, 1, rtol_of<T>());
}

template <class A, class B>
std::string binary_error(const record& r) {
  const Tensor<A> a = make_operand<A>(r.ops[0]).second;
  const Tensor<B> b = make_operand<B>(r.ops[1]).second;
  return check_error(r, error_of([&] {
    const Tensor<A> y = binary(r, a, b);
    static_cast<void>(y);
  }));
}

std::string binary_record(const record& r) {
  const std::string sig = r.ops[0].dtype + "," + r.ops[1].dtype;
  if (!r.error) {
    if (sig == "f32,f32") return binary_values<float>(r);
    if (sig == "f64,f64") return binary_values<double>(r);
    if (sig == "i64,i64") return binary_values<std::int64_t>(r);
    if (sig == "c64,c64") return binary_values<c64>(r);
    if (sig == "c128,c128") return binary_values<c128>(r);
  } else {
    if (mixed_dtypes(r)) return {};  // a compile-time error (tests/compile_fail/matmul_mixed.cpp)
    if (sig == "f32,f32") return binary_error<float, float>(r);
  }
  throw std::runtime_error("no instantiation for " + r.fn + " " + sig);
}

/// Runs every record of a file through run; one CHECK per record.
template <class F>
std::size_t run_file(const std::string& file, F&& run, std::size_t min_count) {
  const auto records = read_records(file);
  REQUIRE(records.size() >= min_count);
  for (const record& r : records) {
    std::string problems;
    try {
      problems = run(r);
    } catch (const std::exception& e) {
      problems = std::string("threw: ") + e.what();
    }
    INFO(r.title());
    CHECK(problems == "");
  }
  return records.size();
}

template <class T>
std::vector<T> vec(const Tensor<T>& t) {
  return t.to_vector();
}
}  // namespace

TEST_CASE("einsum matches torch.einsum: random equations, every dtype, fixed cases (golden)", "[linalg][einsum][golden]") {
  run_file("linalg_einsum.txt", [](const record& r) { return einsum_record(r); }, 390);
}

TEST_CASE("einsum in float128 agrees with the float64 golden values", "[linalg][einsum][golden]") {
  run_file("linalg_einsum.txt", [](const record& r) -> std::string {
    if (r.error || r.api != "vector" || r.ops.empty() || r.ops[0].dtype != "f64") return "";
    return einsum_values<float128>(r);
  }, 390);
}

TEST_CASE("einsum on GEMM-sized operands matches torch.einsum (golden)", "[linalg][einsum][golden]") {
  run_file("linalg_einsum_large.txt", [](const record& r) { return einsum_record(r); }, 7);
}

TEST_CASE("einsum gradients match torch.autograd (golden)", "[linalg][einsum][autograd][golden]") {
  run_file("linalg_einsum_grad.txt", [](const record& r) { return einsum_grad_record(r); }, 60);
}

TEST_CASE("matmul, mm, bmm, mv, dot, outer, tensordot match torch (golden)", "[linalg][matmul][golden]") {
  run_file("linalg_matmul.txt", [](const record& r) { return binary_record(r); }, 300);
}

// The examples of torch.einsum's documentation, with values worked out by hand.
TEST_CASE("einsum: the examples of PyTorch's documentation", "[linalg][einsum]") {
  const auto m = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  SECTION("trace") {
    const Tensor<double> t = einsum("ii", m);
    CHECK(t.dim() == 0);
    CHECK(t.item() == 15.0);
  }
  SECTION("diagonal") { CHECK(vec(Tensor<double>(einsum("ii->i", m))) == std::vector<double>{1, 5, 9}); }
  SECTION("outer product") {
    const auto x = from_vector<double>({1, 2, 3}), y = from_vector<double>({4, 5});
    const Tensor<double> o = einsum("i,j->ij", x, y);
    CHECK(o.sizes() == int_list{3, 2});
    CHECK(vec(o) == std::vector<double>{4, 5, 8, 10, 12, 15});
  }
  SECTION("batch matrix multiplication") {
    const auto a = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
    const auto b = from_vector<double>({1, 0, 0, 1, 0, 1, 1, 0}, {2, 2, 2});
    const Tensor<double> c = einsum("bij,bjk->bik", a, b);
    CHECK(c.sizes() == int_list{2, 2, 2});
    CHECK(vec(c) == std::vector<double>{1, 2, 3, 4, 6, 5, 8, 7});
  }
  SECTION("batch permute with an ellipsis") {
    const auto a = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2});
    const Tensor<double> t = einsum("...ij->...ji", a);
    CHECK(t.sizes() == int_list{2, 2, 3});
    CHECK(vec(t) == std::vector<double>{1, 3, 5, 2, 4, 6, 7, 9, 11, 8, 10, 12});
  }
  SECTION("implicit output: labels in alphabetical order, upper case first") {
    const auto a = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor<double> t = einsum("bA", a);  // output "Ab": the transpose
    CHECK(t.sizes() == int_list{3, 2});
    CHECK(vec(t) == std::vector<double>{1, 4, 2, 5, 3, 6});
    const Tensor<double> s = einsum("ij,j", a, from_vector<double>({1, 1, 1}));  // output "i"
    CHECK(vec(s) == std::vector<double>{6, 15});
  }
  SECTION("sums, and a result inside an expression") {
    const auto a = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    CHECK(vec(Tensor<double>(einsum("ij->", a))) == std::vector<double>{21});
    CHECK(vec(Tensor<double>(einsum("ij->j", a))) == std::vector<double>{5, 7, 9});
    const Tensor<double> y = einsum("ij,ij->i", a, a) * 2.0;
    CHECK(vec(y) == std::vector<double>{28, 154});
    const auto e = einsum("i,i->", from_vector<double>({1, 2, 3}), from_vector<double>({4, 5, 6}));
    CHECK(e.item() == 32.0);
    CHECK(e.to_vector() == std::vector<double>{32});
    CHECK(!e.plan().empty());
  }
  SECTION("a labelled dim of size 1 broadcasts") {
    const Tensor<double> t = einsum("i,i->i", from_vector<double>({2}), from_vector<double>({1, 2, 3}));
    CHECK(vec(t) == std::vector<double>{2, 4, 6});
  }
  SECTION("the vector and variadic forms agree") {
    const auto a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}), b = from_vector<float>({1, 2, 3}, {3, 1});
    const Tensor<float> v = einsum("ij,jk->ik", std::vector<Tensor<float>>{a, b});
    const Tensor<float> w = einsum("ij,jk->ik", a, b);
    CHECK(vec(v) == std::vector<float>{14, 32});
    CHECK(vec(v) == vec(w));
  }
}

TEST_CASE("matmul family: hand-checked values", "[linalg][matmul]") {
  const auto m = from_vector<double>({1, 2, 3, 4}, {2, 2});
  const auto v = from_vector<double>({5, 6});
  CHECK(vec(matmul(m, v)) == std::vector<double>{17, 39});
  CHECK(vec(mv(m, v)) == std::vector<double>{17, 39});
  CHECK(vec(matmul(v, m)) == std::vector<double>{23, 34});
  CHECK(matmul(v, v).dim() == 0);
  CHECK(matmul(v, v).item() == 61.0);
  CHECK(dot(v, v).item() == 61.0);
  CHECK(vec(mm(m, m)) == std::vector<double>{7, 10, 15, 22});
  CHECK(vec(outer(v, v)) == std::vector<double>{25, 30, 30, 36});
  CHECK(vec(tensordot(m, m, 1)) == std::vector<double>{7, 10, 15, 22});
  CHECK(tensordot(m, m).item() == 30.0);
  const auto i = from_vector<std::int64_t>({1, 2, 3, 4}, {2, 2});
  CHECK(vec(matmul(i, i)) == std::vector<std::int64_t>{7, 10, 15, 22});
}
