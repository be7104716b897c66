"""A linear-attention layer's short convolution (transformers' causal_conv1d_update / causal_conv1d_fn): x of
rows tokens and cols channels (channel-last, as fourfold's engine keeps it), k taps, SiLU, from a conv state."""

import torch
import torch.nn.functional as F


def _inputs(c, mk):
    t, ch, k = c.p["rows"], c.p["cols"], c.p["k"]
    x = mk.t([1, t, ch], 0).transpose(1, 2)
    w = mk.t([ch, k], 1, 0.5)
    state = mk.t([1, k - 1, ch], 2).transpose(1, 2)
    return x, w, state


def _conv(x, w, state):
    # transformers' causal_conv1d_update on a copy of the state: the past columns, then x, convolved per channel.
    joined = torch.cat([state, x], dim=-1)
    out = F.conv1d(joined, w.unsqueeze(1), groups=w.shape[0])[..., -x.shape[-1]:]
    return F.silu(out)


def call(c, mk):
    return _conv, _inputs(c, mk), "cat + F.conv1d + F.silu"


def fourfold_call(c, mk):
    def run(x, w, state):
        return torch.ops.fourfold.causal_conv1d(x, w, None, state.clone(), True)
    return run, _inputs(c, mk), "fourfold.causal_conv1d"
