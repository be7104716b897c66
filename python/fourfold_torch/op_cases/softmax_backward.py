"""Softmax's backward over the last dim: torch._softmax_backward_data on grad and output [rows, cols]."""

import torch

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    g, y = mk.matrix(c.p), mk.matrix(c.p, 1, 1.0 / c.p["cols"])
    return (lambda g, y: torch._softmax_backward_data(g, y, -1, y.dtype)), (g, y), "torch._softmax_backward_data"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(2 * e * s, e * s, 0.0)
