"""torch.argmax of the last dim of x [rows, cols]: int64 indices."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    return (lambda x: torch.argmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "torch.argmax"


def cost(c, s):
    return OpCost(float(c.p["rows"] * c.p["cols"]) * s, 8.0 * c.p["rows"], 0.0)


def fourfold_call(c, mk):
    return (lambda x: torch.ops.fourfold.argmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "fourfold.argmax"
