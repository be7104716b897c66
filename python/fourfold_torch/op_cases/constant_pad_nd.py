"""F.pad constant: the pad suite, on contiguous, channels-last and sliced inputs."""


import torch
import torch.nn.functional as F


def _input(c, mk):
    p = c.p
    shape, rank = p["shape"], len(p["shape"])
    if p["layout"] == "channels_last":
        if rank == 2:
            x = mk.t([shape[1], shape[0]]).transpose(0, 1)
        else:
            stored = [shape[0]] + shape[2:] + [shape[1]]
            x = mk.t(stored).permute([0, rank - 1] + list(range(1, rank - 1)))
    elif p["layout"] == "sliced":
        x = mk.t(shape[:-1] + [shape[-1] + 2]).narrow(rank - 1, 1, shape[-1])
    else:
        x = mk.t(shape)
    return x


def call(c, mk):
    pads, value = list(c.p["pads"]), c.p["value"]
    return (lambda t: F.pad(t, pads, mode="constant", value=value)), (_input(c, mk),), "F.pad constant"


def fourfold_call(c, mk):
    pads, value = list(c.p["pads"]), c.p["value"]
    return (lambda t: torch.ops.fourfold.constant_pad_nd(t, pads, value)), (_input(c, mk),), "fourfold.constant_pad_nd"
