#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate compile-time test TUs: ct/<route>_<K>.cpp with K distinct expressions."""
import random, os
here = os.path.dirname(os.path.abspath(__file__))
def gen(rng, depth):
    if depth == 0 or (depth < 3 and rng.random() < 0.3):
        return rng.choice('abcde') if rng.random() < 0.85 else rng.choice(['0.5f', '2.0f', '0.25f', '1.0f'])
    if rng.random() < 0.08:
        return f"where({gen(rng, 0)} > {gen(rng, 0)}, {gen(rng, depth-1)}, {gen(rng, depth-1)})"
    l, r = gen(rng, depth - 1), gen(rng, depth - 1)
    if l[0].isdigit() and r[0].isdigit(): r = rng.choice('abcde')
    return f"({l} {rng.choice('+-*/')} {r})"
def shape(s): return ''.join('L' if ch in 'abcde' else ch for ch in s)
rng = random.Random(7); exprs = ['(a * b + c * d - e) * 0.5f']; seen = {shape(exprs[0])}   # W2 first
while len(exprs) < 40:
    e = gen(rng, rng.choice([3, 3, 4]))
    if not e.startswith('(') or shape(e) in seen or e.count('where') > 1: continue
    seen.add(shape(e)); exprs.append(e)
for route, hdr in (('a', 'route_a.hpp'), ('b', 'route_b.hpp')):
    for K in (0, 1, 10, 40):
        with open(f'{here}/{route}_{K}.cpp', 'w') as f:
            f.write(f'#include "../{hdr}"\nusing namespace sx;\n')
            for k, e in enumerate(exprs[:K]):
                f.write(f'void f{k}(Tensor& o, const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d, const Tensor& e) {{ {route}::assign(o, {e}); }}\n')
# correctness check of the lowering: every expression through route A and route B (all option sets)
with open(f'{here}/check.cpp', 'w') as f:
    f.write('#include "../route_a.hpp"\n#include "../route_b.hpp"\n#include <cmath>\n#include <cstdio>\n#include <random>\n#include <vector>\nusing namespace sx;\n')
    f.write('int main() {\n  const std::size_t n = 3001; std::mt19937 g(1); std::uniform_real_distribution<float> u(0.5f, 1.5f);\n')
    f.write('  std::vector<float> v[7]; for (auto& x : v) { x.resize(n); for (auto& y : x) y = u(g); }\n')
    f.write('  Tensor a{v[0].data(), n}, b{v[1].data(), n}, c{v[2].data(), n}, d{v[3].data(), n}, e{v[4].data(), n}, oa{v[5].data(), n}, ob{v[6].data(), n};\n  int bad = 0;\n')
    f.write('  auto cmp = [&](int k, int o) { for (std::size_t i = 0; i < n; ++i) { float x = oa.p[i], y = ob.p[i];\n'
            '      if (!(std::fabs(x - y) <= 1e-4f * (1 + std::fabs(x))) && !(std::isnan(x) && std::isnan(y)) && x != y) { std::printf("expr %d opts %d i=%zu A=%g B=%g\\n", k, o, i, x, y); ++bad; return; } } };\n')
    for k, e in enumerate(exprs):
        f.write(f'  a::assign(oa, {e});\n')
        for o, opts in enumerate(['{0, false, false, 256}', '{0, true, false, 512}', '{1, false, true, 1024}', '{2, false, true, 1000}']):
            f.write(f'  b::assign<b::Opts{opts}>(ob, {e}); cmp({k}, {o});\n')
    f.write('  std::printf("%d mismatches over %d expressions x 4 option sets\\n", bad, ' + str(len(exprs)) + ');\n  return bad != 0;\n}\n')
