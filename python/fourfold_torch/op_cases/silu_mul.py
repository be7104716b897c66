"""SwiGLU's F.silu(gate) * up on two [rows, cols] inputs."""

import torch
import torch.nn.functional as F

from ..op_cost import OpCost

FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    g, u = mk.matrix(c.p, 0, 4.0), mk.matrix(c.p, 1)
    return (lambda g, u: F.silu(g) * u), (g, u), "F.silu * up"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(2 * e * s, e * s, 0.0)


def fourfold_call(c, mk):
    g, u = mk.matrix(c.p, 0, 4.0), mk.matrix(c.p, 1)
    return torch.ops.fourfold.silu_mul, (g, u), "fourfold.silu_mul"
