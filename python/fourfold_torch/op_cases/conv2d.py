"""F.conv2d and F.conv3d: the conv suite holds both (x [N, C, H, W] or [N, C, T, H, W]); conv3d.py runs its
rows with the same code."""

import math

import torch
import torch.nn.functional as F


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


def fourfold_call(c, mk):
    p = c.p
    x, w, b = _inputs(p, mk)
    two = len(p["x"]) == 4
    conv = torch.ops.fourfold.conv2d if two else torch.ops.fourfold.conv3d
    stride, padding, dilation, groups = p["stride"], p["padding"], p["dilation"], p["groups"]
    return ((lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups)), (x, w, b),
            "fourfold.conv2d" if two else "fourfold.conv3d")
