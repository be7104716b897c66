"""Causal F.scaled_dot_product_attention's backward (grad_q, grad_k, grad_v) as autograd gives it, one batch,
rows queries and keys of head dim cols, grouped-query heads."""

import torch.nn.functional as F

from ..op_calls import grads


def call(c, mk):
    rows, cols, heads, kv_heads = c.p["rows"], c.p["cols"], c.p["heads"], c.p["kv_heads"]
    q, k, v = mk.t([1, heads, rows, cols]), mk.t([1, kv_heads, rows, cols], 1), mk.t([1, kv_heads, rows, cols], 2)
    g = mk.t([1, heads, rows, cols], 3)
    gqa = heads != kv_heads

    def backward(g, q, k, v):
        return grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa), (q, k, v), g)
    return backward, (g, q, k, v), "autograd of F.scaled_dot_product_attention"
