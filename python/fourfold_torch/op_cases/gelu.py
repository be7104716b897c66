"""F.gelu with the tanh approximation on x [rows, cols]."""

import torch.nn.functional as F

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}] tanh"


def call(c, mk):
    return (lambda x: F.gelu(x, approximate="tanh")), (mk.matrix(c.p, 0, 4.0),), "F.gelu tanh"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(e * s, e * s, 0.0)
