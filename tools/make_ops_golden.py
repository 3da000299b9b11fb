#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/ops.txt: PyTorch 1.13's values (and gradients) for strata's everyday
element-wise functions and statistics (tests/ops_test.cpp reads it).

Each case:  case <op> <dtype> <shape> [<param>=<value> ...]
            x <values>            (row-major; y, z for more operands, each with its shape)
            out <shape> <values>  (and idx <shape> <values> for index results)
            grad <values>         (d sum(out * w) / dx, with w given as `w`; float64 cases)
            end
Run with /usr/bin/python3 (torch 1.13); the output is deterministic.
"""
import math
import os
import torch

from golden_common import fmt

torch.manual_seed(11)
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "ops.txt")
DT = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "int64": torch.int64,
      "int8": torch.int8, "complex64": torch.complex64, "float16": torch.float16, "bool": torch.bool}
lines = []


def shape(t):
    return "[" + ",".join(str(s) for s in t.shape) + "]"


def sample(dtype, sizes, special=False, low=-3.0, high=3.0, positive=False):
    if dtype in ("int32", "int64", "int8"):
        return torch.randint(-5, 6, sizes, dtype=DT[dtype])
    if dtype == "bool":
        return torch.randint(0, 2, sizes).bool()
    if dtype == "complex64":
        return torch.complex(torch.randn(sizes), torch.randn(sizes))
    x = torch.empty(sizes, dtype=torch.float64).uniform_(low, high)
    if positive:
        x = x.abs() + 0.05
    # ties and round values
    if x.numel() > 3:
        flat = x.view(-1)
        flat[1] = flat[0]
        flat[-1] = round(float(flat[-1]))
    if special and x.numel() >= 4:
        flat = x.view(-1)
        for i, v in zip(torch.randperm(x.numel())[:4].tolist(), [math.nan, math.inf, -math.inf, -0.0]):
            flat[i] = v
    return x.to(DT[dtype])


def emit(op, dtype, operands, out, params="", idx=None, grads=None, w=None):
    lines.append(f"case {op} {dtype} {shape(operands[0])}{(' ' + params) if params else ''}")
    for name, t in zip("xyz", operands):
        lines.append(f"{name} {fmt(t)}" if name == "x" else f"{name} {shape(t)} {fmt(t)}")
    lines.append(f"out {shape(out)} {fmt(out)}")
    if idx is not None:
        lines.append(f"idx {shape(idx)} {fmt(idx)}")
    if grads is not None:
        lines.append(f"w {fmt(w)}")
        for name, g in zip(("grad", "grad_y", "grad_z"), grads):
            lines.append(f"{name} {fmt(g)}")
    lines.append("end")


def with_grad(fn, operands, dtype):
    """(out, grads, w): grads of sum(out * w) for float64 operands."""
    if dtype != "float64":
        return fn(*operands), None, None
    if not fn(*operands).is_floating_point():
        return fn(*operands), None, None
    leaves = [t.clone().requires_grad_() for t in operands]
    out = fn(*leaves)
    w = torch.randn(out.shape, dtype=out.dtype)
    (out * w).sum().backward()
    return out.detach(), [torch.zeros_like(l) if l.grad is None else l.grad for l in leaves], w


SHAPES = [[5], [3, 4], [2, 3, 4], [], [0, 3], [4, 1, 3]]

# ---- unary element-wise ----
unary = {
    "isnan": (torch.isnan, ["float32", "float64", "int32", "complex64"], True, False),
    "isinf": (torch.isinf, ["float32", "float64", "int32", "complex64"], True, False),
    "isfinite": (torch.isfinite, ["float32", "float64", "int32", "complex64"], True, False),
    "isposinf": (torch.isposinf, ["float32", "float64", "int32"], True, False),
    "isneginf": (torch.isneginf, ["float32", "float64", "int32"], True, False),
    "nan_to_num": (torch.nan_to_num, ["float32", "float64", "int32", "float16"], True, True),
    "nan_to_num_values": (lambda x: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-7.0),
                          ["float32", "float64"], True, True),
    "log2": (torch.log2, ["float32", "float64", "int32"], False, True),
    "log10": (torch.log10, ["float32", "float64", "int32"], False, True),
    "exp2": (torch.exp2, ["float32", "float64", "int32"], False, True),
    "erf": (torch.erf, ["float32", "float64"], False, True),
    "erfc": (torch.erfc, ["float32", "float64"], False, True),
    "softplus": (torch.nn.functional.softplus, ["float32", "float64"], False, True),
    "softplus_beta": (lambda x: torch.nn.functional.softplus(x, beta=2.0, threshold=3.0), ["float32", "float64"],
                      False, True),
    "gelu": (torch.nn.functional.gelu, ["float32", "float64"], False, True),
    "gelu_tanh": (lambda x: torch.nn.functional.gelu(x, approximate="tanh"), ["float32", "float64"], False, True),
    "silu": (torch.nn.functional.silu, ["float32", "float64"], False, True),
    "logit": (torch.logit, ["float32", "float64"], False, True),
    "logit_eps": (lambda x: torch.logit(x, eps=0.2), ["float32", "float64"], False, True),
    "square": (torch.square, ["float32", "float64", "int32", "complex64"], False, True),
    "reciprocal": (torch.reciprocal, ["float32", "float64", "int32"], False, True),
    "frac": (torch.frac, ["float32", "float64"], False, True),
    "trunc": (torch.trunc, ["float32", "float64"], False, True),
}
for op, (fn, dtypes, special, _) in unary.items():
    for dtype in dtypes + (["float64"] if "float64" not in dtypes else []):
        if dtype not in dtypes:
            continue
        for sizes in SHAPES:
            if op.startswith("logit"):
                x = sample(dtype, sizes, low=0.01, high=0.99)
            elif op in ("log2", "log10", "reciprocal") and dtype != "int32":
                x = sample(dtype, sizes, positive=True)
            else:
                x = sample(dtype, sizes, special=special)
            if op in ("log2", "log10") and dtype == "int32":
                x = x.abs() + 1
            if op == "reciprocal" and dtype == "int32":
                x = torch.where(x == 0, torch.ones_like(x), x)
            out, grads, w = with_grad(fn, [x], dtype)
            emit(op, dtype, [x], out, grads=grads, w=w)

# ---- binary and ternary element-wise ----
def binary_cases(op, fn, dtypes, n_operands=2, positive=False):
    for dtype in dtypes:
        for sa, sb in [([4], [4]), ([3, 4], [3, 4]), ([3, 1], [1, 4]), ([2, 3], [3]), ([], [2, 2])]:
            ops = [sample(dtype, sa, positive=positive), sample(dtype, sb, positive=positive)]
            if n_operands == 3:
                ops.append(sample(dtype, sb, positive=True))
            out, grads, w = with_grad(fn, ops, dtype)
            emit(op, dtype, ops, out, grads=grads, w=w)


binary_cases("hypot", torch.hypot, ["float32", "float64"])
binary_cases("atan2", torch.atan2, ["float32", "float64", "int32"])
binary_cases("copysign", torch.copysign, ["float32", "float64", "int32"])
binary_cases("lerp_tensor", lambda a, b, w: torch.lerp(a, b, w), ["float32", "float64"], 3)
binary_cases("addcmul", lambda a, b, c: torch.addcmul(a, b, c, value=0.5), ["float32", "float64"], 3)
binary_cases("addcmul_int", lambda a, b, c: torch.addcmul(a, b, c, value=2), ["int32"], 3)
binary_cases("addcdiv", lambda a, b, c: torch.addcdiv(a, b, c, value=0.5), ["float32", "float64"], 3, positive=True)
for weight in (0.3, 0.7, -0.2, 1.0):
    for dtype in ("float32", "float64"):
        a, b = sample(dtype, [3, 4]), sample(dtype, [4])
        out, grads, w = with_grad(lambda x, y: torch.lerp(x, y, weight), [a, b], dtype)
        emit("lerp_scalar", dtype, [a, b], out, params=f"weight={weight!r}", grads=grads, w=w)
for dtype in ("int32", "int8", "int64"):
    bits = {"int32": 32, "int8": 8, "int64": 64}[dtype]
    for sizes in ([6], [2, 3]):
        a = torch.randint(-100, 100, sizes, dtype=DT[dtype])
        b = torch.randint(0, bits, sizes, dtype=DT[dtype])
        emit("lshift", dtype, [a, b], a << b)
        emit("rshift", dtype, [a, b], a >> b)

# ---- reductions ----
RED_SHAPES = [([5], [None, 0]), ([3, 4], [None, 0, 1, -1]), ([2, 3, 4], [None, 1]), ([], [None]),
              ([0, 3], [1]), ([4, 1, 3], [1, 2])]


def dims_arg(d):
    return "all" if d is None else str(d)


for dtype in ("float32", "float64", "int32", "bool", "complex64"):
    for sizes, dims in RED_SHAPES:
        for d in dims:
            x = sample(dtype, sizes)
            out = torch.count_nonzero(x) if d is None else torch.count_nonzero(x, dim=d)
            emit("count_nonzero", dtype, [x], out, params=f"dim={dims_arg(d)}")
for dtype in ("float32", "float64", "int32"):
    for sizes, dims in RED_SHAPES:
        for d in dims:
            for keep in ((False,) if d is None else (False, True)):
                x = sample(dtype, sizes, special=False)
                if dtype != "int32" and x.numel() > 2:
                    x.view(-1)[2] = math.nan
                f = (lambda t: torch.nansum(t)) if d is None else (lambda t: torch.nansum(t, dim=d, keepdim=keep))
                out, grads, w = with_grad(f, [x], dtype)
                emit("nansum", dtype, [x], out, params=f"dim={dims_arg(d)} keepdim={int(keep)}", grads=grads, w=w)
                if dtype != "int32":
                    f = (lambda t: torch.nanmean(t)) if d is None else (lambda t: torch.nanmean(t, dim=d, keepdim=keep))
                    out, grads, w = with_grad(f, [x], dtype)
                    emit("nanmean", dtype, [x], out, params=f"dim={dims_arg(d)} keepdim={int(keep)}", grads=grads, w=w)

for dtype in ("float32", "float64", "complex64", "float16"):
    for sizes, dims in RED_SHAPES:
        for d in dims:
            for corr in ((0, 1, 2) if sizes in ([3, 4], [5], []) else (1,)):
                keep = corr == 1
                x = sample(dtype, sizes)
                dd = None if d is None else [d]
                n = x.numel() if d is None else (x.shape[d] if x.dim() else 1)
                for op, fn in (("var", torch.var), ("std", torch.std)):
                    f = lambda t: fn(t, dim=dd, correction=corr, keepdim=keep)
                    # no gradients without degrees of freedom (PyTorch's are inf or NaN by path)
                    out, grads, w = with_grad(f, [x], dtype if n > corr else "none")
                    emit(op, dtype, [x], out, params=f"dim={dims_arg(d)} correction={corr} keepdim={int(keep)}",
                         grads=grads, w=w)
                if dtype in ("float32", "float64"):
                    v, m = torch.var_mean(x, dim=dd, correction=corr, keepdim=keep)
                    emit("var_mean", dtype, [x], v, params=f"dim={dims_arg(d)} correction={corr} keepdim={int(keep)}",
                         idx=m)
                    s, m = torch.std_mean(x, dim=dd, correction=corr, keepdim=keep)
                    emit("std_mean", dtype, [x], s, params=f"dim={dims_arg(d)} correction={corr} keepdim={int(keep)}",
                         idx=m)

for dtype in ("float32", "float64", "complex64"):
    for sizes, dims in RED_SHAPES:
        for d in dims:
            ords = (2, 1, math.inf, -math.inf, 0, 3, 0.5) if sizes in ([3, 4], [0, 3], []) else (2, 3)
            for ord_ in ords:
                x = sample(dtype, sizes)
                if x.numel() > 4 and dtype != "complex64":
                    x.view(-1)[3] = 0.0
                if x.numel() == 0 and math.isinf(ord_):
                    continue
                dd = None if d is None else [d]
                f = lambda t: torch.linalg.vector_norm(t, ord=ord_, dim=dd, keepdim=d == 1)
                out, grads, w = with_grad(f, [x], dtype)
                emit("vector_norm", dtype, [x], out, params=f"dim={dims_arg(d)} ord={ord_!r} keepdim={int(d == 1)}",
                     grads=grads, w=w)
    if dtype == "float64":  # a zero vector: the gradient is 0, not NaN
        x = torch.zeros(4, dtype=torch.float64)
        for ord_ in (2, 3):
            out, grads, w = with_grad(lambda t: torch.linalg.vector_norm(t, ord=ord_), [x], dtype)
            emit("vector_norm", dtype, [x], out, params=f"dim=all ord={ord_!r} keepdim=0", grads=grads, w=w)

for dtype in ("float32", "float64", "int32", "float16"):
    for sizes, dims in RED_SHAPES:
        for d in dims:
            for keep in (False, True):
                x = sample(dtype, sizes)
                if x.numel() == 0 and d is None:
                    continue
                if dtype in ("float32", "float64") and x.numel() > 5 and keep:
                    x.view(-1)[4] = math.nan
                for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
                    out = fn(x) if d is None else fn(x, dim=d, keepdim=keep)
                    emit(op, dtype, [x], out, params=f"dim={dims_arg(d)} keepdim={int(keep)}")
                if d is None or x.numel() == 0:
                    continue
                for op, fn in (("max_dim", torch.max), ("min_dim", torch.min)):
                    f = lambda t: fn(t, dim=d, keepdim=keep)
                    if dtype == "float64":
                        leaf = x.clone().requires_grad_()
                        v, i = f(leaf)
                        w = torch.randn(v.shape, dtype=v.dtype)
                        (v * w).sum().backward()
                        emit(op, dtype, [x], v.detach(), params=f"dim={d} keepdim={int(keep)}", idx=i,
                             grads=[leaf.grad], w=w)
                    else:
                        v, i = f(x)
                        emit(op, dtype, [x], v, params=f"dim={d} keepdim={int(keep)}", idx=i)

with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"{len([l for l in lines if l.startswith('case')])} cases -> {OUT}")
