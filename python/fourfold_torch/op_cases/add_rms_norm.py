"""A decoder layer's residual add then F.rms_norm (x + r, then the norm): fourfold runs it as rms_norm with a
residual, writing both the sum and the normed rows."""

import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS


def call(c, mk):
    cols = c.p["cols"]
    x, r, w = mk.matrix(c.p), mk.matrix(c.p, 1), mk.t([cols], 2)
    return (lambda x, r, w: F.rms_norm(x + r, [cols], w, RMS_EPS)), (x, r, w), "add + F.rms_norm"


def fourfold_call(c, mk):
    cols = c.p["cols"]
    x, r, w = mk.matrix(c.p), mk.matrix(c.p, 1), mk.t([cols], 2)
    return ((lambda x, r, w: torch.ops.fourfold.add_rms_norm(x, r, [cols], w, RMS_EPS)), (x, r, w),
            "fourfold.add_rms_norm")
