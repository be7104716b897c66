"""torch.sigmoid on x [rows, cols]."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    return torch.sigmoid, (mk.matrix(c.p, 0, 4.0),), "torch.sigmoid"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(e * s, e * s, 0.0)
