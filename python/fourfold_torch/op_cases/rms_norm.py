"""F.rms_norm over the last dim of x [rows, cols] with a weight, fourfold's explicit eps."""

import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS


def call(c, mk):
    cols = c.p["cols"]
    x, w = mk.matrix(c.p), mk.t([cols], 1)
    return (lambda x, w: F.rms_norm(x, [cols], w, RMS_EPS)), (x, w), "F.rms_norm"


def fourfold_call(c, mk):
    cols = c.p["cols"]
    x, w = mk.matrix(c.p), mk.t([cols], 1)
    return (lambda x, w: torch.ops.fourfold.rms_norm(x, [cols], w, RMS_EPS)), (x, w), "fourfold.rms_norm"
