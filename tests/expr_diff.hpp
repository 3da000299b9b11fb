// SPDX-License-Identifier: MIT
// The randomised differential test: an expression form (a generic lambda) is applied once to
// strata tensors and once, element by element, to the naive reference. Each run draws shapes
// (rank 0-5, size-0 and size-1 dims, broadcasting), views of the inputs (permuted, stepped,
// narrowed, expanded, diagonal, unfold), values, and a destination (fresh or a view).
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>
#include "reference.hpp"
import strata;

namespace diff {
using I = std::int64_t;
using shape_t = std::vector<I>;
using rng_t = std::mt19937_64;

inline I rnd(rng_t& g, I lo, I hi) { return std::uniform_int_distribution<I>(lo, hi)(g); }

inline shape_t random_shape(rng_t& g, bool big) {
  if (big) return {rnd(g, 180, 190), rnd(g, 360, 380)};
  shape_t s;
  const I rank = rnd(g, 0, 5);
  const I sizes[] = {0, 1, 1, 2, 2, 3, 3, 4, 5, 7};
  for (I d = 0; d < rank; ++d) s.push_back(sizes[rnd(g, rank > 3 ? 1 : 0, 9)]);
  return s;
}

// A shape that broadcasts to `out`: a suffix of it with some dims set to 1.
inline shape_t leaf_shape(rng_t& g, const shape_t& out) {
  const I drop = rnd(g, 0, 2) == 0 ? rnd(g, 0, static_cast<I>(out.size())) : 0;
  shape_t s(out.begin() + drop, out.end());
  for (auto& x : s)
    if (rnd(g, 0, 4) == 0) x = 1;
  return s;
}

template <class T>
T random_value(rng_t& g) {
  if constexpr (std::is_same_v<T, bool>) return rnd(g, 0, 1) == 1;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return static_cast<T>(rnd(g, 0, 255));
  else if constexpr (std::is_same_v<T, std::int8_t>) return static_cast<T>(rnd(g, -128, 127));
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(rnd(g, -30, 30));
  else if constexpr (test::is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(rnd(g, -4, 4)) / 2, static_cast<R>(rnd(g, -4, 4)) / 2);  // exact, often equal
  } else {
    return T(static_cast<float>(static_cast<double>(g() >> 11) * 0x1p-53 * 6 - 3));  // cheap U(-3, 3)
  }
}

template <class T>
strata::Tensor<T> filled(rng_t& g, const shape_t& s) {
  auto t = strata::empty<T>(s);
  T* p = t.data_ptr();
  for (I k = 0; k < t.numel(); ++k) p[k] = random_value<T>(g);
  return t;
}

// A tensor of exactly shape s reached through a random chain of views. Input views may
// overlap themselves (expand, unfold); an output view (for_output) never does.
template <class T>
strata::Tensor<T> random_view(rng_t& g, const shape_t& s, bool for_output, int depth = 0) {
  const I n = static_cast<I>(s.size());
  const I kind = rnd(g, 0, for_output ? 4 : 6);
  if (n == 0 || kind == 0 || depth == 2) return filled<T>(g, s);
  const I d = rnd(g, 0, n - 1);
  shape_t b = s;
  switch (kind) {
    case 1: {  // permuted
      std::vector<I> perm(static_cast<std::size_t>(n));
      for (I k = 0; k < n; ++k) perm[static_cast<std::size_t>(k)] = k;
      std::shuffle(perm.begin(), perm.end(), g);
      shape_t base(static_cast<std::size_t>(n));
      for (I k = 0; k < n; ++k) base[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])] = s[static_cast<std::size_t>(k)];
      return random_view<T>(g, base, for_output, depth + 1).permute(perm);
    }
    case 2: {  // stepped
      const I step = rnd(g, 2, 3), off = rnd(g, 0, step - 1);
      b[static_cast<std::size_t>(d)] = s[static_cast<std::size_t>(d)] * step + off;
      return random_view<T>(g, b, for_output, depth + 1).slice(d, off, off + s[static_cast<std::size_t>(d)] * step, step);
    }
    case 3: {  // narrowed
      const I extra = rnd(g, 1, 3), off = rnd(g, 0, extra);
      b[static_cast<std::size_t>(d)] += extra;
      return random_view<T>(g, b, for_output, depth + 1).narrow(d, off, s[static_cast<std::size_t>(d)]);
    }
    case 4: {  // diagonal of a new pair of dims, moved into place
      const I m = s[static_cast<std::size_t>(d)], k = rnd(g, 0, 2);
      shape_t base;
      for (I j = 0; j < n; ++j)
        if (j != d) base.push_back(s[static_cast<std::size_t>(j)]);
      base.push_back(m);
      base.push_back(m + k);
      return filled<T>(g, base).diagonal(k, -2, -1).movedim(n - 1, d);
    }
    case 5: {  // expanded from size 1
      b[static_cast<std::size_t>(d)] = 1;
      return random_view<T>(g, b, for_output, depth + 1).expand(s);
    }
    default: {  // unfold: the last dim is a window along dim d (windows overlap when step < size)
      if (n < 2 || d == n - 1) return filled<T>(g, s);
      const I size = s.back(), step = rnd(g, 1, 2);
      shape_t base(s.begin(), s.end() - 1);
      base[static_cast<std::size_t>(d)] = s[static_cast<std::size_t>(d)] == 0 ? 0 : (s[static_cast<std::size_t>(d)] - 1) * step + size;
      if (s[static_cast<std::size_t>(d)] == 0 || size == 0) return filled<T>(g, s);
      return filled<T>(g, base).unfold(d, size, step);
    }
  }
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, strata::half>) return 2e-3;
  else if constexpr (std::is_same_v<T, strata::bfloat16>) return 1e-2;
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) return 2e-5;
  else return 1e-11;
}

template <class T>
bool close(const T& got, const reference::ref& want) {
  using reference::cd;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<I>(got) == want.to(strata::dtype_v<T>).i;
  } else {
    const cd g = test::is_complex_v<T> ? cd(test::to_cdouble(got))
                                                 : cd(test::to_double(got), 0);
    const cd w = want.value();
    auto near = [](double a, double b) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
      if (std::isinf(a) || std::isinf(b)) return a == b;
      return std::abs(a - b) <= tolerance<T>() * (1 + std::abs(b));
    };
    return near(g.real(), w.real()) && near(g.imag(), w.imag());
  }
}

// Row-major index of the leaf element that output index `idx` reads (broadcasting).
inline std::size_t leaf_index(const shape_t& out, const shape_t& leaf, const shape_t& idx) {
  std::size_t k = 0;
  const std::size_t off = out.size() - leaf.size();
  for (std::size_t d = 0; d < leaf.size(); ++d) k = k * static_cast<std::size_t>(leaf[d]) + static_cast<std::size_t>(leaf[d] == 1 ? 0 : idx[d + off]);
  return k;
}

template <class... Ts, class F>
void check_form(const std::string& name, F form, int iterations, std::uint64_t seed) {
  rng_t g(seed);
  int checked = 0;
  for (int it = 0; it < iterations; ++it) {
    const bool big = it == iterations / 2;  // one run large enough to use two threads
    strata::set_num_threads(big ? 2 : static_cast<int>(rnd(g, 1, 2)));
    const shape_t out = random_shape(g, big);
    const std::array<shape_t, sizeof...(Ts)> shapes{(static_cast<void>(sizeof(Ts)), leaf_shape(g, out))...};
    std::size_t k = 0;
    const std::tuple<strata::Tensor<Ts>...> leaves{random_view<Ts>(g, shapes[k++], false)...};
    auto expr = std::apply(form, leaves);
    using V = typename decltype(expr)::value_type;
    const shape_t full(expr.sizes().begin(), expr.sizes().end());
    strata::Tensor<V> result;
    const bool fresh = rnd(g, 0, 1) == 0;
    if (fresh) {
      result = expr;
    } else {
      result = random_view<V>(g, full, true);
      result.assign(expr);
    }
    // The reference, element by element.
    const auto values = std::apply([](const auto&... t) { return std::make_tuple(t.to_vector()...); }, leaves);
    const std::vector<V> got = result.to_vector();
    const I n = strata::numel_of(full);
    REQUIRE(static_cast<I>(got.size()) == n);
    shape_t idx(full.size(), 0);
    for (I e = 0; e < n; ++e) {
      const reference::ref want = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return form(reference::load(std::get<J>(values), leaf_index(full, shapes[J], idx))...);
      }(std::index_sequence_for<Ts...>{});
      if (!close(got[static_cast<std::size_t>(e)], want)) {
        INFO(name << " iteration " << it << (fresh ? " (eval)" : " (assign into a view)") << " at element " << e
                  << " shape " << strata::to_string(strata::int_list(full)) << ": got "
                  << test::to_cdouble(got[static_cast<std::size_t>(e)]) << " want " << want.value());
        FAIL();
      }
      for (std::size_t d = full.size(); d-- > 0;) {
        if (++idx[d] < full[d]) break;
        idx[d] = 0;
      }
    }
    ++checked;
  }
  strata::set_num_threads(1);
  CHECK(checked == iterations);
}
}  // namespace diff
