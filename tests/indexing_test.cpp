// SPDX-License-Identifier: MIT
// strata.indexing: the examples of PyTorch's documentation, advanced indexing (masks, index
// tensors adjacent and apart, with slices, none and ellipsis), in-place rules, autograd,
// and tests/golden/indexing.txt (tools/make_indexing_golden.py: random shapes and dtypes,
// strided and expanded inputs, gradients and every error message, from torch 1.13).
#include <catch2/catch.hpp>
#include <complex>
#include <map>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
using i64 = std::int64_t;
st::Tensor<i64> ints(std::initializer_list<i64> v, st::int_list sizes) { return st::from_vector<i64>(v, sizes); }
st::Tensor<i64> ints(std::initializer_list<i64> v) { return st::from_vector<i64>(v); }
template <class T>
std::vector<double> values(const st::Tensor<T>& t) {
  return as_doubles(t);
}
std::vector<double> dv(std::initializer_list<double> v) { return v; }
}  // namespace

TEST_CASE("gather, scatter, scatter_add: PyTorch's documentation examples", "[indexing]") {
  const auto t = st::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const st::Tensor<float> g = st::gather(t, 1, ints({0, 0, 1, 0}, {2, 2}));
  CHECK(values(g) == dv({1, 1, 4, 3}));

  const auto src = st::arange<float>(1, 11).view({2, 5});
  st::Tensor<float> a = st::zeros<float>({3, 5});
  st::scatter_(a, 0, ints({0, 1, 2, 0}, {1, 4}), src);
  CHECK(values(a) == dv({1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0}));
  const st::Tensor<float> b = st::scatter(st::zeros<float>({3, 5}), 1, ints({0, 1, 2, 0, 1, 4}, {2, 3}), src);
  CHECK(values(b) == dv({1, 2, 3, 0, 0, 6, 7, 0, 0, 8, 0, 0, 0, 0, 0}));
  const st::Tensor<double> c = st::scatter(st::full<double>({2, 4}, 2.0), 1, ints({2, 3}, {2, 1}), 1.23);
  CHECK(values(c) == dv({2, 2, 1.23, 2, 2, 2, 2, 1.23}));

  const auto ones = st::ones<float>({2, 5});
  const st::Tensor<float> s1 = st::scatter_add(st::zeros<float>({3, 5}), 0, ints({0, 1, 2, 0, 0}, {1, 5}), ones);
  CHECK(values(s1) == dv({1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}));
  st::Tensor<float> s2 = st::zeros<float>({3, 5});
  st::scatter_add_(s2, 0, ints({0, 1, 2, 0, 0, 0, 1, 2, 2, 2}, {2, 5}), ones);
  CHECK(values(s2) == dv({2, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0, 2, 1, 1}));
}

TEST_CASE("index_select, take, masked_select, nonzero, where, index_add: documentation examples", "[indexing]") {
  const auto x = st::arange<float>(12).view({3, 4});
  CHECK(values(st::index_select(x, 0, ints({0, 2}))) == dv({0, 1, 2, 3, 8, 9, 10, 11}));
  CHECK(values(st::index_select(x, 1, st::from_vector<std::int32_t>({0, 2}))) == dv({0, 2, 4, 6, 8, 10}));
  CHECK(st::index_select(x, 1, ints({0, 2})).sizes() == st::int_list{3, 2});

  const auto src = st::from_vector<i64>({4, 3, 5, 6, 7, 8}, {2, 3});
  CHECK(st::take(src, ints({0, 2, 5})).to_vector() == std::vector<i64>{4, 5, 8});
  CHECK(st::take(src.t(), ints({0, 1, -1}, {3, 1})).to_vector() == std::vector<i64>{4, 6, 8});

  const auto m = st::from_vector<bool>({false, true, true, false, true, false, false, false, true, false, true, true},
                                       {3, 4});
  CHECK(values(st::masked_select(x, m)) == dv({1, 2, 4, 8, 10, 11}));
  CHECK(values(st::masked_select(x, x > 7.5f)) == dv({8, 9, 10, 11}));  // an expression as the mask

  const auto nz = st::nonzero(st::from_vector<float>({1, 1, 1, 0, 1}));
  CHECK(nz.sizes() == st::int_list{4, 1});
  CHECK(nz.to_vector() == std::vector<i64>{0, 1, 2, 4});
  const auto d = st::from_vector<float>({0.6f, 0, 0, 0, 0, 0.4f, 0, 0, 0, 0, 1.2f, 0, 0, 0, 0, -0.4f}, {4, 4});
  CHECK(st::nonzero(d).to_vector() == std::vector<i64>{0, 0, 1, 1, 2, 2, 3, 3});
  const std::vector<st::Tensor<i64>> w = st::where(d != 0.0f);
  REQUIRE(w.size() == 2);
  CHECK(w[0].to_vector() == std::vector<i64>{0, 1, 2, 3});
  CHECK(w[1].to_vector() == std::vector<i64>{0, 1, 2, 3});
  CHECK(st::where(st::full<float>({}, 3.0f)).size() == 1);
  // the three-argument where of strata.expr still works beside it
  const st::Tensor<float> chosen = st::where(d > 0.5f, d, st::zeros<float>({4, 4}));
  CHECK(chosen.at({2, 2}) == 1.2f);

  const auto t = st::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const st::Tensor<float> ia = st::index_add(st::ones<float>({5, 3}), 0, ints({0, 4, 2}), t);
  CHECK(values(ia) == dv({2, 3, 4, 1, 1, 1, 8, 9, 10, 1, 1, 1, 5, 6, 7}));
  st::Tensor<float> ib = st::ones<float>({5, 3});
  st::index_add_(ib, 0, ints({0, 4, 2}), t, -1.0f);
  CHECK(values(ib) == dv({0, -1, -2, 1, 1, 1, -6, -7, -8, 1, 1, 1, -3, -4, -5}));
}

TEST_CASE("masked_fill: broadcast mask, scalar and 0-dim values, in place", "[indexing]") {
  const auto x = st::arange<std::int64_t>(6).view({2, 3});
  const auto m = st::from_vector<bool>({true, false, true});
  CHECK(st::masked_fill(x, m, 1.7).to_vector() == std::vector<i64>{1, 1, 1, 1, 4, 1});  // converted as torch does
  CHECK(st::masked_fill(x, m, st::full<float>({}, 9.5f)).to_vector() == std::vector<i64>{9, 1, 9, 9, 4, 9});
  // the result takes the broadcast shape
  CHECK(st::masked_fill(st::zeros<float>({3}), st::ones<bool>({2, 3}), 1.0f).sizes() == st::int_list{2, 3});
  st::Tensor<i64> y = x.clone();
  st::masked_fill_(y, x > 3, 0);
  CHECK(y.to_vector() == std::vector<i64>{0, 1, 2, 3, 0, 0});
  CHECK_THROWS_WITH(st::masked_fill_(st::zeros<float>({3}), st::ones<bool>({2, 3}), 1.0f),
                    "output with shape [3] doesn't match the broadcast shape [2, 3]");
  CHECK_THROWS_WITH(st::masked_fill(x, m, st::zeros<i64>({1})),
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).");
}

TEST_CASE("advanced indexing: masks, index tensors, slices, none and ellipsis", "[indexing][advanced]") {
  const auto x = st::arange<float>(24).view({2, 3, 4});
  // basic entries give views
  const st::Tensor<float> row = x.index({1, st::slice{}, 2});
  CHECK(row.is_alias_of(x));
  CHECK(values(row) == dv({14, 18, 22}));
  CHECK(x.index({st::ellipsis, 1}).sizes() == st::int_list{2, 3});
  CHECK(x.index({st::none, 0, st::slice{1, std::nullopt, 1}}).sizes() == st::int_list{1, 2, 4});
  CHECK(values(x.index({0, st::slice{std::nullopt, 3, 2}, -1})) == dv({3, 11}));

  // a mask over the first dims
  const auto mask = st::from_vector<bool>({true, false, true});
  const st::Tensor<float> picked = x.index({st::slice{}, mask});
  CHECK(picked.sizes() == st::int_list{2, 2, 4});
  CHECK(values(picked.index({1, 1})) == dv({20, 21, 22, 23}));
  const st::Tensor<float> positive = x.index({x > 20.0f});
  CHECK(values(positive) == dv({21, 22, 23}));

  // two index tensors, adjacent: the broadcast dims go where they were
  const st::Tensor<float> adj = x.index({st::slice{}, ints({0, 2}), ints({1, 3})});
  CHECK(adj.sizes() == st::int_list{2, 2});
  CHECK(values(adj) == dv({1, 11, 13, 23}));
  // apart (a slice between them): the broadcast dims go first
  const st::Tensor<float> apart = x.index({ints({0, 1}), st::slice{}, ints({3, 0})});
  CHECK(apart.sizes() == st::int_list{2, 3});
  CHECK(values(apart) == dv({3, 7, 11, 12, 16, 20}));
  // index tensors broadcast together; negative indices wrap
  const st::Tensor<float> bc = x.index({ints({0, 1}, {2, 1}), ints({-1}), ints({0, 1, 2, 3}, {1, 4})});
  CHECK(bc.sizes() == st::int_list{2, 4});
  CHECK(values(bc) == dv({8, 9, 10, 11, 20, 21, 22, 23}));
  // a std::vector of entries
  const std::vector<st::tensor_index> entries{1, ints({2, 0})};
  CHECK(values(x.index(entries)) == dv({20, 21, 22, 23, 12, 13, 14, 15}));
}

TEST_CASE("index_put_: masks, index tensors, accumulate, scalars", "[indexing][advanced]") {
  st::Tensor<float> x = st::zeros<float>({3, 4});
  x.index_put_({ints({0, 2})}, st::from_vector<float>({1, 2, 3, 4}));
  CHECK(values(x.index({2})) == dv({1, 2, 3, 4}));
  x.index_put_({x > 2.5f}, -1);
  CHECK(values(x.index({2})) == dv({1, 2, -1, -1}));
  x.index_put_({st::slice{}, 0}, 7.0f);
  CHECK(values(x.index({st::slice{}, 0})) == dv({7, 7, 7}));
  st::Tensor<float> acc = st::zeros<float>({3});
  acc.index_put_({ints({0, 0, 2, 0})}, st::ones<float>({4}), true);
  CHECK(values(acc) == dv({3, 0, 1}));
  const st::Tensor<float> out = st::index_put(acc, {ints({1})}, st::full<float>({}, 5.0f));
  CHECK(values(out) == dv({3, 5, 1}));
  CHECK(values(acc) == dv({3, 0, 1}));
}

// ---- tests/golden/indexing.txt ----
namespace {
struct tensor_line {
  std::string dtype, recipe;
  std::vector<i64> sizes;
  std::vector<double> v;  // complex: re im pairs
};
struct golden_case {
  bool error = false;
  std::string op, msg;
  std::map<std::string, std::string> params;
  std::map<std::string, tensor_line> in;
  std::optional<tensor_line> w, out;
  std::map<std::string, tensor_line> grad;
};

std::vector<double> numbers(std::istringstream& in) {
  std::vector<double> v;
  for (std::string s; in >> s;) v.push_back(std::stod(s));
  return v;
}

std::vector<golden_case> read_cases() {
  const std::vector<std::string> lines = golden::lines("indexing.txt");
  std::vector<golden_case> cases;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::istringstream head(lines[i]);
    golden_case c;
    std::string kind;
    head >> kind >> c.op;
    c.error = kind == "error";
    for (std::string kv; head >> kv;) c.params[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    for (++i; lines[i] != "end"; ++i) {
      std::istringstream in(lines[i]);
      std::string key, name, shape;
      in >> key;
      tensor_line t;
      if (key == "msg") {
        c.msg = lines[i].substr(4);
        continue;
      }
      if (key == "in") in >> name >> t.dtype >> t.recipe >> shape;
      else if (key == "grad") in >> name >> shape;
      else in >> t.dtype >> shape;
      t.sizes = golden::parse_shape(shape);
      t.v = numbers(in);
      if (key == "in") c.in[name] = t;
      else if (key == "grad") c.grad[name] = t;
      else if (key == "w") c.w = t;
      else c.out = t;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

template <class T>
st::Tensor<T> tensor_of(const std::vector<double>& v, const std::vector<i64>& sizes) {
  std::vector<T> e;
  if constexpr (test::is_complex_v<T>) {
    for (std::size_t k = 0; k + 1 < v.size(); k += 2)
      e.emplace_back(static_cast<typename T::value_type>(v[k]), static_cast<typename T::value_type>(v[k + 1]));
  } else {
    for (const double d : v) e.push_back(test::from_double<T>(d));
  }
  return st::from_vector<T>(e, sizes);
}

template <class T>
std::vector<double> flat(const st::Tensor<T>& t) {
  std::vector<double> out;
  for (const T& e : t.to_vector()) {
    out.push_back(test::to_double(e));
    if constexpr (test::is_complex_v<T>) out.push_back(static_cast<double>(e.imag()));
  }
  return out;
}

template <class T>
st::Tensor<T> view_of(const st::Tensor<T>& base, const std::string& recipe) {
  if (recipe == "t") {
    std::vector<i64> p;
    for (i64 d = base.dim() - 1; d >= 0; --d) p.push_back(d);
    return base.permute(p);
  }
  if (recipe == "step") return base.slice(-1, std::nullopt, std::nullopt, 2);
  if (recipe.rfind("expand:", 0) == 0) {
    std::vector<i64> s;
    std::istringstream in(recipe.substr(7));
    for (std::string p; std::getline(in, p, ',');) s.push_back(std::stoll(p));
    return base.expand(s);
  }
  return base;
}

// An input's base (a leaf, requiring grad when the case has its gradient) and its view.
template <class T>
struct input {
  st::Tensor<T> base, view;
};
template <class T>
input<T> make_input(const golden_case& c, const std::string& name) {
  const tensor_line& l = c.in.at(name);
  input<T> x;
  x.base = tensor_of<T>(l.v, l.sizes);
  if (c.grad.count(name)) x.base.requires_grad_();
  x.view = view_of(x.base, l.recipe);
  return x;
}
template <class T>
st::Tensor<T> fresh(const golden_case& c, const std::string& name) {
  const tensor_line& l = c.in.at(name);
  return view_of(tensor_of<T>(l.v, l.sizes), l.recipe);
}

template <class T>
T scalar_of(const std::string& s) {
  const auto colon = s.find(':');
  if constexpr (test::is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(std::stod(s.substr(0, colon))),
             colon == std::string::npos ? R(0) : static_cast<R>(std::stod(s.substr(colon + 1))));
  } else {
    return test::from_double<T>(std::stod(s));
  }
}

// Calls f with the named integer-like input (int64, int32; float32 in the error cases).
template <class F>
decltype(auto) with_index(const golden_case& c, const std::string& name, F f) {
  const std::string& dt = c.in.at(name).dtype;
  if (dt == "i32") return f(fresh<std::int32_t>(c, name));
  if (dt == "f32") return f(fresh<float>(c, name));
  return f(fresh<i64>(c, name));
}
// Calls f with a data input: of element type T, or float64 or int64 (the error cases).
template <class T, class F>
decltype(auto) with_data(const golden_case& c, const std::string& name, const std::map<std::string, input<T>>& data,
                         F f) {
  if (const auto it = data.find(name); it != data.end()) return f(it->second.view);
  if constexpr (!std::is_same_v<T, i64>)
    if (c.in.at(name).dtype == "i64") return f(fresh<i64>(c, name));
  return f(fresh<double>(c, name));
}

std::vector<st::tensor_index> entries_of(const golden_case& c) {
  std::vector<st::tensor_index> out;
  std::istringstream in(c.params.at("entries"));
  for (std::string tok; std::getline(in, tok, ',');) {
    if (tok == "e") out.emplace_back(st::ellipsis);
    else if (tok == "N") out.emplace_back(st::none);
    else if (tok[0] == 'i') out.emplace_back(std::stoll(tok.substr(2)));
    else if (tok[0] == 'm') out.emplace_back(fresh<bool>(c, "mask" + tok.substr(1)));
    else if (tok[0] == 't') {
      const std::string name = "idx" + tok.substr(1);
      if (c.in.at(name).dtype == "i32") out.emplace_back(fresh<std::int32_t>(c, name));
      else out.emplace_back(fresh<i64>(c, name));
    } else {  // s:start:stop:step
      std::vector<std::optional<i64>> p;
      std::istringstream parts(tok.substr(2));
      for (std::string v; std::getline(parts, v, ':');) p.push_back(v == "n" ? std::nullopt : std::optional<i64>(std::stoll(v)));
      out.emplace_back(st::slice{p[0], p[1], p[2].value_or(1)});
    }
  }
  return out;
}

template <class T>
void check_values(const std::vector<double>& got, const std::vector<double>& want) {
  if constexpr (std::is_floating_point_v<T> || test::is_complex_v<T>) {
    test::check_close(got, want, sizeof(decltype(std::real(T{}))) == 4 ? 1e-5 : 1e-12);
  } else {
    CHECK(got == want);
  }
}

// The operation of a case on the inputs' views; the main input is x (or self) of type T.
template <class T>
auto run_op(const golden_case& c, std::map<std::string, input<T>>& data) {
  const auto dim = [&] { return std::stoll(c.params.at("dim")); };
  const auto in = [&](const std::string& n) -> const st::Tensor<T>& { return data.at(n).view; };
  if (c.op == "index_select")
    return with_index(c, "index", [&](const auto& ix) { return st::index_select(in("x"), dim(), ix); });
  if (c.op == "gather") return with_index(c, "index", [&](const auto& ix) { return st::gather(in("x"), dim(), ix); });
  if (c.op == "scatter" && c.params.count("value"))
    return with_index(c, "index", [&](const auto& ix) {
      return st::scatter(in("self"), dim(), ix, scalar_of<T>(c.params.at("value")));
    });
  if (c.op == "scatter" || c.op == "scatter_add")
    return with_index(c, "index", [&](const auto& ix) {
      return with_data(c, "src", data, [&](const auto& src) {
        return c.op == "scatter" ? st::scatter(in("self"), dim(), ix, src) : st::scatter_add(in("self"), dim(), ix, src);
      });
    });
  if (c.op == "take") return with_index(c, "index", [&](const auto& ix) { return st::take(in("x"), ix); });
  if (c.op == "masked_fill" && c.params.count("value"))
    return st::masked_fill(in("x"), fresh<bool>(c, "mask"), scalar_of<T>(c.params.at("value")));
  if (c.op == "masked_fill")
    return with_data(c, "value", data, [&](const auto& v) { return st::masked_fill(in("x"), fresh<bool>(c, "mask"), v); });
  if (c.op == "masked_select") return st::masked_select(in("x"), fresh<bool>(c, "mask"));
  if (c.op == "index_add")
    return with_index(c, "index", [&](const auto& ix) {
      return with_data(c, "source", data, [&](const auto& src) {
        return st::index_add(in("self"), dim(), ix, src, scalar_of<T>(c.params.at("alpha")));
      });
    });
  if (c.op == "index") return in("x").index(entries_of(c));
  REQUIRE(c.op == "index_put");
  return with_data(c, "values", data, [&](const auto& v) {
    return st::index_put(in("x"), entries_of(c), v, c.params.at("accumulate") == "1");
  });
}

// The in-place form of a case on fresh inputs, when it has one (the destination is not expanded).
template <class T>
std::optional<st::Tensor<T>> run_inplace(const golden_case& c) {
  const std::string dst = c.in.count("self") ? "self" : "x";
  if (c.in.at(dst).recipe.rfind("expand", 0) == 0) return std::nullopt;
  st::Tensor<T> d = fresh<T>(c, dst);
  const auto dim = [&] { return std::stoll(c.params.at("dim")); };
  const auto ix = [&] { return fresh<i64>(c, "index"); };
  if (c.op == "scatter" && c.params.count("value")) st::scatter_(d, dim(), ix(), scalar_of<T>(c.params.at("value")));
  else if (c.op == "scatter") st::scatter_(d, dim(), ix(), fresh<T>(c, "src"));
  else if (c.op == "scatter_add") st::scatter_add_(d, dim(), ix(), fresh<T>(c, "src"));
  else if (c.op == "index_add" && c.in.at("index").dtype == "i64")
    st::index_add_(d, dim(), ix(), fresh<T>(c, "source"), scalar_of<T>(c.params.at("alpha")));
  else if (c.op == "masked_fill" && c.out->sizes == c.in.at(dst).sizes && c.in.at(dst).recipe != "t" &&
           c.params.count("value"))
    st::masked_fill_(d, fresh<bool>(c, "mask"), scalar_of<T>(c.params.at("value")));
  else if (c.op == "index_put")
    d.index_put_(entries_of(c), fresh<T>(c, "values"), c.params.at("accumulate") == "1");
  else return std::nullopt;
  return d;
}

template <class T>
void run_case(const golden_case& c) {
  std::map<std::string, input<T>> data;
  for (const auto& [name, l] : c.in)
    if (l.dtype == c.in.at(c.in.count("self") ? "self" : "x").dtype && name.rfind("idx", 0) != 0) data[name] = make_input<T>(c, name);
  if (c.error) {
    CHECK_THROWS_WITH(run_op<T>(c, data), c.msg);
    return;
  }
  if (c.op == "nonzero") {
    const st::Tensor<i64> nz = st::nonzero(data.at("x").view);
    CHECK(nz.sizes() == st::int_list(c.out->sizes));
    CHECK(flat(nz) == c.out->v);
    return;
  }
  const st::Tensor<T> y = run_op<T>(c, data);
  CHECK(y.sizes() == st::int_list(c.out->sizes));
  if (!(y.sizes() == st::int_list(c.out->sizes))) return;
  check_values<T>(flat(y), c.out->v);
  if (const auto d = run_inplace<T>(c)) check_values<T>(flat(*d), c.out->v);
  if (!c.w) return;
  y.backward(tensor_of<T>(c.w->v, c.w->sizes));
  for (const auto& [name, g] : c.grad) {
    INFO("gradient of " << name);
    const input<T>& x = data.at(name);
    REQUIRE(x.base.sizes() == st::int_list(g.sizes));
    check_values<T>(x.base.has_grad() ? flat(x.base.grad()) : std::vector<double>(g.v.size(), 0.0), g.v);
  }
}
}  // namespace

TEST_CASE("indexing operations match PyTorch: values, gradients, in-place forms, errors", "[indexing][golden]") {
  int cases = 0, errors = 0;
  for (const golden_case& c : read_cases()) {
    std::ostringstream what;
    what << (c.error ? "error " : "case ") << c.op;
    for (const auto& [k, v] : c.params) what << " " << k << "=" << v;
    for (const auto& [n, l] : c.in) what << " | " << n << " " << l.dtype << " " << l.recipe << " " << st::int_list(l.sizes);
    INFO(what.str());
    const std::string& dt = c.in.at(c.in.count("self") ? "self" : "x").dtype;
    if (dt == "f32") run_case<float>(c);
    else if (dt == "f64") run_case<double>(c);
    else if (dt == "c64") run_case<std::complex<float>>(c);
    else if (dt == "c128") run_case<std::complex<double>>(c);
    else if (dt == "i64") run_case<i64>(c);
    else if (dt == "i32") run_case<std::int32_t>(c);
    else run_case<bool>(c);
    ++(c.error ? errors : cases);
  }
  CHECK(cases == 373);
  CHECK(errors == 61);
}

TEST_CASE("in-place indexing: autograd's rules, expanded and aliased destinations", "[indexing]") {
  st::Tensor<float> w = st::zeros<float>({3}).requires_grad_();
  CHECK_THROWS_AS(st::scatter_(w, 0, ints({0}), st::ones<float>({1})), st::error);
  CHECK_THROWS_AS(w.index_put_({ints({0})}, 1.0f), st::error);
  CHECK_THROWS_AS(st::masked_fill_(w, st::ones<bool>({3}), 1.0f), st::error);
  CHECK_THROWS_AS(st::index_add_(w, 0, ints({0}), st::ones<float>({1})), st::error);
  {
    const st::no_grad guard;  // the leaf may be written with recording off
    st::masked_fill_(w, st::from_vector<bool>({false, true, false}), 2.0f);
  }
  CHECK(values(w.detach()) == dv({0, 2, 0}));
  // writing a value that requires grad into a tensor is not recorded: refused
  st::Tensor<float> plain = st::zeros<float>({3});
  CHECK_THROWS_AS(plain.index_put_({ints({0})}, st::ones<float>({1}).requires_grad_()), st::error);
  // a destination whose elements share memory
  const st::Tensor<float> e = st::zeros<float>({3}).expand({2, 3});
  CHECK_THROWS_AS(e.index_put_({ints({0})}, 1.0f), st::overlap_error);
  CHECK_THROWS_AS(st::scatter_(e, 0, ints({0}, {1, 1}), 1.0f), st::overlap_error);
  CHECK_THROWS_AS(st::masked_fill_(e, st::ones<bool>({3}), 1.0f), st::overlap_error);
  // a source or index that is (part of) the destination is read before anything is written
  st::Tensor<float> a = st::arange<float>(4);
  st::scatter_(a, 0, ints({3, 2, 1, 0}), a);
  CHECK(values(a) == dv({3, 2, 1, 0}));
  st::Tensor<float> b = st::arange<float>(5);
  b.index_put_({ints({1, 2})}, b.index({st::slice{0, 2}}));
  CHECK(values(b) == dv({0, 0, 1, 3, 4}));
  st::Tensor<i64> ix = ints({1, 0, 2});
  st::scatter_(ix, 0, ix, ints({7, 8, 9}));
  CHECK(ix.to_vector() == std::vector<i64>{8, 7, 9});
  // a bad index throws before anything is written
  st::Tensor<float> c = st::zeros<float>({3});
  CHECK_THROWS_WITH(st::scatter_(c, 0, ints({0, 5}), 1.0f), "index 5 is out of bounds for dimension 0 with size 3");
  CHECK_THROWS_WITH(c.index_put_({ints({1, -4})}, 1.0f), "index -4 is out of bounds for dimension 0 with size 3");
  CHECK(values(c) == dv({0, 0, 0}));
}

TEST_CASE("index_put_ and index take expressions; where and nonzero of NaN and complex", "[indexing]") {
  st::Tensor<float> x = st::arange<float>(6).view({2, 3});
  const st::Tensor<float> y = st::ones<float>({2, 3});
  x.index_put_({x > 3.5f}, y.index({0, st::slice{0, 2}}) * 10.0f - 1.0f);  // an expression, evaluated
  CHECK_THROWS_WITH(x.index_put_({x > 3.5f}, y),
                    "shape mismatch: value tensor of shape [2, 3] cannot be broadcast to indexing result of shape [2]");
  CHECK(values(x) == dv({0, 1, 2, 3, 9, 9}));
  CHECK(values(x.index({x.index({st::slice{}, 0}) > 1.0f})) == dv({3, 9, 9}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(st::nonzero(st::from_vector<float>({0.0f, -0.0f, nan, 1.0f})).to_vector() == std::vector<i64>{2, 3});
  const auto z = st::from_vector<std::complex<double>>({{0, 0}, {0, 1}, {1, 0}});
  CHECK(st::nonzero(z).to_vector() == std::vector<i64>{1, 2});
  CHECK(st::where(st::full<bool>({}, false))[0].sizes() == st::int_list{0});
  CHECK(st::nonzero(st::zeros<float>({2, 0, 3})).sizes() == st::int_list{0, 3});
}

TEST_CASE("gathers read strided inputs in place", "[indexing]") {
  const st::Tensor<float> x = st::arange<float>(64 * 32).view({64, 32}).t();  // transposed
  const st::Tensor<i64> idx = ints({5, 0, 31, 7});
  const st::Tensor<i64> idx2 = ints({3, 63, 1, 2}, {4, 1});
  // each allocates its result only
  auto before = st::thread_allocations();
  const st::Tensor<float> a = st::index_select(x, 0, idx);
  CHECK(st::thread_allocations().blocks - before.blocks == 1);
  before = st::thread_allocations();
  const st::Tensor<float> b = st::gather(x, 1, idx2);
  CHECK(st::thread_allocations().blocks - before.blocks == 1);
  before = st::thread_allocations();
  const st::Tensor<float> c = x.index({idx, st::slice{0, 4}});
  CHECK(st::thread_allocations().blocks - before.blocks == 1);
  CHECK(a.at({0, 1}) == 32.0f + 5);
  CHECK(values(b) == dv({3 * 32, 63 * 32 + 1, 1 * 32 + 2, 2 * 32 + 3}));
  CHECK(c.sizes() == st::int_list{4, 4});
  CHECK(c.at({2, 3}) == 3 * 32 + 31.0f);
}

TEST_CASE("repeated indices add up in the same order for any thread count; gathers split over threads",
          "[indexing][threads]") {
  const int threads = st::get_num_threads();
  const i64 n = 1 << 18;
  const st::Tensor<float> src = st::sin(st::arange<float>(n) * 0.37f);
  const st::Tensor<i64> idx = (st::arange<i64>(n) * 7919) % 97;
  const st::Tensor<float> table = st::arange<float>(n) * 0.5f;
  const st::Tensor<i64> perm = (st::arange<i64>(n) * 7919) % n;
  std::vector<std::vector<float>> sums, puts, gathered;
  for (const int t : {1, 4}) {
    st::set_num_threads(t);
    sums.push_back(st::scatter_add(st::zeros<float>({97}), 0, idx, src).to_vector());
    st::Tensor<float> acc = st::zeros<float>({97});
    acc.index_put_({idx}, src, true);
    puts.push_back(acc.to_vector());
    gathered.push_back(st::take(table, perm).to_vector());
  }
  st::set_num_threads(threads);
  CHECK(sums[0] == sums[1]);
  CHECK(puts[0] == puts[1]);
  CHECK(sums[0] == puts[0]);
  CHECK(gathered[0] == gathered[1]);
  CHECK(gathered[0][3] == static_cast<float>((3 * 7919) % n) * 0.5f);
}
