#!/usr/bin/env python3
"""Writes data/suites/*.json, the op-time suites, from the model configs below (one place to check them).

The JSON files are committed; this script is how they were made and how to change them. Run from the
repository root: python3 scripts/make_suites.py. Figures are from each model's config.json on the
Hugging Face hub (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads, head_dim,
vocab_size, num_experts / num_local_experts, moe_intermediate_size, num_experts_per_tok).
"""
import json
import os

# name: hidden, intermediate, q heads, kv heads, head_dim, vocab, (experts, expert intermediate, top_k) or None
MODELS = {
    "llama-3.2-1b": (2048, 8192, 32, 8, 64, 128256, None),
    "llama-3.2-3b": (3072, 8192, 24, 8, 128, 128256, None),
    "llama-3.1-8b": (4096, 14336, 32, 8, 128, 128256, None),
    "llama-3.1-70b": (8192, 28672, 64, 8, 128, 128256, None),
    "qwen3-0.6b": (1024, 3072, 16, 8, 128, 151936, None),
    "qwen3-1.7b": (2048, 6144, 16, 8, 128, 151936, None),
    "qwen3-4b": (2560, 9728, 32, 8, 128, 151936, None),
    "qwen3-8b": (4096, 12288, 32, 8, 128, 151936, None),
    "qwen3-14b": (5120, 17408, 40, 8, 128, 151936, None),
    "qwen3-32b": (5120, 25600, 64, 8, 128, 151936, None),
    "qwen3-30b-a3b": (2048, None, 32, 4, 128, 151936, (128, 768, 8)),
    "qwen3-235b-a22b": (4096, None, 64, 4, 128, 151936, (128, 1536, 8)),
    "mistral-7b-v0.1": (4096, 14336, 32, 8, 128, 32000, None),
    "mistral-7b-v0.3": (4096, 14336, 32, 8, 128, 32768, None),
    # gpt-oss experts: gate_up_proj is one fused [E, hidden, 2 * intermediate] tensor (MXFP4 on the hub).
    "gpt-oss-20b": (2880, None, 64, 8, 64, 201088, (32, 2880, 4)),
    "gpt-oss-120b": (2880, None, 64, 8, 64, 201088, (128, 2880, 4)),
    "gemma-2-2b": (2304, 9216, 8, 4, 256, 256000, None),
    "gemma-3-1b": (1152, 6912, 4, 1, 256, 262144, None),
    "gemma-3-4b": (2560, 10240, 8, 4, 256, 262208, None),
    "gemma-3-12b": (3840, 15360, 16, 8, 256, 262208, None),
    "gemma-3-27b": (5376, 21504, 32, 16, 128, 262208, None),
}


def projections(name):
    h, inter, heads, kv, hd, vocab, moe = MODELS[name]
    out = [("q_proj", heads * hd, h), ("k_proj", kv * hd, h), ("v_proj", kv * hd, h), ("o_proj", h, heads * hd)]
    if moe is None:
        out += [("gate_proj", inter, h), ("up_proj", inter, h), ("down_proj", h, inter)]
    else:
        experts, mi, _ = moe
        out.append(("router", experts, h))
        if name.startswith("gpt-oss"):
            out += [("expert gate_up_proj (fused)", 2 * mi, h), ("expert down_proj", h, mi)]
        else:
            out += [("expert gate_proj", mi, h), ("expert up_proj", mi, h), ("expert down_proj", h, mi)]
    out.append(("lm_head", vocab, h))
    return out


def model_table():
    table = {}
    for name, (h, inter, heads, kv, hd, vocab, moe) in MODELS.items():
        entry = {"hidden_size": h, "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": hd,
                 "vocab_size": vocab}
        if inter is not None:
            entry["intermediate_size"] = inter
        if moe is not None:
            entry.update({"num_experts": moe[0], "moe_intermediate_size": moe[1], "num_experts_per_tok": moe[2]})
        table[name] = entry
    return table


def decode_linear():
    # One entry per distinct weight shape N x K; the first use names it, "also" lists every other use.
    shapes, index = [], {}
    for name in MODELS:
        for proj, n, k in projections(name):
            if (n, k) in index:
                shapes[index[(n, k)]]["also"].append(f"{name} {proj}")
            else:
                index[(n, k)] = len(shapes)
                shapes.append({"n": n, "k": k, "model": name, "projection": proj, "also": []})
    assert len(shapes) == 96, len(shapes)
    return {
        "suite": "decode-linear",
        "op": "linear",
        "description": "Decode projections: y[M, N] = x[M, K] @ W[N, K]^T (+ b[N]) for every distinct weight "
                       "shape of the models below; M = 1 and 4 tokens, with and without bias; plus M = 1 with "
                       "weight-only low precision (weight_only: x and weight dtypes, fp8 or fp4 scale recipe).",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16"],
        "m": [1, 4],
        "bias": [False, True],
        # Weight-only low precision (M = 1, no bias): bf16 weights under f32 activations, and scaled_linear's
        # fp8 weights with 128x128 block scales and fp4 weights (NVFP4, MXFP4) under bf16 activations (the decode
        # GEMV's bandwidth case).
        "weight_only": [
            {"x": "float32", "weight": "bfloat16", "m": [1]},
            {"x": "bfloat16", "weight": "float8_e4m3fn", "recipe": "block_128x128", "m": [1]},
            {"x": "bfloat16", "weight": "float4_e2m1fn_x2", "recipe": "nvfp4", "m": [1]},
            {"x": "bfloat16", "weight": "float4_e2m1fn_x2", "recipe": "mxfp4", "m": [1]},
        ],
        "models": model_table(),
        "shapes": shapes,
    }


def softmax():
    return {
        "suite": "softmax",
        "op": "softmax",
        "description": "Softmax over the vocabulary (sampling): rows x vocab along the last dim.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["f32", "bf16"],
        "rows": [1, 4, 8],
        "dim": -1,
        "vocabularies": [
            {"size": 32000, "models": ["mistral-7b-v0.1", "llama-2"]},
            {"size": 128256, "models": ["llama-3.x"]},
            {"size": 151936, "models": ["qwen3"]},
            {"size": 262144, "models": ["gemma-3-1b"]},
        ],
    }


def pad():
    vae = [1, 1, 1, 1, 2, 0]   # W (1, 1), H (1, 1), T (2 before, 0 after): a causal 3x3x3 conv
    img = [1, 1, 1, 1]
    cases = [
        {"name": "causal-vae latent conv_in", "shape": [1, 16, 5, 60, 104], "pads": vae},
        {"name": "causal-vae tile 32", "shape": [1, 512, 5, 32, 32], "pads": vae},
        {"name": "causal-vae tile 64", "shape": [1, 512, 5, 64, 64], "pads": vae},
        {"name": "causal-vae tile 128", "shape": [1, 256, 9, 128, 128], "pads": vae},
        {"name": "causal-vae tile 256 (H*W = 2^16)", "shape": [1, 128, 17, 256, 256], "pads": vae},
        {"name": "causal-vae tile 512 (H*W = 2^18)", "shape": [1, 64, 3, 512, 512], "pads": vae},
        {"name": "causal-vae strip (W = 2^16)", "shape": [1, 8, 3, 2, 65536], "pads": vae},
        {"name": "causal-vae tile 64, channels-last", "shape": [1, 512, 5, 64, 64], "pads": vae,
         "layout": "channels_last"},
        {"name": "causal-vae tile 64, sliced rows", "shape": [1, 512, 5, 64, 64], "pads": vae, "layout": "sliced"},
        {"name": "causal-vae tile 128, sliced rows", "shape": [1, 256, 9, 128, 128], "pads": vae, "layout": "sliced"},
        {"name": "image-vae conv 64", "shape": [1, 512, 64, 64], "pads": img},
        {"name": "image-vae conv 512", "shape": [1, 128, 512, 512], "pads": img},
        {"name": "image-vae conv 64, channels-last", "shape": [1, 512, 64, 64], "pads": img, "layout": "channels_last"},
        {"name": "2-d rows to a multiple of 128", "shape": [4096, 4000], "pads": [0, 96]},
        {"name": "2-d innermost 2^16", "shape": [32, 65536], "pads": [1, 1]},
        {"name": "2-d rows to a multiple of 128, sliced rows", "shape": [4096, 4000], "pads": [0, 96],
         "layout": "sliced"},
    ]
    for c in cases:
        c.setdefault("layout", "contiguous")
    return {
        "suite": "pad",
        "op": "constant_pad_nd",
        "description": "constant_pad_nd as the causal video VAE (5-D [N, C, T, H, W], pads W (1, 1), H (1, 1), "
                       "T (2, 0)), image VAEs (4-D) and 2-D alignment padding use it. Layouts: contiguous; "
                       "channels_last (stored [N, *spatial, C], permuted to [N, C, *spatial]); sliced (the "
                       "innermost dim is x[..., 1:W+1] of a buffer W + 2 wide: rows neither contiguous nor "
                       "aligned).",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "value": 0.0,
        "cases": cases,
    }


def moe():
    h, _, _, _, _, _, (experts, mi, top_k) = MODELS["qwen3-30b-a3b"]
    return {
        "suite": "moe",
        "op": "grouped_mm",
        "description": "Qwen3-30B-A3B expert GEMMs as torch._grouped_mm (2-D x 3-D): tokens x top_k rows sorted "
                       "by expert, offs = cumulative group ends. gate_up is gate_proj and up_proj fused "
                       "(N = 2 x 768); weights are stored [E, N, K] like nn.Linear and passed as the "
                       "transposed view [E, K, N]. Routing: even (assignments spread over all experts), skewed "
                       "(proportional to 1 / (rank + 1), at most one row per token and expert), empty (every "
                       "token picks the same top_k experts, spread over the range: all other groups empty). "
                       "experts: the whole routed-expert computation as the moe_experts op (gate and up [E, I, H], "
                       "silu(gate) * up, down [E, H, I], the routing-weighted sum per token; n = I, k = H).",
        "generated_by": "scripts/make_suites.py",
        "model": "qwen3-30b-a3b",
        "dtypes": ["bf16"],
        "experts": experts,
        "top_k": top_k,
        "hidden_size": h,
        "moe_intermediate_size": mi,
        "tokens": [1, 16, 128, 512],
        "routing": ["even", "skewed", "empty"],
        "projections": [{"name": "gate_up", "n": 2 * mi, "k": h}, {"name": "down", "n": h, "k": mi},
                        {"name": "experts", "op": "moe_experts", "n": mi, "k": h}],
    }


def attention():
    _, _, heads, kv, hd, _, _ = MODELS["qwen3-30b-a3b"]
    cases = [{"name": "decode", "q_len": 1, "kv_len": s, "causal": "none"} for s in (512, 2048, 8192, 32768)]
    cases.append({"name": "prefill", "q_len": 512, "kv_len": 512, "causal": "top_left"})
    return {
        "suite": "attention",
        "op": "scaled_dot_product_attention",
        "description": "GQA attention with Qwen3-30B-A3B's heads (32 query heads, 4 KV heads of 128): decode "
                       "(one query against the whole cache, no mask) and causal prefill. q [1, Hq, L, E], "
                       "k and v [1, Hk, S, E], enable_gqa.",
        "generated_by": "scripts/make_suites.py",
        "model": "qwen3-30b-a3b",
        "dtypes": ["bf16", "f32"],
        "batch": 1,
        "q_heads": heads,
        "kv_heads": kv,
        "head_dim": hd,
        "cases": cases,
    }


def fp8():
    picks = [
        ("qwen3-8b", ["q_proj", "k_proj", "gate_proj", "down_proj"], None),
        ("llama-3.1-8b", ["gate_proj", "down_proj"], None),
        ("llama-3.1-70b", ["q_proj", "k_proj", "gate_proj", "down_proj"], None),
        ("qwen3-30b-a3b", ["q_proj", "k_proj", "o_proj"], None),
        ("qwen3-30b-a3b", ["expert gate_proj", "expert down_proj"], [1, 4, 32]),
        ("qwen3-235b-a22b", ["expert gate_proj", "expert down_proj"], [1, 4, 32]),
        ("gpt-oss-120b", ["expert gate_up_proj (fused)", "expert down_proj"], [1, 4, 32]),
    ]
    shapes = []
    for model, projs, ms in picks:
        table = {p: (n, k) for p, n, k in projections(model)}
        for p in projs:
            n, k = table[p]
            entry = {"n": n, "k": k, "model": model, "projection": p}
            if ms is not None:
                entry["m"] = ms
            shapes.append(entry)
    # The moe suite's fused gate_up of Qwen3-30B-A3B, one expert at a time.
    shapes.append({"n": 1536, "k": 2048, "model": "qwen3-30b-a3b", "projection": "expert gate_up (fused)",
                   "m": [1, 4, 32]})
    # Prefill (the packed GEMM's case): 128 and 512 prompt tokens through Qwen3-8B's q_proj.
    shapes.append({"n": 4096, "k": 4096, "model": "qwen3-8b", "projection": "q_proj (prefill)", "m": [128, 512]})
    return {
        "suite": "fp8",
        "op": "scaled_mm",
        "description": "torch._scaled_mm with float8_e4m3fn activations a[M, K] and weights W[N, K] (b = W^T, a "
                       "column-major view), bf16 output. Recipes: tensorwise (one scale each), rowwise (a [M, 1], "
                       "b [1, N]), block_128x128 (a 1x128 groups [M, K/128], W 128x128 blocks: DeepSeek-V3 and "
                       "Qwen3-FP8 checkpoints). Expert shapes are one expert's GEMM, M = tokens routed to it "
                       "(32 = 512 tokens x 8 / 128 experts, evenly routed). Prefill rows: M = 128 and 512 tokens.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["float8_e4m3fn"],
        "out_dtype": "bf16",
        "recipes": ["tensorwise", "rowwise", "block_128x128"],
        "m": [1, 4],
        "shapes": shapes,
    }


def prefill_linear():
    # A few projections at prompt-chunk sizes: the packed GEMM (M > 8) in bf16 and f32, and scaled_linear's fp8
    # weights (128x128 blocks) under bf16 activations.
    # Qwen3-8B's q_proj (4096 x 4096, also Llama 3.1 8B's) and gate_proj match the fp8 suite's scaled_mm prefill rows.
    picks = [("qwen3-8b", "q_proj"), ("qwen3-8b", "gate_proj"), ("llama-3.1-8b", "down_proj"),
             ("qwen3-30b-a3b", "expert gate_proj"), ("qwen3-0.6b", "up_proj")]
    shapes = []
    for name, proj in picks:
        n, k = next((n, k) for p, n, k in projections(name) if p == proj)
        shapes.append({"n": n, "k": k, "model": name, "projection": proj})
    return {
        "suite": "prefill-linear",
        "op": "linear",
        "description": "Prefill projections: y[M, N] = x[M, K] @ W[N, K]^T for M = 64 and 512 prompt tokens "
                       "(the packed GEMM), bf16 and f32; plus M = 128 with scaled_linear's fp8 weights "
                       "(tensorwise and 128x128 block scales) under bf16 activations.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "m": [64, 512],
        "bias": [False],
        "weight_only": [
            {"x": "bfloat16", "weight": "float8_e4m3fn", "recipe": "tensorwise", "m": [128]},
            {"x": "bfloat16", "weight": "float8_e4m3fn", "recipe": "block_128x128", "m": [128]},
        ],
        "shapes": shapes,
    }


def decoder_fused():
    # Llama-3.1-8B's hidden 4096 / intermediate 14336 / 32 heads of 128, Qwen3's per-head q_norm (128) and
    # Qwen3-30B-A3B's expert width 768: one decode token, a 512-token prompt chunk.
    cases = []
    for rows, what in ((1, "decode"), (512, "prefill 512")):
        cases += [
            {"op": "rms_norm", "name": f"llama-3.1-8b hidden, {what}", "rows": rows, "cols": 4096},
            {"op": "add_rms_norm", "name": f"llama-3.1-8b hidden, {what}", "rows": rows, "cols": 4096},
            {"op": "rotary_embedding", "name": f"llama-3.1-8b q, {what}", "rows": rows, "heads": 32, "cols": 128},
            {"op": "silu_mul", "name": f"llama-3.1-8b mlp, {what}", "rows": rows, "cols": 14336},
        ]
    cases += [
        {"op": "rms_norm", "name": "qwen3 q_norm per head, decode", "rows": 32, "cols": 128},
        {"op": "silu_mul", "name": "qwen3-30b-a3b experts, decode (8 rows)", "rows": 8, "cols": 768},
    ]
    return {
        "suite": "decoder-fused",
        "op": "row_ops",
        "description": "The decoder's small fused ops: rms_norm, add_rms_norm (residual add fused), rotary_embedding "
                       "in half-split style, silu_mul (SwiGLU), at decode and prefill sizes.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": cases,
    }


def backward():
    return {
        "suite": "backward",
        "op": "row_ops",
        "description": "Backward passes: linear_backward (grad_x, grad_weight, grad_bias in one call; the record "
                       "compares grad_weight), softmax_backward over vocabulary rows, constant_pad_nd_backward "
                       "(a crop of grad_out), log_softmax_backward, rms_norm_backward and causal GQA attention "
                       "backward (the record compares grad_x and grad_q).",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": [
            {"op": "linear_backward", "name": "qwen3-0.6b q_proj, 256 tokens", "m": 256, "n": 2048, "k": 1024},
            {"op": "linear_backward", "name": "llama-3.2-1b k_proj, 64 tokens", "m": 64, "n": 512, "k": 2048},
            {"op": "softmax_backward", "name": "llama-3.x vocabulary, 4 rows", "rows": 4, "cols": 128256},
            {"op": "softmax_backward", "name": "attention scores, 512 x 512", "rows": 512, "cols": 512},
            {"op": "constant_pad_nd_backward", "name": "image 1024 x 1024", "rows": 1024, "cols": 1024},
            {"op": "log_softmax_backward", "name": "qwen3 vocabulary (cross-entropy), 4 rows", "rows": 4, "cols": 151936},
            {"op": "rms_norm_backward", "name": "qwen3-0.6b hidden, 256 tokens", "rows": 256, "cols": 1024},
            # Qwen3-0.6B's attention (16 query heads, 8 KV heads of 128), causal: 16 tokens stay under the
            # reference cap (the op has no faster tier), 256 tokens is a training chunk.
            {"op": "scaled_dot_product_attention_backward", "name": "qwen3-0.6b attention, 16 tokens", "rows": 16,
             "heads": 16, "kv_heads": 8, "cols": 128},
            {"op": "scaled_dot_product_attention_backward", "name": "qwen3-0.6b attention, 256 tokens", "rows": 256,
             "heads": 16, "kv_heads": 8, "cols": 128},
        ],
    }


def decode_ops():
    # Qwen3-30B-A3B: hidden 2048, vocabulary 151936, 128 experts (top 8); Qwen3-8B's MLP (12288) unfused;
    # Llama-3.2-1B's vocabulary 128256. One decode token and a 512-token prompt chunk.
    qwen_vocab, llama_vocab, hidden = 151936, 128256, 2048
    cases = [
        {"op": "argmax", "name": "qwen3-30b-a3b greedy sampling", "rows": 1, "cols": qwen_vocab},
        {"op": "argmax", "name": "llama-3.2-1b greedy sampling, 4 sequences", "rows": 4, "cols": llama_vocab},
        {"op": "topk", "name": "qwen3-30b-a3b top-50 sampling", "rows": 1, "cols": qwen_vocab, "k": 50},
        {"op": "topk", "name": "qwen3-30b-a3b router top-8 of 128 experts, prefill 512", "rows": 512, "cols": 128, "k": 8},
        {"op": "log_softmax", "name": "qwen3-30b-a3b vocabulary log-probs", "rows": 1, "cols": qwen_vocab},
        {"op": "log_softmax", "name": "llama-3.2-1b vocabulary log-probs, 4 sequences", "rows": 4, "cols": llama_vocab},
    ]
    for rows, what in ((1, "decode"), (512, "prefill 512")):
        cases += [
            {"op": "add", "name": f"qwen3-30b-a3b residual, {what}", "rows": rows, "cols": hidden},
            {"op": "silu", "name": f"qwen3-8b mlp gate (unfused), {what}", "rows": rows, "cols": 12288},
            {"op": "mul", "name": f"qwen3-8b mlp gate x up (unfused), {what}", "rows": rows, "cols": 12288},
            # Qwen3-Next's gated attention: sigmoid of the output gate, 16 heads of 256.
            {"op": "sigmoid", "name": f"qwen3-next-80b-a3b attention output gate, {what}", "rows": rows,
             "cols": 4096},
        ]
    # Last: the table is made in full (311M elements), above the reference cap, so check never picks these.
    for rows, what in ((1, "decode"), (512, "prefill 512")):
        cases.append({"op": "embedding", "name": f"qwen3-30b-a3b embed_tokens, {what}", "rows": rows, "cols": hidden,
                      "n": qwen_vocab})
    return {
        "suite": "decode-ops",
        "op": "row_ops",
        "description": "The decoder's remaining ops: greedy (argmax) and top-k sampling over the vocabulary, the "
                       "MoE router's top-8, log-probs (log_softmax), the residual add, an unfused SwiGLU (silu, mul), "
                       "a gated attention's sigmoid and the token embedding, at decode and prefill sizes.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": cases,
    }


def wan_decoder_upsamples():
    """The spatial upsamplers' nearest 2x (nn.Upsample on the chunk's frames as a batch) before their conv."""
    rows = []
    for conv in wan_decoder_convs():
        if "upsample conv" in conv["name"]:
            t, ch, h, w = conv["x"]
            stage = conv["name"].split()[2]
            rows.append({"op": "upsample_nearest", "name": f"wan2.1-vae decoder {stage} upsample {h // 2}x{w // 2}",
                         "x": [t, ch, h // 2, w // 2], "size": [h, w]})
    return rows


def diffusion_ops():
    c = WAN_VAE
    h, w = c["latent"]
    dims = [c["base_dim"] * u for u in [c["dim_mult"][-1]] + c["dim_mult"][::-1]]   # 384 384 384 192 96
    # Tiles first: small enough for the float64 oracle (check takes the first rows under its work cap).
    cases = [
        {"op": "channel_rms_norm", "name": "wan2.1-vae decoder stage0 residual norm, 8x8 tile", "x": [1, dims[0], 1, 8, 8]},
        {"op": "upsample_nearest", "name": "wan2.1-vae decoder stage0 upsample, 8x8 tile", "x": [2, dims[0], 8, 8],
         "size": [16, 16]},
        {"op": "channel_rms_norm", "name": f"wan2.1-vae decoder stage0 residual norm {h}x{w}", "x": [1, dims[0], 1, h, w]},
        {"op": "channel_rms_norm", "name": f"wan2.1-vae decoder head norm {8 * h}x{8 * w}, 4 frames",
         "x": [1, dims[-1], 4, 8 * h, 8 * w]},
    ] + wan_decoder_upsamples() + [
        # Image VAEs (AutoencoderKL: block_out_channels [128, 256, 512, 512], 32 groups) decoding 1024x1024.
        {"op": "group_norm", "name": "sdxl-vae decoder mid block, 1024x1024", "x": [1, 512, 128, 128], "groups": 32},
        {"op": "group_norm", "name": "sdxl-vae decoder last up block, 1024x1024", "x": [1, 128, 1024, 1024], "groups": 32},
        # Wan 2.1 T2V 1.3B DiT (dim 1536, ffn 8960): one latent frame of 30x52 patches, and 81 frames at 480x832.
        {"op": "layer_norm", "name": "wan2.1-t2v-1.3b dit norm, one latent frame (1560 tokens)", "rows": 1560, "cols": 1536},
        {"op": "layer_norm", "name": "wan2.1-t2v-1.3b dit norm, 81 frames (32760 tokens)", "rows": 32760, "cols": 1536},
        {"op": "gelu", "name": "wan2.1-t2v-1.3b dit ffn, one latent frame (1560 tokens)", "rows": 1560, "cols": 8960},
    ]
    return {
        "suite": "diffusion-ops",
        "op": "row_ops",
        "description": "The video and image models' own ops: the Wan 2.1 VAE decoder's channel_rms_norm (with the "
                       "SiLU it fuses) and nearest 2x upsampling (480x832 from a 60x104 latent, one latent frame per "
                       "causal step), an image VAE's group_norm, the Wan 2.1 DiT's layer_norm and tanh gelu; first "
                       "two tiles small enough for the float64 oracle.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": cases,
    }


def complex_matmul():
    return {
        "suite": "complex-matmul",
        "op": "row_ops",
        "description": "complex64 matmul (no conjugation): square blocks, a tall-skinny product and a "
                       "matrix-vector product.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["complex64"],
        "cases": [
            {"op": "complex_matmul", "name": "square 256", "m": 256, "n": 256, "k": 256},
            {"op": "complex_matmul", "name": "tall-skinny", "m": 1024, "n": 64, "k": 512},
            {"op": "complex_matmul", "name": "matrix-vector", "m": 1, "n": 1024, "k": 1024},
        ],
    }


def linear_attention():
    # Qwen3.6-35B-A3B (the Qwen3.5-35B-A3B shapes): each Gated DeltaNet layer convolves q, k and v (2 x 16 key heads
    # + 32 value heads, all of 128: 8192 channels, kernel 4), runs the delta rule over 32 value heads with a
    # [128, 128] f32 state each, and norms the output per value head with its silu(z) gate. Decode rows first:
    # small enough for the float64 oracle (check takes the first rows under its work cap).
    cases = []
    for rows, what in ((1, "decode"), (512, "prefill 512")):
        cases += [
            {"op": "causal_conv1d", "name": f"qwen3.6-35b-a3b linear attention conv, {what}", "rows": rows,
             "cols": 8192, "k": 4},
            {"op": "gated_delta_rule", "name": f"qwen3.6-35b-a3b gated delta rule, {what}", "rows": rows,
             "heads": 32, "kv_heads": 16, "cols": 128},
            {"op": "rms_norm_gated", "name": f"qwen3.6-35b-a3b gated output norm, {what}", "rows": 32 * rows,
             "cols": 128},
        ]
    cases.append({"op": "gated_delta_rule_chunked", "name": "qwen3.6-35b-a3b gated delta rule in chunks of 64, "
                  "prefill 512", "rows": 512, "heads": 32, "kv_heads": 16, "cols": 128})
    return {
        "suite": "linear-attention",
        "op": "row_ops",
        "description": "The Gated DeltaNet layers of the 2026 Qwen hybrids (Qwen3.6-35B-A3B shapes): the short causal "
                       "conv with its state, the gated delta rule (in the order each tier picks, and in chunks of 64 "
                       "at the prompt's length to compare), and the gated output norm.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": cases,
    }


# Wan 2.1 VAE (diffusers AutoencoderKLWan): z_dim 16, base_dim 96, dim_mult [1, 2, 4, 4], 2 residual blocks,
# temporal upsampling in the first two decoder stages; the 480 x 832 video's latent is 60 x 104.
WAN_VAE = {"z_dim": 16, "base_dim": 96, "dim_mult": [1, 2, 4, 4], "num_res_blocks": 2,
           "temperal_upsample": [True, True, False], "latent": (60, 104)}


def wan_decoder_convs():
    """The convolutions of one steady-state causal decode step (one latent frame in, 4 frames out): every
    CausalConv3d gets its input already padded (W 1+1, H 1+1, T 2 cached frames + the chunk's own), so the
    conv3d runs with padding 0; the spatial upsamplers' Conv2d (padding 1) sees the chunk's frames as a batch."""
    c = WAN_VAE
    dims = [c["base_dim"] * u for u in [c["dim_mult"][-1]] + c["dim_mult"][::-1]]   # 384 384 384 192 96
    h, w = c["latent"]
    t = 1
    rows = []

    def causal(name, cin, cout, k, t, h, w):
        kt, kh, kw = k
        rows.append({"name": name, "x": [1, cin, t + kt - 1, h + kh - 1, w + kw - 1], "weight": [cout, cin, kt, kh, kw]})

    causal("wan2.1-vae decoder conv_in 16->384", c["z_dim"], dims[0], (3, 3, 3), t, h, w)
    causal(f"wan2.1-vae decoder stage0 residual conv {dims[0]}->{dims[0]}", dims[0], dims[0], (3, 3, 3), t, h, w)
    rows.append({"name": "wan2.1-vae decoder mid attention qkv 1x1", "x": [t, dims[0], h, w], "weight": [3 * dims[0], dims[0], 1, 1]})
    rows.append({"name": "wan2.1-vae decoder mid attention proj 1x1", "x": [t, dims[0], h, w], "weight": [dims[0], dims[0], 1, 1]})
    for i, (cin, cout) in enumerate(zip(dims[:-1], dims[1:])):
        if i > 0:
            cin //= 2
        if cin != cout:
            causal(f"wan2.1-vae decoder stage{i} residual conv {cin}->{cout}", cin, cout, (3, 3, 3), t, h, w)
            causal(f"wan2.1-vae decoder stage{i} shortcut 1x1x1 {cin}->{cout}", cin, cout, (1, 1, 1), t, h, w)
        if i > 0:
            causal(f"wan2.1-vae decoder stage{i} residual conv {cout}->{cout}", cout, cout, (3, 3, 3), t, h, w)
        if i == len(c["dim_mult"]) - 1:
            break
        if c["temperal_upsample"][i]:
            causal(f"wan2.1-vae decoder stage{i} time conv {cout}->{2 * cout}", cout, 2 * cout, (3, 1, 1), t, h, w)
            t *= 2
        h, w = 2 * h, 2 * w
        rows.append({"name": f"wan2.1-vae decoder stage{i} upsample conv {cout}->{cout // 2}", "x": [t, cout, h, w],
                     "weight": [cout // 2, cout, 3, 3], "padding": [1]})
    causal(f"wan2.1-vae decoder head {dims[-1]}->3", dims[-1], 3, (3, 3, 3), t, h, w)
    return rows


def conv():
    # Tiles of the decoder's layers small enough for the float64 oracle (check takes rows under its work cap).
    tiles = [
        {"name": "wan2.1-vae decoder conv_in, 4x4 tile", "x": [1, 16, 3, 6, 6], "weight": [384, 16, 3, 3, 3]},
        {"name": "wan2.1-vae decoder head, 8x8 tile", "x": [1, 96, 3, 10, 10], "weight": [3, 96, 3, 3, 3]},
        {"name": "wan2.1-vae decoder stage3 residual conv, 2x4 tile", "x": [1, 96, 3, 4, 6], "weight": [96, 96, 3, 3, 3]},
        {"name": "wan2.1-vae decoder stage2 upsample conv, 4x4 tile", "x": [1, 32, 4, 4], "weight": [96, 32, 3, 3],
         "padding": [1]},
    ]
    # The encoder's spatial downsamplers (ZeroPad2d (0, 1, 0, 1), then a stride-2 3x3 conv) on a 4-frame chunk.
    encoder = [
        {"name": "wan2.1-vae encoder downsample 96 (480x832)", "x": [4, 96, 481, 833], "weight": [96, 96, 3, 3], "stride": [2]},
        {"name": "wan2.1-vae encoder downsample 192 (240x416)", "x": [4, 192, 241, 417], "weight": [192, 192, 3, 3],
         "stride": [2]},
    ]
    return {
        "suite": "conv",
        "op": "conv",
        "description": "conv2d / conv3d of the Wan 2.1 VAE (z_dim 16, base_dim 96, dim_mult [1, 2, 4, 4]) decoding "
                       "a 480x832 video from its 60x104 latent, one latent frame per causal step (steady state: "
                       "conv3d inputs causally pre-padded, T = chunk frames + 2 cached, padding 0; 1, 2 then 4 "
                       "frames per stage after the temporal upsamplers); first a few tiles of those layers small "
                       "enough for the float64 oracle; last the encoder's stride-2 downsamplers.",
        "generated_by": "scripts/make_suites.py",
        "dtypes": ["bf16", "f32"],
        "cases": tiles + wan_decoder_convs() + encoder,
    }


def dumps(suite):
    """One top-level field per line, and one line per element of a list or table: reviewable diffs."""
    lines = []
    for key, value in suite.items():
        head = f" {json.dumps(key)}: "
        if isinstance(value, list) and value and isinstance(value[0], dict):
            body = ",\n".join("  " + json.dumps(v) for v in value)
            lines.append(head + "[\n" + body + "\n ]")
        elif isinstance(value, dict):
            body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(head + "{\n" + body + "\n }")
        else:
            lines.append(head + json.dumps(value))
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "suites")
    os.makedirs(root, exist_ok=True)
    for suite in (decode_linear(), prefill_linear(), softmax(), pad(), moe(), attention(), fp8(), decoder_fused(),
                  backward(), complex_matmul(), conv(), decode_ops(), diffusion_ops(), linear_attention()):
        path = os.path.join(root, suite["suite"] + ".json")
        with open(path, "w") as f:
            f.write(dumps(suite))
        print(path)


if __name__ == "__main__":
    main()
