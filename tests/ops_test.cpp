// SPDX-License-Identifier: MIT
// The everyday element-wise functions and statistics against PyTorch 1.13
// (tests/golden/ops.txt, made by tools/make_ops_golden.py): values, indices and gradients,
// each case run on contiguous and on non-contiguous inputs; then hand examples, the shifts'
// edge cases, var's accuracy on data with a large mean, and the arg-reductions against a
// naive reference on strided inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
import strata;

namespace st = strata;

namespace {
using shape_t = std::vector<std::int64_t>;

std::vector<double> numbers(std::istringstream& in) {
  std::vector<double> v;
  for (std::string w; in >> w;) v.push_back(std::stod(w));
  return v;
}

struct operand_data {
  shape_t sizes;
  std::vector<double> values;
};
struct golden_case {
  std::string op, dtype;
  std::map<std::string, std::string> params;
  std::vector<operand_data> in;
  operand_data out, idx;
  bool has_idx = false;
  std::vector<double> w;
  std::vector<std::vector<double>> grads;
};

template <class T> inline constexpr bool is_complex = false;
template <class T> inline constexpr bool is_complex<std::complex<T>> = true;

/// Elements as doubles, complex ones as (real, imaginary) pairs (the golden file's layout).
template <class T>
std::vector<double> flat(const st::Tensor<T>& t) {
  std::vector<double> out;
  for (const T& v : t.to_vector()) {
    if constexpr (is_complex<T>) {
      out.push_back(static_cast<double>(v.real()));
      out.push_back(static_cast<double>(v.imag()));
    } else {
      out.push_back(static_cast<double>(v));
    }
  }
  return out;
}

template <class T>
st::Tensor<T> make(const operand_data& d) {
  std::vector<T> v;
  if constexpr (is_complex<T>) {
    for (std::size_t i = 0; i + 1 < d.values.size(); i += 2)
      v.push_back(T(static_cast<typename T::value_type>(d.values[i]), static_cast<typename T::value_type>(d.values[i + 1])));
  } else {
    for (const double x : d.values) {
      if constexpr (std::is_same_v<T, st::half>) v.push_back(T(static_cast<float>(x)));
      else v.push_back(static_cast<T>(x));
    }
  }
  return st::from_vector<T>(v, d.sizes);
}

/// The same values in a non-contiguous layout (dims reversed in memory; 1-D: every other element).
template <class T>
st::Tensor<T> strided(const st::Tensor<T>& t) {
  if (t.dim() == 0) return t;
  if (t.dim() == 1) {
    st::Tensor<T> wide = st::zeros<T>({2 * t.size(0)});
    st::Tensor<T> view = wide.slice(0, 0, 2 * t.size(0), 2);
    view.copy_(t);
    return view;
  }
  std::vector<std::int64_t> rev;
  for (std::int64_t d = t.dim() - 1; d >= 0; --d) rev.push_back(d);
  return t.permute(rev).contiguous().permute(rev);
}

std::vector<std::int64_t> dims_of(const golden_case& c) {
  const std::string& d = c.params.at("dim");
  if (d == "all") return {};
  return {std::stoll(d)};
}
bool keepdim_of(const golden_case& c) { return c.params.count("keepdim") && c.params.at("keepdim") == "1"; }

template <class T> inline constexpr bool is_float = std::is_floating_point_v<T> || std::is_same_v<T, st::half>;
template <class T> inline constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// Runs the case's operation on in, handing each result to sink(values) and the index result
/// (if any) to sink_idx; false when the op is not known for T.
template <class T, class Sink, class IdxSink>
bool dispatch(const golden_case& c, const std::vector<st::Tensor<T>>& in, Sink&& sink, IdxSink&& idx_sink) {
  const st::Tensor<T>& x = in[0];
  const std::string& op = c.op;
  if constexpr (!std::is_same_v<T, bool>) {
    if (op == "isnan") return sink(st::Tensor<bool>(st::isnan(x))), true;
    if (op == "isinf") return sink(st::Tensor<bool>(st::isinf(x))), true;
    if (op == "isfinite") return sink(st::Tensor<bool>(st::isfinite(x))), true;
    if (op == "square") return sink(st::eval(st::square(x))), true;
  }
  if constexpr (!is_complex<T> && !std::is_same_v<T, bool>) {
    if (op == "isposinf") return sink(st::Tensor<bool>(st::isposinf(x))), true;
    if (op == "isneginf") return sink(st::Tensor<bool>(st::isneginf(x))), true;
    if (op == "nan_to_num") return sink(st::eval(st::nan_to_num(x))), true;
    if (op == "log2") return sink(st::eval(st::log2(x))), true;
    if (op == "log10") return sink(st::eval(st::log10(x))), true;
    if (op == "exp2") return sink(st::eval(st::exp2(x))), true;
    if (op == "reciprocal") return sink(st::eval(st::reciprocal(x))), true;
    if (op == "atan2") return sink(st::eval(st::atan2(x, in[1]))), true;
    if (op == "copysign") return sink(st::eval(st::copysign(x, in[1]))), true;
  }
  if constexpr (is_float<T>) {
    if (op == "nan_to_num_values") return sink(st::eval(st::nan_to_num(x, 1.5, 100.0, -7.0))), true;
    if (op == "erf") return sink(st::eval(st::erf(x))), true;
    if (op == "erfc") return sink(st::eval(st::erfc(x))), true;
    if (op == "softplus") return sink(st::eval(st::softplus(x))), true;
    if (op == "softplus_beta") return sink(st::eval(st::softplus(x, 2.0, 3.0))), true;
    if (op == "gelu") return sink(st::eval(st::gelu(x))), true;
    if (op == "gelu_tanh") return sink(st::eval(st::gelu(x, "tanh"))), true;
    if (op == "silu") return sink(st::eval(st::silu(x))), true;
    if (op == "logit") return sink(st::eval(st::logit(x))), true;
    if (op == "logit_eps") return sink(st::eval(st::logit(x, 0.2))), true;
    if (op == "frac") return sink(st::eval(st::frac(x))), true;
    if (op == "trunc") return sink(st::eval(st::trunc(x))), true;
    if (op == "hypot") return sink(st::eval(st::hypot(x, in[1]))), true;
    if (op == "lerp_tensor") return sink(st::eval(st::lerp(x, in[1], in[2]))), true;
    if (op == "lerp_scalar") return sink(st::eval(st::lerp(x, in[1], std::stod(c.params.at("weight"))))), true;
    if (op == "addcmul") return sink(st::eval(st::addcmul(x, in[1], in[2], 0.5))), true;
    if (op == "addcdiv") return sink(st::eval(st::addcdiv(x, in[1], in[2], 0.5))), true;
  }
  if constexpr (is_int<T>) {
    if (op == "addcmul_int") return sink(st::eval(st::addcmul(x, in[1], in[2], 2))), true;
    if (op == "lshift") return sink(st::eval(x << in[1])), true;
    if (op == "rshift") return sink(st::eval(x >> in[1])), true;
  }
  if (op == "count_nonzero") return sink(st::eval(st::count_nonzero(x, dims_of(c)))), true;
  if constexpr (!is_complex<T> && !std::is_same_v<T, bool>) {
    if (op == "nansum") return sink(st::eval(st::nansum(x, dims_of(c), keepdim_of(c)))), true;
    if (op == "argmax" || op == "argmin") {
      const std::vector<std::int64_t> d = dims_of(c);
      const std::optional<std::int64_t> dim = d.empty() ? std::nullopt : std::optional<std::int64_t>(d[0]);
      return sink(op == "argmax" ? st::argmax(x, dim, keepdim_of(c)) : st::argmin(x, dim, keepdim_of(c))), true;
    }
    if (op == "max_dim" || op == "min_dim") {
      const std::int64_t d = std::stoll(c.params.at("dim"));
      auto [values, indices] = op == "max_dim" ? st::max(x, d, keepdim_of(c)) : st::min(x, d, keepdim_of(c));
      idx_sink(indices);
      return sink(values), true;
    }
  }
  if constexpr (is_float<T>) {
    if (op == "nanmean") return sink(st::eval(st::nanmean(x, dims_of(c), keepdim_of(c)))), true;
  }
  if constexpr (is_float<T> || is_complex<T>) {
    const auto corr = [&] { return std::stoll(c.params.at("correction")); };
    if (op == "var") return sink(st::eval(st::var(x, dims_of(c), corr(), keepdim_of(c)))), true;
    if (op == "std") return sink(st::eval(st::std(x, dims_of(c), corr(), keepdim_of(c)))), true;
    if (op == "var_mean" || op == "std_mean") {
      auto [s, m] = op == "var_mean" ? st::var_mean(x, dims_of(c), corr(), keepdim_of(c))
                                     : st::std_mean(x, dims_of(c), corr(), keepdim_of(c));
      idx_sink(m);
      return sink(s), true;
    }
    if (op == "vector_norm") {
      const std::string o = c.params.at("ord");
      const double ord = o == "inf" ? INFINITY : o == "-inf" ? -INFINITY : std::stod(o);
      return sink(st::linalg::vector_norm(x, ord, dims_of(c), keepdim_of(c))), true;
    }
  }
  return false;
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, st::half>) return 2e-3;
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) return 3e-6;
  else return 1e-12;
}

template <class T>
void run(const golden_case& c) {
  for (const bool noncontiguous : {false, true}) {
    INFO((noncontiguous ? "strided inputs" : "contiguous inputs"));
    std::vector<st::Tensor<T>> in;
    for (const operand_data& d : c.in) in.push_back(noncontiguous ? strided(make<T>(d)) : make<T>(d));
    bool saw_idx = false;
    const bool known = dispatch<T>(
        c, in,
        [&](const auto& y) {
          using Y = typename std::remove_cvref_t<decltype(y)>::value_type;
          CHECK(y.sizes() == st::int_list(c.out.sizes));
          test::check_close(flat(y), c.out.values, tolerance<Y>());
        },
        [&](const auto& i) {
          using I = typename std::remove_cvref_t<decltype(i)>::value_type;
          saw_idx = true;
          CHECK(i.sizes() == st::int_list(c.idx.sizes));
          test::check_close(flat(i), c.idx.values, tolerance<I>());
        });
    REQUIRE(known);
    CHECK(saw_idx == c.has_idx);
    if constexpr (std::is_same_v<T, double>) {
      if (c.grads.empty()) continue;
      for (st::Tensor<double>& t : in) t.requires_grad_();
      dispatch<T>(
          c, in,
          [&](const auto& y) {
            using Y = typename std::remove_cvref_t<decltype(y)>::value_type;
            if constexpr (std::is_same_v<Y, double>) {
              if (!y.requires_grad()) {  // a piecewise-constant result (norm with ord 0): not recorded
                for (const auto& g : c.grads)
                  for (const double v : g) CHECK(v == 0);
                return;
              }
              st::sum(y * make<double>({c.out.sizes, c.w})).backward();
              for (std::size_t k = 0; k < in.size(); ++k) {
                INFO("gradient of operand " << k);
                if (in[k].has_grad()) test::check_close(flat(in[k].grad()), c.grads[k], 1e-10);
                else for (const double g : c.grads[k]) CHECK(g == 0);
              }
            }
          },
          [](const auto&) {});
    }
  }
}

std::vector<golden_case> load() {
  std::vector<golden_case> cases;
  const std::vector<std::string> lines = golden::lines("ops.txt");
  for (std::size_t i = 0; i < lines.size();) {
    golden_case c;
    std::istringstream head(lines[i++]);
    std::string word, shape;
    head >> word >> c.op >> c.dtype >> shape;
    operand_data x{golden::parse_shape(shape), {}};
    for (std::string p; head >> p;) c.params[p.substr(0, p.find('='))] = p.substr(p.find('=') + 1);
    for (; lines[i] != "end"; ++i) {
      std::istringstream l(lines[i]);
      std::string key;
      l >> key;
      const auto shaped = [&] {
        std::string s;
        l >> s;
        operand_data d{golden::parse_shape(s), {}};
        d.values = numbers(l);
        return d;
      };
      if (key == "x") { x.values = numbers(l); c.in.insert(c.in.begin(), x); }
      else if (key == "y" || key == "z") c.in.push_back(shaped());
      else if (key == "out") c.out = shaped();
      else if (key == "idx") { c.idx = shaped(); c.has_idx = true; }
      else if (key == "w") c.w = numbers(l);
      else c.grads.push_back(numbers(l));
    }
    ++i;
    cases.push_back(std::move(c));
  }
  return cases;
}
}  // namespace

TEST_CASE("element-wise functions and statistics match PyTorch, gradients too", "[ops]") {
  int count = 0;
  for (const golden_case& c : load()) {
    INFO("case " << c.op << " " << c.dtype << " " << st::to_string(st::int_list(c.in[0].sizes)));
    if (c.dtype == "float32") run<float>(c);
    else if (c.dtype == "float64") run<double>(c);
    else if (c.dtype == "int32") run<std::int32_t>(c);
    else if (c.dtype == "int64") run<std::int64_t>(c);
    else if (c.dtype == "int8") run<std::int8_t>(c);
    else if (c.dtype == "bool") run<bool>(c);
    else if (c.dtype == "float16") run<st::half>(c);
    else if (c.dtype == "complex64") run<std::complex<float>>(c);
    else FAIL("unknown dtype " << c.dtype);
    ++count;
  }
  CHECK(count > 1000);
}

TEST_CASE("shifts by bits or more, or negative, are defined: 0 to the left, the sign to the right", "[ops]") {
  const auto a = st::from_vector<std::int32_t>({5, -8, 7, 1});
  const auto b = st::from_vector<std::int32_t>({32, 40, -1, 31});
  CHECK(st::eval(a << b).to_vector() == std::vector<std::int32_t>{0, 0, 0, INT32_MIN});
  CHECK(st::eval(a >> b).to_vector() == std::vector<std::int32_t>{0, -1, 0, 0});
  const auto c = st::from_vector<std::int8_t>({-128, 64});
  CHECK(st::eval(c >> 7).to_vector() == std::vector<std::int8_t>{-1, 0});
  CHECK(st::eval(c << 1).to_vector() == std::vector<std::int8_t>{0, -128});
  const auto u = st::from_vector<std::uint8_t>({200});
  CHECK(st::eval(u >> 9).to_vector() == std::vector<std::uint8_t>{0});
}

TEST_CASE("PyTorch's documentation examples", "[ops]") {
  // torch.nan_to_num: nan -> 0, inf -> largest, -inf -> lowest; or given values
  const auto x = st::from_vector<float>({NAN, INFINITY, -INFINITY, 3.14f});
  CHECK(st::eval(st::nan_to_num(x)).to_vector() == std::vector<float>{0, 3.4028234663852886e+38f, -3.4028234663852886e+38f, 3.14f});
  CHECK(st::eval(st::nan_to_num(x, 0.0, 2.0)).to_vector() == std::vector<float>{0, 2, -3.4028234663852886e+38f, 3.14f});
  // torch.lerp(start=[1,2,3,4], end=10, 0.5) = [5.5, 6, 6.5, 7]
  const auto start = st::from_vector<float>({1, 2, 3, 4}), end = st::full<float>({4}, 10);
  CHECK(st::eval(st::lerp(start, end, 0.5)).to_vector() == std::vector<float>{5.5f, 6, 6.5f, 7});
  // torch.hypot([4.0], [3.0, 4.0, 5.0]) = [5.0, 5.6569, 6.4031]
  const auto h = st::eval(st::hypot(st::from_vector<float>({4}), st::from_vector<float>({3, 4, 5})));
  test::check_close(flat(h), {5.0, 5.656854249, 6.403124237}, 1e-6);
  // torch.count_nonzero of [[0,1,7],[0,0,0],[0,0,1]... along dim 0 = [0, 1, 2]... (docs' x)
  const auto m = st::from_vector<std::int64_t>({0, 1, 7, 0, 0, 0, 0, 0, 3}, {3, 3});
  CHECK(st::eval(st::count_nonzero(m)).item() == 3);
  CHECK(st::eval(st::count_nonzero(m, {0})).to_vector() == std::vector<std::int64_t>{0, 1, 2});
  // argmax's first index on ties; NaN counts as the largest and the smallest
  CHECK(st::argmax(st::from_vector<float>({1, 3, 3, 2})).item() == 1);
  CHECK(st::argmin(st::from_vector<float>({1, NAN, -5, NAN})).item() == 1);
  // max along a dim: (values, indices) with structured bindings
  const auto a = st::from_vector<float>({1, 5, 2, 7, 0, 7}, {2, 3});
  auto [values, indices] = st::max(a, 1);
  CHECK(values.to_vector() == std::vector<float>{5, 7});
  CHECK(indices.to_vector() == std::vector<std::int64_t>{1, 0});
  CHECK(st::eval(st::max(a)).item() == 7);
  CHECK(st::eval(st::min(a)).item() == 0);
}

TEST_CASE("errors carry PyTorch's messages", "[ops]") {
  const auto e = st::zeros<float>({0, 3});
  CHECK_THROWS_WITH(st::argmax(e), "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  CHECK_THROWS_WITH(st::max(e, 0), "max(): Expected reduction dim 0 to have non-zero size.");
  CHECK_THROWS_WITH(st::argmin(e, 0), "argmin(): Expected reduction dim 0 to have non-zero size.");
  CHECK_THROWS_WITH(st::gelu(st::ones<float>({2}), "erf"), "approximate argument must be either none or tanh.");
  CHECK_THROWS_WITH(st::linalg::vector_norm(e, INFINITY),
                    "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does "
                    "not have an identity");
  CHECK_THROWS_AS(st::max(st::ones<float>({2, 3}), 2), st::index_error);
  // A 0-dim tensor has no dim to read (before: an out-of-bounds read).
  CHECK_THROWS_WITH(st::zeros<float>({}).size(0), "Dimension specified as 0 but tensor has no dimensions");
  CHECK_THROWS_WITH(st::eval(st::zeros<float>({}) + 1).size(-1), "Dimension specified as -1 but tensor has no dimensions");
}

TEST_CASE("var is accurate on data with a large mean, along every axis", "[ops]") {
  // float data around 1e6 with unit spread: the two-pass corrected sum keeps the variance
  // to float rounding (a naive sum of squares minus the squared mean loses every digit).
  std::mt19937 gen(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::int64_t rows = 64, cols = 300;
  std::vector<float> data;
  for (std::int64_t i = 0; i < rows * cols; ++i) data.push_back(static_cast<float>(1e6 + normal(gen)));
  const auto x = st::from_vector<float>(data, {rows, cols});
  for (const std::int64_t dim : {0, 1}) {
    const st::Tensor<float> v = st::var(x, {dim});
    const std::int64_t lines = dim == 0 ? cols : rows, n = dim == 0 ? rows : cols;
    for (std::int64_t l = 0; l < lines; ++l) {
      st::float128 s = 0, s2 = 0;
      for (std::int64_t k = 0; k < n; ++k) s += st::float128(data[static_cast<std::size_t>(dim == 0 ? k * cols + l : l * cols + k)]);
      const st::float128 mean = s / n;
      for (std::int64_t k = 0; k < n; ++k) {
        const st::float128 d = st::float128(data[static_cast<std::size_t>(dim == 0 ? k * cols + l : l * cols + k)]) - mean;
        s2 += d * d;
      }
      const double want = static_cast<double>(s2 / (n - 1));
      INFO("dim " << dim << " line " << l);
      CHECK(std::abs(static_cast<double>(v[l].item()) - want) <= 1e-5 * want);
    }
  }
}

namespace {
template <class X>
std::vector<double> doubles(const X& x) {  // a tensor or an expression's values
  std::vector<double> r;
  for (const auto& e : st::eval(x).to_vector()) r.push_back(static_cast<double>(e));
  return r;
}
// var (correction 1) over dims of values laid out row-major in sizes, in float128, two passes.
std::vector<double> reference_var(const std::vector<double>& v, const shape_t& sizes, const shape_t& dims) {
  const auto nd = sizes.size();
  std::vector<bool> reduced(nd, dims.empty());
  for (const std::int64_t d : dims) reduced[static_cast<std::size_t>(d)] = true;
  std::vector<std::size_t> out_of(v.size());
  std::size_t outputs = 1;
  for (std::size_t d = 0; d < nd; ++d)
    if (!reduced[d]) outputs *= static_cast<std::size_t>(sizes[d]);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::size_t rest = i, o = 0, scale = 1;
    for (std::size_t d = nd; d-- > 0;) {
      const std::size_t k = rest % static_cast<std::size_t>(sizes[d]);
      rest /= static_cast<std::size_t>(sizes[d]);
      if (!reduced[d]) { o += k * scale; scale *= static_cast<std::size_t>(sizes[d]); }
    }
    out_of[i] = o;
  }
  std::vector<st::float128> sum(outputs, 0), sq(outputs, 0);
  const double n = static_cast<double>(v.size() / outputs);
  for (std::size_t i = 0; i < v.size(); ++i) sum[out_of[i]] += st::float128(v[i]);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const st::float128 d = st::float128(v[i]) - sum[out_of[i]] / n;
    sq[out_of[i]] += d * d;
  }
  std::vector<double> r;
  for (std::size_t o = 0; o < outputs; ++o) r.push_back(static_cast<double>(sq[o] / (n - 1)));
  return r;
}
}  // namespace

TEST_CASE("var's one-pass kernel: float128 accuracy on long lines, strips and chunks, the same bits on any thread count", "[ops]") {
  // Data around 1e4 with unit spread; shapes that take several blocks along a line (> 4096
  // floats), several strips of lanes (inner > 4096), ragged edges, chunks of n for few
  // outputs (with scalar and with vector lanes), more than one thread (>= 32768 elements),
  // and reduced dims that are not adjacent (the composition instead).
  const std::vector<std::pair<shape_t, shape_t>> cases{
      {{3, 9000}, {1}},     {{5000, 3}, {0}},     {{2, 70, 700}, {1}}, {{2, 70, 700}, {1, 2}},
      {{100003}, {}},       {{4, 9, 33}, {0, 1}}, {{4, 9, 33}, {0, 2}}, {{6, 1, 40}, {0, 2}},
      {{1, 2049, 1}, {1}},  {{7}, {0}},           {{9, 4500}, {0}},    {{1300, 37}, {0}},
      {{3, 11000}, {1}}};
  std::mt19937 gen(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int before = st::get_num_threads();
  for (const auto& [sizes, dims] : cases) {
    std::size_t count = 1;
    for (const auto s : sizes) count *= static_cast<std::size_t>(s);
    std::vector<double> v(count);
    for (double& e : v) e = 1e4 + normal(gen);
    std::vector<double> rounded;  // the float tensor's values
    for (const double e : v) rounded.push_back(static_cast<float>(e));
    const std::vector<double> want = reference_var(v, sizes, dims), want_f = reference_var(rounded, sizes, dims);
    INFO("sizes " << sizes.size() << "-d, " << count << " elements, " << dims.size() << " dims");
    const auto xd = st::from_vector<double>(v, sizes);
    const auto xf = xd.to<float>();
    std::vector<st::Tensor<float>> by_threads;
    for (const int threads : {1, 2}) {
      st::set_num_threads(threads);
      const st::Tensor<double> vd = st::var(xd, dims);
      const st::Tensor<float> vf = st::var(xf, dims);
      const auto [vm, m] = st::var_mean(xf, dims);
      REQUIRE(static_cast<std::size_t>(vd.numel()) == want.size());
      const st::Tensor<double> flat_d = vd.reshape({-1});
      const st::Tensor<float> flat_f = vf.reshape({-1}), flat_vm = vm.reshape({-1});
      for (std::size_t o = 0; o < want.size(); ++o) {
        const auto i = static_cast<std::int64_t>(o);
        CHECK(std::abs(flat_d[i].item() - want[o]) <= 1e-12 * want[o]);
        CHECK(std::abs(static_cast<double>(flat_f[i].item()) - want_f[o]) <= 1e-6 * want_f[o]);
        CHECK(flat_vm[i].item() == flat_f[i].item());
      }
      test::check_close(doubles(m), doubles(st::mean(xf.to<double>(), dims)), 2e-7);  // an ulp or two
      by_threads.push_back(vf);
    }
    CHECK(by_threads[0].to_vector() == by_threads[1].to_vector());
  }
  st::set_num_threads(before);
}

TEST_CASE("var's one-pass kernel gives what the composition gives, keepdim, sizes of one, NaN", "[ops]") {
  std::mt19937 gen(12);
  std::uniform_real_distribution<float> u(-3, 3);
  std::vector<float> v(2 * 3 * 1 * 50);
  for (float& e : v) e = u(gen);
  const auto x = st::from_vector<float>(v, {2, 3, 1, 50});
  for (const bool keepdim : {false, true})
    for (const shape_t& dims : std::vector<shape_t>{{3}, {1, 2, 3}, {-1, -3}, {2}, {}, {1, 3}}) {
      const st::Tensor<float> fast = st::var(x, dims, 1, keepdim);
      const st::Tensor<float> composed = st::var(x * 1, dims, 1, keepdim);  // an expression: the composition
      CHECK(fast.sizes() == composed.sizes());
      test::check_close(doubles(fast), doubles(composed), 1e-5);
      test::check_close(doubles(st::var(x, dims, 0, keepdim)), doubles(st::var(x * 1, dims, 0, keepdim)), 1e-5);
    }
  // One element a line: correction 1 divides 0 by 0.
  CHECK(std::isnan(st::eval(st::var(st::ones<float>({4, 1}), {1}))[0].item()));
  CHECK(st::eval(st::var(st::ones<float>({4, 1}), {1}, 0))[0].item() == 0.0f);
  // A NaN or an infinity spoils its own line only, along a line and across lanes.
  for (const double bad : {double(NAN), double(INFINITY), -double(INFINITY)}) {
    std::vector<double> ones(3 * 2000, 1.0);
    ones[2000 + 1500] = bad;
    const st::Tensor<double> vy = st::var(st::from_vector<double>(ones, {3, 2000}), {1});
    CHECK(vy[0].item() == 0.0);
    CHECK(std::isnan(vy[1].item()));
    CHECK(vy[2].item() == 0.0);
    const st::Tensor<double> vl = st::var(st::from_vector<double>(ones, {100, 60}), {0});  // element 3500: lane 20
    for (std::int64_t j = 0; j < 60; ++j) CHECK((j == 20 ? std::isnan(vl[j].item()) : vl[j].item() == 0.0));
  }
  // Wrong dims still say so, as PyTorch does.
  CHECK_THROWS_WITH(st::var(x, {1, 1}), "dim 1 appears multiple times in the list of dims");
  CHECK_THROWS_AS(st::var(x, {4}), st::index_error);
}

TEST_CASE("arg-reductions agree with a naive scan on strided inputs, any dim, any thread count", "[ops]") {
  std::mt19937 gen(9);
  const int before = st::get_num_threads();
  std::uniform_int_distribution<int> small(-4, 4);
  for (const int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (int trial = 0; trial < 40; ++trial) {
      const std::vector<std::int64_t> sizes{3 + trial % 4, 70 + trial, 2 + trial % 3};
      std::vector<double> v;
      for (std::int64_t i = 0; i < sizes[0] * sizes[1] * sizes[2]; ++i) v.push_back(small(gen));
      // The same logical values laid out in a permuted order (the reduction walks strides).
      const auto base = st::from_vector<double>(v, {sizes[0], sizes[1], sizes[2]});
      const st::Tensor<double> x = trial % 2 ? base : strided(base);
      for (std::int64_t dim = 0; dim < 3; ++dim) {
        auto [mx, imx] = st::max(x, dim);
        const st::Tensor<std::int64_t> amin = st::argmin(x, dim);
        const auto n = sizes[static_cast<std::size_t>(dim)];
        const auto at = [&](std::int64_t p, std::int64_t q, std::int64_t k) {
          std::vector<std::int64_t> idx{p, q};
          idx.insert(idx.begin() + dim, k);
          return x.at(idx);
        };
        const std::int64_t P = dim == 0 ? sizes[1] : sizes[0], Q = dim == 2 ? sizes[1] : sizes[2];
        for (std::int64_t p = 0; p < P; ++p)
          for (std::int64_t q = 0; q < Q; ++q) {
            std::int64_t best = 0, worst = 0;
            for (std::int64_t k = 1; k < n; ++k) {
              if (at(p, q, k) > at(p, q, best)) best = k;
              if (at(p, q, k) < at(p, q, worst)) worst = k;
            }
            REQUIRE(imx[p][q].item() == best);
            REQUIRE(mx[p][q].item() == at(p, q, best));
            REQUIRE(amin[p][q].item() == worst);
          }
      }
    }
  }
  st::set_num_threads(before);
}
