"""SwiGLU's F.silu(gate) * up on two [rows, cols] inputs."""

import torch
import torch.nn.functional as F


def call(c, mk):
    g, u = mk.matrix(c.p, 0, 4.0), mk.matrix(c.p, 1)
    return (lambda g, u: F.silu(g) * u), (g, u), "F.silu * up"


def fourfold_call(c, mk):
    g, u = mk.matrix(c.p, 0, 4.0), mk.matrix(c.p, 1)
    return torch.ops.fourfold.silu_mul, (g, u), "fourfold.silu_mul"
