"""fourfold check's end-to-end workload (src/check/end_to_end_workload.cpp) on a Hugging Face folder through
transformers: the same prompt ids (synthetic_prompt), prefill tokens/s, decode tokens/s at each context
(the cache filled once untimed, then `decode_tokens` greedy steps timed again and again, cropping the cache
back), logits of the prompt and its greedy continuation against a float64 (or float32) CPU run of the same
model, and memory around one prompt and its greedy steps."""

import os
import statistics
import time
from dataclasses import dataclass, field

import torch

from .counter_rng import synthetic_prompt
from .device import synchronize
from .error_metrics import compare_to_reference, mean_kl_divergence, top1_agreement_percent
from .memory import measure_memory
from .records import real

DTYPES = {"f32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16, "bfloat16": torch.bfloat16,
          "f16": torch.float16, "float16": torch.float16}
NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


@dataclass
class Options:
    model_dir: str
    seed: int = 0
    prefill_tokens: int = 64
    decode_contexts: list = field(default_factory=lambda: [512, 2048])
    decode_tokens: int = 8
    repeats: int = 3
    correctness_prompt: int = 16
    correctness_steps: int = 32
    activation: str = "auto"        # auto: the checkpoint's dtype, as transformers loads it (fourfold's --dtype auto)
    reference: str = "float64"      # the oracle's dtype on the CPU: float64, or float32 for a model too big


@dataclass
class Result:
    shape_line: str
    config_hash: str
    dtypes: list
    throughput: dict
    logits: dict
    memory: dict
    skips: list


def config_hash(model_dir):
    """fourfold's file_hash of config.json: FNV-1a 64 over its raw bytes."""
    h = 1469598103934665603
    with open(os.path.join(model_dir, "config.json"), "rb") as f:
        for byte in f.read():
            h = ((h ^ byte) * 1099511628211) & ((1 << 64) - 1)
    return f"fnv1a64:{h:016x}"


def description(model_dir, config):
    """ModelSource::description() for a folder."""
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    shape = (f"{config.model_type}, {config.num_hidden_layers} layers, hidden {config.hidden_size}, {heads} q / "
             f"{getattr(config, 'num_key_value_heads', None) or heads} kv heads of {head_dim}, vocab {config.vocab_size}")
    experts = getattr(config, "num_experts", 0) or 0
    if experts > 0:
        shape += (f", {experts} experts / {config.num_experts_per_tok} active of width "
                  f"{config.moe_intermediate_size}")
    return f"model {model_dir} ({shape})"


def activation_of(option, config):
    """The activation dtype: the option's, or for "auto" the checkpoint's (config.json's dtype, 4.x torch_dtype)."""
    if option != "auto":
        return DTYPES[option]
    stated = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if isinstance(stated, str):
        stated = DTYPES.get(stated, getattr(torch, stated, None))
    return stated if stated in NAMES else torch.float32


def _load(model_dir, dtype, device, oracle=False):
    from transformers import AutoModelForCausalLM
    # The oracle runs transformers' plain per-expert loop: grouped_mm has no float64 kernel.
    extra = {"experts_implementation": "eager"} if oracle else {}
    try:
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype, **extra)
    except TypeError:   # a transformers without experts implementations
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
    return model.to(device).eval()


def _step(model, token, cache, device):
    ids = torch.tensor([[token]], device=device)
    out = model(input_ids=ids, past_key_values=cache, use_cache=True)
    return out.logits[0, -1], out.past_key_values


def _teacher_forced(model, prompt, continuation, device):
    """Logits of every prompt position, then one decode step per continuation token (the cache path)."""
    from transformers import DynamicCache
    cache = DynamicCache()
    out = model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
    rows = [out.logits[0].float().cpu()]
    cache = out.past_key_values
    for t in continuation:
        logits, cache = _step(model, t, cache, device)
        rows.append(logits.float().cpu().unsqueeze(0))
    return torch.cat(rows)


def _greedy(model, prompt, steps, device):
    from transformers import DynamicCache
    cache = DynamicCache()
    out = model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
    cache, token, tokens = out.past_key_values, int(out.logits[0, -1].argmax()), []
    for _ in range(steps):
        tokens.append(token)
        logits, cache = _step(model, token, cache, device)
        token = int(logits.argmax())
    return tokens


def _row(phase, context, generated, samples):
    return {"phase": phase, "context_tokens": context, "generated_tokens": generated,
            "median_tokens_per_s": real(statistics.median(samples)), "min_tokens_per_s": real(min(samples)),
            "max_tokens_per_s": real(max(samples)), "samples_tokens_per_s": [real(s) for s in samples]}


def run(o, device, compiled, say, kernels="torch"):
    from transformers import AutoConfig, DynamicCache
    config = AutoConfig.from_pretrained(o.model_dir)
    act = activation_of(o.activation, config)
    contexts = sorted(o.decode_contexts)
    longest = max([contexts[-1] if contexts else 0, o.prefill_tokens, o.correctness_prompt + o.correctness_steps])
    # transformers keeps the KV cache in the model's dtype: the activations'. The line is fourfold's, dtypes included,
    # so that compare refuses records of another mode.
    line = (f"end-to-end: {description(o.model_dir, config)}; activations {NAMES[act]}, kv cache {NAMES[act]}; "
            f"prefill {o.prefill_tokens} tokens; decode "
            f"{o.decode_tokens} steps at contexts {', '.join(str(c) for c in o.decode_contexts)}; {o.repeats} repeats; "
            f"logits over {o.correctness_prompt} + {o.correctness_steps} greedy steps")
    prompt = synthetic_prompt(o.correctness_prompt, config.vocab_size, o.seed)
    with torch.inference_mode():
        say(f"end-to-end: {o.reference} CPU reference logits (prompt and greedy steps)")
        ref_model = _load(o.model_dir, getattr(torch, o.reference), "cpu", oracle=True)
        continuation = _greedy(ref_model, prompt, o.correctness_steps, "cpu")
        reference = _teacher_forced(ref_model, prompt, continuation, "cpu").to(torch.float64)
        del ref_model
        say(f"end-to-end: loading the model in {NAMES[act]} on {device}")
        model = _load(o.model_dir, act, device)
        if kernels == "fourfold":
            from .rewire import optimize
            optimize(model)
            say(f"end-to-end: {len(model.fourfold_optimized)} modules on torch.ops.fourfold")
        if compiled:
            model.forward = torch.compile(model.forward, dynamic=True)
        got = _teacher_forced(model, prompt, continuation, device)
        stats = compare_to_reference(got, reference)
        logits_row = {"name": f"logits, {NAMES[act]} activations", "psnr_db": real(stats.psnr_db),
                  "top1_agreement_percent": real(top1_agreement_percent(reference, got)),
                  "mean_kl": real(mean_kl_divergence(reference, got))}

        long_prompt = synthetic_prompt(longest, config.vocab_size, o.seed + 1)
        ids = torch.tensor([long_prompt], device=device)
        model(input_ids=ids[:, :min(16, longest)], past_key_values=DynamicCache(), use_cache=True)   # warm-up
        prefill = []
        for r in range(o.repeats):
            say(f"end-to-end: prefill of {o.prefill_tokens} tokens, repeat {r + 1}/{o.repeats}")
            synchronize(device)
            start = time.perf_counter()
            model(input_ids=ids[:, :o.prefill_tokens], past_key_values=DynamicCache(), use_cache=True)
            synchronize(device)
            prefill.append(o.prefill_tokens / (time.perf_counter() - start))
        rows = [_row("prefill", o.prefill_tokens, 0, prefill)]
        cache, have = DynamicCache(), 0
        for context in contexts:
            say(f"end-to-end: filling the cache to {context} positions")
            out = model(input_ids=ids[:, have:context], past_key_values=cache, use_cache=True)
            cache, have = out.past_key_values, context
            samples = []
            for r in range(o.repeats):
                say(f"end-to-end: decode at context {context}, repeat {r + 1}/{o.repeats}")
                token = long_prompt[context - 1]
                synchronize(device)
                start = time.perf_counter()
                for _ in range(o.decode_tokens):
                    step_logits, cache = _step(model, token, cache, device)
                    token = int(step_logits.argmax())
                samples.append(o.decode_tokens / (time.perf_counter() - start))
                cache.crop(context - cache.get_seq_length())   # negative: drop the steps just taken
            rows.append(_row("decode", context, o.decode_tokens, samples))
        rows = [rows[0]] + sorted(rows[1:], key=lambda r: r["context_tokens"])
        say("end-to-end: memory")
        memory = measure_memory(lambda: _greedy(model, prompt, o.correctness_steps, device), device)
    # transformers keeps the KV cache in the model's dtype: the activation dtype is the only one.
    return Result(line, config_hash(o.model_dir), [NAMES[act]],
                  {"warmup_runs": 1, "rows": rows}, logits_row, memory, [])
