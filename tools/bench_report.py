#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs strata's benchmarks and prints Markdown: one table per case (every strata variant,
every hand-written loop, the libtorch and NumPy figures, each with its ratio to the best hand
loop), the case's targets, and a summary table.

    python3 tools/bench_report.py [build/release] [--min-time 0.5] [--repetitions 5] [--rounds 1]
                                  [--filter REGEX] [--no-torch] [--no-numpy] [--json FILE]

Binaries run: fusion_bench, reduce_bench and, when built (CMake found Torch), torch_bench;
tools/bench_numpy.py runs when /usr/bin/python3 (--python) imports numpy. bench/
hand_kernels_check runs first, when built: a baseline that computes the wrong thing stops
the report. With --repetitions R > 1 (the default is 5) every figure is the median of R
repetitions and `cv` is the coefficient of variation of its time; with --rounds N > 1 the
binaries run N times in turn and each figure is the median over the rounds (cv: the larger of
its variation across the rounds and within them). GB/s come from the
binaries' byte counts (every element read or written counted once); single-thread cases
are timed on the benchmark thread's CPU clock (Google Benchmark's default), cases marked
real_time and NumPy's on the wall clock.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HAND = "best hand"
NOISY_CV = 0.10  # a ratio whose operands vary more than this between repetitions is marked noisy


class Case:
    def __init__(self, key, title, strata, hand=(), lib=(), info=(), targets=(), headline=None, headline_lib=None,
                 headline_hand=None):
        self.key, self.title = key, title
        self.strata, self.hand, self.lib, self.info = list(strata), list(hand), list(lib), list(info)
        self.targets = list(targets)  # (benchmark, reference, ratio): reference a name, HAND, or ("max_ms", x)
        self.headline = headline or self.strata[0]
        self.headline_lib = headline_lib  # the library figures comparable with the headline (default: all)
        self.headline_hand = headline_hand  # the hand loops comparable with the headline (default: all)


def T(name, ref, ratio, note=""):
    return (name, ref, ratio, note)


RT = "/real_time"
ROW_OPS = ("amax", "amin", "prod", "all", "any")
CASES = [
    Case("W1", "out = a + b * c, 2^24 f32", ["W1_strata_assign", "W1_strata_eval", "W1_op_by_op"], ["W1_hand"],
         targets=[T("W1_strata_assign", HAND, 0.9)]),
    Case("W2", "out = (a*b + c*d - e) * 0.5, 2^24 f32",
         ["W2_strata_assign/1" + RT, "W2_strata_assign/2" + RT, "W2_strata_eval", "W2_op_by_op"], ["W2_hand"],
         targets=[T("W2_strata_assign/1" + RT, HAND, 0.9), T("W2_strata_assign/1" + RT, "W2_op_by_op", 5.0)]),
    Case("W3", "out = A[M,M] + row[M], M = 4096", ["W3_strata"], ["W3_hand", "W3_hand_rows4"], targets=[T("W3_strata", HAND, 0.9)]),
    Case("W4", "out = col[M,1] * row[1,M] + A[M,M], M = 4096", ["W4_strata"],
         ["W4_hand", "W4_hand_simd", "W4_hand_rows4"], ["torch_W4_addcmul", "numpy_W4_mul_add"],
         targets=[T("W4_strata", HAND, 0.9)]),
    Case("W5", "out = A.t() + B, 4096x4096 f32", ["W5_strata"],
         ["W5_hand_avx512_16x16_prefetch", "W5_hand_avx512_16x16", "W5_hand_avx_8x8", "W5_hand_blocked", "W5_hand_naive"],
         ["torch_W5_add_out", "numpy_W5_add"], targets=[T("W5_strata", HAND, 0.75)]),
    Case("P021", "out = x.permute({0,2,1}) + y, x [64,512,512] f32", ["P021_strata"], ["P021_hand_prefetch", "P021_hand"],
         ["torch_P021_add_out", "numpy_P021_add"], targets=[T("P021_strata", HAND, 0.75)]),
    Case("P210", "out = x.permute({2,1,0}) + y, x [64,512,512] f32", ["P210_strata"], ["P210_hand_prefetch", "P210_hand"],
         ["torch_P210_add_out", "numpy_P210_add"], targets=[T("P210_strata", HAND, 0.75)]),
    Case("W6a", "out(f32) = a(i32) + b(f32), 2^24", ["W6_int_float_strata"], ["W6_int_float_hand"],
         targets=[T("W6_int_float_strata", HAND, 0.9)]),
    Case("W6b", "out(f64) = a(f32) * b(f64), 2^24", ["W6_float_double_strata"], ["W6_float_double_hand"],
         targets=[T("W6_float_double_strata", HAND, 0.9)]),
    Case("W7a", "sum_to(g[32,512,1024], {512,1})", ["W7a_strata"], ["W7a_hand", "W7a_hand_vec", "W7a_hand_rows4"],
         ["torch_W7a_sum", "numpy_W7a_sum"], targets=[T("W7a_strata", HAND, 0.9)]),
    Case("W7b", "sum_to(g[32,512,1024], {1024})", ["W7b_strata"], ["W7b_hand", "W7b_hand_rows8", "W7b_hand_stripe"],
         ["torch_W7b_sum", "numpy_W7b_sum"],
         targets=[T("W7b_strata", HAND, 0.9, "the row-blocked loops"), T("W7b_strata", "numpy_W7b_sum", 1.0)]),
    Case("W8", "sum((a - b)^2), 2^24 f32", ["W8_strata", "W8_materialise"], ["W8_hand"],
         targets=[T("W8_strata", HAND, 0.9), T("W8_strata", "W8_materialise", 5.0)]),
    Case("W9", "out = x[:, 0::2] + x[:, 1::2], x [4096,4096]", ["W9_strata"], ["W9_hand"],
         targets=[T("W9_strata", HAND, 0.9)]),
    Case("W10a", "three strided operands of one base: x[:,0::3] + x[:,1::3] + x[:,2::3], x [4096,3072]",
         ["W10_one_base_strata"], ["W10_one_base_hand", "W10_one_base_hand_plain"],
         ["torch_W10_one_base", "numpy_W10_one_base"], targets=[T("W10_one_base_strata", HAND, 0.9)]),
    Case("W10b", "three strided operands, three bases: a[:,0::3] + b[:,1::3] + c[:,2::3], each [4096,3072]",
         ["W10_three_bases_strata"], ["W10_three_bases_hand"], targets=[T("W10_three_bases_strata", HAND, 0.9)]),
    Case("W10c", "W10b on 32 rows (in L2/L3): the engine's cost without DRAM's noise; no target",
         ["W10_cached_strata"], ["W10_cached_hand"]),
    Case("exp", "out.assign(exp(a)), 2^24 f32", ["exp_strata"], ["exp_hand_libm", "exp_hand_libmvec"],
         ["torch_exp_out", "numpy_exp"], info=["copy_hand"], targets=[T("exp_strata", "torch_exp_out", 1.0)]),
    Case("W11", "out = exp(-a*a) * tanh(b) + sigmoid(c), 2^24 f32", ["W11_strata"],
         ["W11_hand_libm", "W11_hand_libmvec"], ["torch_W11", "numpy_W11"],
         targets=[T("W11_strata", ("max_ms", 226 / 5), None, "5x faster than the 226 ms measured before")]),
    Case("rows", "sum/amax/amin/prod/all/any(x, {1}), x [1000,1000] f32, 1 and 2 threads",
         [f"{op}_rows_strata/{t}{RT}" for op in ("sum",) + ROW_OPS for t in (1, 2)],
         ["rowsum_hand_1000", "rowmax_hand", "rowmax_hand_plain"],
         ["torch_amax_rows/1" + RT, "torch_amax_rows/2" + RT, "torch_sum_rows/1" + RT, "torch_sum_rows/2" + RT,
          "numpy_amax_rows", "numpy_sum_rows"],
         targets=[T(f"{op}_rows_strata/{t}{RT}", f"sum_rows_strata/{t}{RT}", 0.9) for op in ROW_OPS for t in (1, 2)]
         + [T(f"amax_rows_strata/{t}{RT}", f"torch_amax_rows/{t}{RT}", 1.0) for t in (1, 2)],
         headline="amax_rows_strata/1" + RT, headline_lib=["torch_amax_rows/1" + RT, "numpy_amax_rows"],
         headline_hand=["rowmax_hand", "rowmax_hand_plain"]),
    Case("flat", "sum/amax/amin/prod/all/any(x) over all of 2^24 f32", [f"{op}_flat_strata" for op in ("sum",) + ROW_OPS],
         ["sum_flat_hand", "max_flat_hand"], ["torch_sum_flat", "torch_amax_flat", "numpy_sum_flat", "numpy_amax_flat"],
         targets=[T(f"{op}_flat_strata", "sum_flat_strata", 0.9) for op in ROW_OPS],
         headline="amax_flat_strata", headline_lib=["torch_amax_flat", "numpy_amax_flat"],
         headline_hand=["max_flat_hand"]),
    Case("rowcol", "mean(x, {1}) and sum(x, {0}), x [4096,4096]", ["rowmean_strata", "colsum_strata"],
         ["rowsum_hand", "colsum_hand"], targets=[T("colsum_strata", "rowmean_strata", 0.8)],
         headline="colsum_strata", headline_hand=["colsum_hand"]),
    Case("colnarrow", "sum(x, {0}), x [2^18, 64] f32 (rows of 256 bytes)", ["colsum_narrow_strata"],
         ["colsum_narrow_hand"], ["torch_colsum_narrow", "numpy_colsum_narrow"]),
    Case("Wsmall", "(a + b) * c - a over 100 floats, built and assigned each time",
         ["Wsmall_strata", "Wsmall_build_only", "Wsmall_assign_only", "Wsmall_tensor_copy"], ["Wsmall_hand"],
         targets=[T("Wsmall_strata", ("max_ns", 300), None)]),
]
LIB_NAMES = {"torch": "libtorch", "numpy": "NumPy"}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build/release")
    ap.add_argument("--min-time", default="0.5", help="seconds a benchmark (a repetition) runs at least")
    ap.add_argument("--repetitions", type=int, default=5, help="medians of this many repetitions (1: single runs)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every binary this many times, one after the other in turn, and take each figure's "
                         "median over the rounds (a process's memory placement can move a case by 30%%)")
    ap.add_argument("--filter", default="", help="regex: only benchmarks whose names match")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-numpy", action="store_true")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python with NumPy")
    ap.add_argument("--json", help="also write every figure to this file")
    ap.add_argument("--from-json", help="print the report from a file written by --json (runs nothing)")
    return ap.parse_args()


def run_binary(path, args):
    cmd = [path, f"--benchmark_min_time={args.min_time}", "--benchmark_format=json"]
    if args.repetitions > 1:
        cmd += [f"--benchmark_repetitions={args.repetitions}", "--benchmark_report_aggregates_only=true"]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    print(f"running {' '.join(cmd)}", file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    if not out.strip():  # --filter matched none of this binary's benchmarks
        return {}, {}
    data = json.loads(out)
    to_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    by_run = {}
    for b in data["benchmarks"]:
        run = b.get("run_name", b["name"])
        kind = b.get("aggregate_name", "") if b.get("run_type") == "aggregate" else "single"
        by_run.setdefault(run, {})[kind] = b
    res = {}
    for run, kinds in by_run.items():
        b = kinds.get("median") or kinds.get("single")
        if b is None:
            continue
        scale = to_ns[b.get("time_unit", "ns")]
        real = run.endswith(RT)
        t = (b["real_time"] if real else b["cpu_time"]) * scale
        cv = None
        if "mean" in kinds and "stddev" in kinds:
            m = kinds["mean"]["real_time" if real else "cpu_time"]
            cv = kinds["stddev"]["real_time" if real else "cpu_time"] / m if m else None
        res[run] = {"time_ns": t, "gbps": b["bytes_per_second"] / 1e9 if "bytes_per_second" in b else None, "cv": cv}
    return res, data.get("context", {})


def run_numpy(args):
    try:
        subprocess.run([args.python, "-c", "import numpy"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        print(f"no NumPy in {args.python}: NumPy figures skipped", file=sys.stderr)
        return {}, None
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_numpy.py")
    cmd = [args.python, script, "--min-time", str(args.min_time), "--repetitions", str(max(args.repetitions, 1))]
    if args.filter:
        cmd += ["--filter", args.filter]
    print(f"running {' '.join(cmd)}", file=sys.stderr)
    data = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return {b["name"]: {"time_ns": b["real_time_ns"], "gbps": b["bytes_per_second"] / 1e9, "cv": None}
            for b in data["benchmarks"]}, data.get("numpy")


def combine_rounds(rounds):
    """Each figure's median over the rounds that measured it; cv is then its time's variation
    across the rounds (the larger of that and the within-round cv)."""
    out = {}
    for name in rounds[0]:
        got = [r[name] for r in rounds if name in r]
        times = [g["time_ns"] for g in got]
        gbps = [g["gbps"] for g in got if g["gbps"] is not None]
        spread = statistics.stdev(times) / statistics.mean(times) if len(times) > 1 else None
        cvs = [c for c in [spread] + [g.get("cv") for g in got] if c is not None]
        out[name] = {"time_ns": statistics.median(times), "gbps": statistics.median(gbps) if gbps else None,
                     "cv": max(cvs) if cvs else None}
    return out


def collect(args):
    if args.rounds > 1:
        rounds, meta = [], None
        for k in range(args.rounds):
            print(f"round {k + 1} of {args.rounds}", file=sys.stderr)
            r, meta = collect_once(args)
            rounds.append(r)
        meta["rounds"] = args.rounds
        return combine_rounds(rounds), meta
    return collect_once(args)


def collect_once(args):
    bench = os.path.join(args.build, "bench")
    check = os.path.join(bench, "hand_kernels_check")
    if os.path.exists(check):
        r = subprocess.run([check], capture_output=True, text=True)
        print(r.stdout.strip(), file=sys.stderr)
        if r.returncode != 0:
            sys.exit("hand_kernels_check failed: the hand-written baselines compute the wrong thing")
    results, meta = {}, {"repetitions": args.repetitions, "min_time": args.min_time}
    binaries = ["fusion_bench", "reduce_bench"] + ([] if args.no_torch else ["torch_bench"])
    for binary in binaries:
        path = os.path.join(bench, binary)
        if not os.path.exists(path):
            print(f"{path} not built: skipped", file=sys.stderr)
            continue
        r, ctx = run_binary(path, args)
        results.update(r)
        meta.setdefault("context", ctx)
    if not args.no_numpy:
        r, version = run_numpy(args)
        results.update(r)
        meta["numpy"] = version
    return results, meta


def fmt_time(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} us"
    return f"{ns / 1e6:.2f} ms"


def fmt_gbps(g):
    return "" if g is None else f"{g:.2f}"


def speed_ratio(res, a, b):
    """How many times faster a is than b (GB/s when both have it, else time)."""
    ra, rb = res[a], res[b]
    if ra["gbps"] is not None and rb["gbps"] is not None:
        return ra["gbps"] / rb["gbps"]
    return rb["time_ns"] / ra["time_ns"]


def lib_label(name):
    return LIB_NAMES.get(name.split("_", 1)[0], "library")


def best_of(res, names):
    names = [n for n in names if n in res]
    if not names:
        return None
    return max(names, key=lambda n: (res[n]["gbps"] or 0.0, -res[n]["time_ns"]))


def check_target(res, case, tgt):
    name, ref, ratio, note = tgt
    if name not in res:
        return None
    if isinstance(ref, tuple):
        kind, limit = ref
        t = res[name]["time_ns"]
        limit_ns = limit * (1e6 if kind == "max_ms" else 1.0)
        ok = t <= limit_ns
        return (f"{name} time", fmt_time(t), f"<= {fmt_time(limit_ns)}" + (f" ({note})" if note else ""), ok)
    ref_name = best_of(res, case.hand) if ref == HAND else ref
    if ref_name is None or ref_name not in res:
        return (f"{name} / {ref if ref != HAND else 'best hand loop'}", "n/a (not measured)", f">= {ratio}x", None)
    r = speed_ratio(res, name, ref_name)
    label = f"{name} / {ref_name}" + (" (best hand loop)" if ref == HAND else "")
    cvs = [res[n].get("cv") for n in (name, ref_name) if res[n].get("cv") is not None]
    noisy = f" (noisy: cv {100 * max(cvs):.0f}%)" if cvs and max(cvs) > NOISY_CV else ""
    return (label, f"{r:.2f}x{noisy}", f">= {ratio}x" + (f" ({note})" if note else ""), r >= ratio)


def report(res, meta):
    ctx = meta.get("context") or {}
    lines = []
    rounds = f", then the median over {meta['rounds']} rounds of separate runs" if meta.get("rounds") else ""
    lines.append(f"Figures: medians of {meta.get('repetitions')} repetitions{rounds}, --min-time {meta.get('min_time')} s"
                 + (f"; {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz" if ctx else "")
                 + (f"; load average {', '.join(f'{x:.2f}' for x in ctx['load_avg'])} when the last binary started"
                    if ctx.get("load_avg") else "")
                 + (f"; NumPy {meta['numpy']}" if meta.get("numpy") else "") + ".")
    lines.append("")
    summary = []
    for case in CASES:
        present = [n for n in case.strata + case.hand + case.lib + case.info if n in res]
        if not present:
            continue
        best_hand = best_of(res, case.hand)
        lines.append(f"### {case.key}: {case.title}")
        lines.append("")
        lines.append("| | benchmark | GB/s | time | cv | vs best hand |")
        lines.append("|---|---|---|---|---|---|")

        def row(role, n):
            r = res[n]
            vs = f"{speed_ratio(res, n, best_hand):.2f}x" if best_hand else ""
            cv = f"{100 * r['cv']:.1f}%" if r.get("cv") is not None else ""
            lines.append(f"| {role} | {n} | {fmt_gbps(r['gbps'])} | {fmt_time(r['time_ns'])} | {cv} | {vs} |")

        for n in case.strata:
            if n in res:
                row("strata", n)
        for n in case.hand:
            if n in res:
                row("hand (best)" if n == best_hand else "hand", n)
        for n in case.lib:
            if n in res:
                row(lib_label(n), n)
        for n in case.info:
            if n in res:
                row("for scale", n)
        lines.append("")
        checks = [c for c in (check_target(res, case, t) for t in case.targets) if c]
        if checks:
            lines.append("| target | measured | wanted | |")
            lines.append("|---|---|---|---|")
            for label, measured, wanted, ok in checks:
                lines.append(f"| {label} | {measured} | {wanted} | {'n/a' if ok is None else ('ok' if ok else 'MISSED')} |")
            lines.append("")
        head = case.headline
        libs = case.headline_lib if case.headline_lib is not None else case.lib
        best_lib = best_of(res, libs)
        head_hand = best_of(res, case.headline_hand) if case.headline_hand is not None else best_hand
        if head in res:
            summary.append((case, head, head_hand, best_lib, checks))
    lines.append("### Summary")
    lines.append("")
    lines.append("| case | strata | GB/s (time) | best hand loop | GB/s (time) | strata / hand | targets | best library | GB/s (time) | strata / library |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")

    def fig(n):
        r = res[n]
        return (f"{r['gbps']:.2f} " if r["gbps"] is not None else "") + f"({fmt_time(r['time_ns'])})"

    for case, head, best_hand, best_lib, checks in summary:
        ok = [c[3] for c in checks if c[3] is not None]
        status = "" if not ok else f"{sum(ok)}/{len(ok)} ok" + ("" if all(ok) else " (MISSED)")
        lines.append(
            f"| {case.key} | {head} | {fig(head)} | {best_hand or ''} | {fig(best_hand) if best_hand else ''} | "
            f"{f'{speed_ratio(res, head, best_hand):.2f}x' if best_hand else ''} | {status} | "
            f"{f'{lib_label(best_lib)} {best_lib}' if best_lib else ''} | {fig(best_lib) if best_lib else ''} | "
            f"{f'{speed_ratio(res, head, best_lib):.2f}x' if best_lib else ''} |")
    return "\n".join(lines)


def main():
    args = parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        res, meta = saved["results"], saved["meta"]
    else:
        res, meta = collect(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": res, "meta": meta}, f, indent=1)
    print(report(res, meta))


if __name__ == "__main__":
    main()
