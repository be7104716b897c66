"""F.linear's backward with bias, as autograd runs it: grad_x = g @ w, grad_weight = g^T @ x, grad_bias."""

import math


def call(c, mk):
    m, n, k = c.p["m"], c.p["n"], c.p["k"]
    g, x, w = mk.t([m, n]), mk.t([m, k], 1), mk.t([n, k], 2, 1.0 / math.sqrt(k))

    def backward(g, x, w):
        return g.t() @ x, g @ w, g.sum(0)
    return backward, (g, x, w), "mm + mm + sum"
