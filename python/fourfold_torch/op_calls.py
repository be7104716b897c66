"""Each suite case as the PyTorch call a user would make, on the same seeded inputs as fourfold
(src/check/op_bench.cpp make_bench_call), and its float64 oracle on the CPU.

Each op's call is in its module in op_cases (op_cases.build_call picks it); this file makes the inputs they
share. A case this PyTorch build has no op or recipe for raises Unsupported with the reason: a counted skip.
"""

import math

import numpy as np
import torch

from .counter_rng import bench_values_f32, uniform_f64

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
                "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2,
                "complex64": torch.complex64, "float64": torch.float64}
RMS_EPS = 1e-5   # the explicit eps fourfold's decoder-fused rows pass (Llama 3.1's rms_norm_eps)


class Unsupported(Exception):
    """This PyTorch build has no op or recipe for the case (a counted skip, never an error)."""


def bench_tensor(shape, dtype, seed, scale=1.0, device="cpu"):
    """fourfold's bench_tensor: uniform in [-scale, scale) from (seed, index), rounded once to dtype."""
    values = torch.from_numpy(bench_values_f32(seed, math.prod(shape), scale)).reshape(shape)
    if dtype == "complex64":   # store_from_double: real part, imaginary 0
        return values.to(torch.complex64).to(device)
    return values.to(TORCH_DTYPES[dtype]).to(device)


def uniform_tensor(shape, seed, low, high, device="cpu"):
    """Tensor::fill_uniform on an f32 tensor."""
    values = uniform_f64(seed, math.prod(shape), low, high).astype(np.float32)
    return torch.from_numpy(values).reshape(shape).to(device)


class Maker:
    """Makes a case's tensors on the device, or their float64 CPU copies for the oracle."""

    def __init__(self, dtype, seed, device, oracle):
        self.dtype, self.seed, self.device, self.oracle = dtype, seed, device, oracle

    def wide(self, t):
        if not self.oracle:
            return t
        return t.to(torch.complex128) if t.is_complex() else t.to(torch.float64)

    def t(self, shape, offset=0, scale=1.0, dtype=None):
        raw = bench_tensor(shape, dtype or self.dtype, self.seed + offset, scale, "cpu" if self.oracle else self.device)
        return self.wide(raw)

    def matrix(self, p, offset=0, scale=1.0):
        """A row op's x [rows, cols]."""
        return self.t([p["rows"], p["cols"]], offset, scale)


def grads(f, inputs, grad):
    """What autograd gives the inputs of f for grad_out `grad` (the backward ops' PyTorch form)."""
    inputs = tuple(t.detach().requires_grad_() for t in inputs)
    return torch.autograd.grad(f(*inputs), inputs, grad)
