"""torch.mul of two [rows, cols] tensors."""

import torch


def call(c, mk):
    return torch.mul, (mk.matrix(c.p), mk.matrix(c.p, 1)), "torch.mul"
