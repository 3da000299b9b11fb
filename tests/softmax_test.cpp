// SPDX-License-Identifier: MIT
// softmax, log_softmax and logsumexp against PyTorch 1.13 (tests/golden/softmax.txt, made by
// tools/make_softmax_golden.py): values and gradients, large magnitudes and infinities;
// what they allocate; their use inside expressions.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
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
