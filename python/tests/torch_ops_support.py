"""What the torch.ops.fourfold tests share: the extension (skipped where it is not built, unless
FOURFOLD_TORCH_EXTENSION=required, as the README's test command sets) and a PSNR against float64."""
import os

import pytest
import torch


def require_extension():
    from fourfold_torch import torch_ops
    if not torch_ops.available():
        if os.environ.get("FOURFOLD_TORCH_EXTENSION") == "required":
            torch_ops.require()
        pytest.skip("the fourfold_torch extension is not built")


def psnr_db(got, reference):
    got, reference = got.to(torch.float64), reference.to(torch.float64)
    mse = torch.mean((got - reference) ** 2).item()
    peak = reference.abs().max().item()
    return float("inf") if mse == 0 else 10 * torch.log10(torch.tensor(peak * peak / mse)).item()


# The least PSNR against float64 a dtype's rounding allows on these sizes.
MIN_DB = {torch.float32: 120.0, torch.bfloat16: 40.0}


def fourfold_op_names():
    """Every op the extension registered that takes tensors (num_threads takes none), by name."""
    names = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("fourfold::")}
    return sorted(names - {"num_threads"})
