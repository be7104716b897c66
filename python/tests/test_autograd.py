"""Gradients through torch.ops.fourfold are never silently missing: each op refuses by name when autograd would
record it (none has a backward yet), and optimize() keeps a model's gradients PyTorch's by running the original
modules while they are recorded. And importing the package registers the ops."""
import copy
import os
import subprocess
import sys

import pytest
import torch

from conftest import TRANSFORMERS
from torch_ops_support import fourfold_op_names, require_extension


@pytest.fixture(autouse=True)
def _extension():
    require_extension()


def test_importing_the_package_registers_the_ops():
    code = ("import torch, fourfold_torch\n"
            "x = torch.ones(2, 8); w = torch.ones(3, 8)\n"
            "print(torch.ops.fourfold.linear(x, w).sum().item())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "48.0"


def test_every_op_has_an_autograd_kernel():
    names = fourfold_op_names()
    assert "gated_delta_rule" in names
    missing = [n for n in names if not torch._C._dispatch_has_kernel_for_dispatch_key(f"fourfold::{n}", "Autograd")]
    assert not missing


def test_an_op_refuses_a_recorded_gradient_naming_itself_and_the_argument():
    x = torch.randn(2, 8, requires_grad=True)
    w = torch.randn(3, 8)
    with pytest.raises(RuntimeError, match=r"fourfold::linear: argument 'x' requires grad.*no backward"):
        torch.ops.fourfold.linear(x, w)
    with torch.no_grad():
        assert torch.ops.fourfold.linear(x, w).shape == (2, 3)
    with torch.inference_mode():
        assert torch.ops.fourfold.linear(x, w).shape == (2, 3)
    assert torch.ops.fourfold.linear(x.detach(), w).shape == (2, 3)


def test_gradients_after_optimize_are_the_unmodified_models():
    transformers = pytest.importorskip("transformers")
    from fourfold_torch import optimize
    plain = transformers.AutoModelForCausalLM.from_pretrained(os.path.join(TRANSFORMERS, "qwen3_moe"),
                                                              dtype=torch.float32)
    fast = optimize(copy.deepcopy(plain))
    assert fast.fourfold_optimized
    ids = torch.randint(0, plain.config.vocab_size, (1, 11), generator=torch.Generator().manual_seed(4))
    for model in (plain, fast):
        model(ids, labels=ids).loss.backward()
    for (name, a), (_, b) in zip(plain.named_parameters(), fast.named_parameters()):
        assert a.grad is not None and b.grad is not None, name
        torch.testing.assert_close(b.grad, a.grad, rtol=0, atol=0, msg=name)
