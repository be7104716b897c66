"""Each suite case as the PyTorch call a user would make, on the same seeded inputs as fourfold
(src/check/op_bench.cpp make_bench_call), and its float64 oracle on the CPU.

build_call(case, seed, device) returns (fn, args, variant): fn(*args) runs the op once and returns its output
(or a tuple whose first element is the output checked); fn takes its tensors as arguments so that
torch.compile compiles it once for every rotated input set.
A case this PyTorch build has no op or recipe for raises Unsupported with the reason: a counted skip.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from .counter_rng import bench_values_f32, uniform_f64
from .op_cost import moe_group_sizes, scale_a_shape, scale_b_shape
from .suites import FP8

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


class _Maker:
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


def _linear(c, mk):
    p = c.p
    wdt = p["weight_dtype"] or c.dtype
    if wdt in FP8:
        raise Unsupported("no PyTorch op for weight-only FP8 linear (activations in "
                          f"{c.dtype}, {wdt} weight with {p['recipe']} scales)")
    if wdt != c.dtype:
        raise Unsupported(f"F.linear takes one dtype; no PyTorch op for {c.dtype} activations with a {wdt} weight")
    x = mk.t([p["m"], p["k"]])
    w = mk.t([p["n"], p["k"]], 1, 1.0 / math.sqrt(p["k"]))
    b = mk.t([p["n"]], 2) if p["bias"] else None
    return F.linear, (x, w, b), "F.linear"


def _softmax(c, mk):
    x = mk.t([c.p["rows"], c.p["cols"]], 0, 8.0)
    dim = c.p["dim"]
    return (lambda t: torch.softmax(t, dim)), (x,), "torch.softmax"


def _pad(c, mk):
    p = c.p
    shape, rank = p["shape"], len(p["shape"])
    if p["layout"] == "channels_last":
        if rank == 2:
            x = mk.t([shape[1], shape[0]]).transpose(0, 1)
        else:
            stored = [shape[0]] + shape[2:] + [shape[1]]
            x = mk.t(stored).permute([0, rank - 1] + list(range(1, rank - 1)))
    elif p["layout"] == "sliced":
        x = mk.t(shape[:-1] + [shape[-1] + 2]).narrow(rank - 1, 1, shape[-1])
    else:
        x = mk.t(shape)
    pads, value = list(p["pads"]), p["value"]
    return (lambda t: F.pad(t, pads, mode="constant", value=value)), (x,), "F.pad constant"


def _grouped(a, b, offs):
    if hasattr(F, "grouped_mm"):
        return F.grouped_mm(a, b, offs=offs)
    return torch._grouped_mm(a, b, offs=offs)


def _grouped_oracle(a, b, ends):
    """Per expert a[rows of e] @ b[e], in float64."""
    out = torch.zeros(a.shape[0], b.shape[2], dtype=torch.float64)
    start = 0
    for e, end in enumerate(ends):
        if end > start:
            out[start:end] = a[start:end] @ b[e]
        start = end
    return out


def _moe(c, mk):
    p = c.p
    sizes = moe_group_sizes(p["tokens"], p["experts"], p["top_k"], p["routing"])
    ends = list(np.cumsum(sizes)) if sizes else []
    total = int(ends[-1]) if ends else 0
    dev = "cpu" if mk.oracle else mk.device
    offs = torch.tensor([int(e) for e in ends], dtype=torch.int32, device=dev)
    if not hasattr(F, "grouped_mm") and not hasattr(torch, "_grouped_mm"):
        raise Unsupported("this PyTorch has no grouped_mm (F.grouped_mm / torch._grouped_mm)")
    if c.op == "moe_experts":
        n, k, T = p["n"], p["k"], p["tokens"]
        x = mk.t([T, k])
        gate = mk.t([p["experts"], n, k], 1, 1.0 / math.sqrt(k))
        up = mk.t([p["experts"], n, k], 2, 1.0 / math.sqrt(k))
        down = mk.t([p["experts"], k, n], 3, 1.0 / math.sqrt(n))
        rows = torch.tensor([r % max(T, 1) for r in range(total)], dtype=torch.int64, device=dev)
        weight = 1.0 / p["top_k"]
        if mk.oracle:
            def oracle(x, gate, up, down):
                xs = x[rows]
                h = F.silu(_grouped_oracle(xs, gate.transpose(1, 2), ends)) * _grouped_oracle(xs, up.transpose(1, 2), ends)
                d = _grouped_oracle(h, down.transpose(1, 2), ends) * weight
                return torch.zeros(T, k, dtype=torch.float64).index_add_(0, rows, d)
            return oracle, (x, gate, up, down), ""
        w32 = torch.full([total, 1], weight, dtype=torch.float32, device=dev)

        def experts(x, gate, up, down, rows, offs, w32):   # transformers' grouped_mm experts: gather, three
            xs = x[rows]                                       # grouped products, weighted scatter-add
            h = F.silu(_grouped(xs, gate.transpose(1, 2), offs)) * _grouped(xs, up.transpose(1, 2), offs)
            d = (_grouped(h, down.transpose(1, 2), offs).float() * w32).to(x.dtype)
            return torch.zeros(T, k, dtype=x.dtype, device=dev).index_add_(0, rows, d)
        return experts, (x, gate, up, down, rows, offs, w32), "grouped_mm x3 + index_add"
    a = mk.t([total, p["k"]])
    b = mk.t([p["experts"], p["n"], p["k"]], 1, 1.0 / math.sqrt(p["k"])).transpose(1, 2)
    if mk.oracle:
        return (lambda a, b: _grouped_oracle(a, b, ends)), (a, b), ""
    return _grouped, (a, b, offs), "F.grouped_mm" if hasattr(F, "grouped_mm") else "torch._grouped_mm"


def _attention_oracle(q, k, v, causal):
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    L, S = q.shape[2], k.shape[2]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal != "none":
        i = torch.arange(L).unsqueeze(1)
        j = torch.arange(S).unsqueeze(0)
        keep = j <= i if causal == "top_left" else j <= i + S - L
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, -1).nan_to_num(0.0) @ v


def _attention(c, mk):
    a = c.p
    q = mk.t([a["batch"], a["q_heads"], a["q_len"], a["head_dim"]])
    k = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 1)
    v = mk.t([a["batch"], a["kv_heads"], a["kv_len"], a["head_dim"]], 2)
    if mk.oracle:
        return (lambda q, k, v: _attention_oracle(q, k, v, a["causal"])), (q, k, v), ""
    gqa = a["q_heads"] != a["kv_heads"]
    if a["causal"] == "lower_right":
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(a["q_len"], a["kv_len"])
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)), (q, k, v), \
            "sdpa causal_lower_right"
    causal = a["causal"] == "top_left"
    return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)), (q, k, v), "sdpa"


def _expand_scale(s, rows, cols, block_rows, block_cols):
    return s.repeat_interleave(block_rows, 0)[:rows].repeat_interleave(block_cols, 1)[:, :cols]


def _fp8(c, mk):
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
    def call(a, b, sa, sb):
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out)
    try:
        call(a, w.t(), sa, sb)
    except Exception as e:   # RuntimeError, ValueError, NotImplementedError: the build refuses the recipe
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Unsupported(f"torch._scaled_mm refuses {p['recipe']} on {dev}: {first}") from None
    return call, (a, w.t(), sa, sb), f"torch._scaled_mm {p['recipe']}"


def _row_op(c, mk):
    p = c.p
    kind, rows, cols = p["kind"], p["rows"], p["cols"]
    t = mk.t
    if kind == "rms_norm":
        x, w = t([rows, cols]), t([cols], 1)
        return (lambda x, w: F.rms_norm(x, [cols], w, RMS_EPS)), (x, w), "F.rms_norm"
    if kind == "add_rms_norm":
        x, r, w = t([rows, cols]), t([rows, cols], 1), t([cols], 2)
        return (lambda x, r, w: F.rms_norm(x + r, [cols], w, RMS_EPS)), (x, r, w), "add + F.rms_norm"
    if kind == "rotary_embedding":
        x, cs, sn = t([rows, p["heads"], cols]), t([rows, 1, cols // 2], 1), t([rows, 1, cols // 2], 2)

        def rotary(x, cs, sn):   # Hugging Face's rotate_half form, cos and sin given for one half
            x1, x2 = x[..., : cols // 2], x[..., cols // 2:]
            return torch.cat((x1 * cs - x2 * sn, x2 * cs + x1 * sn), dim=-1)
        return rotary, (x, cs, sn), "rotate_half (composed)"
    if kind == "silu_mul":
        g, u = t([rows, cols], 0, 4.0), t([rows, cols], 1)
        return (lambda g, u: F.silu(g) * u), (g, u), "F.silu * up"
    if kind == "softmax_backward":
        g, y = t([rows, cols]), t([rows, cols], 1, 1.0 / cols)
        return (lambda g, y: torch._softmax_backward_data(g, y, -1, y.dtype)), (g, y), "torch._softmax_backward_data"
    if kind == "constant_pad_nd_backward":
        g = t([rows + 2, cols + 2])
        return (lambda g: F.pad(g, [-1, -1, -1, -1])), (g,), "F.pad (negative pads)"
    if kind in _ROW_OPS:
        return _ROW_OPS[kind](p, mk)
    m, n, k = p["m"], p["n"], p["k"]
    if kind == "linear_backward":
        g, x, w = t([m, n]), t([m, k], 1), t([n, k], 2, 1.0 / math.sqrt(k))

        def backward(g, x, w):   # what autograd runs for F.linear with bias: grad_x, grad_weight, grad_bias
            return g.t() @ x, g @ w, g.sum(0)
        return backward, (g, x, w), "mm + mm + sum"
    a, b = t([m, k]), t([k, n], 1, 1.0 / math.sqrt(k))
    return torch.matmul, (a, b), "torch.matmul"


def _grads(f, inputs, grad):
    """What autograd gives the inputs of f for grad_out `grad` (the backward ops' PyTorch form)."""
    inputs = tuple(t.detach().requires_grad_() for t in inputs)
    return torch.autograd.grad(f(*inputs), inputs, grad)


def _attention_backward(p, mk):
    rows, cols, heads, kv_heads = p["rows"], p["cols"], p["heads"], p["kv_heads"]
    q, k, v = mk.t([1, heads, rows, cols]), mk.t([1, kv_heads, rows, cols], 1), mk.t([1, kv_heads, rows, cols], 2)
    g = mk.t([1, heads, rows, cols], 3)
    gqa = heads != kv_heads

    def backward(g, q, k, v):   # grad_q, grad_k, grad_v
        return _grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa), (q, k, v), g)
    return backward, (g, q, k, v), "autograd of F.scaled_dot_product_attention"


def _rms_norm_backward(p, mk):
    rows, cols = p["rows"], p["cols"]
    g, x, w = mk.t([rows, cols]), mk.t([rows, cols], 1), mk.t([cols], 2)

    def backward(g, x, w):   # grad_x, grad_weight
        return _grads(lambda x, w: F.rms_norm(x, [cols], w, RMS_EPS), (x, w), g)
    return backward, (g, x, w), "autograd of F.rms_norm"


def _channel_rms_norm(p, mk):
    x, w = mk.t(p["x"]), mk.t([p["x"][1]], 1)
    view = [1, -1] + [1] * (len(p["x"]) - 2)

    def norm(x, w):   # no PyTorch op: diffusers' WanRMS_norm with fourfold's eps, then the SiLU it fuses
        return F.silu(x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + RMS_EPS) * w.view(view))
    return norm, (x, w), "composed rms over channels + F.silu"


def _embedding(p, mk):
    table = mk.t([p["n"], p["cols"]])
    ids = torch.from_numpy(uniform_f64(mk.seed + 1, p["rows"], 0.0, p["n"] - 1e-9)).to(torch.int64)
    return (lambda ids, table: F.embedding(ids, table)), (ids.to(table.device), table), "F.embedding"


def _two_d(p, mk, offset=0, scale=1.0):
    return mk.t([p["rows"], p["cols"]], offset, scale)


_ROW_OPS = {
    "log_softmax": lambda p, mk: ((lambda x: torch.log_softmax(x, -1)), (_two_d(p, mk, 0, 8.0),), "torch.log_softmax"),
    "log_softmax_backward": lambda p, mk: (
        (lambda g, y: torch._log_softmax_backward_data(g, y, -1, y.dtype)), (_two_d(p, mk), _two_d(p, mk, 1, 4.0)),
        "torch._log_softmax_backward_data"),
    "rms_norm_backward": _rms_norm_backward,
    "scaled_dot_product_attention_backward": _attention_backward,
    "layer_norm": lambda p, mk: ((lambda x, w, b: F.layer_norm(x, [p["cols"]], w, b)),
                                 (_two_d(p, mk), mk.t([p["cols"]], 1), mk.t([p["cols"]], 2)), "F.layer_norm"),
    "group_norm": lambda p, mk: ((lambda x, w, b: F.group_norm(x, p["groups"], w, b)),
                                 (mk.t(p["x"]), mk.t([p["x"][1]], 1), mk.t([p["x"][1]], 2)), "F.group_norm"),
    "channel_rms_norm": _channel_rms_norm,
    "silu": lambda p, mk: (F.silu, (_two_d(p, mk, 0, 4.0),), "F.silu"),
    "gelu": lambda p, mk: ((lambda x: F.gelu(x, approximate="tanh")), (_two_d(p, mk, 0, 4.0),), "F.gelu tanh"),
    "add": lambda p, mk: (torch.add, (_two_d(p, mk), _two_d(p, mk, 1)), "torch.add"),
    "mul": lambda p, mk: (torch.mul, (_two_d(p, mk), _two_d(p, mk, 1)), "torch.mul"),
    "embedding": _embedding,
    "topk": lambda p, mk: ((lambda x: torch.topk(x, p["k"])), (_two_d(p, mk, 0, 8.0),), "torch.topk"),
    "argmax": lambda p, mk: ((lambda x: torch.argmax(x, -1)), (_two_d(p, mk, 0, 8.0),), "torch.argmax"),
    "upsample_nearest": lambda p, mk: ((lambda x: F.interpolate(x, size=p["size"], mode="nearest")), (mk.t(p["x"]),),
                                       "F.interpolate nearest"),
}


def _conv(c, mk):
    p = c.p
    x = mk.t(p["x"])
    w = mk.t(p["weight"], 1, 1.0 / math.sqrt(math.prod(p["weight"]) / p["weight"][0]))
    b = mk.t([p["weight"][0]], 2) if p["bias"] else None
    conv = F.conv2d if len(p["x"]) == 4 else F.conv3d
    stride, padding, dilation, groups = p["stride"], p["padding"], p["dilation"], p["groups"]
    return ((lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups)), (x, w, b),
            "F.conv2d" if len(p["x"]) == 4 else "F.conv3d")


_BUILDERS = {"linear": _linear, "softmax": _softmax, "pad": _pad, "moe": _moe, "attention": _attention,
             "fp8": _fp8, "row_op": _row_op, "conv": _conv}


def build_call(case, seed, device="cpu", oracle=False):
    """The case's call on its inputs made from `seed`; oracle=True: the same values widened to float64 on the
    CPU (FP8 operands stay FP8, as in fourfold), and a plain float64 formula where PyTorch's op has none."""
    if case.dtype not in TORCH_DTYPES:
        raise Unsupported(f"dtype {case.dtype} has no torch dtype here")
    return _BUILDERS[case.kind](case, _Maker(case.dtype, seed, device, oracle))
