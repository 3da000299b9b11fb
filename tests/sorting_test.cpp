// SPDX-License-Identifier: MIT
// strata.sorting against PyTorch 1.13 (tests/golden/sorting.txt, made by
// tools/make_sorting_golden.py): values, indices (ties resolved as torch's kernels resolve
// them), gradients and error messages over random shapes, strides and dtypes; examples from
// torch's docs; a differential test of sort and cumsum against naive loops on large strided
// inputs (threaded); the dtypes torch lacks (half, float128, complex scans).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <random>
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

std::vector<double> numbers(const std::string& s) {
  std::istringstream in(s);
  std::vector<double> v;
  for (std::string w; in >> w;) v.push_back(std::strtod(w.c_str(), nullptr));  // stod throws on subnormals
  return v;
}
template <class T>
st::Tensor<T> tensor(const std::vector<double>& v, const ints& sizes) {
  std::vector<T> t;
  for (double d : v) t.push_back(test::from_double<T>(d));
  return st::from_vector<T>(t, sizes);
}
/// Equal element by element (want rounded to T first), NaN matching NaN.
template <class T = double>
void check_exact(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    const double w = test::to_double(test::from_double<T>(want[k]));
    INFO("element " << k << ": got " << got[k] << ", want " << w);
    CHECK((got[k] == w || (std::isnan(got[k]) && std::isnan(w))));
  }
}
std::vector<double> index_doubles(const st::Tensor<std::int64_t>& t) {
  std::vector<double> v;
  for (std::int64_t i : t.to_vector()) v.push_back(static_cast<double>(i));
  return v;
}

struct golden_case {
  std::string op, dtype, recipe;
  ints sizes, base_sizes, out_sizes;
  std::map<std::string, std::string> params;
  std::vector<double> x, v, i, w, grad;
  std::int64_t p(const std::string& k) const { return std::stoll(params.at(k)); }
};

/// "k=v" words into params, from word `from` on.
void read_params(const std::vector<std::string>& words, std::size_t from, std::map<std::string, std::string>& out) {
  for (std::size_t k = from; k < words.size(); ++k) {
    const auto eq = words[k].find('=');
    out[words[k].substr(0, eq)] = words[k].substr(eq + 1);
  }
}
std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

/// The base tensor viewed as the case's input: transposed, stepped or expanded.
template <class T>
st::Tensor<T> input(const golden_case& c) {
  const st::Tensor<T> base = tensor<T>(c.x, c.base_sizes);
  const std::vector<std::string> r = golden::split(c.recipe, ':');
  if (r[0] == "t") return base.transpose(std::stoll(r[1]), std::stoll(r[2]));
  if (r[0] == "step") return base.slice(std::stoll(r[1]), {}, {}, 2);
  if (r[0] == "expand") {
    ints s = c.sizes;
    return base.expand(s);
  }
  return base;
}

template <class F>
void with_dtype(const std::string& name, F&& f) {
  if (name == "bool") f.template operator()<bool>();
  else if (name == "u8") f.template operator()<std::uint8_t>();
  else if (name == "i8") f.template operator()<std::int8_t>();
  else if (name == "i16") f.template operator()<std::int16_t>();
  else if (name == "i32") f.template operator()<std::int32_t>();
  else if (name == "i64") f.template operator()<std::int64_t>();
  else if (name == "f16") f.template operator()<st::half>();
  else if (name == "bf16") f.template operator()<st::bfloat16>();
  else if (name == "f32") f.template operator()<float>();
  else if (name == "f64") f.template operator()<double>();
  else FAIL("unknown dtype " << name);
}
/// cumsum's and cumprod's dtype= values in the golden file.
template <class F>
void with_result_dtype(const std::string& name, F&& f) {
  if (name == "i8") f.template operator()<std::int8_t>();
  else if (name == "i32") f.template operator()<std::int32_t>();
  else if (name == "i64") f.template operator()<std::int64_t>();
  else if (name == "f32") f.template operator()<float>();
  else f.template operator()<double>();
}

template <class T>
constexpr bool floating_v = std::is_floating_point_v<T> || std::is_same_v<T, st::half> || std::is_same_v<T, st::bfloat16>;

/// Runs the case's operator on x and hands f the values (and the indices, or nullptr).
template <class T, class F>
void with_result(const golden_case& c, const st::Tensor<T>& x, F&& f) {
  const std::string& op = c.op;
  if (op == "sort") {
    auto [v, i] = st::sort(x, c.p("dim"), c.p("descending") != 0, c.p("stable") != 0);
    CHECK(st::argsort(x, c.p("dim"), c.p("descending") != 0, c.p("stable") != 0).to_vector() == i.to_vector());
    f(v, &i);
  } else if (op == "topk") {
    auto [v, i] = st::topk(x, c.p("k"), c.p("dim"), c.p("largest") != 0, c.p("sorted") != 0);
    f(v, &i);
  } else if (op == "kthvalue") {
    auto [v, i] = st::kthvalue(x, c.p("k"), c.p("dim"), c.p("keepdim") != 0);
    f(v, &i);
  } else if (op == "median_all") {
    f(st::median(x), nullptr);
  } else if (op == "nanmedian_all") {
    f(st::nanmedian(x), nullptr);
  } else if (op == "median" || op == "nanmedian") {
    auto [v, i] = op == "median" ? st::median(x, c.p("dim"), c.p("keepdim") != 0)
                                 : st::nanmedian(x, c.p("dim"), c.p("keepdim") != 0);
    f(v, &i);
  } else if (op == "mode") {
    auto [v, i] = st::mode(x, c.p("dim"), c.p("keepdim") != 0);
    f(v, &i);
  } else if (op == "cumsum" || op == "cumprod") {
    const bool sum = op == "cumsum";
    if (c.params.count("dtype")) {
      with_result_dtype(c.params.at("dtype"), [&]<class R>() {
        f(sum ? st::cumsum<R>(x, c.p("dim")) : st::cumprod<R>(x, c.p("dim")), nullptr);
      });
    } else {
      f(sum ? st::cumsum(x, c.p("dim")) : st::cumprod(x, c.p("dim")), nullptr);
    }
  } else if (op == "cummax" || op == "cummin") {
    auto [v, i] = op == "cummax" ? st::cummax(x, c.p("dim")) : st::cummin(x, c.p("dim"));
    f(v, &i);
  } else if (op == "logcumsumexp") {
    if constexpr (floating_v<T>) f(st::logcumsumexp(x, c.p("dim")), nullptr);
  } else {
    FAIL("unknown op " << op);
  }
}

template <class T>
void run(const golden_case& c) {
  const st::Tensor<T> x = input<T>(c);
  REQUIRE(x.sizes() == st::int_list(c.sizes));
  with_result(c, x, [&](const auto& v, const st::Tensor<std::int64_t>* i) {
    CHECK(v.sizes() == st::int_list(c.out_sizes));
    // Selections and the integer scans are exact; the float scans accumulate as torch does
    // (double for float32), so only exp and log1p may differ in the last bit.
    const bool scan = c.op == "cumsum" || c.op == "cumprod" || c.op == "logcumsumexp";
    using R = typename std::remove_cvref_t<decltype(v)>::value_type;
    if (scan && std::is_floating_point_v<R>) test::check_close(as_doubles(v), c.v, std::is_same_v<R, float> ? 1e-7 : 1e-15);
    else check_exact<R>(as_doubles(v), c.v);
    if (i) check_exact(index_doubles(*i), c.i);
  });
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (c.grad.empty()) return;
    st::Tensor<T> xg = x.detach();
    xg.requires_grad_();
    with_result(c, xg, [&](const auto& v, const st::Tensor<std::int64_t>*) {
      using R = typename std::remove_cvref_t<decltype(v)>::value_type;
      if constexpr (std::is_floating_point_v<R>) st::sum(v * tensor<R>(c.w, c.out_sizes)).backward();
    });
    // dtype=float32 on a float64 input: strata's backward runs in float32 (torch's in float64)
    const bool narrowed = c.params.count("dtype") && c.params.at("dtype") == "f32";
    const double tol = std::is_same_v<T, float> || narrowed ? 2e-6 : 1e-13;
    test::check_close(as_doubles(xg.grad()), c.grad, c.op == "cumprod" || c.op == "logcumsumexp" ? 50 * tol : tol);
  }
}

/// The case's operator on zeros of the given sizes, for the error records.
void run_error(const std::string& op, const ints& sizes, const std::map<std::string, std::string>& params) {
  const auto p = [&](const char* k) { return std::stoll(params.at(k)); };
  const st::Tensor<float> x = st::zeros<float>(sizes);
  if (op == "sort") (void)st::sort(x, p("dim"));
  else if (op == "topk") (void)st::topk(x, p("k"), p("dim"));
  else if (op == "kthvalue") (void)st::kthvalue(x, p("k"), p("dim"));
  else if (op == "median") (void)st::median(x, p("dim"));
  else if (op == "nanmedian") (void)st::nanmedian(x, p("dim"));
  else if (op == "mode") (void)st::mode(x, p("dim"));
  else if (op == "cumsum") (void)st::cumsum(x, p("dim"));
  else if (op == "cumprod") (void)st::cumprod(x, p("dim"));
  else if (op == "cummax") (void)st::cummax(x, p("dim"));
  else if (op == "cummin") (void)st::cummin(x, p("dim"));
  else if (op == "logcumsumexp") (void)st::logcumsumexp(x, p("dim"));
  else if (op == "sort_backward_after_inplace_indices") {
    auto y = st::from_vector<float>({3, 1, 2}).requires_grad_();
    auto [v, i] = st::sort(y);
    i += 0;
    st::sum(v).backward();
  }
}
}  // namespace

TEST_CASE("sorting operators match PyTorch: values, indices, gradients, messages", "[sorting][golden]") {
  const std::vector<std::string> lines = golden::lines("sorting.txt");
  int cases = 0, errors = 0;
  for (std::size_t k = 0; k < lines.size();) {
    const std::vector<std::string> head = words_of(lines[k]);
    if (head[0] == "cases") {
      CHECK(std::stoi(head[1]) == cases);
      ++k;
      continue;
    }
    if (head[0] == "error") {
      // error <python type> <op> <sizes> k=v... | message
      const std::string& line = lines[k++];
      const std::string message = line.substr(line.find(" | ") + 3);
      const std::vector<std::string> w = words_of(line.substr(0, line.find(" | ")));
      std::map<std::string, std::string> params;
      read_params(w, 4, params);
      INFO(line);
      bool thrown = false;
      try {
        run_error(w[2], golden::parse_shape(w[3]), params);
      } catch (const st::error& e) {
        thrown = true;
        CHECK((w[1] == "IndexError") == (dynamic_cast<const st::index_error*>(&e) != nullptr));
        const std::string what = e.what();
        if (w[2] == "sort_backward_after_inplace_indices")  // strata names dtypes its own way
          CHECK(what.rfind("one of the variables needed for gradient computation has been modified by an inplace "
                           "operation: [int64 [3]] is at version 1; expected version 0 instead.", 0) == 0);
        else
          CHECK(what == message);
      }
      CHECK(thrown);
      ++errors;
      continue;
    }
    golden_case c;
    c.op = head[1];
    c.dtype = head[2];
    c.sizes = golden::parse_shape(head[3]);
    c.recipe = head[4];
    read_params(head, 5, c.params);
    for (++k; lines[k] != "end"; ++k) {
      const std::string& l = lines[k];
      const std::string key = l.substr(0, l.find(' '));
      const std::string rest = l.size() > key.size() ? l.substr(key.size() + 1) : "";
      const auto shaped = [&](ints& sizes, std::vector<double>& v) {
        sizes = golden::parse_shape(rest.substr(0, rest.find(']') + 1));
        v = numbers(rest.substr(rest.find(']') + 1));
      };
      if (key == "x") shaped(c.base_sizes, c.x);
      if (key == "v") shaped(c.out_sizes, c.v);
      if (key == "i") c.i = numbers(rest);
      if (key == "w") c.w = numbers(rest);
      if (key == "grad") c.grad = numbers(rest);
    }
    ++k;
    INFO(lines[k - 1]);
    INFO("case " << c.op << " " << c.dtype << " " << st::int_list(c.sizes) << " " << c.recipe);
    with_dtype(c.dtype, [&]<class T>() { run<T>(c); });
    ++cases;
  }
  CHECK(cases == 599);
  CHECK(errors == 24);
}

TEST_CASE("sorting: PyTorch's documented examples", "[sorting]") {
  // torch.sort(x, stable=True) keeps equal elements in order
  std::vector<std::int64_t> pattern;
  for (int k = 0; k < 18; ++k) pattern.push_back(k % 2);
  auto [sv, si] = st::sort(st::from_vector<std::int64_t>(pattern), -1, false, true);
  CHECK(sv.to_vector() == ints{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(si.to_vector() == ints{0, 2, 4, 6, 8, 10, 12, 14, 16, 1, 3, 5, 7, 9, 11, 13, 15, 17});
  // topk and kthvalue of arange(1., 6.)
  const auto x = st::arange<float>(1, 6);
  auto [tv, ti] = st::topk(x, 3);
  CHECK(tv.to_vector() == std::vector<float>{5, 4, 3});
  CHECK(ti.to_vector() == ints{4, 3, 2});
  auto [kv, ki] = st::kthvalue(x, 4);
  CHECK(kv.item() == 4.0f);
  CHECK(ki.item() == 3);
  // kthvalue along dim 0 with keepdim
  auto [k2, k2i] = st::kthvalue(st::arange<float>(6).view({2, 3}), 2, 0, true);
  CHECK(k2.sizes() == st::int_list{1, 3});
  CHECK(k2.to_vector() == std::vector<float>{3, 4, 5});
  CHECK(k2i.to_vector() == ints{1, 1, 1});
  // cummax: the index of the last maximum; mode: the smallest most frequent value
  auto [cv, ci] = st::cummax(st::from_vector<float>({1, 3, 2, 3, 0}), 0);
  CHECK(cv.to_vector() == std::vector<float>{1, 3, 3, 3, 3});
  CHECK(ci.to_vector() == ints{0, 1, 1, 3, 3});
  auto [mv, mi] = st::mode(st::from_vector<float>({3, 1, 1, 3, 2}));
  CHECK(mv.item() == 1.0f);
  CHECK(mi.item() == 2);
  // median: the lower of the two middle values; with dim, ties go by index
  CHECK(st::median(st::from_vector<float>({4, 1, 3, 2})).item() == 2.0f);
  auto [dv, di] = st::median(st::from_vector<float>({3, 1, 1, 3, 2, 1}), 0);
  CHECK(dv.item() == 1.0f);
  CHECK(di.item() == 5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(st::median(st::from_vector<float>({1, nan, 2})).item()));
  CHECK(st::nanmedian(st::from_vector<float>({1, nan, 2})).item() == 1.0f);
  // logcumsumexp of zeros: log(1), log(2), log(3)
  test::check_close(as_doubles(st::logcumsumexp(st::zeros<double>({3}), 0)), {0, std::log(2.0), std::log(3.0)}, 1e-15);
  // cumsum and cumprod of integers and bool give int64; dtype= converts first
  const auto i8 = st::from_vector<std::int8_t>({100, 100, 100});
  static_assert(std::is_same_v<decltype(st::cumsum(i8, 0)), st::Tensor<std::int64_t>>);
  CHECK(st::cumsum(i8, 0).to_vector() == ints{100, 200, 300});
  CHECK(st::cumsum<std::int8_t>(i8, 0).to_vector() == std::vector<std::int8_t>{100, -56, 44});
  CHECK(st::cumprod(st::from_vector<bool>({true, true, false}), 0).to_vector() == ints{1, 1, 0});
  CHECK(st::cumsum<float>(st::from_vector<std::int32_t>({1, 2}), 0).to_vector() == std::vector<float>{1, 3});
  // float32 running sums accumulate in double, as torch's CPU kernel
  CHECK(st::cumsum(st::from_vector<float>({1e8f, 1, -1e8f}), 0).to_vector() == std::vector<float>{1e8f, 1e8f, 1});
}

TEST_CASE("sorting: 0-dim and empty inputs", "[sorting]") {
  const auto s = st::full<float>({}, 5.0f);
  auto [v, i] = st::sort(s);
  CHECK(v.dim() == 0);
  CHECK(v.item() == 5.0f);
  CHECK(i.item() == 0);
  auto [t0, t0i] = st::topk(s, 0);  // torch returns the element even for k = 0
  CHECK(t0.item() == 5.0f);
  auto [m, mi] = st::median(s, 0, true);
  CHECK(m.dim() == 0);
  CHECK(st::cumsum(s, -1).item() == 5.0f);
  CHECK(st::logcumsumexp(s, 0).item() == 5.0f);
  auto [e, ei] = st::sort(st::zeros<float>({0, 3}), 0);
  CHECK(e.sizes() == st::int_list{0, 3});
  auto [k, ki] = st::kthvalue(st::zeros<float>({2, 0}), 1, 0);
  CHECK(k.sizes() == st::int_list{0});
  CHECK(std::isnan(st::median(st::zeros<float>({0})).item()));
  CHECK(st::median(st::zeros<std::int32_t>({0})).item() == std::numeric_limits<std::int32_t>::min());
  CHECK(st::cumsum(st::zeros<float>({3, 0}), 1).sizes() == st::int_list{3, 0});
}

namespace {
/// A random float tensor viewed transposed and stepped (non-contiguous in both dims).
st::Tensor<float> strided_input(std::int64_t rows, std::int64_t cols, unsigned seed, bool ties) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> small(-20, 20);
  std::normal_distribution<float> normal;
  const auto base = st::empty<float>({cols, 2 * rows});
  float* p = base.data_ptr();
  for (std::int64_t k = 0; k < base.numel(); ++k) p[k] = ties ? static_cast<float>(small(gen)) : normal(gen);
  return base.t().slice(0, {}, {}, 2);  // [rows, cols], strides (2, 2 * rows)
}
}  // namespace

TEST_CASE("sort and cumsum against naive loops on large strided inputs, 1 and 2 threads", "[sorting][diff]") {
  for (const int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (const std::int64_t dim : {0, 1}) {
      const st::Tensor<float> x = strided_input(300, 257, 7u + static_cast<unsigned>(dim), true);
      const std::int64_t n = x.size(dim), lines = x.size(1 - dim);
      // sort, stable and descending: indices are unique, compare with std::stable_sort
      auto [v, i] = st::sort(x, dim, true, true);
      bool ok = true;
      for (std::int64_t l = 0; l < lines && ok; ++l) {
        std::vector<std::pair<float, std::int64_t>> line;
        for (std::int64_t j = 0; j < n; ++j) line.push_back({dim == 0 ? x.at({j, l}) : x.at({l, j}), j});
        std::stable_sort(line.begin(), line.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (std::int64_t j = 0; j < n && ok; ++j) {
          const std::int64_t r = dim == 0 ? j : l, c = dim == 0 ? l : j;
          ok = v.at({r, c}) == line[static_cast<std::size_t>(j)].first && i.at({r, c}) == line[static_cast<std::size_t>(j)].second;
        }
      }
      CHECK(ok);
      // cumsum: a running double sum rounded to float at each step, bit for bit
      const st::Tensor<float> y = st::cumsum(x, dim);
      bool same = true;
      for (std::int64_t l = 0; l < lines; ++l) {
        double acc = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          acc += dim == 0 ? x.at({j, l}) : x.at({l, j});
          same = same && (dim == 0 ? y.at({j, l}) : y.at({l, j})) == static_cast<float>(acc);
        }
      }
      CHECK(same);
    }
  }
  st::set_num_threads(1);
  // cumsum along dim 0 and 1 of a contiguous [600, 300] matches the strided path's answer
  const st::Tensor<float> x = strided_input(600, 300, 11u, false);
  const st::Tensor<float> c = x.contiguous();
  for (const std::int64_t dim : {0, 1})
    CHECK(st::cumsum(x, dim).to_vector() == st::cumsum(c, dim).to_vector());
}

TEST_CASE("scans of 1-17 lines, contiguous, strided and transposed, match a naive loop bit for bit", "[sorting][diff]") {
  std::mt19937 gen(5u);
  std::normal_distribution<float> normal;
  for (const std::int64_t lines : {1, 2, 3, 4, 5, 6, 8, 9, 17}) {
    for (const std::int64_t n : {1, 17, 1000}) {
      for (const int layout : {0, 1, 2}) {
        // 0: [lines, n] contiguous; 1: every other column of [lines, 2n]; 2: [n, lines] transposed
        const std::int64_t rows = layout == 2 ? n : lines, cols = layout == 0 ? n : layout == 1 ? 2 * n : lines;
        const auto base = st::empty<float>({rows, cols});
        for (std::int64_t k = 0; k < base.numel(); ++k) base.data_ptr()[k] = std::round(normal(gen) * 4) / 4;
        const st::Tensor<float> x = layout == 0 ? base : layout == 1 ? base.slice(1, {}, {}, 2) : base.t();
        CAPTURE(lines, n, layout);
        REQUIRE(x.sizes() == st::int_list{lines, n});
        const st::Tensor<float> y = st::cumsum(x, 1);
        auto [m, mi] = st::cummax(x, 1);
        bool same = true;
        for (std::int64_t l = 0; l < lines; ++l) {
          double acc = 0;
          float best = 0;
          std::int64_t at = -1;
          for (std::int64_t j = 0; j < n; ++j) {
            const float v = x.at({l, j});
            acc += v;
            if (at < 0 || v >= best) best = v, at = j;
            same = same && y.at({l, j}) == static_cast<float>(acc) && m.at({l, j}) == best && mi.at({l, j}) == at;
          }
        }
        CHECK(same);
        // the last line alone, 1-D (contiguous or strided): as it scans among the others
        CHECK(st::cumsum(x.select(0, lines - 1), 0).to_vector() == y.select(0, lines - 1).to_vector());
      }
    }
  }
}

TEST_CASE("scans of many short lines back to back match the same lines strided, bit for bit", "[sorting][diff]") {
  // cumsum(x, -1) of x [M, n], n 1-17: lines of 2-16 take a path of their own (2-7 vectorised
  // across lines, 8-16 a scalar chain each); every other column of [M, 2n] holds the same values
  // and scans line by line, 1 and 2 threads.
  std::mt19937 gen(11u);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (const int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (const std::int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17}) {
      const std::int64_t lines = 3001;
      const auto wide = st::empty<double>({lines, 2 * n});
      for (std::int64_t k = 0; k < wide.numel(); ++k) wide.data_ptr()[k] = u(gen);
      const st::Tensor<double> strided = wide.slice(1, {}, {}, 2);
      const st::Tensor<double> x = strided.contiguous();
      const auto xf = x.to<float>();
      const auto xi = (x * 8).to<std::int32_t>();
      CAPTURE(threads, n);
      CHECK(st::cumsum(x, 1).to_vector() == st::cumsum(strided, 1).to_vector());
      CHECK(st::cumprod(x, -1).to_vector() == st::cumprod(strided, -1).to_vector());
      CHECK(st::logcumsumexp(x, 1).to_vector() == st::logcumsumexp(strided, 1).to_vector());
      CHECK(st::cumsum(xf, 1).to_vector() == st::cumsum(wide.to<float>().slice(1, {}, {}, 2), 1).to_vector());
      CHECK(st::cumsum(xi, 1).to_vector() == st::cumsum((wide * 8).to<std::int32_t>().slice(1, {}, {}, 2), 1).to_vector());
      // and the last line's values, from a naive running sum
      double acc = 0;
      bool same = true;
      const auto y = st::cumsum(x, 1);
      for (std::int64_t j = 0; j < n; ++j) same = same && y.at({lines - 1, j}) == (acc += x.at({lines - 1, j}));
      CHECK(same);
    }
  }
  st::set_num_threads(1);
}

TEST_CASE("sorting: dtypes torch lacks (half, float128, complex scans, bool)", "[sorting]") {
  const auto f = st::from_vector<float>({2.5f, -1, 0.5f, 2.5f, 7, -3});
  const auto h = f.to<st::half>();
  auto [hv, hi] = st::topk(h, 2);
  CHECK(as_doubles(hv) == std::vector<double>{7, 2.5});
  CHECK(hi.to_vector() == ints{4, 0});
  CHECK(as_doubles(st::cumsum(h, 0)) == as_doubles(st::cumsum(f, 0)));
  auto [kv, ki] = st::kthvalue(h, 3);
  CHECK(static_cast<float>(kv.item()) == 0.5f);
  CHECK(ki.item() == 2);
  const auto q = f.to<st::float128>();
  CHECK(as_doubles(st::cumsum(q, 0)) == as_doubles(st::cumsum(f.to<double>(), 0)));
  CHECK(as_doubles(st::sort(q).values) == as_doubles(st::sort(f).values));
  test::check_close(as_doubles(st::logcumsumexp(q, 0)), as_doubles(st::logcumsumexp(f.to<double>(), 0)), 1e-15);
  using c64 = std::complex<float>;
  const auto z = st::from_vector<c64>({{1, 2}, {0, 1}, {-1, 0.5f}});
  const auto zs = st::cumsum(z, 0).to_vector(), zp = st::cumprod(z, 0).to_vector();
  CHECK(zs[2] == c64(0, 3.5f));
  CHECK(zp[1] == c64(-2, 1));
  CHECK(zp[2] == c64(1.5f, -2));
  auto [bv, bi] = st::cummin(st::from_vector<bool>({true, false, false}), 0);
  CHECK(bv.to_vector() == std::vector<bool>{true, false, false});
  CHECK(bi.to_vector() == ints{0, 1, 2});
}

TEST_CASE("sorting: autograd through expressions, medians, zeros in cumprod, saved indices", "[sorting][autograd]") {
  // an expression input is evaluated (and recorded) first
  auto a = st::from_vector<double>({3, 1, 2}).requires_grad_();
  auto [v, i] = st::sort(a * 2);
  st::sum(v * st::from_vector<double>({1, 10, 100})).backward();
  CHECK(a.grad().to_vector() == std::vector<double>{200, 2, 20});
  // median of all elements shares the gradient among equal elements (torch's values)
  auto m = st::from_vector<float>({1, 3, 3, 2, 3}).requires_grad_();
  st::median(m).backward();
  test::check_close(as_doubles(m.grad()), {0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3}, 1e-7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mn = st::from_vector<float>({1, nan, 3, nan, 3}).requires_grad_();
  st::median(mn).backward();
  CHECK(as_doubles(mn.grad()) == std::vector<double>{0, 0.5, 0, 0.5, 0});
  // cumprod with zeros (torch: [1, 22, 0, 0, 0, 0])
  auto p = st::from_vector<double>({2, 0, 3, 0, 4, 5}).requires_grad_();
  st::cumprod(p, 0).backward(st::from_vector<double>({1, 2, 3, 4, 5, 6}));
  CHECK(p.grad().to_vector() == std::vector<double>{1, 22, 0, 0, 0, 0});
  // cummax: each position's gradient goes to the index that held the maximum (summed)
  auto c = st::from_vector<float>({2, 1, 3, 1, 4, 5}).requires_grad_();
  st::cummax(c, 0).values.backward(st::from_vector<float>({1, 2, 3, 4, 5, 6}));
  CHECK(c.grad().to_vector() == std::vector<float>{3, 0, 7, 0, 5, 6});
  // logcumsumexp with a -inf input (torch: [-0.77242553, 0, 2.77242517])
  const float inf = std::numeric_limits<float>::infinity();
  auto l = st::from_vector<float>({0.5f, -inf, 3}).requires_grad_();
  st::logcumsumexp(l, 0).backward(st::from_vector<float>({1, -2, 3}));
  test::check_close(as_doubles(l.grad()), {-0.77242553, 0, 2.77242517}, 1e-6);
  // a 0-dim input's logcumsumexp passes the gradient through
  auto s = st::full<float>({}, 0.5f).requires_grad_();
  st::logcumsumexp(s, 0).backward(st::full<float>({}, 2.0f));
  CHECK(s.grad().item() == 2.0f);
}
