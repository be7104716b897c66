"""F.scaled_dot_product_attention: the attention suite, grouped-query heads, no mask or a causal one
(top-left, or lower-right with a mask for a query shorter than its keys); the oracle is a float64 formula."""

import math

import torch
import torch.nn.functional as F


def _oracle(q, k, v, causal):
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    L, S = q.shape[2], k.shape[2]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal != "none":
        i = torch.arange(L).unsqueeze(1)
        j = torch.arange(S).unsqueeze(0)
        keep = j <= i if causal == "top_left" else j <= i + S - L
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, -1).nan_to_num(0.0) @ v


def call(c, mk):
    a = c.p
    q = mk.t([a["batch"], a["q_heads"], a["q_len"], a["head_dim"]])
    k = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 1)
    v = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 2)
    if mk.oracle:
        return (lambda q, k, v: _oracle(q, k, v, a["causal"])), (q, k, v), ""
    gqa = a["q_heads"] != a["kv_heads"]
    if a["causal"] == "lower_right":
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(a["q_len"], a["kv_len"])
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)), (q, k, v), \
            "sdpa causal_lower_right"
    causal = a["causal"] == "top_left"
    return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)), (q, k, v), "sdpa"


def fourfold_call(c, mk):
    a = c.p
    q = mk.t([a["batch"], a["q_heads"], a["q_len"], a["head_dim"]])
    k = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 1)
    v = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 2)
    causal, gqa = a["causal"], a["q_heads"] != a["kv_heads"]
    return ((lambda q, k, v: torch.ops.fourfold.scaled_dot_product_attention(q, k, v, None, causal, None, gqa)),
            (q, k, v), "fourfold.scaled_dot_product_attention")
