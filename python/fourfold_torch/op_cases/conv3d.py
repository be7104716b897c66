"""F.conv3d: the conv suite's rows with x [N, C, T, H, W], run by conv2d.py's code, which takes the rank
from x."""

from .conv2d import call, fourfold_call

__all__ = ["call", "fourfold_call"]
