"""torch.softmax over the vocabularies of the softmax suite."""

import torch


def call(c, mk):
    x = mk.t([c.p["rows"], c.p["cols"]], 0, 8.0)
    dim = c.p["dim"]
    return (lambda t: torch.softmax(t, dim)), (x,), "torch.softmax"


def fourfold_call(c, mk):
    x = mk.t([c.p["rows"], c.p["cols"]], 0, 8.0)
    dim = c.p["dim"]
    return (lambda t: torch.ops.fourfold.softmax(t, dim)), (x,), "fourfold.softmax"
