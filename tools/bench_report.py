#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs strata's benchmarks once and prints a Markdown table: GB/s of every case and its
ratio to the hand-written loop (or the baseline) measured in the same run.

    python3 tools/bench_report.py [build/release] [--min-time 0.5]
"""
import json
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "build/release"
min_time = "0.5"
if "--min-time" in sys.argv:
    min_time = sys.argv[sys.argv.index("--min-time") + 1]

# (case, reference it is compared with, target ratio or None)
PAIRS = [
    ("W1_strata_assign", "W1_hand", 0.9), ("W1_strata_eval", "W1_hand", None),
    ("W1_op_by_op", "W1_hand", None),
    ("W2_strata_assign/1/real_time", "W2_hand", 0.9), ("W2_strata_assign/2/real_time", "W2_hand", None),
    ("W2_strata_eval", "W2_hand", None), ("W2_op_by_op", "W2_hand", None),
    ("W2_strata_assign/1/real_time", "W2_op_by_op", 5.0),
    ("W3_strata", "W3_hand", 0.9), ("W4_strata", "W4_hand", 0.9),
    ("W5_strata", "W5_hand_blocked", 0.75), ("W5_hand_naive", "W5_hand_blocked", None),
    ("W6_int_float_strata", "W6_int_float_hand", 0.9), ("W6_float_double_strata", "W6_float_double_hand", 0.9),
    ("W9_strata", "W9_hand", 0.9),
    ("W8_strata", "W8_hand", 0.9), ("W8_strata", "W8_materialise", 5.0),
    ("W7a_strata", "W7a_hand", 0.9), ("W7b_strata", "W7b_hand", 0.9),
    ("rowmean_strata", "rowsum_hand", None), ("colsum_strata", "colsum_hand", None),
    ("colsum_strata", "rowmean_strata", 0.8),
]


def run(binary):
    out = subprocess.run([f"{build}/bench/{binary}", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], check=True, capture_output=True, text=True).stdout
    return {b["name"]: b for b in json.loads(out)["benchmarks"]}


results = {}
for binary in ("fusion_bench", "reduce_bench"):
    results.update(run(binary))


def speed(name):  # GB/s, or ns per iteration for cases without a byte count
    b = results[name]
    if "bytes_per_second" in b:
        return b["bytes_per_second"] / 1e9, "GB/s"
    return b["real_time"], b["time_unit"]


print("| case | speed | reference | speed | ratio | target |")
print("|---|---|---|---|---|---|")
for case, ref, target in PAIRS:
    if case not in results or ref not in results:
        continue
    (a, unit), (b, _) = speed(case), speed(ref)
    ratio = a / b if unit == "GB/s" else b / a
    mark = "" if target is None else (f">= {target}" + (" ok" if ratio >= target else " MISSED"))
    print(f"| {case} | {a:.2f} {unit} | {ref} | {b:.2f} {unit} | {ratio:.2f}x | {mark} |")
for name in ("Wsmall_strata", "Wsmall_build_only", "Wsmall_assign_only", "Wsmall_hand"):
    if name in results:
        print(f"| {name} | {results[name]['real_time']:.0f} ns per assignment | | | | {'< 300 ns' if name == 'Wsmall_strata' else ''} |")
