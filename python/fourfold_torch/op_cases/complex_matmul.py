"""torch.matmul of complex64 a [m, k] and b [k, n]: the complex-matmul suite's rows, run as matmul."""

import math

import torch


def call(c, mk):
    m, n, k = c.p["m"], c.p["n"], c.p["k"]
    a, b = mk.t([m, k]), mk.t([k, n], 1, 1.0 / math.sqrt(k))
    return torch.matmul, (a, b), "torch.matmul"
