#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Golden data for strata.indexing (tests/indexing_test.cpp) from PyTorch 1.13: index_select,
# gather, scatter (tensor and value), scatter_add, take, masked_fill, masked_select, nonzero,
# index_add and advanced indexing (index and index_put, accumulate or not) over random shapes
# (empty and 0-dim included), dtypes, negative and repeated indices, and inputs that are
# transposed, stepped or expanded views; gradients of every differentiable case; and the
# error messages. Run once with /usr/bin/python3 from the repository root; CI never runs it.
#
# Format: blocks of lines ending with "end".
#   case <op> <key>=<value>...   (error <op> ... for a case that must throw)
#   in <name> <dtype> <recipe> [<base sizes>] <values...>   an input: a base tensor of those
#       sizes and values (row-major; complex as re im pairs) viewed by the recipe: plain, t
#       (dims reversed), step (every other element of the last dim), expand:<s0>,<s1>,...
#   w <dtype> [<sizes>] <values...>   the gradient fed to backward (differentiable cases)
#   out <dtype> [<sizes>] <values...>
#   grad <name> [<sizes>] <values...> the gradient of input <name>'s base
#   msg <text>                       the exception's message (error blocks)
import random
import torch

random.seed(13)
torch.manual_seed(13)
out = open("tests/golden/indexing.txt", "w")

DTYPES = {"f32": torch.float32, "f64": torch.float64, "c64": torch.complex64, "c128": torch.complex128,
          "i64": torch.int64, "i32": torch.int32, "bool": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}
DIFF = {"f32", "f64", "c64", "c128"}


def shape_str(s):
    return "[" + ",".join(str(int(v)) for v in s) + "]"


def vals(t):
    t = t.detach().reshape(-1)
    if t.is_complex():
        return " ".join(f"{float(v.real)!r} {float(v.imag)!r}" for v in t.tolist())
    if t.dtype == torch.bool:
        return " ".join("1" if v else "0" for v in t.tolist())
    if t.dtype.is_floating_point:
        return " ".join(repr(float(v)) for v in t.tolist())
    return " ".join(str(int(v)) for v in t.tolist())


def random_values(shape, dt, zeros=0.0):
    if dt.is_complex:
        t = torch.randn(shape, dtype=torch.complex128).to(dt)
    elif dt.is_floating_point:
        t = torch.randn(shape, dtype=torch.float64).to(dt)
    elif dt == torch.bool:
        t = torch.rand(shape) < 0.5
    else:
        t = torch.randint(-9, 10, shape).to(dt)
    if zeros:
        t[torch.rand(shape) < zeros] = 0
    return t


class Input:
    """A base tensor and a view of it (the recipe), as the C++ side rebuilds it."""

    def __init__(self, base, recipe, view):
        self.base, self.recipe, self.view = base, recipe, view

    def line(self, name):
        return f"in {name} {NAMES[self.base.dtype]} {self.recipe} {shape_str(self.base.shape)} {vals(self.base)}"


def make(shape, dt, recipes=("plain", "t", "step", "expand"), values=None):
    """A tensor of `shape` viewed from a base by a random recipe (values: fixed contents)."""
    shape = list(shape)
    recipe = random.choice(recipes)
    if values is not None:
        recipe = "plain" if recipe == "expand" else recipe
    if recipe == "t" and len(shape) >= 2:
        base = values.permute(*reversed(range(len(shape)))).contiguous() if values is not None else \
            random_values(list(reversed(shape)), dt)
        return Input(base, "t", base.permute(*reversed(range(len(shape)))))
    if recipe == "step" and len(shape) >= 1:
        big = shape[:-1] + [2 * shape[-1]]
        base = random_values(big, dt) if values is None else torch.zeros(big, dtype=values.dtype)
        if values is not None:
            base[..., ::2] = values
        return Input(base, "step", base[..., ::2])
    if recipe == "expand" and any(s != 1 for s in shape):
        small = [1 if (s != 1 and random.random() < 0.5) else s for s in shape]
        if small == shape:
            small[shape.index(next(s for s in shape if s != 1))] = 1
        lead = 0
        while lead < len(small) - 1 and small[lead] == 1 and random.random() < 0.5:
            lead += 1
        base = random_values(small[lead:], dt)
        return Input(base, "expand:" + ",".join(str(s) for s in shape), base.expand(shape))
    base = random_values(shape, dt) if values is None else values.clone()
    return Input(base, "plain", base)


def emit(op, params, inputs, fn, grad_names=(), error=False):
    """Runs fn(views...) in torch and writes the case (or, when it throws, an error case)."""
    for n in grad_names:
        if NAMES[inputs[n].base.dtype] in DIFF:
            inputs[n].base.requires_grad_(True)
    views = {}
    for n, x in inputs.items():
        v = x.view
        if x.base.requires_grad:
            v = rebuild(x)
        views[n] = v
    head = " ".join([op] + [f"{k}={v}" for k, v in params.items()])
    try:
        y = fn(**views)
    except Exception as e:  # noqa: BLE001 - every torch error is a golden message
        if not error:
            raise
        msg = str(e).split("\n")[0]
        print(f"error {head}", file=out)
        for n, x in inputs.items():
            print(x.line(n), file=out)
        print(f"msg {msg}", file=out)
        print("end", file=out)
        return
    assert not error, (op, params)
    print(f"case {head}", file=out)
    for n, x in inputs.items():
        print(x.line(n), file=out)
    grads = [n for n in grad_names if inputs[n].base.requires_grad]
    gs = None
    if grads and y.requires_grad and y.numel() > 0:
        w = random_values(list(y.shape), y.dtype)
        try:
            gs = torch.autograd.grad(y, [inputs[n].base for n in grads], w, allow_unused=True)
            print(f"w {NAMES[y.dtype]} {shape_str(y.shape)} {vals(w)}", file=out)
        except RuntimeError:  # torch 1.13's scatter backward with an empty index
            gs = None
    if gs is None:
        grads, gs = [], []
    print(f"out {NAMES[y.dtype]} {shape_str(y.shape)} {vals(y)}", file=out)
    for n, g in zip(grads, gs):
        if g is None:
            g = torch.zeros_like(inputs[n].base)
        print(f"grad {n} {shape_str(g.shape)} {vals(g)}", file=out)
    print("end", file=out)


def rebuild(x):
    b = x.base
    if x.recipe == "t":
        return b.permute(*reversed(range(b.dim())))
    if x.recipe == "step":
        return b[..., ::2]
    if x.recipe.startswith("expand:"):
        return b.expand([int(s) for s in x.recipe[7:].split(",") if s])
    return b


def rand_shape(lo=0, hi=3, zero=0.1, maxs=4):
    nd = random.randint(lo, hi)
    return [random.randint(0, maxs) if random.random() < zero else random.randint(1, maxs) for _ in range(nd)]


def data_dtype(allow_bool=True):
    names = ["f32", "f64", "c64", "c128", "i64", "i32"] + (["bool"] if allow_bool else [])
    return random.choice(names)


def scalar_for(dt):
    if dt == "bool":
        return True
    if dt in ("i64", "i32"):
        return random.randint(-9, 9)
    if dt in ("c64", "c128"):
        return complex(round(random.uniform(-3, 3), 2), round(random.uniform(-3, 3), 2))
    return round(random.uniform(-3, 3), 3)


def scalar_str(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, complex):
        return f"{v.real!r}:{v.imag!r}"
    return repr(v)


def index_tensor(shape, lo, hi, dt="i64", unique_along=None):
    t = torch.randint(lo, hi, shape) if hi > lo else torch.zeros(shape, dtype=torch.int64)
    return t.to(DTYPES[dt])


# ---- index_select ----
for _ in range(40):
    dt = data_dtype()
    shape = rand_shape(0, 3)
    nd = len(shape)
    dim = random.randrange(-nd, nd) if nd else random.choice([0, -1])
    size = shape[dim] if nd else 1
    n = random.randint(0, 5) if size > 0 else 0
    if nd == 0:
        n = 1
    idx = index_tensor([n], 0, size, random.choice(["i64", "i32"]))
    if n == 1 and random.random() < 0.3:
        idx = idx.reshape([])
    inputs = {"x": make(shape, DTYPES[dt]), "index": make(list(idx.shape), idx.dtype, ("plain", "step"), idx)}
    emit("index_select", {"dim": dim}, inputs, lambda x, index: torch.index_select(x, dim, index), ["x"])

# ---- gather ----
for _ in range(40):
    dt = data_dtype()
    shape = rand_shape(1, 3)
    nd = len(shape)
    dim = random.randrange(-nd, nd)
    d = dim % nd
    ishape = [random.randint(0, s) for s in shape]
    ishape[d] = random.randint(0, 4) if shape[d] > 0 else 0
    idx = index_tensor(ishape, 0, shape[d])
    inputs = {"x": make(shape, DTYPES[dt]), "index": make(ishape, torch.int64, ("plain", "t", "step"), idx)}
    emit("gather", {"dim": dim}, inputs, lambda x, index: torch.gather(x, dim, index), ["x"])

# ---- scatter (tensor source: distinct positions along dim), scatter value, scatter_add ----
def scatter_index(shape, d, unique):
    ishape = [random.randint(0, s) for s in shape]
    ishape[d] = random.randint(0, shape[d]) if unique else random.randint(0, 4)
    if shape[d] == 0:
        ishape[d] = 0
    if not unique:
        return index_tensor(ishape, 0, shape[d])
    others = [s for i, s in enumerate(ishape) if i != d]
    count = 1
    for s in others:
        count *= s
    rows = [torch.randperm(shape[d])[:ishape[d]] for _ in range(count)]
    flat = torch.stack(rows) if rows else torch.zeros(0, ishape[d], dtype=torch.int64)
    return flat.reshape(others + [ishape[d]]).movedim(-1, d).contiguous()


for op in ["scatter", "scatter_value", "scatter_add"] * 20:
    dt = data_dtype(allow_bool=op != "scatter_add")
    shape = rand_shape(1, 3)
    nd = len(shape)
    dim = random.randrange(-nd, nd)
    d = dim % nd
    idx = scatter_index(shape, d, op != "scatter_add")
    if idx.numel() and random.random() < 0.3:
        idx = idx.contiguous()
    inputs = {"self": make(shape, DTYPES[dt]), "index": make(list(idx.shape), torch.int64, ("plain", "t"), idx)}
    if op == "scatter_value":
        v = scalar_for(dt)
        emit("scatter", {"dim": dim, "value": scalar_str(v)}, inputs,
             lambda self, index: torch.scatter(self, dim, index, v), ["self"])
        continue
    sshape = [s + random.randint(0, 1) for s in idx.shape]
    inputs["src"] = make(sshape, DTYPES[dt])
    f = torch.scatter if op == "scatter" else torch.scatter_add
    emit(op, {"dim": dim}, inputs, lambda self, index, src: f(self, dim, index, src), ["self", "src"])

# ---- take ----
for _ in range(25):
    dt = data_dtype()
    shape = rand_shape(0, 3, zero=0.05)
    n = 1
    for s in shape:
        n *= s
    ishape = rand_shape(0, 2)
    idx = index_tensor(ishape, -n, n) if n else torch.zeros([0], dtype=torch.int64)
    inputs = {"x": make(shape, DTYPES[dt]), "index": make(list(idx.shape), torch.int64, ("plain", "t"), idx)}
    emit("take", {}, inputs, lambda x, index: torch.take(x, index), ["x"])

# ---- masked_fill, masked_select (masks broadcast with the input) ----
def mask_shape(shape):
    m = [1 if random.random() < 0.3 else s for s in shape]
    while m and random.random() < 0.3:
        m = m[1:]
    if random.random() < 0.15:
        m = [random.randint(1, 2)] + m
    return m


for op in ["masked_fill", "masked_fill_tensor", "masked_select"] * 15:
    dt = data_dtype()
    shape = rand_shape(0, 3)
    mshape = mask_shape(shape)
    inputs = {"x": make(shape, DTYPES[dt]), "mask": make(mshape, torch.bool)}
    if op == "masked_select":
        emit(op, {}, inputs, lambda x, mask: torch.masked_select(x, mask), ["x"])
    elif op == "masked_fill":
        v = scalar_for(dt)
        emit(op, {"value": scalar_str(v)}, inputs, lambda x, mask: torch.masked_fill(x, mask, v), ["x"])
    else:
        inputs["value"] = make([], DTYPES[dt], ("plain",))
        emit("masked_fill", {}, inputs, lambda x, mask, value: torch.masked_fill(x, mask, value), ["x", "value"])

# ---- nonzero ----
for _ in range(20):
    dt = data_dtype()
    shape = rand_shape(0, 3)
    base = random_values(shape, DTYPES[dt], zeros=0.5)
    inputs = {"x": make(shape, DTYPES[dt], ("plain", "t", "step"), base)}
    emit("nonzero", {}, inputs, lambda x: torch.nonzero(x))

# ---- index_add (repeated indices) ----
for _ in range(30):
    dt = data_dtype(allow_bool=False)
    shape = rand_shape(1, 3)
    nd = len(shape)
    dim = random.randrange(-nd, nd)
    d = dim % nd
    n = random.randint(0, 5) if shape[d] else 0
    idx = index_tensor([n], 0, shape[d], random.choice(["i64", "i32"]))
    sshape = list(shape)
    sshape[d] = n
    alpha = random.choice([1, 2, -1]) if dt in ("i64", "i32") else random.choice([1, 0.5, -2.0])
    inputs = {"self": make(shape, DTYPES[dt]), "index": make([n], idx.dtype, ("plain", "step"), idx),
              "source": make(sshape, DTYPES[dt])}
    emit("index_add", {"dim": dim, "alpha": scalar_str(alpha)}, inputs,
         lambda self, index, source: torch.index_add(self, dim, index, source, alpha=alpha), ["self", "source"])

# ---- advanced indexing ----
# Entries: i:<int>  s:<start>:<stop>:<step> (n for unset)  e (ellipsis)  N (none)
#          t<k> (input idx<k>, int64 or int32)  m<k> (input mask<k>)
def random_entries(shape, allow_slices=True, advanced=True, unique=False):
    """Entries for a tensor of `shape` and the torch index tuple, plus the named inputs."""
    nd = len(shape)
    tokens, pyidx, inputs = [], [], {}
    d = 0
    ntensor = 0
    bshape = random.choice([[random.randint(0, 3)], [random.randint(1, 3), 1], [random.randint(1, 2), random.randint(1, 3)]])
    used_ellipsis = False
    while d < nd:
        r = random.random()
        if allow_slices and r < 0.1:
            tokens.append("N")
            pyidx.append(None)
            continue
        if allow_slices and not used_ellipsis and r < 0.15 and d > 0:
            used_ellipsis = True
            skip = random.randint(0, nd - d)
            tokens.append("e")
            pyidx.append(Ellipsis)
            d += skip
            continue
        if allow_slices and r < 0.45:
            start = random.choice([None, random.randint(-4, 4)])
            stop = random.choice([None, random.randint(-4, 5)])
            step = random.choice([1, 1, 2, 3])
            tokens.append("s:" + ":".join("n" if v is None else str(v) for v in (start, stop, step)))
            pyidx.append(slice(start, stop, step))
            d += 1
            continue
        if allow_slices and r < 0.55 and shape[d] > 0:
            i = random.randint(-shape[d], shape[d] - 1)
            tokens.append(f"i:{i}")
            pyidx.append(i)
            d += 1
            continue
        if not allow_slices and ntensor and random.random() < 0.3:
            break  # the remaining dims are not indexed
        if not advanced or (unique and ntensor):
            tokens.append("s:n:n:1")
            pyidx.append(slice(None))
            d += 1
            continue
        if r < 0.75 and d + 1 <= nd:
            k = ntensor
            ntensor += 1
            span = random.choice([1, 1, 2]) if d + 2 <= nd else 1
            mshape = shape[d:d + span]
            m = make(mshape, torch.bool, ("plain", "t"))
            inputs[f"mask{k}"] = m
            tokens.append(f"m{k}")
            pyidx.append(("mask", k))
            d += span
            if span > 1:
                # torch 1.13 moves on by one dim after any mask, so that entries after a
                # multi-dim mask apply inside it (fixed in later versions): end the list here
                break
            continue
        k = ntensor
        ntensor += 1
        if unique:
            n = random.randint(0, shape[d])
            t = torch.randperm(shape[d])[:n]
            t = torch.where(torch.rand(n) < 0.3, t - shape[d], t)
        else:
            tshape = [s if random.random() < 0.7 else 1 for s in bshape]
            while tshape and random.random() < 0.2:
                tshape = tshape[1:]
            if not tshape:
                tshape = [1]
            t = torch.randint(-shape[d], shape[d], tshape) if shape[d] else torch.zeros(tshape, dtype=torch.int64)
            if shape[d] == 0:
                t = torch.zeros([0], dtype=torch.int64)
        dtn = random.choice([torch.int64, torch.int64, torch.int32])
        x = make(list(t.shape), dtn, ("plain", "t", "step"), t.to(dtn))
        inputs[f"idx{k}"] = x
        tokens.append(f"t{k}")
        pyidx.append(("idx", k))
        d += 1
    return tokens, pyidx, inputs


def resolve(pyidx, views):
    out = []
    for p in pyidx:
        if isinstance(p, tuple):
            t = views[f"{p[0]}{p[1]}"]
            out.append(t.long() if t.dtype == torch.int32 else t)
        else:
            out.append(p)
    return tuple(out)


for _ in range(60):
    dt = data_dtype()
    shape = rand_shape(1, 3)
    tokens, pyidx, extra = random_entries(shape)
    inputs = {"x": make(shape, DTYPES[dt])}
    inputs.update(extra)
    names = list(inputs)

    def run_index(**views):
        return views["x"][resolve(pyidx, views)]

    try:
        run_index(**{n: i.view for n, i in inputs.items()})
    except (IndexError, RuntimeError):
        continue  # an entry list torch rejects (broadcast, sizes): the error cases cover those
    emit("index", {"entries": ",".join(tokens)}, inputs, run_index, ["x"])

for _ in range(60):
    dt = data_dtype()
    accumulate = random.random() < 0.5
    shape = rand_shape(1, 3)
    # torch's index_put_ takes index tensors and masks only (accumulate); setitem the rest
    tokens, pyidx, extra = random_entries(shape, allow_slices=not accumulate, unique=not accumulate)
    inputs = {"x": make(shape, DTYPES[dt], ("plain", "t", "step"))}
    inputs.update(extra)
    try:
        rshape = list(inputs["x"].view[resolve(pyidx, {n: i.view for n, i in inputs.items()})].shape)
    except (IndexError, RuntimeError):
        continue
    vshape = list(rshape)
    while vshape and random.random() < 0.3:
        vshape = vshape[1:]
    vshape = [1 if random.random() < 0.2 else s for s in vshape]
    inputs["values"] = make(vshape, DTYPES[dt])

    def run_put(**views):
        idx = resolve(pyidx, views)
        if accumulate:
            return views["x"].index_put(idx, views["values"], True)
        y = views["x"].clone()
        y[idx] = views["values"]
        return y

    emit("index_put", {"entries": ",".join(tokens), "accumulate": int(accumulate)}, inputs, run_put, ["x", "values"])

# ---- errors (each with PyTorch's message) ----
def L(v, dt=torch.int64):
    return torch.tensor(v, dtype=dt)


def plain(t):
    return Input(t, "plain", t)


def err(op, params, tensors, fn):
    emit(op, params, {n: plain(t) for n, t in tensors.items()}, fn, error=True)


x34 = torch.arange(12.).view(3, 4)
err("index_select", {"dim": 0}, {"x": x34, "index": L([5])}, lambda x, index: torch.index_select(x, 0, index))
err("index_select", {"dim": 0}, {"x": x34, "index": L([-1])}, lambda x, index: torch.index_select(x, 0, index))
err("index_select", {"dim": 1}, {"x": x34, "index": L([4])}, lambda x, index: torch.index_select(x, 1, index))
err("index_select", {"dim": 1}, {"x": x34, "index": L([[0]])}, lambda x, index: torch.index_select(x, 1, index))
err("index_select", {"dim": 2}, {"x": x34, "index": L([0])}, lambda x, index: torch.index_select(x, 2, index))
err("index_select", {"dim": 0}, {"x": x34, "index": L([0.], torch.float32)}, lambda x, index: torch.index_select(x, 0, index))
err("index_select", {"dim": 0}, {"x": torch.zeros(0, 3), "index": L([0])},
    lambda x, index: torch.index_select(x, 0, index))
err("index_select", {"dim": 0}, {"x": torch.zeros(3), "index": L([3])}, lambda x, index: torch.index_select(x, 0, index))
err("gather", {"dim": 0}, {"x": x34, "index": L([[5]])}, lambda x, index: torch.gather(x, 0, index))
err("gather", {"dim": 0}, {"x": x34, "index": L([[-1]])}, lambda x, index: torch.gather(x, 0, index))
err("gather", {"dim": 0}, {"x": x34, "index": L([0])}, lambda x, index: torch.gather(x, 0, index))
err("gather", {"dim": -2}, {"x": x34, "index": torch.zeros(1, 5, dtype=torch.int64)},
    lambda x, index: torch.gather(x, -2, index))
err("gather", {"dim": 0}, {"x": x34, "index": L([[0]], torch.int32)}, lambda x, index: torch.gather(x, 0, index))
err("gather", {"dim": 3}, {"x": x34, "index": L([[0]])}, lambda x, index: torch.gather(x, 3, index))
err("scatter", {"dim": 0}, {"self": x34, "index": L([[5]]), "src": x34},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": torch.zeros(2, 5, dtype=torch.int64), "src": x34},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": torch.zeros(2, 3, dtype=torch.int64), "src": x34[:1]},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": torch.zeros(2, 3, dtype=torch.int64), "src": x34[0]},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": torch.zeros(2, dtype=torch.int64), "src": x34},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": L([[0]]), "src": x34.double()},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0}, {"self": x34, "index": L([[0]], torch.int32), "src": x34.double()},
    lambda self, index, src: torch.scatter(self, 0, index, src))
err("scatter", {"dim": 0, "value": "1.5"}, {"self": x34, "index": torch.zeros(2, 5, dtype=torch.int64)},
    lambda self, index: torch.scatter(self, 0, index, 1.5))
err("scatter", {"dim": 0, "value": "1.5"}, {"self": x34, "index": L([[-4]])},
    lambda self, index: torch.scatter(self, 0, index, 1.5))
err("scatter_add", {"dim": 0}, {"self": x34, "index": L([[3]]), "src": x34},
    lambda self, index, src: torch.scatter_add(self, 0, index, src))
err("scatter_add", {"dim": 0}, {"self": x34, "index": torch.zeros(1, 2, 3, dtype=torch.int64), "src": x34},
    lambda self, index, src: torch.scatter_add(self, 0, index, src))
err("scatter_add", {"dim": 0}, {"self": x34, "index": L([[0]]), "src": x34.double()},
    lambda self, index, src: torch.scatter_add(self, 0, index, src))
err("take", {}, {"x": x34, "index": L([12])}, lambda x, index: torch.take(x, index))
err("take", {}, {"x": x34, "index": L([-13])}, lambda x, index: torch.take(x, index))
err("take", {}, {"x": x34, "index": L([1], torch.int32)}, lambda x, index: torch.take(x, index))
err("take", {}, {"x": torch.zeros(0), "index": L([0])}, lambda x, index: torch.take(x, index))
m4 = L([True, False, True, False], torch.bool)
err("masked_fill", {"value": "1.0"}, {"x": x34, "mask": m4.view(4, 1)}, lambda x, mask: x.masked_fill(mask, 1.0))
err("masked_fill", {}, {"x": x34, "mask": m4, "value": L([1.])}, lambda x, mask, value: x.masked_fill(mask, value))
err("masked_select", {}, {"x": x34, "mask": m4[:3]}, lambda x, mask: x.masked_select(mask))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([5]), "source": x34[:1]},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([0]), "source": x34[:2]},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([0, 1]), "source": x34[:2, :3]},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([0, 1]), "source": x34[:2].double()},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([[0, 1]]), "source": x34[:2]},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([0.], torch.float32), "source": x34[:1]},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 1, "alpha": "1"}, {"self": x34, "index": L([0]), "source": torch.ones(3)},
    lambda self, index, source: torch.index_add(self, 1, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": x34, "index": L([0]), "source": torch.ones(1, 2, 4)},
    lambda self, index, source: torch.index_add(self, 0, index, source))
err("index_add", {"dim": 0, "alpha": "1"}, {"self": torch.zeros(3), "index": L([0, 0]), "source": torch.ones(2, 2)},
    lambda self, index, source: torch.index_add(self, 0, index, source))
x234 = torch.arange(24.).view(2, 3, 4)
mask3 = L([True, False, True], torch.bool)
err("index", {"entries": "m0"}, {"x": x234, "mask0": mask3}, lambda x, mask0: x[mask0])
err("index", {"entries": "s:n:n:1,m0"}, {"x": x234, "mask0": L([True, False], torch.bool)},
    lambda x, mask0: x[:, mask0])
err("index", {"entries": "m0"}, {"x": x234, "mask0": torch.ones(2, 4, dtype=torch.bool)}, lambda x, mask0: x[mask0])
err("index", {"entries": "N,m0"}, {"x": x234, "mask0": torch.ones(2, 4, dtype=torch.bool)},
    lambda x, mask0: x[None, mask0])
err("index", {"entries": "i:0,i:0,i:0,i:0"}, {"x": x234}, lambda x: x[0, 0, 0, 0])
err("index", {"entries": "t0"}, {"x": x234, "idx0": L([2])}, lambda x, idx0: x[idx0])
err("index", {"entries": "s:n:n:1,t0"}, {"x": x234, "idx0": L([-4])}, lambda x, idx0: x[:, idx0])
err("index", {"entries": "s:n:n:1,t0,t1"}, {"x": x234, "idx0": L([0, 1]), "idx1": L([0, 1, 2])},
    lambda x, idx0, idx1: x[:, idx0, idx1])
err("index", {"entries": "t0,s:n:n:1,t1"}, {"x": x234, "idx0": L([0]), "idx1": L([[4]])},
    lambda x, idx0, idx1: x[idx0, :, idx1])
err("index", {"entries": "i:2"}, {"x": x234}, lambda x: x[2])
err("index", {"entries": "s:n:n:1,i:-4"}, {"x": x234}, lambda x: x[:, -4])
err("index", {"entries": "N,s:n:n:1,s:n:n:1,i:4"}, {"x": x234}, lambda x: x[None, :, :, 4])
err("index", {"entries": "s:n:n:0"}, {"x": x234}, lambda x: x[::0])
err("index", {"entries": "s:n:n:-1"}, {"x": x234}, lambda x: x[::-1])
err("index_put", {"entries": "t0", "accumulate": 0}, {"x": x234, "idx0": L([0, 1]), "values": torch.ones(3)},
    lambda x, idx0, values: x.clone().index_put_((idx0,), values))
err("index_put", {"entries": "t0", "accumulate": 1}, {"x": x234, "idx0": L([0, 1]), "values": torch.ones(2, 2, 3, 4)},
    lambda x, idx0, values: x.clone().index_put_((idx0,), values, True))
err("index_put", {"entries": "t0", "accumulate": 0}, {"x": x234, "idx0": L([0, 2]), "values": torch.ones(1)},
    lambda x, idx0, values: x.clone().index_put_((idx0,), values))
err("index_put", {"entries": "t0", "accumulate": 0}, {"x": x234, "idx0": L([0]), "values": torch.ones(1).double()},
    lambda x, idx0, values: x.clone().index_put_((idx0,), values))
err("index_put", {"entries": "m0", "accumulate": 1}, {"x": x234, "mask0": L([True, False, True], torch.bool),
                                                      "values": torch.ones(1)},
    lambda x, mask0, values: x.clone().index_put_((mask0,), values, True))
out.close()
