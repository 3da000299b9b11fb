#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""NumPy's side of bench/io_bench.cpp: the same 1 GiB float32 array, loaded from the .npy file
io_bench writes (run io_bench first), with np.load(mmap_mode='r') (time to the first use) and
np.load (read all), and the .safetensors file mapped with np.memmap at its data offset (what a
NumPy reader of safetensors does). Best of --repetitions runs, in ms.

    /usr/bin/python3 tools/bench_io_numpy.py [--dir /tmp] [--repetitions 5]
"""
import argparse
import json
import os
import struct
import time

import numpy as np


def best(f, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("STRATA_IO_BENCH_DIR", "/tmp"))
    ap.add_argument("--repetitions", type=int, default=5)
    a = ap.parse_args()
    npy = os.path.join(a.dir, "strata_io_bench.npy")
    sft = os.path.join(a.dir, "strata_io_bench.safetensors")
    n = 1 << 28

    def npy_mmap_first_use():
        w = np.load(npy, mmap_mode="r")
        return float(w[n // 2])

    def npy_load_all():
        w = np.load(npy)
        return float(w[n // 2])

    def safetensors_memmap_first_use():
        with open(sft, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(length))
        begin, end = header["w"]["data_offsets"]
        w = np.memmap(sft, dtype="<f4", mode="r", offset=8 + length + begin, shape=tuple(header["w"]["shape"]))
        return float(w[n // 2])

    def safetensors_memmap_sum_all():
        with open(sft, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
        w = np.memmap(sft, dtype="<f4", mode="r", offset=8 + length)
        return float(w.sum(dtype=np.float32))

    for name, f in [("numpy_npy_mmap_first_use", npy_mmap_first_use),
                    ("numpy_safetensors_memmap_first_use", safetensors_memmap_first_use),
                    ("numpy_safetensors_memmap_sum_all", safetensors_memmap_sum_all),
                    ("numpy_npy_load_all", npy_load_all)]:
        print(f"{name} {best(f, a.repetitions):.3f} ms")
    print("numpy", np.__version__)


if __name__ == "__main__":
    main()
