#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Golden data for softmax, log_softmax and logsumexp (tests/softmax_golden_test.cpp) from
# PyTorch 1.13: values and gradients over random shapes, dims and dtypes, with large
# magnitudes and infinities in some rows. Run once with /usr/bin/python3; CI never runs it.
import random
import torch

random.seed(11)
torch.manual_seed(11)
out = open("tests/golden/softmax.txt", "w")


def vals(t):
    return " ".join(repr(float(v)) for v in t.detach().reshape(-1).tolist())


def shape(t):
    return "[" + ",".join(str(s) for s in t.shape) + "]"


for k in range(120):
    nd = random.randint(0, 3)
    sizes = [random.randint(0, 4) if random.random() < 0.1 else random.randint(1, 5) for _ in range(nd)]
    dtype = random.choice([torch.float32, torch.float64])
    x = torch.randn(sizes, dtype=torch.float64) * random.choice([1.0, 1.0, 30.0, 1000.0])
    if x.numel() and random.random() < 0.2:
        x.view(-1)[random.randrange(x.numel())] = -float("inf")
    x = x.to(dtype)
    op = random.choice(["softmax", "log_softmax", "logsumexp"])
    if op == "logsumexp":
        ndims = random.randint(1, max(nd, 1))
        dims = random.sample(range(max(nd, 1)), ndims) if nd else [0]
        keepdim = random.random() < 0.5
    else:
        dims = [random.randrange(-max(nd, 1), max(nd, 1))]
        keepdim = False
    xr = x.clone().requires_grad_()
    if op == "softmax":
        y = torch.softmax(xr, dims[0])
    elif op == "log_softmax":
        y = torch.log_softmax(xr, dims[0])
    else:
        y = torch.logsumexp(xr, dims, keepdim)
    w = torch.randn(y.shape, dtype=torch.float64).to(dtype)
    finite = torch.isfinite(y).all() and x.numel() > 0
    if finite:
        (y * w).sum().backward()
    name = {torch.float32: "f32", torch.float64: "f64"}[dtype]
    print(f"case {op} {name} {shape(x)} dims {' '.join(map(str, dims))} keepdim {int(keepdim)}", file=out)
    print("x " + vals(x), file=out)
    print(f"y {shape(y)} " + vals(y), file=out)
    if finite:
        print("w " + vals(w), file=out)
        print("grad " + vals(xr.grad), file=out)
    print("end", file=out)
