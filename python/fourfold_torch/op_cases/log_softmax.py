"""torch.log_softmax over the last dim of x [rows, cols]."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    return (lambda x: torch.log_softmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "torch.log_softmax"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(e * s, e * s, 0.0)


def fourfold_call(c, mk):
    return (lambda x: torch.ops.fourfold.log_softmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "fourfold.log_softmax"
