// SPDX-License-Identifier: MIT
// Randomised differential test of reductions against a naive reference: random shapes and
// views (from expr_diff.hpp), random dims and keepdim, element by element in double.
#include "expr_diff.hpp"
#include <cmath>
#include <cstdint>
#include <vector>
import strata;
using namespace strata;

namespace {
using diff::I;
using diff::shape_t;

enum class kind { sum, mean, amax, prod, any };

template <class T, kind K>
void check_reduction(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < iterations; ++it) {
    set_num_threads(static_cast<int>(diff::rnd(g, 1, 2)));
    const bool big = it == iterations / 2;
    shape_t shape = diff::random_shape(g, big);
    if (K == kind::amax || K == kind::mean)
      for (auto& v : shape) v = v == 0 ? 1 : v;  // no empty amax; keep mean finite
    auto x = diff::random_view<T>(g, shape, false);
    const I n = static_cast<I>(shape.size());
    std::vector<I> dims;
    for (I d = 0; d < n; ++d)
      if (diff::rnd(g, 0, 1)) dims.push_back(diff::rnd(g, 0, 1) ? d : d - n);
    const bool keepdim = diff::rnd(g, 0, 1) == 1;
    // reference
    std::vector<bool> reduced(static_cast<std::size_t>(n), dims.empty());
    for (I d : dims) reduced[static_cast<std::size_t>(d < 0 ? d + n : d)] = true;
    shape_t keep = shape;
    for (I d = 0; d < n; ++d)
      if (reduced[static_cast<std::size_t>(d)]) keep[static_cast<std::size_t>(d)] = 1;
    const I outputs = numel_of(keep);
    std::vector<double> acc(static_cast<std::size_t>(outputs), K == kind::prod ? 1.0 : (K == kind::amax ? -INFINITY : 0.0));
    std::vector<double> mag(static_cast<std::size_t>(outputs), 0.0);
    std::vector<I> counts(static_cast<std::size_t>(outputs), 0);
    const auto values = x.to_vector();
    shape_t idx(shape.size(), 0);
    for (std::size_t e = 0; e < values.size(); ++e) {
      I o = 0;
      for (std::size_t d = 0; d < shape.size(); ++d) o = o * keep[d] + (reduced[d] ? 0 : idx[d]);
      const double v = test::to_double(values[e]);
      auto& a = acc[static_cast<std::size_t>(o)];
      if (K == kind::sum || K == kind::mean) a += v;
      if (K == kind::prod) a *= v;
      if (K == kind::amax) a = std::max(a, v);
      if (K == kind::any) a = a != 0 || v != 0;
      mag[static_cast<std::size_t>(o)] += std::abs(v);
      ++counts[static_cast<std::size_t>(o)];
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    std::vector<double> got;
    auto collect = [&](auto&& r) {
      auto t = eval(r);
      for (const auto& v : t.to_vector()) got.push_back(test::to_double(v));
      return std::vector<I>(t.sizes().begin(), t.sizes().end());
    };
    std::vector<I> got_shape;
    if constexpr (K == kind::sum) got_shape = collect(sum(x, dims, keepdim));
    if constexpr (K == kind::mean) got_shape = collect(mean(x, dims, keepdim));
    if constexpr (K == kind::amax) got_shape = collect(amax(x, dims, keepdim));
    if constexpr (K == kind::prod) got_shape = collect(prod(x, dims, keepdim));
    if constexpr (K == kind::any) got_shape = collect(any(x, dims, keepdim));
    std::vector<I> want_shape;
    for (I d = 0; d < n; ++d)
      if (!reduced[static_cast<std::size_t>(d)] || keepdim) want_shape.push_back(keep[static_cast<std::size_t>(d)]);
    INFO("iteration " << it << " shape " << to_string(int_list(shape)) << " keepdim " << keepdim);
    REQUIRE(got_shape == want_shape);
    REQUIRE(static_cast<I>(got.size()) == outputs);
    for (I o = 0; o < outputs; ++o) {
      double want = acc[static_cast<std::size_t>(o)];
      if (K == kind::mean) want /= static_cast<double>(counts[static_cast<std::size_t>(o)]);
      const double tol = std::is_integral_v<T> || K == kind::any || K == kind::amax ? 0.0
                         : K == kind::prod ? 1e-5 * std::abs(want) + 1e-30
                         : (std::is_same_v<T, half> ? 1e-3 : 1e-5) * (mag[static_cast<std::size_t>(o)] + 1);
      if (K == kind::prod && std::abs(want) > 3.4e38 && std::isinf(got[static_cast<std::size_t>(o)])) continue;  // overflows alike
      if (std::abs(got[static_cast<std::size_t>(o)] - want) > tol) {
        INFO("output " << o << ": got " << got[static_cast<std::size_t>(o)] << " want " << want);
        FAIL();
      }
    }
  }
  set_num_threads(1);
}
}  // namespace

TEST_CASE("differential: reductions over random views and dims", "[reduce][diff]") {
  check_reduction<float, kind::sum>(101, 200);
  check_reduction<double, kind::mean>(102, 150);
  check_reduction<std::int32_t, kind::sum>(103, 150);
  check_reduction<float, kind::amax>(104, 150);
  check_reduction<float, kind::prod>(105, 100);
  check_reduction<std::int16_t, kind::sum>(108, 100);
  check_reduction<std::int8_t, kind::any>(106, 100);
  check_reduction<half, kind::sum>(107, 100);
}
