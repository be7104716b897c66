"""F.linear: the linear suites (decode-linear, prefill-linear), bias or none, and weight-only rows whose
weight is stored in another dtype (those have no PyTorch op: counted skips; FP4 rows none in fourfold's torch ops
either)."""

import math

import torch
import torch.nn.functional as F

from ..op_calls import Unsupported, bench_tensor, uniform_tensor
from ..suites import FP4, FP8


def weight_scale_shape(p):
    n, k = p["n"], p["k"]
    return {"tensorwise": [1], "rowwise": [n, 1], "block_128x128": [(n + 127) // 128, (k + 127) // 128],
            "nvfp4": [n, k // 16], "mxfp4": [n, k // 32]}[p["recipe"]]


def _fp8_inputs(c, mk):
    """fourfold's FP8 weight-only inputs: the weight in FP8 (values of a few units) and its scale."""
    p = c.p
    w = bench_tensor([p["n"], p["k"]], p["weight_dtype"], mk.seed + 1, 64.0)
    w_scale = 1.0 / math.sqrt(p["k"])
    s = uniform_tensor(weight_scale_shape(p), mk.seed + 3, 0.5 / 64 * w_scale, 1.5 / 64 * w_scale)
    return w, s


def _dequantized(w, s, p):
    """The FP8 weight times its scale, in float64 (the oracle's weight)."""
    s = s.to(torch.float64)
    if p["recipe"] == "block_128x128":
        s = s.repeat_interleave(128, 0)[: p["n"]].repeat_interleave(128, 1)[:, : p["k"]]
    return w.to(torch.float64) * s


def call(c, mk):
    p = c.p
    wdt = p["weight_dtype"] or c.dtype
    if wdt in FP4:
        raise Unsupported(f"FP4 rows run in fourfold's own check (no PyTorch op for a {wdt} weight with {p['recipe']} "
                          "scales, nor a torch.ops.fourfold one yet)")
    x = mk.t([p["m"], p["k"]])
    b = mk.t([p["n"]], 2) if p["bias"] else None
    if wdt in FP8:
        if not mk.oracle:
            raise Unsupported("no PyTorch op for weight-only FP8 linear (activations in "
                              f"{c.dtype}, {wdt} weight with {p['recipe']} scales)")
        w, s = _fp8_inputs(c, mk)
        return F.linear, (x, _dequantized(w, s, p), b), "float64 formula"
    if wdt != c.dtype and not mk.oracle:
        raise Unsupported(f"F.linear takes one dtype; no PyTorch op for {c.dtype} activations with a {wdt} weight")
    w = mk.wide(bench_tensor([p["n"], p["k"]], wdt, mk.seed + 1, 1.0 / math.sqrt(p["k"]), mk.device))
    return F.linear, (x, w, b), "F.linear"


def fourfold_call(c, mk):
    p = c.p
    wdt = p["weight_dtype"] or c.dtype
    if wdt in FP4:
        raise Unsupported(f"no torch.ops.fourfold op takes a {wdt} weight yet")
    x = mk.t([p["m"], p["k"]])
    b = mk.t([p["n"]], 2) if p["bias"] else None
    if wdt in FP8:
        w, s = _fp8_inputs(c, mk)
        return torch.ops.fourfold.scaled_linear, (x, w.to(mk.device), s.to(mk.device), b), "fourfold.scaled_linear"
    w = bench_tensor([p["n"], p["k"]], wdt, mk.seed + 1, 1.0 / math.sqrt(p["k"]), mk.device)
    return torch.ops.fourfold.linear, (x, w, b), "fourfold.linear"
