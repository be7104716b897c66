"""F.rms_norm's backward (grad_x, grad_weight) as autograd gives it, on [rows, cols]."""

import torch.nn.functional as F

from ..op_calls import RMS_EPS, grads


def call(c, mk):
    cols = c.p["cols"]
    g, x, w = mk.matrix(c.p), mk.matrix(c.p, 1), mk.t([cols], 2)

    def backward(g, x, w):
        return grads(lambda x, w: F.rms_norm(x, [cols], w, RMS_EPS), (x, w), g)
    return backward, (g, x, w), "autograd of F.rms_norm"
