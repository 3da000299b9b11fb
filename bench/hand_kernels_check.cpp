// SPDX-License-Identifier: MIT
// Checks every hand-written baseline of bench/hand_kernels.hpp against a naive loop (odd sizes
// included, so that the scalar edges run too). Exit status 0 when all agree.
#include "hand_kernels.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}
std::vector<float> seq(std::int64_t n, float base) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = base + static_cast<float>((i * 7919) % 1009) * 1e-3f;
  return v;
}
bool close(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::max(1.0f, std::fabs(b)); }

void transposes() {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {37, 53}, {16, 9}, {5, 40}, {128, 48}}) {
    const std::int64_t lda = rows + 3, ldb = cols + 5, ldo = cols + 1;
    auto a = seq(cols * lda, 1), b = seq(rows * ldb, 2);
    std::vector<float> want(static_cast<std::size_t>(rows * ldo)), got(want.size());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        want[static_cast<std::size_t>(i * ldo + j)] = a[static_cast<std::size_t>(j * lda + i)] + b[static_cast<std::size_t>(i * ldb + j)];
    auto same = [&] {
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          if (got[static_cast<std::size_t>(i * ldo + j)] != want[static_cast<std::size_t>(i * ldo + j)]) return false;
      return true;
    };
    hand::transpose_add(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols);
    check(same(), "transpose_add");
#if defined(__AVX2__)
    std::fill(got.begin(), got.end(), 0.0f);
    hand::transpose_add_8x8(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols);
    check(same(), "transpose_add_8x8");
    std::fill(got.begin(), got.end(), 0.0f);
    hand::transpose_add_8x8(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols, 24);
    check(same(), "transpose_add_8x8, blocks of 24");
#endif
#if defined(__AVX512F__)
    std::fill(got.begin(), got.end(), 0.0f);
    hand::transpose_add_16x16(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols);
    check(same(), "transpose_add_16x16");
    std::fill(got.begin(), got.end(), 0.0f);
    hand::transpose_add_16x16<true>(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols);
    check(same(), "transpose_add_16x16 with prefetch");
    std::fill(got.begin(), got.end(), 0.0f);
    hand::transpose_add_16x16(a.data(), lda, b.data(), ldb, got.data(), ldo, rows, cols, 32);
    check(same(), "transpose_add_16x16, blocks of 32");
#endif
  }
  const std::int64_t n0 = 20, n1 = 7, n2 = 35;
  auto x = seq(n0 * n1 * n2, 1), y = seq(n0 * n1 * n2, 2);
  for (const bool prefetch : {false, true}) {
    std::vector<float> got(x.size());
    if (prefetch) hand::permute210_add<true>(x.data(), y.data(), got.data(), n0, n1, n2);
    else hand::permute210_add(x.data(), y.data(), got.data(), n0, n1, n2);
    bool ok = true;
    for (std::int64_t i = 0; i < n2; ++i)
      for (std::int64_t j = 0; j < n1; ++j)
        for (std::int64_t k = 0; k < n0; ++k)
          ok = ok && got[static_cast<std::size_t>((i * n1 + j) * n0 + k)] ==
                         x[static_cast<std::size_t>((k * n1 + j) * n2 + i)] + y[static_cast<std::size_t>((i * n1 + j) * n0 + k)];
    check(ok, prefetch ? "permute210_add with prefetch" : "permute210_add");
  }
}

void outer() {
  const std::int64_t rows = 13, cols = 77;
  auto col = seq(rows, 1), row = seq(cols, 2), c = seq(rows * cols, 3);
  std::vector<float> got(c.size());
  hand::outer_add<4>(col.data(), row.data(), c.data(), got.data(), rows, cols);
  bool ok = true;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      ok = ok && close(got[static_cast<std::size_t>(i * cols + j)],
                       col[static_cast<std::size_t>(i)] * row[static_cast<std::size_t>(j)] + c[static_cast<std::size_t>(i * cols + j)]);
  check(ok, "outer_add<4>");
  std::vector<float> sum(c.size());
  hand::row_add<4>(c.data(), row.data(), sum.data(), rows, cols);
  ok = true;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      ok = ok && close(sum[static_cast<std::size_t>(i * cols + j)],
                       c[static_cast<std::size_t>(i * cols + j)] + row[static_cast<std::size_t>(j)]);
  check(ok, "row_add<4>");
}

void reductions() {
  const std::int64_t rows = 11, n = 203;
  auto p = seq(rows * n, -0.5f);
  std::vector<float> s(static_cast<std::size_t>(rows)), mx(s.size()), acc(s.size(), 1.0f), acc4(s.size(), 1.0f), s8(s.size());
  hand::row_sums<4>(p.data(), rows, n, s.data());
  hand::row_sums<8>(p.data(), rows, n, s8.data());
  hand::row_sums_acc<4>(p.data(), rows, n, acc4.data());
  hand::row_maxes<4>(p.data(), rows, n, mx.data());
  bool ok_s = true, ok_m = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    double t = 0;
    float m = -INFINITY;
    for (std::int64_t k = 0; k < n; ++k) {
      t += p[static_cast<std::size_t>(r * n + k)];
      m = std::max(m, p[static_cast<std::size_t>(r * n + k)]);
    }
    const auto u = static_cast<std::size_t>(r);
    ok_s = ok_s && close(s[u], static_cast<float>(t)) && close(s8[u], static_cast<float>(t)) &&
           close(acc4[u], 1.0f + static_cast<float>(t));
    ok_m = ok_m && mx[u] == m;
  }
  check(ok_s, "row_sums / row_sums_acc");
  check(ok_m, "row_maxes");

  double t = 0;
  float m = -INFINITY;
  for (float v : p) { t += v; m = std::max(m, v); }
  check(close(hand::flat_sum(p.data(), rows * n), static_cast<float>(t)), "flat_sum");
  check(hand::flat_max(p.data(), rows * n) == m, "flat_max");

  const std::int64_t crow = 45, cn = 300;
  auto g = seq(crow * cn, 0.25f);
  std::vector<double> want(static_cast<std::size_t>(cn), 0.5);
  for (std::int64_t r = 0; r < crow; ++r)
    for (std::int64_t k = 0; k < cn; ++k) want[static_cast<std::size_t>(k)] += g[static_cast<std::size_t>(r * cn + k)];
  std::vector<float> o1(static_cast<std::size_t>(cn), 0.5f), o2(o1), o3(o1);
  hand::col_sums_rows<8>(g.data(), crow, cn, o1.data());
  hand::col_sums_stripe<8, 16>(g.data(), crow, cn, o2.data());
  hand::col_sums_stripe<4, 7>(g.data(), crow, cn, o3.data());
  bool ok1 = true, ok2 = true;
  for (std::int64_t k = 0; k < cn; ++k) {
    ok1 = ok1 && close(o1[static_cast<std::size_t>(k)], static_cast<float>(want[static_cast<std::size_t>(k)]));
    ok2 = ok2 && close(o2[static_cast<std::size_t>(k)], static_cast<float>(want[static_cast<std::size_t>(k)])) &&
          close(o3[static_cast<std::size_t>(k)], static_cast<float>(want[static_cast<std::size_t>(k)]));
  }
  check(ok1, "col_sums_rows<8>");
  check(ok2, "col_sums_stripe");
}

void strided() {
  const std::int64_t rows = 5, m = 53, ld = 3 * m + 2;
  auto a = seq(rows * ld, 1), b = seq(rows * ld, 2), c = seq(rows * ld, 3);
  std::vector<float> got(static_cast<std::size_t>(rows * m)), got1(got.size());
  hand::stride3_add(a.data(), b.data(), c.data(), ld, got.data(), rows, m);
  hand::stride3_add(a.data(), a.data(), a.data(), ld, got1.data(), rows, m);
  bool ok = true, ok1 = true;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const auto u = static_cast<std::size_t>(i * ld + 3 * j);
      ok = ok && got[static_cast<std::size_t>(i * m + j)] == a[u] + b[u + 1] + c[u + 2];
      ok1 = ok1 && got1[static_cast<std::size_t>(i * m + j)] == a[u] + a[u + 1] + a[u + 2];
    }
  check(ok, "stride3_add (three bases)");
  check(ok1, "stride3_add (one base)");
}
void transcendental() {
#if defined(HAND_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__))
  const std::int64_t n = 1003;
  auto a = seq(n, -0.5f), b = seq(n, -0.4f), c = seq(n, -0.3f);
  std::vector<float> e(static_cast<std::size_t>(n)), w(e.size());
  hand::exp_libmvec(a.data(), e.data(), n);
  hand::w11_libmvec(a.data(), b.data(), c.data(), w.data(), n);
  bool ok = true;
  for (std::size_t i = 0; i < e.size(); ++i) {
    ok = ok && close(e[i], std::exp(a[i]));
    ok = ok && close(w[i], std::exp(-a[i] * a[i]) * std::tanh(b[i]) + 1.0f / (1.0f + std::exp(-c[i])));
  }
  check(ok, "exp_libmvec / w11_libmvec");
#endif
}
}  // namespace

int main() {
  transposes();
  outer();
  reductions();
  strided();
  transcendental();
  std::printf("hand kernels (vector width %lld, libmvec %s): %s\n", static_cast<long long>(hand::W),
              hand::have_libmvec ? "yes" : "no", failures ? "FAILED" : "all agree");
  return failures ? 1 : 0;
}
