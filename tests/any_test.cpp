// SPDX-License-Identifier: MIT
// AnyTensor, the run-time dtype tensor: PyTorch's result_type in its three priority groups,
// can_cast and in-place casting, element-wise results with 0-dim operands and wrapped numbers
// (golden data from torch 1.13: tests/golden/result_type.txt, tools/make_result_type_golden.py),
// sharing with Tensor<T>, autograd, files, and a differential test against Tensor<T>.
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include "golden.hpp"
import strata;
namespace st = strata;

namespace {
st::dtype parse_dtype(const std::string& s) {
  if (s == "complex32") return st::dtype::complex64;  // PyTorch's ComplexHalf: strata has none
  for (int i = 0; i < st::num_dtypes; ++i)
    if (st::dtype_name(static_cast<st::dtype>(i)) == s) return static_cast<st::dtype>(i);
  FAIL("unknown dtype " << s);
  return st::dtype::bool_;
}
// A wrapped Python number of the golden data: True, 2, 2.5, 1j, 300, -1, 1+1j, ...
st::Scalar parse_number(const std::string& s) {
  if (s == "True") return true;
  if (s == "False") return false;
  if (s.back() == 'j') {
    const std::string body = s.substr(0, s.size() - 1);
    const auto split = body.find_first_of("+-", 1);
    if (split == std::string::npos) return std::complex<double>(0.0, body.empty() ? 1.0 : std::stod(body));
    const std::string im = body.substr(split);
    return std::complex<double>(std::stod(body.substr(0, split)),
                                im == "+" ? 1.0 : im == "-" ? -1.0 : std::stod(im));
  }
  if (s.find_first_of(".e") != std::string::npos || s == "inf" || s == "nan") return std::stod(s);
  return static_cast<std::int64_t>(std::stoll(s));
}
// An operand: t = a tensor of the given elements (zeros of shape [2] when none are given),
// z = a 0-dim tensor.
st::AnyTensor tensor_operand(const std::string& kind, st::dtype d, const std::string& values = "") {
  if (values.empty()) return kind == "t" ? st::zeros({2}, d) : st::zeros({}, d);
  const auto parts = golden::split(values, ',');
  std::vector<st::Scalar> numbers;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // a complex literal "1+1j" was split at its comma-free form; rejoin "re,im" pieces never occur
    numbers.push_back(parse_number(parts[i]));
  }
  if (kind == "z") return st::scalar_tensor(numbers.at(0), d);
  st::AnyTensor t = st::empty({static_cast<std::int64_t>(numbers.size())}, d);
  for (std::size_t i = 0; i < numbers.size(); ++i) t.select(0, static_cast<std::int64_t>(i)).fill_(numbers[i]);
  return t;
}

// The ops of the `ew` lines on any mix of tensors and numbers.
template <class A, class B>
st::AnyTensor apply(const std::string& op, const A& a, const B& b) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "maximum") return st::maximum(a, b);
  if (op == "eq") return a == b;
  if (op == "lt") return a < b;
  if (op == "pow") return st::pow(a, b);
  FAIL("unknown op " << op);
  return {};
}
}  // namespace

TEST_CASE("result_type follows PyTorch's three priority groups for every dtype pair", "[any][promotion]") {
  int pairs = 0, triples = 0;
  for (const auto& line : golden::lines("result_type.txt")) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    INFO(line);
    if (kind == "rt") {
      std::string ka, a, kb, b, r;
      in >> ka >> a >> kb >> b >> r;
      const st::dtype want = parse_dtype(r);
      if (ka == "w") CHECK(st::result_type(parse_number(a == "bool" ? "True" : a == "int" ? "2" : a == "float" ? "2.5" : "1j"),
                                           tensor_operand(kb, parse_dtype(b))) == want);
      else if (kb == "w")
        CHECK(st::result_type(tensor_operand(ka, parse_dtype(a)),
                              parse_number(b == "bool" ? "True" : b == "int" ? "2" : b == "float" ? "2.5" : "1j")) == want);
      else CHECK(st::result_type(tensor_operand(ka, parse_dtype(a)), tensor_operand(kb, parse_dtype(b))) == want);
      ++pairs;
    } else if (kind == "rt3") {
      std::string ka, a, kb, b, kc, c, r;
      in >> ka >> a >> kb >> b >> kc >> c >> r;
      const std::vector<st::AnyTensor> ops = {tensor_operand(ka, parse_dtype(a)), tensor_operand(kb, parse_dtype(b)),
                                              tensor_operand(kc, parse_dtype(c))};
      CHECK(st::result_type(ops) == parse_dtype(r));
      ++triples;
    } else if (kind == "cast") {
      std::string from, to;
      int ok = 0;
      in >> from >> to >> ok;
      CHECK(st::can_cast(parse_dtype(from), parse_dtype(to)) == (ok == 1));
    }
  }
  CHECK(pairs == 4 * 144 + 2 * 2 * 12 * 4);
  CHECK(triples == 1500);
}

TEST_CASE("the promotion cases of the issue: 0-dim operands keep the dimensioned dtype", "[any][promotion]") {
  // torch: float32[3] * 0-dim float64 is float32; int32[3] + 0-dim int64 is int32;
  // half[3] * 0-dim float is half; int32[3] + 0-dim float64 is float64 (the category rises).
  const st::AnyTensor f = st::from_vector<float>({1, 2, 3});
  const st::AnyTensor i = st::from_vector<std::int32_t>({1, 2, 3});
  const st::AnyTensor h = st::from_vector<st::half>({1, 2, 3});
  CHECK((f * st::scalar_tensor<double>(2.0)).dtype() == st::dtype::float32);
  CHECK((i + st::scalar_tensor<std::int64_t>(2)).dtype() == st::dtype::int32);
  CHECK((h * st::scalar_tensor<float>(2.0f)).dtype() == st::dtype::float16);
  CHECK((i + st::scalar_tensor<double>(0.5)).dtype() == st::dtype::float64);
  CHECK((i + 0.5).dtype() == st::dtype::float32);  // a wrapped float is the default dtype
  CHECK((st::AnyTensor(st::from_vector<bool>({true})) + 1).dtype() == st::dtype::int64);
  const auto v = (i + st::scalar_tensor<double>(0.5)).to_vector<double>();
  CHECK(v == std::vector<double>{1.5, 2.5, 3.5});
}

TEST_CASE("in-place operations check can_cast as PyTorch's add_", "[any][promotion]") {
  int cases = 0;
  for (const auto& line : golden::lines("result_type.txt")) {
    if (line.rfind("inplace ", 0) != 0) continue;
    std::istringstream in(line);
    std::string kind, a, kb, b, r;
    in >> kind >> a >> kb >> b >> r;
    INFO(line);
    st::AnyTensor x = st::ones({2}, parse_dtype(a));
    const st::AnyTensor y = kb == "t" ? st::ones({2}, parse_dtype(b)) : st::ones({}, parse_dtype(b));
    if (r == "error") {
      CHECK_THROWS_AS(x += y, st::dtype_error);
    } else {
      x += y;
      CHECK(x.dtype() == parse_dtype(r));
      const double two = x.dtype() == st::dtype::bool_ ? 1 : 2;  // True + True is True
      CHECK(x.to_vector<double>() == std::vector<double>{two, two});
    }
    ++cases;
  }
  CHECK(cases == 288);
  st::AnyTensor n = st::from_vector<std::int64_t>({1, 2});
  CHECK_THROWS_AS(n /= 2, st::dtype_error);  // true division gives float, as torch's div_
  n *= 3;
  CHECK(n.to_vector<std::int64_t>() == std::vector<std::int64_t>{3, 6});
}

TEST_CASE("element-wise results with 0-dim operands and wrapped numbers match torch", "[any][promotion]") {
  int cases = 0;
  for (const auto& line : golden::lines("result_type.txt")) {
    if (line.rfind("ew ", 0) != 0) continue;
    std::istringstream in(line);
    std::string kind, op, ka, a, va, kb, b, vb, r;
    in >> kind >> op >> ka >> a >> va >> kb >> b >> vb >> r;
    INFO(line);
    ++cases;
    auto run = [&] {
      if (ka == "w") return apply(op, parse_number(va), tensor_operand(kb, parse_dtype(b), vb));
      if (kb == "w") return apply(op, tensor_operand(ka, parse_dtype(a), va), parse_number(vb));
      return apply(op, tensor_operand(ka, parse_dtype(a), va), tensor_operand(kb, parse_dtype(b), vb));
    };
    if (r == "error") {
      CHECK_THROWS_AS(run(), st::error);
      continue;
    }
    const st::AnyTensor out = run();
    CHECK(out.dtype() == parse_dtype(r));
    std::vector<std::string> want;
    for (std::string tok; in >> tok;) want.push_back(tok);
    const st::AnyTensor flat = out.reshape({-1});
    REQUIRE(flat.numel() == static_cast<std::int64_t>(want.size()));
    for (std::size_t k = 0; k < want.size(); ++k) {
      const st::Scalar got = flat.select(0, static_cast<std::int64_t>(k)).item();
      if (out.is_complex()) {
        const auto parts = golden::split(want[k], ',');
        const auto c = got.to<std::complex<double>>();
        CHECK(c.real() == std::stod(parts[0]));
        CHECK(c.imag() == std::stod(parts[1]));
      } else {
        CHECK(got.to<double>() == std::stod(want[k]));
      }
    }
  }
  CHECK(cases > 200);
}

TEST_CASE("AnyTensor shares storage and autograd with Tensor<T> both ways", "[any]") {
  st::Tensor<float> x = st::arange<float>(6).view({2, 3});
  const st::AnyTensor h = x;  // implicit, no copy
  CHECK(h.dtype() == st::dtype::float32);
  CHECK(h.sizes() == st::int_list{2, 3});
  CHECK(h.data_ptr() == x.data_ptr());
  const st::Tensor<float> back = h.as<float>();
  back.select(0, 1).fill_(7.0f);
  CHECK(x.to_vector() == std::vector<float>{0, 1, 2, 7, 7, 7});
  CHECK_THROWS_AS(h.as<double>(), st::dtype_error);
  CHECK(h.to<double>().to_vector() == std::vector<double>{0, 1, 2, 7, 7, 7});
  CHECK(h.t().strides() == st::int_list{1, 3});
  CHECK(h.t().is_alias_of(h));

  // The recorded graph is the typed one: gradients reach the Tensor<float> leaf.
  st::Tensor<float> w = st::from_vector<float>({1, 2, 3}).requires_grad_();
  const st::AnyTensor hw = w;
  CHECK(hw.requires_grad());
  const st::AnyTensor loss = st::sum(hw * hw * st::scalar_tensor<double>(0.5));  // float32 (0-dim double)
  CHECK(loss.dtype() == st::dtype::float32);
  loss.backward();
  CHECK(w.grad().to_vector() == std::vector<float>{1, 2, 3});
  CHECK(hw.grad().to_vector<float>() == std::vector<float>{1, 2, 3});

  st::AnyTensor leaf = st::ones({2}, st::dtype::float64);
  leaf.requires_grad_();
  st::exp(leaf).sum().backward();
  CHECK(leaf.grad().dtype() == st::dtype::float64);
  CHECK(leaf.grad().to_vector<double>()[0] == Approx(std::exp(1.0)));
}

TEST_CASE("AnyTensor mixes with Tensor<T> and expressions by the same promotion", "[any]") {
  const st::Tensor<std::int32_t> i = st::from_vector<std::int32_t>({1, 2, 3});
  const st::Tensor<float> f = st::from_vector<float>({0.5f, 0.5f, 0.5f});
  const st::AnyTensor h = st::scalar_tensor<double>(2.0);
  const st::AnyTensor r1 = i + h;        // int32 tensor, 0-dim float64: float64
  CHECK(r1.dtype() == st::dtype::float64);
  const st::AnyTensor r2 = (f * 2) + h;  // an expression (float32), 0-dim float64: float32
  CHECK(r2.dtype() == st::dtype::float32);
  CHECK(r2.to_vector<float>() == std::vector<float>{3, 3, 3});
  const st::AnyTensor r3 = st::exp(st::AnyTensor(i)).sum({0});
  CHECK(r3.dtype() == st::dtype::float32);
  // Methods, as on Tensor<T>.
  const st::AnyTensor m = st::AnyTensor(f).add(i).mean();
  CHECK(m.item<double>() == 2.5);
  CHECK(st::AnyTensor(i).max().item<std::int64_t>() == 3);
  const auto [values, indices] = st::AnyTensor(i).sort(0, true);
  CHECK(values.to_vector<int>() == std::vector<int>{3, 2, 1});
  CHECK(indices.to_vector() == std::vector<std::int64_t>{2, 1, 0});
  CHECK(st::to_string(st::AnyTensor(i)) == "tensor([1, 2, 3], dtype=torch.int32)");
  CHECK_THROWS_AS(st::AnyTensor(st::from_vector<std::complex<float>>({{1, 1}})) < 1, st::dtype_error);
  CHECK(st::cat({st::AnyTensor(i), st::AnyTensor(f)}).dtype() == st::dtype::float32);
  // Matrix products take one dtype, as torch's: convert first.
  CHECK_THROWS_AS(st::matmul(st::AnyTensor(f.view({1, 3})), st::AnyTensor(i.view({3, 1}))), st::dtype_error);
  CHECK(st::matmul(st::AnyTensor(f.view({1, 3})), st::AnyTensor(i.view({3, 1})).to(st::dtype::float32)).item<double>() ==
        3.0);
  CHECK(st::where(st::AnyTensor(i) > 1, st::AnyTensor(i), 0.5).to_vector<float>() == std::vector<float>{0.5, 2, 3});
}

TEST_CASE("load_npy without a type returns the file's dtype", "[any][io]") {
  const std::vector<std::pair<std::string, st::dtype>> files = {
      {"bool.npy", st::dtype::bool_},      {"c128_big.npy", st::dtype::complex128}, {"c64.npy", st::dtype::complex64},
      {"f16.npy", st::dtype::float16},     {"f32_c.npy", st::dtype::float32},       {"f32_fortran.npy", st::dtype::float32},
      {"f64_big.npy", st::dtype::float64}, {"i16_1d.npy", st::dtype::int16},        {"i32_big.npy", st::dtype::int32},
      {"i64_scalar.npy", st::dtype::int64}, {"u8_3d.npy", st::dtype::uint8},        {"empty_0x3.npy", st::dtype::float32}};
  for (const auto& [name, d] : files) {
    INFO(name);
    const st::AnyTensor t = st::load_npy(golden::path("npy/" + name));
    CHECK(t.dtype() == d);
    CHECK(t.sizes() == st::int_list(st::npy_header(golden::path("npy/" + name)).sizes));
    if (d == st::dtype::float32) {
      const auto typed = st::load_npy<float>(golden::path("npy/" + name));
      CHECK(t.to_vector<float>() == typed.to_vector());
    }
  }
  CHECK_THROWS_AS(st::load_npy(golden::path("npy/truncated.npy")), st::io_error);
  const auto tmp = std::filesystem::temp_directory_path() / "strata_any_roundtrip.npy";
  st::save_npy(tmp.string(), st::AnyTensor(st::arange<std::int16_t>(5)));
  const st::AnyTensor back = st::load_npy(tmp.string());
  CHECK(back.dtype() == st::dtype::int16);
  CHECK(back.to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4});
  std::filesystem::remove(tmp);
}

namespace {
// A random view of n x m elements of T: contiguous, transposed, or every other column.
template <class T>
st::Tensor<T> random_operand(std::mt19937& rng, std::int64_t n, std::int64_t m, bool row) {
  std::uniform_int_distribution<int> value(-4, 4), layout(0, 2);
  st::Tensor<T> base;
  switch (layout(rng)) {
    case 0: base = st::empty<T>({n, 2 * m}).narrow(1, 0, m); break;
    case 1: base = st::empty<T>({m, n}).t(); break;
    default: base = st::empty<T>({n, m}); break;
  }
  if (row) base = base.narrow(0, 0, 1);
  for (std::int64_t i = 0; i < base.size(0); ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      int v = value(rng);
      if constexpr (std::is_same_v<T, bool>) base.at({i, j}) = v > 0;
      else if constexpr (std::is_unsigned_v<T>) base.at({i, j}) = static_cast<T>(v + 4);
      else base.at({i, j}) = static_cast<T>(v);
    }
  return base;
}
// Bits of two results agree (same dtype, sizes and values; NaN equal to NaN).
void check_same(const st::AnyTensor& got, const st::AnyTensor& want) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.sizes() == want.sizes());
  const auto g = got.to_vector<std::complex<double>>(), w = want.to_vector<std::complex<double>>();
  for (std::size_t k = 0; k < g.size(); ++k) {
    const bool both_nan = std::isnan(g[k].real()) && std::isnan(w[k].real());
    if (!both_nan) CHECK(g[k] == w[k]);
  }
}
template <class A, class B>
void differential(std::mt19937& rng, int trials) {
  std::uniform_int_distribution<int> pick(0, 9), size(1, 9);
  for (int trial = 0; trial < trials; ++trial) {
    const std::int64_t n = size(rng), m = size(rng);
    const st::Tensor<A> a = random_operand<A>(rng, n, m, false);
    const st::Tensor<B> b = random_operand<B>(rng, n, m, pick(rng) < 3);  // sometimes one row, broadcast
    const st::AnyTensor ha = a, hb = b;
    const int op = pick(rng);
    INFO("op " << op << " " << st::dtype_v<A> << " " << st::dtype_v<B> << " " << n << "x" << m);
    switch (op) {
      case 0: check_same(ha + hb, st::Tensor(a + b)); break;
      case 1: check_same(ha * hb + ha, st::Tensor(a * b + a)); break;
      case 2: check_same(ha / (hb * hb + 1), st::Tensor(a / (b * b + 1))); break;
      case 3: check_same(st::maximum(ha, hb) - 1, st::Tensor(st::maximum(a, b) - 1)); break;
      case 4: check_same(ha < hb, st::Tensor(a < b)); break;
      case 5: check_same(st::exp(ha) * 2.5, st::Tensor(st::exp(a) * 2.5)); break;
      case 6: check_same(st::sum(ha * hb, {1}), st::Tensor(st::sum(a * b, {1}))); break;
      case 7: check_same(st::where(ha > 0, ha, hb), st::Tensor(st::where(a > 0, a, b))); break;
      case 8: check_same(st::cumsum(ha + hb, 0), st::AnyTensor(st::cumsum(st::Tensor(a + b), 0))); break;
      default: check_same(st::amax(ha - hb * 3, {0}, true), st::Tensor(st::amax(a - b * 3, {0}, true))); break;
    }
  }
}
}  // namespace

TEST_CASE("random expressions through AnyTensor equal Tensor<T>'s in values and dtype", "[any][diff]") {
  std::mt19937 rng(35);
  differential<float, double>(rng, 60);
  differential<std::int32_t, float>(rng, 60);
  differential<std::uint8_t, std::int64_t>(rng, 60);
  differential<std::int16_t, std::int16_t>(rng, 60);
  differential<double, std::int8_t>(rng, 60);
}

TEST_CASE("safetensors files of mixed dtypes read and write through AnyTensor", "[any][io]") {
  const std::string path = golden::path("safetensors/mixed.safetensors");
  const st::SafetensorsFile f(path);
  CHECK(st::get_tensor(f, "bf16").dtype() == st::dtype::bfloat16);
  CHECK(st::get_tensor(f, "i32").to_vector<int>() == std::vector<int>{7, -8, 300000});
  CHECK(st::get_tensor(f, "flags").dtype() == st::dtype::bool_);
  CHECK(st::get_tensor(f, "f64_scalar").item<double>() == -2.5);
  CHECK(st::get_tensor(f, "f32").data_ptr() == f.get<float>("f32").data_ptr());  // a view of the mapping
  CHECK_THROWS_AS(st::get_tensor(f, "u16"), st::dtype_error);                  // a dtype strata lacks
  CHECK_THROWS_AS(st::load_safetensors(path), st::dtype_error);

  const auto tmp = (std::filesystem::temp_directory_path() / "strata_any_mixed.safetensors").string();
  st::save_safetensors(tmp, {{"a", st::AnyTensor(st::arange<std::int16_t>(3))},
                             {"b", st::ones({2, 2}, st::dtype::bfloat16)},
                             {"c", st::AnyTensor(st::from_vector<double>({0.5}))}});
  const auto back = st::load_safetensors(tmp);
  REQUIRE(back.size() == 3);
  for (const auto& [name, t] : back) {
    INFO(name);
    if (name == "a") CHECK((t.dtype() == st::dtype::int16 && t.to_vector<int>() == std::vector<int>{0, 1, 2}));
    if (name == "b") CHECK((t.dtype() == st::dtype::bfloat16 && t.sum().item<double>() == 4.0));
    if (name == "c") CHECK((t.dtype() == st::dtype::float64 && t.item<double>() == 0.5));
  }
  std::filesystem::remove(tmp);
}

TEST_CASE("DLPack through AnyTensor keeps the dtype and shares the elements", "[any][dlpack]") {
  const st::AnyTensor x = st::arange<std::int16_t>(6).view({2, 3}).t();
  auto* m = st::to_dlpack(x);
  const st::AnyTensor y = st::from_dlpack(m);  // takes m: its deleter runs when y's elements go
  CHECK(y.dtype() == st::dtype::int16);
  CHECK(y.data_ptr() == x.data_ptr());
  CHECK(y.strides() == st::int_list{1, 3});
  CHECK(y.to_vector<int>() == std::vector<int>{0, 3, 1, 4, 2, 5});
  CHECK_THROWS_AS(st::to_dlpack(st::AnyTensor(st::zeros<st::float128>({1}))), st::dtype_error);
}

TEST_CASE("the typed engine takes erf and erfc of bool tensors (float32, as torch)", "[any][ops]") {
  // torch.erf(torch.tensor([True, False])) == tensor([0.8427, 0.0000])
  const st::Tensor<float> e = st::erf(st::from_vector<bool>({true, false}));
  CHECK(e.to_vector()[0] == Approx(0.8427007929497149));
  CHECK(e.to_vector()[1] == 0.0f);
  CHECK(st::AnyTensor(st::from_vector<bool>({true})).erfc().dtype() == st::dtype::float32);
}

TEST_CASE("a PyTorch script over a file of unknown dtype ports line by line onto AnyTensor", "[any][port]") {
  // The Python (torch 1.13) it ports, with its printed values:
  //   np.save("data.npy", (np.arange(24, dtype=np.int16).reshape(4, 6) * 7) % 11 - 3)
  //   x = torch.from_numpy(np.load("data.npy"))
  //   scale = torch.tensor(0.5, dtype=torch.float64)
  //   y = (x * scale + 1).clamp(min=0)                    # float64: the 0-dim double raises the category
  //   m = y.mean(dim=1, keepdim=True)
  //   z = torch.where(y > m, y - m, torch.zeros_like(y))  # z.sum() == 15.5
  //   u = z * torch.ones(6, dtype=torch.float32)         # float64
  //   v = (x.float() * scale).dtype                       # float32: a 0-dim double does not widen
  //   idx = z.argmax(dim=1)                               # [3, 0, 2, 2]
  //   top = z.topk(2, dim=1).values
  //   out = torch.cat([z, top], dim=1).to(torch.float32)  # [4, 8], sum 29.5
  //   k = (x > 2).sum(1)                                  # int64 [3, 2, 4, 2]
  //   g = x.to(torch.float32).requires_grad_()
  //   loss = (g * scale).pow(2).mean(); loss.backward()   # g.grad[0] == [-0.0625, 0.08333334, 0, ...]
  //   np.save("out.npy", out.numpy())
  const auto path = (std::filesystem::temp_directory_path() / "strata_any_port.npy").string();
  st::save_npy(path, (st::arange<std::int16_t>(24).view({4, 6}) * 7) % 11 - 3);
  auto x = st::load_npy(path);
  auto scale = st::scalar_tensor(0.5, st::dtype::float64);
  auto y = (x * scale + 1).clamp_min(0);
  CHECK(y.dtype() == st::dtype::float64);
  CHECK(y[0].to_vector<double>() == std::vector<double>{0.0, 3.0, 1.0, 4.5, 2.5, 0.5});
  auto m = y.mean(1, true);
  auto z = st::where(y > m, y - m, st::zeros_like(y));
  CHECK(z.dtype() == st::dtype::float64);
  CHECK(z.sum().item<double>() == 15.5);
  auto u = z * st::ones({6}, st::dtype::float32);
  CHECK(u.dtype() == st::dtype::float64);
  auto v = (x.to<float>() * scale).dtype();
  CHECK(v == st::dtype::float32);
  auto idx = z.argmax(1);
  CHECK(idx.to_vector() == std::vector<std::int64_t>{3, 0, 2, 2});
  auto top = z.topk(2, 1).values;
  auto out = st::cat({z, top}, 1).to(st::dtype::float32);
  CHECK(out.sizes() == st::int_list{4, 8});
  CHECK(out.sum().item<double>() == 29.5);
  auto k = (x > 2).sum(1);
  CHECK(k.dtype() == st::dtype::int64);
  CHECK(k.to_vector<std::int64_t>() == std::vector<std::int64_t>{3, 2, 4, 2});
  auto g = x.to(st::dtype::float32).requires_grad_();
  auto loss = (g * scale).pow(2).mean();
  loss.backward();
  const auto g0 = g.grad()[0].to_vector<float>();
  const std::vector<double> want = {-0.0625, 0.0833333358168602, 0.0, 0.1458333432674408, 0.0625, -0.02083333395421505};
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(g0[i] == Approx(want[i]).epsilon(1e-6));
  st::save_npy(path, out);
  CHECK(st::npy_header(path).dtype == st::dtype::float32);
  std::filesystem::remove(path);
}

TEST_CASE(".npz archives of mixed dtypes read and write through AnyTensor", "[any][io]") {
  for (const std::string name : {"stored.npz", "deflated.npz"}) {
    INFO(name);
    const auto arrays = st::load_npz(golden::path("npy/" + name));
    REQUIRE(arrays.size() == 8);
    CHECK(arrays[0].first == "f32");
    CHECK(arrays[0].second.dtype() == st::dtype::float32);
    CHECK(arrays[1].second.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, -2, 3});
    CHECK(arrays[4].second.dtype() == st::dtype::int16);
    CHECK(arrays[5].second.item<double>() == 2.5);
    CHECK(arrays[7].second.dtype() == st::dtype::uint8);
  }
  const auto tmp = (std::filesystem::temp_directory_path() / "strata_any_mixed.npz").string();
  st::save_npz(tmp, {{"a", st::AnyTensor(st::arange<std::int32_t>(4))}, {"b", st::ones({3}, st::dtype::float16)}},
               /*compressed=*/true);
  const auto back = st::load_npz(tmp);
  REQUIRE(back.size() == 2);
  CHECK(back[0].second.dtype() == st::dtype::int32);
  CHECK(back[1].second.dtype() == st::dtype::float16);
  CHECK(back[1].second.sum().item<double>() == 3.0);
  std::filesystem::remove(tmp);
}

TEST_CASE("AnyTensor indexes as Tensor<T>::index does", "[any][indexing]") {
  const st::AnyTensor x = st::arange<std::int32_t>(24).view({2, 3, 4});
  const st::AnyTensor row = x.index({1, st::slice{}, 2});
  CHECK(row.dtype() == st::dtype::int32);
  CHECK(row.is_alias_of(x));
  CHECK(row.to_vector<int>() == std::vector<int>{14, 18, 22});
  CHECK(x.index({st::none, 0, st::slice{1, std::nullopt, 1}}).sizes() == st::int_list{1, 2, 4});
  CHECK(x.index({(x > 20).as<bool>()}).to_vector<int>() == std::vector<int>{21, 22, 23});
  const st::AnyTensor y = st::zeros({3}, st::dtype::float64);
  y.index_put_({st::from_vector<std::int64_t>({0, 2})}, st::AnyTensor(st::from_vector<float>({1.5f, 2.5f})));
  CHECK(y.to_vector<double>() == std::vector<double>{1.5, 0.0, 2.5});
}

TEST_CASE("AnyTensor clamp, bool subtraction and all/any of uint8 follow torch", "[any][ops]") {
  // torch: x = tensor([0., 0.5, 1.], requires_grad=True); x.clamp(0, 1).sum().backward()
  //   x.grad == [1., 1., 1.] (the gradient passes on the closed interval)
  st::AnyTensor x = st::from_vector<float>({0.0f, 0.5f, 1.0f, 2.0f});
  x.requires_grad_();
  st::clamp(x, 0, 1).sum().backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 1, 1, 0});
  const st::AnyTensor i8 = st::from_vector<std::int8_t>({-100, 5, 100});
  CHECK(st::clamp_min(i8, 0).to_vector<int>() == std::vector<int>{0, 5, 100});
  CHECK(st::clamp_max(i8, 10).to_vector<int>() == std::vector<int>{-100, 5, 10});
  CHECK(st::clamp(i8, 0.5, std::nullopt).dtype() == st::dtype::float32);  // a float bound promotes
  // torch refuses a bool operand of a subtraction on either side, in place too
  st::AnyTensor n = st::from_vector<std::int64_t>({1, 2});
  CHECK_THROWS_AS(true - n, st::dtype_error);
  CHECK_THROWS_AS(n -= true, st::dtype_error);
  CHECK_THROWS_AS(n - st::AnyTensor(st::from_vector<bool>({true, false})), st::dtype_error);
  // torch.all(uint8 tensor) is uint8
  const st::AnyTensor u8 = st::from_vector<std::uint8_t>({1, 2, 0});
  CHECK(st::all(u8).dtype() == st::dtype::uint8);
  CHECK(st::any(u8).item<int>() == 1);
  CHECK(st::all(u8).item<int>() == 0);
}

TEST_CASE("AnyTensor softmax of half is computed in float32 and rounded once", "[any][ops]") {
  const st::AnyTensor h = st::from_vector<st::half>({1.0f, 2.0f, 3.0f});
  const st::AnyTensor s = st::softmax(h, 0);
  CHECK(s.dtype() == st::dtype::float16);
  const auto want = st::softmax(st::from_vector<float>({1.0f, 2.0f, 3.0f}), 0).eval().to<st::half>().to_vector();
  const auto got = s.to_vector<st::half>();
  for (std::size_t i = 0; i < 3; ++i) CHECK(got[i].bits == want[i].bits);
  // float128 runs the typed softmax (its composition, compiled at every optimisation level).
  const st::AnyTensor q = st::softmax(st::AnyTensor(st::zeros<st::float128>({2})), 0);
  CHECK(q.dtype() == st::dtype::float128);
  CHECK(q.to_vector<double>() == std::vector<double>{0.5, 0.5});
}
