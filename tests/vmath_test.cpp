// SPDX-License-Identifier: MIT
// Accuracy of the vectorised transcendental functions (SLEEF inside the fused loop) against
// float128 references: wide sweeps, the overflow and underflow thresholds, subnormals,
// signed zeros, infinities and NaN. The bound is 1 ulp (SLEEF's u10 variants, and sqrt is
// the IEEE instruction), except two composed functions: rsqrt = 1 / sqrt(x) rounds twice
// (1.5 ulp, as the same formula over libm), and sigmoid's stable form e / (1 + e) with
// e = exp(-|x|) rounds three times after a 1-ulp exp (2.5 ulp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>
import strata;

namespace st = strata;

namespace {
using q = st::float128;

// |got - want| in units of T's ulp at want (want rounded to T decides the binade).
template <class T>
double ulp_error(T got, const q& want) {
  const T w = static_cast<T>(want);
  if (std::isinf(w)) return std::isinf(got) && std::signbit(got) == std::signbit(w) ? 0.0 : 1e9;
  const T a = std::abs(w);
  T ulp = std::nextafter(a, std::numeric_limits<T>::infinity()) - a;
  if (a == std::numeric_limits<T>::max()) ulp = a - std::nextafter(a, T(0));
  return static_cast<double>(abs(q(got) - want) / q(ulp));
}

template <class T>
std::vector<T> sweep(T lo, T hi, int n, std::uint32_t seed, bool both_signs) {
  std::vector<T> v;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(std::log(static_cast<double>(lo)), std::log(static_cast<double>(hi)));
  for (int i = 0; i < n; ++i) {
    const T x = static_cast<T>(std::exp(u(gen)));
    v.push_back(both_signs && (i % 2) ? -x : x);
  }
  return v;
}

struct case_t {
  std::string name;
  std::function<st::Tensor<float>(const st::Tensor<float>&)> f32;
  std::function<st::Tensor<double>(const st::Tensor<double>&)> f64;
  std::function<q(const q&)> ref;
  std::function<double(double)> libm;
};

std::vector<case_t> cases() {
  using F = st::Tensor<float>;
  using D = st::Tensor<double>;
  return {
      {"exp", [](const F& x) { return F(st::exp(x)); }, [](const D& x) { return D(st::exp(x)); },
       [](const q& x) { return exp(x); }, [](double x) { return std::exp(x); }},
      {"expm1", [](const F& x) { return F(st::expm1(x)); }, [](const D& x) { return D(st::expm1(x)); },
       [](const q& x) { return expm1(x); }, [](double x) { return std::expm1(x); }},
      {"log", [](const F& x) { return F(st::log(x)); }, [](const D& x) { return D(st::log(x)); },
       [](const q& x) { return log(x); }, [](double x) { return std::log(x); }},
      {"log1p", [](const F& x) { return F(st::log1p(x)); }, [](const D& x) { return D(st::log1p(x)); },
       [](const q& x) { return log1p(x); }, [](double x) { return std::log1p(x); }},
      {"sqrt", [](const F& x) { return F(st::sqrt(x)); }, [](const D& x) { return D(st::sqrt(x)); },
       [](const q& x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](const F& x) { return F(st::rsqrt(x)); }, [](const D& x) { return D(st::rsqrt(x)); },
       [](const q& x) { return q(1) / sqrt(x); }, [](double x) { return 1 / std::sqrt(x); }},
      {"sin", [](const F& x) { return F(st::sin(x)); }, [](const D& x) { return D(st::sin(x)); },
       [](const q& x) { return sin(x); }, [](double x) { return std::sin(x); }},
      {"cos", [](const F& x) { return F(st::cos(x)); }, [](const D& x) { return D(st::cos(x)); },
       [](const q& x) { return cos(x); }, [](double x) { return std::cos(x); }},
      {"tan", [](const F& x) { return F(st::tan(x)); }, [](const D& x) { return D(st::tan(x)); },
       [](const q& x) { return tan(x); }, [](double x) { return std::tan(x); }},
      {"tanh", [](const F& x) { return F(st::tanh(x)); }, [](const D& x) { return D(st::tanh(x)); },
       [](const q& x) { return tanh(x); }, [](double x) { return std::tanh(x); }},
      {"sigmoid", [](const F& x) { return F(st::sigmoid(x)); }, [](const D& x) { return D(st::sigmoid(x)); },
       [](const q& x) { return q(1) / (q(1) + exp(-x)); }, [](double x) { return 1 / (1 + std::exp(-x)); }},
  };
}

// Inputs: a wide log-uniform sweep of both signs, values near 0, and the edges of T.
template <class T>
std::vector<T> inputs(const std::string& name) {
  const bool trig = name == "sin" || name == "cos" || name == "tan";
  std::vector<T> v = sweep<T>(T(1e-6), trig ? T(1e4) : T(1e3), 700, 7, true);
  for (T x : sweep<T>(std::numeric_limits<T>::min(), T(1e-6), 150, 11, true)) v.push_back(x);
  const T lim = std::numeric_limits<T>::max();
  const T tiny = std::numeric_limits<T>::denorm_min();
  const T logmax = std::log(lim), logmin = std::log(std::numeric_limits<T>::min());
  for (T x : {T(0), -T(0), tiny, -tiny, std::numeric_limits<T>::min(), T(1), T(-1), T(0.5), T(2),
              logmax, std::nextafter(logmax, lim), std::nextafter(logmax, T(0)), logmin, logmin - T(10),
              T(-100), T(100), T(-20), T(20), T(1e-30), T(-1e-30)})
    v.push_back(x);
  return v;
}

double bound(const std::string& name) { return name == "sigmoid" ? 2.5 : name == "rsqrt" ? 1.5 : 1.0; }

template <class T>
void check_accuracy(const case_t& c, const std::function<st::Tensor<T>(const st::Tensor<T>&)>& f) {
  const std::vector<T> in = inputs<T>(c.name);
  // An odd length and a stepped view: vector bodies, tails and gathered operands all run.
  auto base = st::zeros<T>({static_cast<std::int64_t>(in.size()) * 2 + 1});
  const auto x = base.slice(0, 0, static_cast<std::int64_t>(in.size()) * 2, 2);
  for (std::size_t i = 0; i < in.size(); ++i) x[static_cast<std::int64_t>(i)] = in[i];
  const std::vector<T> got = f(x).to_vector();
  const std::vector<T> got_contiguous = f(x.contiguous()).to_vector();
  double worst = 0;
  T worst_at = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO(c.name << "(" << in[i] << ")");
    REQUIRE((got[i] == got_contiguous[i] || (std::isnan(got[i]) && std::isnan(got_contiguous[i]))));
    const q want = c.ref(q(in[i]));
    if (isnan(want)) {
      CHECK(std::isnan(got[i]));
      continue;
    }
    const double e = ulp_error<T>(got[i], want);
    if (e > worst) {
      worst = e;
      worst_at = in[i];
    }
  }
  INFO(c.name << " worst " << worst << " ulp at " << worst_at);
  CHECK(worst <= bound(c.name));
}

template <class T>
void check_specials(const case_t& c, const std::function<st::Tensor<T>(const st::Tensor<T>&)>& f) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> in{inf, -inf, nan, T(0), -T(0), T(-1), std::numeric_limits<T>::denorm_min(),
                          std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()};
  const std::vector<T> got = f(st::from_vector<T>(in)).to_vector();
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double want = c.libm(static_cast<double>(in[i]));
    INFO(c.name << "(" << in[i] << ") = " << got[i] << ", libm " << want);
    if (std::isnan(want)) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want) || want == 0) {
      CHECK(static_cast<double>(got[i]) == static_cast<T>(want));
      CHECK(std::signbit(got[i]) == std::signbit(static_cast<T>(want)));
    } else if (std::abs(static_cast<double>(in[i])) < 1e30 || !(c.name == "sin" || c.name == "cos" || c.name == "tan")) {
      CHECK(ulp_error<T>(got[i], c.ref(q(in[i]))) <= bound(c.name));
    }
  }
}
}  // namespace

TEST_CASE("vectorised functions are within 1 ulp of float128 in float and double", "[vmath]") {
  for (const case_t& c : cases()) {
    SECTION(c.name) {
      check_accuracy<float>(c, c.f32);
      check_accuracy<double>(c, c.f64);
    }
  }
}

TEST_CASE("vectorised functions give libm's infinities, NaNs and signed zeros", "[vmath]") {
  for (const case_t& c : cases()) {
    SECTION(c.name) {
      check_specials<float>(c, c.f32);
      check_specials<double>(c, c.f64);
    }
  }
}

TEST_CASE("pow is within 1 ulp of float128", "[vmath]") {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> base(-40, 40), expo(-30, 30);
  std::vector<float> xf, ef;
  std::vector<double> xd, ed;
  for (int i = 0; i < 600; ++i) {
    const double b = std::exp(base(gen) * 0.5), e = expo(gen) * (i % 3 == 0 ? 0.1 : 1.0);
    xf.push_back(static_cast<float>(b));
    ef.push_back(static_cast<float>(e));
    xd.push_back(b);
    ed.push_back(e);
  }
  for (float s : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, std::numeric_limits<float>::infinity()}) {
    for (float e : {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, 3.0f, -2.0f}) {
      xf.push_back(s);
      ef.push_back(e);
      xd.push_back(s);
      ed.push_back(e);
    }
  }
  const auto gf = st::eval(st::pow(st::from_vector(xf), st::from_vector(ef))).to_vector();
  const auto gd = st::eval(st::pow(st::from_vector(xd), st::from_vector(ed))).to_vector();
  for (std::size_t i = 0; i < xf.size(); ++i) {
    INFO("pow(" << xf[i] << ", " << ef[i] << ") = " << gf[i]);
    const double lf = std::pow(static_cast<double>(xf[i]), static_cast<double>(ef[i]));
    if (std::isnan(lf)) {
      CHECK(std::isnan(gf[i]));
    } else {
      CHECK(ulp_error<float>(gf[i], pow(q(xf[i]), q(ef[i]))) <= 1.0);
      CHECK(ulp_error<double>(gd[i], pow(q(xd[i]), q(ed[i]))) <= 1.0);
    }
  }
}
