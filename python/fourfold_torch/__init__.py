"""fourfold's four records for PyTorch builds: `python -m fourfold_torch check` runs fourfold's op suites
(same seeded inputs), its memory workload and, on a Hugging Face folder, the decoder end to end through
transformers, and writes records that `fourfold compare` reads unchanged."""

__version__ = "0.1.0"

# Importing the package registers torch.ops.fourfold (as torchvision and torchaudio register theirs): the compiled
# extension, its fake kernels and its autograd refusals. An installation without the extension still imports;
# torch_ops.available() says which.
from . import torch_ops  # noqa: E402,F401


def optimize(model, ops=None, weights="keep", kernels="probe"):
    """Rewires a transformers decoder or a diffusers AutoencoderKLWan onto torch.ops.fourfold (rewire.py)."""
    from .rewire import optimize as rewire
    return rewire(model, ops, weights, kernels)
