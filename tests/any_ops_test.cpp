// SPDX-License-Identifier: MIT
// AnyTensor's remaining operations (functions with parameters, three-operand functions, order
// statistics, scatters, reshaping copies and splits, matrix products, in-place writes) and
// PyTorch's checked conversion of numbers into tensors. Expected values and messages are
// torch 1.13's for the same calls; a differential loop compares each operation with the
// typed one on the same data over several dtypes.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>
import strata;
namespace st = strata;

namespace {
template <class T>
std::vector<double> values(const st::AnyTensor& t) {
  const std::vector<T> v = t.to_vector<T>();
  return std::vector<double>(v.begin(), v.end());
}
std::vector<double> doubles(const st::AnyTensor& t) { return t.to_vector<double>(); }
bool all_close(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-6) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i]) return false;
      continue;
    }
    if (std::abs(a[i] - b[i]) > tol * (1 + std::abs(b[i]))) return false;
  }
  return true;
}
// The message of what f throws, or "" when it does not throw.
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const st::error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("AnyTensor gelu, softplus, logit and nan_to_num take torch's parameters", "[any][ops]") {
  const st::AnyTensor x = st::tensor({-1.f, 0.f, 1.f, 2.f});
  CHECK(all_close(doubles(st::gelu(x)), {-0.1586553, 0.0, 0.8413447, 1.9545000}));
  CHECK(all_close(doubles(x.gelu("tanh")), {-0.1588080, 0.0, 0.8411920, 1.9545977}));
  CHECK(all_close(doubles(st::softplus(x, 2, 3)), {0.0634640, 0.3465736, 1.0634640, 2.0}));
  CHECK(st::softplus(x).dtype() == st::dtype::float32);
  CHECK_THROWS_WITH(st::gelu(st::AnyTensor(st::tensor({1, 2}))), "\"GeluKernelImpl\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::gelu(x, "erf"), "approximate argument must be either none or tanh.");
  CHECK_THROWS_WITH(st::softplus(st::AnyTensor(st::tensor({1, 2}))), "\"softplus_cpu\" not implemented for 'Long'");

  const st::AnyTensor ints = st::tensor({0, 1, 2});
  CHECK(st::logit(ints).dtype() == st::dtype::float32);  // integers give float32, as torch
  CHECK(all_close(doubles(st::logit(ints)), {-INFINITY, INFINITY, NAN}));
  CHECK(all_close(doubles(st::AnyTensor(st::tensor({0.25, 0.5, 1.0})).logit(0.1)), {-1.0986123, 0.0, 2.1972244}));

  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const st::AnyTensor specials = st::tensor<float>({nan, inf, -inf, 1.5});
  CHECK(doubles(st::nan_to_num(specials)) ==
        std::vector<double>{0.0, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1.5});
  CHECK(doubles(st::nan_to_num(specials.to(st::dtype::float16))) == std::vector<double>{0.0, 65504.0, -65504.0, 1.5});
  CHECK(doubles(specials.nan_to_num(-1, 7)) == std::vector<double>{-1, 7, -std::numeric_limits<float>::max(), 1.5});
  const st::AnyTensor b = st::tensor({true, false});
  CHECK(st::nan_to_num(b).dtype() == st::dtype::bool_);  // integers and bool: a copy, as torch
  CHECK(!st::nan_to_num(b).is_alias_of(b));
}

TEST_CASE("AnyTensor lerp, addcmul and addcdiv check and promote as torch", "[any][ops]") {
  const st::AnyTensor s = st::tensor({1.f, 2.f}), e = st::tensor({3.f, 6.f});
  CHECK(doubles(st::lerp(s, e, 0.25)) == std::vector<double>{1.5, 3.0});
  CHECK(doubles(s.lerp(e, st::AnyTensor(st::tensor({0.5f, 1.f})))) == std::vector<double>{2, 6});
  CHECK_THROWS_WITH(st::lerp(s, e.to(st::dtype::float64), 0.5), "expected dtype float32 for `end` but got dtype float64");
  CHECK_THROWS_WITH(st::lerp(s, e, st::AnyTensor(st::tensor<double>(0.5))),
                    "expected dtype float32 for `weight` but got dtype float64");
  CHECK_THROWS_WITH(st::lerp(s.to(st::dtype::int32), e.to(st::dtype::int32), 0.5),
                    "\"lerp_kernel_scalar\" not implemented for 'Int'");
  const st::AnyTensor cs = s.to(st::dtype::complex64), ce = st::zeros({2}, st::dtype::complex64);
  CHECK(st::lerp(cs, ce, 0.25).to_vector<std::complex<float>>() ==
        std::vector<std::complex<float>>{{0.75f, 0.f}, {1.5f, 0.f}});

  const st::AnyTensor a = st::tensor({1.f, 2.f}), d = st::tensor<double>({3., 4.}), i = st::tensor<std::int32_t>({5, 6});
  const st::AnyTensor m = st::addcmul(a, d, i, 0.5);
  CHECK(m.dtype() == st::dtype::float64);
  CHECK(doubles(m) == std::vector<double>{8.5, 14.0});
  CHECK(all_close(doubles(a.addcdiv(d, i, 2)), {2.2, 3.3333333333}));
  // An integer addcmul takes the value as an integer (torch: 1 + 2.5 * 1 * 1 is 3).
  const st::AnyTensor ones = st::ones({2}, st::dtype::int32);
  CHECK(values<int>(st::addcmul(ones, ones, ones, 2.5)) == std::vector<double>{3, 3});
  const st::AnyTensor bools = ones.to(st::dtype::bool_);
  CHECK_THROWS_WITH(st::addcmul(bools, bools, bools), "\"addcmul_cpu_out\" not implemented for 'Bool'");
  CHECK_THROWS_AS(st::addcdiv(ones, ones, ones), st::dtype_error);
  CHECK(st::addcdiv(ones, ones, st::ones({2}, st::dtype::float32)).dtype() == st::dtype::float32);
}

TEST_CASE("AnyTensor order statistics and running extrema match torch's", "[any][sorting]") {
  const st::AnyTensor k = st::tensor({{3, 1, 2}, {4, 4, 1}});
  const auto [kv, ki] = st::kthvalue(k, 2, 1);
  CHECK(kv.dtype() == st::dtype::int64);
  CHECK(values<std::int64_t>(kv) == std::vector<double>{2, 4});
  CHECK(ki.to_vector()[0] == 2);  // (row 1 has two 4s: either index is torch's contract)
  const auto [mv, mi] = st::AnyTensor(st::tensor<std::int16_t>({{3, 1, 2, 5}, {4, 4, 1, 0}})).median(1);
  CHECK(mv.dtype() == st::dtype::int16);
  CHECK(values<std::int16_t>(mv) == std::vector<double>{2, 1});
  CHECK(mi.to_vector() == std::vector<std::int64_t>{2, 2});

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const st::AnyTensor v = st::tensor<float>({{3., 1., 2., nan}, {4., 4., 1., 0.}});
  CHECK(st::nanmedian(v).item<double>() == 2.0);
  const auto [nv, ni] = v.nanmedian(1);
  CHECK(doubles(nv) == std::vector<double>{2, 1});
  CHECK(ni.to_vector() == std::vector<std::int64_t>{2, 2});
  CHECK(std::isnan(st::median(v).item<double>()));

  const auto [ov, oi] = st::mode(st::AnyTensor(st::tensor({{1, 2, 2, 3}, {4, 4, 1, 1}})), 1);
  CHECK(values<std::int64_t>(ov) == std::vector<double>{2, 1});
  const auto [cv, ci] = st::cummax(st::AnyTensor(st::tensor({1, 3, 2, 5, 5})), 0);
  CHECK(values<std::int64_t>(cv) == std::vector<double>{1, 3, 3, 5, 5});
  CHECK(ci.to_vector() == std::vector<std::int64_t>{0, 1, 1, 3, 4});
  const auto [nv2, ni2] = st::AnyTensor(st::tensor({1.f, 3.f, 0.f, 5.f, 0.f})).cummin(0);
  CHECK(doubles(nv2) == std::vector<double>{1, 1, 0, 0, 0});
  CHECK(ni2.to_vector() == std::vector<std::int64_t>{0, 0, 2, 2, 4});
  CHECK_THROWS_WITH(st::kthvalue(st::AnyTensor(st::tensor({std::complex<float>(1, 1)})), 1),
                    "\"kthvalue\" not implemented for 'ComplexFloat'");

  const st::AnyTensor q = st::tensor<float>({{1., 2., 3., 4.}, {0., 10., 20., nan}});
  CHECK(all_close(doubles(st::quantile(q, 0.25, 1)), {1.75, nan}));
  CHECK(all_close(doubles(q.nanquantile(0.5, 1)), {2.5, 10}));
  CHECK(all_close(doubles(q[0].quantile(st::AnyTensor(st::tensor({0.1f, 0.9f})))), {1.3, 3.7}));
  CHECK(st::quantile(q[0], 0.4, std::nullopt, false, "nearest").item<double>() == 2.0);
  CHECK(st::quantile(q[0], 0.4, std::nullopt, false, "midpoint").item<double>() == 2.5);
  CHECK_THROWS_WITH(st::quantile(st::AnyTensor(st::tensor({1, 2})), 0.5),
                    "quantile() input tensor must be either float or double dtype");
  CHECK_THROWS_WITH(st::quantile(q[0], st::AnyTensor(st::tensor<double>({0.5}))),
                    "quantile() q tensor must be same dtype as the input tensor");
}

TEST_CASE("AnyTensor scatters, take, nonzero and index_add check indices and sources as torch", "[any][indexing]") {
  const st::AnyTensor x = st::zeros({2, 3}, st::dtype::int16);
  const st::AnyTensor src = st::tensor<std::int16_t>({{7}, {8}});
  const st::AnyTensor s = st::scatter(x, 1, st::AnyTensor(st::tensor({{2}, {0}})), src);
  CHECK(s.dtype() == st::dtype::int16);
  CHECK(values<std::int16_t>(s) == std::vector<double>{0, 0, 7, 8, 0, 0});
  CHECK(values<std::int16_t>(x.scatter(0, st::tensor({{1, 0, 1}}), 5)) == std::vector<double>{0, 5, 0, 5, 0, 5});
  CHECK(doubles(st::scatter_add(st::ones({3}, st::dtype::float32), 0, st::AnyTensor(st::tensor({0, 0, 2})),
                                st::AnyTensor(st::tensor({1.f, 2.f, 3.f})))) == std::vector<double>{4, 1, 4});
  CHECK_THROWS_WITH(st::scatter(st::zeros({3}, st::dtype::float32), 0, st::AnyTensor(st::tensor({0})),
                                st::ones({1}, st::dtype::float64)),
                    "scatter(): Expected self.dtype to be equal to src.dtype");
  CHECK_THROWS_WITH(st::scatter(st::zeros({3}, st::dtype::float32), 0, st::AnyTensor(st::tensor<std::int32_t>({0})),
                                st::ones({1}, st::dtype::float32)),
                    "scatter(): Expected dtype int64 for index");

  const st::AnyTensor t = st::tensor({{1, 2}, {3, 4}});
  CHECK(values<std::int64_t>(st::take(t, st::AnyTensor(st::tensor({{3, 0}, {-1, 1}})))) ==
        std::vector<double>{4, 1, 4, 2});
  CHECK_THROWS_WITH(st::take(t, st::AnyTensor(st::tensor<std::int32_t>({0}))),
                    "take(): Expected a long tensor for index, but got Int");
  CHECK(st::AnyTensor(st::tensor({{0.f, 1.5f}, {2.f, 0.f}})).nonzero().to_vector() ==
        std::vector<std::int64_t>{0, 1, 1, 0});

  const st::AnyTensor acc = st::zeros({3, 2}, st::dtype::float64);
  const st::AnyTensor idx = st::tensor<std::int32_t>({2, 0, 2});
  CHECK(doubles(st::index_add(acc, 0, idx, st::ones({3, 2}, st::dtype::float64), 2)) ==
        std::vector<double>{2, 2, 0, 0, 4, 4});
  CHECK_THROWS_WITH(st::index_add(acc, 0, idx, st::ones({3, 2}, st::dtype::float32)),
                    "index_add_(): self (Double) and source (Float) must have the same scalar type");

  // The in-place forms write through the handle (a const one too) and its typed views.
  const st::Tensor<float> typed = st::zeros<float>({4});
  const st::AnyTensor h = typed;
  h.masked_fill_(st::tensor({true, false, true, false}), 2.5);
  h.scatter_(0, st::tensor({1}), st::AnyTensor(st::tensor({9.f})));
  h.scatter_add_(0, st::tensor({1, 3}), st::AnyTensor(st::tensor({1.f, 1.f})));
  h.index_add_(0, st::tensor({0}), st::AnyTensor(st::tensor({1.f})), 2);
  h.scatter_(0, st::tensor({2}), -1);
  CHECK(typed.to_vector() == std::vector<float>{4.5f, 10.f, -1.f, 1.f});
  CHECK_THROWS_WITH(h.masked_fill_(st::AnyTensor(st::tensor({1, 0, 1, 0})), 1),
                    "masked_fill_ only supports boolean masks, but got mask with dtype Long");

  // An AnyTensor indexes: a bool or uint8 mask, int64 or int32 indices.
  const st::AnyTensor r = st::arange(0, 5, 1, st::dtype::float32);
  CHECK(doubles(r.index({r > 2})) == std::vector<double>{3, 4});
  CHECK(doubles(r.index({st::AnyTensor(st::tensor<std::uint8_t>({1, 0, 1, 0, 0}))})) == std::vector<double>{0, 2});
  CHECK(doubles(r.index({st::AnyTensor(st::tensor<std::int32_t>({4, 0}))})) == std::vector<double>{4, 0});
  CHECK_THROWS_WITH(r.index({r}), "tensors used as indices must be long, int, byte or bool tensors");
}

TEST_CASE("AnyTensor roll, repeat, tile, repeat_interleave, tril, triu and the splits", "[any][manip]") {
  const st::AnyTensor y = st::arange(0, 6, 1, st::dtype::int64).view({2, 3});
  CHECK(values<std::int64_t>(st::roll(y, {1})) == std::vector<double>{5, 0, 1, 2, 3, 4});
  CHECK(values<std::int64_t>(st::roll(y, 1, 1)) == std::vector<double>{2, 0, 1, 5, 3, 4});
  CHECK(values<std::int64_t>(y.roll({1, -1}, {0, 1})) == std::vector<double>{4, 5, 3, 1, 2, 0});
  CHECK(y.repeat({2, 1, 2}).sizes() == st::int_list{2, 2, 6});
  CHECK(values<std::int64_t>(st::tile(st::AnyTensor(st::tensor({1, 2})), {2, 2})) ==
        std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2});
  CHECK(values<std::int64_t>(st::repeat_interleave(st::AnyTensor(st::tensor({{1, 2}, {3, 4}})), 2, 0)) ==
        std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(values<std::int64_t>(st::AnyTensor(st::tensor({1, 2})).repeat_interleave(
            st::AnyTensor(st::tensor<std::int32_t>({3, 1})))) == std::vector<double>{1, 1, 1, 2});
  CHECK_THROWS_WITH(st::repeat_interleave(y, st::AnyTensor(st::tensor({1.f}))),
                    "\"repeat_interleave_cpu\" not implemented for 'Float'");
  CHECK(y.to(st::dtype::bool_).tril().to_vector<bool>() == std::vector<bool>{false, false, false, true, true, false});
  const st::AnyTensor up = st::triu(st::ones({3, 3}, st::dtype::float16), 1);
  CHECK(up.dtype() == st::dtype::float16);
  CHECK(doubles(up) == std::vector<double>{0, 1, 1, 0, 0, 1, 0, 0, 0});

  const st::AnyTensor r = st::arange(0, 7, 1, st::dtype::int32);
  const std::vector<st::AnyTensor> parts = r.split(3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].sizes() == st::int_list{1});
  CHECK(parts[1].is_alias_of(r));  // views, as torch's
  CHECK(parts[1].dtype() == st::dtype::int32);
  CHECK(values<int>(st::split(r, {2, 5})[1]) == std::vector<double>{2, 3, 4, 5, 6});
  CHECK(st::chunk(r, 3).size() == 3);
  CHECK(values<int>(r.chunk(3)[2]) == std::vector<double>{6});
  CHECK(values<std::int64_t>(y.unbind(1)[2]) == std::vector<double>{2, 5});
  CHECK(values<int>(st::tensor_split(r, 3)[1]) == std::vector<double>{3, 4});
  CHECK(values<int>(st::tensor_split(r, {1, 5})[1]) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("AnyTensor matrix products take one dtype as torch's; outer promotes", "[any][linalg]") {
  const st::AnyTensor a = st::tensor<std::int32_t>({{1, 2}, {3, 4}}), b = st::tensor<std::int32_t>({{5, 6}, {7, 8}});
  CHECK(st::mm(a, b).dtype() == st::dtype::int32);
  CHECK(values<int>(a.mm(b)) == std::vector<double>{19, 22, 43, 50});
  CHECK(doubles(st::bmm(a.to(st::dtype::float64).unsqueeze(0), b.to(st::dtype::float64).unsqueeze(0))) ==
        std::vector<double>{19, 22, 43, 50});
  CHECK(values<int>(st::mv(a, st::AnyTensor(st::tensor<std::int32_t>({1, 1})))) == std::vector<double>{3, 7});
  const st::AnyTensor u = st::tensor({1.f, 2.f}), w = st::tensor({3.f, 4.f});
  CHECK(st::dot(u, w).item<double>() == 11.0);
  const st::AnyTensor o = st::outer(st::AnyTensor(st::tensor({1, 2})), st::AnyTensor(st::tensor({0.5f, 1.f})));
  CHECK(o.dtype() == st::dtype::float32);
  CHECK(doubles(o) == std::vector<double>{0.5, 1, 1, 2});

  CHECK_THROWS_WITH(st::matmul(u.view({1, 2}), st::AnyTensor(st::tensor({{1}, {2}}))),
                    "expected scalar type Float but found Long");
  CHECK_THROWS_WITH(st::mm(u.view({1, 2}), w.to(st::dtype::float64).view({2, 1})),
                    "expected scalar type Float but found Double");
  CHECK_THROWS_WITH(st::dot(u, w.to(st::dtype::float64)),
                    "dot : expected both vectors to have same dtype, but found Float and Double");
  CHECK_THROWS_WITH(st::einsum("i,i->", {u, w.to(st::dtype::float64)}), "expected scalar type Float but found Double");
  CHECK(st::einsum("i,i->", {u, w}).item<double>() == 11.0);
}

TEST_CASE("AnyTensor in-place methods: alpha, clamp_ and can_cast as torch's", "[any][promotion]") {
  const st::AnyTensor t = st::zeros({3}, st::dtype::int32);
  t.add_(st::AnyTensor(st::tensor<std::int32_t>({1, 2, 3})), 3);
  CHECK(values<int>(t) == std::vector<double>{3, 6, 9});
  t.sub_(st::AnyTensor(st::tensor<std::int16_t>({1, 1, 1})), 2);
  CHECK(values<int>(t) == std::vector<double>{1, 4, 7});
  t.sub_(1).mul_(2).add_(1);
  CHECK(values<int>(t) == std::vector<double>{1, 7, 13});
  CHECK_THROWS_WITH(t.add_(st::ones({3}, st::dtype::float32), 2),
                    "result type Float can't be cast to the desired output type Int");
  CHECK_THROWS_WITH(t.add_(t, 2.5), "For integral input tensors, argument alpha must not be a floating point number.");
  CHECK_THROWS_WITH(t.div_(2), "result type Float can't be cast to the desired output type Int");
  CHECK_THROWS_WITH(t.mul_(2.5), "result type Float can't be cast to the desired output type Int");
  CHECK_THROWS_WITH(t.add_(t, true), "Boolean alpha only supported for Boolean results.");
  const st::AnyTensor flags = st::zeros({2}, st::dtype::bool_);
  flags.add_(st::AnyTensor(st::tensor({true, false})), 2);  // torch: alpha 2 of a bool result is True
  CHECK(flags.to_vector<bool>() == std::vector<bool>{true, false});

  const st::AnyTensor f = st::tensor({1.f, 5.f, 9.f});
  f.clamp_(2, 6);
  CHECK(doubles(f) == std::vector<double>{2, 5, 6});
  CHECK_THROWS_AS(t.clamp_(0.5, 2), st::dtype_error);  // float bounds give a float result
  f.div_(2).add_(st::AnyTensor(st::tensor<double>(1.0)), 2);  // a 0-dim double keeps float32
  CHECK(f.dtype() == st::dtype::float32);
  CHECK(doubles(f) == std::vector<double>{3, 4.5, 5});
}

TEST_CASE("AnyTensor clamp with tensor bounds promotes over x and both bounds", "[any][ops]") {
  const st::AnyTensor x = st::arange(0, 5, 1, st::dtype::int64);
  const st::AnyTensor c = st::clamp(x, st::AnyTensor(st::tensor(1.5f)), st::AnyTensor(st::tensor(3)));
  CHECK(c.dtype() == st::dtype::float32);
  CHECK(doubles(c) == std::vector<double>{1.5, 1.5, 2, 3, 3});
  const st::AnyTensor u8 = st::tensor<std::uint8_t>({1, 2, 3});
  const st::AnyTensor d = st::clamp(u8, st::AnyTensor(st::tensor<std::int8_t>(2)), st::AnyTensor(st::tensor({5, 1, 5})));
  CHECK(d.dtype() == st::dtype::int64);
  CHECK(values<std::int64_t>(d) == std::vector<double>{2, 1, 3});
  const st::AnyTensor e = st::clamp(u8, st::AnyTensor(st::tensor<std::int8_t>({1})), std::nullopt);
  CHECK(e.dtype() == st::dtype::int16);
}

TEST_CASE("numbers written into a tensor are checked for overflow as torch's checked_convert", "[any][promotion]") {
  const st::AnyTensor u8 = st::zeros({2}, st::dtype::uint8);
  CHECK_THROWS_WITH(u8.fill_(300), "value cannot be converted to type uint8 without overflow");
  CHECK_THROWS_WITH(st::full({2}, 300, st::dtype::uint8), "value cannot be converted to type uint8 without overflow");
  CHECK(values<std::uint8_t>(u8.fill_(-1)) == std::vector<double>{255, 255});  // torch lets negatives wrap
  CHECK_THROWS_AS(u8.fill_(-256), st::error);
  CHECK_THROWS_WITH(st::zeros({2}, st::dtype::float32).fill_(1e40),
                    "value cannot be converted to type float32 without overflow");
  CHECK_THROWS_AS(st::zeros({2}, st::dtype::float32).fill_(std::complex<double>(1, 2)), st::error);
  CHECK(doubles(st::zeros({2}, st::dtype::float32).fill_(std::complex<double>(1, 0))) == std::vector<double>{1, 1});
  CHECK(values<int>(st::zeros({2}, st::dtype::int32).fill_(2.5)) == std::vector<double>{2, 2});
  CHECK_THROWS_AS(st::zeros({2}, st::dtype::int32).fill_(1e20), st::error);
  CHECK_THROWS_AS(st::zeros({2}, st::dtype::int32).fill_(std::numeric_limits<double>::quiet_NaN()), st::error);
  CHECK(st::zeros({2}, st::dtype::bool_).fill_(5).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK_THROWS_AS(st::zeros({2}, st::dtype::float16).fill_(65505), st::error);
  CHECK(std::isinf(st::zeros({1}, st::dtype::float16).fill_(INFINITY).item<double>()));
  CHECK_THROWS_AS(st::masked_fill(u8, st::AnyTensor(st::tensor({true, false})), 300), st::error);
  CHECK_THROWS_AS(st::clamp(st::AnyTensor(st::tensor<std::uint8_t>({1, 2})), std::nullopt, 300), st::error);
  CHECK(values<std::uint8_t>(st::clamp(st::AnyTensor(st::tensor<std::uint8_t>({1, 2})), -1, std::nullopt)) ==
        std::vector<double>{255, 255});
  CHECK_THROWS_AS(st::scatter(u8, 0, st::AnyTensor(st::tensor({0})), 300), st::error);
  // An operator with a number is not checked: torch wraps (uint8 + 300 is + 44).
  CHECK(values<std::uint8_t>(st::AnyTensor(st::tensor<std::uint8_t>({1, 2})) + 300) == std::vector<double>{45, 46});
}

TEST_CASE("AnyTensor item, type_as, max(other), requires_grad_ on a temporary and grad", "[any]") {
  const st::float128 third = st::float128(1) / 3;
  const st::AnyTensor q = st::full<st::float128>({}, third);
  CHECK(q.item<st::float128>() == third);  // exact, not through double
  CHECK(st::AnyTensor(st::tensor({1.5f, 2.5f})).type_as(st::AnyTensor(st::tensor({1}))).dtype() == st::dtype::int64);
  CHECK(st::tensor({1.5f, 2.5f}).type_as(st::AnyTensor(st::tensor({1}))).dtype() == st::dtype::int64);
  const st::AnyTensor m = st::AnyTensor(st::tensor({1.f, 2.f})).max(st::AnyTensor(st::tensor({3, 0})));
  CHECK(m.dtype() == st::dtype::float32);
  CHECK(doubles(m) == std::vector<double>{3, 2});
  CHECK(doubles(st::tensor({1.f, 2.f}).min(st::AnyTensor(st::tensor({3, 0})))) == std::vector<double>{1, 0});

  const auto w = st::ones({3}, st::dtype::float64).requires_grad_();
  CHECK(w.requires_grad());
  CHECK_FALSE(w.has_grad());
  CHECK_THROWS_AS(w.grad(), st::error);
  (w * w).sum().backward();
  CHECK(doubles(w.grad()) == std::vector<double>{2, 2, 2});
}

TEST_CASE("the new AnyTensor operations equal the typed ones on the same data", "[any][diff]") {
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> pick(-4, 4);
  const auto check_dtype = [&]<class T>(std::type_identity<T>) {
    std::vector<T> v(24);
    for (T& e : v) e = static_cast<T>(static_cast<float>(pick(rng)));
    const st::Tensor<T> typed = st::from_vector<T>(v, {2, 3, 4});
    const st::AnyTensor any = typed;
    const auto same = [](const st::AnyTensor& a, const auto& b) {
      using U = typename std::remove_cvref_t<decltype(b)>::value_type;
      REQUIRE(a.dtype() == st::dtype_v<U>);
      REQUIRE(a.sizes() == b.sizes());
      CHECK(a.template to_vector<U>() == b.to_vector());
    };
    same(st::roll(any, {2, -1}, {2, 0}), st::roll(typed, {2, -1}, {2, 0}));
    same(any.repeat({1, 2, 1}), typed.repeat({1, 2, 1}));
    same(any.tril(1), typed.tril(1));
    same(any.triu(-1), typed.triu(-1));
    same(any.repeat_interleave(2, 1), typed.repeat_interleave(2, 1));
    same(st::cummax(any, 2).values, st::cummax(typed, 2).values);
    same(st::kthvalue(any, 2, 1).values, st::kthvalue(typed, 2, 1).values);
    same(st::median(any, 2).values, st::median(typed, 2).values);
    same(any.split(2, 2)[1], typed.split(2, 2)[1]);
    same(st::take(any, st::AnyTensor(st::tensor({23, 0, 5}))), st::take(typed, st::tensor({23, 0, 5})));
    const st::Tensor<std::int64_t> idx = st::tensor({{0, 1, 1, 0}}).unsqueeze(0);
    same(st::scatter_add(any, 1, idx, any.narrow(1, 0, 1)), st::scatter_add(typed, 1, idx, typed.narrow(1, 0, 1)));
    CHECK(st::nonzero(any).to_vector() == st::nonzero(typed).to_vector());
  };
  check_dtype(std::type_identity<float>{});
  check_dtype(std::type_identity<double>{});
  check_dtype(std::type_identity<std::int32_t>{});
  check_dtype(std::type_identity<std::int8_t>{});
  check_dtype(std::type_identity<st::half>{});
  check_dtype(std::type_identity<st::bfloat16>{});
}

// The PyTorch program below, ported, line by line (torch 1.13's printed results).
//   x = torch.tensor([[1.0, nan, 3.0], [4.0, 5.0, inf], [7.0, 8.0, 9.0], [-2.0, 0.5, 1.5]], dtype=torch.float64)
//   y = torch.tensor([0, 2, 1, 2])
//   x = x.nan_to_num(0.0, posinf=10.0)
//   lo = x.quantile(0.1, dim=0, keepdim=True); hi = x.quantile(0.9, dim=0, keepdim=True)
//   x = x.clamp(lo, hi)
//   x = (x - x.mean(0, keepdim=True)) / x.std(0, keepdim=True)
//   counts = torch.zeros(3, dtype=torch.int64).scatter_add(0, y, torch.ones_like(y))
//   onehot = torch.zeros(4, 3).scatter(1, y.unsqueeze(1), 1.0)
//   centroids = onehot.t().mm(x.float()) / counts.unsqueeze(1)
//   train, test = x.split([3, 1])
//   d = (test.float().unsqueeze(1) - centroids.unsqueeze(0)).pow(2).sum(-1)
//   pred = d.argmin(1)
//   med, _ = x.median(dim=1)
//   top = x.abs().kthvalue(2, dim=1).values
//   w = torch.full((3,), 0.5).lerp(centroids[0], 0.25)
//   z = torch.addcmul(w, centroids[1], centroids[2], value=0.5)
//   mask = x > 0
//   x2 = x.masked_fill(~mask, 0).roll(1, 0).tril()
TEST_CASE("a PyTorch nearest-centroid script ports line by line onto AnyTensor", "[any][port]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto x = st::AnyTensor(st::tensor<double>({{1.0, nan, 3.0}, {4.0, 5.0, inf}, {7.0, 8.0, 9.0}, {-2.0, 0.5, 1.5}}));
  auto y = st::AnyTensor(st::tensor({0, 2, 1, 2}));
  x = x.nan_to_num(0.0, 10.0);
  auto lo = x.quantile(0.1, 0, true);
  auto hi = x.quantile(0.9, 0, true);
  x = x.clamp(lo, hi);
  x = (x - x.mean({0}, true)) / x.std({0}, 1, true);
  auto counts = st::zeros({3}, st::dtype::int64).scatter_add(0, y, st::ones_like(y));
  auto onehot = st::zeros({4, 3}, st::dtype::float32).scatter(1, y.unsqueeze(1), 1.0);
  auto centroids = onehot.t().mm(x.to(st::dtype::float32)) / counts.unsqueeze(1);
  auto parts = x.split({3, 1});
  auto test = parts[1];
  auto d = (test.to(st::dtype::float32).unsqueeze(1) - centroids.unsqueeze(0)).pow(2).sum({-1});
  auto pred = d.argmin(1);
  auto [med, med_index] = x.median(1);
  auto top = x.abs().kthvalue(2, 1).values;
  auto w = st::full({3}, 0.5, st::dtype::float32).lerp(centroids[0], 0.25);
  auto z = st::addcmul(w, centroids[1], centroids[2], 0.5);
  auto mask = x > 0;
  auto x2 = x.masked_fill(~mask, 0).roll(1, 0).tril();

  CHECK(counts.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1, 2});
  CHECK(pred.to_vector() == std::vector<std::int64_t>{0});
  CHECK(all_close(doubles(centroids), {-0.471056, -0.888757, -0.727656, 1.130534, 1.144778, 0.771378, -0.329739,
                                       -0.12801, -0.021861}, 1e-5));
  CHECK(all_close(doubles(med), {-0.727656, 0.530329, 1.130534, -0.989987}, 1e-5));
  CHECK(all_close(doubles(top), {0.727656, 0.530329, 1.130534, 0.989987}, 1e-5));
  CHECK(all_close(doubles(z), {0.070846, 0.079539, 0.184654}, 1e-4));
  CHECK(all_close(doubles(x2), {0, 0, 0, 0, 0, 0, 0.471056, 0.530329, 0.946265, 1.130534, 1.144778, 0.771378}, 1e-5));
  CHECK(x.dtype() == st::dtype::float64);
  CHECK(centroids.dtype() == st::dtype::float32);
  CHECK(z.dtype() == st::dtype::float32);
}

// torch's register_post_accumulate_grad_hook: once per backward, as soon as the leaf's last
// gradient of that backward is accumulated (while the rest of the graph is still to run).
TEST_CASE("post-accumulate-grad hooks run as soon as a leaf's gradient is final", "[any][autograd]") {
  auto w = st::tensor({1.f, 2.f}).requires_grad_();
  auto b = st::tensor({0.5f, -1.f}).requires_grad_();
  std::vector<std::string> order;
  std::vector<float> w_seen, w_in_b_hook;
  w.register_post_accumulate_grad_hook([&](const st::Tensor<float>& p) {
    order.push_back("w");
    w_seen = p.grad().to_vector();
  });
  b.register_post_accumulate_grad_hook([&](const st::Tensor<float>& p) {
    order.push_back("b");
    // d(sum(h * b))/db = h = 3 w, accumulated over the backwards so far
    const float times = static_cast<float>(order.size() / 2 + 1);
    CHECK(p.grad().to_vector() == std::vector<float>{3.f * times, 6.f * times});
    w_in_b_hook = w.has_grad() ? w.grad().to_vector() : std::vector<float>{};
  });
  st::Tensor<float> h = w * 3;     // one node: w's gradient arrives when it runs
  auto loss = (h * b).sum() + w.sum();  // w also gets a gradient from the top node
  loss.backward({}, true);
  CHECK(order == std::vector<std::string>{"b", "w"});
  CHECK(w_in_b_hook != std::vector<float>{2.5f, -2.f});  // w's gradient was not final yet
  CHECK(w_seen == std::vector<float>{2.5f, -2.f});             // 3 * b + 1
  loss.backward();                                              // gradients accumulate; hooks run again
  CHECK(order.size() == 4);
  CHECK(w_seen == std::vector<float>{5.f, -4.f});
  // grad() leaves .grad() alone and calls no hook.
  auto again = (w * w).sum();
  const auto g = st::grad(again, std::vector<st::Tensor<float>>{w});
  CHECK(order.size() == 4);
  CHECK(g[0].to_vector() == std::vector<float>{2.f, 4.f});

  CHECK_THROWS_WITH(st::zeros({2}).register_post_accumulate_grad_hook([](const st::Tensor<float>&) {}),
                    "cannot register a hook on a tensor that doesn't require gradient");
  st::Tensor<float> non_leaf = w * 2;
  CHECK_THROWS_WITH(non_leaf.register_post_accumulate_grad_hook([](const st::Tensor<float>&) {}),
                    "post accumulate grad hooks cannot be registered on non-leaf tensors");

  // On an AnyTensor the hook sees an AnyTensor of the leaf's dtype.
  const st::AnyTensor a = st::tensor<double>({1.0, -2.0}).requires_grad_();
  st::dtype seen_dtype = st::dtype::bool_;
  std::vector<double> a_grad;
  a.register_post_accumulate_grad_hook([&](const st::AnyTensor& p) {
    seen_dtype = p.dtype();
    a_grad = p.grad().to_vector<double>();
  });
  (a * a).sum().backward();
  CHECK(seen_dtype == st::dtype::float64);
  CHECK(a_grad == std::vector<double>{2.0, -4.0});
}
