"""torch._scaled_mm: the fp8 suite's FP8 GEMMs with tensorwise, rowwise or 128x128-block scales; a recipe
this build refuses is a counted skip, and the oracle applies the scales in float64."""


import torch

from ..op_calls import TORCH_DTYPES, Unsupported, bench_tensor, uniform_tensor


def scale_a_shape(p):
    m, k = p["m"], p["k"]
    return {"tensorwise": [1], "rowwise": [m, 1], "block_128x128": [m, (k + 127) // 128]}[p["recipe"]]


def scale_b_shape(p):
    n, k = p["n"], p["k"]
    return {"tensorwise": [1], "rowwise": [1, n], "block_128x128": [(k + 127) // 128, (n + 127) // 128]}[p["recipe"]]


def _expand_scale(s, rows, cols, block_rows, block_cols):
    return s.repeat_interleave(block_rows, 0)[:rows].repeat_interleave(block_cols, 1)[:, :cols]


def call(c, mk):
    p = c.p
    m, n, k = p["m"], p["n"], p["k"]
    dev = "cpu" if mk.oracle else mk.device
    a = bench_tensor([m, k], c.dtype, mk.seed, 64.0, dev)
    w = bench_tensor([n, k], c.dtype, mk.seed + 1, 64.0, dev)
    sa = uniform_tensor(scale_a_shape(p), mk.seed + 2, 0.5 / 64, 1.5 / 64, dev)
    if p["recipe"] == "block_128x128":   # a checkpoint's weight_scale_inv [N/128, K/128], passed transposed
        shape = scale_b_shape(p)
        sb = uniform_tensor([shape[1], shape[0]], mk.seed + 3, 0.5 / 64, 1.5 / 64, dev).t()
    else:
        sb = uniform_tensor(scale_b_shape(p), mk.seed + 3, 0.5 / 64, 1.5 / 64, dev)
    if mk.oracle:
        def oracle(a, w, sa, sb):
            A, B = a.to(torch.float64), w.t().to(torch.float64)
            sa64, sb64 = sa.to(torch.float64), sb.to(torch.float64)
            if p["recipe"] == "tensorwise":
                return (A @ B) * sa64 * sb64
            if p["recipe"] == "rowwise":
                return (A * sa64) @ (B * sb64)
            return (A * _expand_scale(sa64, m, k, 1, 128)) @ (B * _expand_scale(sb64, k, n, 128, 128))
        return oracle, (a, w, sa, sb), ""
    out = TORCH_DTYPES[p["out_dtype"]]
    if p["recipe"] == "tensorwise":
        sa, sb = sa.reshape(()), sb.reshape(())
    elif p["recipe"] == "block_128x128":
        sb = sb.contiguous()

    def mm(a, b, sa, sb):
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out)
    try:
        mm(a, w.t(), sa, sb)
    except Exception as e:   # RuntimeError, ValueError, NotImplementedError: the build refuses the recipe
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Unsupported(f"torch._scaled_mm refuses {p['recipe']} on {dev}: {first}") from None
    return mm, (a, w.t(), sa, sb), f"torch._scaled_mm {p['recipe']}"
