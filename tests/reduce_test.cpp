// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include "count_allocations.hpp"
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;
using namespace strata;

// (allocation counting: see count_allocations.hpp)

namespace {
using I = std::int64_t;
using ivec = std::vector<I>;

template <class R>
std::tuple<std::string, ivec, std::vector<double>> run(const R& r) {
  auto t = eval(r);
  return {std::string(dtype_name(t.dtype())), ivec(t.sizes().begin(), t.sizes().end()), as_doubles(t)};
}
}  // namespace

TEST_CASE("reductions match PyTorch (golden)", "[reduce][golden]") {
  const auto base = eval(arange<float>(24).view({2, 3, 4}) / 4 - 2);
  const auto ints = eval(cast<std::int32_t>(arange<std::int32_t>(24).view({2, 3, 4}) - 5));
  std::map<std::string, std::function<std::tuple<std::string, ivec, std::vector<double>>()>> cases = {
      {"sum_all", [&] { return run(sum(base)); }},
      {"sum_dim1", [&] { return run(sum(base, {1})); }},
      {"sum_dims02_keep", [&] { return run(sum(base, {0, 2}, true)); }},
      {"sum_neg_dim", [&] { return run(base.sum({-1})); }},
      {"sum_transposed", [&] { return run(sum(base.transpose(0, 2), {1})); }},
      {"sum_expanded", [&] { return run(sum(base.narrow(1, 0, 1).expand({2, 3, 4}), {0, 1})); }},
      {"sum_stepped", [&] { return run(sum(base.slice(2, 0, 4, 2), {2})); }},
      {"sum_int32", [&] { return run(sum(ints, {1})); }},
      {"sum_bool", [&] { return run(sum(ints > 3)); }},
      {"prod_int", [&] { return run(prod(remainder(ints.narrow(2, 0, 2), 5) + 1, {2})); }},
      {"prod_float", [&] { return run(prod(base[0] + 3, {0})); }},
      {"mean_dims", [&] { return run(mean(base, {1, 2})); }},
      {"mean_keep", [&] { return run(base.mean({0}, true)); }},
      {"amax_dim", [&] { return run(amax(base, {1})); }},
      {"amin_all", [&] { return run(amin(base)); }},
      {"amax_ints", [&] { return run(amax(ints, {0, 2})); }},
      {"all_dim", [&] { return run(all(ints != 0, {2})); }},
      {"any_all", [&] { return run(any(ints > 17)); }},
      {"sum_empty", [&] { return run(sum(zeros<float>({0, 3}), {0})); }},
      {"prod_empty", [&] { return run(prod(zeros<float>({0, 3}), {0})); }},
      {"mean_empty", [&] { return run(mean(zeros<float>({0}))); }},
      {"sum_half", [&] { return run(sum(arange<half>(10))); }},
      {"sum_double_expr", [&] { return run(sum((cast<double>(base) - 1) * (cast<double>(base) + 2), {0})); }},
  };
  int checked = 0;
  for (const auto& line : golden::lines("reductions.txt")) {
    const auto parts = golden::split(line, '|');
    INFO(line);
    if (parts[1] == "error") {
      if (parts[0] == "amax_empty") CHECK_THROWS_WITH(eval(amax(zeros<float>({0, 3}), {0})), parts[3]);
      if (parts[0] == "sum_dup_dims") CHECK_THROWS_WITH(sum(base, {1, 1}), parts[3]);
      if (parts[0] == "sum_dim_range") CHECK_THROWS_WITH(sum(base, {3}), parts[3]);
      if (parts[0] == "amax_empty") CHECK_THROWS_AS(amax(zeros<float>({0, 3}), {0}), index_error);
      ++checked;
      continue;
    }
    REQUIRE(cases.count(parts[0]) == 1);
    const auto [type, shape, values] = cases.at(parts[0])();
    CHECK(type == parts[1]);
    CHECK(shape == golden::parse_shape(parts[2]));
    std::istringstream in(parts[3]);
    std::vector<double> want;
    for (std::string tok; in >> tok;) want.push_back(std::stod(tok));
    REQUIRE(values.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      if (std::isnan(want[k])) CHECK(std::isnan(values[k]));
      else CHECK(values[k] == Approx(want[k]).margin(1e-6));
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.size()) + 3);
}

TEST_CASE("result types follow PyTorch", "[reduce]") {
  static_assert(std::is_same_v<decltype(eval(sum(zeros<std::int8_t>({2})))), Tensor<std::int64_t>>);
  static_assert(std::is_same_v<decltype(eval(sum(zeros<bool>({2})))), Tensor<std::int64_t>>);
  static_assert(std::is_same_v<decltype(eval(prod(zeros<std::int32_t>({2})))), Tensor<std::int64_t>>);
  static_assert(std::is_same_v<decltype(eval(sum(zeros<half>({2})))), Tensor<half>>);
  static_assert(std::is_same_v<decltype(eval(all(zeros<float>({2})))), Tensor<bool>>);
  static_assert(std::is_same_v<decltype(eval(amax(zeros<std::int16_t>({2})))), Tensor<std::int16_t>>);
  static_assert(std::is_same_v<decltype(eval(sum<double>(zeros<float>({2})))), Tensor<double>>);
  static_assert(std::is_same_v<decltype(eval(sum<float128>(zeros<float>({2})))), Tensor<float128>>);
  CHECK(eval(sum<float128>(full<float>({3}, 0.5f))).item() == float128(1.5));
}

TEST_CASE("sum_to: the seed and PyTorch's rules", "[reduce][sum_to]") {
  auto A = from_vector<float>({1, 2, 3});
  auto B = from_vector<float>({1});
  auto C = A + B;
  auto grad = ones<float>(C.sizes());  // d sum(C) / dC
  CHECK(eval(sum_to(grad, B.sizes())).to_vector() == std::vector<float>{3});
  CHECK(eval(sum_to(grad, A.sizes())).to_vector() == std::vector<float>{1, 1, 1});
  auto same = sum_to(grad, A.sizes());  // identical shapes: the tensor itself, no copy
  CHECK(same.data_ptr() == grad.data_ptr());
  auto g = arange<float>(24).view({2, 3, 4});
  auto lead = eval(sum_to(g, {3, 4}));  // leading dim summed away
  CHECK(ivec(lead.sizes().begin(), lead.sizes().end()) == ivec{3, 4});
  CHECK(lead.at({0, 0}) == 12.0f);
  auto mid = eval(sum_to(g, {3, 1}));  // size-1 target dim summed with keepdim
  CHECK(ivec(mid.sizes().begin(), mid.sizes().end()) == ivec{3, 1});
  CHECK(mid.to_vector() == std::vector<float>{60, 92, 124});
  auto zero_dim = eval(sum_to(g, {}));
  CHECK(zero_dim.dim() == 0);
  CHECK(zero_dim.item() == 276.0f);
  auto fused = eval(sum_to(g * 2 + 1, {2, 1, 4}));
  CHECK(fused.at({1, 0, 3}) == (15 + 19 + 23) * 2.0f + 3);
  CHECK(eval(g.sum_to({1, 3, 1})).at({0, 2, 0}) == eval(sum(g, {0, 2}, true)).at({0, 2, 0}));
  CHECK_THROWS_WITH(sum_to(g, {3, 5}), "sum_to: size [3, 5] is not expandable to size [2, 3, 4]");
  CHECK_THROWS_AS(sum_to(g, {1, 2, 3, 4}), shape_error);
}

TEST_CASE("reductions are lazy and can be assigned or used in expressions", "[reduce]") {
  auto x = arange<float>(12).view({3, 4});
  auto out = zeros<float>({3, 1});
  out.assign(sum(x, {1}, true));
  CHECK(out.to_vector() == std::vector<float>{6, 22, 38});
  auto strided = zeros<float>({2, 3}).t().select(1, 0);  // a non-contiguous destination
  strided.assign(sum(x, {1}));
  CHECK(strided.to_vector() == std::vector<float>{6, 22, 38});
  Tensor<float> centered = x - mean(x, {1}, true);
  CHECK(centered.to_vector()[0] == -1.5f);
  Tensor<double> widened = sum(x, {0});  // converting evaluation
  CHECK(widened.to_vector() == std::vector<double>{12, 15, 18, 21});
  CHECK(eval(sum(sum(x, {1}))).item() == 66.0f);
}

TEST_CASE("sum((a - b) * (a - b)) allocates nothing but its result", "[reduce][alloc]") {
  auto a = arange<float>(100000), b = eval(arange<float>(100000) * 0.5f);
  auto out = zeros<float>({});
  out.assign(sum((a - b) * (a - b)));  // once first: one-time set-up in the runtime is not per evaluation
  long before = allocations.load();
  out.assign(sum((a - b) * (a - b)));
  CHECK(allocations.load() - before == 0);
  CHECK(out.item() == Approx(0.25 * (99999.0 * 100000.0 * 199999.0 / 6)).epsilon(1e-6));
}

TEST_CASE("results are bitwise identical for 1 and 2 threads", "[reduce][threads]") {
  std::mt19937 gen(7);
  std::normal_distribution<float> dist;
  auto x = empty<float>({300, 700});
  for (float& v : std::span<float>(x.data_ptr(), 300 * 700)) v = dist(gen);
  auto wide = empty<float>({300, 2000});
  for (float& v : std::span<float>(wide.data_ptr(), 300 * 2000)) v = dist(gen);
  auto long_row = empty<float>({1'000'123});  // 245 leaves of 4096 and a short one
  for (float& v : std::span<float>(long_row.data_ptr(), 1'000'123)) v = dist(gen);
  auto run_all = [&] {
    std::vector<std::vector<float>> r;
    r.push_back(eval(sum(x)).to_vector());
    r.push_back(eval(sum(x, {0})).to_vector());
    r.push_back(eval(sum(x, {1})).to_vector());
    r.push_back(eval(sum(x.t(), {1})).to_vector());
    r.push_back(eval(mean(x * x, {0}, true)).to_vector());
    r.push_back(eval(sum(x.view({30, 10, 700}), {0, 2})).to_vector());
    r.push_back(eval(amax(x, {0})).to_vector());
    // Runs of 10 rows along a reduced dim that does not coalesce with the other.
    r.push_back(eval(sum(x.view({30, 10, 700}).permute({1, 0, 2}), {0, 1})).to_vector());
    // Rows of more than 4 KiB of accumulators: summed 8 at a time in registers (groups of 8 + 4).
    r.push_back(eval(sum(wide, {0})).to_vector());
    r.push_back(eval(sum(wide.view({30, 10, 2000}).permute({1, 0, 2}), {0, 1})).to_vector());
    r.push_back(eval(sum(long_row)).to_vector());
    return r;
  };
  set_num_threads(1);
  const auto one = run_all();
  set_num_threads(2);
  const auto two = run_all();
  set_num_threads(1);
  CHECK(one == two);
}

// Column sums of rows x cols small integers (exact in any order): element (r, c) = (r * 7 + c * 3) % 11 - 5.
template <class T>
std::vector<T> exact_column_sums(I rows, I cols, I scale) {
  std::vector<T> s(static_cast<std::size_t>(cols), T(0));
  for (I r = 0; r < rows; ++r)
    for (I c = 0; c < cols; ++c) s[static_cast<std::size_t>(c)] += static_cast<T>(((r * 7 + c * 3) % 11 - 5) * scale);
  return s;
}
template <class T>
Tensor<T> small_integers(I rows, I cols) {
  auto x = empty<T>({rows, cols});
  T* p = x.data_ptr();
  for (I r = 0; r < rows; ++r)
    for (I c = 0; c < cols; ++c) p[r * cols + c] = static_cast<T>((r * 7 + c * 3) % 11 - 5);
  return x;
}

TEST_CASE("outer sums: rows combined one at a time and eight at a time", "[reduce]") {
  // Rows of up to 4 KiB of accumulators are combined one at a time, longer ones eight at a
  // time in registers (by chunks of 4 KiB); 67 rows = 64-row blocks of 8 groups + 3 left.
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (I cols : {I{5}, I{1000}, I{1024}, I{1025}, I{2500}}) {
      INFO("float, cols = " << cols << ", threads = " << threads);
      auto x = small_integers<float>(67, cols);
      CHECK(eval(sum(x, {0})).to_vector() == exact_column_sums<float>(67, cols, 1));
      CHECK(eval(sum(x * 2.0f, {0})).to_vector() == exact_column_sums<float>(67, cols, 2));  // values through a buffer
    }
    for (I cols : {I{512}, I{513}, I{1300}}) {
      INFO("double, cols = " << cols << ", threads = " << threads);
      auto x = small_integers<double>(131, cols);
      CHECK(eval(sum(x, {0})).to_vector() == exact_column_sums<double>(131, cols, 1));
    }
  }
  set_num_threads(1);
}

TEST_CASE("a flat sum's leaves computed together give the bits of leaves computed one by one", "[reduce][threads]") {
  // A contiguous sum cuts its row into 4096-element leaves and computes up to 256 of them in
  // one call; rows of exactly 4096 elements that do not coalesce (a narrowed view) give the
  // same leaves one at a time. The tree over them is the same, so the bits must be too.
  std::mt19937 gen(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);  // sums near zero: every rounding shows
  auto wide = empty<float>({1000, 4100});
  for (float& v : std::span<float>(wide.data_ptr(), 1000 * 4100)) v = dist(gen);
  auto rows = wide.narrow(1, 0, 4096);
  auto flat = rows.contiguous();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    CHECK(eval(sum(rows)).item() == eval(sum(flat)).item());
    CHECK(eval(amax(rows)).item() == eval(amax(flat)).item());
  }
  set_num_threads(1);
}

TEST_CASE("float32 sums of 10^7 values are accurate on inner and outer axes", "[reduce][accuracy][slow]") {
  const I n = 10'000'000;
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  auto x = empty<float>({n});
  float* p = x.data_ptr();
  float128 exact = 0;
  for (I i = 0; i < n; ++i) {
    p[i] = dist(gen);
    exact += float128(p[i]);
  }
  const double bound = 4.0 * std::log2(static_cast<double>(n)) * 0x1p-24;  // a small multiple of log2(n) eps
  const double exact_d = static_cast<double>(exact);
  const double inner = eval(sum(x)).item();
  CHECK(std::abs(inner - exact_d) / exact_d < bound);
  const double outer = eval(sum(x.view({n, 1}), {0})).item();  // the reduced dim is strided (outer)
  CHECK(std::abs(outer - exact_d) / exact_d < bound);
  // Columns: the reduced axis is the outer one, kept elements contiguous.
  auto cols = eval(sum(x.view({n / 4, 4}), {0})).to_vector();
  float128 exact_col0 = 0;
  for (I i = 0; i < n; i += 4) exact_col0 += float128(p[i]);
  CHECK(std::abs(cols[0] - static_cast<double>(exact_col0)) / static_cast<double>(exact_col0) < bound);
  const double naive_error = [&] {
    float s = 0;
    for (I i = 0; i < n; ++i) s += p[i];
    return std::abs(s - exact_d) / exact_d;
  }();
  CHECK(naive_error > bound);  // the test can fail: sequential float accumulation would
}

TEST_CASE("float128 accumulation gets an ill-conditioned sum right", "[reduce][accuracy]") {
  auto ill = from_vector<double>({1e17, 1.0, -1e17, 1.0});
  CHECK(eval(sum<float128>(ill)).item() == float128(2));
}

TEST_CASE("amax and amin propagate NaN wherever it sits (vector lanes, tail, blocks)", "[reduce][nan]") {
  for (const std::int64_t n : {std::int64_t{5}, std::int64_t{31}, std::int64_t{32}, std::int64_t{33},
                               std::int64_t{1000}, std::int64_t{5000}, std::int64_t{70000}}) {
    for (const std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
      Tensor<float> x = arange<float>(n) - static_cast<float>(n / 3);
      CHECK(amax(x).item() == static_cast<float>(n - 1 - n / 3));
      CHECK(amin(x).item() == static_cast<float>(-(n / 3)));
      x[at] = std::numeric_limits<float>::quiet_NaN();
      INFO("n = " << n << ", NaN at " << at);
      CHECK(std::isnan(amax(x).item()));
      CHECK(std::isnan(amin(x).item()));
      CHECK(std::isnan(amax(x.view({1, n}), {1}).item()));
      auto d = arange<double>(n);
      d[at] = -std::numeric_limits<double>::infinity();
      CHECK(amin(d).item() == -std::numeric_limits<double>::infinity());
      CHECK(amax(d).item() == static_cast<double>(at == n - 1 ? n - 2 : n - 1));
      // Infinities without a NaN give the extreme; with a NaN anywhere else, NaN.
      Tensor<float> f = arange<float>(n);
      f[at] = std::numeric_limits<float>::infinity();
      CHECK(amax(f).item() == std::numeric_limits<float>::infinity());
      CHECK(amin(f).item() == (at == 0 ? 1.0f : 0.0f));
      CHECK(amax(f.view({1, n}), {1}).item() == std::numeric_limits<float>::infinity());
      f[(at + n / 2 + 1) % n] = std::numeric_limits<float>::quiet_NaN();
      CHECK(std::isnan(amax(f).item()));
      CHECK(std::isnan(amin(f).item()));
    }
  }
}

namespace {
// all/any of a plain tensor of T: one deciding element (a zero for all, a non-zero for any)
// placed in the vector lanes, the tail, other blocks; -0.0 is zero, a subnormal and NaN are
// true.
template <class T>
void check_truth(std::int64_t n) {
  for (const std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
    INFO("type " << dtype_name(dtype_v<T>) << ", n = " << n << ", deciding element at " << at);
    Tensor<T> ones = full<T>({n}, T(3));
    Tensor<T> zeros_ = zeros<T>({n});
    CHECK(eval(all(ones)).item());
    CHECK_FALSE(eval(any(zeros_)).item());
    ones[at] = T(0);
    zeros_[at] = T(-2);
    CHECK_FALSE(eval(all(ones)).item());
    CHECK(eval(any(zeros_)).item());
    CHECK_FALSE(eval(all(ones.view({1, n}), {1})).item());
    CHECK(eval(any(zeros_.view({1, n}), {1})).item());
    if constexpr (std::is_floating_point_v<T>) {
      ones[at] = T(-0.0);
      CHECK_FALSE(eval(all(ones)).item());
      zeros_[at] = T(-0.0);
      CHECK_FALSE(eval(any(zeros_)).item());
      zeros_[at] = -std::numeric_limits<T>::denorm_min();  // the smallest non-zero key
      CHECK(eval(any(zeros_)).item());
      zeros_[at] = std::numeric_limits<T>::quiet_NaN();
      CHECK(eval(any(zeros_)).item());
      ones[at] = std::numeric_limits<T>::quiet_NaN();
      CHECK(eval(all(ones)).item());
    }
  }
}
}  // namespace

TEST_CASE("all and any of plain tensors: the deciding element anywhere, -0.0 and NaN", "[reduce][truth]") {
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{63}, std::int64_t{64}, std::int64_t{65},
                               std::int64_t{4097}, std::int64_t{70000}}) {
    check_truth<float>(n);
    check_truth<double>(n);
    check_truth<std::int32_t>(n);
    check_truth<std::int64_t>(n);
    check_truth<std::int8_t>(n);
  }
}

TEST_CASE("amax and amin of an empty tensor over all dims raise PyTorch's messages", "[reduce][edge]") {
  const std::string all_dims = "(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.";
  CHECK_THROWS_WITH(amax(empty<float>({0})), "amax" + all_dims);
  CHECK_THROWS_WITH(amin(empty<float>({2, 0})), "amin" + all_dims);
  CHECK_THROWS_WITH(amax(empty<float>({2, 0}), {1}), "amax(): Expected reduction dim 1 to have non-zero size.");
  CHECK_THROWS_AS(amax(empty<float>({2, 0}), {1}), index_error);
  CHECK(Tensor<float>(amax(empty<float>({2, 0}), {0})).sizes() == int_list{0});  // nothing to reduce over: fine
  CHECK(sum(empty<float>({0})).item() == 0.0f);
}
