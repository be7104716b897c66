"""torch.topk of the last dim of x [rows, cols]: values and int64 indices."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols", "k")
SMALL = {"rows": 3, "cols": 100, "k": 5}


def shape(p):
    return f"x[{p['rows']},{p['cols']}] k {p['k']}"


def check(r, e, path, p):
    if p["k"] > p["cols"]:
        r.bad(path + ".k", f"at most cols={p['cols']}", e["k"])


def call(c, mk):
    k = c.p["k"]
    return (lambda x: torch.topk(x, k)), (mk.matrix(c.p, 0, 8.0),), "torch.topk"


def cost(c, s):
    p = c.p
    return OpCost(float(p["rows"] * p["cols"]) * s, p["rows"] * p["k"] * (s + 8.0), 0.0)


def fourfold_call(c, mk):
    k = c.p["k"]
    return (lambda x: torch.ops.fourfold.topk(x, k)), (mk.matrix(c.p, 0, 8.0),), "fourfold.topk"
