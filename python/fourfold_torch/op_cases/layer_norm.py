"""F.layer_norm over the last dim of x [rows, cols] with weight and bias (PyTorch's default eps)."""

import torch.nn.functional as F


def call(c, mk):
    cols = c.p["cols"]
    x, w, b = mk.matrix(c.p), mk.t([cols], 1), mk.t([cols], 2)
    return (lambda x, w, b: F.layer_norm(x, [cols], w, b)), (x, w, b), "F.layer_norm"
