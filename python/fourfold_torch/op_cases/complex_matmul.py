"""torch.matmul of complex64 a [m, k] and b [k, n]: the complex-matmul suite's rows, run as matmul."""

import math

import torch

from ..op_cost import OpCost

DISPATCH = "matmul"
FIELDS = ("m", "n", "k")
SMALL = {"m": 3, "n": 5, "k": 7}


def shape(p):
    return f"a[{p['m']},{p['k']}] b[{p['k']},{p['n']}]"


def call(c, mk):
    m, n, k = c.p["m"], c.p["n"], c.p["k"]
    a, b = mk.t([m, k]), mk.t([k, n], 1, 1.0 / math.sqrt(k))
    return torch.matmul, (a, b), "torch.matmul"


def cost(c, s):
    m, n, k = float(c.p["m"]), float(c.p["n"]), float(c.p["k"])
    return OpCost((m * k + k * n) * s, m * n * s, 8.0 * m * n * k)   # a complex multiply-add is 8 real flops
