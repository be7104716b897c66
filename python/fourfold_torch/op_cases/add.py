"""torch.add of two [rows, cols] tensors."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    return torch.add, (mk.matrix(c.p), mk.matrix(c.p, 1)), "torch.add"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(2 * e * s, e * s, 0.0)
