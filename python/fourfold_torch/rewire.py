"""fourfold_torch.optimize(model), exported by the package: rewires a loaded transformers decoder (Qwen3-MoE,
Qwen3, Qwen2, Llama, and the hybrids Qwen3.5 / 3.6 and Qwen3-Next: rewire_hybrid.py) or a diffusers
AutoencoderKLWan onto torch.ops.fourfold, module by module, and leaves everything else on PyTorch.

The ops have no backward yet (torch_ops.py refuses a gradient by name), so a rewired module runs its original
forward whenever autograd would record it: grad mode on and a parameter or an input requiring grad. Training,
LoRA or a plain forward with grad enabled get PyTorch's gradients; generate() and no_grad / inference_mode the
kernels.

Each rewiring replaces one module instance's forward (never a class, so other models in the process are
untouched) after checking the module has exactly what the replacement reads. `ops` takes a subset of OPS, so a
gain can be attributed to one op. The returned model is the same object; model.fourfold_optimized lists what
was rewired, as (module name, op)."""
import types

import torch
from torch import nn

from . import rewire_hybrid as hybrid
from . import speed_probe
from . import torch_ops

# What optimize can rewire, by the fourfold op that then runs.
OPS = ("linear", "scaled_linear", "rms_norm", "add_rms_norm", "silu_mul", "scaled_dot_product_attention",
       "moe_block", "gated_delta_rule", "rms_norm_gated", "padded_conv3d", "conv2d", "channel_rms_norm",
       "upsample_nearest")


def optimize(model, ops=None, weights="keep", kernels="probe"):
    """weights="keep" (the default): the weights are read where they are. "copy": the rewired modules' weights of
    2 MiB and more are copied once onto 2 MiB pages (torch.ops.fourfold.to_huge_pages, as `fourfold run --weights
    copy`), which holds both copies at once while it runs and gained nothing measurable on the hosts measured so
    far (docs/pytorch_extension.md).

    kernels="probe" (the default): each rewired nn.Linear runs fourfold's linear or PyTorch's, at decode and at
    prefill, whichever measured faster on this host for its weight shape (speed_probe.py); model.fourfold_choices
    says what was chosen and the figures. "fourfold": every rewired linear on fourfold."""
    torch_ops.require()
    if weights not in ("copy", "keep"):
        raise ValueError(f"fourfold_torch.optimize: argument 'weights': expected 'copy' or 'keep', found {weights!r}")
    if kernels not in ("probe", "fourfold"):
        raise ValueError(f"fourfold_torch.optimize: argument 'kernels': expected 'probe' or 'fourfold', "
                         f"found {kernels!r}")
    chosen = set(OPS if ops is None else ops)
    unknown = chosen - set(OPS)
    if unknown:
        raise ValueError(f"fourfold_torch.optimize: argument 'ops': expected names from {', '.join(OPS)}, "
                         f"found {', '.join(sorted(unknown))}")
    done, probed = [], {}
    for name, module in model.named_modules():
        _fuse_norm_silu(name, module, chosen, done)
        if "forward" in vars(module):
            continue   # rewired already: a fused norm, or a model optimized twice
        for op, matches, forward in _REWIRINGS:
            if op in chosen and matches(module):
                _rewire(module, forward)
                done.append((name, op))
                if op == "linear":
                    module.fourfold_linear_choice = (speed_probe.probe_linear(module, probed) if kernels == "probe"
                                                     else speed_probe.fixed_choice(module, fourfold=True))
                if op == "gated_delta_rule":
                    hybrid.conv_taps(module)   # made here, so that a compiled forward finds them made
                break
    if weights == "copy":
        _weights_to_huge_pages(model, {name for name, _ in done})
    model.fourfold_optimized = done
    model.fourfold_choices = [c.describe() for c in probed.values()]
    return model


def _rewire(module, forward):
    module.fourfold_original_forward = module.forward
    module.forward = types.MethodType(_unless_grad_is_recorded(forward), module)


def _unless_grad_is_recorded(forward):
    def guarded(self, *args, **kwargs):
        if torch.is_grad_enabled() and _records_grad(self, args, kwargs):
            return self.fourfold_original_forward(*args, **kwargs)
        return forward(self, *args, **kwargs)
    return guarded


def _records_grad(module, args, kwargs):
    return (any(p.requires_grad for p in module.parameters())
            or any(isinstance(a, torch.Tensor) and a.requires_grad for a in (*args, *kwargs.values())))


def _weights_to_huge_pages(model, rewired):
    """Each parameter of a rewired module (and below it) of 2 MiB or more, once even where tied."""
    seen = set()
    for name, module in model.named_modules():
        if not any(name == r or name.startswith(r + ".") for r in rewired):
            continue
        for p in module.parameters(recurse=False):
            if id(p) in seen or p.device.type != "cpu" or not p.is_contiguous() or p.nbytes < (2 << 20):
                continue
            seen.add(id(p))
            with torch.no_grad():
                p.data = torch.ops.fourfold.to_huge_pages(p.data)


def _is_silu(module):
    return isinstance(module, nn.SiLU) or type(module).__name__ in ("SiLUActivation", "SiLU")


# ---- transformers decoders

def _is_linear(m):
    return (isinstance(m, nn.Linear) and m.weight.dim() == 2 and not m.weight.is_meta
            and m.weight.dtype in (torch.float32, torch.bfloat16, torch.float16))


def _linear_forward(self, x):
    choice = self.fourfold_linear_choice
    rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    if not (choice.fourfold_at_decode if rows <= speed_probe.DECODE_ROWS else choice.fourfold_at_prefill):
        return nn.functional.linear(x, self.weight, self.bias)
    return torch.ops.fourfold.linear(x, self.weight, self.bias)


def _is_fp8_linear(m):
    w = getattr(m, "weight", None)
    return (isinstance(w, torch.Tensor) and w.dtype == torch.float8_e4m3fn and w.dim() == 2
            and isinstance(getattr(m, "weight_scale_inv", None), torch.Tensor))


def _fp8_linear_forward(self, x):
    return torch.ops.fourfold.scaled_linear(x, self.weight, self.weight_scale_inv.float(), getattr(self, "bias", None))


def _is_decoder_rms_norm(m):
    return (type(m).__name__.endswith("RMSNorm") and isinstance(getattr(m, "weight", None), torch.Tensor)
            and m.weight.dim() == 1 and hasattr(m, "variance_epsilon"))


def _rms_norm_forward(self, x):
    return torch.ops.fourfold.rms_norm(x, [x.shape[-1]], self.weight, float(self.variance_epsilon))


def _is_gated_mlp(m):
    return (all(isinstance(getattr(m, p, None), nn.Module) for p in ("gate_proj", "up_proj", "down_proj"))
            and _is_silu(getattr(m, "act_fn", None)))


def _gated_mlp_forward(self, x):
    return self.down_proj(torch.ops.fourfold.silu_mul(self.gate_proj(x), self.up_proj(x)))


def _is_sparse_moe_block(m):
    experts, router = getattr(m, "experts", None), getattr(m, "gate", None)
    return (experts is not None and router is not None
            and isinstance(getattr(experts, "gate_up_proj", None), torch.Tensor)
            and isinstance(getattr(experts, "down_proj", None), torch.Tensor)
            and getattr(experts, "is_concatenated", True) and not getattr(experts, "is_transposed", False)
            and not getattr(experts, "has_bias", False) and _is_silu(getattr(experts, "act_fn", None))
            and isinstance(getattr(router, "weight", None), torch.Tensor) and hasattr(router, "top_k")
            and (hasattr(router, "norm_topk_prob") or hybrid.router_always_normalizes(router)))


def _sparse_moe_forward(self, hidden_states):
    shape = hidden_states.shape
    x = hidden_states.reshape(-1, shape[-1])
    gate_up, inter = self.experts.gate_up_proj, self.experts.gate_up_proj.shape[1] // 2
    out = torch.ops.fourfold.moe_block(x, self.gate.weight, gate_up[:, :inter], gate_up[:, inter:],
                                       self.experts.down_proj, self.gate.top_k,
                                       bool(getattr(self.gate, "norm_topk_prob", True)))
    if hybrid.has_shared_expert(self):
        out = out + hybrid.shared_expert_output(self, x)
    return out.reshape(shape)


def _is_decoder_attention(m):
    return (all(isinstance(getattr(m, p, None), nn.Module) for p in ("q_proj", "k_proj", "v_proj", "o_proj"))
            and hasattr(m, "head_dim") and hasattr(m, "layer_idx") and hasattr(m, "scaling")
            and type(m).__name__.endswith("Attention")
            # the hybrids' gated attention (q_proj yields q and a gate) stays transformers'
            and m.q_proj.out_features == m.o_proj.in_features)


def _attention_forward(self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None,
                       **kwargs):
    # transformers' attention with rotary_embedding and scaled_dot_product_attention from fourfold; the KV
    # cache stays transformers' own (its update is the same call).
    tokens = hidden_states.shape[:-1]
    q = self.q_proj(hidden_states).view(*tokens, -1, self.head_dim)
    k = self.k_proj(hidden_states).view(*tokens, -1, self.head_dim)
    v = self.v_proj(hidden_states).view(*tokens, -1, self.head_dim).transpose(1, 2)
    if hasattr(self, "q_norm"):
        q, k = self.q_norm(q), self.k_norm(k)
    cos, sin = position_embeddings
    half = cos.shape[-1] // 2
    cos, sin = cos[..., :half].unsqueeze(1), sin[..., :half].unsqueeze(1)
    q = torch.ops.fourfold.rotary_embedding(q.transpose(1, 2), cos, sin)
    k = torch.ops.fourfold.rotary_embedding(k.transpose(1, 2), cos, sin)
    if past_key_values is not None:
        k, v = past_key_values.update(k, v, self.layer_idx)
    causal = "none"
    if attention_mask is None and q.shape[2] > 1:
        causal = "lower_right"   # the query block ends at the last key: prefill, with or without a cache
    elif attention_mask is not None and attention_mask.dim() == 4:
        attention_mask = attention_mask[..., : k.shape[2]]
    out = torch.ops.fourfold.scaled_dot_product_attention(q, k, v, attention_mask, causal, float(self.scaling),
                                                          q.shape[1] != k.shape[1])
    out = out.transpose(1, 2).reshape(*tokens, -1)
    return self.o_proj(out), None


def _is_decoder_layer(m):
    return (all(isinstance(getattr(m, p, None), nn.Module)
                for p in ("input_layernorm", "post_attention_layernorm", "self_attn", "mlp"))
            and _is_decoder_rms_norm(m.post_attention_layernorm) and type(m).__name__.endswith("DecoderLayer"))


def _decoder_layer_forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                           use_cache=False, position_embeddings=None, **kwargs):
    residual = hidden_states
    h = self.input_layernorm(hidden_states)
    h, _ = self.self_attn(hidden_states=h, attention_mask=attention_mask, position_ids=position_ids,
                          past_key_values=past_key_values, use_cache=use_cache,
                          position_embeddings=position_embeddings, **kwargs)
    norm = self.post_attention_layernorm
    h, residual = torch.ops.fourfold.add_rms_norm(h, residual, [h.shape[-1]], norm.weight,
                                                  float(norm.variance_epsilon))
    return residual + self.mlp(h)


# ---- diffusers' AutoencoderKLWan

def _is_causal_conv3d(m):
    return (type(m).__name__ == "WanCausalConv3d" and hasattr(m, "_padding") and m.groups == 1
            and tuple(m.dilation) == (1, 1, 1) and tuple(m.padding) == (0, 0, 0))


def _causal_conv3d_forward(self, x, cache_x=None):
    padding = list(self._padding)
    if cache_x is not None and self._padding[4] > 0:
        x = torch.cat([cache_x.to(x.device), x], dim=2)
        padding[4] -= cache_x.shape[2]
    return torch.ops.fourfold.padded_conv3d(x, self.weight, self.bias, padding, list(self.stride))


def _is_conv2d(m):
    return (type(m) is nn.Conv2d and m.padding_mode == "zeros" and not isinstance(m.padding, str))


def _conv2d_forward(self, x):
    return torch.ops.fourfold.conv2d(x, self.weight, self.bias, list(self.stride), list(self.padding),
                                     list(self.dilation), self.groups)


def _is_wan_rms_norm(m):
    return (type(m).__name__ == "WanRMS_norm" and m.channel_first and isinstance(m.bias, float) and m.bias == 0.0)


def _wan_rms_norm_forward(self, x, silu=False):
    # F.normalize(x, dim=1) * sqrt(C) * gamma is channel_rms_norm with eps 1e-24 / C (fourfold/ops.h).
    channels = self.gamma.shape[0]
    return torch.ops.fourfold.channel_rms_norm(x, self.gamma.reshape(channels), 1e-24 / channels, silu)


def _wan_rms_norm_silu_forward(self, x):
    return _wan_rms_norm_forward(self, x, silu=True)


def _is_wan_upsample(m):
    factor = m.scale_factor if isinstance(m, nn.Upsample) else None
    factors = factor if isinstance(factor, tuple) else (factor,)
    return (type(m).__name__ == "WanUpsample" and m.mode in ("nearest", "nearest-exact") and m.size is None
            and factor is not None and all(float(f).is_integer() and f >= 1 for f in factors))


def _wan_upsample_forward(self, x):
    # For whole scale factors, 'nearest-exact' and 'nearest' pick the same source pixel.
    spatial = x.dim() - 2
    factors = self.scale_factor if isinstance(self.scale_factor, tuple) else (self.scale_factor,) * spatial
    size = [int(s * f) for s, f in zip(x.shape[2:], factors)]
    return torch.ops.fourfold.upsample_nearest(x, size)


def _fuse_norm_silu(name, module, chosen, done):
    # A WanRMS_norm followed by SiLU (the residual blocks' norm1/norm2, the decoder's norm_out) becomes one
    # channel_rms_norm with the SiLU fused, and the module's SiLU an identity.
    if "channel_rms_norm" not in chosen or not _is_silu(getattr(module, "nonlinearity", None)):
        return
    pairs = {"WanResidualBlock": ("norm1", "norm2"), "WanDecoder3d": ("norm_out",)}.get(type(module).__name__)
    if pairs is None or not all(_is_wan_rms_norm(getattr(module, n, None)) for n in pairs):
        return
    for n in pairs:
        norm = getattr(module, n)
        _rewire(norm, _wan_rms_norm_silu_forward)
        # the module's SiLU is gone, so the fallback for recorded gradients applies it
        plain = norm.fourfold_original_forward
        norm.fourfold_original_forward = lambda x, plain=plain: nn.functional.silu(plain(x))
        done.append((f"{name}.{n}" if name else n, "channel_rms_norm+silu"))
    module.nonlinearity = nn.Identity()


# (op, matches, forward), tried in order; the first match rewires the module.
_REWIRINGS = (
    ("add_rms_norm", _is_decoder_layer, _decoder_layer_forward),
    ("scaled_dot_product_attention", _is_decoder_attention, _attention_forward),
    ("moe_block", _is_sparse_moe_block, _sparse_moe_forward),
    ("gated_delta_rule", hybrid.is_gated_delta_net, hybrid.gated_delta_net_forward),
    ("rms_norm_gated", hybrid.is_gated_rms_norm, hybrid.gated_rms_norm_forward),
    ("rms_norm", hybrid.is_zero_centred_rms_norm, hybrid.zero_centred_rms_norm_forward),
    ("silu_mul", _is_gated_mlp, _gated_mlp_forward),
    ("rms_norm", _is_decoder_rms_norm, _rms_norm_forward),
    ("linear", _is_linear, _linear_forward),
    ("scaled_linear", _is_fp8_linear, _fp8_linear_forward),
    ("padded_conv3d", _is_causal_conv3d, _causal_conv3d_forward),
    ("conv2d", _is_conv2d, _conv2d_forward),
    ("channel_rms_norm", _is_wan_rms_norm, _wan_rms_norm_forward),
    ("upsample_nearest", _is_wan_upsample, _wan_upsample_forward),
)
