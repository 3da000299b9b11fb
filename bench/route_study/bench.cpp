// SPDX-License-Identifier: MIT
// Benchmark: route A (fused template loop) vs route B (chunk program) for W1..W4.
// Output CSV: case,n,variant,chunk,ns_per_elem,GBps  (median over interleaved rounds)
#include "route_a.hpp"
#include "route_b.hpp"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
using namespace sx;
struct Bufs { Tensor a, b, c, d, e, out; };
template <int W> constexpr auto expr(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d, const Tensor& e) {
  if constexpr (W == 1) return a + b;
  else if constexpr (W == 2) return (a * b + c * d - e) * 0.5f;
  else if constexpr (W == 3) return ((a + b) * (a - b) + a * 0.25f - b * b) / (a * a + 1.0f);
  else return where(a > b, a - b, c * 2.0f);
}
constexpr int arrays_of(int W) { return W == 1 ? 3 : W == 2 ? 6 : W == 3 ? 3 : 4; }  // inputs + output
template <int W> [[gnu::noinline]] void runA(Bufs& B) { a::assign(B.out, expr<W>(B.a, B.b, B.c, B.d, B.e)); }
template <int W, b::Opts O> [[gnu::noinline]] void runB(Bufs& B) { b::assign<O>(B.out, expr<W>(B.a, B.b, B.c, B.d, B.e)); }

struct Variant { std::string name; std::size_t chunk; void (*fn)(Bufs&); std::vector<double> s; long reps = 0; };
template <int W> std::vector<Variant> variants() {
  std::vector<Variant> v{{"A", 0, runA<W>, {}}};
  auto add = [&]<std::size_t C>() {
    v.push_back({"B-copy", C, runB<W, b::Opts{0, true, false, C}>, {}});     // leaves copied into registers, explicit store
    v.push_back({"B-plain", C, runB<W, b::Opts{0, false, false, C}>, {}});   // leaves in place, explicit store
    v.push_back({"B-direct", C, runB<W, b::Opts{0, false, true, C}>, {}});   // + last op writes output
    v.push_back({"B-super", C, runB<W, b::Opts{1, false, true, C}>, {}});        // + superinstructions (fma family, select-gt)
    v.push_back({"B-super2", C, runB<W, b::Opts{2, false, true, C}>, {}});       // + a*b+-c*d, (a+-b)*s
  };
  add.template operator()<256>(); add.template operator()<512>();
  add.template operator()<1024>(); add.template operator()<2048>();
  return v;
}
using clk = std::chrono::steady_clock;
double sample(Variant& v, Bufs& B) {  // seconds per call
  auto t0 = clk::now();
  for (long r = 0; r < v.reps; ++r) v.fn(B);
  return std::chrono::duration<double>(clk::now() - t0).count() / v.reps;
}
template <int W> void bench(Bufs& B, const std::vector<std::size_t>& sizes, int rounds, double min_s) {
  for (std::size_t n : sizes) {
    Bufs L = B; L.a.n = L.b.n = L.c.n = L.d.n = L.e.n = L.out.n = n;
    auto vs = variants<W>();
    // correctness: every B variant vs A
    std::vector<float> ref(n);
    vs[0].fn(L); std::memcpy(ref.data(), L.out.p, n * 4);
    for (auto& v : vs) {
      std::memset(L.out.p, 0, n * 4); v.fn(L);
      for (std::size_t i = 0; i < n; ++i)
        if (std::fabs(L.out.p[i] - ref[i]) > 1e-5f * (1 + std::fabs(ref[i]))) {
          std::fprintf(stderr, "MISMATCH W%d n=%zu %s/%zu i=%zu %g vs %g\n", W, n, v.name.c_str(), v.chunk, i, L.out.p[i], ref[i]);
          std::exit(1);
        }
    }
    for (auto& v : vs) {  // calibrate reps so that one sample takes >= min_s
      v.reps = 1;
      while (sample(v, L) * v.reps < min_s) v.reps *= 2;
    }
    for (int r = 0; r < rounds; ++r)
      for (auto& v : vs) v.s.push_back(sample(v, L));
    for (auto& v : vs) {
      std::nth_element(v.s.begin(), v.s.begin() + v.s.size() / 2, v.s.end());
      double t = v.s[v.s.size() / 2];
      std::printf("W%d,%zu,%s,%zu,%.4f,%.2f\n", W, n, v.name.c_str(), v.chunk, t / n * 1e9, arrays_of(W) * 4.0 * n / t / 1e9);
    }
    std::fflush(stdout);
  }
}
int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{16, 100, 1000, 4096, 65536, 1u << 20, 1u << 24};
  if (argc > 1) { sizes.clear(); for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 0)); }
  std::size_t N = *std::max_element(sizes.begin(), sizes.end());
  std::mt19937 g(42); std::uniform_real_distribution<float> u(0.5f, 1.5f);
  // STAGGER=1 (default): array k starts k*320 bytes into its allocation, so that the streams do not
  // share their address bits 0-11 (4 KiB aliasing); STAGGER=0: all page-aligned + same offset
  const char* st = std::getenv("STAGGER"); const bool stagger = !st || std::atoi(st);
  int k = 0;
  auto mk = [&] { std::size_t off = stagger ? 80 * k++ : 0;
    float* p = static_cast<float*>(std::aligned_alloc(4096, ((N + off) * 4 + 4095) / 4096 * 4096)) + off;
    for (std::size_t i = 0; i < N; ++i) p[i] = u(g); return Tensor{p, N}; };
  Bufs B{mk(), mk(), mk(), mk(), mk(), mk()};
  std::printf("case,n,variant,chunk,ns_per_elem,GBps\n");
  auto big = [&](auto f) { for (std::size_t n : sizes) f(std::vector<std::size_t>{n}, n >= (1u << 22) ? 9 : 41, n >= (1u << 22) ? 0.0 : 0.0005); };
  big([&](auto s, int r, double m) { bench<1>(B, s, r, m); });
  big([&](auto s, int r, double m) { bench<2>(B, s, r, m); });
  big([&](auto s, int r, double m) { bench<3>(B, s, r, m); });
  big([&](auto s, int r, double m) { bench<4>(B, s, r, m); });
}
