#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/result_type.txt: PyTorch's type promotion with dimensioned tensors, 0-dim
tensors and wrapped Python numbers (torch.result_type, torch.can_cast, in-place casting rules) and
element-wise results that depend on them.

Run from anywhere:  /usr/bin/python3 tools/make_result_type_golden.py
(Debian's python3-torch, 1.13; the python3 on PATH has no torch). The output is deterministic;
CI never runs this: the output is committed.

One case a line, space-separated; lines starting with `#` are comments. Dtype names are torch's
without "torch." (bool uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 complex64
complex128, and complex32 when torch produces it). Operand kinds: t = a tensor of shape [2] (in
`ew` lines shape [3]), z = a 0-dim tensor, w = a wrapped Python number whose "dtype" field is its
kind (bool int float complex; values True, 2, 2.5, 1j). `error` = torch raised.
  rt KA A KB B R            R = torch.result_type(a, b)  (either operand may be w)
  rt3 KA A KB B KC C R      (a fixed sample of 1500 of the 13,824) R = the common dtype of three operands: torch.addcmul(a, b, c).dtype on
                            the meta device (its TensorIterator folds all three inputs through the
                            same ResultTypeState as result_type; meta skips the kernel, whose CPU
                            version has no bool); checked against CPU addcmul where that runs
  cast FROM TO B            B = torch.can_cast(FROM, TO) as 1 or 0
  inplace A KB B R          ones(2, A).add_(b), b = ones of dtype B, shape [2] (t) or [] (z): R = A or error
  ew OP KA A VA KB B VB R V...
                            OP in add sub mul div maximum eq lt pow, computed as a+b, a-b, a*b, a/b,
                            torch.maximum(a, b), a==b, a<b, a**b. VA, VB: the operand's elements,
                            comma-separated (bool 1/0, integers as integers, floats as repr(float),
                            complex as a Python literal without parentheses, e.g. 1+1j, -2+0.5j, 1j;
                            w: the Python literal, e.g. 2 2.5 True 1j 300). V...: the result's
                            elements row-major, one token each: repr(float(v)) for real dtypes
                            (integers too, e.g. 3.0), 1/0 for bool, `re,im` (repr of each) for
                            complex. The result has shape [3] if an operand is t, else [].
                            R = error: no values.
"""
import os
import random
import warnings

import torch

warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden", "result_type.txt")

DTYPES = [  # strata's order and names
    ("bool", torch.bool), ("uint8", torch.uint8), ("int8", torch.int8), ("int16", torch.int16),
    ("int32", torch.int32), ("int64", torch.int64), ("float16", torch.float16),
    ("bfloat16", torch.bfloat16), ("float32", torch.float32), ("float64", torch.float64),
    ("complex64", torch.complex64), ("complex128", torch.complex128),
]
DT = dict(DTYPES)
NAME = {t: n for n, t in DTYPES}
NAME[torch.complex32] = "complex32"
SCALARS = [("bool", True), ("int", 2), ("float", 2.5), ("complex", 1j)]
KINDS = ["t", "z"]


def operand(kind, dtype, device="cpu"):
    return torch.ones(2 if kind == "t" else (), dtype=dtype, device=device)


def dtype_or_error(f):
    try:
        return NAME[f()]
    except (RuntimeError, TypeError):
        return "error"


def result_types():
    lines = []
    for ka in KINDS:
        for kb in KINDS:
            for a, ta in DTYPES:
                for b, tb in DTYPES:
                    r = dtype_or_error(lambda: torch.result_type(operand(ka, ta), operand(kb, tb)))
                    lines.append(f"rt {ka} {a} {kb} {b} {r}")
    for ka in KINDS:
        for a, ta in DTYPES:
            for s, v in SCALARS:
                r = dtype_or_error(lambda: torch.result_type(operand(ka, ta), v))
                lines.append(f"rt {ka} {a} w {s} {r}")
    for s, v in SCALARS:
        for kb in KINDS:
            for b, tb in DTYPES:
                r = dtype_or_error(lambda: torch.result_type(v, operand(kb, tb)))
                lines.append(f"rt w {s} {kb} {b} {r}")
    return lines


def result_types3():
    lines = []
    for ka in KINDS:
        for kb in KINDS:
            for kc in KINDS:
                for a, ta in DTYPES:
                    for b, tb in DTYPES:
                        for c, tc in DTYPES:
                            meta = dtype_or_error(lambda: torch.addcmul(
                                operand(ka, ta, "meta"), operand(kb, tb, "meta"), operand(kc, tc, "meta")).dtype)
                            try:
                                cpu = NAME[torch.addcmul(operand(ka, ta), operand(kb, tb), operand(kc, tc)).dtype]
                            except RuntimeError:
                                cpu = None  # e.g. "addcmul_cpu_out" not implemented for 'Bool'
                            assert cpu is None or cpu == meta, (ka, a, kb, b, kc, c, cpu, meta)
                            if kb == kc and b == c:  # a duplicated operand changes nothing
                                assert meta == NAME[torch.result_type(operand(ka, ta), operand(kb, tb))]
                            lines.append(f"rt3 {ka} {a} {kb} {b} {kc} {c} {meta}")
    # All 13,824 were checked above; a fixed sample of them is kept (the file stays small).
    keep = sorted(random.Random(35).sample(range(len(lines)), 1500))
    return [lines[i] for i in keep]


def casts():
    return [f"cast {a} {b} {int(torch.can_cast(ta, tb))}" for a, ta in DTYPES for b, tb in DTYPES]


def inplace():
    lines = []
    for kb in KINDS:
        for a, ta in DTYPES:
            for b, tb in DTYPES:
                r = dtype_or_error(lambda: torch.ones(2, dtype=ta).add_(operand(kb, tb)).dtype)
                lines.append(f"inplace {a} {kb} {b} {r}")
    return lines


# ---- element-wise values -------------------------------------------------------------------

INTS = [1, 2, 3]
FLOATS = [0.5, 1.5, -2.0]
VALUES = {"bool": [True, False, True], "uint8": INTS, "int8": [1, -2, 3], "int16": INTS,
          "int32": INTS, "int64": INTS, "float16": FLOATS, "bfloat16": FLOATS, "float32": FLOATS,
          "float64": FLOATS, "complex64": [1 + 1j, 0.5 + 0j, -2 + 0.5j],
          "complex128": [1 + 1j, 0.5 + 0j, -2 + 0.5j]}
ZERO = {"bool": True, "uint8": 2, "int8": -1, "int16": 2, "int32": 2, "int64": 2, "float16": 0.25,
        "bfloat16": 0.25, "float32": 0.25, "float64": 0.25, "complex64": 1j, "complex128": 1j}


def t(dtype):
    return ("t", dtype, VALUES[dtype])


def z(dtype, value=None):
    return ("z", dtype, [ZERO[dtype] if value is None else value])


def w(value):
    kind = {bool: "bool", int: "int", float: "float", complex: "complex"}[type(value)]
    return ("w", kind, [value])


ALL = ["add", "sub", "mul", "div", "maximum", "eq", "lt", "pow"]
CORE = ["add", "mul", "div", "lt"]
ARITH = ["add", "sub", "mul", "div", "eq", "lt"]  # no pow (float exponents are inexact), no maximum (w)
# (a, b, ops): every op in ops for the pair; maximum is dropped for w operands (torch.maximum
# takes tensors only) and pow where the exponent is not integer-valued.
PAIRS = [
    # same category, the dimensioned tensor's dtype wins over a 0-dim's
    (t("int32"), z("int64"), ALL),
    (t("int64"), z("int32"), CORE),
    (t("uint8"), z("int8"), ALL),          # 0-dim int8 -1 is cast to uint8 255
    (t("int8"), z("uint8"), CORE),
    (t("int16"), z("int64", 300), ["add", "mul", "eq", "lt"]),  # 300 fits int16
    (t("uint8"), z("int64", 300), ["add", "mul", "eq", "lt"]),  # 0-dim 300 cast to uint8 44
    (t("float32"), z("float64"), ALL),
    (t("float16"), z("float32"), ALL),
    (t("bfloat16"), z("float64"), CORE),
    (t("float16"), z("bfloat16"), CORE),
    (t("float64"), z("float16"), CORE),
    (t("bool"), z("bool"), ALL),
    (t("complex64"), z("complex128"), ["add", "sub", "mul", "div", "eq"]),
    # a 0-dim of a higher category wins
    (t("bool"), z("int8", 2), ALL),
    (t("bool"), z("float64"), CORE),
    (t("int32"), z("float64"), ALL),
    (t("uint8"), z("float32"), CORE),
    (t("int64"), z("float16"), CORE),
    (t("float32"), z("complex128"), ["add", "sub", "mul", "div", "eq"]),
    (t("float16"), z("complex128"), ["add", "mul", "eq"]),   # complex32?
    (t("bfloat16"), z("complex128"), ["add", "mul", "eq"]),
    (t("int32"), z("complex64"), ["add", "mul", "eq"]),
    (t("complex64"), z("float64"), ["add", "sub", "mul", "div", "eq"]),
    # wrapped numbers
    (t("uint8"), w(2), ALL),
    (t("uint8"), w(300), ["add", "mul", "eq", "lt"]),       # 300 overflows uint8
    (t("uint8"), w(-1), ["add", "eq", "lt"]),
    (t("int8"), w(2), ["add", "mul", "div", "pow"]),
    (t("int32"), w(2.5), ARITH),
    (t("int64"), w(1j), ["add", "mul", "eq"]),
    (t("bool"), w(2), ALL),
    (t("bool"), w(True), ["add", "mul", "eq", "lt", "pow"]),
    (t("bool"), w(2.5), ["add", "mul", "div"]),
    (t("float16"), w(2.5), ARITH),
    (t("float16"), w(2), ["mul", "pow"]),
    (t("float16"), w(1j), ["add", "mul"]),                   # complex32?
    (t("bfloat16"), w(1j), ["add", "mul"]),
    (t("float64"), w(1j), ["add", "mul"]),
    (t("float32"), w(2), ["div", "pow"]),
    (t("int32"), w(-1), ["pow"]),                             # integers to negative powers
    # the 0-dim / scalar first
    (w(2), t("int32"), ["add", "sub", "mul", "div", "lt", "pow"]),
    (w(2.5), t("uint8"), ["add", "sub", "div"]),
    (w(True), t("int8"), ["add", "mul"]),
    (z("float64"), t("float32"), ["add", "sub", "mul", "div", "maximum", "lt"]),
    (z("int64"), t("bool"), ["add", "mul", "maximum"]),
    (z("int8"), t("uint8"), ["add", "sub", "maximum"]),
    (z("float32", 2.0), t("int32"), ["pow", "div"]),
    # both 0-dim or 0-dim with a wrapped number
    (z("float32"), z("float64", 2.0), ["add", "mul", "div", "pow"]),
    (z("int32"), z("uint8"), ["add", "mul", "div"]),
    (z("int32"), w(2.5), ["add", "mul"]),
    (z("uint8"), w(300), ["add"]),
    (z("float16"), w(1j), ["add"]),
    # dimensioned pairs, for contrast
    (t("int32"), t("int64"), ["add", "div"]),
    (t("float16"), t("float32"), ["add", "mul"]),
    (t("float32"), z("float64", 2.0), ["pow"]),
    (t("int32"), z("float64", 2.0), ["pow"]),
    (t("int32"), w(2.0), ["pow"]),
]

OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
       "div": lambda a, b: a / b, "maximum": torch.maximum, "eq": lambda a, b: a == b,
       "lt": lambda a, b: a < b, "pow": lambda a, b: a ** b}


def make(spec):
    kind, dtype, values = spec
    if kind == "w":
        return values[0]
    v = values if kind == "t" else values[0]
    return torch.tensor(v, dtype=DT[dtype])


def complex_literal(c):
    s = repr(complex(c))
    return s[1:-1] if s.startswith("(") else s


def value_text(spec):
    kind, dtype, values = spec
    if kind == "w":
        return repr(values[0])
    if dtype == "bool":
        return ",".join("1" if v else "0" for v in values)
    if dtype.startswith("complex"):
        return ",".join(complex_literal(v) for v in values)
    if dtype.startswith(("float", "bfloat")):
        return ",".join(repr(float(v)) for v in values)
    return ",".join(str(int(v)) for v in values)


def result_values(r):
    r = r.reshape(-1)
    if r.dtype == torch.bool:
        return ["1" if v else "0" for v in r.tolist()]
    if r.is_complex():
        return [f"{repr(float(v.real))},{repr(float(v.imag))}" for v in r.to(torch.complex128).tolist()]
    return [repr(float(v)) for v in r.to(torch.float64).tolist()]


def elementwise():
    lines = []
    for a, b, ops in PAIRS:
        for op in ops:
            if op == "maximum" and "w" in (a[0], b[0]):
                continue
            if op == "pow" and not all(float(v) == int(v) for v in b[2] if not isinstance(v, complex)):
                continue
            head = f"ew {op} {a[0]} {a[1]} {value_text(a)} {b[0]} {b[1]} {value_text(b)}"
            try:
                r = OPS[op](make(a), make(b))
                lines.append(head + " " + " ".join([NAME[r.dtype]] + result_values(r)))
            except (RuntimeError, TypeError):
                lines.append(head + " error")
    return lines


def main():
    lines = [f"# generated by tools/make_result_type_golden.py with torch {torch.__version__}"]
    lines += result_types() + result_types3() + casts() + inplace() + elementwise()
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
