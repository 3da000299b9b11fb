#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden data for strata.linalg (einsum, matmul and friends), from PyTorch 1.13 (Debian's python3-torch).

Run from anywhere:  /usr/bin/python3 tools/make_linalg_golden.py
Writes tests/golden/linalg_einsum.txt, linalg_einsum_grad.txt, linalg_einsum_large.txt and
linalg_matmul.txt, which tests/linalg_golden_test.cpp reads. CI never runs this: the outputs are
committed. The output is a function of SEED alone (Python's random draws everything).

Record format (one item a line; a record ends with "end"):
  case <id> <fn> <ref>            fn: einsum matmul mm bmm mv dot outer tensordot
                                  ref: torch (torch's own result) or emulated (see below)
  eq "<equation>"                 einsum: the equation between the first and last quote
  api vector|variadic             einsum: which C++ overload the case goes through
  dims <n> | dims [..] [..]       tensordot
  op <dtype> [base] <views> : <values> | zeros | gen <seed>
      an operand: contiguous base data of sizes [base] in row-major order, then the views
      ('|'-separated, '-' for none) that turn the base into the operand: permute:[p],
      transpose:a:b, t, narrow:d:start:length, expand:[sizes], asstrided:[sizes]:[strides]:offset
      (asstrided only on the base itself, which is then 1-D). "gen <seed>" is the LCG of
      lcg_values() below; "zeros" fills zeros (error cases).
  out <dtype> [sizes] [sample <k>] : <values>
                                  torch's result (with "sample k": elements 0, k, 2k, ... of it;
                                  its dtype: torch's einsum sums integer and bool operands
                                  through sum(), which returns int64; values always fit the
                                  operands' dtype, and for bool compare as value != 0)
  mag [sample <k>] : <values>                  per output element, the sum of |products| (einsum of |operands|):
                                  the scale of a float tolerance
  w : <values>                    the weight of loss = sum(result * w)
  grad <k> : <values>             d loss / d (base of operand k)
  gmag <k> : <values>             the sum of |terms| of that gradient
  error <message>                 torch's exact RuntimeError/IndexError message
Values: floats as Python/NumPy shortest repr (float32 and float16 as their own shortest repr),
complex as re,im, bool as 0/1.

Dtypes: torch 1.13's CPU einsum takes float32/64, complex64/128, int8/16/32/64, uint8 and
bfloat16 everywhere, but bool and float16 only when no two operands are contracted (the
contraction goes through bmm: '"bmm" not implemented for 'Bool'/'Half''). For bool and float16
the file holds torch's results for the equations it computes, and a few contractions marked
"emulated": float16 computed in float32 and rounded, bool in int64 then != 0.

torch's integer einsum also fails where an operand's summed-out label turns it into int64 (through
sum()) before a contraction with another operand ("expected scalar type Long but found Char"):
those few equations are computed in int64 and marked "emulated" too. Debian's torch 1.13 returns 0
for every complex dot (torch.dot, matmul of two 1-D tensors): those cases hold a broadcast-and-sum
result, marked "emulated".

Every torch result is checked against a naive loop evaluation here (a torch bug would stop the
generator), and every einsum gradient against central differences (exact: einsum is linear in
each operand).
"""
import itertools
import math
import os
import random
import string

import numpy as np
import torch
from torch import _VF

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")
SEED = 20
rng = random.Random(SEED)

DT = {"f32": torch.float32, "f64": torch.float64, "c64": torch.complex64, "c128": torch.complex128,
      "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
      "bool": torch.bool, "f16": torch.float16, "bf16": torch.bfloat16}
DT_NAME = {v: k for k, v in DT.items()}
FLOATS = {"f32", "f64", "f16", "bf16"}
COMPLEX = {"c64", "c128"}
INTS = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
        "u8": (0, 255)}
# Value cases per dtype (einsum), and emulated contractions for the dtypes torch rejects them for.
EINSUM_COUNTS = {"f32": 50, "f64": 50, "c64": 18, "c128": 18, "i8": 14, "i16": 14, "i32": 16, "i64": 22,
                 "u8": 14, "bool": 16, "f16": 16, "bf16": 18}
EMULATED = {"bool": 6, "f16": 6, "i8": 3, "i16": 3, "i32": 3, "i64": 3, "u8": 3}
REJECTED = {}  # dtype: {torch's message: how many drawn equations it rejected}
N_GRAD = 60
MAX_NUMEL = 200
LARGE_STEP = 13
MAX_WORK = 3000


# ---- formatting ----
def shape_tok(s):
    return "[" + ",".join(str(int(x)) for x in s) + "]"


def fmt_real(x, dt):
    if dt in ("f32", "c64"):
        s = str(np.float32(x))
    elif dt == "f16":
        s = str(np.float16(x))
    else:
        s = repr(float(x))
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def fmt_values(t, dt):
    """A tensor's elements (row-major), in the golden format of dtype dt."""
    flat = t.detach().reshape(-1)
    if dt in COMPLEX:
        return " ".join(fmt_real(z.real, dt) + "," + fmt_real(z.imag, dt) for z in flat.tolist())
    if dt == "bool":
        return " ".join(str(int(v)) for v in flat.tolist())
    if dt in INTS or flat.dtype in (torch.int64, torch.bool):
        return " ".join(str(int(v)) for v in flat.tolist())
    return " ".join(fmt_real(v, dt) for v in flat.tolist())


def fmt_mag(t):
    return " ".join(("%.4g" % v) for v in t.reshape(-1).tolist())


def numel(s):
    return math.prod(s) if s else 1


# ---- values ----
def draw_values(dt, n, small=False):
    """Python numbers exactly representable in dt."""
    out = []
    for _ in range(n):
        if dt == "bool":
            out.append(rng.random() < 0.5)
        elif dt in INTS:
            lo, hi = (0, 2) if dt == "u8" else (-2, 2)
            if small:
                lo, hi = (0, 1) if dt == "u8" else (-1, 1)
            elif dt not in ("i8", "u8"):
                lo, hi = (-3, 3)
            out.append(rng.randint(lo, hi))
        elif dt in ("f16", "bf16"):
            out.append(rng.randint(-8, 8) / 4)
        else:
            rough = rng.random() < 0.3
            def one():
                v = rng.uniform(-2, 2) if rough else rng.randint(-8, 8) / 4
                return float(np.float32(v)) if dt in ("f32", "c64") else v
            out.append(complex(one(), one()) if dt in COMPLEX else one())
    return out


def lcg_values(seed, n):
    """Values in [-1, 1) with 2^-12 steps, for the large cases (the test has the same LCG)."""
    s = seed & (2**64 - 1)
    out = []
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        out.append(((s >> 33) % 8191 - 4095) / 4096)
    return out


def tensor_of(values, dt, shape):
    return torch.tensor(values, dtype=DT[dt]).reshape(shape)


# ---- views: a chain that turns a contiguous base into an operand of sizes S ----
def contiguous_strides(s):
    st, acc = [], 1
    for x in reversed(s):
        st.append(acc)
        acc *= max(x, 1)
    return list(reversed(st))


def gen_view(S, base_ok):
    """(token, child sizes): token applied to a tensor of the child sizes gives sizes S."""
    S = list(S)
    r = len(S)
    kinds = ["permute", "transpose", "t", "narrow", "expand"] + (["asstrided"] * 2 if base_ok else [])
    k = rng.choice(kinds)
    if k == "permute" and r >= 2:
        p = list(range(r))
        while p == list(range(r)):
            rng.shuffle(p)
        C = [0] * r
        for i in range(r):
            C[p[i]] = S[i]
        return "permute:" + shape_tok(p), C
    if k == "transpose" and r >= 2:
        a, b = rng.sample(range(r), 2)
        C = S[:]
        C[a], C[b] = C[b], C[a]
        return f"transpose:{a}:{b}", C
    if k == "t" and r == 2:
        return "t", [S[1], S[0]]
    if k == "narrow" and r >= 1:
        d = rng.randrange(r)
        extra = rng.randint(1, 2)
        start = rng.randint(0, extra)
        C = S[:]
        C[d] += extra
        return f"narrow:{d}:{start}:{S[d]}", C
    if k == "expand" and r >= 1 and any(x != 1 for x in S):
        C = [1 if (x != 1 and rng.random() < 0.6) else x for x in S]
        if C == S:
            C[max(range(r), key=lambda i: S[i])] = 1
        lead = 0
        while lead < r and C[lead] == 1 and rng.random() < 0.5:
            lead += 1
        return "expand:" + shape_tok(S), C[lead:]
    if k == "asstrided" and r >= 1 and 0 not in S:
        steps = [rng.choice([1, 2]) if x > 1 else 1 for x in S]
        if all(s == 1 for s in steps) and rng.random() < 0.7:
            steps[rng.randrange(r)] = 2
        P = [x * s for x, s in zip(S, steps)]
        order = list(range(r))
        if rng.random() < 0.4:
            rng.shuffle(order)
        st = [0] * r
        acc = 1
        for d in reversed(order):
            st[d] = acc * steps[d]
            acc *= P[d]
        off = rng.randint(0, 2)
        n = off + sum((x - 1) * s for x, s in zip(S, st)) + 1 + rng.randint(0, 1)
        return f"asstrided:{shape_tok(S)}:{shape_tok(st)}:{off}", [n]
    return None


def view_chain(S, max_views=2):
    chain, cur = [], list(S)
    n = rng.randint(1, max_views)
    for k in range(n):
        for _ in range(20):
            g = gen_view(cur, base_ok=(k == n - 1))
            if g and numel(g[1]) <= MAX_NUMEL:
                chain.append(g[0])
                cur = g[1]
                break
    return list(reversed(chain)), cur


def parse_shape(tok):
    inner = tok[1:-1]
    return [int(x) for x in inner.split(",")] if inner else []


def apply_view(x, tok):
    p = tok.split(":")
    if p[0] == "permute":
        return x.permute(parse_shape(p[1]))
    if p[0] == "transpose":
        return x.transpose(int(p[1]), int(p[2]))
    if p[0] == "t":
        return x.t()
    if p[0] == "narrow":
        return x.narrow(int(p[1]), int(p[2]), int(p[3]))
    if p[0] == "expand":
        return x.expand(parse_shape(p[1]))
    if p[0] == "asstrided":
        return x.as_strided(parse_shape(p[1]), parse_shape(p[2]), int(p[3]))
    raise ValueError(tok)


def apply_chain(x, chain):
    for tok in chain:
        x = apply_view(x, tok)
    return x


class Operand:
    def __init__(self, dt, S, view_p=0.35, small=False, values=None, gen=None):
        self.dt = dt
        self.chain, self.base = view_chain(S) if rng.random() < view_p else ([], list(S))
        self.gen = gen
        if gen is not None:
            self.values = lcg_values(gen, numel(self.base))
        else:
            self.values = values if values is not None else draw_values(dt, numel(self.base), small)

    def base_tensor(self, dt=None):
        return tensor_of(self.values, dt or self.dt, self.base)

    def tensor(self, dt=None):
        return apply_chain(self.base_tensor(dt), self.chain)

    def line(self):
        views = "|".join(self.chain) if self.chain else "-"
        if self.gen is not None:
            vals = f"gen {self.gen}"
        else:
            vals = ": " + fmt_values(self.base_tensor(), self.dt)
        return f"op {self.dt} {shape_tok(self.base)} {views} {vals}"


def error_operand(dt, S):
    return f"op {dt} {shape_tok(S)} - zeros"


# ---- a naive einsum: the check on torch's results ----
def subscript(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def parse_terms(term):
    out, i = [], 0
    while i < len(term):
        if term[i] == ".":
            out.append("...")
            i += 3
        elif term[i] == " ":
            i += 1
        else:
            out.append(term[i])
            i += 1
    return out


def naive_einsum(eq, ops):
    """Exact for integers (Python ints), float64/complex128 otherwise; bool operands as 0/1."""
    lhs, arrow, rhs = eq.partition("->")
    terms = [parse_terms(t) for t in lhs.split(",")]
    ell = 0
    for t, op in zip(terms, ops):
        if "..." in t:
            ell = max(ell, op.dim() - (len(t) - 1))
    keyed, size = [], {}
    for t, op in zip(terms, ops):
        keys = []
        for tok in t:
            if tok == "...":
                k = op.dim() - (len(t) - 1)
                keys += [("E", j) for j in range(ell - k, ell)]
            else:
                keys.append(tok)
        keyed.append(keys)
        for key, n in zip(keys, op.shape):
            if n != 1:
                size[key] = n
            else:
                size.setdefault(key, 1)
    if arrow:
        out_keys = []
        for tok in parse_terms(rhs):
            out_keys += [("E", j) for j in range(ell)] if tok == "..." else [tok]
    else:
        count = {}
        for keys in keyed:
            for key in keys:
                if not isinstance(key, tuple):
                    count[key] = count.get(key, 0) + 1
        out_keys = [("E", j) for j in range(ell)] + sorted((k for k, c in count.items() if c == 1), key=subscript)
    all_keys = list(size)
    out_sizes = [size[k] for k in out_keys]
    is_int = all(not (op.is_floating_point() or op.is_complex()) for op in ops)
    zero = 0 if is_int else 0.0
    out = {}
    flats = []
    for op in ops:
        x = op.contiguous()
        if op.dtype == torch.bool:
            x = x.long()
        flats.append((x.reshape(-1).tolist(), contiguous_strides(list(op.shape)), list(op.shape)))
    for assign in itertools.product(*[range(size[k]) for k in all_keys]):
        a = dict(zip(all_keys, assign))
        p = 1
        for keys, (flat, st, shp) in zip(keyed, flats):
            idx = sum((a[k] if n != 1 else 0) * s for k, n, s in zip(keys, shp, st))
            p = p * flat[idx]
        o = tuple(a[k] for k in out_keys)
        out[o] = out.get(o, zero) + p
    vals = [out.get(o, zero) for o in itertools.product(*[range(n) for n in out_sizes])]
    return vals, out_sizes


def check_against_naive(eq, ops, result, dt, emulated=False):
    ref, sizes = naive_einsum(eq, ops)
    assert list(result.shape) == sizes, (eq, result.shape, sizes)
    mag, _ = naive_einsum(eq, [o.abs() if o.dtype != torch.bool else o for o in ops])
    got = result.reshape(-1).tolist()
    for g, e, m in zip(got, ref, mag):
        if dt == "bool":
            assert bool(g) == (e != 0), (eq, got, ref)
        elif dt in INTS:
            assert g == e, (eq, dt, got, ref)
        else:
            tol = {"f32": 2e-6, "c64": 2e-6, "f16": 2e-3, "bf16": 1e-2}.get(dt, 1e-14)
            assert abs(g - e) <= tol * abs(m) + 1e-300, (eq, dt, g, e, m)
    return ref


def fits(ref, dt):
    if dt not in INTS:
        return True
    lo, hi = INTS[dt]
    return all(lo <= v <= hi for v in ref)


# ---- random einsum equations ----
LETTERS = string.ascii_lowercase * 3 + string.ascii_uppercase  # lower case more often


class Equation:
    """Random labelled operands: sizes per operand, the equation text."""

    def __init__(self, n_ops, zero_p=0.05):
        nl = rng.randint(1, 6)
        pool = []
        while len(pool) < nl:
            c = rng.choice(LETTERS)
            if c not in pool:
                pool.append(c)
        self.size = {c: (0 if rng.random() < zero_p else rng.choice([1, 2, 2, 3, 3, 4])) for c in pool}
        use_ell = rng.random() < 0.35
        E = rng.randint(0, 3) if use_ell else 0
        ell_sizes = [rng.choice([1, 2, 3]) for _ in range(E)]
        self.terms, self.shapes = [], []
        for _ in range(n_ops):
            rank = rng.choices([0, 1, 2, 3, 4], [8, 25, 35, 22, 10])[0]
            labels = []
            for _ in range(rank):
                if labels and rng.random() < 0.12:
                    labels.append(rng.choice(labels))
                else:
                    free = [c for c in pool if c not in labels]
                    if not free:
                        break
                    labels.append(rng.choice(free))
            bsize = {c: (1 if self.size[c] > 1 and rng.random() < 0.12 else self.size[c]) for c in dict.fromkeys(labels)}
            shape = [bsize[c] for c in labels]
            term = list(labels)
            if use_ell and rng.random() < 0.8:
                k = rng.randint(0, E)
                esz = [1 if rng.random() < 0.25 else s for s in ell_sizes[E - k:]]
                pos = rng.randint(0, len(labels))
                term = labels[:pos] + ["..."] + labels[pos:]
                shape = shape[:pos] + esz + shape[pos:]
            self.terms.append(term)
            self.shapes.append(shape)
        used = []
        for t in self.terms:
            for c in t:
                if c != "..." and c not in used:
                    used.append(c)
        any_ell = any("..." in t for t in self.terms)
        self.explicit = rng.random() < 0.7
        out = []
        if self.explicit:
            out = [c for c in used if rng.random() < 0.6]
            rng.shuffle(out)
            if (any_ell and rng.random() < 0.85) or rng.random() < 0.05:
                out.insert(rng.randint(0, len(out)), "...")
        self.out = out
        spaces = rng.random() < 0.15

        def join(tokens):
            s = ""
            for tok in tokens:
                s += tok
                if spaces and rng.random() < 0.3:
                    s += " "
            return s

        lhs = ",".join(join(t) for t in self.terms)
        self.eq = lhs + ("->" + join(out) if self.explicit else "")
        if spaces and rng.random() < 0.5:
            self.eq = " " + self.eq
        self.has_repeat = any(len([c for c in t if c != "..."]) != len({c for c in t if c != "..."}) for t in self.terms)
        self.has_ell = any_ell
        self.ell_bcast = any_ell and len({len(s) - len(t) + 1 for s, t in zip(self.shapes, self.terms) if "..." in t}) > 1 \
            or any("..." in t and 1 in s for s, t in zip(self.shapes, self.terms))

    def ok(self):
        if any(numel(s) > MAX_NUMEL for s in self.shapes):
            return False
        if all(numel(s) <= 1 for s in self.shapes) and rng.random() < 0.85:
            return False  # keep scalar-only equations rare
        work = 1
        for v in self.size.values():
            work *= max(v, 1)
        e = max((len(s) - len(t) + 1 for s, t in zip(self.shapes, self.terms) if "..." in t), default=0)
        work *= 3 ** e
        return work <= MAX_WORK


def run_torch(eq, ts):
    return _VF.einsum(eq, ts)


def einsum_case(dt, n_ops, view_p=0.35, want=None):
    """One valid case of dtype dt (or None): (lines, torch result, operands, eq)."""
    e = Equation(n_ops)
    if not e.ok():
        return None
    if want and not want(e):
        return None
    small = dt in ("i8", "u8") and rng.random() < 0.5
    ops = [Operand(dt, s, view_p, small) for s in e.shapes]
    ts = [o.tensor() for o in ops]
    try:
        r = run_torch(e.eq, ts)
    except RuntimeError as err:
        msg = str(err)
        if (dt in ("bool", "f16") and "bmm" in msg) or ((dt in INTS or dt == "bool") and "expected scalar type" in msg):
            REJECTED.setdefault(dt, {}).setdefault(msg, 0)
            REJECTED[dt][msg] += 1
            return ("rejected", e, ops)
        raise
    if numel(list(r.shape)) > MAX_NUMEL:
        return None
    ref = check_against_naive(e.eq, ts, r, dt)
    if not fits(ref, dt):
        return None
    return e, ops, ts, r


def einsum_lines(cid, dt, e, ops, r, ref="torch", api="vector", mag=True):
    rdt = DT_NAME[r.dtype]
    lines = [f"case {cid} einsum {ref}", f'eq "{e.eq}"', f"api {api}"]
    lines += [o.line() for o in ops]
    lines.append(f"out {rdt} {shape_tok(r.shape)} : {fmt_values(r, rdt)}")
    if mag and (dt in FLOATS or dt in COMPLEX):
        m = run_torch(e.eq, [o.tensor("f64" if dt not in COMPLEX else "c128").abs() for o in ops])
        lines.append("mag : " + fmt_mag(m))
    return lines


def einsum_values():
    lines = []
    counts = {}
    emulated = {k: 0 for k in EMULATED}
    cid = 0
    for dt, n in EINSUM_COUNTS.items():
        made = 0
        while made < n:
            n_ops = rng.choices([1, 2, 3, 4], [25, 40, 22, 13])[0]
            res = einsum_case(dt, n_ops)
            if res is None:
                continue
            if res[0] == "rejected":
                _, e, ops = res
                if emulated[dt] >= EMULATED[dt]:
                    continue
                via = "f32" if dt == "f16" else "i64"
                ts = [o.tensor(via) for o in ops]
                r = run_torch(e.eq, ts)
                r = r.half() if dt == "f16" else (r != 0) if dt == "bool" else r
                if numel(list(r.shape)) > MAX_NUMEL:
                    continue
                ref = check_against_naive(e.eq, [o.tensor() for o in ops], r, dt)
                if not fits(ref, dt):
                    continue
                r = r.to(DT[dt])
                lines += einsum_lines(f"e{cid}", dt, e, ops, r, ref="emulated") + ["end"]
                emulated[dt] += 1
                cid += 1
                continue
            e, ops, ts, r = res
            # A few double and float cases through the variadic overload.
            api = "variadic" if dt in ("f64", "f32") and made % 5 == 0 and n_ops <= 3 else "vector"
            lines += einsum_lines(f"e{cid}", dt, e, ops, r, api=api) + ["end"]
            made += 1
            cid += 1
        counts[dt] = made
    print("einsum values:", counts, "emulated:", emulated)
    print("torch rejected:", REJECTED)
    return lines, sum(counts.values()) + sum(emulated.values())


# ---- fixed value cases: every operand count and label kind with a well-known answer ----
FIXED_EINSUM = [
    ("ii", [[3, 3]]), ("ii->i", [[3, 3]]), ("ij->ji", [[2, 3]]), ("i,j->ij", [[2], [3]]),
    ("bij,bjk->bik", [[2, 2, 3], [2, 3, 4]]), ("...ij->...ji", [[2, 3, 4]]), ("i,i->", [[1], [3]]),
    ("ii,i->i", [[1, 1], [3]]), ("", [[]]), (",", [[], []]), ("->", [[]]), ("...->...", [[]]),
    ("i->...", [[2]]), ("ij,jk->ik", [[2, 0], [0, 3]]), ("ii->i", [[0, 0]]), ("i i j", [[2, 2, 3]]),
    ("bA", [[2, 3]]), ("Ab,bZ", [[2, 3], [3, 4]]), ("...,...->...", [[2, 1], [3]]), ("i...->...", [[2]]),
    ("iij->ji", [[2, 2, 3]]), ("...ii->...i", [[4, 2, 2]]), ("aAbB,BbAa->", [[2, 3, 1, 2], [2, 1, 3, 2]]),
    ("i,j,k,l->lkji", [[2], [1], [3], [2]]), ("ij,jk,kl,lm->mi", [[2, 3], [3, 2], [2, 4], [4, 3]]),
    ("...i,...i->...", [[3, 4], [2, 1, 4]]), ("ij...,jk...->ik...", [[2, 3, 1, 2], [3, 2, 4, 1]]),
]


def einsum_fixed(start):
    lines = []
    cid = start
    for eq, shapes in FIXED_EINSUM:
        for dt in ("f64", "i64"):
            ops = [Operand(dt, s, view_p=0.0) for s in shapes]
            ts = [o.tensor() for o in ops]
            r = run_torch(eq, ts)
            check_against_naive(eq, ts, r, dt)

            class E:
                pass
            e = E()
            e.eq = eq
            lines += einsum_lines(f"e{cid}", dt, e, ops, r) + ["end"]
            cid += 1
    print("einsum fixed:", cid - start)
    return lines, cid - start


# ---- large cases (the GEMM path): inputs from the LCG, outputs from torch ----
LARGE = [
    ("ij,jk->ik", [[64, 80], [80, 72]], "f32"), ("ij,jk->ik", [[64, 80], [80, 72]], "f64"),
    ("bik,bkj->bij", [[4, 40, 40], [4, 40, 40]], "f32"), ("bik,bkj->bij", [[4, 40, 40], [4, 40, 40]], "f64"),
    ("ik,jk->ij", [[48, 64], [56, 64]], "f32"), ("ki,kj->ji", [[70, 33], [70, 41]], "f64"),
    ("bhqd,bhkd->bhqk", [[2, 3, 20, 16], [2, 3, 24, 16]], "f32"),
]


def einsum_large():
    lines = []
    for k, (eq, shapes, dt) in enumerate(LARGE):
        ops = [Operand(dt, s, view_p=0.0, gen=1000 * k + i + 1) for i, s in enumerate(shapes)]
        # One operand of each case as a transposed view of a contiguous base.
        if len(shapes[1]) >= 2:
            S = shapes[1]
            r = len(S)
            base = S[:r - 2] + [S[r - 1], S[r - 2]]
            ops[1].base = base
            ops[1].chain = [f"transpose:{r - 2}:{r - 1}"]
            ops[1].values = lcg_values(ops[1].gen, numel(base))
        ts = [o.tensor() for o in ops]
        r = run_torch(eq, ts)
        ref = torch.einsum(eq, *[t.double() for t in ts])
        m = torch.einsum(eq, *[t.double().abs() for t in ts])
        assert float(((r.double() - ref).abs() - 1e-5 * m).max()) <= 0
        # Every LARGE_STEP-th output element (the file stays small; the test computes them all).
        lines += [f"case L{k} einsum torch", f'eq "{eq}"', "api vector"] + [o.line() for o in ops]
        lines.append(f"out {dt} {shape_tok(r.shape)} sample {LARGE_STEP} : {fmt_values(r.reshape(-1)[::LARGE_STEP], dt)}")
        lines.append(f"mag sample {LARGE_STEP} : " + fmt_mag(m.reshape(-1)[::LARGE_STEP]))
        lines.append("end")
    print("einsum large:", len(LARGE))
    return lines


# ---- gradients (float64): loss = sum(einsum(...) * w), d loss / d base of each operand ----
def finite_difference_check(e, ops, w, grads):
    for k, o in enumerate(ops):
        base = o.base_tensor()
        flat = base.reshape(-1)
        g = grads[k].reshape(-1)
        for i in range(flat.numel()):
            plus, minus = flat.clone(), flat.clone()
            plus[i] += 1
            minus[i] -= 1

            def loss(b):
                ts = [apply_chain(b.reshape(o.base), o.chain) if j == k else ops[j].tensor() for j in range(len(ops))]
                return float((run_torch(e.eq, ts) * w).sum())
            fd = (loss(plus) - loss(minus)) / 2
            assert abs(fd - float(g[i])) <= 1e-9 * (1 + abs(fd)), (e.eq, k, i, fd, float(g[i]))


def grad_cases():
    lines = []
    quotas = [("repeat", lambda e: e.has_repeat, 15), ("ellipsis", lambda e: e.ell_bcast, 15),
              ("expand", None, 15), ("any", None, N_GRAD - 45)]
    cid = 0
    for name, want, n in quotas:
        made = 0
        while made < n:
            n_ops = rng.choices([1, 2, 3, 4], [20, 45, 22, 13])[0]
            res = einsum_case("f64", n_ops, view_p=0.5, want=want)
            if res is None:
                continue
            e, ops, ts, r = res
            if name == "expand" and not any(any(t.startswith("expand") for t in o.chain) for o in ops):
                continue
            leaves = [o.base_tensor().requires_grad_(True) for o in ops]
            y = run_torch(e.eq, [apply_chain(l, o.chain) for l, o in zip(leaves, ops)])
            w = tensor_of([rng.randint(-4, 4) / 4 for _ in range(y.numel())], "f64", list(y.shape))
            (y * w).sum().backward()
            grads = [l.grad if l.grad is not None else torch.zeros(o.base, dtype=torch.float64)
                     for l, o in zip(leaves, ops)]
            finite_difference_check(e, ops, w, grads)
            # |terms|: the same gradient of |operands| and |w|
            aleaves = [o.base_tensor().abs().requires_grad_(True) for o in ops]
            ya = run_torch(e.eq, [apply_chain(l, o.chain) for l, o in zip(aleaves, ops)])
            (ya * w.abs()).sum().backward()
            lines += einsum_lines(f"g{cid}", "f64", e, ops, r.detach())
            lines.append("w : " + fmt_values(w, "f64"))
            for k, (g, al) in enumerate(zip(grads, aleaves)):
                lines.append(f"grad {k} : " + fmt_values(g, "f64"))
                ga = al.grad if al.grad is not None else torch.zeros(ops[k].base, dtype=torch.float64)
                lines.append(f"gmag {k} : " + fmt_mag(ga))
            lines.append("end")
            made += 1
            cid += 1
    print("einsum grads:", cid)
    return lines, cid


# ---- einsum errors ----
def einsum_errors(start):
    f, d = "f32", "f64"
    E = [  # (equation, [(dtype, sizes)], api)
        ("i", [], "vector"),
        ("i1->i", [(f, [2])], "vector"), ("i$", [(f, [2])], "vector"), ("i->1", [(f, [2])], "vector"),
        (" ij ,jk -> i_k", [(f, [2, 3]), (f, [3, 4])], "vector"), ("i - > i", [(f, [2])], "vector"),
        ("i->i->i", [(f, [2])], "vector"), ("i>i", [(f, [2])], "vector"), ("i-i", [(f, [2])], "vector"),
        ("i,j", [(f, [2])], "vector"), ("i,->i", [(f, [2])], "vector"), ("i,j,k", [(f, [2]), (f, [2])], "variadic"),
        ("i", [(f, [2]), (f, [3])], "vector"), ("i->i", [(f, [2]), (f, [2])], "variadic"),
        ("i.j", [(f, [2, 3])], "vector"), ("..i", [(f, [2, 3])], "vector"), ("i..", [(f, [2, 3])], "vector"),
        ("i. ..", [(f, [2, 3])], "vector"), ("i,j..", [(f, [2]), (f, [2, 3])], "vector"),
        ("...i...", [(f, [2, 3])], "vector"), ("i,......", [(f, [2]), (f, [2, 3])], "vector"),
        ("i->...i...", [(f, [2])], "vector"), ("...i->..", [(f, [2])], "vector"), ("i->.", [(f, [2])], "vector"),
        ("...i->i.", [(f, [2, 3])], "vector"),
        ("i->ii", [(f, [2])], "vector"), ("ij,jk->kik", [(f, [2, 3]), (f, [3, 4])], "vector"),
        ("i->j", [(f, [2])], "vector"), ("...->i", [(f, [2])], "vector"), ("ij,jk->iK", [(f, [2, 3]), (f, [3, 4])], "vector"),
        ("ij", [(f, [2])], "vector"), ("i", [(f, [2, 3])], "vector"), ("", [(f, [2])], "vector"),
        ("i,", [(f, [2]), (f, [2])], "vector"), ("ij,jk", [(f, [2, 3]), (f, [3, 4, 1])], "vector"),
        ("i...jk", [(f, [2, 3])], "vector"), ("a...bcd->...", [(f, [2, 3, 4])], "vector"),
        ("i,j...k", [(f, [2]), (f, [2])], "vector"),
        ("ii", [(f, [2, 3])], "vector"), ("iji->j", [(f, [2, 3, 3])], "vector"), ("jii->j", [(f, [2, 1, 3])], "vector"),
        ("ij,kk", [(f, [2, 3]), (f, [3, 4])], "vector"),
        ("i,i", [(f, [2]), (f, [3])], "vector"), ("i,i,i", [(f, [2]), (f, [3]), (f, [2])], "vector"),
        ("ij,jk,kl", [(f, [2, 3]), (f, [3, 4]), (f, [5, 6])], "vector"),
        ("ij,jk->ik", [(f, [2, 3]), (f, [4, 5])], "vector"), ("Ab,bA->", [(f, [2, 3]), (f, [3, 4])], "vector"),
        ("i,i->i", [(f, [2]), (f, [3])], "variadic"),
        ("...,...", [(f, [2]), (f, [3])], "vector"), ("...i,...i", [(f, [2, 3]), (f, [4, 3])], "vector"),
        ("i...,i...", [(f, [2, 3]), (f, [2, 4])], "vector"), ("...,...->...", [(f, [2, 3]), (f, [4, 3])], "vector"),
        ("ij,jk->ik", [(f, [2, 3]), (d, [3, 4])], "variadic"), ("ij,jk->ik", [(d, [2, 3]), (f, [3, 4])], "variadic"),
        ("i,i->", [("i64", [3]), ("i32", [3])], "variadic"), ("ij,jk->ik", [("c64", [2, 3]), (f, [3, 4])], "variadic"),
        ("i,i", [(f, [3]), ("i64", [3])], "variadic"), ("bij,bjk->bik", [(f, [2, 2, 3]), (d, [2, 3, 4])], "variadic"),
        ("ij,ij->", [(f, [2, 3]), (d, [2, 3])], "variadic"), ("j,ij->i", [(f, [3]), (d, [2, 3])], "variadic"),
        ("ij,jk,kl->il", [(f, [2, 3]), (f, [3, 4]), (d, [4, 5])], "variadic"),
        ("ij,jk,kl->il", [(f, [2, 3]), (d, [3, 4]), (f, [4, 5])], "variadic"),
        ("ij,jk,kl->il", [(d, [2, 3]), (f, [3, 4]), (f, [4, 5])], "variadic"),
    ]
    lines = []
    cid = start
    for eq, specs, api in E:
        ts = [torch.zeros(s, dtype=DT[dt]) for dt, s in specs]
        try:
            _VF.einsum(eq, ts)
        except (RuntimeError, IndexError) as err:
            msg = str(err)
        else:
            raise AssertionError(f"no error for {eq!r}")
        lines += [f"case x{cid} einsum torch", f'eq "{eq}"', f"api {api}"]
        lines += [error_operand(dt, s) for dt, s in specs]
        lines += [f"error {msg}", "end"]
        cid += 1
    print("einsum errors:", cid - start)
    return lines, cid - start


# ---- matmul and friends ----
def rank_shapes(ra, rb, zeros=True):
    n, k, m = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4, 5]), rng.choice([1, 2, 3, 4])
    if zeros and rng.random() < 0.06:
        n, k, m = [rng.choice([0, 2]) for _ in range(3)]
    nb = max(ra, rb) - 2
    batch = [rng.choice([1, 2, 3]) for _ in range(max(nb, 0))]
    if zeros and nb > 0 and rng.random() < 0.05:
        batch[rng.randrange(nb)] = 0

    def side(r, last2):
        if r == 1:
            return [k]
        bs = batch[len(batch) - (r - 2):] if r > 2 else []
        bs = [1 if (x != 1 and rng.random() < 0.25) else x for x in bs]
        return bs + last2
    return side(ra, [n, k]), side(rb, [k, m])


def vmag(fn, ts, extra):
    return fn(*[t.abs().double() if not t.is_complex() else t.abs() for t in ts], *extra)


def ref_matmul(a, b):
    """matmul as a broadcast product and a sum (no BLAS): the check on torch's results."""
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(1) if b.dim() == 1 else b
    r = (a2.unsqueeze(-1) * b2.unsqueeze(-3)).sum(-2)
    if a.dim() == 1:
        r = r.squeeze(-2)
    if b.dim() == 1:
        r = r.squeeze(-1)
    return r


def ref_tensordot(dims):
    def f(a, b):
        if isinstance(dims, int):
            da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
        else:
            da, db = [d % a.dim() for d in dims[0]], [d % b.dim() for d in dims[1]]
        sa, sb = list(a.shape), list(b.shape)
        for x, y in zip(da, db):  # torch lets a size-1 dim contract with any size
            sa[x] = sb[y] = max(sa[x], sb[y]) if min(sa[x], sb[y]) == 1 else sa[x]
        a, b = a.expand(sa), b.expand(sb)
        fa = [d for d in range(a.dim()) if d not in da]
        fb = [d for d in range(b.dim()) if d not in db]
        K = numel([sa[d] for d in da])
        ap = a.permute(fa + da).reshape(numel([sa[d] for d in fa]), K)
        bp = b.permute(db + fb).reshape(K, numel([sb[d] for d in fb]))
        return (ap.unsqueeze(2) * bp.unsqueeze(0)).sum(1).reshape([sa[d] for d in fa] + [sb[d] for d in fb])
    return f


REF = {"matmul": ref_matmul, "mm": ref_matmul, "bmm": ref_matmul, "mv": ref_matmul, "dot": ref_matmul,
       "outer": lambda a, b: a.unsqueeze(1) * b.unsqueeze(0)}
TORCH_BUGS = {}  # what torch got wrong: {description: count}


def value_case(cid, fname, fn, dt, shapes, extra=(), extra_line=None, view_p=0.35, grad=False, ref_fn=None):
    ops = [Operand(dt, s, view_p, small=dt in INTS) for s in shapes]
    ts = [o.tensor() for o in ops]
    r = fn(*ts, *extra)
    wide = [t.to(torch.complex128 if t.is_complex() else torch.float64) for t in ts]
    ref = (ref_fn or REF[fname])(*wide)
    m = vmag(fn, ts, extra)
    tol = {"f32": 1e-5, "c64": 1e-5}.get(dt, 1e-13 if dt not in INTS else 0)
    assert list(r.shape) == list(ref.shape), (fname, dt, shapes)
    source = "torch"
    if r.numel() and float(((r.to(ref.dtype) - ref).abs() - tol * m).max()) > 0:
        # Debian's torch 1.13 returns 0 for every complex dot (also matmul of two 1-D tensors):
        # those cases hold the broadcast-and-sum reference instead, marked emulated.
        assert dt in COMPLEX and all(t.dim() == 1 for t in ts) and fname in ("dot", "matmul"), (fname, dt, shapes)
        assert float(r.abs()) == 0
        TORCH_BUGS[f"complex {fname} of 1-D tensors returns 0"] = TORCH_BUGS.get(f"complex {fname} of 1-D tensors returns 0", 0) + 1
        r = ref.to(DT[dt])
        source = "emulated"
    lines = [f"case {cid} {fname} {source}"]
    if extra_line:
        lines.append(extra_line)
    lines += [o.line() for o in ops]
    lines.append(f"out {DT_NAME[r.dtype]} {shape_tok(r.shape)} : {fmt_values(r, DT_NAME[r.dtype])}")
    if dt not in INTS:
        lines.append("mag : " + fmt_mag(m))
    if grad:
        leaves = [o.base_tensor().requires_grad_(True) for o in ops]
        y = fn(*[apply_chain(l, o.chain) for l, o in zip(leaves, ops)], *extra)
        w = tensor_of([rng.randint(-4, 4) / 4 for _ in range(y.numel())], "f64", list(y.shape))
        (y * w).sum().backward()
        aleaves = [o.base_tensor().abs().requires_grad_(True) for o in ops]
        ya = fn(*[apply_chain(l, o.chain) for l, o in zip(aleaves, ops)], *extra)
        (ya * w.abs()).sum().backward()
        lines.append("w : " + fmt_values(w, "f64"))
        for k, (l, al) in enumerate(zip(leaves, aleaves)):
            g = l.grad if l.grad is not None else torch.zeros(ops[k].base, dtype=torch.float64)
            ga = al.grad if al.grad is not None else torch.zeros(ops[k].base, dtype=torch.float64)
            lines.append(f"grad {k} : " + fmt_values(g, "f64"))
            lines.append(f"gmag {k} : " + fmt_mag(ga))
    lines.append("end")
    return lines


def error_case(cid, fname, fn, specs, extra=(), extra_line=None):
    ts = [torch.zeros(s, dtype=DT[dt]) for dt, s in specs]
    try:
        fn(*ts, *extra)
    except (RuntimeError, IndexError) as err:
        msg = str(err)
    else:
        raise AssertionError(f"no error for {fname} {specs} {extra}")
    lines = [f"case {cid} {fname} torch"]
    if extra_line:
        lines.append(extra_line)
    lines += [error_operand(dt, s) for dt, s in specs]
    return lines + [f"error {msg}", "end"]


MATMUL_DTYPES = ["f64", "f32", "i64"]


def tensordot_fn(dims):
    if isinstance(dims, int):
        return lambda a, b: torch.tensordot(a, b, dims), f"dims {dims}"
    return (lambda a, b: torch.tensordot(a, b, dims)), f"dims {shape_tok(dims[0])} {shape_tok(dims[1])}"


def matmul_file():
    lines = []
    counts = {}
    cid = 0

    def add(kind, ls):
        nonlocal cid
        lines.extend(ls)
        counts[kind] = counts.get(kind, 0) + 1
        cid += 1

    # matmul: every rank combination, three dtypes (two cases each), a complex one, a gradient
    for ra in range(1, 5):
        for rb in range(1, 5):
            for dt in MATMUL_DTYPES + ["c128" if (ra + rb) % 2 else "c64"]:
                for _ in range(2 if dt in MATMUL_DTYPES else 1):
                    add("matmul", value_case(f"m{cid}", "matmul", torch.matmul, dt, rank_shapes(ra, rb)))
            add("matmul grad", value_case(f"m{cid}", "matmul", torch.matmul, "f64", rank_shapes(ra, rb), grad=True))
    # mm, bmm, mv, dot, outer
    for name, fn in [("mm", torch.mm), ("bmm", torch.bmm), ("mv", torch.mv), ("dot", torch.dot), ("outer", torch.outer)]:
        for dt in MATMUL_DTYPES + ["c64", "c128"]:
            for rep in range(3 if dt in MATMUL_DTYPES else 1):
                n, k, m, b = [rng.choice([0, 1, 2, 3, 4, 5] if rep == 2 else [1, 2, 3, 4, 5]) for _ in range(4)]
                shapes = {"mm": [[n, k], [k, m]], "bmm": [[b, n, k], [b, k, m]], "mv": [[n, k], [k]],
                          "dot": [[k], [k]], "outer": [[n], [m]]}[name]
                add(name, value_case(f"m{cid}", name, fn, dt, shapes, grad=(dt == "f64" and rep == 0)))
    # tensordot: int dims and explicit lists
    TD = [
        (2, [[2, 3, 4], [3, 4, 5]]), (1, [[2, 3], [3, 4]]), (0, [[2, 3], [4]]), (3, [[2, 3, 2], [2, 3, 2, 2]]),
        (2, [[3, 2], [3, 2]]), (0, [[], [3]]), (1, [[4], [4]]), (2, [[2, 0, 3], [0, 3, 2]]),
        (([1, 0], [0, 1]), [[2, 3], [3, 2]]), (([0], [1]), [[3, 2], [4, 3]]), (([-1], [0]), [[2, 3], [3, 4]]),
        (([2, 0], [1, 2]), [[4, 2, 3], [5, 3, 4]]), (([], []), [[2], [3]]), (([1], [-2]), [[2, 3, 2], [3, 2]]),
        (([0, 2], [2, 0]), [[2, 3, 4], [4, 5, 2]]), (([1], [0]), [[2, 0], [0, 3]]),
        (([0], [1]), [[1, 3], [3, 2]]), (([0], [0]), [[2, 3], [1, 2]]),  # size-1 dims contract with any size
    ]
    for dims, shapes in TD:
        fn, line = tensordot_fn(dims)
        for dt in MATMUL_DTYPES:
            add("tensordot", value_case(f"m{cid}", "tensordot", fn, dt, shapes, extra_line=line, grad=(dt == "f64"),
                                        ref_fn=ref_tensordot(dims)))
    # ---- errors ----
    f, d = "f32", "f64"
    mm = torch.matmul
    E = [("matmul", mm, [(f, []), (f, [2])]), ("matmul", mm, [(f, [2]), (f, [])]), ("matmul", mm, [(f, []), (f, [])]),
         ("matmul", mm, [(f, []), (f, [2, 3])]), ("matmul", mm, [(f, [2, 3, 4]), (f, [])])]
    for ra in range(1, 5):  # mismatched inner sizes, every rank combination
        for rb in range(1, 5):
            a, b = rank_shapes(ra, rb, zeros=False)
            if ra == 1:
                a[0] = 2
            else:
                a[-1] = 2
            b[0 if rb == 1 else -2] = 3
            E.append(("matmul", mm, [(f, a), (f, b)]))
    for a, b in [([2, 2, 3], [3, 3, 2]), ([5, 2, 3], [4, 3, 2]), ([2, 5, 2, 3], [3, 3, 2]), ([2, 3, 2, 3], [2, 5, 3, 3]),
                 ([3, 1, 2, 3], [2, 1, 3, 2]), ([4, 2, 3], [2, 3, 3, 2]), ([2, 2, 2, 3], [3, 3, 2])]:
        E.append(("matmul", mm, [(f, a), (f, b)]))
    for ra in range(1, 5):  # mixed dtypes, every rank combination
        for rb in range(1, 5):
            a, b = rank_shapes(ra, rb, zeros=False)
            E.append(("matmul", mm, [(f, a), (d, b)]))
    E += [("matmul", mm, [(d, [2, 3]), (f, [3, 2])]), ("matmul", mm, [("i64", [2, 3]), (f, [3, 2])]),
          ("matmul", mm, [("i32", [2]), ("i64", [2])]), ("matmul", mm, [("c64", [2, 2, 3]), (f, [3])])]
    E += [("mm", torch.mm, [(f, [2]), (f, [2, 3])]), ("mm", torch.mm, [(f, [2, 3]), (f, [3])]),
          ("mm", torch.mm, [(f, [2, 3, 3]), (f, [3, 3])]), ("mm", torch.mm, [(f, [2, 3]), (f, [2, 3, 3])]),
          ("mm", torch.mm, [(f, []), (f, [2, 3])]), ("mm", torch.mm, [(f, [2, 3]), (f, [2, 3])]),
          ("mm", torch.mm, [(f, [2, 3]), (f, [4, 2])]), ("mm", torch.mm, [(f, [2, 3]), (d, [3, 4])]),
          ("mm", torch.mm, [(d, [2, 3]), (f, [3, 4])]), ("mm", torch.mm, [("i64", [2, 3]), (f, [3, 4])]),
          ("bmm", torch.bmm, [(f, [2, 3]), (f, [2, 3, 4])]), ("bmm", torch.bmm, [(f, [2, 2, 3]), (f, [3, 4])]),
          ("bmm", torch.bmm, [(f, [1, 2, 2, 3]), (f, [2, 3, 4])]), ("bmm", torch.bmm, [(f, [2, 2, 3]), (f, [3, 3, 4])]),
          ("bmm", torch.bmm, [(f, [2, 2, 3]), (f, [2, 4, 4])]), ("bmm", torch.bmm, [(f, [1, 2, 3]), (f, [2, 3, 4])]),
          ("bmm", torch.bmm, [(f, [2, 2, 3]), (f, [1, 3, 4])]), ("bmm", torch.bmm, [(f, [2, 2, 3]), (d, [2, 3, 4])]),
          ("bmm", torch.bmm, [(d, [2, 2, 3]), (f, [2, 3, 4])]),
          ("mv", torch.mv, [(f, [2, 3]), (f, [4])]), ("mv", torch.mv, [(f, [3]), (f, [3])]),
          ("mv", torch.mv, [(f, [2, 3]), (f, [3, 1])]), ("mv", torch.mv, [(f, [2, 2, 3]), (f, [3])]),
          ("mv", torch.mv, [(f, [2, 3]), (f, [])]), ("mv", torch.mv, [(f, [2, 3]), (d, [3])]),
          ("mv", torch.mv, [(d, [2, 3]), (f, [3])]),
          ("dot", torch.dot, [(f, [2]), (f, [3])]), ("dot", torch.dot, [(f, [2, 2]), (f, [2])]),
          ("dot", torch.dot, [(f, [2]), (f, [2, 2])]), ("dot", torch.dot, [(f, []), (f, [2])]),
          ("dot", torch.dot, [(f, [2]), (d, [2])]), ("dot", torch.dot, [(d, [2]), (f, [2])]),
          ("dot", torch.dot, [("i64", [2]), ("i32", [2])]),
          ("outer", torch.outer, [(f, [2, 2]), (f, [3])]), ("outer", torch.outer, [(f, [2]), (f, [3, 3])]),
          ("outer", torch.outer, [(f, []), (f, [3])]), ("outer", torch.outer, [(f, [2]), (f, [])])]
    for name, fn, specs in E:
        add(name + " error", error_case(f"m{cid}", name, fn, specs))
    TDE = [(2, [[2, 3], [3, 2]]), (3, [[2, 3], [2, 3]]), (3, [[2, 3, 4], [3, 4]]), (-1, [[2, 3], [2, 3]]),
           (1, [[], [2]]), (1, [[2], []]), (1, [[2, 3], [2, 3]]),
           (([0, 1], [1]), [[2, 3], [3, 2]]), (([0], [0]), [[2, 3], [3, 2]]), (([2], [0]), [[2, 3], [3, 2]]),
           (([0], [-3]), [[2, 3], [3, 2]]), (([0, 0], [1, 1]), [[2, 3], [2, 2]]), (([0, 1], [1, 1]), [[2, 2], [2, 2]]),
           (([0], [0]), [[], [2]]), (([0], [1]), [[2, 3], [4, 3, 5]])]
    for dims, shapes in TDE:
        fn, line = tensordot_fn(dims)
        add("tensordot error", error_case(f"m{cid}", "tensordot", fn, [(f, s) for s in shapes], extra_line=line))
    fn, line = tensordot_fn(1)
    add("tensordot error", error_case(f"m{cid}", "tensordot", fn, [(f, [2, 3]), (d, [3, 3])], extra_line=line))
    fn, line = tensordot_fn(([0], [0]))
    add("tensordot error", error_case(f"m{cid}", "tensordot", fn, [(d, [2]), (f, [2])], extra_line=line))
    fn, line = tensordot_fn(0)
    add("tensordot error", error_case(f"m{cid}", "tensordot", fn, [(f, [2]), (d, [2])], extra_line=line))
    print("matmul:", counts)
    print("torch bugs (emulated instead):", TORCH_BUGS)
    return lines


def write(name, lines):
    path = os.path.join(GOLDEN, name)
    with open(path, "w") as fh:
        fh.write("# Generated by tools/make_linalg_golden.py (torch %s): do not edit.\n" % torch.__version__)
        fh.write("\n".join(lines) + "\n")
    print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    torch.set_grad_enabled(True)
    values, nv = einsum_values()
    fixed, nf = einsum_fixed(10000)
    errors, ne = einsum_errors(0)
    write("linalg_einsum.txt", values + fixed + errors)
    write("linalg_einsum_large.txt", einsum_large())
    write("linalg_einsum_grad.txt", grad_cases()[0])
    write("linalg_matmul.txt", matmul_file())
