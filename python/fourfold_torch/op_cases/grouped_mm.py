"""F.grouped_mm: the moe suite's per-expert products a[rows of expert e] @ b[e]; the suite's moe_experts rows
(gate, up, down and the weighted scatter) are moe_experts.py's, built on the routing and helpers here."""

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..op_calls import Unsupported


def groups(p, mk):
    """The routing as group ends, their total and the offs tensor grouped_mm takes, on mk's device."""
    sizes = p["group_sizes"]   # fourfold routes the tokens (moe_group_sizes in src/check/op_cases/moe_params.h)
    ends = list(np.cumsum(sizes)) if sizes else []
    total = int(ends[-1]) if ends else 0
    dev = "cpu" if mk.oracle else mk.device
    offs = torch.tensor([int(e) for e in ends], dtype=torch.int32, device=dev)
    if not hasattr(F, "grouped_mm") and not hasattr(torch, "_grouped_mm"):
        raise Unsupported("this PyTorch has no grouped_mm (F.grouped_mm / torch._grouped_mm)")
    return ends, total, dev, offs


def grouped(a, b, offs):
    if hasattr(F, "grouped_mm"):
        return F.grouped_mm(a, b, offs=offs)
    return torch._grouped_mm(a, b, offs=offs)


def grouped_oracle(a, b, ends):
    """Per expert a[rows of e] @ b[e], in float64."""
    out = torch.zeros(a.shape[0], b.shape[2], dtype=torch.float64)
    start = 0
    for e, end in enumerate(ends):
        if end > start:
            out[start:end] = a[start:end] @ b[e]
        start = end
    return out


def call(c, mk):
    p = c.p
    ends, total, _, offs = groups(p, mk)
    a = mk.t([total, p["k"]])
    b = mk.t([p["experts"], p["n"], p["k"]], 1, 1.0 / math.sqrt(p["k"])).transpose(1, 2)
    if mk.oracle:
        return (lambda a, b: grouped_oracle(a, b, ends)), (a, b), ""
    return grouped, (a, b, offs), "F.grouped_mm" if hasattr(F, "grouped_mm") else "torch._grouped_mm"
