"""The rows of gated_delta_rule and gated_delta_rule_chunked (their C++ twin: src/check/op_cases/
gated_delta_rule_case.h): T tokens, kv_heads key heads, heads value heads of head dim cols, the gates fused
(raw a and b with A_log and dt_bias), a nonzero f32 state. The PyTorch call is transformers' own torch_*_gated_delta_rule
(what a transformers user runs on CPU); the oracle a plain float64 recurrence."""

import torch
import torch.nn.functional as F

from ..op_calls import Unsupported, bench_tensor


def inputs(c, mk):
    t, hk, hv, d = c.p["rows"], c.p["kv_heads"], c.p["heads"], c.p["cols"]
    q, k, v = mk.t([1, t, hk, d], 0), mk.t([1, t, hk, d], 1), mk.t([1, t, hv, d], 2)
    a, b = mk.t([1, t, hv], 3), mk.t([1, t, hv], 4, 2.0)
    a_log, dt_bias = mk.t([hv], 5, 2.0), mk.t([hv], 6)
    state = mk.wide(bench_tensor([1, hv, d, d], "float32", mk.seed + 7, 0.1, "cpu" if mk.oracle else mk.device))
    return q, k, v, a, b, a_log, dt_bias, state


def gates(a, b, a_log, dt_bias):
    g = -a_log.float().exp() * F.softplus(a.float() + dt_bias.float())
    return g, b.sigmoid()


def oracle(q, k, v, a, b, a_log, dt_bias, state):
    """The recurrence token by token in float64."""
    g = -a_log.exp() * F.softplus(a + dt_bias)
    beta = b.sigmoid()
    group = v.shape[2] // q.shape[2]
    q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + 1e-6)
    k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    q = (q / q.shape[-1] ** 0.5).repeat_interleave(group, dim=2)
    k = k.repeat_interleave(group, dim=2)
    s = state.clone()
    out = torch.empty_like(v)
    for t in range(q.shape[1]):
        s = s * g[:, t, :, None, None].exp()
        mem = (s * k[:, t, :, :, None]).sum(-2)
        delta = (v[:, t] - mem) * beta[:, t, :, None]
        s = s + k[:, t, :, :, None] * delta[:, :, None, :]
        out[:, t] = (s * q[:, t, :, :, None]).sum(-2)
    return out


def torch_call(c, mk, chunked):
    if mk.oracle:
        return oracle, inputs(c, mk), "float64 recurrence"
    try:
        from transformers.models.qwen3_5_moe import modeling_qwen3_5_moe as m
    except ImportError as e:
        raise Unsupported(f"transformers' gated delta rule: {e}")
    rule = m.torch_chunk_gated_delta_rule if chunked else m.torch_recurrent_gated_delta_rule

    def run(q, k, v, a, b, a_log, dt_bias, state):
        g, beta = gates(a, b, a_log, dt_bias)
        return rule(q, k, v, g=g, beta=beta, initial_state=state.clone(), output_final_state=True,
                    use_qk_l2norm_in_kernel=True)[0]
    return run, inputs(c, mk), rule.__name__


def fourfold_call(c, mk, mode):
    def run(q, k, v, a, b, a_log, dt_bias, state):
        return torch.ops.fourfold.gated_delta_rule(q, k, v, a, b, state.clone(), a_log, dt_bias, mode)
    return run, inputs(c, mk), "fourfold.gated_delta_rule"
