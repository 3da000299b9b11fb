# SPDX-License-Identifier: MIT
"""What the Python benchmark scripts (bench_numpy.py, bench_linalg_numpy.py) share."""
import statistics
import time


def measure(run, min_time, repetitions):
    """The median over `repetitions` of the mean wall time a call of run(), each repetition
    running for at least min_time seconds (after one warm-up call: the first touch of fresh
    memory is not what we measure)."""
    run()
    means = []
    for _ in range(repetitions):
        calls, start = 0, time.perf_counter()
        while True:
            run()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        means.append(elapsed / calls)
    return statistics.median(means)
