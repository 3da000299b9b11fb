#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes samples/data/checkpoint.safetensors, the input of samples/checkpoint_standardise.cpp:
a small model's weights as PyTorch would hold them in a mixed-precision checkpoint (a bfloat16
and a float16 weight, float32 biases, an int64 step counter and a bool mask), in the
safetensors format, with the writer of tools/make_safetensors_golden.py.

Run with /usr/bin/python3 (Debian's python3-torch); the output is deterministic.
"""
import os

import torch

from make_safetensors_golden import write

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "data", "checkpoint.safetensors")


def main():
    g = torch.Generator().manual_seed(35)
    tensors = {
        "fc1.weight": (torch.randn(8, 6, generator=g) * 3 + 1).to(torch.bfloat16),
        "fc1.bias": torch.randn(8, generator=g),
        "fc2.weight": (torch.randn(3, 8, generator=g) * 0.5 - 2).to(torch.float16),
        "fc2.bias": torch.randn(3, generator=g),
        "step": torch.tensor(1200, dtype=torch.int64),
        "mask": torch.tensor([True, False, True, True, False, True, True, True]),
    }
    write(OUT, tensors, metadata={"format": "pt"})


if __name__ == "__main__":
    main()
