#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/port.txt: PyTorch 1.13's values for the small PyTorch programs that
tests/port_test.cpp ports line by line to strata (one function here per TEST_CASE there, written
as the same operations in the same order, so the tolerance-0 checks compare bitwise).

One line a checked value:  <name> <dtype> <sizes> <v0> <v1> ...
  dtype   torch's name without "torch." (float32, float64, int64, int16, uint8, bool, ...)
  sizes   joined by 'x' (2x3, 4), or `scalar` for a 0-dim tensor
  values  row-major; %.9g for float32, %.17g for float64 (nan, inf, -inf), integers as integers,
          bool as 0/1
The names written are exactly those of the check("name", ...) calls in tests/port_test.cpp
(asserted). Run with /usr/bin/python3 (torch 1.13); no random numbers, the output is
deterministic.
"""
import math
import os
import re
import torch
import torch.nn.functional as F

from golden_common import fmt

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "golden", "port.txt")
TEST = os.path.join(ROOT, "tests", "port_test.cpp")
values = {}  # name -> line, in the order checked


def check(name, x):
    """Records x (a tensor) as the golden value `name`, as port_test.cpp's check() reads it."""
    assert name not in values, name
    assert isinstance(x, torch.Tensor), name
    assert x.dtype in (torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8,
                       torch.uint8, torch.bool), (name, x.dtype)
    sizes = "x".join(str(s) for s in x.shape) if x.dim() else "scalar"
    line = f"{name} {str(x.dtype).replace('torch.', '')} {sizes}"
    if x.numel():
        line += " " + fmt(x)
    values[name] = line


def linear_regression_with_sgd():
    X = torch.arange(20).float().view(10, 2) / 10
    y = X.matmul(torch.tensor([[2.0], [-1.0]])) + 0.5
    w = torch.zeros((2, 1)).requires_grad_()
    b = torch.zeros((1,)).requires_grad_()
    loss = None
    for step in range(20):
        pred = X.matmul(w) + b
        loss = (pred - y).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    check("linreg_w", w)
    check("linreg_b", b)
    check("linreg_loss", loss)


def an_mlp_classifier_with_cross_entropy():
    X = torch.linspace(-1, 1, 24).view(6, 4)
    y = torch.tensor([0, 1, 2, 1, 0, 2])
    W1 = ((torch.arange(32) % 7 - 3) / 10).view(4, 8).requires_grad_()
    b1 = torch.zeros(8).requires_grad_()
    W2 = ((torch.arange(24) % 5 - 2) / 5).view(8, 3).requires_grad_()
    b2 = torch.zeros(3).requires_grad_()
    loss = None
    for step in range(5):
        h = (X.matmul(W1) + b1).relu()
        z = h.matmul(W2) + b2
        loss = -z.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
        loss.backward()
        with torch.no_grad():
            for p in (W1, b1, W2, b2):
                p -= 0.5 * p.grad
                p.grad.zero_()
    check("mlp_loss", loss)
    check("mlp_W2", W2)
    logits = (X.matmul(W1) + b1).relu().matmul(W2) + b2
    pred = logits.argmax(1)
    check("mlp_pred", pred)
    check("mlp_acc", (pred == y).float().mean())
    check("mlp_probs", logits.softmax(-1))
    best, best_at = logits.max(1)
    check("mlp_max_values", best)
    check("mlp_max_indices", logits.max(1)[1])
    check("mlp_onehot", F.one_hot(y, 3))


def causal_self_attention():
    q = torch.arange(64).float().view(2, 4, 8).sin()
    k = torch.arange(64).float().view(2, 4, 8).cos()
    v = (torch.arange(64).float() / 64).view(2, 4, 8)
    scores = q.matmul(k.transpose(-2, -1)) / math.sqrt(8.0)
    mask = torch.ones(4, 4).tril() == 0
    attn = scores.masked_fill(mask, float("-inf")).softmax(-1)
    out = attn.matmul(v)
    check("attn_weights", attn)
    check("attn_out", out)
    check("attn_einsum", torch.einsum("bij,bjd->bid", attn, v))
    check("attn_rowsum", torch.matmul(torch.softmax(scores, -1), v).sum(-1))


def a_convolution_and_a_max_pool_written_with_unfold():
    img = (torch.arange(36).float() / 36).view(1, 1, 6, 6)
    kern = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
    patches = img.unfold(2, 3, 1).unfold(3, 3, 1)
    conv = (patches * kern).sum((-2, -1))
    pooled = conv.unfold(2, 2, 2).unfold(3, 2, 2).amax((-2, -1))
    check("conv_out", conv)
    check("conv_pool", pooled)
    cols = patches.reshape(16, 9)
    check("conv_im2col", cols.matmul(kern.reshape(9)).view(1, 1, 4, 4))


def n_body_accelerations():
    pos = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).double()
    m = torch.tensor([1, 2, 3, 4], dtype=torch.float64)
    d = pos.unsqueeze(0) - pos.unsqueeze(1)
    r2 = (d * d).sum(-1) + 0.01
    acc = (d * (r2.pow(-1.5) * m).unsqueeze(-1)).sum(1)
    check("nbody_acc", acc)
    vel = torch.zeros((4, 3), dtype=torch.float64)
    vel += 0.1 * acc
    check("nbody_vel", vel)
    check("nbody_energy", (0.5 * m * (vel * vel).sum(1)).sum())


def column_statistics():
    X = torch.arange(30).double().view(10, 3).sin() * 10
    Xs = (X - X.mean(0, keepdim=True)) / X.std(0, unbiased=True, keepdim=True)
    check("stats_standardised", Xs)
    Xc = X - X.mean(0)
    cov = Xc.t().matmul(Xc) / (X.size(0) - 1)
    check("stats_cov", cov)
    check("stats_median", X.median(0)[0])
    check("stats_argmin", X.argmin(1))
    check("stats_var", X.var(1))
    check("stats_norm", X.norm(2, 1))
    check("stats_logsumexp", (X / 10).logsumexp(1))
    check("stats_cumsum", X.cumsum(0))
    top, top_at = X.abs().topk(2, 0)
    check("stats_topk", top)
    check("stats_topk_at", top_at)
    check("stats_sort", X.sum(1).sort(0, descending=True)[0])


def a_uint8_image_pipeline_adds_channels_in_index_order():
    img = (torch.arange(1080 * 19 * 3) * 37 % 256).to(torch.uint8).view(1080, 19, 3)
    w = torch.tensor([0.299, 0.587, 0.114])
    gray = (img.float() / 255 * w).sum(-1)
    check("image_gray", gray)
    g8 = (gray * 255).clamp(0, 255).round().to(torch.uint8)
    check("image_u8", g8)
    check("image_flip", g8.flip(1).narrow(0, 0, 2))


def layer_norm_and_gelu_with_gradients():
    x = (torch.arange(24).double().view(2, 3, 4) * 0.37).sin().requires_grad_()
    g = torch.linspace(0.5, 1.5, 4, dtype=torch.float64).requires_grad_()
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    y = (x - mu) / (var + 1e-5).sqrt() * g
    out = F.gelu(y)
    out.sum().backward()
    check("ln_out", out)
    check("ln_grad_x", x.grad)
    check("ln_grad_g", g.grad)


def dtype_rules_a_port_meets():
    i = torch.tensor([1, 2, 3])
    check("dtype_true_div", i / 2)
    check("dtype_int_plus_float", i.to(torch.int32) + 2.5)
    check("dtype_u8_plus_i8", torch.tensor([200, 100], dtype=torch.uint8) + torch.tensor([-1, 1], dtype=torch.int8))
    check("dtype_sum_int", i.to(torch.int32).sum())
    check("dtype_count", (i > 1).sum())
    check("dtype_zeros", torch.zeros((2, 2)))
    check("dtype_scalar", torch.scalar_tensor(2.5))
    check("dtype_full", torch.full((2,), 1.5))


def every_function_family_takes_expressions():
    x = torch.arange(12).float().view(3, 4)
    idx = torch.tensor([2, 0])
    # joins
    check("family_cat", torch.cat([x, torch.pow(x, 2), torch.sin(3 * x)], 1))
    check("family_stack", torch.stack([x.sum(0), x.mean(0), x.amax(0)]))
    # indexing
    check("family_index_select", (x * 2).index_select(0, idx))
    check("family_gather", torch.gather(x + 1, 1, torch.tensor([[0, 3], [1, 2], [2, 1]])))
    check("family_scatter", torch.zeros((3, 4)).scatter(1, torch.tensor([[0], [1], [2]]), x.narrow(1, 0, 1) * 10))
    check("family_masked_fill", (x - 5).masked_fill(x > 6, 0))
    check("family_masked_select", x.masked_select(x.remainder(3) == 0))
    check("family_take", (x + 0.5).take(idx))
    check("family_nonzero", (x.remainder(5) == 0).nonzero())
    check("family_bincount", torch.bincount(torch.tensor([1, 1, 3, 0, 3, 3])))
    # manipulation
    check("family_flip", (x + 1).flip(0, 1))
    check("family_roll", (x * 1).roll(1, 1))
    check("family_repeat", x.narrow(0, 0, 1).repeat(2, 1))
    check("family_tril", (x + 1).tril())
    check("family_chunk", (x * 3).chunk(2, 1)[1])
    check("family_split", torch.split(x - 1, 2, 1)[0])
    # sorting and scans
    check("family_argsort", (x.sin()).argsort(1))
    check("family_cumprod", (x / 10 + 1).cumprod(1))
    check("family_kthvalue", (x.cos()).kthvalue(2, 1)[0])
    check("family_quantile", (x * 1.5).quantile(0.3, 1))
    check("family_quantile_all", x.sin().quantile(torch.tensor([0.25, 0.5, 1.0])))
    check("family_quantile_nearest", x.quantile(0.25, 0, True, interpolation="nearest"))  # rank 0.5: half to even
    check("family_nanquantile", torch.nanquantile(x.masked_fill(x.remainder(4) == 1, math.nan), 0.75, 1))
    # reductions with int dims
    check("family_sum_int_dim", torch.sum(x, 1))
    check("family_mean_keepdim", x.mean(1, keepdim=True))
    check("family_logsumexp", torch.logsumexp(x / 4, 0))
    check("family_permute", (x + 0).view(3, 2, 2).permute(2, 0, 1))
    check("family_view_flat", x.view(-1).narrow(0, 5, 3))
    check("family_reshape", (x * 2).reshape(-1))
    check("family_std_squeeze", torch.std(x, [0], unbiased=True, keepdim=True).squeeze(0))
    check("family_amax_index", torch.amax(x, [1])[0])
    check("family_t", (x * x).t())
    check("family_unsqueeze", (1 + 0.05 * torch.arange(3)).unsqueeze(1))
    # products
    check("family_mm", (x / 2).mm(x.t()))
    check("family_outer", torch.outer(x.sum(1), x.amax(1)))
    check("family_dot", (x[0] + 1).dot(x[1]))
    check("family_einsum_trace", torch.einsum("ii->", x.narrow(1, 0, 3) * 2))
    # types and helpers
    check("family_type_as", x.type_as(torch.zeros((1,), dtype=torch.float64)) / 3)
    check("family_clamp", x.clamp(2, 7))
    check("family_where", x.where(x > 5, -x))
    check("family_diagonal", torch.diagonal(x * 2, 1))


linear_regression_with_sgd()
an_mlp_classifier_with_cross_entropy()
causal_self_attention()
a_convolution_and_a_max_pool_written_with_unfold()
n_body_accelerations()
column_statistics()
a_uint8_image_pipeline_adds_channels_in_index_order()
layer_norm_and_gelu_with_gradients()
dtype_rules_a_port_meets()
every_function_family_takes_expressions()

with open(TEST) as f:
    wanted = list(dict.fromkeys(re.findall(r'\bcheck\("([A-Za-z0-9_]+)"', f.read())))  # a name may be checked twice
assert set(wanted) == set(values), (sorted(set(wanted) - set(values)), sorted(set(values) - set(wanted)))
with open(OUT, "w") as f:
    f.write("\n".join(values[n] for n in wanted) + "\n")
print(f"{len(values)} values ({sum(len(l.split()) - 3 for l in values.values())} numbers) -> {os.path.normpath(OUT)}")
