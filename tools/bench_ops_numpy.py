#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""NumPy figures for issue 11's operator benchmarks (bench/ops_bench.cpp: the same sizes, data
and byte counts): softmax and log_softmax over the rows of [4096, 1000] f32 (as a NumPy user
writes them, each step an array pass into preallocated arrays), var over dim 1 and dim 0 of
[4096, 4096] (np.var, ddof=1) and argmax over dim 1 of [4096, 4096]. NumPy's loops run on
one thread.

    /usr/bin/python3 tools/bench_ops_numpy.py [--min-time 0.5] [--repetitions 5]
                                              [--format lines|human]

--format lines (what ops_bench reads) prints "name cpu_ns bytes" a figure; a human-readable
line per figure goes to stderr either way. Each figure is the median over the repetitions of
the mean CPU time a call (this thread's clock, as ops_bench's figures: NumPy runs these on
the calling thread, and on a machine shared with other jobs wall time measures the others).
"""
import argparse
import statistics
import sys
import time

import numpy as np

SR, SC = 4096, 1000
M = 4096
SOFTMAX_BYTES = 2 * SR * SC * 4
VAR_BYTES = (M * M + M) * 4
ARGMAX_BYTES = M * M * 4 + M * 8


def cpu_seconds(run, min_time, repetitions):
    """Median over repetitions of the CPU seconds a call, each repetition calling run() for
    at least min_time CPU seconds, after one warm-up call."""
    run()

    def repetition():
        calls, start = 0, time.thread_time()
        while not calls or time.thread_time() - start < min_time:
            run()
            calls += 1
        return (time.thread_time() - start) / calls
    return statistics.median(repetition() for _ in range(repetitions))


def filled(shape, base, step):
    """base + (i % 1000) * step, as ops_bench fills its operands."""
    n = int(np.prod(shape))
    return (base + (np.arange(n, dtype=np.int64) % 1000).astype(np.float64) * step).astype(np.float32).reshape(shape)


def scrambled(shape):
    """(i * 7919 % 10007) * 1e-4 - 0.5: distinct values within each row of 4096."""
    n = int(np.prod(shape))
    return ((np.arange(n, dtype=np.int64) * 7919 % 10007).astype(np.float64) * 1e-4 - 0.5).astype(np.float32).reshape(shape)


def softmax_case(log):
    x = filled((SR, SC), -2, 4e-3)
    y, t = np.empty_like(x), np.empty_like(x)
    m, s = np.empty((SR, 1), np.float32), np.empty((SR, 1), np.float32)

    def softmax():
        np.max(x, axis=1, keepdims=True, out=m)
        np.subtract(x, m, out=y)
        np.exp(y, out=y)
        np.sum(y, axis=1, keepdims=True, out=s)
        np.divide(y, s, out=y)

    def log_softmax():
        np.max(x, axis=1, keepdims=True, out=m)
        np.subtract(x, m, out=y)
        np.exp(y, out=t)
        np.sum(t, axis=1, keepdims=True, out=s)
        np.log(s, out=s)
        np.subtract(y, s, out=y)
    return (log_softmax if log else softmax), x, y


def check():
    """The softmax loops compute softmax (against float64)."""
    for log in (False, True):
        run, x, y = softmax_case(log)
        run()
        d = x.astype(np.float64) - x.max(axis=1, keepdims=True)
        ls = np.log(np.exp(d).sum(axis=1, keepdims=True))
        ref = d - ls if log else np.exp(d - ls)
        assert np.allclose(y, ref, rtol=1e-5, atol=1e-6), "log_softmax" if log else "softmax"


def cases():
    """(name, bytes, setup -> call)"""
    def var(dim):
        def setup():
            x = filled((M, M), 1, 1e-3)
            return lambda: np.var(x, axis=dim, ddof=1)
        return setup

    def argmax():
        x, out = scrambled((M, M)), np.empty(M, np.int64)
        return lambda: np.argmax(x, axis=1, out=out)
    return [("numpy_SM", SOFTMAX_BYTES, lambda: softmax_case(False)[0]),
            ("numpy_LSM", SOFTMAX_BYTES, lambda: softmax_case(True)[0]),
            ("numpy_VR", VAR_BYTES, var(1)),
            ("numpy_VC", VAR_BYTES, var(0)),
            ("numpy_AM", ARGMAX_BYTES, argmax)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--format", choices=("lines", "human"), default="lines")
    args = ap.parse_args()
    check()
    for name, nbytes, setup in cases():
        secs = cpu_seconds(setup(), args.min_time, max(args.repetitions, 1))
        print(f"{name:12s} {secs * 1e3:9.3f} ms {nbytes / secs / 1e9:8.2f} GB/s CPU time (NumPy {np.__version__})", file=sys.stderr)
        if args.format == "lines":
            print(f"{name} {secs * 1e9:.1f} {nbytes}", flush=True)


if __name__ == "__main__":
    main()
