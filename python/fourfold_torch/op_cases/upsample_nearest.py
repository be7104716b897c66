"""F.interpolate nearest of x [N, C, *spatial] (1 to 3 spatial dims) to `size`."""

import math

import torch
import torch.nn.functional as F

from ..op_cost import OpCost
from ..suites import dims

FIELDS = ("x", "size")
SMALL = {"x": [2, 3, 4, 5], "size": [8, 10]}


def shape(p):
    return f"x[{dims(p['x'])}] -> [{dims(p['size'])}]"


def check(r, e, path, p):
    if not 3 <= len(p["x"]) <= 5:
        r.bad(path + ".x", "[N, C, *spatial] with 1 to 3 spatial dims", e["x"])
    if len(p["size"]) + 2 != len(p["x"]):
        r.bad(path + ".size", f"{len(p['x']) - 2} values, one per spatial dim", e["size"])


def call(c, mk):
    size = c.p["size"]
    return (lambda x: F.interpolate(x, size=size, mode="nearest")), (mk.t(c.p["x"]),), "F.interpolate nearest"


def cost(c, s):
    x = c.p["x"]
    return OpCost(math.prod(x) * s, math.prod(x[:2] + c.p["size"]) * s, 0.0)


def fourfold_call(c, mk):
    size = c.p["size"]
    return (lambda x: torch.ops.fourfold.upsample_nearest(x, size)), (mk.t(c.p["x"]),), "fourfold.upsample_nearest"
