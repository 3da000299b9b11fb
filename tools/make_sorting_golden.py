#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Golden data for strata.sorting (tests/sorting_test.cpp) from PyTorch 1.13: sort, argsort,
# topk, kthvalue, median, nanmedian, mode, cumsum, cumprod, cummax, cummin and logcumsumexp
# over random shapes (empty and 0-dim included), transposed, stepped and expanded inputs,
# many ties (long lines too, where torch's unstable sort reorders equal values), NaN and
# infinities, every dtype torch accepts; values, indices, gradients and error messages.
# Run once with /usr/bin/python3 from the repository root; CI never runs it.
import random
import torch

random.seed(5)
torch.manual_seed(5)
out = open("tests/golden/sorting.txt", "w")

DTYPES = {"bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
          "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
          "f64": torch.float64}
FLOATS = ("f16", "bf16", "f32", "f64")
# What torch 1.13's CPU kernels accept (f16 only where it is implemented).
SUPPORTED = {
    "sort": ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"],
    "topk": ["u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "kthvalue": ["u8", "i8", "i16", "i32", "i64", "f32", "f64"],
    "median_all": ["u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "nanmedian_all": ["u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "median": ["u8", "i8", "i16", "i32", "i64", "f32", "f64"],
    "nanmedian": ["u8", "i8", "i16", "i32", "i64", "f32", "f64"],
    "mode": ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"],
    "cumsum": ["bool", "u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "cumprod": ["bool", "u8", "i8", "i16", "i32", "i64", "f32", "f64"],
    "cummax": ["bool", "u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "cummin": ["bool", "u8", "i8", "i16", "i32", "i64", "bf16", "f32", "f64"],
    "logcumsumexp": ["bf16", "f32", "f64"],
}
DIFFERENTIABLE = ("f32", "f64")


def vals(t):
    t = t.detach().reshape(-1)
    if t.dtype == torch.bool:
        return " ".join(str(int(v)) for v in t.tolist())
    if t.dtype == torch.float64:
        return " ".join(repr(float(v)) for v in t.tolist())
    if t.dtype.is_floating_point:  # 9 significant digits round-trip a float32
        return " ".join("%.9g" % v for v in t.double().tolist())
    return " ".join(str(int(v)) for v in t.tolist())


def shape(s):
    return "[" + ",".join(str(int(v)) for v in s) + "]"


def values_for(name, n, op):
    """n values with many ties, NaN and infinities for floats."""
    if name == "bool":
        return [random.randint(0, 1) for _ in range(n)]
    if name == "u8":
        return [random.randint(0, 9) for _ in range(n)]
    if name in ("i8", "i16", "i32", "i64"):
        lo, hi = (-3, 3) if op == "cumprod" else (-6, 6)
        return [random.randint(lo, hi) for _ in range(n)]
    style = random.random()
    v = []
    for _ in range(n):
        if op == "cumprod":
            x = random.choice([0.0, 0.5, -1.0, 1.5, 2.0]) if style < 0.3 else random.uniform(-2, 2)
        elif style < 0.4:
            x = float(random.randint(-4, 4)) / 2  # ties
        else:
            x = random.gauss(0, 3)
        r = random.random()
        if op not in ("cumprod",) and style > 0.6:
            if r < 0.06:
                x = float("nan")
            elif r < 0.1:
                x = float("inf") * random.choice([1, -1])
        v.append(x)
    return v


def make_input(dt, sizes, op, p):
    """A base tensor and a recipe that views it as an input of these sizes."""
    nd = len(sizes)
    recipes = ["contig"]
    if nd >= 2:
        recipes.append("t")
    if nd >= 1:
        recipes += ["step", "expand"]
    recipe = random.choice(recipes)
    # torch 1.13's median(dim) reads a line as if its stride were 1 when it is 0 (garbage)
    if recipe == "expand" and op in ("median", "nanmedian"):
        recipe = "step"
    base_sizes = list(sizes)
    if recipe == "t":
        a, b = random.sample(range(nd), 2)
        base_sizes[a], base_sizes[b] = base_sizes[b], base_sizes[a]
        recipe = f"t:{a}:{b}"
    elif recipe == "step":
        d = random.randrange(nd)
        base_sizes[d] = 2 * sizes[d]
        recipe = f"step:{d}"
    elif recipe == "expand":
        d = random.randrange(nd)
        base_sizes[d] = 1
        recipe = f"expand:{d}:{sizes[d]}"
    n = 1
    for s in base_sizes:
        n *= s
    base = torch.tensor(values_for(dt, n, op), dtype=torch.float64).reshape(base_sizes).to(DTYPES[dt])
    return base, recipe, apply(base, recipe)


def apply(base, recipe):
    parts = recipe.split(":")
    if parts[0] == "t":
        return base.transpose(int(parts[1]), int(parts[2]))
    if parts[0] == "step":
        return base[(slice(None),) * int(parts[1]) + (slice(None, None, 2),)]
    if parts[0] == "expand":
        s = list(base.shape)
        s[int(parts[1])] = int(parts[2])
        return base.expand(s)
    return base


def random_sizes(op):
    nd = random.choice([0, 1, 1, 2, 2, 2, 3, 3])
    sizes = [random.randint(0, 4) if random.random() < 0.08 else random.randint(1, 5) for _ in range(nd)]
    long_dim = None
    if nd and random.random() < 0.25:  # a long line: unstable sorts and selections reorder ties
        long_dim = random.randrange(nd)
        sizes[long_dim] = random.choice([17, 24, 40, 70] if op != "topk" else [40, 70, 130])
        for k in range(nd):
            if k != long_dim:
                sizes[k] = min(sizes[k], 2)
    return sizes, long_dim


def run(op, x, p):
    if op == "sort":
        return torch.sort(x, dim=p["dim"], descending=bool(p["descending"]), stable=bool(p["stable"]))
    if op == "topk":
        return torch.topk(x, p["k"], dim=p["dim"], largest=bool(p["largest"]), sorted=bool(p["sorted"]))
    if op == "kthvalue":
        return torch.kthvalue(x, p["k"], dim=p["dim"], keepdim=bool(p["keepdim"]))
    if op == "median_all":
        return (torch.median(x),)
    if op == "nanmedian_all":
        return (torch.nanmedian(x),)
    if op == "median":
        return torch.median(x, dim=p["dim"], keepdim=bool(p["keepdim"]))
    if op == "nanmedian":
        return torch.nanmedian(x, dim=p["dim"], keepdim=bool(p["keepdim"]))
    if op == "mode":
        return torch.mode(x, dim=p["dim"], keepdim=bool(p["keepdim"]))
    if op in ("cumsum", "cumprod"):
        f = torch.cumsum if op == "cumsum" else torch.cumprod
        if "dtype" in p:
            return (f(x, p["dim"], dtype=DTYPES[p["dtype"]]),)
        return (f(x, p["dim"]),)
    if op == "cummax":
        return torch.cummax(x, p["dim"])
    if op == "cummin":
        return torch.cummin(x, p["dim"])
    if op == "logcumsumexp":
        return (torch.logcumsumexp(x, p["dim"]),)
    raise ValueError(op)


def params_for(op, sizes, dt, long_dim):
    nd = len(sizes)
    p = {}
    if op in ("median_all", "nanmedian_all"):
        return p
    p["dim"] = random.randrange(-max(nd, 1), max(nd, 1))
    if long_dim is not None and random.random() < 0.8:
        p["dim"] = long_dim - random.choice([0, nd])
    n = sizes[p["dim"]] if nd else 1
    if op == "sort":
        p["descending"] = random.randint(0, 1)
        p["stable"] = random.randint(0, 1)
    elif op == "topk":
        p["k"] = random.choice([0, 1, 1, 2]) if n >= 64 else random.randint(0, n)
        p["largest"] = random.randint(0, 1)
        p["sorted"] = 1 if random.random() < 0.7 else 0
    elif op == "kthvalue":
        p["k"] = random.randint(1, max(n, 1))
        p["keepdim"] = random.randint(0, 1)
    elif op in ("median", "nanmedian", "mode"):
        p["keepdim"] = random.randint(0, 1)
    elif op in ("cumsum", "cumprod") and random.random() < 0.25:
        p["dtype"] = random.choice(["f64", "f32", "i32", "i8"] if dt != "bool" else ["f64", "i32", "i64"])
    return p


def reduces_along(op):
    return op in ("kthvalue", "median", "nanmedian", "mode")


cases = 0
ops = list(SUPPORTED)
for case in range(600):
    op = ops[case % len(ops)]
    dt = random.choice(SUPPORTED[op])
    sizes, long_dim = random_sizes(op)
    if op in ("median_all", "nanmedian_all") and random.random() < 0.05:
        sizes = [0]
    p = params_for(op, sizes, dt, long_dim)
    n = (sizes[p["dim"]] if sizes else 1) if "dim" in p else 1
    if reduces_along(op) and n == 0:
        continue  # an error case, below
    base, recipe, x = make_input(dt, sizes, op, p)
    res = run(op, x, p)
    grad = None
    out_dt = res[0].dtype
    if dt in DIFFERENTIABLE and out_dt.is_floating_point and x.numel() > 0:
        xg = x.detach().requires_grad_()
        y = run(op, xg, p)[0]
        w = torch.randn(y.shape, dtype=torch.float64).to(out_dt)
        (y * w).sum().backward()
        grad = (w, xg.grad)
    head = " ".join(f"{k}={v}" for k, v in p.items())
    print(f"case {op} {dt} {shape(sizes)} {recipe} {head}".rstrip(), file=out)
    print(f"x {shape(base.shape)} {vals(base)}".rstrip(), file=out)
    print(f"v {shape(res[0].shape)} {vals(res[0])}".rstrip(), file=out)
    if len(res) > 1:
        print(f"i {vals(res[1])}".rstrip(), file=out)
    if grad is not None:
        print(f"w {vals(grad[0])}".rstrip(), file=out)
        print(f"grad {vals(grad[1])}".rstrip(), file=out)
    print("end", file=out)
    cases += 1


# ---- error messages ----
def error(line, f):
    try:
        f()
    except (RuntimeError, IndexError) as e:
        print(f"error {type(e).__name__} {line} | {str(e)}", file=out)
        return
    raise AssertionError("no error: " + line)


z23 = torch.zeros(2, 3)
error("sort [2,3] dim=2", lambda: torch.sort(z23, 2))
error("sort [] dim=1", lambda: torch.sort(torch.tensor(1.0), 1))
error("topk [2,3] k=4 dim=1", lambda: torch.topk(z23, 4, 1))
error("topk [2,3] k=-1 dim=1", lambda: torch.topk(z23, -1, 1))
error("topk [] k=2 dim=0", lambda: torch.topk(torch.tensor(1.0), 2, 0))
error("topk [2,3] k=1 dim=-3", lambda: torch.topk(z23, 1, -3))
error("kthvalue [2,3] k=4 dim=-1", lambda: torch.kthvalue(z23, 4, -1))
error("kthvalue [2,3] k=0 dim=0", lambda: torch.kthvalue(z23, 0, 0))
error("kthvalue [2,3] k=3 dim=-2", lambda: torch.kthvalue(z23, 3, -2))
error("kthvalue [] k=2 dim=0", lambda: torch.kthvalue(torch.tensor(1.0), 2, 0))
error("kthvalue [0,3] k=1 dim=0", lambda: torch.kthvalue(torch.zeros(0, 3), 1, 0))
error("kthvalue [3,0] k=5 dim=-1", lambda: torch.kthvalue(torch.zeros(3, 0), 5, -1))
error("median [3,0] dim=1", lambda: torch.median(torch.zeros(3, 0), 1))
error("median [0] dim=0", lambda: torch.median(torch.zeros(0), 0))
error("median [3] dim=1", lambda: torch.median(torch.zeros(3), 1))
error("nanmedian [3,0] dim=-1", lambda: torch.nanmedian(torch.zeros(3, 0), -1))
error("mode [0,2] dim=0", lambda: torch.mode(torch.zeros(0, 2), 0))
error("mode [] dim=-2", lambda: torch.mode(torch.tensor(1.0), -2))
error("cumsum [2,3] dim=2", lambda: torch.cumsum(z23, 2))
error("cumprod [] dim=1", lambda: torch.cumprod(torch.tensor(1.0), 1))
error("cummax [2,3] dim=-3", lambda: torch.cummax(z23, -3))
error("cummin [4] dim=1", lambda: torch.cummin(torch.zeros(4), 1))
error("logcumsumexp [2,3] dim=5", lambda: torch.logcumsumexp(z23, 5))
# a saved output modified in place, then backward
def modified_indices():
    x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = torch.sort(x)
    i.add_(0)
    v.sum().backward()
error("sort_backward_after_inplace_indices [3]", modified_indices)
print(f"cases {cases}", file=out)
