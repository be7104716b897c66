"""F.conv2d and F.conv3d: the conv suite holds both (x [N, C, H, W] or [N, C, T, H, W]) and is read here;
conv3d.py runs and costs its rows with the same code."""

import math

import torch
import torch.nn.functional as F

from ..op_cost import OpCost
from ..suites import dims

SUITE = "conv"


def read(r, j, add, dtypes):
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        name = r.string(r.need(e, path, "name"), path + ".name")
        x = r.integers(r.need(e, path, "x"), path + ".x")
        if len(x) not in (4, 5):
            r.bad(path + ".x", "[N, C, H, W] (conv2d) or [N, C, T, H, W] (conv3d)", x)
        w = r.integers(r.need(e, path, "weight"), path + ".weight")
        spatial = len(x) - 2

        def param(key, minimum, fallback):
            v = r.integers(e[key], f"{path}.{key}", minimum) if key in e else [fallback]
            v = v * spatial if len(v) == 1 else v
            if len(v) != spatial:
                r.bad(f"{path}.{key}", f"1 or {spatial} values", e[key])
            return v
        p = dict(x=x, weight=w, stride=param("stride", 1, 1), padding=param("padding", 0, 0),
                 dilation=param("dilation", 1, 1), groups=r.integer(e["groups"], path + ".groups") if "groups" in e else 1,
                 bias=e.get("bias", True))
        shape = (f"x[{dims(x)}] w[{dims(w)}]" + (" +bias" if p["bias"] else "")
                 + ("" if p["stride"] == [1] * spatial else " stride " + dims(p["stride"]))
                 + ("" if p["padding"] == [0] * spatial else " pad " + dims(p["padding"]))
                 + ("" if p["dilation"] == [1] * spatial else " dil " + dims(p["dilation"]))
                 + ("" if p["groups"] == 1 else f" groups {p['groups']}"))
        for dt in dtypes:
            add("conv2d" if len(x) == 4 else "conv3d", name, shape, dt, p)


def out_shape(p):
    x, w = p["x"], p["weight"]
    return [x[0], w[0]] + [(x[2 + d] + 2 * p["padding"][d] - p["dilation"][d] * (w[2 + d] - 1) - 1) // p["stride"][d] + 1
                           for d in range(len(x) - 2)]


def _inputs(p, mk):
    x = mk.t(p["x"])
    w = mk.t(p["weight"], 1, 1.0 / math.sqrt(math.prod(p["weight"]) / p["weight"][0]))
    b = mk.t([p["weight"][0]], 2) if p["bias"] else None
    return x, w, b


def call(c, mk):
    p = c.p
    x, w, b = _inputs(p, mk)
    conv = F.conv2d if len(p["x"]) == 4 else F.conv3d
    stride, padding, dilation, groups = p["stride"], p["padding"], p["dilation"], p["groups"]
    return ((lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups)), (x, w, b),
            "F.conv2d" if len(p["x"]) == 4 else "F.conv3d")


def cost(c, s):
    p = c.p
    out = math.prod(out_shape(p))
    fan_in = math.prod(p["weight"]) / p["weight"][0]
    return OpCost((math.prod(p["x"]) + math.prod(p["weight"]) + (p["weight"][0] if p["bias"] else 0)) * s, out * s,
                  2.0 * out * fan_in)


def fourfold_call(c, mk):
    p = c.p
    x, w, b = _inputs(p, mk)
    two = len(p["x"]) == 4
    conv = torch.ops.fourfold.conv2d if two else torch.ops.fourfold.conv3d
    stride, padding, dilation, groups = p["stride"], p["padding"], p["dilation"], p["groups"]
    return ((lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups)), (x, w, b),
            "fourfold.conv2d" if two else "fourfold.conv3d")
