// SPDX-License-Identifier: MIT
// softmax, log_softmax and logsumexp against PyTorch 1.13 (tests/golden/softmax.txt, made by
// tools/make_softmax_golden.py): values and gradients, large magnitudes and infinities;
// what they allocate; their use inside expressions.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
#include "sanitized.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
template <class T>
st::Tensor<T> tensor(const std::vector<double>& v, const std::vector<std::int64_t>& sizes) {
  std::vector<T> t(v.begin(), v.end());
  return st::from_vector<T>(t, sizes);
}

struct golden_case {
  std::string op, dtype;
  std::vector<std::int64_t> sizes, out_sizes, dims;
  bool keepdim = false;
  std::vector<double> x, y, w, grad;
};

template <class T>
void run(const golden_case& c) {
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  auto x = tensor<T>(c.x, c.sizes);
  const auto result = [&](const st::Tensor<T>& in) -> st::Tensor<T> {
    if (c.op == "softmax") return st::softmax(in, c.dims[0]);
    if (c.op == "log_softmax") return st::log_softmax(in, c.dims[0]);
    return st::logsumexp(in, c.dims, c.keepdim);
  };
  const st::Tensor<T> y = result(x);
  CHECK(y.sizes() == st::int_list(c.out_sizes));
  test::check_close(as_doubles(y), c.y, tol);
  if (c.grad.empty()) return;
  x.requires_grad_();
  st::sum(result(x) * tensor<T>(c.w, c.out_sizes)).backward();
  test::check_close(as_doubles(x.grad()), c.grad, 10 * tol);
}
}  // namespace

TEST_CASE("softmax, log_softmax and logsumexp match PyTorch, gradients too", "[softmax]") {
  const std::vector<std::string> lines = golden::lines("softmax.txt");
  int cases = 0;
  for (std::size_t i = 0; i < lines.size();) {
    golden_case c;
    std::istringstream head(lines[i++]);
    std::string word, shape;
    head >> word >> c.op >> c.dtype >> shape;
    c.sizes = golden::parse_shape(shape);
    head >> word;
    for (std::string d; head >> d && d != "keepdim";) c.dims.push_back(std::stoll(d));
    int keep = 0;
    head >> keep;
    c.keepdim = keep != 0;
    for (; lines[i] != "end"; ++i) {
      const std::string& l = lines[i];
      const std::string key = l.substr(0, l.find(' '));
      const std::string rest = l.size() > key.size() ? l.substr(key.size() + 1) : "";
      if (key == "x") c.x = golden::parse_doubles(rest);
      if (key == "w") c.w = golden::parse_doubles(rest);
      if (key == "grad") c.grad = golden::parse_doubles(rest);
      if (key == "y") {
        c.out_sizes = golden::parse_shape(rest.substr(0, rest.find(']') + 1));
        c.y = golden::parse_doubles(rest.substr(rest.find(']') + 1));
      }
    }
    ++i;
    INFO(c.op << " " << c.dtype << " " << st::int_list(c.sizes) << " dims " << st::int_list(c.dims));
    if (c.dtype == "f32") run<float>(c);
    else run<double>(c);
    ++cases;
  }
  CHECK(cases == 120);
}

TEST_CASE("softmax: stable for large magnitudes, PyTorch's results at the edges", "[softmax]") {
  const auto x = st::from_vector<float>({1000, 1001, 1002, -1000, -1001, -1002}, {2, 3});
  const st::Tensor<float> p = st::softmax(x, 1);
  test::check_close(as_doubles(p), {0.09003057, 0.24472847, 0.66524096, 0.66524096, 0.24472847, 0.09003057}, 1e-6);
  const st::Tensor<float> lp = st::log_softmax(x, -1);
  test::check_close(as_doubles(lp), {-2.40760596, -1.40760596, -0.40760596, -0.40760596, -1.40760596, -2.40760596}, 1e-6);
  const st::Tensor<float> l = st::logsumexp(x, {1});
  test::check_close(as_doubles(l), {1002.40760596, -999.59239404}, 1e-7);
  // an integer input takes the result type, as PyTorch's dtype= argument
  const st::Tensor<double> q = st::softmax<double>(st::arange<std::int64_t>(3), 0);
  test::check_close(as_doubles(q), {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-15);
  // an all -inf row: logsumexp is -inf (the shift is masked, as PyTorch)
  const float inf = std::numeric_limits<float>::infinity();
  const st::Tensor<float> e = st::logsumexp(st::from_vector<float>({-inf, -inf, 0, 1}, {2, 2}), {1});
  CHECK(e.at({0}) == -inf);
  CHECK(st::Tensor<float>(st::softmax(st::zeros<float>({0, 3}), 1)).sizes() == st::int_list{0, 3});
}

TEST_CASE("softmax allocates its result, and the composition's two reduced vectors off the last dim", "[softmax]") {
  const st::Tensor<float> x = st::arange<float>(64 * 100).view({64, 100}) / 1000.0f;
  const auto before = st::thread_allocations();
  st::Tensor<float> p = st::softmax(x, 1);  // contiguous rows: one fused pass per row
  CHECK(st::thread_allocations().blocks - before.blocks == 1);
  const auto cols = st::thread_allocations();
  st::Tensor<float> q = st::softmax(x.t(), 0);  // along the first dim: max, sum, result
  CHECK(st::thread_allocations().blocks - cols.blocks == 3);
  test::check_close(as_doubles(q.t()), as_doubles(p), 1e-6);
  st::Tensor<float> out = st::empty<float>({64, 100});
  const auto into = st::thread_allocations();
  out.assign(st::softmax(x, 1));  // written in place
  CHECK(st::thread_allocations().blocks - into.blocks == 0);
  const auto again = st::thread_allocations();
  out.assign(st::softmax(x, 1) * 2);  // used inside an expression: evaluated first, once
  CHECK(st::thread_allocations().blocks - again.blocks == 1);
  test::check_close(as_doubles(out), [&] {
    std::vector<double> v = as_doubles(p);
    for (double& d : v) d *= 2;
    return v;
  }(), 1e-6);
  // rows sum to one
  test::check_close(as_doubles(st::Tensor<float>(st::sum(p, {1}))), std::vector<double>(64, 1.0), 1e-6);
}

// logsumexp over consecutive dims of a contiguous tensor runs the kernel (rows when they are
// the last ones); anything else the composition. Both against a naive per-row evaluation in long double: row lengths around a
// vector and the kernel's 1024-element blocks, one and two trailing dims, the reduced dims not
// last, strided and expression inputs, infinities and NaN, under no_grad.
TEST_CASE("logsumexp over every layout matches a naive evaluation", "[softmax]") {
  const double inf = std::numeric_limits<double>::infinity();
  // lse of x[r0 + j * rs] for j < n, computed naively (the maximum shifted out).
  const auto naive = [](const std::vector<double>& x, std::int64_t r0, std::int64_t rs, std::int64_t n) {
    long double m = -INFINITY;
    bool nan = false;
    for (std::int64_t j = 0; j < n; ++j) {
      const double v = x[static_cast<std::size_t>(r0 + j * rs)];
      nan = nan || std::isnan(v);
      if (v > m) m = v;
    }
    if (nan) return std::numeric_limits<double>::quiet_NaN();
    if (std::isinf(m)) return static_cast<double>(m);  // every element -inf, or one +inf
    long double s = 0;
    for (std::int64_t j = 0; j < n; ++j) s += std::exp(static_cast<long double>(x[static_cast<std::size_t>(r0 + j * rs)]) - m);
    return static_cast<double>(std::log(s) + m);
  };
  for (const std::int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 1023, 1024, 1025, 3000}) {
    for (const std::int64_t rows : {1, 5, 300}) {
      INFO("rows " << rows << ", n " << n);
      std::vector<double> v(static_cast<std::size_t>(rows * n));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i)) * 30 + static_cast<double>(i % 7);
      if (rows >= 5) {  // row 1 has a NaN, row 2 is all -inf, row 3 has +inf
        v[static_cast<std::size_t>(n + (n > 1 ? 1 : 0))] = std::numeric_limits<double>::quiet_NaN();
        for (std::int64_t j = 0; j < n; ++j) v[static_cast<std::size_t>(2 * n + j)] = -inf;
        v[static_cast<std::size_t>(3 * n)] = inf;
      }
      std::vector<double> want(static_cast<std::size_t>(rows));
      for (std::int64_t r = 0; r < rows; ++r) want[static_cast<std::size_t>(r)] = naive(v, r * n, 1, n);
      const auto x = st::from_vector<double>(v, {rows, n});
      test::check_close(as_doubles(st::logsumexp(x, {1})), want, 1e-14);
      const auto xf = x.to<float>();
      test::check_close(as_doubles(st::logsumexp(xf, {-1})), want, 2e-6);
      // the row kernel allocates the result only; the composition its reduced vectors too
      const auto allocs = st::thread_allocations();
      const st::Tensor<double> l = st::logsumexp(x, {1});
      CHECK(st::thread_allocations().blocks - allocs.blocks == 1);
      test::check_close(as_doubles(l), want, 1e-14);
      // the transposed tensor along dim 0, a strided view and an expression (the composition)
      test::check_close(as_doubles(st::logsumexp(x.t().contiguous(), {0})), want, 1e-14);
      const st::Tensor<double> wide = st::zeros<double>({rows, 2 * n});
      wide.narrow(1, n, n).copy_(x);
      if (rows > 1) CHECK(!wide.narrow(1, n, n).is_contiguous());
      test::check_close(as_doubles(st::logsumexp(wide.narrow(1, n, n), {1})), want, 1e-14);
      test::check_close(as_doubles(st::logsumexp(x * 1.0, {1})), want, 1e-14);
      // keepdim, and the last two dims of a 3-d tensor
      CHECK(st::logsumexp(x, {1}, true).sizes() == st::int_list{rows, 1});
      if (n % 3 == 0 && n > 3) {
        const auto x3 = x.view({rows, 3, n / 3});
        const auto l3 = st::logsumexp(x3, {1, 2}, true);
        CHECK(l3.sizes() == st::int_list{rows, 1, 1});
        test::check_close(as_doubles(l3), want, 1e-14);
        test::check_close(as_doubles(st::logsumexp(x3, {-1, -2})), want, 1e-14);
        // leading reduced dims with the last kept: the kernel's columns
        std::vector<double> lead(static_cast<std::size_t>(n / 3)), col;
        for (std::int64_t k = 0; k < n / 3; ++k) {
          col.clear();
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t i = 0; i < 3; ++i) col.push_back(v[static_cast<std::size_t>(r * n + i * (n / 3) + k)]);
          lead[static_cast<std::size_t>(k)] = naive(col, 0, 1, static_cast<std::int64_t>(col.size()));
        }
        test::check_close(as_doubles(st::logsumexp(x3, {0, 1})), lead, 1e-14);
      }
    }
  }
  // every dim of a tensor
  const auto whole = st::from_vector<double>({0.5, -1, 2, 3}, {2, 2});
  test::check_close({st::logsumexp(whole, {0, 1}).item()}, {std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0) + std::exp(3.0))}, 1e-15);
  // requiring grad takes the recorded composition; under no_grad, the row kernel
  auto g = st::from_vector<double>({1, 2, 3, 4}, {2, 2}).requires_grad_();
  {
    const st::no_grad off;
    const st::Tensor<double> l = st::logsumexp(g, {1});
    CHECK(!l.requires_grad());
    test::check_close(as_doubles(l), {2 + std::log(1 + std::exp(-1.0)), 4 + std::log(1 + std::exp(-1.0))}, 1e-15);
  }
  st::sum(st::logsumexp(g, {1})).backward();
  test::check_close(as_doubles(g.grad()), {1 / (1 + std::exp(1.0)), 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0)), 1 / (1 + std::exp(-1.0))}, 1e-15);
}

// The kernel along a dim that is not the last: x viewed as [outer, n, inner], reduced along n
// in column blocks (of up to 1024, several when inner is longer) and chunks of rows combined in
// a fixed order. Shapes either side of each split (one chunk or several; one column block or
// several, the last narrower; inner 2, 3, 16, 17), against a naive evaluation in long double;
// a NaN, an all -inf and a +inf column (PyTorch: NaN, NaN, NaN for softmax; NaN, -inf, inf for
// logsumexp); the same bits on one thread and two; the composition (a strided input) agrees.
TEST_CASE("softmax, log_softmax and logsumexp along a middle dim match a naive evaluation", "[softmax]") {
  struct span {
    std::int64_t outer, n, inner;
  };
  // [1, 65, 1025]: two chunks of two column blocks (513 and 512 wide) at a sanitizer's size
  const span shapes[] = {{1, 5000, 16}, {3, 7, 16}, {2, 30000, 3}, {1, 9, 1025},  {2, 130, 1025}, {1, 65, 1025},
                         {4, 3, 2},     {2, 1, 5},  {1, 70, 2100}, {1, 40, 2101}, {3, 65, 17},    {2, 300, 2}};
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct restore_threads {
    int n = st::get_num_threads();
    ~restore_threads() { st::set_num_threads(n); }
  } restore;
  for (const span& sh : shapes) {
    if (test::sanitized && sh.outer * sh.n * sh.inner > 100000) continue;
    const std::int64_t outer = sh.outer, n = sh.n, inner = sh.inner;
    INFO("[" << outer << ", " << n << ", " << inner << "]");
    std::vector<double> v(static_cast<std::size_t>(outer * n * inner));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i)) * 20 + static_cast<double>(i % 5);
    const auto at = [&](std::int64_t o, std::int64_t i, std::int64_t k) -> double& {
      return v[static_cast<std::size_t>((o * n + i) * inner + k)];
    };
    // the last outer slice's first columns and its last ones (another column block when inner
    // is split): a NaN, all -inf, a +inf
    const std::int64_t last = outer - 1;
    for (const std::int64_t c : {std::int64_t{0}, inner - 3}) {
      if (c < 0 || (c > 0 && c < 3)) continue;
      at(last, n / 2, c) = nan;
      for (std::int64_t i = 0; i < n; ++i) at(last, i, c + 1) = -inf;
      if (inner > 2) at(last, n - 1, c + 2) = inf;
    }
    std::vector<double> soft(v.size()), logsoft(v.size()), lse(static_cast<std::size_t>(outer * inner));
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t k = 0; k < inner; ++k) {
        long double m = -INFINITY, s = 0;
        bool bad = false;
        for (std::int64_t i = 0; i < n; ++i) {
          bad = bad || std::isnan(at(o, i, k));
          m = std::max<long double>(m, at(o, i, k));
        }
        const bool edge = bad || std::isinf(m);
        for (std::int64_t i = 0; i < n && !edge; ++i) s += std::exp(static_cast<long double>(at(o, i, k)) - m);
        for (std::int64_t i = 0; i < n; ++i) {
          const long double d = static_cast<long double>(at(o, i, k)) - m;
          soft[static_cast<std::size_t>((o * n + i) * inner + k)] = edge ? nan : static_cast<double>(std::exp(d) / s);
          logsoft[static_cast<std::size_t>((o * n + i) * inner + k)] = edge ? nan : static_cast<double>(d - std::log(s));
        }
        lse[static_cast<std::size_t>(o * inner + k)] = bad ? nan : std::isinf(m) ? static_cast<double>(m) : static_cast<double>(std::log(s) + m);
      }
    const auto x = st::from_vector<double>(v, {outer, n, inner});
    const auto xf = x.to<float>();
    st::set_num_threads(1);
    const st::Tensor<double> p1 = st::softmax(x, 1), l1 = st::log_softmax(x, 1), e1 = st::logsumexp(x, {1});
    const st::Tensor<float> pf1 = st::softmax(xf, 1);
    st::set_num_threads(2);
    const st::Tensor<double> p2 = st::softmax(x, 1), l2 = st::log_softmax(x, 1), e2 = st::logsumexp(x, {1});
    const st::Tensor<float> pf2 = st::softmax(xf, 1);
    test::check_close(as_doubles(p1), soft, 1e-13);
    test::check_close(as_doubles(l1), logsoft, 1e-13);
    test::check_close(as_doubles(e1), lse, 1e-14);
    test::check_close(as_doubles(pf1), soft, 2e-5);
    test::check_close(as_doubles(st::Tensor<float>(st::log_softmax(xf, 1))), logsoft, 2e-5);
    test::check_close(as_doubles(st::logsumexp(xf, {1})), lse, 2e-6);
    // the same bits on two threads (NaN where NaN)
    const auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
      REQUIRE(a.size() == b.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < a.size(); ++i) differ += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
      CHECK(differ == 0);
    };
    same(as_doubles(p1), as_doubles(p2));
    same(as_doubles(l1), as_doubles(l2));
    same(as_doubles(e1), as_doubles(e2));
    same(as_doubles(pf1), as_doubles(pf2));
    // the composition of a strided copy agrees, and the kernel writes in place into x itself
    const st::Tensor<double> wide = st::zeros<double>({outer, n, 2 * inner});
    wide.narrow(2, 0, inner).copy_(x);
    test::check_close(as_doubles(st::Tensor<double>(st::softmax(wide.narrow(2, 0, inner), 1))), soft, 1e-13);
    test::check_close(as_doubles(st::logsumexp(wide.narrow(2, 0, inner), {1})), lse, 1e-14);
    st::Tensor<double> y = x.clone();
    y.assign(st::log_softmax(y, 1));
    same(as_doubles(y), as_doubles(l1));
  }
}
