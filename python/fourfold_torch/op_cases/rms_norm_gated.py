"""Gated DeltaNet's output norm (transformers' Qwen3_5RMSNormGated) on x and gate [rows, cols], weight [cols]."""

import torch
import torch.nn.functional as F

from ..op_calls import RMS_EPS


def _inputs(c, mk):
    return mk.matrix(c.p, 0), mk.matrix(c.p, 1, 3.0), mk.t([c.p["cols"]], 2)


def _gated(x, gate, w):
    # transformers' order of roundings: the normed x back in x's dtype, times the weight, times silu(gate) in f32.
    dtype = x.dtype
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    h = w * h.to(dtype)
    return (h * F.silu(gate.to(torch.float32))).to(dtype)


def call(c, mk):
    return _gated, _inputs(c, mk), "Qwen3_5RMSNormGated"


def fourfold_call(c, mk):
    return (lambda x, g, w: torch.ops.fourfold.rms_norm_gated(x, g, w, RMS_EPS)), _inputs(c, mk), "fourfold.rms_norm_gated"
