"""A decoder layer's residual add then F.rms_norm (x + r, then the norm): fourfold runs it as rms_norm with a
residual, writing both the sum and the normed rows."""

import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS
from ..op_cost import OpCost

DISPATCH = "rms_norm"
FIELDS = ("rows", "cols")


def shape(p):
    return f"x[{p['rows']},{p['cols']}]"


def call(c, mk):
    cols = c.p["cols"]
    x, r, w = mk.matrix(c.p), mk.matrix(c.p, 1), mk.t([cols], 2)
    return (lambda x, r, w: F.rms_norm(x + r, [cols], w, RMS_EPS)), (x, r, w), "add + F.rms_norm"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost((2 * e + c.p["cols"]) * s, 2 * e * s, 0.0)


def fourfold_call(c, mk):
    cols = c.p["cols"]
    x, r, w = mk.matrix(c.p), mk.matrix(c.p, 1), mk.t([cols], 2)
    return ((lambda x, r, w: torch.ops.fourfold.add_rms_norm(x, r, [cols], w, RMS_EPS)), (x, r, w),
            "fourfold.add_rms_norm")
