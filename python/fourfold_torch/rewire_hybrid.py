"""The rewirings of the 2026 Qwen hybrids (transformers' Qwen3_5Moe*, Qwen3_5*, Qwen3Next*): the Gated DeltaNet
layer on fourfold's causal_conv1d, gated_delta_rule and rms_norm_gated over transformers' own hybrid cache, the
zero-centred RMSNorm, and the sparse MoE block with its shared expert. rewire.py lists them beside the others.

The cache stays transformers': its conv state [B, C, K] holds the last K inputs, of which the next step reads the
last K - 1, so fourfold's conv_state is the view [..., 1:] of it, updated in place (the oldest column goes stale
and is never read). The recurrent state [B, Hv, Dk, Dv] f32 is the op's state, updated in place."""
import torch


def _hybrid_family(m):
    return type(m).__name__.startswith(("Qwen3_5", "Qwen3Next"))


def is_zero_centred_rms_norm(m):
    w = getattr(m, "weight", None)
    return (_hybrid_family(m) and type(m).__name__.endswith("RMSNorm") and isinstance(w, torch.Tensor)
            and w.dim() == 1 and isinstance(getattr(m, "eps", None), float))


def zero_centred_rms_norm_forward(self, x):
    # transformers multiplies the f32 normed x by (1 + w) in f32 and rounds once: fourfold's rms_norm with an f32
    # weight does the same. 1 + w is formed per call (a few KiB), so a weight changed after optimize still counts.
    return torch.ops.fourfold.rms_norm(x, [x.shape[-1]], 1.0 + self.weight.float(), float(self.eps))


def is_gated_rms_norm(m):
    w = getattr(m, "weight", None)
    return (_hybrid_family(m) and type(m).__name__.endswith("RMSNormGated") and isinstance(w, torch.Tensor)
            and w.dim() == 1 and getattr(m, "activation", "silu") == "silu" and hasattr(m, "variance_epsilon"))


def gated_rms_norm_forward(self, hidden_states, gate):
    return torch.ops.fourfold.rms_norm_gated(hidden_states, gate, self.weight, float(self.variance_epsilon))


def is_gated_delta_net(m):
    conv = getattr(m, "conv1d", None)
    projections = ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj")
    return (_hybrid_family(m) and type(m).__name__.endswith("GatedDeltaNet")
            and all(isinstance(getattr(m, p, None), torch.nn.Linear) for p in projections)
            and isinstance(conv, torch.nn.Conv1d) and conv.groups == conv.in_channels
            and getattr(m, "activation", None) == "silu" and is_gated_rms_norm(getattr(m, "norm", None))
            and all(hasattr(m, a) for a in ("A_log", "dt_bias", "key_dim", "value_dim", "head_k_dim", "head_v_dim",
                                            "layer_idx", "conv_kernel_size")))


def gated_delta_net_forward(self, hidden_states, cache_params=None, attention_mask=None, **kwargs):
    if cache_params is not None and cache_params.is_recording_past(self.layer_idx):
        return self.fourfold_original_forward(hidden_states, cache_params, attention_mask, **kwargs)
    if attention_mask is not None and attention_mask.dim() == 2:   # padding tokens tuned out, as transformers
        hidden_states = (hidden_states * attention_mask[:, :, None]).to(hidden_states.dtype)
    batch, tokens, _ = hidden_states.shape
    conv_state = recurrent_state = None
    if cache_params is not None:
        conv_state = cache_params.get_conv_state(self.layer_idx)
        recurrent_state = cache_params.get_recurrent_state(self.layer_idx)

    qkv = self.in_proj_qkv(hidden_states).transpose(1, 2)   # [B, C, T], channel-last as the op keeps it
    z = self.in_proj_z(hidden_states)
    b = self.in_proj_b(hidden_states)
    a = self.in_proj_a(hidden_states)

    weight = conv_taps(self)
    if conv_state is not None:
        mixed = torch.ops.fourfold.causal_conv1d(qkv, weight, self.conv1d.bias, conv_state[..., 1:], True)
    else:
        if cache_params is not None:   # the first call: transformers' cache keeps the prompt's last K inputs
            cache_params.update_conv_state(qkv, self.layer_idx, conv_kernel_size=self.conv_kernel_size)
            _conv_state_channel_last(cache_params, self.layer_idx)
        # zeros rather than None: inductor (PyTorch 2.15) lowers a None passed for a mutable argument to a getitem
        # it then cannot compile ("getitem is not an OpOverload")
        zeros = qkv.new_zeros(batch, self.conv_kernel_size - 1, qkv.shape[1]).transpose(1, 2)
        mixed = torch.ops.fourfold.causal_conv1d(qkv, weight, self.conv1d.bias, zeros, True)
    mixed = mixed.transpose(1, 2)   # [B, T, C] rows
    query, key, value = torch.split(mixed, [self.key_dim, self.key_dim, self.value_dim], dim=-1)
    query = query.reshape(batch, tokens, -1, self.head_k_dim)
    key = key.reshape(batch, tokens, -1, self.head_k_dim)
    value = value.reshape(batch, tokens, -1, self.head_v_dim)

    fresh = recurrent_state is None
    state = recurrent_state if not fresh else torch.zeros(
        (batch, value.shape[2], self.head_k_dim, self.head_v_dim), dtype=torch.float32, device=value.device)
    out = torch.ops.fourfold.gated_delta_rule(query, key, value, a, b, state, self.A_log, self.dt_bias, "auto",
                                              None, True, 64)
    if cache_params is not None and fresh:
        cache_params.update_recurrent_state(state, self.layer_idx)

    out = self.norm(out.reshape(-1, self.head_v_dim), z.reshape(-1, self.head_v_dim))
    return self.out_proj(out.reshape(batch, tokens, -1))


def router_always_normalizes(router):
    """Qwen3.5's router has no norm_topk_prob: it always divides the top-k probabilities by their sum."""
    return _hybrid_family(router) and type(router).__name__.endswith("TopKRouter")


def conv_taps(self):
    """The conv weight [C, 1, K] as the view [C, K] of an f32 [K, C], the layout the op reads in place (any other
    is converted on every call): made once, and again if the weight changes."""
    w = self.conv1d.weight
    if torch.compiler.is_compiling():
        # data_ptr has no meaning in a traced graph: the taps of the last eager call (optimize, which installs this
        # forward, makes them)
        return self._fourfold_taps
    key = (w.data_ptr(), w._version, w.dtype)
    if getattr(self, "_fourfold_taps_key", None) != key:
        self._fourfold_taps = w.detach().squeeze(1).t().float().contiguous().t()
        self._fourfold_taps_key = key
    return self._fourfold_taps


def _conv_state_channel_last(cache, layer_idx):
    """transformers allocates the conv state [B, C, K] contiguous; the same values channel-last (a [B, K, C] tensor
    seen transposed) make its view [..., 1:] the layout the op reads and writes in place, where the contiguous one
    goes through a copy each step. transformers' own uses of the state (crop, reorder, reset) take any strides."""
    layer = cache.layers[layer_idx] if hasattr(cache, "layers") else None
    states = getattr(layer, "conv_states", None)   # by state index: a dict in transformers 5.23
    if not isinstance(states, (dict, list)) or len(states) == 0 or not isinstance(states[0], torch.Tensor):
        return
    state = states[0]
    if state.dim() == 3 and state.stride(1) != 1:
        states[0] = state.new_empty(state.shape[0], state.shape[2], state.shape[1]).transpose(1, 2).copy_(state)


def has_shared_expert(m):
    return (isinstance(getattr(m, "shared_expert", None), torch.nn.Module)
            and isinstance(getattr(m, "shared_expert_gate", None), torch.nn.Linear))


def shared_expert_output(self, x):
    """The shared expert scaled by sigmoid(shared_expert_gate(x)), as transformers' sparse MoE blocks add it."""
    return torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)
