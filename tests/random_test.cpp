// SPDX-License-Identifier: MIT
// strata.random: Philox4x32-10 against Random123's known answers; the stream (element i from
// (key, offset, i) alone: the same values for any thread count and any destination layout);
// generators (seeding, copies, offsets); statistics on 10^6 samples (10^7 under [slow]); every
// dtype PyTorch accepts; PyTorch 1.13's error messages; empty and 0-dim sizes; autograd.
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
using words = std::array<std::uint32_t, 4>;

// Word k of block c of a generator seeded s (its offset at 0): the stream as documented.
std::uint32_t stream_word(std::uint64_t s, std::uint64_t c, int k) {
  const words w = st::philox4x32_10({static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32), 0, 0},
                                    {static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(s >> 32)});
  return w[static_cast<std::size_t>(k)];
}

// Restores the thread count when a test ends.
struct threads_guard {
  int saved = st::get_num_threads();
  explicit threads_guard(int n) { st::set_num_threads(n); }
  ~threads_guard() { st::set_num_threads(saved); }
  threads_guard(const threads_guard&) = delete;
  threads_guard& operator=(const threads_guard&) = delete;
};

template <class T>
bool same_values(const st::Tensor<T>& a, const st::Tensor<T>& b) {
  if (!(a.sizes() == b.sizes())) return false;
  const std::vector<T> x = a.to_vector(), y = b.to_vector();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i])) return false;
  return true;
}

struct moments {
  double mean = 0, var = 0, lag1 = 0;  // lag1: correlation of neighbours x[i], x[i + 1]
};
moments moments_of(const std::vector<double>& x) {
  moments m;
  const double n = static_cast<double>(x.size());
  for (const double v : x) m.mean += v;
  m.mean /= n;
  double cov = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - m.mean;
    m.var += d * d;
    if (i + 1 < x.size()) cov += d * (x[i + 1] - m.mean);
  }
  m.var /= n - 1;
  m.lag1 = cov / (n - 1) / m.var;
  return m;
}
// Pearson's chi-square of counts against equal expected counts.
double chi_square(const std::vector<double>& counts) {
  double total = 0;
  for (const double c : counts) total += c;
  const double expected = total / static_cast<double>(counts.size());
  double chi = 0;
  for (const double c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}
// Counts of u in 100 equal bins of [0, 1).
std::vector<double> histogram100(const std::vector<double>& u) {
  std::vector<double> counts(100, 0);
  for (const double v : u) counts[static_cast<std::size_t>(std::min(99.0, std::floor(v * 100)))] += 1;
  return counts;
}
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// chi-square quantiles at 1 - 1e-6 (scipy.stats.chi2.ppf): a fixed seed passes or fails
// for good; a sound generator fails one of these one time in a million.
constexpr double chi99 = 180.8, chi36 = 91.5, chi5 = 35.9;

// Mean, variance and lag-1 correlation within 5 standard errors; 100-bin chi-square.
void check_uniform_stats(const std::vector<double>& x, double lo, double hi) {
  const double n = static_cast<double>(x.size()), w = hi - lo;
  const moments m = moments_of(x);
  CHECK(std::abs(m.mean - (lo + hi) / 2) < 5 * w * std::sqrt(1.0 / 12 / n));
  CHECK(std::abs(m.var - w * w / 12) < 5 * w * w * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
  CHECK(std::abs(m.lag1) < 5 / std::sqrt(n));
  std::vector<double> u(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) u[i] = (x[i] - lo) / w;
  CHECK(chi_square(histogram100(u)) < chi99);
  CHECK(*std::min_element(x.begin(), x.end()) >= lo);
  CHECK(*std::max_element(x.begin(), x.end()) < hi);
}
// (The histogram is skipped for half and bfloat16: their rounding moves values across bins.)
void check_normal_stats(const std::vector<double>& x, double mean, double sd, bool histogram = true) {
  const double n = static_cast<double>(x.size());
  const moments m = moments_of(x);
  CHECK(std::abs(m.mean - mean) < 5 * sd / std::sqrt(n));
  CHECK(std::abs(m.var - sd * sd) < 5 * sd * sd * std::sqrt(2 / n));
  CHECK(std::abs(m.lag1) < 5 / std::sqrt(n));
  std::vector<double> u(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) u[i] = normal_cdf((x[i] - mean) / sd);
  if (histogram) CHECK(chi_square(histogram100(u)) < chi99);
}

void statistics(std::int64_t n) {
  st::generator g(20240611);
  check_uniform_stats(as_doubles(st::rand<float>({n}, g)), 0, 1);
  check_uniform_stats(as_doubles(st::rand<double>({n}, g)), 0, 1);
  check_uniform_stats(as_doubles(st::uniform_(st::empty<float>({n}), -3, 5, g)), -3, 5);
  check_normal_stats(as_doubles(st::randn<float>({n}, g)), 0, 1);
  check_normal_stats(as_doubles(st::randn<double>({n}, g)), 0, 1);
  check_normal_stats(as_doubles(st::normal(3.0, 2.0, {n}, g)), 3, 2);
  check_normal_stats(as_doubles(st::normal(st::full<double>({n}, -1), st::full<double>({}, 0.5), g)), -1, 0.5);

  // randint covers [-5, 32) uniformly
  const std::vector<std::int64_t> r = st::randint(-5, 32, {n}, g).to_vector();
  std::vector<double> counts(37, 0);
  const bool in_range = std::all_of(r.begin(), r.end(), [](std::int64_t v) { return v >= -5 && v < 32; });
  REQUIRE(in_range);
  for (const std::int64_t v : r) counts[static_cast<std::size_t>(v + 5)] += 1;
  CHECK(chi_square(counts) < chi36);
  CHECK(std::abs(moments_of(as_doubles(st::randint(-5, 32, {n}, g))).lag1) < 5 / std::sqrt(static_cast<double>(n)));
  // a range above 2^32 (128-bit draws): 100 bins of [0, 100 * 2^40)
  const std::int64_t wide = std::int64_t{100} << 40;
  std::vector<double> wide_bins(100, 0);
  const std::vector<std::int64_t> rw = st::randint(0, wide, {n}, g).to_vector();
  const bool wide_in_range = std::all_of(rw.begin(), rw.end(), [](std::int64_t v) { return v >= 0 && v < wide; });
  REQUIRE(wide_in_range);
  for (const std::int64_t v : rw) wide_bins[static_cast<std::size_t>(v >> 40)] += 1;
  CHECK(chi_square(wide_bins) < chi99);

  // bernoulli's rate, scalar and per element
  const double rate = moments_of(as_doubles(st::bernoulli(st::empty<float>({n}), 0.3, g))).mean;
  CHECK(std::abs(rate - 0.3) < 5 * std::sqrt(0.21 / static_cast<double>(n)));
  const auto p = st::from_vector<double>({0.1, 0.5, 0.9, 0.0, 1.0}).expand({n / 5, 5});
  const std::vector<double> b = as_doubles(st::bernoulli(p, g));
  for (std::size_t k = 0; k < 5; ++k) {
    const double pk = p.at({0, static_cast<std::int64_t>(k)});
    double hits = 0;
    for (std::size_t i = k; i < b.size(); i += 5) hits += b[i];
    const double m = static_cast<double>(n / 5);
    CHECK(std::abs(hits / m - pk) <= 5 * std::sqrt(pk * (1 - pk) / m));
  }

  // randperm is a permutation
  std::vector<std::int64_t> perm = st::randperm(n, g).to_vector();
  std::vector<std::int64_t> first(perm.begin(), perm.begin() + 1000);
  std::sort(perm.begin(), perm.end());
  std::vector<std::int64_t> iota(static_cast<std::size_t>(n));
  std::iota(iota.begin(), iota.end(), 0);
  CHECK(perm == iota);
  CHECK(!std::is_sorted(first.begin(), first.end()));
}
}  // namespace

TEST_CASE("Philox4x32-10 gives Random123's known answers", "[random][philox]") {
  static_assert(st::philox4x32_10({0, 0, 0, 0}, {0, 0}) == words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  static_assert(st::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
                words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(st::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("element i comes from block offset + i / 4 of the seed's stream", "[random][stream]") {
  const std::uint64_t s = 0x0123456789abcdefull;
  st::generator g(s);
  // rand<float>: the top 24 bits of word i; 1003 values take 251 blocks
  const std::vector<float> f = st::rand<float>({1003}, g).to_vector();
  for (std::size_t i = 0; i < f.size(); ++i)
    REQUIRE(f[i] == static_cast<float>(stream_word(s, i / 4, static_cast<int>(i % 4)) >> 8) * 0x1p-24f);
  CHECK(g.get_offset() == 251);
  // rand<double>: the top 53 bits of the 64-bit word (2i, 2i + 1), after those 251 blocks
  const std::vector<double> d = st::rand<double>({10}, g).to_vector();
  for (std::uint64_t i = 0; i < d.size(); ++i) {
    const std::uint64_t lo = stream_word(s, 251 + i / 2, static_cast<int>(2 * (i % 2)));
    const std::uint64_t hi = stream_word(s, 251 + i / 2, static_cast<int>(2 * (i % 2) + 1));
    CHECK(d[i] == static_cast<double>(((hi << 32) | lo) >> 11) * 0x1p-53);
  }
  CHECK(g.get_offset() == 256);
  // randn<float>: Box-Muller on the words (2p, 2p + 1)
  g.manual_seed(s);
  const std::vector<float> z = st::randn<float>({9}, g).to_vector();
  CHECK(g.get_offset() == 3);  // 5 pairs, 10 words
  for (std::size_t p = 0; p < 5; ++p) {
    const std::uint32_t w0 = stream_word(s, p / 2, static_cast<int>(2 * (p % 2)));
    const std::uint32_t w1 = stream_word(s, p / 2, static_cast<int>(2 * (p % 2) + 1));
    const double u1 = static_cast<double>(static_cast<float>(static_cast<std::int32_t>(w0 >> 1)) * 0x1p-31f + 0x1p-32f);
    const double angle = static_cast<double>(static_cast<float>(w1 >> 8) * 0x1p-24f * 6.2831853f);
    const double r = std::sqrt(-2 * std::log(u1));
    CHECK(z[2 * p] == Approx(r * std::cos(angle)).margin(1e-5));
    if (2 * p + 1 < z.size()) CHECK(z[2 * p + 1] == Approx(r * std::sin(angle)).margin(1e-5));
  }
  // a complex element is two consecutive reals of the real stream
  g.manual_seed(s);
  const auto c = st::rand<std::complex<float>>({6}, g).to_vector();
  g.manual_seed(s);
  const auto c_reals = st::rand<float>({12}, g).to_vector();
  for (std::size_t i = 0; i < c.size(); ++i) CHECK((c[i].real() == c_reals[2 * i] && c[i].imag() == c_reals[2 * i + 1]));
  g.manual_seed(s);
  const auto cn = st::randn<std::complex<float>>({6}, g).to_vector();
  g.manual_seed(s);
  const auto cn_reals = st::randn<float>({12}, g).to_vector();
  const auto half_var = static_cast<float>(1 / std::sqrt(2.0));
  for (std::size_t i = 0; i < cn.size(); ++i)
    CHECK((cn[i].real() == cn_reals[2 * i] * half_var && cn[i].imag() == cn_reals[2 * i + 1] * half_var));
}

TEST_CASE("the same seed gives the same values on 1 and 2 threads", "[random][threads]") {
  constexpr std::int64_t n = 1 << 20;  // above two grains: split over threads
  const auto draw_all = [](int threads) {
    threads_guard t(threads);
    st::generator g(7);
    return std::make_tuple(st::rand<float>({n}, g), st::randn<float>({n}, g), st::randn<double>({n + 1}, g),
                           st::randint(-1000, 1000, {n}, g), st::bernoulli(st::full<float>({n}, 0.25f), g),
                           st::randn<std::complex<float>>({n}, g), st::normal(st::zeros<float>({n}), st::ones<float>({}), g),
                           st::uniform_(st::empty<float>({1000, 1100}).t(), -2, 2, g), st::randperm(n, g));
  };
  const auto one = draw_all(1), two = draw_all(2);
  CHECK(same_values(std::get<0>(one), std::get<0>(two)));
  CHECK(same_values(std::get<1>(one), std::get<1>(two)));
  CHECK(same_values(std::get<2>(one), std::get<2>(two)));
  CHECK(same_values(std::get<3>(one), std::get<3>(two)));
  CHECK(same_values(std::get<4>(one), std::get<4>(two)));
  CHECK(same_values(std::get<5>(one), std::get<5>(two)));
  CHECK(same_values(std::get<6>(one), std::get<6>(two)));
  CHECK(same_values(std::get<7>(one), std::get<7>(two)));
  CHECK(same_values(std::get<8>(one), std::get<8>(two)));
}

TEST_CASE("a strided destination gets the values of its logical indices", "[random][layout]") {
  const auto check_layouts = [](std::int64_t rows, std::int64_t cols) {
    st::generator g1(99), g2(99), g3(99), g4(99);
    auto plain = st::empty<float>({rows, cols});
    auto transposed = st::empty<float>({cols, rows}).t();
    auto stepped = st::empty<float>({rows, 2 * cols + 1}).slice(1, 1, std::nullopt, 2);
    auto permuted = st::empty<float>({cols, 2, rows}).select(1, 1).t();
    st::uniform_(plain, -1, 1, g1);
    st::uniform_(transposed, -1, 1, g2);
    st::uniform_(stepped, -1, 1, g3);
    st::uniform_(permuted, -1, 1, g4);
    CHECK(same_values(plain, transposed));
    CHECK(same_values(plain, stepped));
    CHECK(same_values(plain, permuted));
    st::normal_(plain, 2, 3, g1);
    st::normal_(transposed, 2, 3, g2);
    st::normal_(stepped, 2, 3, g3);
    CHECK(same_values(plain, transposed));
    CHECK(same_values(plain, stepped));
  };
  check_layouts(7, 5);
  check_layouts(900, 700);  // on threads as well
  // complex and double views
  st::generator a(5), b(5);
  auto c1 = st::empty<std::complex<double>>({30, 40});
  auto c2 = st::empty<std::complex<double>>({40, 30}).t();
  st::normal_(c1, 1, 2, a);
  st::normal_(c2, 1, 2, b);
  CHECK(same_values(c1, c2));
  // the transposed view's storage holds the values transposed
  st::generator e(11), f(11);
  auto x = st::rand<double>({4, 6}, e);
  auto y = st::empty<double>({6, 4});
  st::uniform_(y.t(), 0, 1, f);
  CHECK(same_values(x, y.t().contiguous()));
  CHECK(same_values(x.t().contiguous(), y));
}

TEST_CASE("generators: seeds, offsets, copies and the default generator", "[random][generator]") {
  st::generator a(1), b(2);
  CHECK(!same_values(st::rand<float>({100}, a), st::rand<float>({100}, b)));
  a.manual_seed(3);
  b.manual_seed(3);
  CHECK(same_values(st::randn<double>({100}, a), st::randn<double>({100}, b)));
  CHECK(a.initial_seed() == 3);
  CHECK(a.get_offset() == 50);

  // a copy replays the stream; assigning the copy back restores it
  const st::generator saved = a;
  const auto x = st::rand<float>({33}, a);
  const auto y = st::rand<float>({33}, a);
  CHECK(!same_values(x, y));
  a = saved;
  CHECK(same_values(st::rand<float>({33}, a), x));
  st::generator copy(saved);
  CHECK(same_values(st::rand<float>({33}, copy), x));
  CHECK(same_values(st::rand<float>({33}, copy), y));
  copy.set_offset(saved.get_offset());
  CHECK(same_values(st::rand<float>({33}, copy), x));

  // seed() picks a seed and restarts; a default generator uses PyTorch's default seed
  st::generator fresh;
  CHECK(fresh.initial_seed() == 67280421310721ull);
  const std::uint64_t s = fresh.seed();
  CHECK(fresh.initial_seed() == s);
  CHECK(fresh.get_offset() == 0);

  // the default generator
  st::manual_seed(42);
  CHECK(st::initial_seed() == 42);
  const auto d1 = st::rand<float>({5, 5});
  const auto d2 = st::randint(10, {5});
  st::manual_seed(42);
  CHECK(same_values(st::rand<float>({5, 5}), d1));
  CHECK(same_values(st::randint(10, {5}), d2));
  CHECK(&st::manual_seed(42) == &st::default_generator());
  CHECK(st::default_generator().get_offset() == 0);
  st::generator same(42);
  CHECK(same_values(st::rand<float>({5, 5}, same), st::rand<float>({5, 5})));
  const std::uint64_t picked = st::seed();
  CHECK(st::initial_seed() == picked);
}

TEST_CASE("threads sharing a generator get disjoint counters", "[random][generator][threads]") {
  // Each call reserves its blocks under the generator's lock: whatever the interleaving, the
  // calls together use blocks [0, total) once each, so their values are those of one call.
  st::generator shared(31);
  std::vector<std::vector<float>> drawn(4);
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < drawn.size(); ++w)
    workers.emplace_back([&shared, &out = drawn[w]] {
      for (int call = 0; call < 50; ++call)
        for (const float v : st::rand<float>({1000}, shared).to_vector()) out.push_back(v);
    });
  for (std::thread& t : workers) t.join();
  CHECK(shared.get_offset() == 4 * 50 * 250);
  std::vector<float> all;
  for (const auto& d : drawn) all.insert(all.end(), d.begin(), d.end());
  st::generator replay(31);
  std::vector<float> once = st::rand<float>({4 * 50 * 1000}, replay).to_vector();
  std::sort(all.begin(), all.end());
  std::sort(once.begin(), once.end());
  CHECK(all == once);
}

TEST_CASE("every dtype: values on the dtype's grid, in range", "[random][dtype]") {
  st::generator g(8);
  const auto grid = [](const std::vector<double>& v, double steps) {
    for (const double x : v)
      if (!(x >= 0 && x < 1 && std::floor(x * steps) == x * steps)) return false;
    return true;
  };
  CHECK(grid(as_doubles(st::rand<st::half>({4000}, g)), 0x1p11));
  CHECK(grid(as_doubles(st::rand<st::bfloat16>({4000}, g)), 0x1p8));
  CHECK(grid(as_doubles(st::rand<float>({4000}, g)), 0x1p24));
  CHECK(grid(as_doubles(st::rand<double>({4000}, g)), 0x1p53));
  const auto q = st::rand<st::float128>({2000}, g).to_vector();
  CHECK(std::all_of(q.begin(), q.end(), [](const st::float128& v) { return v >= 0 && v < 1; }));
  CHECK(std::any_of(q.begin(), q.end(), [](const st::float128& v) { return v * st::float128(0x1p53) != floor(v * st::float128(0x1p53)); }));
  check_uniform_stats(as_doubles(st::rand<st::float128>({20000}, g)), 0, 1);
  check_uniform_stats(as_doubles(st::rand<st::half>({100000}, g)), 0, 1);
  check_normal_stats(as_doubles(st::randn<st::half>({100000}, g)), 0, 1, false);
  check_normal_stats(as_doubles(st::randn<st::bfloat16>({100000}, g)), 0, 1, false);
  check_normal_stats(as_doubles(st::randn<st::float128>({20000}, g)), 0, 1);
  check_normal_stats(as_doubles(st::normal<st::float128>(1, 3, {20000}, g)), 1, 3);

  // complex: each part uniform, or N(0, 1/2); normal_'s scalar mean moves both parts
  std::vector<double> re, im;
  const auto parts = [&re, &im](const auto& values) {
    re.clear();
    im.clear();
    for (const auto& c : values) {
      re.push_back(static_cast<double>(c.real()));
      im.push_back(static_cast<double>(c.imag()));
    }
  };
  parts(st::rand<std::complex<float>>({50000}, g).to_vector());
  check_uniform_stats(re, 0, 1);
  check_uniform_stats(im, 0, 1);
  parts(st::normal_(st::empty<std::complex<double>>({50000}), 5, 2, g).to_vector());
  check_normal_stats(re, 5, std::sqrt(2.0));
  check_normal_stats(im, 5, std::sqrt(2.0));
  // a complex mean tensor adds its parts; std scales both
  parts(st::normal(st::full<std::complex<float>>({50000}, {1, -2}), st::full<float>({1}, 4), g).to_vector());
  check_normal_stats(re, 1, 4 / std::sqrt(2.0));
  check_normal_stats(im, -2, 4 / std::sqrt(2.0));

  // randint into every integer and floating dtype
  const auto all_hit = [](const std::vector<double>& v, double lo, double hi) {
    std::map<double, int> seen;
    for (const double x : v) {
      if (x < lo || x >= hi || x != std::floor(x)) return false;
      ++seen[x];
    }
    return seen.size() == static_cast<std::size_t>(hi - lo);
  };
  CHECK(all_hit(as_doubles(st::randint<std::int8_t>(-128, 128, {20000}, g)), -128, 128));
  CHECK(all_hit(as_doubles(st::randint<std::uint8_t>(0, 256, {20000}, g)), 0, 256));
  CHECK(all_hit(as_doubles(st::randint<std::int16_t>(-40, 40, {20000}, g)), -40, 40));
  CHECK(all_hit(as_doubles(st::randint<std::int32_t>(100, 140, {20000}, g)), 100, 140));
  CHECK(all_hit(as_doubles(st::randint<bool>(0, 2, {100}, g)), 0, 2));
  CHECK(all_hit(as_doubles(st::randint<st::half>(-5, 5, {1000}, g)), -5, 5));
  CHECK(all_hit(as_doubles(st::randint<st::bfloat16>(0, 100, {10000}, g)), 0, 100));
  CHECK(all_hit(as_doubles(st::randint<float>(-50, 50, {10000}, g)), -50, 50));
  CHECK(all_hit(as_doubles(st::randint<double>(7, {1000}, g)), 0, 7));
  CHECK(all_hit(as_doubles(st::randint<st::float128>(3, 9, {1000}, g)), 3, 9));
  // PyTorch's update_to: values cast to half stay below `to`
  for (const double v : as_doubles(st::randint<st::half>(65400, 65504, {1000}, g))) CHECK((v >= 65400 && v < 65504));
  // the whole int64 range, and ranges above 2^32
  const auto big = st::randint(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), {1000}, g).to_vector();
  CHECK(std::any_of(big.begin(), big.end(), [](std::int64_t v) { return v < -(std::int64_t{1} << 62); }));
  CHECK(std::any_of(big.begin(), big.end(), [](std::int64_t v) { return v > (std::int64_t{1} << 62); }));
  for (const std::int64_t v : st::randint(std::int64_t{1} << 40, (std::int64_t{1} << 40) + 3, {100}, g).to_vector())
    CHECK((v >= std::int64_t{1} << 40 && v < (std::int64_t{1} << 40) + 3));

  // bernoulli(t, p) into floating, integer and bool tensors; bernoulli(p) keeps p's dtype
  CHECK(all_hit(as_doubles(st::bernoulli(st::empty<bool>({200}), 0.5, g)), 0, 2));
  CHECK(all_hit(as_doubles(st::bernoulli(st::empty<std::int64_t>({200}), 0.5, g)), 0, 2));
  CHECK(all_hit(as_doubles(st::bernoulli(st::empty<st::bfloat16>({200}), 0.5, g)), 0, 2));
  CHECK(all_hit(as_doubles(st::bernoulli(st::empty<st::float128>({200}), 0.5, g)), 0, 2));
  CHECK(as_doubles(st::bernoulli(st::empty<double>({50}), 1.0, g)) == std::vector<double>(50, 1.0));
  CHECK(as_doubles(st::bernoulli(st::empty<double>({50}), 0.0, g)) == std::vector<double>(50, 0.0));
  CHECK(all_hit(as_doubles(st::bernoulli(st::full<st::bfloat16>({200}, 0.5f), g)), 0, 2));
  CHECK(all_hit(as_doubles(st::bernoulli(st::full<st::float128>({200}, st::float128(0.5)), g)), 0, 2));
  const auto ends = as_doubles(st::bernoulli(st::from_vector<double>({0, 1, 0, 1}).t(), g));
  CHECK(ends == std::vector<double>{0, 1, 0, 1});

  // randperm in every dtype it allows
  const auto is_perm = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i] != static_cast<double>(i)) return false;
    return true;
  };
  CHECK(is_perm(as_doubles(st::randperm<std::uint8_t>(256, g))));
  CHECK(is_perm(as_doubles(st::randperm<std::int8_t>(128, g))));
  CHECK(is_perm(as_doubles(st::randperm<std::int16_t>(1000, g))));
  CHECK(is_perm(as_doubles(st::randperm<std::int32_t>(1000, g))));
  CHECK(is_perm(as_doubles(st::randperm<st::half>(2049, g))));
  CHECK(is_perm(as_doubles(st::randperm<st::bfloat16>(257, g))));
  CHECK(is_perm(as_doubles(st::randperm<float>(5000, g))));
  CHECK(is_perm(as_doubles(st::randperm<double>(5000, g))));
  CHECK(is_perm(as_doubles(st::randperm<st::float128>(100, g))));
}

TEST_CASE("randperm draws each permutation of 3 equally often", "[random][randperm]") {
  st::generator g(4);
  std::map<std::vector<std::int64_t>, double> seen;
  for (int i = 0; i < 60000; ++i) seen[st::randperm(3, g).to_vector()] += 1;
  REQUIRE(seen.size() == 6);
  std::vector<double> counts;
  for (const auto& [perm, count] : seen) counts.push_back(count);
  CHECK(chi_square(counts) < chi5);
}

TEST_CASE("statistics of 10^6 samples", "[random][stats]") { statistics(1000000); }
TEST_CASE("statistics of 10^7 samples", "[random][stats][slow]") { statistics(10000000); }

TEST_CASE("empty and 0-dim sizes", "[random][sizes]") {
  st::generator g(1);
  CHECK(st::rand<float>({0}, g).numel() == 0);
  CHECK(st::randn<double>({3, 0}, g).sizes() == st::int_list{3, 0});
  CHECK(st::randint(5, {0, 2}, g).numel() == 0);
  CHECK(g.get_offset() == 0);  // nothing drawn
  const auto r = st::rand<float>({}, g);
  CHECK(r.dim() == 0);
  CHECK((r.item() >= 0 && r.item() < 1));
  CHECK(st::randn<float>({}, g).dim() == 0);
  CHECK(st::randint(1, {}, g).item() == 0);
  CHECK(st::normal(2.0, 0.0, {}, g).item() == 2.0f);
  CHECK(st::normal(st::zeros<float>({}), st::ones<float>({}), g).dim() == 0);
  CHECK(st::normal(st::zeros<float>({0}), st::ones<float>({}), g).sizes() == st::int_list{0});
  CHECK(st::normal(st::zeros<float>({3, 1}), st::ones<float>({4}), g).sizes() == st::int_list{3, 4});
  CHECK(st::bernoulli(st::full<float>({}, 1.0f), g).item() == 1.0f);
  CHECK(st::bernoulli(st::empty<float>({0}), g).numel() == 0);
  CHECK(st::bernoulli(st::empty<float>({}), 1.0, g).item() == 1.0f);
  CHECK(st::randperm(0, g).numel() == 0);
  CHECK(st::randperm(1, g).to_vector() == std::vector<std::int64_t>{0});
  CHECK(st::uniform_(st::empty<double>({0, 4}), 0, 1, g).numel() == 0);
  CHECK(st::normal_(st::empty<double>({}), 0, 1, g).dim() == 0);
  // *_like keep sizes and dtype
  const auto like = st::empty<double>({2, 3}).t();
  CHECK(st::rand_like(like, g).sizes() == st::int_list{3, 2});
  CHECK(st::randn_like(st::empty<st::half>({4}), g).numel() == 4);
  for (const double v : as_doubles(st::randint_like(like, 4, g))) CHECK((v >= 0 && v < 4));
  for (const double v : as_doubles(st::randint_like(like, -4, -2, g))) CHECK((v >= -4 && v < -2));
  // the scalar normal forms
  for (const double v : as_doubles(st::normal(st::full<double>({100}, 10), 0.0, g))) CHECK(v == 10);
  for (const double v : as_doubles(st::normal(-3.0, st::zeros<float>({2, 5}), g))) CHECK(v == -3);
  CHECK(st::normal(1.0, st::ones<float>({2, 5}), g).sizes() == st::int_list{2, 5});
  CHECK(st::normal(st::ones<float>({2, 5}), 1.0, g).sizes() == st::int_list{2, 5});
  // integer std converts; infinite mean stays infinite
  CHECK(st::normal(st::zeros<float>({3}), st::ones<std::int64_t>({3}), g).numel() == 3);
  for (const double v : as_doubles(st::normal_(st::empty<float>({4}), std::numeric_limits<double>::infinity(), 1, g)))
    CHECK(v == std::numeric_limits<double>::infinity());
}

TEST_CASE("sampled tensors have zero gradients, as PyTorch's", "[random][autograd]") {
  st::generator g(2);
  auto mean = st::zeros<float>({3}).requires_grad_();
  auto sd = st::ones<float>({3}).requires_grad_();
  const auto y = st::normal(mean, sd, g);
  CHECK(y.requires_grad());
  st::sum(y * 2).backward();
  CHECK(as_doubles(mean.grad()) == std::vector<double>(3, 0.0));
  CHECK(as_doubles(sd.grad()) == std::vector<double>(3, 0.0));
  auto m2 = st::zeros<double>({2, 1}).requires_grad_();
  st::sum(st::normal(m2, 1.0, g)).backward();
  CHECK(as_doubles(m2.grad()) == std::vector<double>(2, 0.0));
  auto s2 = st::ones<double>({4}).requires_grad_();
  st::sum(st::normal(0.0, s2, g)).backward();
  CHECK(as_doubles(s2.grad()) == std::vector<double>(4, 0.0));
  auto p = st::full<float>({5}, 0.5f).requires_grad_();
  const auto b = st::bernoulli(p, g);
  CHECK(b.requires_grad());
  st::sum(b).backward();
  CHECK(as_doubles(p.grad()) == std::vector<double>(5, 0.0));
  // no grad mode, and the creation functions, record nothing
  {
    st::no_grad off;
    CHECK(!st::normal(mean, sd, g).requires_grad());
  }
  CHECK(!st::rand_like(mean, g).requires_grad());
  CHECK(!st::bernoulli(p, 0.5, g).requires_grad());
}

TEST_CASE("errors carry PyTorch 1.13's messages", "[random][errors]") {
  st::generator g(3);
  // randint
  CHECK_THROWS_WITH(st::randint(5, 5, {3}, g), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  CHECK_THROWS_WITH(st::randint(6, 5, {3}, g), "random_ expects 'from' to be less than 'to', but got from=6 >= to=5");
  CHECK_THROWS_WITH(st::randint(0, {3}, g), "random_ expects 'from' to be less than 'to', but got from=0 >= to=0");
  CHECK_THROWS_WITH(st::randint(-1, {3}, g), "random_ expects 'from' to be less than 'to', but got from=0 >= to=-1");
  CHECK_THROWS_WITH(st::randint_like(st::zeros<float>({3}), 5, 5, g),
                    "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  CHECK_THROWS_WITH(st::randint<st::half>(65500, 65504, {3}, g),
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=65500 >= to=65472");
  CHECK_THROWS_WITH(st::randint<std::uint8_t>(-1, 3, {3}, g), "from is out of bounds for unsigned char");
  CHECK_THROWS_WITH(st::randint<std::uint8_t>(0, 300, {3}, g), "to - 1 is out of bounds for unsigned char");
  CHECK_THROWS_WITH(st::randint<std::int8_t>(0, 1ll << 40, {3}, g), "to - 1 is out of bounds for signed char");
  CHECK_THROWS_WITH(st::randint<std::int16_t>(-(1ll << 40), 1, {3}, g), "from is out of bounds for short int");
  CHECK_THROWS_WITH(st::randint<std::int32_t>(0, 1ll << 40, {3}, g), "to - 1 is out of bounds for int");
  CHECK_THROWS_WITH(st::randint<bool>(-1, 1, {3}, g), "from is out of bounds for bool");
  CHECK_THROWS_WITH(st::randint<bool>(5, {3}, g), "to - 1 is out of bounds for bool");
  CHECK_THROWS_WITH(st::randint<st::half>(0, 1ll << 40, {3}, g), "to - 1 is out of bounds for c10::Half");
  CHECK_THROWS_WITH(st::randint<st::half>(-(1ll << 40), 1, {3}, g), "from is out of bounds for c10::Half");
  CHECK_THROWS_WITH(st::randint<std::complex<float>>(0, 5, {3}, g),
                    "check_random_bounds handles only integral, floating-point and boolean types");
  CHECK_THROWS_WITH(st::randint<std::uint8_t>(-1, 5, {0}, g), "from is out of bounds for unsigned char");
  // rand, randn, uniform_ and normal_ on integer dtypes
  CHECK_THROWS_AS(st::rand<std::int64_t>({3}, g), st::dtype_error);
  CHECK_THROWS_WITH(st::rand<std::int64_t>({3}, g), "\"check_uniform_bounds\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::rand<bool>({3}, g), "\"check_uniform_bounds\" not implemented for 'Bool'");
  CHECK_THROWS_WITH(st::rand<std::int32_t>({3}, g), "\"check_uniform_bounds\" not implemented for 'Int'");
  CHECK_THROWS_WITH(st::rand<std::int16_t>({3}, g), "\"check_uniform_bounds\" not implemented for 'Short'");
  CHECK_THROWS_WITH(st::rand<std::int8_t>({3}, g), "\"check_uniform_bounds\" not implemented for 'Char'");
  CHECK_THROWS_WITH(st::rand<std::uint8_t>({3}, g), "\"check_uniform_bounds\" not implemented for 'Byte'");
  CHECK_THROWS_WITH(st::rand_like(st::zeros<std::int64_t>({3}), g), "\"check_uniform_bounds\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<std::int64_t>({0}), 0, 1, g), "\"check_uniform_bounds\" not implemented for 'Long'");
  CHECK_THROWS_AS(st::randn<std::int64_t>({3}, g), st::dtype_error);
  CHECK_THROWS_WITH(st::randn<std::int64_t>({3}, g), "\"normal_kernel_cpu\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::randn_like(st::zeros<bool>({3}), g), "\"normal_kernel_cpu\" not implemented for 'Bool'");
  CHECK_THROWS_WITH(st::normal<std::int64_t>(0, 1, {3}, g), "\"normal_kernel_cpu\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::normal(st::zeros<std::int64_t>({3}), st::ones<float>({3}), g),
                    "\"normal_kernel_cpu\" not implemented for 'Long'");
  // normal's std
  CHECK_THROWS_WITH(st::normal(0.0, -1.0, {3}, g), "normal expects std >= 0.0, but found std -1");
  CHECK_THROWS_WITH(st::normal_(st::zeros<float>({3}), 0, -0.5, g), "normal expects std >= 0.0, but found std -0.5");
  CHECK_THROWS_WITH(st::normal_(st::zeros<float>({3}), 0, -1e-10, g), "normal expects std >= 0.0, but found std -1e-10");
  CHECK_THROWS_WITH(st::normal_(st::zeros<float>({3}), 0, std::nan(""), g), "normal expects std >= 0.0, but found std nan");
  CHECK_THROWS_WITH(st::normal_(st::zeros<std::int64_t>({0}), 0, -1, g), "normal expects std >= 0.0, but found std -1");
  CHECK_THROWS_WITH(st::normal(st::zeros<float>({3}), -1.0, g), "normal expects std >= 0.0, but found std -1");
  CHECK_THROWS_WITH(st::normal(0.0, st::from_vector<float>({1, -1}), g), "normal expects all elements of std >= 0.0");
  CHECK_THROWS_WITH(st::normal(st::zeros<float>({3}), st::from_vector<float>({1, 1, std::nanf("")}), g),
                    "normal expects all elements of std >= 0.0");
  CHECK_THROWS_WITH(st::normal(st::zeros<std::complex<float>>({3}), st::ones<std::complex<float>>({3}), g),
                    "normal expects standard deviation to be non-complex");
  CHECK_THROWS_AS(st::normal(st::zeros<float>({3}), st::ones<float>({2}), g), st::shape_error);
  CHECK_THROWS_WITH(st::normal(st::zeros<float>({3}), st::ones<float>({2}), g),
                    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  CHECK_THROWS_WITH(st::normal(st::zeros<float>({0}), st::ones<float>({3}), g),
                    "The size of tensor a (0) must match the size of tensor b (3) at non-singleton dimension 0");
  // uniform_'s bounds
  CHECK_THROWS_WITH(st::uniform_(st::zeros<float>({3}), 1, 0, g),
                    "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<std::complex<float>>({0}), 1, 0, g),
                    "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<float>({3}), 0, std::numeric_limits<double>::infinity(), g),
                    "to is out of bounds for float");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<float>({3}), 0, std::nan(""), g), "to is out of bounds for float");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<double>({3}), std::nan(""), 1, g), "from is out of bounds for double");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<st::half>({3}), 0, 70000, g), "to is out of bounds for c10::Half");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<st::half>({3}), -70000, 0, g), "from is out of bounds for c10::Half");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<st::half>({3}), -60000, 60000, g),
                    "uniform_ expects to-from <= std::numeric_limits<Half>::max(), but found to=60000 and from=-60000 which "
                    "result in to-from to exceed the limit");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<st::bfloat16>({3}), -3e38, 3e38, g),
                    "uniform_ expects to-from <= std::numeric_limits<BFloat16>::max(), but found to=3e+38 and from=-3e+38 "
                    "which result in to-from to exceed the limit");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<float>({3}), -3e38, 3e38, g),
                    "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and from=-3e+38 "
                    "which result in to-from to exceed the limit");
  CHECK_THROWS_WITH(st::uniform_(st::zeros<double>({3}), -1e308, 1e308, g),
                    "uniform_ expects to-from <= std::numeric_limits<Double>::max(), but found to=1e+308 and from=-1e+308 "
                    "which result in to-from to exceed the limit");
  for (const double v : as_doubles(st::uniform_(st::zeros<float>({3}), 2, 2, g))) CHECK(v == 2);
  // bernoulli
  const std::string p_range = "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                              "improved?  If so, please report an enhancement request to PyTorch.)";
  CHECK_THROWS_WITH(st::bernoulli(st::from_vector<float>({0.5f, 1.5f}), g), p_range);
  CHECK_THROWS_WITH(st::bernoulli(st::from_vector<float>({0.5f, -0.5f}), g), p_range);
  CHECK_THROWS_WITH(st::bernoulli(st::from_vector<double>({0.5, std::nan("")}), g), p_range);
  CHECK(st::bernoulli(st::full<float>({2}, 2.0f).narrow(0, 0, 0), g).numel() == 0);
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<std::int64_t>({2}), g), "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<bool>({2}), g), "\"bernoulli_tensor_cpu_p_\" not implemented for 'Bool'");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<st::half>({2}), g), "\"bernoulli_tensor_cpu_self_\" not implemented for 'Half'");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<std::complex<float>>({2}), g),
                    "\"bernoulli_tensor_cpu_self_\" not implemented for 'ComplexFloat'");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<float>({3}), 1.5, g), "bernoulli_ expects p to be in [0, 1], but got p=1.5");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<float>({0}), -0.5, g), "bernoulli_ expects p to be in [0, 1], but got p=-0.5");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<float>({3}), std::nan(""), g), "bernoulli_ expects p to be in [0, 1], but got p=nan");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<st::half>({3}), 0.5, g), "\"bernoulli_scalar_cpu_\" not implemented for 'Half'");
  CHECK_THROWS_WITH(st::bernoulli(st::zeros<std::complex<double>>({3}), 0.5, g),
                    "\"bernoulli_scalar_cpu_\" not implemented for 'ComplexDouble'");
  // randperm
  CHECK_THROWS_AS(st::randperm(-1, g), st::shape_error);
  CHECK_THROWS_WITH(st::randperm(-1, g), "Trying to create tensor with negative dimension -1: [-1]");
  CHECK_THROWS_WITH(st::randperm<bool>(-1, g), "Trying to create tensor with negative dimension -1: [-1]");
  CHECK_THROWS_WITH(st::randperm<bool>(5, g), "\"randperm\" not implemented for 'Bool'");
  CHECK_THROWS_WITH(st::randperm<std::complex<float>>(5, g), "\"randperm\" not implemented for 'ComplexFloat'");
  CHECK_THROWS_WITH(st::randperm<std::int8_t>(129, g), "value cannot be converted to type int8_t without overflow");
  CHECK_THROWS_WITH(st::randperm<std::uint8_t>(257, g), "value cannot be converted to type uint8_t without overflow");
  CHECK_THROWS_WITH(st::randperm<std::int16_t>((1 << 15) + 1, g), "value cannot be converted to type int16_t without overflow");
  CHECK_THROWS_WITH(st::randperm<st::half>(70000, g), "value cannot be converted to type at::Half without overflow");
  CHECK_THROWS_WITH(st::randperm<st::half>(2050, g), "n cannot be greater than 2049 for Half type.");
  CHECK_THROWS_WITH(st::randperm<float>((1 << 24) + 2, g), "n cannot be greater than 2^24+1 for Float type.");
  // sizes
  CHECK_THROWS_AS(st::rand<float>({-1}, g), st::shape_error);
  CHECK_THROWS_WITH(st::rand<float>({-1}, g), "Trying to create tensor with negative dimension -1: [-1]");
  CHECK_THROWS_WITH(st::randn<float>({2, -1}, g), "Trying to create tensor with negative dimension -1: [2, -1]");
  // in place: a leaf that requires grad, and a destination whose elements share memory
  auto leaf = st::zeros<float>({3}).requires_grad_();
  CHECK_THROWS_WITH(st::uniform_(leaf, 0, 1, g), "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK_THROWS_WITH(st::normal_(leaf, 0, 1, g), "a leaf Variable that requires grad is being used in an in-place operation.");
  const std::string overlap = "unsupported operation: more than one element of the written-to tensor refers to a single "
                              "memory location. Please clone() the tensor before performing the operation.";
  CHECK_THROWS_AS(st::uniform_(st::zeros<float>({3}).expand({2, 3}), 0, 1, g), st::overlap_error);
  CHECK_THROWS_WITH(st::uniform_(st::zeros<float>({3}).expand({2, 3}), 0, 1, g), overlap);
  CHECK_THROWS_WITH(st::normal_(st::zeros<float>({3}).expand({2, 3}), 0, 1, g), overlap);
  // a failed call draws nothing: only uniform_(.., 2, 2) above drew (one block)
  CHECK(g.get_offset() == 1);
}
