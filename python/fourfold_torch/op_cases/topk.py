"""torch.topk of the last dim of x [rows, cols]: values and int64 indices."""

import torch


def call(c, mk):
    k = c.p["k"]
    return (lambda x: torch.topk(x, k)), (mk.matrix(c.p, 0, 8.0),), "torch.topk"


def fourfold_call(c, mk):
    k = c.p["k"]
    return (lambda x: torch.ops.fourfold.topk(x, k)), (mk.matrix(c.p, 0, 8.0),), "fourfold.topk"
