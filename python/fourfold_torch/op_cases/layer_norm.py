"""F.layer_norm over the last dim of x [rows, cols] with weight and bias (PyTorch's default eps)."""

import torch.nn.functional as F

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    cols = c.p["cols"]
    x, w, b = mk.matrix(c.p), mk.t([cols], 1), mk.t([cols], 2)
    return (lambda x, w, b: F.layer_norm(x, [cols], w, b)), (x, w, b), "F.layer_norm"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost((e + 2.0 * c.p["cols"]) * s, e * s, 0.0)
