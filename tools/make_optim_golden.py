#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/optim.txt: PyTorch 1.13's parameter values after each step of SGD, Adam,
AdamW and RMSprop (foreach=False, float32 and float64, with parameter groups), and the learning
rates that its LR schedulers give epoch by epoch.

Optimizer cases ('|'-separated, no spaces around '|'; options as key=value, comma-separated,
every option of the optimizer written out with torch's value, booleans as 0/1, Adam's betas
as beta1=..,beta2=..):
    case|<id>|<optimizer>|<dtype>|<steps>|<default options>
    group|<g>|<options of group g>            (g = 0, 1, ...)
    param|<i>|<g>|<shape>|<initial values>    (row-major, golden_common.fmt)
    grad|<step>|<i>|<values>                  (p.grad before step <step>, steps 1..<steps>)
    value|<step>|<i>|<values>                 (parameter i right after step <step>)
Scheduler cases (SGD, one parameter, lr=0.1, momentum 0; lrs read before each of 25 epochs,
then optimizer.step(); scheduler.step(), %.17g):
    sched|<id>|<scheduler>|<options>|<lrs>[|<metrics>]   (metrics for ReduceLROnPlateau only,
                                                          passed as scheduler.step(metrics[e]))
Run from the repository root with /usr/bin/python3 (torch 1.13): python3 tools/make_optim_golden.py
The output is deterministic.
"""
import os

import torch

from golden_common import fmt

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "optim.txt")
STEPS = 5
SCALE = [1.0, 0.3, 2.0, 0.1, 1.0]  # per-step gradient factor: shrinking steps exercise AMSGrad's max
SHAPES = [[3, 4], [5]]
EPOCHS = 25

KEYS = {
    "SGD": ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"],
    "Adam": ["lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"],
    "AdamW": ["lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"],
    "RMSprop": ["lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"],
}
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def num(v):
    if isinstance(v, bool):
        return str(int(v))
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def opts(name, d):
    d = dict(d)
    if "betas" in d:
        d["beta1"], d["beta2"] = d["betas"]
    return ",".join(f"{k}={num(d[k])}" for k in KEYS[name])


def shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def optim_case(out, seed, cid, name, dtype, kwargs, groups=None):
    """groups: None (every parameter in one group) or a list of per-group overrides, one per parameter."""
    dt = DTYPES[dtype]
    gp = torch.Generator().manual_seed(1000 + seed)
    gg = torch.Generator().manual_seed(2000 + seed)
    params = [torch.randn(s, dtype=dt, generator=gp).requires_grad_() for s in SHAPES]
    grads = [[torch.randn(s, dtype=dt, generator=gg) * SCALE[k] for s in SHAPES] for k in range(STEPS)]
    if groups is None:
        spec = [{"params": params}]
        gof = [0] * len(params)
    else:
        spec = [dict(over, params=[p]) for over, p in zip(groups, params)]
        gof = list(range(len(params)))
    opt = getattr(torch.optim, name)(spec, foreach=False, **kwargs)
    print(f"case|{cid}|{name}|{dtype}|{STEPS}|{opts(name, opt.defaults)}", file=out)
    for g, pg in enumerate(opt.param_groups):
        print(f"group|{g}|{opts(name, pg)}", file=out)
    for i, p in enumerate(params):
        print(f"param|{i}|{gof[i]}|{shape(p)}|{fmt(p)}", file=out)
    for k in range(STEPS):
        for i, p in enumerate(params):
            p.grad = grads[k][i].clone()
            print(f"grad|{k + 1}|{i}|{fmt(grads[k][i])}", file=out)
        opt.step()
        for i, p in enumerate(params):
            print(f"value|{k + 1}|{i}|{fmt(p)}", file=out)
    print(file=out)


def sched_case(out, sid, name, options, make, metrics=None):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    sch = make(opt)
    lrs = []
    for e in range(EPOCHS):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if metrics is None:
            sch.step()
        else:
            sch.step(metrics[e])
    line = f"sched|{sid}|{name}|{options}|" + " ".join("%.17g" % v for v in lrs)
    if metrics is not None:
        line += "|" + " ".join("%.17g" % m for m in metrics)
    print(line, file=out)


OPTIM_CASES = [
    ("sgd_f32_plain", "SGD", "float32", dict(lr=0.1)),
    ("sgd_f32_momentum", "SGD", "float32", dict(lr=0.1, momentum=0.9)),
    ("sgd_f32_dampening", "SGD", "float32", dict(lr=0.1, momentum=0.9, dampening=0.1)),
    ("sgd_f32_nesterov", "SGD", "float32", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("sgd_f32_weight_decay", "SGD", "float32", dict(lr=0.1, weight_decay=0.01)),
    ("sgd_f32_maximize", "SGD", "float32", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("sgd_f64_nesterov_wd", "SGD", "float64", dict(lr=0.05, momentum=0.9, weight_decay=0.1, nesterov=True)),
    ("adam_f32_default", "Adam", "float32", dict()),
    ("adam_f32_options", "Adam", "float32", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("adam_f32_amsgrad", "Adam", "float32", dict(lr=0.01, amsgrad=True)),
    ("adam_f32_maximize", "Adam", "float32", dict(lr=0.01, maximize=True)),
    ("adam_f64_amsgrad_wd", "Adam", "float64", dict(lr=0.01, amsgrad=True, weight_decay=0.05)),
    ("adamw_f32_default", "AdamW", "float32", dict()),
    ("adamw_f32_amsgrad", "AdamW", "float32", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("adamw_f64_beta1", "AdamW", "float64", dict(lr=0.02, betas=(0.85, 0.999))),
    ("rmsprop_f32_default", "RMSprop", "float32", dict()),
    ("rmsprop_f32_centered", "RMSprop", "float32", dict(centered=True)),
    ("rmsprop_f32_momentum", "RMSprop", "float32", dict(momentum=0.9)),
    ("rmsprop_f32_weight_decay", "RMSprop", "float32", dict(weight_decay=0.1)),
    ("rmsprop_f32_centered_momentum", "RMSprop", "float32", dict(centered=True, momentum=0.5)),
    ("rmsprop_f32_maximize", "RMSprop", "float32", dict(maximize=True)),
    ("rmsprop_f64_centered_momentum", "RMSprop", "float64", dict(lr=0.005, centered=True, momentum=0.9)),
]

# cuts after epochs 5, 10, 14 and 18 (the last one clamped to min_lr), then none: lr is at min_lr;
# 5.9999 is within the relative threshold of 6, so it is no improvement
PLATEAU_MIN = [10, 9, 8, 8, 8, 8, 7, 6, 6, 5.9999, 6, 6, 6, 6, 6, 6, 6, 6, 6, 4, 4, 4, 4, 4, 4]
# improvements under 0.1 count as none; patience 0 cuts at once, until eps stops the cuts at 1e-8
PLATEAU_MAX = [1.0, 1.5, 1.55, 2.0, 2.05, 2.05, 2.1, 3.0, 3.0, 3.05, 2.0, 2.5, 3.5, 3.55,
               3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.6, 3.6, 3.6, 3.6, 3.6]


def main():
    with open(OUT, "w") as out:
        for n, (cid, name, dtype, kw) in enumerate(OPTIM_CASES):
            optim_case(out, n, cid, name, dtype, kw)
        n = len(OPTIM_CASES)
        optim_case(out, n, "sgd_f32_groups", "SGD", "float32", dict(lr=0.1),
                   groups=[dict(lr=0.1, momentum=0), dict(lr=0.01, momentum=0.9)])
        optim_case(out, n + 1, "adam_f32_groups", "Adam", "float32", dict(lr=0.01),
                   groups=[dict(), dict(lr=0.001, weight_decay=0.1)])

        S = torch.optim.lr_scheduler
        sched_case(out, "step", "StepLR", "step_size=3,gamma=0.5", lambda o: S.StepLR(o, step_size=3, gamma=0.5))
        sched_case(out, "multistep", "MultiStepLR", "milestones=2;5;7,gamma=0.1",
                   lambda o: S.MultiStepLR(o, milestones=[2, 5, 7], gamma=0.1))
        sched_case(out, "cosine", "CosineAnnealingLR", "T_max=10,eta_min=0.001",
                   lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001))
        sched_case(out, "lambda", "LambdaLR", "lambda=0.95^epoch", lambda o: S.LambdaLR(o, lambda epoch: 0.95 ** epoch))
        sched_case(out, "exponential", "ExponentialLR", "gamma=0.9", lambda o: S.ExponentialLR(o, gamma=0.9))
        sched_case(out, "plateau_min", "ReduceLROnPlateau",
                   "mode=min,factor=0.5,patience=2,threshold=0.0001,threshold_mode=rel,cooldown=1,min_lr=0.01,eps=1e-08",
                   lambda o: S.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=2, threshold=1e-4,
                                                 threshold_mode="rel", cooldown=1, min_lr=0.01, eps=1e-8),
                   PLATEAU_MIN)
        sched_case(out, "plateau_max", "ReduceLROnPlateau",
                   "mode=max,factor=0.1,patience=0,threshold=0.1,threshold_mode=abs,cooldown=0,min_lr=0,eps=1e-08",
                   lambda o: S.ReduceLROnPlateau(o, mode="max", factor=0.1, patience=0, threshold=0.1,
                                                 threshold_mode="abs", cooldown=0, min_lr=0, eps=1e-8),
                   PLATEAU_MAX)


if __name__ == "__main__":
    main()
