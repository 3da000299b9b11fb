#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""NumPy and PyTorch figures for strata.linalg's benchmark cases (bench/linalg_bench.cpp: the
same sizes, data, layouts and work counts), on the OpenBLAS both of them load here. Threads:
each figure is taken with 1 and 2 threads where the case has a 2-thread variant (OpenBLAS's
count set through openblas_set_num_threads in the loaded library, PyTorch's own through
torch.set_num_threads); NumPy's einsum loops themselves always run on one thread.

    /usr/bin/python3 tools/bench_linalg_numpy.py [--min-time 0.5] [--repetitions 3]
                                                 [--filter REGEX] [--format json|lines]

--format json (the default) prints {"numpy": ..., "torch": ..., "openblas": ..., "benchmarks":
[{"name", "real_time_ns", "work", "unit", "repetitions"}]}; --format lines prints one line a
figure, "name real_time_ns work is_bytes" (what linalg_bench reads). A human-readable line per
figure goes to stderr. Each figure is the median over the repetitions of the mean wall time a
call, each repetition running for at least --min-time seconds. --filter matches the names
(numpy_matmul_f32_nn/1, torch_bilinear_einsum/2, ...) or the same name without its library
prefix, so linalg_bench's own filter can be passed on.

Names: numpy_/torch_ + matmul_{f32,f64}_{nn,ta,tb,ld,s2}, bmm_matmul, bmm_einsum (torch: bmm,
bmm_einsum), dot_einsum, dot_vdot (torch: dot), outer_einsum, outer, bilinear_einsum
(optimize=True: the path searched every call, as a user writes it), bilinear_einsum_path
(NumPy: the same greedy path searched once, passed in) + /threads.
"""
import argparse
import ctypes
import json
import re
import sys

import numpy as np
from bench_common import measure

try:
    import torch
except ImportError:  # NumPy figures only
    torch = None

GM = GN = GK = 2048
BB, BI, BK, BJ = 64, 256, 256, 256
DN = 4096
OM = 4096
QB, QA, QN, QM = 256, 64, 256, 256

GEMM_FLOP = 2.0 * GM * GN * GK
BMM_FLOP = 2.0 * BB * BI * BK * BJ
DOT_BYTES = 2.0 * DN * DN * 4
OUTER_BYTES = (1.0 * OM * OM + 2.0 * OM) * 4
BILINEAR_FLOP = 2.0 * QB * QA * QN * QM + 2.0 * QB * QA * QN


def openblas():
    """The OpenBLAS NumPy (and PyTorch) loaded: found in this process's mappings."""
    paths = []
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if ("blas" in p or "openblas" in p) and p.startswith("/") and p not in paths:
                paths.append(p)
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        if hasattr(lib, "openblas_set_num_threads"):
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            return lib
    return None


BLAS = openblas()


def set_threads(n):
    if BLAS is not None:
        BLAS.openblas_set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def filled(shape, base=-0.5, dtype=np.float32):
    """base + (i % 1000) * 1e-3, as linalg_bench fills its operands."""
    n = int(np.prod(shape))
    return (base + (np.arange(n, dtype=np.int64) % 1000).astype(np.float64) * 1e-3).astype(dtype).reshape(shape)


def matmul_operands(layout, dtype):
    """a [M,K] and b [K,N] as views in the benchmark's layout (NumPy arrays)."""
    b = filled((GK, GN), -0.3, dtype)
    if layout == "nn":
        a = filled((GM, GK), -0.5, dtype)
    elif layout == "ta":
        a = filled((GK, GM), -0.5, dtype).T
    elif layout == "tb":
        a, b = filled((GM, GK), -0.5, dtype), filled((GN, GK), -0.3, dtype).T
    elif layout == "ld":
        a = filled((GM, 2 * GK), -0.5, dtype)[:, :GK]
    else:  # s2
        a = filled((GM, 2 * GK), -0.5, dtype)[:, ::2]
    return a, b


def cases():
    """(name without library and threads, library, thread counts, work, is_bytes, setup -> call)"""
    out = []
    for dt, dtype in (("f32", np.float32), ("f64", np.float64)):
        for layout in ("nn", "ta", "tb", "ld", "s2"):
            def np_mm(layout=layout, dtype=dtype):
                a, b = matmul_operands(layout, dtype)
                c = np.empty((GM, GN), dtype)
                # np.dot: BLAS for every layout here (it copies what BLAS cannot take); np.matmul
                # would run its naive loop on the stride-2 slice.
                return lambda: np.dot(a, b, out=c)

            def torch_mm(layout=layout, dtype=dtype):
                a, b = (torch.from_numpy(x) for x in matmul_operands(layout, dtype))  # the same strides
                c = torch.empty((GM, GN), dtype=a.dtype)
                return lambda: torch.mm(a, b, out=c)
            out.append((f"matmul_{dt}_{layout}", "numpy", (1, 2), GEMM_FLOP, False, np_mm))
            out.append((f"matmul_{dt}_{layout}", "torch", (1, 2), GEMM_FLOP, False, torch_mm))

    def bmm_np():
        a, b, c = filled((BB, BI, BK)), filled((BB, BK, BJ), -0.3), np.empty((BB, BI, BJ), np.float32)
        return lambda: np.matmul(a, b, out=c)

    def bmm_np_einsum():
        a, b, c = filled((BB, BI, BK)), filled((BB, BK, BJ), -0.3), np.empty((BB, BI, BJ), np.float32)
        return lambda: np.einsum("bik,bkj->bij", a, b, out=c, optimize=True)

    def bmm_torch():
        a, b = torch.from_numpy(filled((BB, BI, BK))), torch.from_numpy(filled((BB, BK, BJ), -0.3))
        c = torch.empty((BB, BI, BJ))
        return lambda: torch.bmm(a, b, out=c)

    def bmm_torch_einsum():
        a, b = torch.from_numpy(filled((BB, BI, BK))), torch.from_numpy(filled((BB, BK, BJ), -0.3))
        return lambda: torch.einsum("bik,bkj->bij", a, b)
    out += [("bmm_matmul", "numpy", (1, 2), BMM_FLOP, False, bmm_np),
            ("bmm_einsum", "numpy", (1, 2), BMM_FLOP, False, bmm_np_einsum),
            ("bmm", "torch", (1, 2), BMM_FLOP, False, bmm_torch),
            ("bmm_einsum", "torch", (1, 2), BMM_FLOP, False, bmm_torch_einsum)]

    def dot_np_einsum():
        a, b = filled((DN, DN)), filled((DN, DN), -0.3)
        return lambda: np.einsum("ij,ij->", a, b, optimize=True)

    def dot_np_vdot():
        a, b = filled((DN, DN)), filled((DN, DN), -0.3)
        return lambda: np.vdot(a, b)  # BLAS sdot over the flattened arrays

    def dot_torch_einsum():
        a, b = torch.from_numpy(filled((DN, DN))), torch.from_numpy(filled((DN, DN), -0.3))
        return lambda: torch.einsum("ij,ij->", a, b)

    def dot_torch():
        a, b = torch.from_numpy(filled((DN * DN,))), torch.from_numpy(filled((DN * DN,), -0.3))
        return lambda: torch.dot(a, b)
    out += [("dot_einsum", "numpy", (1,), DOT_BYTES, True, dot_np_einsum),
            ("dot_vdot", "numpy", (1,), DOT_BYTES, True, dot_np_vdot),
            ("dot_einsum", "torch", (1,), DOT_BYTES, True, dot_torch_einsum),
            ("dot", "torch", (1,), DOT_BYTES, True, dot_torch)]

    def outer_np_einsum():
        x, y, o = filled((OM,)), filled((OM,), -0.3), np.empty((OM, OM), np.float32)
        return lambda: np.einsum("i,j->ij", x, y, out=o)

    def outer_np():
        x, y, o = filled((OM,)), filled((OM,), -0.3), np.empty((OM, OM), np.float32)
        return lambda: np.outer(x, y, out=o)

    def outer_torch_einsum():
        x, y = torch.from_numpy(filled((OM,))), torch.from_numpy(filled((OM,), -0.3))
        return lambda: torch.einsum("i,j->ij", x, y)

    def outer_torch():
        x, y, o = torch.from_numpy(filled((OM,))), torch.from_numpy(filled((OM,), -0.3)), torch.empty((OM, OM))
        return lambda: torch.outer(x, y, out=o)
    out += [("outer_einsum", "numpy", (1,), OUTER_BYTES, True, outer_np_einsum),
            ("outer", "numpy", (1,), OUTER_BYTES, True, outer_np),
            ("outer_einsum", "torch", (1,), OUTER_BYTES, True, outer_torch_einsum),
            ("outer", "torch", (1,), OUTER_BYTES, True, outer_torch)]

    def bilinear_operands():
        return filled((QB, QN)), filled((QA, QN, QM), -0.3), filled((QB, QM), -0.4)

    def bilinear_np():
        x, w, y = bilinear_operands()
        return lambda: np.einsum("bn,anm,bm->ba", x, w, y, optimize=True)

    def bilinear_np_path():
        x, w, y = bilinear_operands()
        path = np.einsum_path("bn,anm,bm->ba", x, w, y, optimize="greedy")[0]  # optimize=True's path
        return lambda: np.einsum("bn,anm,bm->ba", x, w, y, optimize=path)

    def bilinear_torch():
        x, w, y = (torch.from_numpy(t) for t in bilinear_operands())
        return lambda: torch.einsum("bn,anm,bm->ba", x, w, y)
    out += [("bilinear_einsum", "numpy", (1, 2), BILINEAR_FLOP, False, bilinear_np),
            ("bilinear_einsum_path", "numpy", (1, 2), BILINEAR_FLOP, False, bilinear_np_path),
            ("bilinear_einsum", "torch", (1, 2), BILINEAR_FLOP, False, bilinear_torch)]
    return out


def check():
    """Every call computes the case's result (NumPy's and PyTorch's against a float64 reference)."""
    x, w, y = filled((QB, QN)).astype(np.float64), filled((QA, QN, QM), -0.3).astype(np.float64), \
        filled((QB, QM), -0.4).astype(np.float64)
    ref = np.einsum("bn,anm,bm->ba", x, w, y, optimize=True)
    got = np.einsum("bn,anm,bm->ba", x.astype(np.float32), w.astype(np.float32), y.astype(np.float32), optimize=True)
    assert np.allclose(got, ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max()), "numpy bilinear"
    if torch is not None:
        t = torch.einsum("bn,anm,bm->ba", *(torch.from_numpy(v.astype(np.float32)) for v in (x, w, y))).numpy()
        assert np.allclose(t, ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max()), "torch bilinear"
    for layout in ("ta", "tb", "s2"):
        a, b = matmul_operands(layout, np.float64)
        c = np.dot(a, b)
        assert np.allclose(c[:4, :4], np.ascontiguousarray(a[:4]) @ np.ascontiguousarray(b[:, :4])), layout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument("--format", choices=("json", "lines"), default="json")
    args = ap.parse_args()
    if BLAS is None:
        print("no OpenBLAS found in this process: thread counts are OpenBLAS's defaults", file=sys.stderr)
    else:
        print(f"OpenBLAS {BLAS.openblas_get_config().decode()} kernel {BLAS.openblas_get_corename().decode()}",
              file=sys.stderr)
    check()
    flt = re.compile(args.filter) if args.filter else None
    results = []
    for base, lib, threads, work, is_bytes, setup in cases():
        if lib == "torch" and torch is None:
            continue
        for t in threads:
            name = f"{lib}_{base}/{t}"
            if flt and not (flt.search(name) or flt.search(f"{base}/{t}") or flt.search(base)):
                continue
            set_threads(t)
            secs = measure(setup(), args.min_time, max(args.repetitions, 1))
            unit = "GB/s" if is_bytes else "GFLOP/s"
            print(f"{name:34s} {secs * 1e3:9.3f} ms {work / secs / 1e9:9.2f} {unit}", file=sys.stderr)
            results.append({"name": name, "real_time_ns": secs * 1e9, "work": work, "unit": unit,
                            "repetitions": args.repetitions})
            if args.format == "lines":
                print(f"{name} {secs * 1e9:.1f} {work:.6g} {int(is_bytes)}", flush=True)
    set_threads(1)
    if args.format == "json":
        json.dump({"numpy": np.__version__, "torch": torch.__version__ if torch is not None else None,
                   "openblas": BLAS.openblas_get_config().decode() if BLAS is not None else None,
                   "benchmarks": results}, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
