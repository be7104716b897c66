"""F.pad constant: the pad suite, on contiguous, channels-last and sliced inputs."""

import math

import torch
import torch.nn.functional as F

from ..op_cost import OpCost
from ..suites import dims

SUITE = "constant_pad_nd"


def read(r, j, add, dtypes):
    value = j.get("value", 0.0)
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        name = r.string(r.need(e, path, "name"), path + ".name")
        shape = r.integers(r.need(e, path, "shape"), path + ".shape")
        pads = r.need(e, path, "pads")
        if not isinstance(pads, list) or len(pads) % 2 or len(pads) > 2 * len(shape):
            r.bad(path + ".pads", f"(before, after) pairs, at most {2 * len(shape)} entries for a rank-{len(shape)} shape", pads)
        layout = r.choice(e.get("layout", "contiguous"), path + ".layout", ("contiguous", "channels_last", "sliced"))
        for dt in dtypes:
            add("constant_pad_nd", name, f"x[{dims(shape)}] pads ({dims(pads)})" + ("" if layout == "contiguous" else " " + layout),
                dt, dict(shape=shape, pads=pads, layout=layout, value=float(value)))


def padded_shape(p):
    out = list(p["shape"])
    for i, v in enumerate(p["pads"]):
        out[len(out) - 1 - i // 2] += v
    return out


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


def cost(c, s):
    return OpCost(math.prod(c.p["shape"]) * s, math.prod(padded_shape(c.p)) * s, 0.0)
