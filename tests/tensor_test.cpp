// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include "golden.hpp"
import strata;
using namespace strata;

namespace {
using I = std::int64_t;
using ivec = std::vector<I>;

ivec to_ivec(int_list l) { return ivec(l.begin(), l.end()); }

// Applies one golden op line ("narrow 1 0 2") to t.
Tensor<I> apply_op(const Tensor<I>& t, const std::string& op) {
  std::istringstream in(op);
  std::string name;
  in >> name;
  if (name == "movedim") {
    std::string rest;
    std::getline(in, rest);
    const auto halves = golden::split(rest, ':');
    return t.movedim(golden::parse_ints(halves[0]), golden::parse_ints(halves[1]));
  }
  std::string rest;
  std::getline(in, rest);
  if (name == "as_strided") {  // "as_strided sizes : strides [: offset]"
    const auto parts = golden::split(rest, ':');
    if (parts.size() == 2) return t.as_strided(golden::parse_ints(parts[0]), golden::parse_ints(parts[1]));
    return t.as_strided(golden::parse_ints(parts[0]), golden::parse_ints(parts[1]),
                        golden::parse_ints(parts[2]).at(0));
  }
  const ivec a = golden::parse_ints(rest);
  if (name == "view") return t.view(a);
  if (name == "reshape") return t.reshape(a);
  if (name == "expand") return t.expand(a);
  if (name == "narrow") return t.narrow(a[0], a[1], a[2]);
  if (name == "slice") return t.slice(a[0], a[1], a[2], a[3]);
  if (name == "select") return t.select(a[0], a[1]);
  if (name == "permute") return t.permute(a);
  if (name == "transpose") return t.transpose(a[0], a[1]);
  if (name == "t") return t.t();
  if (name == "diagonal") return t.diagonal(a[0], a[1], a[2]);
  if (name == "unfold") return t.unfold(a[0], a[1], a[2]);
  if (name == "squeeze") return t.squeeze();
  if (name == "squeezedim") return t.squeeze(a[0]);
  if (name == "unsqueeze") return t.unsqueeze(a[0]);
  if (name == "flatten") return t.flatten(a[0], a[1]);
  throw std::runtime_error("unknown op " + name);
}

// A golden view result: "sizes strides offset contiguous values..." (views.txt, views_size1.txt).
struct view_result {
  ivec sizes, strides;
  I offset = 0;
  bool contiguous = false;
  ivec values;
};

view_result parse_view_result(const std::string& s) {
  const auto close = s.find(']');
  const auto rest = s.substr(close + 2);
  const auto close2 = rest.find(']');
  const auto tail = golden::parse_ints(rest.substr(close2 + 1));
  return {golden::parse_shape(s.substr(0, close + 1)), golden::parse_shape(rest.substr(0, close2 + 1)),
          tail.at(0), tail.at(1) == 1, ivec(tail.begin() + 2, tail.end())};
}

// Every element of t lies inside its storage.
bool inside_storage(const Tensor<float>& t) {
  if (t.numel() == 0) return t.storage_offset() >= 0;
  I lo = t.storage_offset(), hi = t.storage_offset();
  for (I d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) lo += (t.size(d) - 1) * t.stride(d);
    else hi += (t.size(d) - 1) * t.stride(d);
  }
  return lo >= 0 && hi < t.storage().size();
}
}  // namespace

TEST_CASE("factories and accessors", "[tensor]") {
  auto z = zeros<float>({2, 3});
  CHECK(to_ivec(z.sizes()) == ivec{2, 3});
  CHECK(to_ivec(z.strides()) == ivec{3, 1});
  CHECK(z.size(-1) == 3);
  CHECK(z.stride(0) == 3);
  CHECK(z.dim() == 2);
  CHECK(z.numel() == 6);
  CHECK(z.dtype() == dtype::float32);
  CHECK(z.is_contiguous());
  CHECK(z.to_vector() == std::vector<float>(6, 0.0f));
  CHECK(ones<std::int32_t>({3}).to_vector() == std::vector<std::int32_t>{1, 1, 1});
  CHECK(full<double>({2}, 2.5).to_vector() == std::vector<double>{2.5, 2.5});
  CHECK(empty<std::int16_t>({4, 0}).numel() == 0);
  auto a = arange(5);
  static_assert(std::is_same_v<decltype(a), Tensor<std::int64_t>>);
  CHECK(a.to_vector() == std::vector<I>{0, 1, 2, 3, 4});
  CHECK(arange<float>(3).to_vector() == std::vector<float>{0, 1, 2});
  CHECK(arange(1, 10, 3).to_vector() == std::vector<I>{1, 4, 7});
  CHECK(arange(5, 0, -2).to_vector() == std::vector<I>{5, 3, 1});
  auto f = arange(0.0, 1.0, 0.25);
  static_assert(std::is_same_v<decltype(f), Tensor<float>>);
  CHECK(f.to_vector() == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
  CHECK(arange<double>(1.0, 2.0, 0.3).numel() == 4);
  CHECK_THROWS_AS(arange(0, 5, 0), error);
  CHECK_THROWS_AS(arange(5, 0, 1), error);
  auto v = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(v.at({1, 2}) == 6.0f);
  CHECK(v.at({-1, 0}) == 4.0f);
  CHECK_THROWS_WITH(v.at({2, 0}), "index 2 is out of bounds for dimension 0 with size 2");
  CHECK_THROWS_AS(v.at({0}), index_error);
  CHECK_THROWS_AS(from_vector<float>({1, 2, 3}, {2, 2}), shape_error);
  CHECK(eye<int>(3).to_vector() == std::vector<int>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(eye<float>(2, 3).to_vector() == std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(from_vector<float>({4.5f}).item() == 4.5f);
  CHECK(zeros<float>({}).item() == 0.0f);
  CHECK_THROWS_WITH(zeros<float>({2}).item(), "a Tensor with 2 elements cannot be converted to Scalar");
  CHECK_THROWS_AS(zeros<float>({2, -3}), shape_error);
  Tensor<float> d;
  CHECK(d.numel() == 0);
  CHECK(d.dim() == 1);
  auto q = full<float128>({2}, float128(1) / 3);
  CHECK(q.to_vector()[1] * 3 == 1);
}

TEST_CASE("handles share; clone copies; rvalue views write through", "[tensor]") {
  auto t = zeros<float>({2, 3});
  auto u = t;  // a handle copy
  u.at({0, 0}) = 1.0f;
  CHECK(t.at({0, 0}) == 1.0f);
  auto c = t.clone();
  c.at({0, 0}) = 5.0f;
  CHECK(t.at({0, 0}) == 1.0f);
  t[0][1] = 3.14f;
  CHECK(t.at({0, 1}) == 3.14f);
  t.select(0, 1).select(0, 2).fill_(2.5f);
  CHECK(t.at({1, 2}) == 2.5f);
  t[1] = from_vector<float>({7, 8, 9});
  CHECK(t.to_vector() == std::vector<float>{1, 3.14f, 0, 7, 8, 9});
  u = zeros<float>({1});  // an lvalue handle rebinds
  CHECK(t.numel() == 6);
  CHECK(u.numel() == 1);
  // copy_ broadcasts and converts like PyTorch's copy_
  auto i = zeros<std::int32_t>({2, 3});
  i.copy_(from_vector<double>({1.9, -2.5, 3.0}));
  CHECK(i.to_vector() == std::vector<std::int32_t>{1, -2, 3, 1, -2, 3});
  // an overlapping copy reads the source before writing
  auto r = arange<float>(5);
  r.narrow(0, 1, 4).copy_(r.narrow(0, 0, 4));
  CHECK(r.to_vector() == std::vector<float>{0, 0, 1, 2, 3});
}

TEST_CASE("seed: rand(4 4).view(2 8) shares storage", "[tensor][view]") {
  auto base = arange<float>(16).view({4, 4});
  auto v = base.view({2, 8});
  CHECK(to_ivec(v.sizes()) == ivec{2, 8});
  CHECK(to_ivec(v.strides()) == ivec{8, 1});
  v.at({1, 3}) = -1.0f;
  CHECK(base.at({2, 3}) == -1.0f);
  CHECK(v.data_ptr() == base.data_ptr());
}

TEST_CASE("seed: chained diagonals", "[tensor][view]") {
  auto t = arange<float>(32).view({2, 4, 4});
  auto d = t.diagonal(-1, 1, 2);
  CHECK(to_ivec(d.sizes()) == ivec{2, 3});
  CHECK(to_ivec(d.strides()) == ivec{16, 5});
  CHECK(d.storage_offset() == 4);
  CHECK(d.to_vector() == std::vector<float>{4, 9, 14, 20, 25, 30});
  auto dd = d.diagonal(1, 0, 1);
  CHECK(to_ivec(dd.sizes()) == ivec{2});
  CHECK(to_ivec(dd.strides()) == ivec{21});
  CHECK(dd.storage_offset() == 9);
  CHECK(dd.to_vector() == std::vector<float>{9, 30});
}

TEST_CASE("seed: expand narrow permute unfold", "[tensor][view]") {
  auto e = arange<float>(12).view({3, 1, 4}).expand({2, 3, 2, 4});
  CHECK(to_ivec(e.sizes()) == ivec{2, 3, 2, 4});
  CHECK(to_ivec(e.strides()) == ivec{0, 4, 0, 1});
  CHECK(e.at({1, 2, 1, 3}) == 11.0f);
  auto x = arange<float>(24).view({2, 3, 4});
  auto n = x.narrow(2, 1, 2);
  CHECK(to_ivec(n.sizes()) == ivec{2, 3, 2});
  CHECK(to_ivec(n.strides()) == ivec{12, 4, 1});
  CHECK(n.storage_offset() == 1);
  CHECK_FALSE(n.is_contiguous());
  auto p = x.permute({2, 0, 1});
  CHECK(to_ivec(p.sizes()) == ivec{4, 2, 3});
  CHECK(to_ivec(p.strides()) == ivec{1, 12, 4});
  CHECK(p.at({3, 1, 2}) == 23.0f);
  auto u = x.unfold(1, 2, 1);
  CHECK(to_ivec(u.sizes()) == ivec{2, 2, 4, 2});
  CHECK(to_ivec(u.strides()) == ivec{12, 4, 1, 4});
  CHECK(u.at({1, 1, 3, 1}) == 23.0f);
  CHECK(u.at({0, 0, 1, 1}) == 5.0f);
}

TEST_CASE("view chains match PyTorch (golden)", "[tensor][view]") {
  int valid = 0, invalid = 0;
  for (const auto& line : golden::lines("views.txt")) {
    const auto parts = golden::split(line, '|');
    const auto shape = golden::parse_shape(parts[0]);
    Tensor<I> t = arange(numel_of(shape)).view(shape);
    const std::string& expect = parts.back();
    INFO(line);
    if (expect[0] == '!') {
      ++invalid;
      bool threw_index = false, threw = false;
      try {
        for (std::size_t k = 1; k + 1 < parts.size(); ++k) t = apply_op(t, parts[k]);
      } catch (const index_error&) {
        threw = threw_index = true;
      } catch (const error&) {
        threw = true;
      }
      CHECK(threw);
      CHECK(threw_index == (expect == "!index"));
      continue;
    }
    ++valid;
    for (std::size_t k = 1; k + 1 < parts.size(); ++k) t = apply_op(t, parts[k]);
    const view_result want = parse_view_result(expect);
    CHECK(to_ivec(t.sizes()) == want.sizes);
    CHECK(to_ivec(t.strides()) == want.strides);
    CHECK(t.storage_offset() == want.offset);
    CHECK(t.is_contiguous() == want.contiguous);
    CHECK(t.to_vector() == want.values);
  }
  CHECK(valid > 250);
  CHECK(invalid > 100);
}

TEST_CASE("view ops on size-1-heavy geometry match PyTorch exactly (golden)", "[view][golden]") {
  // Every line: base shape | ops (the last one or two are the ops under test) | result or
  // "!" + the class of the exception PyTorch raises. Strides are compared for every dim,
  // size-1 dims and empty tensors included: PyTorch's exact strides are the point.
  int valid = 0, invalid = 0;
  for (const auto& line : golden::lines("views_size1.txt")) {
    const auto parts = golden::split(line, '|');
    const auto shape = golden::parse_shape(parts[0]);
    Tensor<I> t = arange(numel_of(shape)).view(shape);
    const std::string& expect = parts.back();
    INFO(line);
    if (expect[0] == '!') {
      ++invalid;
      const bool want_index = expect == "!IndexError";
      REQUIRE((want_index || expect == "!RuntimeError" || expect == "!ValueError"));
      bool threw = false, threw_index = false;
      try {
        for (std::size_t k = 1; k + 1 < parts.size(); ++k) t = apply_op(t, parts[k]);
      } catch (const index_error&) {
        threw = threw_index = true;
      } catch (const error&) {
        threw = true;
      }
      CHECK(threw);
      CHECK(threw_index == want_index);
      continue;
    }
    ++valid;
    for (std::size_t k = 1; k + 1 < parts.size(); ++k) t = apply_op(t, parts[k]);
    const view_result want = parse_view_result(expect);
    INFO("strata: sizes " << to_string(t.sizes()) << " strides " << to_string(t.strides()) << " offset "
                          << t.storage_offset());
    CHECK(to_ivec(t.sizes()) == want.sizes);
    CHECK(to_ivec(t.strides()) == want.strides);
    CHECK(t.storage_offset() == want.offset);
    CHECK(t.is_contiguous() == want.contiguous);
    CHECK(t.to_vector() == want.values);
  }
  CHECK(valid > 600);
  CHECK(invalid > 150);
}

TEST_CASE("regression: expand of a 0-dim tensor gives every dim stride 0, as PyTorch", "[view][golden]") {
  const auto x = arange(5);
  const auto e = x[3].expand({1});  // 0-dim -> [1]
  CHECK(to_ivec(e.sizes()) == ivec{1});
  CHECK(to_ivec(e.strides()) == ivec{0});
  CHECK(e.storage_offset() == 3);
  CHECK(e.item() == 3);
  const auto e3 = x[3].expand({1, 1, 3});  // leading new dims, size 1 or not: stride 0
  CHECK(to_ivec(e3.sizes()) == ivec{1, 1, 3});
  CHECK(to_ivec(e3.strides()) == ivec{0, 0, 0});
  CHECK(e3.to_vector() == ivec{3, 3, 3});
  // Not so over a tensor with dims: a new leading dim kept at size 1 strides over the dims
  // after it, as PyTorch's inferExpandGeometry does (torch: [3, 3, 1]).
  const auto m = arange(12).view({4, 3});
  CHECK(to_ivec(m[3].expand({1, 1, 3}).strides()) == ivec{3, 3, 1});
  CHECK(to_ivec(m[3].expand({2, 1, 3}).strides()) == ivec{0, 3, 1});
  CHECK(to_ivec(m[3].expand({1, 2, 3}).strides()) == ivec{0, 0, 1});
  CHECK(to_ivec(zeros<float>({}).expand({1, 1}).strides()) == ivec{0, 0});
  CHECK(to_ivec(zeros<float>({}).expand({2, 1}).strides()) == ivec{0, 0});
  CHECK(to_ivec(zeros<float>({}).expand({}).strides()) == ivec{});
}

TEST_CASE("views: slice select transpose movedim squeeze flatten as_strided", "[tensor][view]") {
  auto x = arange<float>(24).view({2, 3, 4});
  auto s = x.slice(2, -3, 100, 2);
  CHECK(to_ivec(s.sizes()) == ivec{2, 3, 2});
  CHECK(to_ivec(s.strides()) == ivec{12, 4, 2});
  CHECK(s.storage_offset() == 1);
  CHECK(x.slice(1, 2, 1).numel() == 0);
  CHECK(x[1].storage_offset() == 12);
  CHECK(to_ivec(x.select(-1, 3).sizes()) == ivec{2, 3});
  CHECK(to_ivec(x.transpose(0, 2).strides()) == ivec{1, 4, 12});
  CHECK(to_ivec(x.movedim(0, 2).sizes()) == ivec{3, 4, 2});
  CHECK(to_ivec(x.movedim({0, 1}, {2, 0}).sizes()) == ivec{3, 4, 2});
  CHECK(to_ivec(x.view({1, 24, 1}).squeeze().sizes()) == ivec{24});
  CHECK(to_ivec(x.unsqueeze(-1).sizes()) == ivec{2, 3, 4, 1});
  CHECK(to_ivec(x.unsqueeze(1).strides()) == ivec{12, 12, 4, 1});
  auto f = x.flatten(1);
  CHECK(to_ivec(f.sizes()) == ivec{2, 12});
  CHECK(f.data_ptr() == x.data_ptr());
  auto ft = x.transpose(0, 1).flatten();  // not viewable: a copy
  CHECK_FALSE(ft.storage().is_alias_of(x.storage()));
  CHECK(ft.to_vector()[4] == 12.0f);
  auto a = x.as_strided({3, 3}, {1, 1}, 2);
  CHECK(a.to_vector() == std::vector<float>{2, 3, 4, 3, 4, 5, 4, 5, 6});
  CHECK(to_ivec(x[0].t().sizes()) == ivec{4, 3});
  CHECK(to_ivec(zeros<float>({}).unfold(0, 1, 1).sizes()) == ivec{1});
  CHECK(to_ivec(zeros<float>({}).flatten().sizes()) == ivec{1});
  CHECK(to_ivec(x.broadcast_to({5, 2, 3, 4}).strides()) == ivec{0, 12, 4, 1});
  CHECK(to_ivec(zeros<float>({1}).expand_as(x).sizes()) == ivec{2, 3, 4});
  CHECK(x.reshape({4, -1}).data_ptr() == x.data_ptr());
}

TEST_CASE("every view op rejects bad arguments with the right exception", "[tensor][view][errors]") {
  auto x = arange<float>(24).view({2, 3, 4});
  CHECK_THROWS_AS(x.view({5, 5}), shape_error);
  CHECK_THROWS_WITH(x.view({5, -1}), "shape '[5, -1]' is invalid for input of size 24");
  CHECK_THROWS_WITH(x.view({-1, -1}), "only one dimension can be inferred");
  CHECK_THROWS_AS(x.transpose(0, 1).view({24}), shape_error);
  CHECK_THROWS_AS(x.reshape({7}), shape_error);
  CHECK_THROWS_AS(x.as_strided({5, 5}, {5, 1}), shape_error);
  CHECK_THROWS_AS(x.as_strided({2}, {1, 1}), shape_error);
  CHECK_THROWS_AS(x.as_strided({2}, {-1}), shape_error);
  CHECK_THROWS_WITH(x.expand({2, 5, 4}),
                    "The expanded size of the tensor (5) must match the existing size (3) at non-singleton "
                    "dimension 1.  Target sizes: [2, 5, 4].  Tensor sizes: [2, 3, 4]");
  CHECK_THROWS_AS(x.expand({3, 4}), shape_error);
  CHECK_THROWS_AS(x.expand({-1, 2, 3, 4}), shape_error);
  CHECK_THROWS_AS(x.narrow(3, 0, 1), index_error);
  CHECK_THROWS_AS(x.narrow(0, 3, 1), index_error);
  CHECK_THROWS_AS(x.narrow(0, 1, 2), shape_error);
  CHECK_THROWS_AS(x.narrow(0, 0, -1), shape_error);
  CHECK_THROWS_AS(x.slice(0, 0, 1, 0), shape_error);
  CHECK_THROWS_AS(x.slice(5), index_error);
  CHECK_THROWS_WITH(x.select(1, 3), "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1");
  CHECK_THROWS_AS(x.select(-4, 0), index_error);
  CHECK_THROWS_AS(zeros<float>({}).select(0, 0), index_error);
  CHECK_THROWS_AS(x.permute({0, 1}), shape_error);
  CHECK_THROWS_AS(x.permute({0, 1, 1}), shape_error);
  CHECK_THROWS_AS(x.permute({0, 1, 3}), index_error);
  CHECK_THROWS_AS(x.transpose(0, 3), index_error);
  CHECK_THROWS_WITH(x.t(), "t() expects a tensor with <= 2 dimensions, but self is 3D");
  CHECK_THROWS_AS(x.movedim({0}, {0, 1}), shape_error);
  CHECK_THROWS_AS(x.movedim({0, 0}, {1, 2}), shape_error);
  CHECK_THROWS_WITH(x.diagonal(0, 1, 1), "diagonal dimensions cannot be identical 1, 1");
  CHECK_THROWS_AS(x.diagonal(0, 0, 3), index_error);
  CHECK_THROWS_AS(arange<float>(3).diagonal(), index_error);  // dim 1 of a 1-D tensor
  CHECK_THROWS_WITH(x.unfold(1, 4, 1), "maximum size for tensor at dimension 1 is 3 but size is 4");
  CHECK_THROWS_AS(x.unfold(1, 2, 0), shape_error);
  CHECK_THROWS_AS(x.squeeze(3), index_error);
  CHECK_THROWS_AS(x.unsqueeze(4), index_error);
  CHECK_THROWS_AS(x.flatten(2, 1), shape_error);
  CHECK_THROWS_AS(x.size(3), index_error);
  CHECK_THROWS_AS(x.stride(-4), index_error);
}

TEST_CASE("fuzz: random view arguments throw a strata error or stay inside storage", "[tensor][view][fuzz]") {
  std::mt19937_64 gen(12345);
  auto rnd = [&](I lo, I hi) { return std::uniform_int_distribution<I>(lo, hi)(gen); };
  int produced = 0, thrown = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    ivec shape;
    for (I r = rnd(0, 4); r > 0; --r) shape.push_back(rnd(0, 4));
    Tensor<float> t = zeros<float>(shape);
    for (int step = 0; step < 4; ++step) {
      const I n = t.dim();
      auto d = [&] { return rnd(-n - 2, n + 1); };
      auto v = [&] { return rnd(-6, 6); };
      auto list = [&](I len) { ivec l; for (I i = 0; i < len; ++i) l.push_back(rnd(-2, 6)); return l; };
      try {
        switch (rnd(0, 16)) {
          case 0: t = t.view(list(rnd(0, 4))); break;
          case 1: t = t.reshape(list(rnd(0, 4))); break;
          case 2: t = t.as_strided(list(rnd(0, 3)), list(rnd(0, 3)), rnd(-1, 8)); break;
          case 3: t = t.expand(list(rnd(0, 5))); break;
          case 4: t = t.narrow(d(), v(), v()); break;
          case 5: t = t.slice(d(), v(), v(), v()); break;
          case 6: t = t.select(d(), v()); break;
          case 7: t = t.permute(list(rnd(0, 5))); break;
          case 8: t = t.transpose(d(), d()); break;
          case 9: t = t.t(); break;
          case 10: { const I k = rnd(0, 3); t = t.movedim(list(k), list(rnd(0, 1) ? k : k + 1)); break; }
          case 11: t = t.diagonal(v(), d(), d()); break;
          case 12: t = t.unfold(d(), v(), v()); break;
          case 13: t = t.squeeze(d()); break;
          case 14: t = t.unsqueeze(d()); break;
          case 15: t = t.flatten(d(), d()); break;
          default: t = t.squeeze(); break;
        }
        ++produced;
      } catch (const error&) {
        ++thrown;
      }
      INFO("sizes " << to_string(t.sizes()) << " strides " << to_string(t.strides()) << " offset "
                    << t.storage_offset());
      REQUIRE(inside_storage(t));
      REQUIRE(static_cast<I>(t.to_vector().size()) == t.numel());
    }
  }
  CHECK(produced > 10000);
  CHECK(thrown > 10000);
}

TEST_CASE("from_blob views memory strata does not own and calls the deleter once", "[tensor]") {
  std::vector<float> buffer = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  int deleted = 0;
  {
    auto t = strata::from_blob<float>(buffer.data(), {3, 4}, [&](float* p) {
      CHECK(p == buffer.data());
      ++deleted;
    });
    CHECK(t.data_ptr() == buffer.data());
    auto col = t.select(1, 2);  // a view keeps the memory too
    t = strata::zeros<float>({1});
    CHECK(deleted == 0);
    col.fill_(-1.0f);  // writes reach the caller's memory
    CHECK(buffer[2] == -1.0f);
    CHECK(buffer[10] == -1.0f);
  }
  CHECK(deleted == 1);
  // Strides in elements: every other element of each row, rows 4 apart.
  const auto s = strata::from_blob<float>(buffer.data(), {3, 2}, {4, 2});
  CHECK(s.to_vector() == std::vector<float>{0, -1, 4, -1, 8, -1});
  CHECK(strata::from_blob<float>(buffer.data(), {0, 5}).numel() == 0);
  CHECK_THROWS_AS(strata::from_blob<float>(buffer.data(), {3}, {-1}), strata::shape_error);
  CHECK_THROWS_AS(strata::from_blob<float>(buffer.data(), {3, 2}, {1}), strata::shape_error);
}
