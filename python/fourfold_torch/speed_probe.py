"""Which kernel a rewired nn.Linear runs, decided on this host at optimize() time: fourfold's linear or PyTorch's
own, at decode (a few rows: the GEMV) and at prefill (many rows: the GEMM), whichever measured faster. On an
AVX-512 BF16 host PyTorch's oneDNN bf16 GEMV read faster than fourfold's (dense decode 0.85x with every linear
rewired); on an AVX2 Zen 3 host fourfold's was faster. Only a measurement on the host can say, and a user must
never get slower by calling optimize.

One probe per distinct (weight shape, dtype, bias): the first module's own weight (so the weight's real size and
placement in memory), the two kernels interleaved call by call, medians compared."""
import statistics
import time

import torch
import torch.nn.functional as F

DECODE_ROWS = 8      # up to this many rows a linear is a GEMV (fourfold's decode route)
PREFILL_ROWS = 128   # the rows a prefill probe multiplies
ROUNDS = 7


def _seconds(fn, x):
    start = time.perf_counter()
    fn(x)
    return time.perf_counter() - start


def _interleaved(fourfold, pytorch, x):
    """Median µs per call of both kernels over the same rounds, one call of each per round, after a warm-up."""
    fourfold(x)
    pytorch(x)
    ours, theirs = [], []
    for _ in range(ROUNDS):
        ours.append(_seconds(fourfold, x))
        theirs.append(_seconds(pytorch, x))
    return 1e6 * statistics.median(ours), 1e6 * statistics.median(theirs)


class LinearChoice:
    """What a probe decided for one weight shape: `fourfold_at_decode` / `fourfold_at_prefill`, and the figures."""

    def __init__(self, key, decode, prefill):
        self.key = key
        self.decode_us, self.prefill_us = decode, prefill   # (fourfold µs, PyTorch µs) per call
        self.fourfold_at_decode = decode[0] <= decode[1]
        self.fourfold_at_prefill = prefill[0] <= prefill[1]

    def describe(self):
        shape, dtype, bias = self.key
        kernel = lambda ours: "fourfold" if ours else "PyTorch"
        return (f"linear {list(shape)} {str(dtype).replace('torch.', '')}{' +bias' if bias else ''}: "
                f"decode {kernel(self.fourfold_at_decode)} ({self.decode_us[0]:.0f} vs {self.decode_us[1]:.0f} us), "
                f"prefill {kernel(self.fourfold_at_prefill)} "
                f"({self.prefill_us[0]:.0f} vs {self.prefill_us[1]:.0f} us; fourfold vs PyTorch)")


def probe_linear(module, cache):
    """The choice for module's weight shape, probed once per shape (cache: key -> LinearChoice)."""
    w, b = module.weight, module.bias
    key = (tuple(w.shape), w.dtype, b is not None)
    if key not in cache:
        with torch.inference_mode():
            ours = lambda x: torch.ops.fourfold.linear(x, w, b)
            theirs = lambda x: F.linear(x, w, b)
            g = torch.Generator().manual_seed(0)
            decode = torch.randn(1, w.shape[1], generator=g).to(w.dtype)
            prefill = torch.randn(PREFILL_ROWS, w.shape[1], generator=g).to(w.dtype)
            cache[key] = LinearChoice(key, _interleaved(ours, theirs, decode), _interleaved(ours, theirs, prefill))
    return cache[key]


def fixed_choice(module, fourfold):
    """The choice without a probe: every call on fourfold (fourfold=True) or on PyTorch."""
    w = module.weight
    key = (tuple(w.shape), w.dtype, module.bias is not None)
    return LinearChoice(key, (0.0, 1.0) if fourfold else (1.0, 0.0), (0.0, 1.0) if fourfold else (1.0, 0.0))
