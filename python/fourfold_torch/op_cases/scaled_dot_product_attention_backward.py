"""Causal F.scaled_dot_product_attention's backward (grad_q, grad_k, grad_v) as autograd gives it, one batch,
rows queries and keys of head dim cols, grouped-query heads."""

import torch.nn.functional as F

from ..op_calls import grads
from ..op_cost import OpCost
from .scaled_dot_product_attention import attended_pairs

FIELDS = ("rows", "cols", "heads", "kv_heads")
SMALL = {"rows": 5, "cols": 8, "heads": 4, "kv_heads": 2}


def shape(p):
    return f"q[1,{p['heads']},{p['rows']},{p['cols']}] kv[1,{p['kv_heads']},{p['rows']},{p['cols']}] causal"


def check(r, e, path, p):
    if p["heads"] % p["kv_heads"]:
        r.bad(path + ".kv_heads", f"a divisor of heads={p['heads']}", e["kv_heads"])


def call(c, mk):
    rows, cols, heads, kv_heads = c.p["rows"], c.p["cols"], c.p["heads"], c.p["kv_heads"]
    q, k, v = mk.t([1, heads, rows, cols]), mk.t([1, kv_heads, rows, cols], 1), mk.t([1, kv_heads, rows, cols], 2)
    g = mk.t([1, heads, rows, cols], 3)
    gqa = heads != kv_heads

    def backward(g, q, k, v):
        return grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa), (q, k, v), g)
    return backward, (g, q, k, v), "autograd of F.scaled_dot_product_attention"


def cost(c, s):
    p = c.p
    a = dict(q_len=p["rows"], kv_len=p["rows"], causal="top_left")
    q, kv = float(p["heads"] * p["rows"] * p["cols"]), float(p["kv_heads"] * p["rows"] * p["cols"])
    return OpCost((2 * q + 2 * kv) * s, (q + 2 * kv) * s, 10.0 * p["heads"] * attended_pairs(a) * p["cols"])
