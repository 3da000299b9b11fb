# SPDX-License-Identifier: MIT
"""What the golden-data scripts share: values printed so that the C++ tests read them back exactly."""
import math

import torch


def fmt(t):
    """A tensor's elements, row-major, space-separated: float32 with 9 digits, others with 17
    (enough to round-trip); complex as (re, im) pairs; bool as 0/1; half and bfloat16 as float."""
    t = t.detach().reshape(-1)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    if t.dtype == torch.bool:
        t = t.to(torch.int64)
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.to(torch.float32)
    digits = "%.9g" if t.dtype == torch.float32 else "%.17g"  # enough to round-trip
    out = []
    for v in t.tolist():
        if isinstance(v, float):
            out.append("nan" if math.isnan(v) else ("inf" if v == math.inf else ("-inf" if v == -math.inf else digits % v)))
        else:
            out.append(str(v))
    return " ".join(out)
