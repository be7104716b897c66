"""torch.log_softmax over the last dim of x [rows, cols]."""

import torch


def call(c, mk):
    return (lambda x: torch.log_softmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "torch.log_softmax"


def fourfold_call(c, mk):
    return (lambda x: torch.ops.fourfold.log_softmax(x, -1)), (mk.matrix(c.p, 0, 8.0),), "fourfold.log_softmax"
