"""torch.add of two [rows, cols] tensors."""

import torch


def call(c, mk):
    return torch.add, (mk.matrix(c.p), mk.matrix(c.p, 1)), "torch.add"
