"""constant_pad_nd's backward: the grad of a one-element pad on each side of [rows, cols], cropped back
(F.pad with negative pads)."""

import torch.nn.functional as F


def call(c, mk):
    g = mk.t([c.p["rows"] + 2, c.p["cols"] + 2])
    return (lambda g: F.pad(g, [-1, -1, -1, -1])), (g,), "F.pad (negative pads)"
