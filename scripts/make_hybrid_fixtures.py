#!/usr/bin/env python3
"""Writes tests/data/transformers/<hybrid>/: small random-weight models of the 2026 Qwen hybrids (Gated DeltaNet +
gated attention) saved by Hugging Face transformers itself (save_pretrained), for the four model types fourfold
reads: qwen3_5_moe_text, qwen3_5_moe (the multimodal folder: text_config, model.language_model., a vision tower),
qwen3_5_text and qwen3_next. Each folder also holds what transformers computes, so that the C++ tests check
fourfold against it without Python at test time:

  logits.safetensors   input_ids (int64 [300]: a prompt long enough that the chunked prefill crosses chunks of 64),
                       generated (int64 [32]: transformers' greedy tokens in f32), and the logits of every row, f32
                       [331, V]: the prompt's 300 positions in one forward, then one decode step (with the cache) per
                       generated token but the last:
                         logits      transformers in f32 (eager attention)
                         logits_f64  the same model in float64 (eager experts, and no float32 inside: see
                                     float64_everywhere), rounded to f32
  fixture.json         the PSNR of transformers' own f32 run against its float64 run, and of its bf16 run against
                       both: the yardsticks fourfold's runs are held to

Run with the project's environment (scripts/python-env.sh): build/pyenv/bin/python scripts/make_hybrid_fixtures.py
"""
import contextlib
import json
import math
import pathlib
import shutil
import zlib

import torch
from safetensors.torch import save_file
from transformers import (AutoModelForCausalLM, Qwen3_5Config, Qwen3_5ForCausalLM, Qwen3_5MoeConfig,
                          Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration, Qwen3_5MoeTextConfig,
                          Qwen3_5TextConfig, Qwen3NextConfig, Qwen3NextForCausalLM)

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "transformers"
PROMPT, GENERATE, VOCAB = 300, 32, 256
HYBRID = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
              head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
              linear_num_key_heads=2, linear_num_value_heads=4, max_position_embeddings=512, rms_norm_eps=1e-6,
              bos_token_id=1, eos_token_id=None,
              rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25})
MOE = dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48)


def configs():
    vision = dict(depth=1, hidden_size=32, intermediate_size=32, num_heads=2, out_hidden_size=64, patch_size=8,
                  temporal_patch_size=2, spatial_merge_size=2, num_position_embeddings=16)
    return {
        "qwen3_5_moe_text": (Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig(**HYBRID, **MOE)),
        "qwen3_5_moe": (Qwen3_5MoeForConditionalGeneration,
                        Qwen3_5MoeConfig(text_config=dict(HYBRID, **MOE), vision_config=vision)),
        "qwen3_5_text": (Qwen3_5ForCausalLM, Qwen3_5TextConfig(**HYBRID, intermediate_size=96)),
        # Layer 1 dense (mlp_only_layers), the others sparse: both MLP kinds of Qwen3-Next.
        "qwen3_next": (Qwen3NextForCausalLM, Qwen3NextConfig(**HYBRID, **MOE, intermediate_size=96, norm_topk_prob=True,
                                                             mlp_only_layers=[1])),
    }


def seeded(model, seed):
    """Values away from the identity so that a wrong convention shows: zero-centred norms near 0 (1 + w), the gated
    norm near 1 (w), decays A in [1, 16], a visible conv."""
    for name, p in model.named_parameters():
        g = torch.Generator().manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63))
        if name.endswith("A_log"):
            v = torch.log(torch.empty(p.shape).uniform_(1.0, 16.0, generator=g))
        elif name.endswith("dt_bias"):
            v = torch.randn(p.shape, generator=g) * 0.5
        elif "conv1d" in name:
            v = torch.randn(p.shape, generator=g) * 0.4
        elif name.endswith("linear_attn.norm.weight"):
            v = 1.0 + torch.randn(p.shape, generator=g) * 0.1
        elif "norm" in name:
            v = torch.randn(p.shape, generator=g) * 0.1
        elif "embed_tokens" in name:
            v = torch.randn(p.shape, generator=g)
        else:
            fan_in = p.shape[-1] if p.dim() > 1 else 1
            v = torch.randn(p.shape, generator=g) / math.sqrt(fan_in)
        with torch.no_grad():
            p.copy_(v.to(p.dtype))


def run(model, prompt, generated):
    """Logits [P + n - 1, V]: the prompt in one forward (the chunked form), then each generated token but the last
    as one decode step on the cache (the recurrent form)."""
    with torch.no_grad():
        out = model(prompt[None], use_cache=True)
        rows, cache = [out.logits[0]], out.past_key_values
        for token in generated[:-1]:
            out = model(token.view(1, 1), past_key_values=cache, use_cache=True)
            rows.append(out.logits[0])
            cache = out.past_key_values
    return torch.cat(rows).float()


@contextlib.contextmanager
def float64_everywhere(model):
    """transformers' float64 run with its float32 islands lifted: model.double() still casts to float32 inside the
    gated delta rule, its gates, the RMSNorms and the rope (x.float(), x.to(torch.float32)), which leaves it only
    ~125 dB from a float64 computation. Within this block a conversion of a float64 tensor to float32 keeps it in
    float64, and the rope's inverse frequencies are computed in float64, so the run is transformers' code in
    float64 throughout."""
    to, flt = torch.Tensor.to, torch.Tensor.float

    def keep_to(self, *args, **kwargs):
        if self.dtype == torch.float64:
            args = tuple(torch.float64 if a is torch.float32 else a for a in args)
            if kwargs.get("dtype") is torch.float32:
                kwargs["dtype"] = torch.float64
        return to(self, *args, **kwargs)

    for module in model.modules():
        c = getattr(module, "config", None)
        if hasattr(module, "inv_freq") and getattr(c, "head_dim", None) and hasattr(module, "rope_type"):
            base = c.rope_parameters["rope_theta"]
            dim = int(c.head_dim * c.rope_parameters.get("partial_rotary_factor", 1.0))
            module.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    torch.Tensor.to = keep_to
    torch.Tensor.float = lambda self: self if self.dtype == torch.float64 else flt(self)
    try:
        yield
    finally:
        torch.Tensor.to, torch.Tensor.float = to, flt


def psnr(got, ref):
    ref = ref.double()
    mse = ((got.double() - ref) ** 2).mean().item()
    return float("inf") if mse == 0 else 10 * math.log10(ref.abs().max().item() ** 2 / mse)


def load(folder, dtype):
    kwargs = dict(dtype=dtype, attn_implementation="eager")
    if dtype == torch.float64:
        kwargs["experts_implementation"] = "eager"
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs) if "qwen3_5_moe" != folder.name else None
    if model is None:
        model = Qwen3_5MoeForConditionalGeneration.from_pretrained(folder, **kwargs)
    return model.eval()


def main():
    prompt = torch.randint(2, VOCAB, (PROMPT,), generator=torch.Generator().manual_seed(20261207))
    for name, (cls, config) in configs().items():
        folder = OUT / name
        shutil.rmtree(folder, ignore_errors=True)
        model = cls(config).to(torch.float32)
        seeded(model, 1234)
        model.save_pretrained(folder)
        f32 = load(folder, torch.float32)
        with torch.no_grad():
            generated = f32.generate(prompt[None], max_new_tokens=GENERATE, do_sample=False, min_new_tokens=GENERATE,
                                     pad_token_id=0)[0, PROMPT:]
        logits = run(f32, prompt, generated)
        model64 = load(folder, torch.float64)
        with float64_everywhere(model64):
            logits64 = run(model64, prompt, generated)
        logits16 = run(load(folder, torch.bfloat16), prompt, generated)
        save_file({"input_ids": prompt.to(torch.int64), "generated": generated.to(torch.int64),
                   "logits": logits.contiguous(), "logits_f64": logits64.float().contiguous()},
                  folder / "logits.safetensors")
        stats = {"psnr_f32_vs_f64_db": psnr(logits, logits64), "psnr_bf16_vs_f32_db": psnr(logits16, logits),
                 "psnr_bf16_vs_f64_db": psnr(logits16, logits64)}
        (folder / "fixture.json").write_text(json.dumps(stats, indent=2) + "\n")
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{name}: {size} bytes, logits {tuple(logits.shape)}, {stats}")


if __name__ == "__main__":
    main()
