#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/safetensors/*.safetensors for tests/io_test.cpp.

The safetensors Python package is not packaged for Debian, so the files are written here to the
format's specification (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
length, the JSON header (tensors sorted by item size, widest first, then by name, as the
reference writer orders them; "__metadata__" first; padded with spaces to a multiple of 8 bytes),
then each tensor's bytes, row-major, little-endian, as torch 1.13 holds them (bfloat16 through
torch, since NumPy has none; uint16 through NumPy, since torch 1.13 has none).

    mixed.safetensors       every dtype strata reads (BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64 C64),
                            a 0-d and an empty tensor, a U16 tensor strata lists but cannot load,
                            metadata with non-ASCII text (JSON \\u escapes)
    misaligned.safetensors  an F32 tensor whose data starts one byte into the buffer (a valid
                            file whose tensor must be copied, not viewed)

Run with /usr/bin/python3 (Debian's python3-torch); the output is deterministic.
"""
import json
import os
import struct

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "safetensors")
CODES = {torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16", torch.int32: "I32",
         torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32",
         torch.float64: "F64", torch.complex64: "C64"}


def raw(t):
    """(code, shape, bytes) of a torch tensor or a (code, numpy array) pair."""
    if isinstance(t, tuple):
        code, a = t
        return code, list(a.shape), np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        data = t.view(torch.int16).numpy().astype("<i2").tobytes()
    else:
        data = t.numpy().tobytes()
    return CODES[t.dtype], list(t.shape), data


def write(path, tensors, metadata=None, order=None, pad=True):
    items = {name: raw(t) for name, t in tensors.items()}
    sizes = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "F32": 4,
             "I64": 8, "F64": 8, "C64": 8}
    names = order or sorted(items, key=lambda n: (-sizes[items[n][0]], n))
    header, at = {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for n in names:
        code, shape, data = items[n]
        header[n] = {"dtype": code, "shape": shape, "data_offsets": [at, at + len(data)]}
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for n in names:
            f.write(items[n][2])


def main():
    os.makedirs(OUT, exist_ok=True)
    tensors = {
        "f32": torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4,
        "f64_scalar": torch.tensor(-2.5, dtype=torch.float64),
        "bf16": torch.tensor([1.0, -2.5, 3.14159, 1e-3, 65504.0], dtype=torch.bfloat16),
        "f16": torch.tensor([1.5, -0.25, 65504.0], dtype=torch.float16),
        "i64": torch.tensor([[1, -2], [3, 1 << 40]], dtype=torch.int64),
        "i32": torch.tensor([7, -8, 300000], dtype=torch.int32),
        "i16": torch.tensor([-300, 301], dtype=torch.int16),
        "i8": torch.tensor([-128, 127, 0], dtype=torch.int8),
        "u8": torch.arange(5, dtype=torch.uint8) * 50,
        "flags": torch.tensor([True, False, True]),
        "c64": torch.tensor([1 + 2j, -3 - 4j], dtype=torch.complex64),
        "empty": torch.zeros(0, 3),
        "u16": ("U16", np.array([1, 65535], dtype=np.uint16)),
    }
    write(os.path.join(OUT, "mixed.safetensors"), tensors,
          metadata={"format": "pt", "note": "strata — ünïcode ✓"})
    write(os.path.join(OUT, "misaligned.safetensors"),
          {"byte": torch.tensor([9], dtype=torch.uint8), "f32": torch.tensor([1.5, -2.0], dtype=torch.float32)},
          order=["byte", "f32"], pad=True)


if __name__ == "__main__":
    main()
