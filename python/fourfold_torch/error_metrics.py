"""Correctness against the float64 reference, with fourfold's definitions (src/check/error_metrics.cpp):
max abs, max rel over max(|r|, 1e-3 * peak), ULP in the output dtype against the reference rounded once to
it, PSNR against peak = max |reference|, NaN mismatches, exactness; and the logits figures (top-1, KL)."""

import math
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class ErrorStats:
    count: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    rel_floor: float = 0.0
    max_ulp: int = 0
    psnr_db: float = 0.0
    nan_mismatches: int = 0
    exact: bool = True
    peak: float = 0.0


def _flat(t):
    t = t.detach().cpu()
    if t.is_complex():
        return torch.view_as_real(t.to(torch.complex128)).reshape(-1).numpy()
    return t.to(torch.float64).reshape(-1).numpy()


def _round_bf16(x):
    """Round float64 to bfloat16 once (to nearest even, subnormals kept), as fourfold's f64_to_bf16; torch's
    double -> bfloat16 goes through float32 and can round twice."""
    out = np.array(x, dtype=np.float64, copy=True)
    finite = np.isfinite(out) & (out != 0)
    v = out[finite]
    exponent = np.floor(np.log2(np.abs(v)))
    # log2 may land one off at exact powers of two; fix it so that 2^e <= |v| < 2^(e+1).
    exponent = np.where(np.abs(v) < 2.0 ** exponent, exponent - 1, exponent)
    exponent = np.where(np.abs(v) >= 2.0 ** (exponent + 1), exponent + 1, exponent)
    quantum = 2.0 ** (np.maximum(exponent, -126.0) - 7)
    rounded = np.rint(v / quantum) * quantum
    rounded[np.abs(rounded) > 3.3895313892515355e38] = np.inf * np.sign(rounded[np.abs(rounded) > 3.3895313892515355e38])
    out[finite] = rounded
    return out


def round_to(values, dtype):
    """The float64 values rounded once to `dtype` (a torch dtype of the output), back in float64."""
    if dtype in (torch.float32, torch.complex64):
        with np.errstate(over="ignore"):
            return values.astype(np.float32).astype(np.float64)
    if dtype == torch.float16:
        with np.errstate(over="ignore"):
            return values.astype(np.float16).astype(np.float64)
    if dtype == torch.bfloat16:
        return _round_bf16(values)
    if dtype == torch.float64:
        return values
    return torch.from_numpy(values).to(dtype).to(torch.float64).numpy()


def _ordered(values, dtype):
    """Each value's position in the ordered list of its format's values (sign-magnitude bits on a line)."""
    if dtype in (torch.float32, torch.complex64):
        bits, width = values.astype(np.float32).view(np.uint32).astype(np.int64), 32
    elif dtype == torch.float16:
        bits, width = values.astype(np.float16).view(np.uint16).astype(np.int64), 16
    elif dtype == torch.bfloat16:
        bits, width = (_round_bf16(values).astype(np.float32).view(np.uint32) >> 16).astype(np.int64), 16
    else:
        bits, width = values.view(np.uint64).astype(object), 64   # float64: exact integers
    sign = 1 << (width - 1)
    magnitude = bits & (sign - 1)
    return np.where((bits & sign) != 0, -magnitude, magnitude)


def compare_to_reference(actual, reference):
    a, r = _flat(actual), _flat(reference)
    s = ErrorStats(count=int(a.size))
    finite_r = r[np.isfinite(r)]
    s.peak = float(np.max(np.abs(finite_r))) if finite_r.size else 0.0
    s.rel_floor = 1e-3 * s.peak
    floor = s.rel_floor if s.rel_floor > 0 else np.finfo(np.float64).tiny
    out_dtype = actual.dtype
    rr = round_to(r, out_dtype)
    an, rn = np.isnan(a), np.isnan(r)
    valid = ~(an | rn)
    s.nan_mismatches = int(np.count_nonzero(an != rn))
    s.exact = s.nan_mismatches == 0 and bool(np.all(a[valid] == rr[valid]))
    inf_mask = valid & (np.isinf(a) | np.isinf(r))
    inf_bad = bool(np.any(a[inf_mask] != r[inf_mask]))
    fin = valid & ~inf_mask
    err = np.abs(a[fin] - r[fin])
    sq = float(np.sum(err * err))
    if err.size:
        s.max_abs = float(np.max(err))
        s.max_rel = float(np.max(err / np.maximum(np.abs(r[fin]), floor)))
        s.max_ulp = int(np.max(np.abs(_ordered(a[fin], out_dtype) - _ordered(rr[fin], out_dtype))))
    if inf_bad:
        s.max_abs = s.max_rel = sq = math.inf
    mse = sq / a.size if a.size else 0.0
    if s.nan_mismatches > 0:
        s.psnr_db = math.nan
    elif mse == 0.0:
        s.psnr_db = math.inf
    elif s.peak == 0.0:
        s.psnr_db = -math.inf
    else:
        s.psnr_db = 10.0 * math.log10(s.peak * s.peak / mse)
    return s


def _log_softmax_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return x - (m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))


def mean_kl_divergence(reference, candidate):
    """Mean over positions of KL(reference || candidate), nats, in float64; rounding negatives clamp to 0."""
    p = reference.detach().cpu().to(torch.float64).numpy()
    q = candidate.detach().cpu().to(torch.float64).numpy()
    if p.shape[0] == 0:
        return 0.0
    lp, lq = _log_softmax_rows(p), _log_softmax_rows(q)
    terms = np.where(np.isneginf(lp), 0.0, np.exp(lp) * (lp - lq))
    return max(float(np.mean(np.sum(terms, axis=1))), 0.0)


def top1_agreement_percent(reference, candidate):
    p = reference.detach().cpu().to(torch.float64).numpy()
    q = candidate.detach().cpu().to(torch.float64).numpy()
    if p.shape[0] == 0:
        return 100.0
    return 100.0 * float(np.mean(np.argmax(p, axis=1) == np.argmax(q, axis=1)))
