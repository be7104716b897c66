"""A MoE layer's experts as transformers runs them with grouped_mm: gather the routed rows, gate and up
products, SiLU times up, down product, weighted scatter-add. Its rows are in the moe suite, routed as
grouped_mm's."""

import math

import torch
import torch.nn.functional as F

from .grouped_mm import grouped, grouped_oracle, groups


def _inputs(p, mk):
    """x, the expert stacks and each routed row's token (row r is token r mod T), with the routing."""
    ends, total, dev, offs = groups(p, mk)
    n, k, T = p["n"], p["k"], p["tokens"]
    x = mk.t([T, k])
    gate = mk.t([p["experts"], n, k], 1, 1.0 / math.sqrt(k))
    up = mk.t([p["experts"], n, k], 2, 1.0 / math.sqrt(k))
    down = mk.t([p["experts"], k, n], 3, 1.0 / math.sqrt(n))
    rows = torch.tensor([r % max(T, 1) for r in range(total)], dtype=torch.int64, device=dev)
    return x, gate, up, down, rows, (ends, total, dev, offs)


def call(c, mk):
    p = c.p
    x, gate, up, down, rows, (ends, total, dev, offs) = _inputs(p, mk)
    k, T = p["k"], p["tokens"]
    weight = 1.0 / p["top_k"]
    if mk.oracle:
        def oracle(x, gate, up, down):
            xs = x[rows]
            h = F.silu(grouped_oracle(xs, gate.transpose(1, 2), ends)) * grouped_oracle(xs, up.transpose(1, 2), ends)
            d = grouped_oracle(h, down.transpose(1, 2), ends) * weight
            return torch.zeros(T, k, dtype=torch.float64).index_add_(0, rows, d)
        return oracle, (x, gate, up, down), ""
    w32 = torch.full([total, 1], weight, dtype=torch.float32, device=dev)

    def experts(x, gate, up, down, rows, offs, w32):   # transformers' grouped_mm experts: gather, three
        xs = x[rows]                                       # grouped products, weighted scatter-add
        h = F.silu(grouped(xs, gate.transpose(1, 2), offs)) * grouped(xs, up.transpose(1, 2), offs)
        d = (grouped(h, down.transpose(1, 2), offs).float() * w32).to(x.dtype)
        return torch.zeros(T, k, dtype=x.dtype, device=dev).index_add_(0, rows, d)
    return experts, (x, gate, up, down, rows, offs, w32), "grouped_mm x3 + index_add"


def fourfold_call(c, mk):
    """The same routed rows through torch.ops.fourfold.moe_experts (rows sorted by expert, offs their ends)."""
    p = c.p
    x, gate, up, down, rows, (_, total, dev, offs) = _inputs(p, mk)
    w32 = torch.full([total], 1.0 / p["top_k"], dtype=torch.float32, device=dev)
    return (torch.ops.fourfold.moe_experts, (x, gate, up, down, rows.to(torch.int32), w32, offs),
            "fourfold.moe_experts")
