"""The Wan VAE's RMS norm over the channels of x [N, C, *] with gamma, then the SiLU fourfold fuses into it;
PyTorch has no op, so the call is diffusers' formula with fourfold's eps."""


import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS


def call(c, mk):
    x, w = mk.t(c.p["x"]), mk.t([c.p["x"][1]], 1)
    view = [1, -1] + [1] * (len(c.p["x"]) - 2)

    def norm(x, w):
        return F.silu(x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + RMS_EPS) * w.view(view))
    return norm, (x, w), "composed rms over channels + F.silu"


def fourfold_call(c, mk):
    # The composed call's eps is added to the mean square, as channel_rms_norm's.
    x, w = mk.t(c.p["x"]), mk.t([c.p["x"][1]], 1)
    return ((lambda x, w: torch.ops.fourfold.channel_rms_norm(x, w, RMS_EPS, True)), (x, w),
            "fourfold.channel_rms_norm + silu")
