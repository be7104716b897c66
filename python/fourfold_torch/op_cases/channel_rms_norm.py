"""The Wan VAE's RMS norm over the channels of x [N, C, *] with gamma, then the SiLU fourfold fuses into it;
PyTorch has no op, so the call is diffusers' formula with fourfold's eps."""

import math

import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS
from ..op_cost import OpCost
from ..suites import dims, need_channels

FIELDS = ("x",)
SMALL = {"x": [1, 6, 2, 3, 5]}


def shape(p):
    return f"x[{dims(p['x'])}] gamma[{p['x'][1]}] +silu"


def check(r, e, path, p):
    need_channels(r, e, path, p)


def call(c, mk):
    x, w = mk.t(c.p["x"]), mk.t([c.p["x"][1]], 1)
    view = [1, -1] + [1] * (len(c.p["x"]) - 2)

    def norm(x, w):
        return F.silu(x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + RMS_EPS) * w.view(view))
    return norm, (x, w), "composed rms over channels + F.silu"


def cost(c, s):
    x = c.p["x"]
    return OpCost((math.prod(x) + x[1]) * s, math.prod(x) * s, 0.0)


def fourfold_call(c, mk):
    # The composed call's eps is added to the mean square, as channel_rms_norm's.
    x, w = mk.t(c.p["x"]), mk.t([c.p["x"][1]], 1)
    return ((lambda x, w: torch.ops.fourfold.channel_rms_norm(x, w, RMS_EPS, True)), (x, w),
            "fourfold.channel_rms_norm + silu")
