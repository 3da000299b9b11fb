// SPDX-License-Identifier: MIT
// strata.linalg: PyTorch's einsum examples, the plans (fused reduce or GEMM), a differential
// test against a naive evaluator, the matrix products' shape rules, allocations, gradients.
// Written as a user's code would be: qualified names through a namespace alias.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "check_close.hpp"
#include "sanitized.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
template <class T>
st::Tensor<T> iota(st::int_list sizes, double start = 1, double step = 1) {
  const std::int64_t n = st::numel_of(sizes);
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(start + step * static_cast<double>(i)));
  return st::from_vector<T>(v, sizes);
}

// ---- a deliberately naive einsum: every assignment of the labels, one at a time ----
struct naive_case {
  std::vector<std::vector<int>> labels;  // per operand, per dim: a label index
  std::vector<std::vector<std::int64_t>> sizes;
  std::vector<int> output;
  std::vector<std::int64_t> label_size;
  std::string equation() const {
    std::string e;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i) e += ',';
      for (const int l : labels[i]) e += static_cast<char>('a' + l);
    }
    e += "->";
    for (const int l : output) e += static_cast<char>('a' + l);
    return e;
  }
};

template <class T>
std::vector<T> naive_einsum(const naive_case& c, const std::vector<st::Tensor<T>>& ops) {
  using A = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;
  const std::size_t nl = c.label_size.size();
  std::vector<std::vector<T>> data;
  for (const auto& t : ops) data.push_back(t.contiguous().to_vector());
  std::int64_t out_n = 1;
  for (const int l : c.output) out_n *= c.label_size[static_cast<std::size_t>(l)];
  std::vector<A> out(static_cast<std::size_t>(out_n), A(0));
  std::vector<std::int64_t> idx(nl, 0);
  std::int64_t total = 1;
  for (const std::int64_t s : c.label_size) total *= s;
  for (std::int64_t it = 0; it < total; ++it) {
    std::int64_t rest = it;
    for (std::size_t l = nl; l-- > 0;) {
      idx[l] = rest % c.label_size[l];
      rest /= c.label_size[l];
    }
    A p = A(1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      std::int64_t off = 0;
      for (std::size_t d = 0; d < c.labels[i].size(); ++d) {
        const std::int64_t s = c.sizes[i][d];
        off = off * s + (s == 1 ? 0 : idx[static_cast<std::size_t>(c.labels[i][d])]);
      }
      p = p * static_cast<A>(data[i][static_cast<std::size_t>(off)]);
    }
    std::int64_t o = 0;
    for (const int l : c.output) o = o * c.label_size[static_cast<std::size_t>(l)] + idx[static_cast<std::size_t>(l)];
    out[static_cast<std::size_t>(o)] += p;
  }
  std::vector<T> r;
  for (const A& a : out) r.push_back(static_cast<T>(a));
  return r;
}

// A random einsum over labels a..e: repeated labels, size-1 broadcasts, zero sizes.
naive_case random_case(std::mt19937& rng, int max_ops, std::int64_t max_size) {
  naive_case c;
  const int nl = 1 + static_cast<int>(rng() % 5);
  for (int l = 0; l < nl; ++l) c.label_size.push_back(static_cast<std::int64_t>(rng() % static_cast<unsigned>(max_size + 1)));
  if (rng() % 4 != 0)
    for (auto& s : c.label_size) s = std::max<std::int64_t>(s, 1);
  const int n = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_ops));
  std::vector<bool> used(static_cast<std::size_t>(nl), false);
  for (int i = 0; i < n; ++i) {
    std::vector<int> ls;
    std::vector<std::int64_t> ss;
    const int nd = static_cast<int>(rng() % 4);
    for (int d = 0; d < nd; ++d) {
      const int l = static_cast<int>(rng() % static_cast<unsigned>(nl));
      ls.push_back(l);
      used[static_cast<std::size_t>(l)] = true;
      ss.push_back(c.label_size[static_cast<std::size_t>(l)]);
    }
    c.labels.push_back(ls);
    c.sizes.push_back(ss);
  }
  // size-1 broadcasts (not for a repeated label: its sizes must agree)
  for (std::size_t i = 0; i < c.labels.size(); ++i)
    for (std::size_t d = 0; d < c.labels[i].size(); ++d)
      if (rng() % 5 == 0 && std::count(c.labels[i].begin(), c.labels[i].end(), c.labels[i][d]) == 1) c.sizes[i][d] = 1;
  // a label whose every appearance is size 1 has size 1
  for (int l = 0; l < nl; ++l) {
    bool full = false;
    for (std::size_t i = 0; i < c.labels.size(); ++i)
      for (std::size_t d = 0; d < c.labels[i].size(); ++d)
        if (c.labels[i][d] == l && c.sizes[i][d] != 1) full = true;
    if (!full) c.label_size[static_cast<std::size_t>(l)] = 1;
  }
  for (int l = 0; l < nl; ++l)
    if (used[static_cast<std::size_t>(l)] && rng() % 2 == 0) c.output.push_back(l);
  std::shuffle(c.output.begin(), c.output.end(), rng);
  return c;
}

// Operands with small integer values; some made non-contiguous (a transposed copy viewed back).
template <class T>
std::vector<st::Tensor<T>> operands_for(const naive_case& c, std::mt19937& rng) {
  std::vector<st::Tensor<T>> ops;
  for (const auto& s : c.sizes) {
    const st::int_list sizes(s);
    std::vector<T> v;
    for (std::int64_t i = 0; i < st::numel_of(sizes); ++i) v.push_back(static_cast<T>(static_cast<int>(rng() % 7) - 3));
    st::Tensor<T> t = st::from_vector<T>(v, sizes);
    if (t.dim() >= 2 && rng() % 2 == 0) t = t.transpose(0, 1).contiguous().transpose(0, 1);
    ops.push_back(t);
  }
  return ops;
}

template <class T>
void check_against_naive(const naive_case& c, const std::vector<st::Tensor<T>>& ops, double tol) {
  INFO(c.equation());
  const st::Tensor<T> got = st::einsum(c.equation(), ops);
  const std::vector<T> want = naive_einsum(c, ops);
  std::vector<std::int64_t> out_sizes;
  for (const int l : c.output) out_sizes.push_back(c.label_size[static_cast<std::size_t>(l)]);
  CHECK(got.sizes() == st::int_list(out_sizes));
  const std::vector<T> g = got.contiguous().to_vector();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    if constexpr (std::is_integral_v<T>) CHECK(g[i] == want[i]);
    else CHECK(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}
}  // namespace

TEST_CASE("PyTorch's einsum examples", "[linalg]") {
  const auto m = st::from_vector<double>({1, 2, 3, 4}, {2, 2});
  SECTION("trace and diagonal") {
    CHECK(st::einsum("ii", m).item() == 5);
    CHECK(as_doubles(st::Tensor<double>(st::einsum("ii->i", m))) == std::vector<double>{1, 4});
  }
  SECTION("outer product") {
    const st::Tensor<double> o = st::einsum("i,j->ij", st::from_vector<double>({1, 2, 3}), st::from_vector<double>({1, 2}));
    CHECK(o.sizes() == st::int_list{3, 2});
    CHECK(as_doubles(o) == std::vector<double>{1, 2, 2, 4, 3, 6});
  }
  SECTION("batch matrix multiplication") {
    const auto a = iota<double>({2, 2, 3}), b = iota<double>({2, 3, 2}, 0, 0.5);
    const st::Tensor<double> c = st::einsum("bij,bjk->bik", a, b);
    // batch 0: [[1,2,3],[4,5,6]] @ [[0,.5],[1,1.5],[2,2.5]]
    CHECK(as_doubles(c.select(0, 0)) == std::vector<double>{8, 11, 17, 24.5});
    CHECK(as_doubles(c) == as_doubles(st::bmm(a, b)));
  }
  SECTION("ellipsis: transpose the last two dims, implicit output") {
    const auto x = iota<double>({2, 2, 3});
    const st::Tensor<double> y = st::einsum("...ij->...ji", x);
    CHECK(y.sizes() == st::int_list{2, 3, 2});
    CHECK(as_doubles(y) == as_doubles(x.transpose(1, 2)));
    CHECK(st::einsum("ba", m).sizes() == st::int_list{2, 2});  // implicit: alphabetical, so a transpose
    CHECK(as_doubles(st::Tensor<double>(st::einsum("ba", m))) == std::vector<double>{1, 3, 2, 4});
  }
  SECTION("bilinear: bn,anm,bm->ba") {
    const auto l = iota<double>({2, 3}), A = iota<double>({2, 3, 4}, 0, 0.25), r = iota<double>({2, 4}, -2);
    const st::Tensor<double> y = st::einsum("bn,anm,bm->ba", l, A, r);
    CHECK(y.sizes() == st::int_list{2, 2});
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t a = 0; a < 2; ++a) {
        double want = 0;
        for (std::int64_t n = 0; n < 3; ++n)
          for (std::int64_t k = 0; k < 4; ++k) want += l.at({b, n}) * A.at({a, n, k}) * r.at({b, k});
        CHECK(y.at({b, a}) == Approx(want));
      }
  }
}

TEST_CASE("einsum is a lazy node: inside expressions and reductions, into existing tensors", "[linalg]") {
  const auto a = iota<float>({3, 4}), b = iota<float>({4, 2});
  const st::Tensor<float> ab = st::mm(a, b);
  const st::Tensor<float> y = st::einsum("ij,jk->ik", a, b) * 2 + 1;
  test::check_close(as_doubles(y), [&] {
    std::vector<double> v = as_doubles(ab);
    for (double& x : v) x = 2 * x + 1;
    return v;
  }(), 1e-9);
  CHECK(st::Tensor<float>(st::sum(st::einsum("ij,jk->ik", a, b))).item() == Approx(st::Tensor<float>(st::sum(ab)).item()));
  // written in place, also into a non-contiguous view, and into an operand (through a temporary)
  st::Tensor<float> out = st::zeros<float>({3, 2});
  out.assign(st::einsum("ij,jk->ik", a, b));
  CHECK(as_doubles(out) == as_doubles(ab));
  st::Tensor<float> wide = st::zeros<float>({2, 3});
  wide.t().assign(st::einsum("ij,jk->ik", a, b));
  CHECK(as_doubles(wide.t()) == as_doubles(ab));
  st::Tensor<float> sq = iota<float>({4, 4});
  const st::Tensor<float> want = st::mm(sq, sq);
  sq.assign(st::einsum("ij,jk->ik", sq, sq));
  CHECK(as_doubles(sq) == as_doubles(want));
}

TEST_CASE("the plan: fused reduces for element-wise-like contractions, GEMM for large matrix shapes", "[linalg]") {
  const auto v = st::zeros<float>({64}), M = st::zeros<float>({64, 64}), B3 = st::zeros<float>({4, 64, 64});
  CHECK(st::einsum("i,i->", v, v).plan() == "fused");
  CHECK(st::einsum("i,j->ij", v, v).plan() == "fused");
  CHECK(st::einsum("bi,bi->b", M, M).plan() == "fused");
  CHECK(st::einsum("ii->", M).plan() == "fused");
  CHECK(st::einsum("ij,j->i", M, v).plan() == "fused");
  CHECK(st::einsum("ij,jk->ik", M, M).plan() == "gemm(ij,jk->ik)");
  CHECK(st::einsum("ij,kj->ik", M, M).plan() == "gemm(ij,kj->ik)");
  CHECK(st::einsum("bij,bjk->bik", B3, B3).plan() == "gemm(bij,bjk->bik)");
  // integers, half and float128 have no BLAS: always the fused reduce
  CHECK(st::einsum("ij,jk->ik", st::zeros<std::int32_t>({64, 64}), st::zeros<std::int32_t>({64, 64})).plan() == "fused");
  CHECK(st::einsum("ij,jk->ik", st::zeros<st::float128>({64, 64}), st::zeros<st::float128>({64, 64})).plan() == "fused");
  // small matrices: the fused reduce
  CHECK(st::einsum("ij,jk->ik", st::zeros<float>({4, 4}), st::zeros<float>({4, 4})).plan() == "fused");
  // three operands: pairwise, never the full broadcast product
  const auto l = st::zeros<float>({256, 256}), A = st::zeros<float>({64, 256, 256});
  const std::string p = st::einsum("bn,anm,bm->ba", l, A, l).plan();
  CHECK(p.find("gemm") != std::string::npos);
  CHECK(p.find(';') != std::string::npos);
  CHECK(st::einsum("i,i,i->i", v, v, v).plan() == "fused");
}

TEST_CASE("the fused path allocates its result only", "[linalg]") {
  const auto a = iota<float>({64, 128}), b = iota<float>({64, 128}, 3), x = iota<float>({128});
  const auto count = [](auto&& f) {
    const auto before = st::thread_allocations();
    f();
    return st::thread_allocations().blocks - before.blocks;
  };
  CHECK(count([&] { st::Tensor<float> r = st::einsum("ij,ij->", a, b); }) == 1);
  CHECK(count([&] { st::Tensor<float> r = st::einsum("bi,bi->b", a, b); }) == 1);
  CHECK(count([&] { st::Tensor<float> r = st::einsum("i,j->ij", x, x); }) == 1);
  CHECK(count([&] { st::Tensor<float> r = st::einsum("ij,j->i", a, x); }) == 1);
  st::Tensor<float> out = st::empty<float>({64});
  CHECK(count([&] { out.assign(st::einsum("bi,bi->b", a, b)); }) == 0);
  // the GEMM path takes transposed operands as they are (no copy), copies a stride-2 one
  const auto big = iota<float>({64, 96}), wide = iota<float>({64, 192});
  CHECK(st::einsum("ij,jk->ik", big, big.t()).plan() == "gemm(ij,jk->ik)");
  CHECK(count([&] { st::Tensor<float> r = st::matmul(big, big.t()); }) == 1);
  CHECK(count([&] { st::Tensor<float> r = st::matmul(big.t(), big); }) == 1);
  CHECK(count([&] { st::Tensor<float> r = st::matmul(wide.as_strided({64, 96}, {192, 2}), big.t()); }) == 2);
  // half accumulates in float: one float buffer besides the result
  const auto h = a.to<st::half>();
  CHECK(count([&] { st::Tensor<st::half> r = st::einsum("bi,bi->b", h, h); }) == 2);
}

TEST_CASE("the one-pass kernels: dots of contiguous rows, streamed outer products", "[linalg]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto random = [&]<class T>(std::int64_t n, T) {
    std::vector<T> v;
    for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(u(rng)));
    return st::from_vector<T>(v, {n});
  };
  // dots: lengths around the kernel's lanes (128 floats, 64 doubles) and its tail
  for (const std::int64_t n : {1, 63, 64, 127, 128, 129, 1000, 100003}) {
    const auto a = random(n, 0.0f), b = random(n, 0.0f);
    const auto x = random(n, 0.0), y = random(n, 0.0);
    double want = 0, mag = 0, want_d = 0, mag_d = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      want += static_cast<double>(a[i].item()) * static_cast<double>(b[i].item());
      mag += std::abs(static_cast<double>(a[i].item()) * static_cast<double>(b[i].item()));
      want_d += x[i].item() * y[i].item();
      mag_d += std::abs(x[i].item() * y[i].item());
    }
    CHECK(std::abs(static_cast<double>(st::Tensor<float>(st::einsum("i,i->", a, b)).item()) - want) <= 1e-6 * mag + 1e-30);
    CHECK(std::abs(st::Tensor<double>(st::einsum("i,i->", x, y)).item() - want_d) <= 1e-14 * mag_d + 1e-300);
  }
  // a dot per row, and the same bits for any thread count
  const auto m = random(300 * 517, 0.0f).view({300, 517}), n = random(300 * 517, 0.0f).view({300, 517});
  const st::Tensor<float> rows = st::einsum("bi,bi->b", m, n);
  for (const std::int64_t r : {0, 151, 299}) {
    double want = 0, mag = 0;
    for (std::int64_t i = 0; i < 517; ++i) {
      const double t = static_cast<double>(m[r][i].item()) * static_cast<double>(n[r][i].item());
      want += t;
      mag += std::abs(t);
    }
    CHECK(std::abs(static_cast<double>(rows[r].item()) - want) <= 1e-6 * mag);
  }
  const auto big = random(std::int64_t{1} << 20, 0.0f), big2 = random(std::int64_t{1} << 20, 0.0f);
  const int before = st::get_num_threads();
  st::set_num_threads(1);
  const float one = st::Tensor<float>(st::einsum("i,i->", big, big2)).item();
  st::set_num_threads(2);
  const float two = st::Tensor<float>(st::einsum("i,i->", big, big2)).item();
  st::set_num_threads(before);
  CHECK(one == two);
  // outer products of at least 32 MiB are streamed: every element exactly x[i] * y[j], rows
  // starting at every alignment (4099 floats per row), either operand broadcast along the row
  const auto check_outer = [&]<class T>(std::int64_t rows_n, std::int64_t cols_n, T) {
    const auto xs = random(rows_n, T{}), ys = random(cols_n + 1, T{}).narrow(0, 1, cols_n);
    const std::vector<T> xv = xs.to_vector(), yv = ys.contiguous().to_vector();
    const st::Tensor<T> ij = st::einsum("i,j->ij", xs, ys), ji = st::einsum("i,j->ji", ys, xs);
    const std::vector<T> a = ij.to_vector(), b = ji.to_vector();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < rows_n; ++i)
      for (std::int64_t j = 0; j < cols_n; ++j) {
        const T want = xv[static_cast<std::size_t>(i)] * yv[static_cast<std::size_t>(j)];
        wrong += a[static_cast<std::size_t>(i * cols_n + j)] != want;
        wrong += b[static_cast<std::size_t>(i * cols_n + j)] != want;
      }
    CHECK(wrong == 0);
  };
  check_outer(2049, 4099, 0.0f);
  check_outer(1025, 4097, 0.0);
}

TEST_CASE("einsum against a naive evaluator (random equations)", "[linalg]") {
  std::mt19937 rng(12345);
  for (int k = 0; k < 300; ++k) {
    const naive_case c = random_case(rng, 3, 4);
    check_against_naive<double>(c, operands_for<double>(c, rng), 1e-12);
    if (k % 3 == 0) check_against_naive<std::int32_t>(c, operands_for<std::int32_t>(c, rng), 0);
    if (k % 3 == 1) check_against_naive<std::complex<double>>(c, operands_for<std::complex<double>>(c, rng), 1e-12);
    if (k % 3 == 2) check_against_naive<float>(c, operands_for<float>(c, rng), 1e-5);
  }
}

TEST_CASE("einsum's GEMM path against the naive evaluator: transposes, batches, strides, copies", "[linalg]") {
  std::mt19937 rng(777);
  const std::vector<std::string> eqs = {"ij,jk->ik", "ij,kj->ik", "ji,jk->ki", "bij,bjk->bik", "bij,jk->bik",
                                        "ijk,jkl->il", "aib,bjc->aijc", "ij,jk->ki", "bi,bj,bk->ijk", "abc,cda->bd"};
  for (const std::string& eq : eqs) {
    naive_case c;
    // parse the letters back (a..l)
    std::vector<int> cur;
    std::size_t i = 0;
    for (; i < eq.size() && eq[i] != '-'; ++i) {
      if (eq[i] == ',') { c.labels.push_back(cur); cur.clear(); continue; }
      cur.push_back(eq[i] - 'a');
    }
    c.labels.push_back(cur);
    for (i += 2; i < eq.size(); ++i) c.output.push_back(eq[i] - 'a');
    c.label_size.assign(12, 1);  // labels not in the equation keep size 1 (the naive loop walks all)
    for (const auto& ls : c.labels)
      for (const int l : ls) c.label_size[static_cast<std::size_t>(l)] = 9 + static_cast<std::int64_t>(rng() % 24);
    for (const auto& ls : c.labels) {
      std::vector<std::int64_t> s;
      for (const int l : ls) s.push_back(c.label_size[static_cast<std::size_t>(l)]);
      c.sizes.push_back(s);
    }
    // Under a sanitizer, the copies' variants alone (strided views, a random dim order).
    for (int variant = test::sanitized ? 2 : 0; variant < 4; ++variant) {
      std::vector<st::Tensor<double>> ops = operands_for<double>(c, rng);
      if (variant == 3)  // stored in a random dim order: the copies for the BLAS choose their order
        for (auto& t : ops) {
          std::vector<std::int64_t> perm(static_cast<std::size_t>(t.dim()));
          std::iota(perm.begin(), perm.end(), std::int64_t{0});
          std::shuffle(perm.begin(), perm.end(), rng);
          std::vector<std::int64_t> inverse(perm.size());
          for (std::size_t d = 0; d < perm.size(); ++d)
            inverse[static_cast<std::size_t>(perm[d])] = static_cast<std::int64_t>(d);
          t = t.permute(perm).contiguous().permute(inverse);
        }
      if (variant == 2)  // stride-2 views: copied for the BLAS
        for (auto& t : ops) {
          if (t.dim() == 0) continue;
          st::Tensor<double> wide = st::zeros<double>([&] {
            std::vector<std::int64_t> s(t.sizes().begin(), t.sizes().end());
            s.back() *= 2;
            return s;
          }());
          st::Tensor<double> view = wide.as_strided(t.sizes(), [&] {
            std::vector<std::int64_t> s(t.sizes().size(), 0);
            std::int64_t stride = 2;
            for (std::size_t d = s.size(); d-- > 0;) { s[d] = stride; stride *= t.size(static_cast<std::int64_t>(d)); }
            return s;
          }());
          view.copy_(t);
          t = view;
        }
      check_against_naive<double>(c, ops, 1e-12);
      std::vector<st::Tensor<float>> fops;
      for (const auto& t : ops) fops.push_back(t.to<float>());
      check_against_naive<float>(c, fops, 1e-5);
    }
  }
}

TEST_CASE("a convolution by unfold and einsum, and by im2col and matmul, against the naive loops", "[linalg]") {
  // The window view of unfold reads rows of kw elements in its own order and rows of the
  // output width in another: either copy for the BLAS must give the same convolution.
  std::mt19937 rng(4242);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::int64_t B = 2, C = 4, H = 12, W = 13, O = 8, K = 3, OH = H - K + 1, OW = W - K + 1;  // on the BLAS
  st::Tensor<double> x = st::empty<double>({B, C, H, W}), w = st::empty<double>({O, C, K, K});
  for (double& v : std::span<double>(x.data_ptr(), static_cast<std::size_t>(x.numel()))) v = u(rng);
  for (double& v : std::span<double>(w.data_ptr(), static_cast<std::size_t>(w.numel()))) v = u(rng);
  const auto patches = x.unfold(2, K, 1).unfold(3, K, 1);  // [B, C, OH, OW, K, K]
  const st::Tensor<double> by_einsum = st::einsum("bchwij,ocij->bohw", patches, w);
  const auto cols = patches.permute({0, 2, 3, 1, 4, 5}).reshape({B * OH * OW, C * K * K});
  const st::Tensor<double> by_matmul =
      cols.matmul(w.reshape({O, C * K * K}).t()).reshape({B, OH, OW, O}).permute({0, 3, 1, 2}).contiguous();
  REQUIRE(by_einsum.sizes() == st::int_list{B, O, OH, OW});
  const st::Tensor<double> einsum_c = by_einsum.contiguous();
  const double* xp = x.data_ptr();
  const double* wp = w.data_ptr();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t i = 0; i < OH; ++i)
        for (std::int64_t j = 0; j < OW; ++j) {
          double want = 0;
          for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t p = 0; p < K; ++p)
              for (std::int64_t q = 0; q < K; ++q)
                want += xp[((b * C + c) * H + i + p) * W + j + q] * wp[((o * C + c) * K + p) * K + q];
          const std::int64_t at = ((b * O + o) * OH + i) * OW + j;
          CHECK(einsum_c.data_ptr()[at] == Approx(want).epsilon(1e-12).margin(1e-12));
          CHECK(by_matmul.data_ptr()[at] == Approx(want).epsilon(1e-12).margin(1e-12));
        }
}

TEST_CASE("matmul's rules for every rank combination", "[linalg]") {
  // shapes: a [..., n, k] (or [k]), b [..., k, p] (or [k]); batch dims broadcast
  const std::vector<std::vector<std::int64_t>> as = {{3}, {2, 3}, {4, 2, 3}, {5, 1, 2, 3}};
  const std::vector<std::vector<std::int64_t>> bs = {{3}, {3, 2}, {4, 3, 2}, {1, 4, 3, 2}};
  for (const auto& sa : as)
    for (const auto& sb : bs) {
      const auto a = iota<double>(sa, 1, 0.5), b = iota<double>(sb, -1, 0.25);
      const st::Tensor<double> c = st::matmul(a, b);
      // the same product as an einsum with explicit labels
      const std::string ea = std::string(sa.size() == 4 ? "xy" : sa.size() == 3 ? "y" : "") + (sa.size() >= 2 ? "n" : "") + "k";
      const std::string eb = std::string(sb.size() == 4 ? "xy" : sb.size() == 3 ? "y" : "") + "k" + (sb.size() >= 2 ? "p" : "");
      const std::size_t nb = std::max(sa.size() >= 3 ? sa.size() - 2 : 0, sb.size() >= 3 ? sb.size() - 2 : 0);
      const std::string eo = std::string(nb == 2 ? "xy" : nb == 1 ? "y" : "") + (sa.size() >= 2 ? "n" : "") + (sb.size() >= 2 ? "p" : "");
      INFO(ea << "," << eb << "->" << eo);
      const st::Tensor<double> want = st::einsum(ea + "," + eb + "->" + eo, a, b);
      CHECK(c.sizes() == want.sizes());
      test::check_close(as_doubles(c), as_doubles(want), 1e-9);
    }
  CHECK(st::matmul(iota<double>({3}), iota<double>({3})).dim() == 0);
  CHECK(st::matmul(iota<double>({3}), iota<double>({3})).item() == 14);
  CHECK(st::matmul(iota<double>({4, 2, 3}), iota<double>({3, 5})).sizes() == st::int_list{4, 2, 5});
  CHECK(st::matmul(iota<double>({3}), iota<double>({4, 3, 5})).sizes() == st::int_list{4, 5});
  CHECK(st::dot(iota<double>({3}), iota<double>({3})).item() == 14);
  CHECK(as_doubles(st::mv(iota<double>({2, 3}), iota<double>({3}))) == std::vector<double>{14, 32});
  CHECK(as_doubles(st::outer(iota<double>({2}), iota<double>({3}))) == std::vector<double>{1, 2, 3, 2, 4, 6});
  const auto t3 = iota<double>({2, 3, 4}), t4 = iota<double>({3, 4, 5});
  CHECK(st::tensordot(t3, t4).sizes() == st::int_list{2, 5});
  test::check_close(as_doubles(st::tensordot(t3, t4)), as_doubles(st::Tensor<double>(st::einsum("ijk,jkl->il", t3, t4))), 1e-9);
  test::check_close(as_doubles(st::tensordot(t3, t4, {1}, {0})), as_doubles(st::Tensor<double>(st::einsum("ijk,jlm->iklm", t3, t4))), 1e-9);
  // transposed operands go to the BLAS as transposes and give the same values
  const auto big = iota<double>({40, 48}, 0, 0.01);
  test::check_close(as_doubles(st::matmul(big.t(), big)), as_doubles(st::matmul(big.t().contiguous(), big)), 1e-9);
}

TEST_CASE("matmul's and einsum's errors, in PyTorch's words", "[linalg]") {
  const auto v3 = st::zeros<float>({3}), m23 = st::zeros<float>({2, 3}), m45 = st::zeros<float>({4, 5});
  CHECK_THROWS_WITH(st::matmul(st::zeros<float>({}), v3),
                    "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  CHECK_THROWS_WITH(st::mm(m23, m45), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_THROWS_WITH(st::matmul(m23, m45), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK_THROWS_WITH(st::dot(v3, st::zeros<float>({4})),
                    "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, "
                    "but got 3 and 4 elements respectively");
  CHECK_THROWS_WITH(st::einsum("ij,jk", m23), "einsum(): fewer operands were provided than specified in the equation");
  CHECK_THROWS_WITH(st::einsum("ij", m23, m23), "einsum(): more operands were provided than specified in the equation");
  CHECK_THROWS_WITH(st::einsum("i", m23),
                    "einsum(): the number of subscripts in the equation (1) does not match the number of dimensions (2) "
                    "for operand 0 and no ellipsis was given");
  CHECK_THROWS_WITH(st::einsum("ij,jk->ik", m23, m45),
                    "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3");
  CHECK_THROWS_WITH(st::einsum("ii", m23), "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2");
  CHECK_THROWS_WITH(st::einsum("i1", m23),
                    "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]");
  CHECK_THROWS_WITH(st::einsum("ij->k", m23), "einsum(): output subscript k does not appear in the equation for any input operand");
  CHECK_THROWS_WITH(st::einsum("ij->ii", m23), "einsum(): output subscript i appears more than once in the output");
  CHECK_THROWS_WITH(st::einsum("i", std::vector<st::Tensor<float>>{}), "einsum(): must provide at least one operand");
}

TEST_CASE("gradients: the backward of einsum is einsum, of matmul is matmul", "[linalg][autograd]") {
  SECTION("matmul: dA = G B^T, dB = A^T G") {
    auto a = iota<double>({3, 4}, 0, 0.5).requires_grad_();
    auto b = iota<double>({4, 2}, 1, -0.25).requires_grad_();
    const auto w = iota<double>({3, 2}, 2, 1);
    st::sum(st::matmul(a, b) * w).backward();
    test::check_close(as_doubles(a.grad()), as_doubles(st::mm(w, b.detach().t())), 1e-9);
    test::check_close(as_doubles(b.grad()), as_doubles(st::mm(a.detach().t(), w)), 1e-9);
  }
  SECTION("a trace spreads to the diagonal; a summed-alone label spreads everywhere") {
    auto m = iota<double>({3, 3}).requires_grad_();
    st::Tensor<double>(st::einsum("ii->", m)).backward();
    CHECK(as_doubles(m.grad()) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    auto x = iota<double>({2, 3}).requires_grad_();
    st::Tensor<double>(st::einsum("ij->i", x)).backward(st::from_vector<double>({1, 2}));
    CHECK(as_doubles(x.grad()) == std::vector<double>{1, 1, 1, 2, 2, 2});
  }
  SECTION("broadcast size-1 dims and expanded operands are summed back") {
    auto a = iota<double>({1, 3}).requires_grad_();
    auto b = iota<double>({4, 3}).requires_grad_();
    st::Tensor<double>(st::einsum("ij,ij->", a, b)).backward();
    CHECK(a.grad().sizes() == st::int_list{1, 3});
    CHECK(as_doubles(a.grad()) == std::vector<double>{22, 26, 30});  // column sums of b
    auto v = iota<double>({3}).requires_grad_();
    st::Tensor<double>(st::einsum("ij,ij->", v.expand({4, 3}), b)).backward();
    CHECK(as_doubles(v.grad()) == std::vector<double>{22, 26, 30});
  }
  SECTION("three operands, batched, the same operand twice") {
    auto x = iota<double>({2, 3}, 0.5, 0.5).requires_grad_();
    st::Tensor<double>(st::einsum("bi,bi,bi->", x, x, x)).backward();
    std::vector<double> want;
    for (const double e : as_doubles(x.detach())) want.push_back(3 * e * e);
    test::check_close(as_doubles(x.grad()), want, 1e-9);
  }
  SECTION("complex: the other operand conjugated") {
    using C = std::complex<double>;
    auto a = st::from_vector<C>({C(1, 2), C(3, -1)}).requires_grad_();
    const auto b = st::from_vector<C>({C(0, 1), C(2, 2)});
    st::Tensor<C>(st::einsum("i,i->", a, b)).backward();
    CHECK(a.grad().to_vector() == std::vector<C>{C(0, -1), C(2, -2)});
  }
  SECTION("the GEMM path's backward on a large product") {
    auto a = iota<float>({40, 50}, 0, 0.01f).requires_grad_();
    auto b = iota<float>({50, 30}, 1, -0.01f).requires_grad_();
    st::sum(st::matmul(a, b)).backward();
    const st::Tensor<float> ones = st::full<float>({40, 30}, 1.0f);
    test::check_close(as_doubles(a.grad()), as_doubles(st::mm(ones, b.detach().t())), 1e-5);
    test::check_close(as_doubles(b.grad()), as_doubles(st::mm(a.detach().t(), ones)), 1e-5);
  }
}

TEST_CASE("the BLAS follows set_num_threads and gives the same result for any count", "[linalg]") {
  const auto a = iota<double>({96, 80}, 0, 0.01), b = iota<double>({80, 72}, 1, 0.02);
  const int before = st::get_num_threads();
  st::set_num_threads(1);
  const std::vector<double> one = as_doubles(st::matmul(a, b));
  st::set_num_threads(2);
  const std::vector<double> two = as_doubles(st::matmul(a, b));
  st::set_num_threads(before);
  test::check_close(one, two, 1e-12);
}

// Products with a tiny dim take small-matrix kernels in front of the BLAS ([M, K] @ [K, N] with
// K, N of 2-8 and M long; [K, M]^T @ [K, N] with M, N of 2-8 and K long); the sizes around
// them (1, 9) stay on the BLAS or the reduce. The shapes are above the planner's GEMM threshold
// (32768 multiply-adds). Each against a naive triple loop in long double, the second operand
// stored transposed or not; a product large enough to be split over two threads gives the same
// bits on one and two.
TEST_CASE("matrix products with tiny dims against a naive triple loop", "[linalg]") {
  // The product and, per element, the sum of |a b| over the inner dim (its rounding bound).
  const auto naive = [](const st::Tensor<double>& at, const st::Tensor<double>& bt) {
    const st::Tensor<double> a = at.contiguous(), b = bt.contiguous();
    const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    const double* pa = a.data_ptr();
    const double* pb = b.data_ptr();
    std::vector<double> c(static_cast<std::size_t>(m * n)), size(c.size());
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        long double s = 0, abs = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          const long double p = static_cast<long double>(pa[i * k + q]) * static_cast<long double>(pb[q * n + j]);
          s += p;
          abs += std::abs(p);
        }
        c[static_cast<std::size_t>(i * n + j)] = static_cast<double>(s);
        size[static_cast<std::size_t>(i * n + j)] = static_cast<double>(abs);
      }
    return std::pair{c, size};
  };
  // |got - want| within k + 1 units in the last place of the sum of |a b| (the bound of any
  // order of summation).
  const auto check_bound = [](const std::vector<double>& got, const std::pair<std::vector<double>, std::vector<double>>& want,
                              std::int64_t k, double eps) {
    REQUIRE(got.size() == want.first.size());
    std::size_t outside = 0, first = 0;
    for (std::size_t e = got.size(); e-- > 0;)
      if (!(std::abs(got[e] - want.first[e]) <= static_cast<double>(k + 1) * eps * want.second[e])) ++outside, first = e;
    INFO("first element outside: " << first << ", got " << got[first] << ", want " << want.first[first]);
    CHECK(outside == 0);
  };
  for (const std::int64_t small1 : {1, 2, 3, 5, 7, 8, 9})
    for (const std::int64_t small2 : {2, 3, 4, 8, 9}) {
      INFO("tiny dims " << small1 << " and " << small2);
      // tall times small: [8209, small1] @ [small1, small2], the small matrix stored either way
      const st::Tensor<double> a = iota<double>({8209, small1}, -1, 0.37).sin();
      const st::Tensor<double> b = iota<double>({small1, small2}, 0.5, 0.1);
      const st::Tensor<double> bt = iota<double>({small2, small1}, 0.5, 0.1).t();
      const st::Tensor<float> af = a.to<float>(), bf = b.to<float>(), btf = bt.t().to<float>().t();
      for (const bool transposed : {false, true}) {
        const st::Tensor<double>& rhs = transposed ? bt : b;
        const st::Tensor<float>& rhsf = transposed ? btf : bf;
        if (small1 > 1) CHECK(rhsf.is_contiguous() == !transposed);
        check_bound(as_doubles(st::Tensor<double>(st::matmul(a, rhs))), naive(a, rhs), small1, 0x1p-52);
        check_bound(as_doubles(st::Tensor<float>(st::matmul(af, rhsf))), naive(af.to<double>(), rhsf.to<double>()),
                    small1, 0x1p-23);
      }
      // a Gram product: [K, small1]^T @ [K, small2], K long (a partial block of 256 rows, whole
      // blocks only, many blocks)
      for (const std::int64_t k : {8200, 8448, 20000}) {
        const st::Tensor<double> x = iota<double>({k, small1}, 2, 0.013).cos();
        const st::Tensor<double> y = iota<double>({k, small2}, -3, 0.029).sin();
        check_bound(as_doubles(st::Tensor<double>(st::matmul(x.t(), y))), naive(x.t(), y), k, 0x1p-52);
        const st::Tensor<float> xf = x.to<float>(), yf = y.to<float>();
        check_bound(as_doubles(st::Tensor<float>(st::matmul(xf.t(), yf))), naive(xf.to<double>().t(), yf.to<double>()),
                    k, 0x1p-23);
        if (small1 == small2) check_bound(as_doubles(st::Tensor<double>(st::matmul(x.t(), x))), naive(x.t(), x), k, 0x1p-52);
      }
    }
  // split over two threads (4e6 multiply-adds and more): the same bits as one thread
  const int before = st::get_num_threads();
  const st::Tensor<double> a = iota<double>({500000, 3}, -1, 0.37).sin(), r = iota<double>({3, 3}, 0.5, 0.1);
  const st::Tensor<float> af = a.to<float>(), rf = r.to<float>();
  st::set_num_threads(1);
  const st::Tensor<double> one = st::matmul(a, r);
  const st::Tensor<float> onef = st::matmul(af, rf);
  st::set_num_threads(2);
  const st::Tensor<double> two = st::matmul(a, r);
  const st::Tensor<float> twof = st::matmul(af, rf);
  st::set_num_threads(before);
  CHECK(std::equal(one.data_ptr(), one.data_ptr() + one.numel(), two.data_ptr()));
  CHECK(std::equal(onef.data_ptr(), onef.data_ptr() + onef.numel(), twof.data_ptr()));
  check_bound(as_doubles(one), naive(a, r), 3, 0x1p-52);
}
