#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Golden data for strata.manip (tests/manip_test.cpp) from PyTorch 1.13: values of every
# creation, shape and joining operator over random shapes (empty and 0-dim included),
# contiguous, transposed, stepped and expanded inputs and several dtypes; gradients of the
# differentiable ones (y.backward(w)); and the message of every error. Run once with
# /usr/bin/python3 from the repository root; CI never runs it.
#
# Format: one case per block
#   case <op> <dtype> | <args...>     args are op-specific tokens (lists as [1,2], None as -)
#   x <dtype> <layout> <sizes> [<base sizes>] : <values>   (an input; layouts c t s e)
#   y <sizes> : <values>              (one line per result; several for split and friends)
#   w : <values>                      (the gradient fed to y.backward)
#   g : <values>                      (the gradient of each floating input, in order)
#   err <Python exception> <message>
#   end
import math
import random

import numpy as np
import torch
import torch.nn.functional as F

random.seed(13)
torch.manual_seed(13)
out = open("tests/golden/manip.txt", "w")

DT = {"b": torch.bool, "u8": torch.uint8, "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
      "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64, "c64": torch.complex64,
      "c128": torch.complex128}
FLOAT = {"f32", "f64", "c64", "c128"}


def num(v, single=False):
    """A value as text; single: a float32 value, written with the fewest digits that read back."""
    if isinstance(v, complex):
        return f"{num(v.real, single)}:{num(v.imag, single)}"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return str(np.float32(v)) if single else repr(float(v))


def vals(t):
    t = t.detach()
    single = t.dtype in (torch.float32, torch.complex64, torch.float16, torch.bfloat16)
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    return " ".join(num(v, single) for v in t.reshape(-1).tolist())


def shp(s):
    return "[" + ",".join(str(int(d)) for d in s) + "]"


def lst(v):
    return "-" if v is None else shp(v)


def random_values(sizes, dt):
    n = 1
    for s in sizes:
        n *= s
    if dt == "b":
        return torch.rand(sizes) < 0.5
    if dt in ("u8", "i32", "i64"):
        return torch.randint(0, 50, sizes).to(DT[dt])
    if dt in ("c64", "c128"):
        return torch.complex(torch.randn(sizes), torch.randn(sizes)).to(DT[dt])
    return (torch.randn(sizes) * 4).round(decimals=3).to(DT[dt])


def make_input(sizes, dt, layout=None):
    """A tensor with the given logical sizes laid out as layout (c, t, s or e); returns
    (tensor, description line)."""
    sizes = list(sizes)
    if layout is None:
        layout = random.choice(["c", "c", "t", "s", "e"])
    if layout == "t" and len(sizes) < 2:
        layout = "c"
    if layout == "e" and not sizes:
        layout = "c"
    if layout == "e":
        base = [1 if random.random() < 0.5 else s for s in sizes]
        lead = random.randint(0, len(sizes) - 1)
        base = base[lead:]
        b = random_values(base, dt)
        x = b.expand(sizes)
        return x, f"x {dt} e {shp(sizes)} {shp(base)} : {vals(b)}"
    v = random_values(sizes, dt)
    if layout == "t":
        x = torch.empty(list(reversed(sizes)), dtype=DT[dt]).permute(*reversed(range(len(sizes))))
        x.copy_(v)
    elif layout == "s" and sizes:
        x = torch.zeros(sizes[:-1] + [2 * sizes[-1]], dtype=DT[dt])[..., ::2]
        x.copy_(v)
    else:
        layout = "c"
        x = v.clone()
    return x, f"x {dt} {layout} {shp(sizes)} : {vals(v)}"


def rand_sizes(nd, lo=1, hi=4, empty=0.1):
    return [0 if random.random() < empty else random.randint(lo, hi) for _ in range(nd)]


def emit(op, dt, args, inputs, fn, grad=True):
    """Runs fn on the inputs (tensors) and writes the case; inputs: list of (tensor, line)."""
    print(f"case {op} {dt} | {' '.join(str(a) for a in args)}", file=out)
    for _, line in inputs:
        print(line, file=out)
    xs = [t for t, _ in inputs]
    try:
        y = fn(*xs)
    except Exception as e:  # noqa: BLE001
        print(f"err {type(e).__name__} {str(e).splitlines()[0]}", file=out)
        print("end", file=out)
        return
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    for r in ys:
        print(f"y {shp(r.shape)} : {vals(r)}", file=out)
    floats = [t for t, (_, line) in zip(xs, inputs) if line.split()[1] in FLOAT]
    if grad and floats and len(ys) == 1 and all(line.split()[1] in FLOAT for _, line in inputs):
        leaves = [t.detach().clone().requires_grad_() for t in xs]
        # keep the layout: gradients do not depend on it
        r = fn(*leaves)
        w = random_values(list(r.shape), inputs[0][1].split()[1])
        try:
            r.backward(w)
        except RuntimeError:  # PyTorch's own backward refuses some (constant pad of an empty dim)
            print("end", file=out)
            return
        print(f"w : {vals(w)}", file=out)
        for leaf in leaves:
            g = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            print(f"g : {vals(g)}", file=out)
    print("end", file=out)


def err_case(op, dt, args, inputs, fn):
    emit(op, dt, args, inputs, fn, grad=False)


# ---- linspace / logspace ----
def scalar_token(v):
    if isinstance(v, complex):
        return f"c:{num(v.real)}:{num(v.imag)}"
    if isinstance(v, int):
        return f"i:{v}"
    return f"f:{num(v)}"


LIN_DTS = ["f32", "f32", "f32", "f64", "f64", "i64", "i32", "u8", "f16", "bf16", "c64", "c128"]
for k in range(110):
    dt = random.choice(LIN_DTS)
    steps = random.choice([0, 1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 33, 50, 64, 100])
    if k < 3:  # large counts: the float index rounds, and many vector pairs
        dt, steps = ["f32", "f64", "i32"][k], [1000, 555, 300][k]
    if dt in ("i64", "i32"):
        a, b = random.randint(-1000, 1000), random.randint(-1000, 1000)
        if random.random() < 0.4:
            a, b = random.uniform(-1000, 1000), random.uniform(-1000, 1000)
    elif dt == "u8":
        a, b = random.randint(0, 255), random.randint(0, 255)
    elif dt in ("c64", "c128"):
        a = complex(random.uniform(-50, 50), random.uniform(-50, 50))
        b = complex(random.uniform(-50, 50), random.uniform(-50, 50))
        if random.random() < 0.3:
            a, b = random.uniform(-50, 50), random.uniform(-50, 50)
    else:
        mag = random.choice([1, 10, 100, 1e4])
        a, b = random.uniform(-mag, mag), random.uniform(-mag, mag)
        if random.random() < 0.2:
            a, b = random.randint(-100, 100), random.randint(-100, 100)
    emit("linspace", dt, [scalar_token(a), scalar_token(b), steps], [],
         lambda a=a, b=b, steps=steps, dt=dt: torch.linspace(a, b, steps, dtype=DT[dt]))

LOG_DTS = ["f32", "f32", "f64", "f64", "i64", "i32", "bf16", "c64", "c128"]
for k in range(70):
    dt = random.choice(LOG_DTS)
    steps = random.choice([0, 1, 2, 3, 5, 10, 33, 100])
    base = random.choice([10.0, 2.0, math.e, 0.5, 3.0])
    if dt in ("i64", "i32"):
        a, b = random.randint(-2, 3), random.randint(0, 6)
        if random.random() < 0.4:
            a, b = random.uniform(-2, 3), random.uniform(0, 6)
    elif dt in ("c64", "c128"):
        a = complex(random.uniform(-2, 2), random.uniform(-2, 2))
        b = complex(random.uniform(-2, 2), random.uniform(-2, 2))
    else:
        a, b = random.uniform(-8, 8), random.uniform(-8, 8)
    emit("logspace", dt, [scalar_token(a), scalar_token(b), steps, num(base)], [],
         lambda a=a, b=b, steps=steps, base=base, dt=dt: torch.logspace(a, b, steps, base=base, dtype=DT[dt]))

for dt, a, b, steps in [("f32", 0, 1, -1), ("i8x", 0, 300, 5), ("i32", 0, 1e10, 3), ("f16", 0, 70000, 3),
                        ("f32", 0, 1e39, 3), ("i32", 0, float("inf"), 3), ("u8", -256, 0, 3), ("u8", -1.0, 0, 3),
                        ("u8", -255, 0, 3), ("c64", complex(1, 1e39), 0, 3), ("i64", 0, 1e20, 3)]:
    d = torch.int8 if dt == "i8x" else DT[dt]
    emit("linspace", dt if dt != "i8x" else "i8", [scalar_token(a), scalar_token(b), steps], [],
         lambda a=a, b=b, steps=steps, d=d: torch.linspace(a, b, steps, dtype=d))
emit("logspace", "f32", [scalar_token(0), scalar_token(1), -1, num(10.0)], [],
     lambda: torch.logspace(0, 1, -1))
emit("logspace", "f32", [scalar_token(0), scalar_token(1e39), 3, num(10.0)], [],
     lambda: torch.logspace(0, 1e39, 3))

# ---- tril / triu ----
TRI_DTS = ["f32", "f64", "i64", "b", "c64", "c128", "i32"]
for k in range(50):
    op = random.choice(["tril", "triu"])
    dt = random.choice(TRI_DTS)
    sizes = rand_sizes(random.randint(2, 4), hi=4 if len(TRI_DTS) else 5)
    sizes = sizes[:2] + [min(s, 2) for s in sizes[2:]]
    diag = random.randint(-4, 4)
    x = make_input(sizes, dt)
    emit(op, dt, [diag], [x], lambda t, op=op, diag=diag: getattr(torch, op)(t, diag))
for sizes in ([], [3]):
    x = make_input(sizes, "f32", "c")
    emit("tril", "f32", [0], [x], lambda t: torch.tril(t))
    emit("triu", "f32", [1], [x], lambda t: torch.triu(t, 1))

# ---- flip ----
ALL_DTS = ["f32", "f64", "i64", "i32", "b", "c64", "c128", "u8"]
for k in range(40):
    dt = random.choice(ALL_DTS)
    nd = random.randint(0, 4)
    sizes = rand_sizes(nd)
    dims = random.sample(range(max(nd, 1)), random.randint(0, max(nd, 1))) if nd else random.choice([[], [0], [-1]])
    dims = [d - nd if nd and random.random() < 0.3 else d for d in dims]
    x = make_input(sizes, dt)
    emit("flip", dt, [shp(dims)], [x], lambda t, dims=dims: torch.flip(t, dims))
for sizes, dims in [([2, 3], [0, 0]), ([2, 3], [0, -2]), ([2, 3], [2]), ([2, 3], [-3])]:
    err_case("flip", "f32", [shp(dims)], [make_input(sizes, "f32", "c")], lambda t, dims=dims: torch.flip(t, dims))

# ---- roll ----
for k in range(55):
    dt = random.choice(ALL_DTS)
    nd = random.randint(0, 4)
    sizes = rand_sizes(nd)
    form = random.choice(["flat", "dims", "dims", "repeat"]) if nd else "flat"
    if form == "flat":
        shifts, dims = [random.randint(-7, 7)], []
    else:
        m = random.randint(1, nd)
        dims = random.sample(range(nd), m)
        if form == "repeat":
            dims = dims + [dims[0]]
        dims = [d - nd if random.random() < 0.3 else d for d in dims]
        shifts = [random.randint(-9, 9) for _ in dims]
    x = make_input(sizes, dt)
    emit("roll", dt, [shp(shifts), shp(dims)], [x], lambda t, s=shifts, d=dims: torch.roll(t, s, d))
for sizes, shifts, dims in [([2, 3], [1], [5]), ([2, 3], [1, 2], [0]), ([2, 3], [], []), ([2, 3], [1, 2], []),
                            ([], [1], [0]), ([0, 3], [1], [5]), ([0, 3], [1, 2], [0, 5]), ([2, 3], [1, 2], [0, 5]),
                            ([2, 3], [], [0])]:
    err_case("roll", "f32", [shp(shifts), shp(dims)], [make_input(sizes, "f32", "c")],
             lambda t, s=shifts, d=dims: torch.roll(t, s, d))

# ---- repeat / tile ----
for k in range(50):
    op = random.choice(["repeat", "tile"])
    dt = random.choice(ALL_DTS)
    nd = random.randint(0, 3)
    sizes = rand_sizes(nd, hi=3)
    if op == "repeat":
        reps = [random.randint(0, 3) if random.random() < 0.15 else random.randint(1, 3)
                for _ in range(nd + random.randint(0, 2))]
    else:
        reps = [random.randint(1, 3) for _ in range(random.randint(0, nd + 1))]
    x = make_input(sizes, dt)
    if op == "repeat":
        emit(op, dt, [shp(reps)], [x], lambda t, r=reps: t.repeat(*r) if r else t.repeat(torch.Size([])))
    else:
        emit(op, dt, [shp(reps)], [x], lambda t, r=reps: torch.tile(t, tuple(r)))
for sizes, reps in [([2, 3], [2]), ([2, 3], [-1, 2]), ([2, 3], [])]:
    err_case("repeat", "f32", [shp(reps)], [make_input(sizes, "f32", "c")],
             lambda t, r=reps: t.repeat(*r) if r else t.repeat(torch.Size([])))
err_case("tile", "f32", [shp([-1])], [make_input([2, 3], "f32", "c")], lambda t: torch.tile(t, (-1,)))

# ---- repeat_interleave ----
for k in range(50):
    dt = random.choice(ALL_DTS)
    nd = random.randint(0, 3)
    sizes = rand_sizes(nd, hi=3)
    dim = random.choice([None] + list(range(-nd, nd)))
    x = make_input(sizes, dt)
    form = random.choice(["int", "tensor", "tensor1", "scalar"])
    n = 1
    if dim is not None:
        n = sizes[dim]
    else:
        for s in sizes:
            n *= s
    if form == "int":
        r = random.randint(0, 3)
        emit("repeat_interleave", dt, ["int", r, "-" if dim is None else dim], [x],
             lambda t, r=r, dim=dim: torch.repeat_interleave(t, r, dim=dim))
    else:
        rdt = random.choice(["i64", "i32"])
        if form == "tensor":
            reps = [random.randint(0, 3) for _ in range(n)]
        elif form == "tensor1":
            reps = [random.randint(0, 3)]
        else:
            reps = random.randint(0, 3)
        tok = shp(reps) if isinstance(reps, list) else f"scalar:{reps}"
        emit("repeat_interleave", dt, [rdt, tok, "-" if dim is None else dim], [x],
             lambda t, reps=reps, rdt=rdt, dim=dim: torch.repeat_interleave(t, torch.tensor(reps, dtype=DT[rdt]), dim=dim))
for tok, dim, sizes in [("int:-1", "-", [2, 3]), ("int:2", "3", [2, 3]), ("int:2", "0", []), ("i64:[1,2,3]", "0", [2, 3]),
                        ("i64:[1,-2]", "0", [2, 3]), ("i64:[[1,2]]", "0", [2, 3]), ("i64:[1,2,3]", "-", [2, 3]),
                        ("i64:[[1,2]]", "7", [2, 3]), ("i64:[1,2,3]", "7", [2, 3])]:
    kind, rep = tok.split(":")
    d = None if dim == "-" else int(dim)
    if kind == "int":
        fn = lambda t, r=int(rep), d=d: torch.repeat_interleave(t, r, dim=d)  # noqa: E731
        args = ["int", rep, dim]
    else:
        fn = lambda t, r=eval(rep), d=d: torch.repeat_interleave(t, torch.tensor(r), dim=d)  # noqa: E731
        args = ["i64", rep.replace(" ", ""), dim]
    err_case("repeat_interleave", "f32", args, [make_input(sizes, "f32", "c")], fn)
for reps, rdt in [([1, 2, 0, 3], "i64"), ([2, 2], "i32"), ([], "i64"), ([[1, 2]], "i64"), (3, "i64"), ([1, -2], "i64")]:
    t = torch.tensor(reps, dtype=DT[rdt])
    line = f"x {rdt} c {shp(t.shape)} : {vals(t)}"
    emit("repeat_interleave_counts", rdt, [], [(t, line)], lambda t: torch.repeat_interleave(t), grad=False)

# ---- pad ----
PAD_DTS = ["f32", "f64", "c64", "c128"]
for k in range(80):
    mode = random.choice(["constant", "constant", "reflect", "replicate"])
    if mode == "constant":
        dt = random.choice(ALL_DTS)
        nd = random.randint(1, 4)
        sizes = rand_sizes(nd, hi=4)
        npairs = random.randint(0, nd)
        pads = []
        for _ in range(npairs):
            pads += [random.randint(-1, 3), random.randint(-1, 3)]
        value = random.choice([None, 0, 1.5, -2])
    else:
        dt = random.choice(PAD_DTS)
        kdims = random.randint(1, 3)
        nd = kdims + random.randint(1, 2)
        sizes = [random.randint(1, 4 if nd < 4 else 3) if d >= nd - kdims else random.randint(1, 2) for d in range(nd)]
        if random.random() < 0.2:
            sizes[0] = 0 if nd == kdims + 2 else sizes[0]
        pads = []
        for j in range(kdims):
            s = sizes[nd - 1 - j]
            hi = s - 1 if mode == "reflect" else 2
            pads += [random.randint(-1, hi) if hi >= 0 else 0, random.randint(-1, hi) if hi >= 0 else 0]
        value = None
    x = make_input(sizes, dt)
    emit("pad", dt, [shp(pads), mode, "-" if value is None else num(float(value))], [x],
         lambda t, p=pads, m=mode, v=value: F.pad(t, p, mode=m, value=v) if v is not None else F.pad(t, p, mode=m))
PAD_ERRORS = [
    ([2, 3], [1], "constant", None, "f32"), ([2, 3], [1, 1, 1, 1, 1, 1], "constant", None, "f32"),
    ([2, 3], [-4, 0], "constant", None, "f32"), ([2, 3], [-2, -2], "constant", None, "f32"),
    ([], [1, 1], "constant", None, "f32"), ([2, 3], [1, 1, -2, 0], "constant", None, "f32"),
    ([2, 3], [1, 1, -3, 1], "constant", None, "f32"), ([2, 3], [1, 1], "constant", 300.0, "i8"),
    ([2, 3], [1, 1], "wrap", None, "f32"), ([2, 3], [1, 1], "reflect", 2.0, "f32"),
    ([5], [1, 1], "reflect", None, "f32"), ([2, 3], [1, 1, 1, 1], "reflect", None, "f32"),
    ([2, 3], [], "reflect", None, "f32"), ([2, 3, 4], [1, 1, 1, 1, 1, 1], "replicate", None, "f32"),
    ([2, 3], [3, 1], "reflect", None, "f32"), ([2, 3], [-2, -2], "reflect", None, "f32"),
    ([2, 3], [-3, 0], "reflect", None, "f32"), ([2, 0], [1, 1], "reflect", None, "f32"),
    ([2, 0, 3], [1, 1], "reflect", None, "c64"), ([2, 0], [1, 1], "reflect", None, "i64"),
    ([2, 3, 4], [1, 1, 3, 1], "reflect", None, "f32"), ([2, 3, 4], [4, 1, 1, 1], "reflect", None, "f32"),
    ([2, 3, 4], [-4, 0, -3, 0], "reflect", None, "f32"), ([3, 0, 4], [1, 1, 1, 1], "reflect", None, "f64"),
    ([2, 3, 0, 5], [1, 1, 1, 1], "reflect", None, "f32"), ([2, 3, 4, 5], [1, 1, 1, 1, 3, 1], "reflect", None, "f32"),
    ([2, 3, 4, 5], [-5, 0, -4, 0, -3, 0], "reflect", None, "f32"), ([0, 3, 4, 5], [1, 1, 1, 1, 1, 1], "reflect", None, "f32"),
    ([2, 3], [-2, -2], "replicate", None, "f32"), ([2, 3, 4], [-4, 0, -3, 0], "replicate", None, "f32"),
    ([2, 3, 4], [0, 0, -4, 0], "replicate", None, "f32"), ([2, 3, 4, 5], [-5, 0, -4, 0, -3, 0], "replicate", None, "f32"),
    ([0, 3, 4], [1, 1, 1, 1], "replicate", None, "f32"), ([2, 0, 3], [1, 1], "replicate", None, "f32"),
    ([1, 0, 3, 4, 5], [1, 1, 1, 1, 1, 1], "replicate", None, "f32"), ([2, 3], [1, 1], "reflect", None, "i64"),
    ([2, 3], [1, 1], "replicate", None, "b"), ([2, 2, 3], [1, 1, 1, 1], "reflect", None, "i32"),
    ([2, 2, 2, 3], [1, 1, 1, 1, 1, 1], "reflect", None, "u8"), ([2, 2, 3], [1, 1, 1, 1], "replicate", None, "f16"),
    ([2, 2, 2, 3], [1, 1, 1, 1, 1, 1], "replicate", None, "bf16"), ([2, 3], [1, 1], "reflect", None, "bf16"),
]
DT["i8"] = torch.int8
for sizes, pads, mode, value, dt in PAD_ERRORS:
    x = torch.ones(sizes, dtype=DT[dt])
    line = f"x {dt} c {shp(sizes)} : {vals(x)}"
    err_case("pad", dt, [shp(pads), mode, "-" if value is None else num(value)], [(x, line)],
             lambda t, p=pads, m=mode, v=value: F.pad(t, p, mode=m, value=v) if v is not None else F.pad(t, p, mode=m))
for sizes, pads, dt in [([2, 2, 2, 3], [1, 1, 1, 1, 1, 1], "f16"), ([2, 2, 2, 3], [1, 0, 0, 1, 1, 1], "bf16")]:
    x = torch.randn(sizes).to(DT[dt])
    emit("pad", dt, [shp(pads), "reflect", "-"], [(x, f"x {dt} c {shp(sizes)} : {vals(x)}")],
         lambda t, p=pads: F.pad(t, p, mode="reflect"), grad=False)

# ---- cat / stack / hstack / vstack ----
for k in range(70):
    op = random.choice(["cat", "cat", "stack", "hstack", "vstack"])
    dt = random.choice(ALL_DTS)
    nd = random.randint(1 if op == "cat" else 0, 3)
    sizes = rand_sizes(nd)
    n = random.randint(1, 4)
    dim = random.randint(-nd - (op == "stack"), nd - 1 + (op == "stack")) if nd or op == "stack" else 0
    inputs = []
    for i in range(n):
        s = list(sizes)
        if op in ("cat", "hstack", "vstack") and nd:
            d = dim % nd if op == "cat" else (0 if op == "vstack" else min(1, nd - 1))
            s[d] = random.randint(0, 3)
        if op == "cat" and random.random() < 0.1:
            s = [0]
        inputs.append(make_input(s, dt))
    if op == "cat":
        emit(op, dt, [dim], inputs, lambda *ts, d=dim: torch.cat(ts, d))
    elif op == "stack":
        emit(op, dt, [dim], inputs, lambda *ts, d=dim: torch.stack(ts, d))
    else:
        emit(op, dt, [], inputs, lambda *ts, op=op: getattr(torch, op)(ts))
JOIN_ERRORS = [
    ("cat", 0, []), ("cat", 0, [[2, 3], [2, 4]]), ("cat", 0, [[2, 3], [3]]), ("cat", 2, [[2, 3]]),
    ("cat", -3, [[2, 3], [2, 3]]), ("cat", 0, [[], []]), ("cat", 0, [[2], []]), ("cat", 1, [[0, 3], [2, 4]]),
    ("cat", 0, [[0], [2, 3], [2, 4]]), ("cat", 1, [[2, 3], [3, 3], [2, 5]]), ("cat", 5, [[0], [0]]),
    ("stack", 0, []), ("stack", 0, [[2, 3], [2, 4]]), ("stack", 3, [[2, 3], [2, 3]]), ("stack", 2, [[2, 3], [3]]),
    ("stack", 5, [[2, 3], [3]]), ("stack", 0, [[], [2]]), ("stack", 1, [[], []]),
    ("hstack", 0, []), ("hstack", 0, [[2, 3], [3, 4]]), ("hstack", 0, [[2], [2, 3]]),
    ("vstack", 0, []), ("vstack", 0, [[2], [3]]), ("vstack", 0, [[2, 3], [2, 4]]),
]
for op, dim, shapes in JOIN_ERRORS:
    inputs = [make_input(s, "f32", "c") for s in shapes]
    args = [dim] if op in ("cat", "stack") else []
    if op in ("cat", "stack"):
        err_case(op, "f32", args, inputs, lambda *ts, op=op, d=dim: getattr(torch, op)(list(ts), d))
    else:
        err_case(op, "f32", args, inputs, lambda *ts, op=op: getattr(torch, op)(list(ts)))

# ---- split / chunk / unbind / tensor_split ----
for k in range(70):
    op = random.choice(["split", "split_sizes", "chunk", "unbind", "tensor_split", "tensor_split_indices",
                        "tensor_split_tensor"])
    dt = random.choice(ALL_DTS)
    nd = random.randint(1, 3)
    sizes = rand_sizes(nd, hi=6, empty=0.1)
    dim = random.randint(-nd, nd - 1)
    n = sizes[dim]
    x = make_input(sizes, dt)
    if op == "split":
        s = random.randint(1, 4) if n else random.randint(0, 2)
        emit(op, dt, [s, dim], [x], lambda t, s=s, d=dim: torch.split(t, s, d), grad=False)
    elif op == "split_sizes":
        parts = []
        left = n
        while left > 0:
            p = random.randint(0, left)
            parts.append(p)
            left -= p
        parts.append(0) if random.random() < 0.3 else None
        emit(op, dt, [shp(parts), dim], [x], lambda t, p=parts, d=dim: torch.split(t, p, d), grad=False)
    elif op == "chunk":
        c = random.randint(1, 7)
        emit(op, dt, [c, dim], [x], lambda t, c=c, d=dim: torch.chunk(t, c, d), grad=False)
    elif op == "unbind":
        emit(op, dt, [dim], [x], lambda t, d=dim: torch.unbind(t, d), grad=False)
    elif op == "tensor_split":
        c = random.randint(1, 7)
        emit(op, dt, [c, dim], [x], lambda t, c=c, d=dim: torch.tensor_split(t, c, d), grad=False)
    elif op == "tensor_split_indices":
        idx = [random.randint(-n - 2, n + 2) for _ in range(random.randint(0, 4))]
        emit(op, dt, [shp(idx), dim], [x], lambda t, i=idx, d=dim: torch.tensor_split(t, i, d), grad=False)
    else:
        if random.random() < 0.5:
            c = random.randint(1, 5)
            emit(op, dt, [f"scalar:{c}", dim], [x], lambda t, c=c, d=dim: torch.tensor_split(t, torch.tensor(c), d),
                 grad=False)
        else:
            idx = sorted(random.randint(0, n) for _ in range(random.randint(0, 3)))
            emit(op, dt, [shp(idx), dim], [x], lambda t, i=idx, d=dim: torch.tensor_split(t, torch.tensor(i, dtype=torch.long), d),
                 grad=False)
SPLIT_ERRORS = [
    ("split", [2, 5], 0, [5]), ("split", [2, 2], 0, [5]), ("split", [2, -1, 4], 0, [5]), ("split", [2, 5], -1, [2, 5]),
    ("split_int", -1, 0, [5]), ("split_int", 0, 0, [5]), ("split_int", 1, 0, []), ("split_int", 2, 1, [5]),
    ("chunk", 0, 0, [5]), ("chunk", 2, 0, []), ("chunk", 2, 2, [5]), ("unbind", None, 0, []), ("unbind", None, 2, [2, 3]),
    ("tensor_split", 0, 0, [5]), ("tensor_split", 2, 0, []), ("tensor_split", 2, 3, [5]),
    ("tensor_split_tensor", [[1]], 0, [5]),
]
for op, arg, dim, sizes in SPLIT_ERRORS:
    x = make_input(sizes, "f32", "c")
    if op == "split":
        err_case("split_sizes", "f32", [shp(arg), dim], [x], lambda t, a=arg, d=dim: torch.split(t, a, d))
    elif op == "split_int":
        err_case("split", "f32", [arg, dim], [x], lambda t, a=arg, d=dim: torch.split(t, a, d))
    elif op == "chunk":
        err_case(op, "f32", [arg, dim], [x], lambda t, a=arg, d=dim: torch.chunk(t, a, d))
    elif op == "unbind":
        err_case(op, "f32", [dim], [x], lambda t, d=dim: torch.unbind(t, d))
    elif op == "tensor_split":
        err_case(op, "f32", [arg, dim], [x], lambda t, a=arg, d=dim: torch.tensor_split(t, a, d))
    else:
        err_case(op, "f32", ["[[1]]", dim], [x], lambda t, d=dim: torch.tensor_split(t, torch.tensor([[1]]), d))

# ---- pad, mode "circular" (added after the rest, so the cases above keep their random draws) ----
for k in range(40):
    dt = random.choice(ALL_DTS)
    kdims = random.randint(1, 3)
    sizes = [random.randint(0, 2), random.randint(1, 2)] + [random.randint(1, 4) for _ in range(kdims)]
    pads = []
    for j in range(kdims):
        s = sizes[-1 - j]
        while True:  # a pad wraps at most once over what the negative pads leave (else PyTorch reads garbage)
            left, right = random.randint(-s, s), random.randint(-s, s)
            kept = s - max(-left, 0) - max(-right, 0)
            if kept >= 0 and max(left, 0) <= kept and max(right, 0) <= kept:
                break
        pads += [left, right]
    x = make_input(sizes, dt)
    emit("pad", dt, [shp(pads), "circular", "-"], [x], lambda t, p=pads: F.pad(t, p, mode="circular"))
CIRCULAR_ERRORS = [
    ([1, 1, 5], [6, 0]), ([1, 1, 5], [0, 6]), ([1, 1, 5], [-6, 0]), ([1, 1, 5], [-3, -3]), ([1, 1, 5], [1, 1, 1, 1]),
    ([2, 3], [1, 1]), ([2, 3], [1, 1, 1, 1]), ([1, 1, 0], [1, 1]), ([1, 1, 3, 4], [1, 1, 4, 0]),
    ([1, 1, 2, 3, 4], [1, 1, 1, 1, 3, 1]), ([1, 1, 2, 3, 4], [0, 0, 0, 0, -3, 0]),
]
for sizes, pads in CIRCULAR_ERRORS:
    x = make_input(sizes, "f32", "c")
    err_case("pad", "f32", [shp(pads), "circular", "-"], [x], lambda t, p=pads: F.pad(t, p, mode="circular"))
err_case("pad", "f32", ["[1,1]", "circular", "2.0"], [make_input([1, 1, 3], "f32", "c")],
         lambda t: F.pad(t, [1, 1], mode="circular", value=2.0))
out.close()
