"""F.group_norm of x [N, C, *] in `groups` groups with a per-channel weight and bias."""

import math

import torch.nn.functional as F

from ..op_cost import OpCost
from ..suites import dims, need_channels

FIELDS = ("x", "groups")
SMALL = {"x": [2, 8, 3, 5], "groups": 4}


def shape(p):
    return f"x[{dims(p['x'])}] groups {p['groups']}"


def check(r, e, path, p):
    need_channels(r, e, path, p)
    if p["x"][1] % p["groups"]:
        r.bad(path + ".groups", f"a divisor of C={p['x'][1]}", e["groups"])


def call(c, mk):
    x, groups = c.p["x"], c.p["groups"]
    return ((lambda x, w, b: F.group_norm(x, groups, w, b)), (mk.t(x), mk.t([x[1]], 1), mk.t([x[1]], 2)),
            "F.group_norm")


def cost(c, s):
    x = c.p["x"]
    return OpCost((math.prod(x) + 2.0 * x[1]) * s, math.prod(x) * s, 0.0)
