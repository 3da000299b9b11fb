#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile time of code that uses strata: builds small translation units three times each
with the flags and module map CMake uses for bench/fusion_bench.cpp (so -O3 -march=native
and the same BMIs) and prints the best and median seconds.

    python3 bench/compile_time.py [build/release]

TUs: `import strata;` alone; one W2 assignment `out.assign((a*b + c*d - e) * 0.5f)`; five
different expressions; a plain loop doing W2 without strata (the floor).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/release")
entry = next(e for e in json.load(open(os.path.join(build, "compile_commands.json")))
             if e["file"].endswith("bench/fusion_bench.cpp"))
args = entry["command"].split()
compiler = args[0]
flags = [a for a in args[1:] if a.startswith(("-D", "-O", "-march", "-std", "@"))]
plain_flags = [a for a in flags if not a.startswith("@")]

HEAD = "import strata;\nusing namespace strata;\n"
W2 = "  out.assign((a * b + c * d - e) * 0.5f);\n"
DECL = ("void f(Tensor<float>& out, const Tensor<float>& a, const Tensor<float>& b,\n"
        "       const Tensor<float>& c, const Tensor<float>& d, const Tensor<float>& e) {\n")
SOURCES = {
    "import only": HEAD + "int main() { return 0; }\n",
    "one expression (W2)": HEAD + DECL + W2 + "}\n",
    "one expression into a fresh tensor (records for autograd)": HEAD + DECL +
    "  out = Tensor<float>((a * b + c * d - e) * 0.5f);\n}\n",
    "five expressions": HEAD + DECL + W2 +
    "  out.assign(exp(-a * a) * tanh(b) + sigmoid(c));\n"
    "  out.assign(where(a > b, a - b, 0.5f * (c + d)));\n"
    "  out.assign(sum(a * b, {0}, true) + e);\n"
    "  out.assign(maximum(a, b) / (abs(c) + 1.0f) - d);\n}\n",
    "plain loop (no strata)": "void f(float* __restrict o, const float* a, const float* b, const float* c,\n"
    "       const float* d, const float* e, long n) {\n"
    "  for (long i = 0; i < n; ++i) o[i] = (a[i] * b[i] + c[i] * d[i] - e[i]) * 0.5f;\n}\n",
}


def compile_once(source, use_modules):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "tu.cpp")
        with open(src, "w") as f:
            f.write(source)
        cmd = [compiler] + (flags if use_modules else plain_flags) + ["-c", src, "-o", os.path.join(tmp, "tu.o")]
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=build, check=True)
        return time.perf_counter() - t0


print(f"compiler: {compiler}; flags: {' '.join(plain_flags)}")
print("| translation unit | best (s) | median of 3 (s) |")
print("|---|---|---|")
for name, source in SOURCES.items():
    times = [compile_once(source, "strata" in source) for _ in range(3)]
    print(f"| {name} | {min(times):.2f} | {statistics.median(times):.2f} |")
