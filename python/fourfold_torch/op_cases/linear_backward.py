"""F.linear's backward with bias, as autograd runs it: grad_x = g @ w, grad_weight = g^T @ x, grad_bias."""

import math

from ..op_cost import OpCost

FIELDS = ("m", "n", "k")
SMALL = {"m": 3, "n": 5, "k": 7}


def shape(p):
    return f"g[{p['m']},{p['n']}] x[{p['m']},{p['k']}] w[{p['n']},{p['k']}]"


def call(c, mk):
    m, n, k = c.p["m"], c.p["n"], c.p["k"]
    g, x, w = mk.t([m, n]), mk.t([m, k], 1), mk.t([n, k], 2, 1.0 / math.sqrt(k))

    def backward(g, x, w):
        return g.t() @ x, g @ w, g.sum(0)
    return backward, (g, x, w), "mm + mm + sum"


def cost(c, s):
    m, n, k = float(c.p["m"]), float(c.p["n"]), float(c.p["k"])
    return OpCost((m * n + m * k + n * k) * s, (m * k + n * k + n) * s, 4.0 * m * n * k)
