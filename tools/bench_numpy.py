#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""NumPy figures for strata's benchmark cases (same sizes, data and byte counts as
bench/fusion_bench.cpp and bench/reduce_bench.cpp; out= arguments wherever NumPy takes them,
so that no allocation is timed unless the case needs temporaries). Prints JSON on stdout:

    {"numpy": "1.24.2", "benchmarks": [{"name": "numpy_W7b_sum", "real_time_ns": ...,
      "bytes_per_second": ..., "repetitions": 5}, ...]}

Each figure is the median over the repetitions of the mean time a call, each repetition
running for at least --min-time seconds. NumPy runs these on one thread.

    /usr/bin/python3 tools/bench_numpy.py [--min-time 0.5] [--repetitions 5] [--filter REGEX]
"""
import argparse
import json
import os
import re
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from bench_common import measure  # noqa: E402

N = 1 << 24
M = 4096


def filled(shape, base):
    n = int(np.prod(shape))
    return (base + (np.arange(n, dtype=np.int64) % 1000).astype(np.float64) * 1e-3).astype(np.float32).reshape(shape)


def cases():
    """(name, bytes a call, setup returning the call)"""
    def w4():
        a, b, c, out = filled((M, 1), 1), filled((1, M), 2), filled((M, M), 3), np.empty((M, M), np.float32)

        def run():  # two passes: NumPy has no fused multiply-add
            np.multiply(a, b, out=out)
            np.add(out, c, out=out)
        return run

    def w5():
        a, b, out = filled((M, M), 1), filled((M, M), 2), np.empty((M, M), np.float32)
        return lambda: np.add(a.T, b, out=out)

    def p021():
        x, y, out = filled((64, 512, 512), 1), filled((64, 512, 512), 2), np.empty((64, 512, 512), np.float32)
        return lambda: np.add(x.transpose(0, 2, 1), y, out=out)

    def p210():
        x, y, out = filled((64, 512, 512), 1), filled((512, 512, 64), 2), np.empty((512, 512, 64), np.float32)
        return lambda: np.add(x.transpose(2, 1, 0), y, out=out)

    def w10():
        x, out, t = filled((M, 3 * 1024), 1), np.empty((M, 1024), np.float32), np.empty((M, 1024), np.float32)

        def run():
            np.add(x[:, 0::3], x[:, 1::3], out=t)
            np.add(t, x[:, 2::3], out=out)
        return run

    g_shape = (32, 512, 1024)

    def w7a():
        g, out = filled(g_shape, 1), np.empty((1, 512, 1), np.float32)
        return lambda: np.sum(g, axis=(0, 2), keepdims=True, out=out)

    def w7b():
        g, out = filled(g_shape, 1), np.empty((1024,), np.float32)
        return lambda: np.sum(g, axis=(0, 1), out=out)

    def colsum_narrow():
        x, out = filled((N // 64, 64), 1), np.empty((64,), np.float32)
        return lambda: np.sum(x, axis=0, out=out)

    def exp():
        a, out = filled((N,), -2), np.empty((N,), np.float32)
        return lambda: np.exp(a, out=out)

    def w11():
        a, b, c, out = filled((N,), -0.5), filled((N,), -0.5), filled((N,), -0.5), np.empty((N,), np.float32)

        def run():  # eager, as written: exp(-a*a) * tanh(b) + sigmoid(c)
            np.add(np.exp(-a * a) * np.tanh(b), 1.0 / (1.0 + np.exp(-c)), out=out)
        return run

    def rows(fn):
        def setup():
            x, out = filled((1000, 1000), 1), np.empty((1000,), np.float32)
            return lambda: fn(x, axis=1, out=out)
        return setup

    def flat(fn):
        def setup():
            x = filled((N,), 1)
            return lambda: fn(x)
        return setup

    return [
        ("numpy_W4_mul_add", 2 * M * M * 4, w4),
        ("numpy_W5_add", 3 * M * M * 4, w5),
        ("numpy_P021_add", 3 * 64 * 512 * 512 * 4, p021),
        ("numpy_P210_add", 3 * 64 * 512 * 512 * 4, p210),
        ("numpy_W10_one_base", 4 * M * 1024 * 4, w10),
        ("numpy_W7a_sum", 32 * 512 * 1024 * 4, w7a),
        ("numpy_W7b_sum", 32 * 512 * 1024 * 4, w7b),
        ("numpy_colsum_narrow", N * 4, colsum_narrow),
        ("numpy_exp", 2 * N * 4, exp),
        ("numpy_W11", 4 * N * 4, w11),
        ("numpy_sum_rows", 1000 * 1000 * 4, rows(np.sum)),
        ("numpy_amax_rows", 1000 * 1000 * 4, rows(np.max)),
        ("numpy_sum_flat", N * 4, flat(np.sum)),
        ("numpy_amax_flat", N * 4, flat(np.max)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    out = []
    for name, nbytes, setup in cases():
        if args.filter and not re.search(args.filter, name):
            continue
        t = measure(setup(), args.min_time, args.repetitions)
        out.append({"name": name, "real_time_ns": t * 1e9, "bytes_per_second": nbytes / t,
                    "repetitions": args.repetitions})
        print(f"{name}: {t * 1e3:.3f} ms, {nbytes / t / 1e9:.2f} GB/s", file=sys.stderr)
    json.dump({"numpy": np.__version__, "benchmarks": out}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
