"""Loads the compiled extension (fourfold_torch/_C*.so, built from csrc/), which registers torch.ops.fourfold,
and the ops' fake kernels. available() says whether this installation has it: the driver's --kernels torch runs
without it."""
import importlib.util

import torch

_error = None


def _load():
    global _error
    spec = importlib.util.find_spec("fourfold_torch._C")
    if spec is None or spec.origin is None:
        _error = "fourfold_torch._C not found"
        return
    torch.ops.load_library(spec.origin)
    from . import fake_ops  # noqa: F401  (registers the fake kernels)


_load()


def available():
    return _error is None


def require():
    if _error is not None:
        raise ImportError("fourfold_torch: the compiled extension is not built (pip install --no-build-isolation "
                          f"./python in a checkout whose build/release holds libfourfold.a): {_error}")
