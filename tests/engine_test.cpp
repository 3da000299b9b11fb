// SPDX-License-Identifier: MIT
// The loop engine itself. The planner's cases (drop size-1 dims, reorder, coalesce, tile,
// broadcast), the overlap analysis, the executor's walk over any layout (negative strides and
// two threads included), and a randomised layout property test of assignment and reduction
// against a naive reference that reads elements by their strides: strides 0, 1, 2, 3 and 4,
// transposes and permutes, lengths 1-17 and 1000+, tile edges, every element width, 1-6 leaves.
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>
#include "expr_diff.hpp"
#include "sanitized.hpp"
import strata;
import strata.loop;  // the engine's internals (not part of `import strata;`), tested directly

namespace st = strata;
namespace sd = strata::detail;

namespace {
using I = std::int64_t;
using ivec = std::vector<I>;

ivec plan_sizes(const sd::loop_plan& p) { return {p.sizes.begin(), p.sizes.end()}; }
ivec plan_strides(const sd::loop_plan& p) { return {p.strides.begin(), p.strides.end()}; }
}  // namespace

TEST_CASE("planner: contiguous operands become one dim; size-1 dims are dropped", "[engine][plan]") {
  alignas(64) char a[256], b[256];
  const ivec strides{12, 4, 1};
  const sd::loop_operand ops[] = {{a, strides, 4}, {b, strides, 4}};
  const auto p = sd::make_plan(ivec{2, 3, 4}, ops);
  CHECK(plan_sizes(p) == ivec{24});
  CHECK(plan_strides(p) == ivec{4, 4});
  CHECK(p.numel == 24);
  CHECK_FALSE(p.tiled);
  CHECK(p.base[0] == a);
  CHECK(p.base[1] == b);

  const ivec with_ones{3, 3, 1};
  const sd::loop_operand ops1[] = {{a, with_ones, 8}, {b, with_ones, 8}};
  const auto q = sd::make_plan(ivec{2, 1, 3}, ops1);
  CHECK(plan_sizes(q) == ivec{6});
  CHECK(plan_strides(q) == ivec{8, 8});

  const ivec none;
  const sd::loop_operand scalar_ops[] = {{a, none, 4}, {b, none, 4}};
  const auto s = sd::make_plan(ivec{}, scalar_ops);
  CHECK(plan_sizes(s) == ivec{1});
  CHECK(plan_strides(s) == ivec{0, 0});
}

TEST_CASE("planner: dims follow the operands' strides, output first", "[engine][plan]") {
  alignas(64) char a[256], b[256];
  // Both column-major: the walk follows memory, and the two dims merge into one.
  const ivec colmajor{1, 3};
  const sd::loop_operand same[] = {{a, colmajor, 4}, {b, colmajor, 4}};
  const auto p = sd::make_plan(ivec{3, 4}, same);
  CHECK(plan_sizes(p) == ivec{12});
  CHECK(plan_strides(p) == ivec{4, 4});
  // The output row-major, the input column-major: the output decides (dim 1 innermost), no
  // merge, and no tile below tile_rows elements.
  const ivec rowmajor{4, 1};
  const sd::loop_operand mixed[] = {{a, rowmajor, 4}, {b, colmajor, 4}};
  const auto q = sd::make_plan(ivec{3, 4}, mixed);
  CHECK(plan_sizes(q) == ivec{4, 3});
  CHECK(plan_strides(q) == ivec{4, 12, 16, 4});
  CHECK_FALSE(q.tiled);
  // An output that broadcasts nothing but whose input is stride 0 along dim 0 (expand):
  // the broadcast dim cannot merge.
  const ivec expanded{0, 1};
  const sd::loop_operand bc[] = {{a, rowmajor, 4}, {b, expanded, 4}};
  const auto r = sd::make_plan(ivec{3, 4}, bc);
  CHECK(plan_sizes(r) == ivec{4, 3});
  CHECK(plan_strides(r) == ivec{4, 4, 16, 0});
  // A narrowed input (x[:, :4] of [3, 6]) keeps its two dims.
  const ivec narrowed{6, 1};
  const sd::loop_operand nr[] = {{a, rowmajor, 4}, {b, narrowed, 4}};
  const auto s = sd::make_plan(ivec{3, 4}, nr);
  CHECK(plan_sizes(s) == ivec{4, 3});
  CHECK(plan_strides(s) == ivec{4, 4, 16, 24});
}

TEST_CASE("planner: an operand unit-stride along another dim tiles the plan", "[engine][plan]") {
  alignas(64) char a[64], b[64];
  // out [32, 40] row-major, in transposed (column-major): tiles of the two dims.
  const ivec rowmajor{40, 1}, colmajor{1, 32};
  const sd::loop_operand ops[] = {{a, rowmajor, 4}, {b, colmajor, 4}};
  const auto p = sd::make_plan(ivec{32, 40}, ops);
  CHECK(p.tiled);
  CHECK(plan_sizes(p) == ivec{40, 32});
  CHECK(plan_strides(p) == ivec{4, 128, 160, 4});
  // The unit-stride dim is brought into position 1: out [32, 3, 32] row-major, in unit-stride
  // along dim 0 and padded along dim 1 (so nothing merges).
  const ivec out3{96, 32, 1}, in3{1, 2048, 32};
  const sd::loop_operand ops3[] = {{a, out3, 4}, {b, in3, 4}};
  const auto q = sd::make_plan(ivec{32, 3, 32}, ops3);
  CHECK(q.tiled);
  CHECK(plan_sizes(q) == ivec{32, 32, 3});
  CHECK(plan_strides(q) == ivec{4, 128, 384, 4, 128, 8192});
  // Too short along the inner dim to tile.
  const ivec row8{8, 1}, col8{1, 32};
  const sd::loop_operand short_ops[] = {{a, row8, 4}, {b, col8, 4}};
  CHECK_FALSE(sd::make_plan(ivec{32, 8}, short_ops).tiled);
}

TEST_CASE("planner: fresh outputs follow the inputs' memory order", "[engine][plan]") {
  alignas(64) char a[64];
  const ivec colmajor{1, 3};
  const sd::loop_operand in[] = {{a, colmajor, 4}};
  const auto s = sd::fresh_strides(ivec{3, 4}, in);
  CHECK(ivec(s.begin(), s.end()) == ivec{1, 3});
  const ivec rowmajor{4, 1};
  const sd::loop_operand in2[] = {{a, rowmajor, 4}};
  const auto t = sd::fresh_strides(ivec{3, 4}, in2);
  CHECK(ivec(t.begin(), t.end()) == ivec{4, 1});
  const auto b = sd::broadcast_strides(ivec{4}, ivec{1}, ivec{3, 4});
  CHECK(ivec(b.begin(), b.end()) == ivec{0, 1});
  const auto c = sd::broadcast_strides(ivec{3, 1}, ivec{1, 1}, ivec{2, 3, 4});
  CHECK(ivec(c.begin(), c.end()) == ivec{0, 1, 0});
}

TEST_CASE("overlap: a view's own elements, and two views of one storage", "[engine][overlap]") {
  CHECK(sd::has_internal_overlap(ivec{3, 4}, ivec{0, 1}));        // expanded
  CHECK_FALSE(sd::has_internal_overlap(ivec{4}, ivec{1}));
  CHECK_FALSE(sd::has_internal_overlap(ivec{1, 4}, ivec{0, 1}));  // size-1 dims do not count
  CHECK(sd::has_internal_overlap(ivec{3, 4}, ivec{2, 1}));        // unfold(size 4, step 2)
  CHECK_FALSE(sd::has_internal_overlap(ivec{3, 2}, ivec{2, 1}));  // unfold(size 2, step 2)
  CHECK_FALSE(sd::has_internal_overlap(ivec{2, 2}, ivec{3, 2}));  // offsets 0 2 3 5: exact check
  CHECK(sd::has_internal_overlap(ivec{2, 3}, ivec{2, 1}));        // offsets 0 1 2 2 3 4
  CHECK_FALSE(sd::has_internal_overlap(ivec{0, 3}, ivec{0, 1}));  // empty

  const sd::layout even{{4}, {2}, 0}, odd{{4}, {2}, 1}, head{{5}, {1}, 0}, shifted{{5}, {1}, 1};
  CHECK(sd::memory_overlap(even, 4, odd, 4) == sd::overlap::none);  // x[::2] and x[1::2]
  CHECK(sd::memory_overlap(head, 4, shifted, 4) == sd::overlap::partial);
  CHECK(sd::memory_overlap(head, 4, head, 4) == sd::overlap::same);
  CHECK(sd::memory_overlap(head, 4, head, 8) == sd::overlap::partial);  // reinterpreted widths
  const sd::layout far{{5}, {1}, 5};
  CHECK(sd::memory_overlap(head, 4, far, 4) == sd::overlap::none);
  CHECK_FALSE(sd::needs_temporary(sd::overlap::same, 4, 4));  // exact alias: read before written
  CHECK(sd::needs_temporary(sd::overlap::same, 4, 8));
  CHECK(sd::needs_temporary(sd::overlap::partial, 4, 4));
  CHECK_FALSE(sd::needs_temporary(sd::overlap::none, 4, 8));
}

namespace {
// A row kernel that knows nothing of the plan: out = in, and hits += 1, element by element at
// the byte strides it is given (8-byte elements).
void copy_and_count(const void*, char* const* ptrs, const std::int64_t* s, std::int64_t n, sd::loop_status*) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(ptrs[0] + i * s[0], ptrs[1] + i * s[1], 8);
    I h;
    std::memcpy(&h, ptrs[2] + i * s[2], 8);
    ++h;
    std::memcpy(ptrs[2] + i * s[2], &h, 8);
  }
}

// Strides (in elements) of a dense layout of sizes whose dims lie in memory in the given order
// (order[0] innermost), each dim possibly reversed (negative stride) and padded.
struct dense_layout {
  ivec strides;
  I offset = 0;  ///< of element (0, ..., 0)
  I span = 1;    ///< elements of the buffer it needs
};
dense_layout random_layout(diff::rng_t& g, const ivec& sizes) {
  const std::size_t n = sizes.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), g);
  dense_layout l;
  l.strides.assign(n, 0);
  I running = diff::rnd(g, 1, 3);  // the innermost dim's step: 1, 2 or 3
  for (const std::size_t d : order) {
    l.strides[d] = running;
    running *= sizes[d] + diff::rnd(g, 0, 1);  // sometimes padded
  }
  l.span = running + 1;
  for (std::size_t d = 0; d < n; ++d)
    if (diff::rnd(g, 0, 3) == 0) {  // reversed: element 0 at the dim's far end
      l.offset += (sizes[d] - 1) * l.strides[d];
      l.strides[d] = -l.strides[d];
    }
  return l;
}
}  // namespace

TEST_CASE("executor: every element of any layout is visited once (negative strides, tiles, threads)",
          "[engine][execute]") {
  diff::rng_t g(7);
  const I menu[] = {1, 2, 3, 5, 15, 16, 17, 31, 33, 64, 65, 200, 1000};
  for (int it = 0; it < 120; ++it) {
    const int threads = static_cast<int>(diff::rnd(g, 1, 2));
    st::set_num_threads(threads);
    ivec sizes;
    const I rank = diff::rnd(g, 1, 4);
    I numel = 1;
    for (I d = 0; d < rank; ++d) {
      I sz = menu[diff::rnd(g, 0, 12)];
      while (numel * sz > 300000) sz = menu[diff::rnd(g, 0, 4)];
      sizes.push_back(sz);
      numel *= sz;
    }
    const dense_layout lo = random_layout(g, sizes), li = random_layout(g, sizes);
    std::vector<I> out(static_cast<std::size_t>(lo.span), -1), hits(static_cast<std::size_t>(lo.span), 0);
    std::vector<I> in(static_cast<std::size_t>(li.span));
    std::iota(in.begin(), in.end(), I{0});
    const sd::loop_operand ops[] = {{reinterpret_cast<char*>(out.data() + lo.offset), lo.strides, 8},
                                    {reinterpret_cast<char*>(in.data() + li.offset), li.strides, 8},
                                    {reinterpret_cast<char*>(hits.data() + lo.offset), lo.strides, 8}};
    const sd::loop_plan plan = sd::make_plan(sizes, ops);
    sd::execute(plan, &copy_and_count, nullptr, nullptr);
    // The naive check: walk every index.
    ivec idx(sizes.size(), 0);
    bool ok = true;
    for (I e = 0; e < numel && ok; ++e) {
      I po = lo.offset, pi = li.offset;
      for (std::size_t d = 0; d < sizes.size(); ++d) po += idx[d] * lo.strides[d], pi += idx[d] * li.strides[d];
      ok = out[static_cast<std::size_t>(po)] == pi && hits[static_cast<std::size_t>(po)] == 1;
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    INFO("iteration " << it << " sizes " << st::to_string(st::int_list(sizes)) << " out strides "
                      << st::to_string(st::int_list(lo.strides)) << " in strides "
                      << st::to_string(st::int_list(li.strides)) << " threads " << threads
                      << (plan.tiled ? " (tiled)" : ""));
    CHECK(ok);
    // Nothing outside the layout was written.
    CHECK(std::accumulate(hits.begin(), hits.end(), I{0}) == numel);
  }
  st::set_num_threads(1);
}

// ---- the layout property test, through the public API ----
namespace {
// A length along one dim: short (1-17), at a tile edge, or long (1000+).
I random_extent(diff::rng_t& g) {
  switch (diff::rnd(g, 0, 5)) {
    case 0: case 1: return diff::rnd(g, 1, 17);
    case 2: { const I edges[] = {15, 16, 17, 31, 32, 33, 63, 64, 65}; return edges[diff::rnd(g, 0, 8)]; }
    case 3: return diff::rnd(g, 40, 130);
    default: return diff::rnd(g, 1000, 1030);
  }
}

ivec random_sizes(diff::rng_t& g, bool big) {
  if (big) return {diff::rnd(g, 1000, 1030), diff::rnd(g, 700, 720)};  // past the engine's large-plan threshold
  const I rank = diff::rnd(g, 1, 3);
  ivec s;
  I numel = 1;
  for (I d = 0; d < rank; ++d) {
    I e = random_extent(g);
    while (numel * e > 40000) e = diff::rnd(g, 1, 17);
    s.push_back(e);
    numel *= e;
  }
  return s;
}

// A tensor of logical shape `sizes` (which broadcasts to the output) laid out one of the
// engine's ways: contiguous, a step of 2, 3 or 4 along a dim, transposed, permuted, narrowed
// (padded rows), or broadcast (stride 0) along a dim.
template <class T>
st::Tensor<T> laid_out(diff::rng_t& g, ivec sizes, int kind) {
  const I n = static_cast<I>(sizes.size());
  const std::size_t d = static_cast<std::size_t>(diff::rnd(g, 0, n - 1));
  switch (kind) {
    case 1: case 2: case 3: {  // every (kind + 1)-th element along d
      const I step = kind + 1;
      ivec base = sizes;
      base[d] = sizes[d] * step;
      const I off = diff::rnd(g, 0, step - 1);
      return diff::filled<T>(g, base).slice(static_cast<I>(d), off, off + (sizes[d] - 1) * step + 1, step);
    }
    case 4: {  // transposed: memory in the reverse order of dims
      ivec rev(sizes.rbegin(), sizes.rend());
      ivec perm(static_cast<std::size_t>(n));
      std::iota(perm.rbegin(), perm.rend(), I{0});
      return diff::filled<T>(g, rev).permute(perm);
    }
    case 5: {  // permuted
      ivec perm(static_cast<std::size_t>(n));
      std::iota(perm.begin(), perm.end(), I{0});
      std::shuffle(perm.begin(), perm.end(), g);
      ivec base(static_cast<std::size_t>(n));
      for (std::size_t k = 0; k < perm.size(); ++k) base[static_cast<std::size_t>(perm[k])] = sizes[k];
      return diff::filled<T>(g, base).permute(perm);
    }
    case 6: {  // narrowed along d
      ivec base = sizes;
      const I extra = diff::rnd(g, 1, 5), off = diff::rnd(g, 0, extra);
      base[d] += extra;
      return diff::filled<T>(g, base).narrow(static_cast<I>(d), off, sizes[d]);
    }
    case 7: {  // broadcast along d
      ivec one = sizes;
      one[d] = 1;
      return diff::filled<T>(g, one).expand(sizes);
    }
    default: return diff::filled<T>(g, sizes);
  }
}

template <class T>
reference::ref element_ref(const st::Tensor<T>& t, const ivec& out_idx) {
  // Broadcast from the right, reading by the view's own strides (no engine involved).
  const std::size_t lead = out_idx.size() - static_cast<std::size_t>(t.dim());
  I off = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(t.dim()); ++d)
    if (t.size(static_cast<I>(d)) != 1) off += out_idx[d + lead] * t.stride(static_cast<I>(d));
  const std::vector<T> one{t.data_ptr()[off]};
  return reference::load(one, 0);
}

template <class T>
bool close_to(const T& got, const reference::ref& want) { return diff::close(got, want); }

// The N-leaf forms of the test: every leaf of dtype T; a wrapped scalar in the one-leaf form.
template <int N>
struct form {
  template <class... A>
  auto operator()(const A&... x) const {
    const auto t = std::tie(x...);
    if constexpr (N == 1) return std::get<0>(t) * 3;
    else if constexpr (N == 2) return std::get<0>(t) - std::get<1>(t);
    else if constexpr (N == 3) return std::get<0>(t) * std::get<1>(t) + std::get<2>(t);
    else if constexpr (N == 4) return (std::get<0>(t) - std::get<1>(t)) * std::get<2>(t) + std::get<3>(t);
    else if constexpr (N == 5) return std::get<0>(t) * std::get<1>(t) + std::get<2>(t) * std::get<3>(t) - std::get<4>(t);
    else return (std::get<0>(t) + std::get<1>(t)) * (std::get<2>(t) - std::get<3>(t)) + std::get<4>(t) * std::get<5>(t);
  }
};

template <class T, int N, std::size_t... J>
void check_layouts(std::uint64_t seed, int iterations, std::index_sequence<J...>) {
  diff::rng_t g(seed);
  for (int it = 0; it < test::cases(iterations); ++it) {
    const bool big = it == 0 && seed % 3 == 0;
    st::set_num_threads(big ? 2 : static_cast<int>(diff::rnd(g, 1, 2)));
    ivec sizes = random_sizes(g, big);
    // Each leaf: the full shape or a trailing part of it with some dims 1 (broadcast by rank).
    std::array<ivec, N> shapes;
    std::array<int, N> kinds;
    for (int k = 0; k < N; ++k) {
      ivec s = sizes;
      if (diff::rnd(g, 0, 4) == 0) s[static_cast<std::size_t>(diff::rnd(g, 0, static_cast<I>(s.size()) - 1))] = 1;
      if (s.size() > 1 && diff::rnd(g, 0, 5) == 0) s.erase(s.begin());
      shapes[static_cast<std::size_t>(k)] = s;
      kinds[static_cast<std::size_t>(k)] = static_cast<int>(diff::rnd(g, 0, 8));
    }
    const std::array<st::Tensor<T>, N> leaves{laid_out<T>(g, shapes[J], kinds[J])...};
    const auto expr = form<N>{}(leaves[J]...);
    using V = typename std::remove_cvref_t<decltype(expr)>::value_type;
    sizes = ivec(expr.sizes().begin(), expr.sizes().end());  // the leaves' broadcast shape
    // The output: fresh, or a view laid out one of the ways an output can be (never broadcast).
    st::Tensor<V> out;
    const int out_kind = static_cast<int>(diff::rnd(g, 0, 7));
    if (out_kind == 7) {
      out = expr;
    } else {
      out = laid_out<V>(g, sizes, out_kind);
      out.assign(expr);
    }
    ivec idx(sizes.size(), 0);
    const I numel = st::numel_of(sizes);
    I bad = -1;
    std::string what;
    for (I e = 0; e < numel && bad < 0; ++e) {
      const reference::ref want = form<N>{}(element_ref(leaves[J], idx)...);
      I off = 0;
      for (std::size_t d = 0; d < sizes.size(); ++d) off += idx[d] * out.stride(static_cast<I>(d));
      const V got = out.data_ptr()[off];
      if (!close_to(got, want)) {
        bad = e;
        what = "got " + std::to_string(test::to_cdouble(got).real()) + " want " + std::to_string(want.value().real());
      }
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    std::string layouts;
    for (int k = 0; k < N; ++k)
      layouts += " leaf " + std::to_string(k) + ": " + st::to_string(st::int_list(leaves[static_cast<std::size_t>(k)].sizes())) +
                 " strides " + st::to_string(st::int_list(leaves[static_cast<std::size_t>(k)].strides()));
    INFO(N << " leaves of " << st::dtype_v<T> << ", iteration " << it << ", sizes " << st::to_string(st::int_list(sizes))
           << ", out strides " << st::to_string(st::int_list(out.strides())) << layouts << ": element " << bad << " " << what);
    CHECK(bad == -1);
  }
  st::set_num_threads(1);
}

template <class T>
void check_all_leaf_counts(std::uint64_t seed, int iterations) {
  check_layouts<T, 1>(seed, iterations, std::make_index_sequence<1>{});
  check_layouts<T, 2>(seed + 1, iterations, std::make_index_sequence<2>{});
  check_layouts<T, 3>(seed + 2, iterations, std::make_index_sequence<3>{});
  check_layouts<T, 4>(seed + 3, iterations, std::make_index_sequence<4>{});
  check_layouts<T, 5>(seed + 4, iterations, std::make_index_sequence<5>{});
  check_layouts<T, 6>(seed + 5, iterations, std::make_index_sequence<6>{});
}
}  // namespace

TEST_CASE("layouts: assignment of 1-6 leaves, 1-byte elements", "[engine][layouts]") {
  check_all_leaf_counts<std::uint8_t>(100, 25);
}
TEST_CASE("layouts: assignment of 1-6 leaves, 2-byte elements", "[engine][layouts]") {
  check_all_leaf_counts<st::half>(200, 25);
}
TEST_CASE("layouts: assignment of 1-6 leaves, 4-byte elements", "[engine][layouts]") {
  check_all_leaf_counts<float>(300, 25);
  check_all_leaf_counts<std::int32_t>(310, 15);
}
TEST_CASE("layouts: assignment of 1-6 leaves, 8-byte elements", "[engine][layouts]") {
  check_all_leaf_counts<double>(400, 25);
}
TEST_CASE("layouts: assignment of 1-6 leaves, 16-byte elements", "[engine][layouts]") {
  check_all_leaf_counts<std::complex<double>>(500, 15);
}

namespace {
// Leaves that are channels of one interleaved base (x[..., c::C] for C = 2, 3 or 4, the
// channels in random order, some read twice): the staging reads channels of the same data
// together. Against the naive reference, with outputs laid out as in check_layouts.
template <class T>
void check_channels(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < iterations; ++it) {
    st::set_num_threads(static_cast<int>(diff::rnd(g, 1, 2)));
    const I rows = diff::rnd(g, 1, 5), n = random_extent(g), C = diff::rnd(g, 2, 4);
    const auto base = diff::filled<T>(g, {rows, n * C + diff::rnd(g, 0, 2)});
    std::array<I, 3> ch{diff::rnd(g, 0, C - 1), diff::rnd(g, 0, C - 1), diff::rnd(g, 0, C - 1)};
    const auto leaf = [&](I c) { return base.slice(1, c, c + (n - 1) * C + 1, C); };
    const st::Tensor<T> a = leaf(ch[0]), b = leaf(ch[1]), c = leaf(ch[2]);
    const auto expr = a * b + c;
    using V = typename std::remove_cvref_t<decltype(expr)>::value_type;
    const ivec sizes{rows, n};
    const int out_kind = static_cast<int>(diff::rnd(g, 0, 6));
    st::Tensor<V> out = laid_out<V>(g, sizes, out_kind);
    out.assign(expr);
    I bad = -1;
    for (I r = 0; r < rows && bad < 0; ++r)
      for (I i = 0; i < n && bad < 0; ++i) {
        const ivec idx{r, i};
        const reference::ref want = element_ref(a, idx) * element_ref(b, idx) + element_ref(c, idx);
        if (!close_to(out.data_ptr()[r * out.stride(0) + i * out.stride(1)], want)) bad = r * n + i;
      }
    INFO(st::dtype_v<T> << " channels " << ch[0] << ", " << ch[1] << ", " << ch[2] << " of " << C << ", sizes [" << rows
                        << ", " << n << "], out strides " << st::to_string(st::int_list(out.strides())) << ": element " << bad);
    CHECK(bad == -1);
  }
  st::set_num_threads(1);
}
}  // namespace

TEST_CASE("layouts: channels of one interleaved base (strides 2, 3 and 4)", "[engine][layouts]") {
  check_channels<float>(700, 60);
  check_channels<double>(710, 40);
  check_channels<std::int32_t>(720, 30);
  check_channels<std::uint8_t>(730, 20);
}

namespace {
// A leaf of an [outer, rows, n] output with a short row n, as the short-rows staging meets
// them: the full shape (contiguous, every second element of wider rows, transposed, or rows
// narrowed out of wider ones), the row alone ([n], repeated by every row, maybe flipped), a
// value a row ([rows, 1]), or one value ([1]).
template <class T>
st::Tensor<T> short_row_leaf(diff::rng_t& g, const ivec& sizes, int kind) {
  REQUIRE(sizes.size() >= 2);
  const I n = sizes.back(), rows = sizes[sizes.size() - 2];
  switch (kind) {
    case 0: return diff::filled<T>(g, sizes);
    case 1: {
      ivec wide = sizes;
      wide.back() = 2 * n;
      return diff::filled<T>(g, wide).slice(-1, 1, 2 * n, 2);
    }
    case 2: return laid_out<T>(g, sizes, 4);
    case 3: {
      ivec wide = sizes;
      wide.back() = n + 2;
      return diff::filled<T>(g, wide).narrow(-1, 1, n);
    }
    case 4: return diff::filled<T>(g, {n});
    case 5: return diff::filled<T>(g, {n}).flip({0});
    case 6: return diff::filled<T>(g, {rows, 1});
    default: return diff::filled<T>(g, {1});
  }
}

// Rows of n elements for the short-row tests: a few, a thousand or more, or enough that the
// loop is split between two threads (their shares then start mid-row).
I short_row_count(diff::rng_t& g, I n) {
  switch (diff::rnd(g, 0, 3)) {
    case 0: return diff::rnd(g, 1, 40);
    case 1: return diff::rnd(g, 65536 / n + 1, 131072 / n);
    default: return diff::rnd(g, 1000, 40000 / n + 1000);
  }
}

// a * b + c over [outer, rows, n] with n of 2-60 (either side of the staging's bound), the
// leaves as short_row_leaf lays them out, the output fresh, contiguous, every second element
// of wider rows or narrowed out of wider ones; and a copy of a (a plain copy's rows go straight
// into the output); on 1 or 2 threads. Against the naive reference.
template <class T>
void check_short_rows(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < test::cases(iterations); ++it) {
    st::set_num_threads(static_cast<int>(diff::rnd(g, 1, 2)));
    const I n = diff::rnd(g, 2, 60), rows = short_row_count(g, n);
    ivec sizes{rows, n};
    if (diff::rnd(g, 0, 3) == 0) sizes.insert(sizes.begin(), diff::rnd(g, 2, 3));
    std::array<int, 3> kinds{static_cast<int>(diff::rnd(g, 0, 7)), static_cast<int>(diff::rnd(g, 0, 7)),
                             static_cast<int>(diff::rnd(g, 0, 7))};
    if (std::all_of(kinds.begin(), kinds.end(), [](int k) { return k == 4 || k == 5 || k == 7; })) kinds[0] = 0;  // full rank
    const auto a = short_row_leaf<T>(g, sizes, kinds[0]), b = short_row_leaf<T>(g, sizes, kinds[1]),
               c = short_row_leaf<T>(g, sizes, kinds[2]);
    const auto expr = a * b + c;
    using V = typename std::remove_cvref_t<decltype(expr)>::value_type;
    const ivec out_sizes(expr.sizes().begin(), expr.sizes().end());
    st::Tensor<V> out;
    const int out_kind = static_cast<int>(diff::rnd(g, 0, 3));
    if (out_kind == 3) {
      out = expr;
    } else {
      out = short_row_leaf<V>(g, out_sizes, out_kind == 2 ? 3 : out_kind);
      out.assign(expr);
    }
    st::Tensor<T> copy = st::empty<T>(out_sizes);
    copy.assign(a);
    ivec idx(out_sizes.size(), 0);
    const I numel = st::numel_of(out_sizes);
    I bad = -1;
    for (I e = 0; e < numel && bad < 0; ++e) {
      const reference::ref want = element_ref(a, idx) * element_ref(b, idx) + element_ref(c, idx);
      I off = 0, at = 0;
      for (std::size_t d = 0; d < out_sizes.size(); ++d) {
        off += idx[d] * out.stride(static_cast<I>(d));
        at += idx[d] * copy.stride(static_cast<I>(d));
      }
      if (!close_to(out.data_ptr()[off], want) || !close_to(copy.data_ptr()[at], element_ref(a, idx))) bad = e;
      for (std::size_t d = out_sizes.size(); d-- > 0;) {
        if (++idx[d] < out_sizes[d]) break;
        idx[d] = 0;
      }
    }
    INFO(st::dtype_v<T> << ", iteration " << it << ", sizes " << st::to_string(st::int_list(out_sizes)) << ", leaves "
                        << kinds[0] << " " << kinds[1] << " " << kinds[2] << ", out strides "
                        << st::to_string(st::int_list(out.strides())) << ": element " << bad);
    CHECK(bad == -1);
  }
  st::set_num_threads(1);
}

// sum and amax over the short dim, over the long one, or both, of a * b + c laid out as in
// check_short_rows: against the naive reference in double, and the same bits on 1 and 2 threads.
template <class T>
void check_short_row_reductions(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < test::cases(iterations); ++it) {
    const I n = diff::rnd(g, 2, 20), rows = short_row_count(g, n);
    const ivec sizes{rows, n};
    std::array<int, 3> kinds{static_cast<int>(diff::rnd(g, 0, 7)), static_cast<int>(diff::rnd(g, 0, 7)),
                             static_cast<int>(diff::rnd(g, 0, 7))};
    if (std::all_of(kinds.begin(), kinds.end(), [](int k) { return k == 4 || k == 5 || k == 7; })) kinds[0] = 6;  // 2-D
    const auto a = short_row_leaf<T>(g, sizes, kinds[0]), b = short_row_leaf<T>(g, sizes, kinds[1]),
               c = short_row_leaf<T>(g, sizes, kinds[2]);
    const I which = diff::rnd(g, 0, 2);
    const ivec dims = which == 0 ? ivec{0} : which == 1 ? ivec{1} : ivec{0, 1};
    const bool max = diff::rnd(g, 0, 1) == 0;
    const auto e = a * b + c;
    const ivec full(e.sizes().begin(), e.sizes().end());
    const auto run = [&](int threads) {
      st::set_num_threads(threads);
      return max ? st::Tensor<T>(st::amax(e, dims)) : st::Tensor<T>(st::sum(e, dims));
    };
    const auto one = run(1).contiguous(), two = run(2).contiguous();
    const I outs = one.numel();
    std::vector<double> want(static_cast<std::size_t>(outs), max ? -1e300 : 0.0);
    std::vector<double> mag(static_cast<std::size_t>(outs), 0.0);
    for (I i = 0; i < full[0]; ++i)
      for (I j = 0; j < full[1]; ++j) {
        const ivec idx{i, j};
        const double v = (element_ref(a, idx) * element_ref(b, idx) + element_ref(c, idx)).real();
        const I o = which == 0 ? j : which == 1 ? i : 0;
        auto& w = want[static_cast<std::size_t>(o)];
        w = max ? std::max(w, v) : w + v;
        mag[static_cast<std::size_t>(o)] += std::abs(v);
      }
    I bad = -1;
    for (I o = 0; o < outs && bad < 0; ++o) {
      const auto u = static_cast<std::size_t>(o);
      const double v = test::to_double(one.data_ptr()[o]);
      const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      const double bound = tol * ((max ? std::abs(want[u]) : mag[u]) + 1);
      if (!(std::abs(v - want[u]) <= bound)) bad = o;
    }
    INFO((max ? "amax" : "sum") << " of " << st::dtype_v<T> << ", iteration " << it << ", sizes "
                               << st::to_string(st::int_list(full)) << " over " << st::to_string(st::int_list(dims))
                               << ", leaves " << kinds[0] << " " << kinds[1] << " " << kinds[2] << ": output " << bad);
    CHECK(bad == -1);
    CHECK(std::memcmp(one.data_ptr(), two.data_ptr(), static_cast<std::size_t>(outs) * sizeof(T)) == 0);
  }
  st::set_num_threads(1);
}
}  // namespace

TEST_CASE("layouts: reductions of short rows with operands repeated or broadcast along them",
          "[engine][layouts][reduce]") {
  check_short_row_reductions<float>(900, 60);
  check_short_row_reductions<double>(910, 40);
}

namespace {
// Windows of x [b, c, h, w] (x.unfold(2, k, s).unfold(3, k, s), the window dims permuted
// among the others) times y plus z, into a contiguous output, and the windows copied alone:
// the rows of k continue neither along the other window dim nor beyond, so the staging runs
// rows across several dims at offsets. y is another window view, a contiguous tensor or one
// broadcast along the windows; on 1 or 2 threads, against the naive reference. The first two
// cases are large enough for two threads, which split the rows inside a block of windows.
template <class T>
void check_window_rows(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < test::cases(iterations); ++it) {
    const bool big = it < 2;
    st::set_num_threads(big ? 2 : static_cast<int>(diff::rnd(g, 1, 2)));
    const I k = diff::rnd(g, big ? 2 : 1, 5), stride = diff::rnd(g, 1, 2), h = diff::rnd(g, big ? 30 : k, big ? 45 : 20),
            w = diff::rnd(g, big ? 30 : k, big ? 45 : 20);
    const ivec xs{diff::rnd(g, big ? 3 : 1, 3), diff::rnd(g, big ? 5 : 1, 9), h, w};
    const auto view_of = [&](const st::Tensor<T>& x, const ivec& perm) {
      return x.unfold(2, k, stride).unfold(3, k, stride).permute(perm);
    };
    ivec perm{0, 1, 2, 3, 4, 5};
    if (diff::rnd(g, 0, 2) == 0 && !big) std::shuffle(perm.begin(), perm.end(), g);
    else perm = diff::rnd(g, 0, 1) == 0 ? ivec{0, 2, 3, 1, 4, 5} : ivec{0, 2, 3, 1, 5, 4};
    const auto x = view_of(diff::filled<T>(g, xs), perm);
    const ivec sizes(x.sizes().begin(), x.sizes().end());
    const int yk = static_cast<int>(diff::rnd(g, 0, 2));
    const auto y = yk == 0 ? view_of(diff::filled<T>(g, xs), perm)
                 : yk == 1 ? diff::filled<T>(g, sizes)
                           : diff::filled<T>(g, {sizes[0], sizes[1], sizes[2], sizes[3], 1, 1});
    const auto z = diff::filled<T>(g, {sizes.back()});
    const st::Tensor<T> out = st::empty<T>(sizes), copy = x.contiguous();
    out.assign(x * y + z);
    REQUIRE(copy.is_contiguous());
    ivec idx(sizes.size(), 0);
    I bad = -1;
    for (I e = 0; e < st::numel_of(sizes) && bad < 0; ++e) {
      const reference::ref want = element_ref(x, idx) * element_ref(y, idx) + element_ref(z, idx);
      if (!close_to(out.data_ptr()[e], want) || !close_to(copy.data_ptr()[e], element_ref(x, idx))) bad = e;
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    INFO(st::dtype_v<T> << ", iteration " << it << ", sizes " << st::to_string(st::int_list(sizes)) << ", perm "
                        << st::to_string(st::int_list(perm)) << ", y kind " << yk << ": element " << bad);
    CHECK(bad == -1);
  }
  st::set_num_threads(1);
}
}  // namespace

TEST_CASE("layouts: rows of windows across several dims (unfold, permute, copy)", "[engine][layouts]") {
  check_window_rows<float>(840, 60);
  check_window_rows<double>(850, 30);
  check_window_rows<std::uint8_t>(860, 20);
}

TEST_CASE("layouts: short rows with operands repeated or broadcast along them", "[engine][layouts]") {
  check_short_rows<float>(800, 60);
  check_short_rows<double>(810, 40);
  check_short_rows<std::uint8_t>(820, 25);
  check_short_rows<std::int64_t>(830, 25);
}

namespace {
// sum (or amax) over a random set of dims, keepdim or not, of a * b + c with random layouts,
// against the naive sum in double (bounded by the sum of magnitudes) or the exact maximum.
template <class T, bool Max>
void check_reduction_layouts(std::uint64_t seed, int iterations) {
  diff::rng_t g(seed);
  for (int it = 0; it < test::cases(iterations); ++it) {
    const bool big = it == 0;
    st::set_num_threads(big ? 2 : static_cast<int>(diff::rnd(g, 1, 2)));
    const ivec sizes = random_sizes(g, big);
    const auto a = laid_out<T>(g, sizes, static_cast<int>(diff::rnd(g, 0, 8)));
    const auto b = laid_out<T>(g, sizes, static_cast<int>(diff::rnd(g, 0, 8)));
    const auto c = laid_out<T>(g, sizes, static_cast<int>(diff::rnd(g, 0, 8)));
    ivec dims;
    for (I d = 0; d < static_cast<I>(sizes.size()); ++d)
      if (diff::rnd(g, 0, 1) == 0) dims.push_back(d);
    if (dims.empty()) dims.push_back(diff::rnd(g, 0, static_cast<I>(sizes.size()) - 1));
    const bool keepdim = diff::rnd(g, 0, 1) == 0;
    const auto e = a * b + c;
    const auto r = [&] {
      if constexpr (Max) return st::Tensor(st::amax(e, dims, keepdim));
      else return st::Tensor(st::sum(e, dims, keepdim));
    }();
    // The reference: each output position accumulates its elements in double.
    ivec kept_sizes;
    for (std::size_t d = 0; d < sizes.size(); ++d)
      if (std::find(dims.begin(), dims.end(), static_cast<I>(d)) == dims.end()) kept_sizes.push_back(sizes[d]);
    const I kept = st::numel_of(kept_sizes);
    std::vector<double> want(static_cast<std::size_t>(kept), Max ? -1e300 : 0.0), mag(static_cast<std::size_t>(kept), 0.0);
    ivec idx(sizes.size(), 0);
    const I numel = st::numel_of(sizes);
    for (I k = 0; k < numel; ++k) {
      const double v = (element_ref(a, idx) * element_ref(b, idx) + element_ref(c, idx)).real();
      I o = 0;
      for (std::size_t d = 0; d < sizes.size(); ++d)
        if (std::find(dims.begin(), dims.end(), static_cast<I>(d)) == dims.end()) o = o * sizes[d] + idx[d];
      auto& w = want[static_cast<std::size_t>(o)];
      w = Max ? std::max(w, v) : w + v;
      mag[static_cast<std::size_t>(o)] += std::abs(v);
      for (std::size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    const auto got = r.contiguous();
    REQUIRE(got.numel() == kept);
    I bad = -1;
    for (I o = 0; o < kept && bad < 0; ++o) {
      const double v = test::to_double(got.data_ptr()[o]);
      const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      // (the reference computes in double: a float maximum matches it to rounding)
      const double bound = Max ? tol * (std::abs(want[static_cast<std::size_t>(o)]) + 1) : tol * (mag[static_cast<std::size_t>(o)] + 1);
      if (!(std::abs(v - want[static_cast<std::size_t>(o)]) <= bound)) bad = o;
    }
    INFO((Max ? "amax" : "sum") << " of " << st::dtype_v<T> << ", iteration " << it << ", sizes "
                               << st::to_string(st::int_list(sizes)) << " over " << st::to_string(st::int_list(dims))
                               << " strides a " << st::to_string(st::int_list(a.strides())) << " b "
                               << st::to_string(st::int_list(b.strides())) << " c " << st::to_string(st::int_list(c.strides()))
                               << ": output " << bad);
    CHECK(bad == -1);
  }
  st::set_num_threads(1);
}
}  // namespace

TEST_CASE("layouts: reductions of an expression over any dims", "[engine][layouts][reduce]") {
  check_reduction_layouts<float, false>(600, 40);
  check_reduction_layouts<double, false>(610, 30);
  check_reduction_layouts<std::int32_t, false>(620, 30);
  check_reduction_layouts<float, true>(630, 30);
}
