// SPDX-License-Identifier: MIT
// Reductions along or across a short dim (2-17 elements), in every layout the engine tells
// apart: the short rows back to back in every input (reduced in lanes across rows, or a block
// of outputs at a time), strided, transposed, and with operands broadcast along either dim.
// Each result is checked against a naive reference and for the same bits on 1 and 2 threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>
import strata;

namespace st = strata;

namespace {
using I = std::int64_t;

// Element (r, j) of the data: an integer within [-12, 12] for integer types, else a multiple
// of 1/4 within [-3, 3] (sums of such numbers, halved or doubled, are exact in float and
// double in any order, so a sum must equal the reference exactly), or 1 + a small multiple of
// 1/64 for products.
enum class data { integers, quarters, near_one };
double value(I r, I j, data d) {
  const I k = (r * 7 + j * 3 + (r / 5) * 11) % 25;
  if (d == data::integers) return static_cast<double>(k - 12);
  return d == data::near_one ? 1 + static_cast<double>(k - 12) / 64 : static_cast<double>(k - 12) / 4;
}

// The data laid out three ways, each viewed as [rows, n]: contiguous, transposed storage
// ([n, rows] then .t()), and rows with a gap (narrowed from [rows, n + 3]).
template <class T>
st::Tensor<T> layout(I rows, I n, int how, data d) {
  const I width = how == 2 ? n + 3 : n;
  auto base = how == 1 ? st::empty<T>({n, rows}) : st::empty<T>({rows, width});
  T* p = base.data_ptr();
  for (I r = 0; r < rows; ++r)
    for (I j = 0; j < n; ++j) {
      const double v = value(r, j, d);
      if (how == 1) p[j * rows + r] = static_cast<T>(v);
      else p[r * width + j + (how == 2 ? 1 : 0)] = static_cast<T>(v);
    }
  if (how == 1) return base.t();
  return how == 2 ? base.narrow(1, 1, n) : base;
}

enum class op { sum, prod, amax, amin };
const char* name(op o) {
  switch (o) {
    case op::sum: return "sum";
    case op::prod: return "prod";
    case op::amax: return "amax";
    default: return "amin";
  }
}

// The expressions reduced: x, x * a + b, x + w (w [n]: broadcast along rows), x * c (c
// [rows, 1]: broadcast along the short dim); for floats a = b = 1/2, w in {-1/64, 0, 1/64} and c
// alternately 1/2 and 2 (products stay near 1), for integers a = 2, b = 1, w in {-1, 0, 1}, c
// in {1, 2}.
enum class form { plain, scaled, row_broadcast, column_broadcast };
double a_of(bool integral) { return integral ? 2 : 0.5; }
double b_of(bool integral) { return integral ? 1 : 0.5; }
double w_of(I j, bool integral) { return (static_cast<double>(j % 3) - 1) * (integral ? 1 : 1.0 / 64); }
double c_of(I r, bool integral) { return integral ? static_cast<double>(r % 2) + 1 : r % 2 ? 2 : 0.5; }
double apply(form f, double v, I r, I j, bool integral) {
  switch (f) {
    case form::plain: return v;
    case form::scaled: return v * a_of(integral) + b_of(integral);
    case form::row_broadcast: return v + w_of(j, integral);
    default: return v * c_of(r, integral);
  }
}

// The reference: reduce over dim (0 or 1) in double, element by element.
std::vector<double> reference(op o, form f, data d, I rows, I n, I dim, bool nan_at_middle) {
  const I outputs = dim == 0 ? n : rows;
  const double start = o == op::sum ? 0.0 : o == op::prod ? 1.0 : o == op::amax ? -INFINITY : INFINITY;
  std::vector<double> acc(static_cast<std::size_t>(outputs), start);
  for (I r = 0; r < rows; ++r)
    for (I j = 0; j < n; ++j) {
      double v = apply(f, value(r, j, d), r, j, d == data::integers);
      if (nan_at_middle && r == rows / 2 && j == n - 1) v = std::numeric_limits<double>::quiet_NaN();
      double& a = acc[static_cast<std::size_t>(dim == 0 ? j : r)];
      if (std::isnan(a)) continue;
      if (std::isnan(v)) a = v;
      else if (o == op::sum) a += v;
      else if (o == op::prod) a *= v;
      else if (o == op::amax) a = std::max(a, v);
      else a = std::min(a, v);
    }
  return acc;
}

template <class T, class X>
auto reduce(op o, const X& x, I dim, bool keepdim) {
  if constexpr (std::is_integral_v<T>) {  // integers: sum (int64 result) and amin
    return o == op::sum ? st::sum(x, {dim}, keepdim).eval() : st::amin(x, {dim}, keepdim).eval().template to<std::int64_t>();
  } else {
    switch (o) {
      case op::sum: return st::sum(x, {dim}, keepdim).eval();
      case op::prod: return st::prod(x, {dim}, keepdim).eval();
      case op::amax: return st::amax(x, {dim}, keepdim).eval();
      default: return st::amin(x, {dim}, keepdim).eval();
    }
  }
}

// Every layout, form, dim, row count and short length for element type T and the ops given.
template <class T>
void check_short(std::initializer_list<op> ops) {
  for (const op o : ops)
    for (const I n : {I{2}, I{3}, I{5}, I{8}, I{16}, I{17}})
      for (const I rows : {I{3}, I{1000}, I{4099}})
        for (int how = 0; how < 3; ++how)
          for (const form f : {form::plain, form::scaled, form::row_broadcast, form::column_broadcast}) {
            if (how != 0 && f != form::plain) continue;  // the other forms on contiguous data only
            const bool nan = std::is_floating_point_v<T> && (o == op::amax || o == op::amin) && rows > 3;
            constexpr bool integral = std::is_integral_v<T>;
            const data d = integral ? data::integers : o == op::prod ? data::near_one : data::quarters;
            auto x = layout<T>(rows, n, how, d);
            if (nan) x.select(0, rows / 2).select(0, n - 1).fill_(std::numeric_limits<T>::quiet_NaN());
            auto w = st::empty<T>({n});
            for (I j = 0; j < n; ++j) w.data_ptr()[j] = static_cast<T>(w_of(j, integral));
            auto c = st::empty<T>({rows, 1});
            for (I r = 0; r < rows; ++r) c.data_ptr()[r] = static_cast<T>(c_of(r, integral));
            const T a = static_cast<T>(a_of(integral)), b = static_cast<T>(b_of(integral));
            for (const I dim : {I{0}, I{1}}) {
              const bool keepdim = (rows + n + dim) % 2 == 0;
              INFO(name(o) << " of " << st::dtype_name(st::dtype_v<T>) << " [" << rows << ", " << n << "] layout "
                           << how << " form " << static_cast<int>(f) << " dim " << dim << " keepdim " << keepdim);
              auto run = [&](int threads) {
                st::set_num_threads(threads);
                auto y = [&] {
                  switch (f) {
                    case form::plain: return reduce<T>(o, x, dim, keepdim);
                    case form::scaled: return reduce<T>(o, x * a + b, dim, keepdim);
                    case form::row_broadcast: return reduce<T>(o, x + w, dim, keepdim);
                    default: return reduce<T>(o, x * c, dim, keepdim);
                  }
                }();
                st::set_num_threads(1);
                return y;
              };
              const auto one = run(1), two = run(2);
              const std::vector<I> want_shape =
                  keepdim ? (dim == 0 ? std::vector<I>{1, n} : std::vector<I>{rows, 1}) : std::vector<I>{dim == 0 ? n : rows};
              REQUIRE(std::vector<I>(one.sizes().begin(), one.sizes().end()) == want_shape);
              const auto got = one.to_vector(), got2 = two.to_vector();
              const auto want = reference(o, f, d, rows, n, dim, nan);
              REQUIRE(got.size() == want.size());
              for (std::size_t i = 0; i < want.size(); ++i) {
                INFO("output " << i << ": got " << static_cast<double>(got[i]) << ", want " << want[i]);
                if (std::isnan(want[i])) {
                  CHECK(std::isnan(static_cast<double>(got[i])));
                  CHECK(std::isnan(static_cast<double>(got2[i])));
                  continue;
                }
                if (o == op::prod) CHECK(static_cast<double>(got[i]) == Approx(want[i]).epsilon(std::is_same_v<T, float> ? 1e-5 : 1e-12));
                else CHECK(static_cast<double>(got[i]) == want[i]);  // sums of quarters are exact
                CHECK(got[i] == got2[i]);  // the same bits on 1 and 2 threads
              }
            }
          }
}
}  // namespace

TEST_CASE("short dims: float sums, products, amax and amin in every layout", "[reduce][short]") {
  check_short<float>({op::sum, op::prod, op::amax, op::amin});
}
TEST_CASE("short dims: double sums and products in every layout", "[reduce][short]") {
  check_short<double>({op::sum, op::prod});
}
TEST_CASE("short dims: int32 sums (int64 accumulators) and amin in every layout", "[reduce][short]") {
  check_short<std::int32_t>({op::sum, op::amin});
}

TEST_CASE("short rows split among threads anywhere keep their bits", "[reduce][short][threads]") {
  // Random values (sums round differently in different orders). The outputs of x [1367, 3, n]
  // (narrowed from [1367, 4, n]: the kept dims do not merge) are split between two threads at
  // an output that is alone in its run of three, so one row is reduced alone on 2 threads and
  // within a run on 1: every path must give a short row the same bits. Also an einsum over the
  // same rows, and a window of two rows of 3 summed over two dims (short runs along dim 1).
  std::mt19937 gen(11);
  std::normal_distribution<float> dist;
  for (const I n : {I{3}, I{8}, I{16}}) {
    auto base = st::empty<float>({1367, 4, n});
    for (float& v : std::span<float>(base.data_ptr(), static_cast<std::size_t>(base.numel()))) v = dist(gen);
    auto x = base.narrow(1, 0, 3);
    auto window = st::empty<float>({5000, 4, 3});
    for (float& v : std::span<float>(window.data_ptr(), static_cast<std::size_t>(window.numel()))) v = dist(gen);
    auto w2 = window.narrow(1, 0, 2);
    auto run_all = [&] {
      std::vector<std::vector<float>> r;
      r.push_back(st::sum(x, {2}).eval().to_vector());
      r.push_back(st::amax(x, {2}).eval().to_vector());
      r.push_back(st::einsum("bij,bij->bi", x, x).eval().to_vector());
      r.push_back(st::sum(w2, {0, 1}).eval().to_vector());
      return r;
    };
    st::set_num_threads(1);
    const auto one = run_all();
    st::set_num_threads(2);
    const auto two = run_all();
    st::set_num_threads(1);
    INFO("n = " << n);
    CHECK(one == two);
    // The short sums in index order: the reference's bits exactly.
    const auto& sums = one[0];
    for (I b = 0; b < 1367; b += 97)
      for (I i = 0; i < 3; ++i) {
        float a = 0;
        for (I j = 0; j < n; ++j) a += base.data_ptr()[(b * 4 + i) * n + j];
        CHECK(sums[static_cast<std::size_t>(b * 3 + i)] == a);
      }
  }
}

namespace {
// argmax/argmin and max along dim 0 or 1 of [rows, n] in the three layouts of layout(): few
// distinct values (many ties: the first index must win) and, for floats, NaNs at some rows
// (the first NaN wins). Against a naive scan, and the same indices on 1 and 2 threads.
template <class T>
void check_arg_short(bool with_nan) {
  for (const I rows : {I{1}, I{5}, I{31}, I{32}, I{33}, I{100}, I{1000}, I{5003}})
    for (I n = 1; n <= 17; n += (n < 6 ? 1 : 5))
      for (int how = 0; how < 3; ++how)
        for (I dim = 0; dim < 2; ++dim) {
          auto c = layout<T>(rows, n, 0, data::integers);
          if (with_nan && rows > 40) {
            c.data_ptr()[(rows / 2) * n] = std::numeric_limits<T>::quiet_NaN();
            c.data_ptr()[(rows - 3) * n + n - 1] = std::numeric_limits<T>::quiet_NaN();
          }
          st::Tensor<T> x = c;
          if (how == 1) {
            x = c.t().contiguous().t();
          } else if (how == 2) {
            x = st::zeros<T>({rows, n + 3}).narrow(1, 1, n);
            x.copy_(c);
          }
          const T* p = c.data_ptr();
          const auto at = [&](I r, I j) { return static_cast<double>(p[r * n + j]); };
          for (const bool largest : {true, false}) {
            std::vector<I> want;
            const I outs = dim == 0 ? n : rows, len = dim == 0 ? rows : n;
            for (I o = 0; o < outs; ++o) {
              I best = 0;
              for (I k = 1; k < len; ++k) {
                const double v = dim == 0 ? at(k, o) : at(o, k), b = dim == 0 ? at(best, o) : at(o, best);
                if (std::isnan(b)) break;
                if (std::isnan(v) || (largest ? v > b : v < b)) best = k;
              }
              want.push_back(best);
            }
            st::set_num_threads(1);
            const auto one = (largest ? st::argmax(x, dim) : st::argmin(x, dim)).to_vector();
            st::set_num_threads(2);
            const auto two = (largest ? st::argmax(x, dim) : st::argmin(x, dim)).to_vector();
            const auto [values, indices] = largest ? st::max(x, dim) : st::min(x, dim);
            st::set_num_threads(1);
            INFO(st::dtype_v<T> << (largest ? " argmax" : " argmin") << " of [" << rows << ", " << n << "] layout "
                                << how << " over dim " << dim);
            CHECK(one == want);
            CHECK(two == want);
            CHECK(indices.to_vector() == want);
            const auto v = values.to_vector();
            for (I o = 0; o < outs; ++o) {
              const auto u = static_cast<std::size_t>(o);
              const double w = dim == 0 ? at(want[u], o) : at(o, want[u]);
              if (std::isnan(w)) CHECK(std::isnan(static_cast<double>(v[u])));
              else CHECK(static_cast<double>(v[u]) == w);
            }
          }
        }
}
}  // namespace

TEST_CASE("short dims: argmax, argmin, max and min pick the first extreme in every layout", "[reduce][short][arg]") {
  check_arg_short<float>(false);
  check_arg_short<float>(true);
  check_arg_short<double>(true);
  check_arg_short<st::float128>(true);  // no vector path: the lanes' partials alone decide the first NaN
  check_arg_short<std::int32_t>(false);
}

TEST_CASE("outer reductions of short rows over many tree leaves, within and across runs", "[reduce][short][threads]") {
  // sum and amax over dims {0, 1} of x [a, b, n] narrowed from [a, b + 1, n]: the rows of n lie
  // back to back within each run of b rows but not across runs, so runs of tree leaves are
  // computed by one call where they lie within a run and leaf by leaf where a leaf crosses
  // one (and each leaf alone where a group of the tree holds one). Random values: the sums must
  // match a naive sum to rounding and have the same bits on 1 and 2 threads; a NaN far into the
  // rows must reach amax's output.
  std::mt19937 gen(5);
  std::normal_distribution<double> dist;
  for (const I n : {I{3}, I{4}, I{16}})
    for (const I a : {I{1}, I{3}})
      for (const I b : {I{20000}, I{7001}, I{3073}}) {  // 3073: a last leaf of one row for every n
        auto base = st::empty<double>({a, b + 1, n});
        for (double& v : std::span<double>(base.data_ptr(), static_cast<std::size_t>(base.numel()))) v = dist(gen);
        const auto x = base.narrow(1, 0, b);
        auto with_nan = base.to<float>().narrow(1, 0, b);  // rows across runs, as x
        with_nan.select(0, a - 1).select(0, b - 5).select(0, n - 1).fill_(std::numeric_limits<float>::quiet_NaN());
        auto run = [&](int threads) {
          st::set_num_threads(threads);
          std::vector<std::vector<double>> r{st::sum(x, {0, 1}).eval().to_vector(),
                                             st::sum(x * 2.0 - 1.0, {0, 1}).eval().to_vector()};
          const auto m = st::amax(with_nan, {0, 1}).eval().to_vector();
          r.emplace_back(m.begin(), m.end());
          st::set_num_threads(1);
          return r;
        };
        const auto one = run(1), two = run(2);
        INFO("x [" << a << ", " << b << ", " << n << "]");
        for (std::size_t k = 0; k < 2; ++k) CHECK(one[k] == two[k]);
        const double* p = base.data_ptr();
        for (I j = 0; j < n; ++j) {
          double want = 0, abs_sum = 0;
          float most = -INFINITY;
          for (I i = 0; i < a; ++i)
            for (I r = 0; r < b; ++r) {
              const double v = p[(i * (b + 1) + r) * n + j];
              want += v;
              abs_sum += std::abs(v);
              most = std::max(most, static_cast<float>(v));
            }
          const auto u = static_cast<std::size_t>(j);
          CHECK(std::abs(one[0][u] - want) <= 1e-13 * abs_sum);
          CHECK(std::abs(one[1][u] - (2 * want - static_cast<double>(a * b))) <= 1e-13 * (2 * abs_sum + static_cast<double>(a * b)));
          if (j == n - 1) CHECK(std::isnan(one[2][u]));
          else CHECK(one[2][u] == static_cast<double>(most));
          CHECK((std::isnan(two[2][u]) ? std::isnan(one[2][u]) : two[2][u] == one[2][u]));
        }
      }
}

TEST_CASE("outer reductions of short rows: leaves computed in one call have the bits of leaves computed alone",
          "[reduce][short]") {
  // The same values summed over [a * L, n] (contiguous: runs of leaves go to the kernel in one
  // call) and over [a, L, n] narrowed from [a, L + 1, n] summed over {0, 1} (each run of L rows
  // is one leaf, so every leaf is computed alone): L is the engine's leaf, 64 times the rows of
  // a lane period (the fewest whole rows of n accumulators filling 64-byte vectors, at least 8
  // vectors), so both have the same leaves and the same tree and must agree bit for bit.
  std::mt19937 gen(9);
  std::normal_distribution<double> dist;
  const auto leaf = [](I n, I size) {
    const I k = 64 / std::gcd(n * size, I{64});
    return 64 * k * ((512 + k * n * size - 1) / (k * n * size));
  };
  auto check = [&]<class T>(T, I n) {
    const I L = leaf(n, sizeof(T)), a = 40;
    auto base = st::empty<T>({a, L + 1, n});
    for (T& v : std::span<T>(base.data_ptr(), static_cast<std::size_t>(base.numel()))) v = static_cast<T>(dist(gen));
    const auto runs = base.narrow(1, 0, L);
    const auto flat = runs.contiguous().view({a * L, n});
    INFO(st::dtype_v<T> << " n = " << n << ", leaves of " << L << " rows");
    CHECK(st::sum(flat, {0}).eval().to_vector() == st::sum(runs, {0, 1}).eval().to_vector());
    CHECK(st::sum(flat * 3, {0}).eval().to_vector() == st::sum(runs * 3, {0, 1}).eval().to_vector());
    // The same leaves read in place (one loop over them) and computed a chunk at a time (x + 0:
    // lanes kept in a buffer across chunks), ending in a whole leaf, a period, a row, a period
    // and a row: the same bits.
    const I period = L / 64;
    for (const I tail : {I{0}, period, I{1}, period + 1}) {
      const auto x = flat.narrow(0, 0, 3 * L + tail);
      INFO("rows " << 3 * L + tail);
      CHECK(st::sum(x, {0}).eval().to_vector() == st::sum(x + 0, {0}).eval().to_vector());
    }
  };
  for (const I n : {I{3}, I{4}, I{16}}) check(double{}, n);
  for (const I n : {I{2}, I{5}, I{7}}) check(float{}, n);
}
