#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs bench/shapes_bench (issue 33's shapes, strata and libtorch in one process) and prints
a Markdown table: per case and thread count, strata's and torch's median wall time over the
rounds and their ratio (strata / torch; below 1: strata is faster), and for the cases that have
one (on one thread, or two), a hand-written loop's median beside them.

    python3 tools/shapes_report.py [build/release] [--rounds 3] [--min-time 0.2] [--filter REGEX]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build/release")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", default="0.2")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    binary = os.path.join(a.build, "bench", "shapes_bench")
    times = {}  # (case, library, threads) -> [ms]
    for _ in range(a.rounds):
        cmd = [binary, f"--benchmark_min_time={a.min_time}", "--benchmark_format=json"]
        if a.filter:
            cmd.append(f"--benchmark_filter={a.filter}")
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        for b in out["benchmarks"]:
            case, lib, threads = b["name"].rsplit("/", 2)[0], None, None
            parts = b["name"].split("/")
            lib = next(p for p in parts if p in ("strata", "torch", "hand"))
            threads = next(p for p in parts if p.startswith("threads:"))[len("threads:"):]
            case = b["name"][: b["name"].index("/" + lib + "/")]
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
            times.setdefault((case, lib, threads), []).append(b["real_time"] * scale)
    print("| case | threads | strata ms | torch ms | strata / torch | hand loop ms |")
    print("|---|---|---|---|---|---|")
    for (case, lib, threads) in sorted(times, key=lambda k: (list(times).index(k))):
        if lib != "strata":
            continue
        s = statistics.median(times[(case, lib, threads)])
        t = times.get((case, "torch", threads))
        h = times.get((case, "hand", threads))
        hand = f"{statistics.median(h):.3f}" if h else ""
        if t:
            tm = statistics.median(t)
            print(f"| `{case}` | {threads} | {s:.3f} | {tm:.3f} | {s / tm:.2f} | {hand} |")
        else:
            print(f"| `{case}` | {threads} | {s:.3f} | n/a | n/a | {hand} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
