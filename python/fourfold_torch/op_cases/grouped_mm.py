"""F.grouped_mm: the moe suite's per-expert products a[rows of expert e] @ b[e]; the suite's moe_experts rows
(gate, up, down and the weighted scatter) are moe_experts.py's, built on the routing and helpers here."""

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..op_calls import Unsupported
from ..op_cost import OpCost

SUITE = "grouped_mm"


def read(r, j, add, dtypes):
    model = j.get("model", "")
    experts = r.integer(r.need(j, "", "experts"), "experts")
    top_k = r.integer(r.need(j, "", "top_k"), "top_k")
    tokens = r.integers(r.need(j, "", "tokens"), "tokens")
    routings = [r.choice(x, f"routing[{i}]", ("even", "skewed", "empty"))
                for i, x in enumerate(r.array(r.need(j, "", "routing"), "routing"))]
    for i, pj in enumerate(r.array(r.need(j, "", "projections"), "projections")):
        path = f"projections[{i}]"
        name = r.string(r.need(pj, path, "name"), path + ".name")
        op = r.choice(pj.get("op", "grouped_mm"), path + ".op", ("grouped_mm", "moe_experts"))
        n = r.integer(r.need(pj, path, "n"), path + ".n")
        k = r.integer(r.need(pj, path, "k"), path + ".k")
        for dt in dtypes:
            for t in tokens:
                for routing in routings:
                    label = f"{model}{' ' if model else ''}{name} {t} tok {routing}"
                    shape = (f"x[{t},{k}] gate,up[{experts},{n},{k}] down[{experts},{k},{n}] top{top_k}" if op == "moe_experts"
                             else f"a[{t * top_k},{k}] b[{experts},{k},{n}] top{top_k}")
                    add(op, label, shape, dt, dict(tokens=t, experts=experts, top_k=top_k, n=n, k=k, routing=routing))


def moe_group_sizes(tokens, experts, top_k, routing):
    sizes = [0] * experts
    assignments = tokens * top_k
    if routing == "even":
        for e in range(experts):
            sizes[e] = assignments // experts + (1 if e < assignments % experts else 0)
    elif routing == "skewed":   # D'Hondt over weights 1 / (e + 1), at most `tokens` per expert, ties low
        for _ in range(assignments):
            best, best_q = -1, -1.0
            for e in range(experts):
                if sizes[e] >= tokens:
                    continue
                q = 1.0 / (e + 1) / (sizes[e] + 1)
                if q > best_q:
                    best_q, best = q, e
            sizes[best] += 1
    else:   # empty: every token picks the same top_k experts
        for j in range(top_k):
            sizes[j * experts // top_k] = tokens
    return sizes


def active_experts(p):
    return float(sum(1 for v in moe_group_sizes(p["tokens"], p["experts"], p["top_k"], p["routing"]) if v > 0))


def groups(p, mk):
    """The routing as group ends, their total and the offs tensor grouped_mm takes, on mk's device."""
    sizes = moe_group_sizes(p["tokens"], p["experts"], p["top_k"], p["routing"])
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


def cost(c, s):
    p = c.p
    rows, n, k = float(p["tokens"] * p["top_k"]), p["n"], p["k"]
    return OpCost((rows * k + active_experts(p) * k * n) * s + 4.0 * p["experts"], rows * n * s, 2.0 * rows * n * k)
