#!/usr/bin/env python3
"""Writes tests/data/transformers/: small random-weight models saved by Hugging Face transformers itself
(save_pretrained), each with the logits transformers computes for fixed token ids, so that the C++ tests check
fourfold against folders it did not write, without Python at test time.

Run with a virtual environment outside the build that has the peers installed:
    python3 -m venv ~/ffpy && ~/ffpy/bin/pip install torch==2.15.0 transformers==5.23.0 safetensors numpy
    ~/ffpy/bin/python scripts/make_transformers_fixtures.py

Each folder DIR holds what save_pretrained wrote (config.json in transformers 5's spelling, generation_config.json,
model.safetensors, f32) plus:
  config.v4.json       the same config in transformers 4.x's spelling (rope_theta + rope_scaling, num_experts,
                       torch_dtype); the script checks that transformers gives the same logits from it
  logits.safetensors   input_ids (int64 [T]) and logits (float32 [T, V]): transformers' forward, eager attention
The MoE model has 12 experts, so that transformers' name order (experts 0, 1, 10, 11, 2, ...) is not the numeric one.
"""
import json
import pathlib
import shutil
import tempfile

import torch
from safetensors.torch import save_file
from transformers import (AutoModelForCausalLM, LlamaConfig, Qwen2Config, Qwen3Config, Qwen3MoeConfig)

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "transformers"
INPUT_IDS = [1, 17, 42, 99, 5, 200, 7, 31, 64, 128, 3, 250, 11, 77]
COMMON = dict(vocab_size=256, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-6, bos_token_id=1, eos_token_id=3)

MODELS = {
    "qwen3_moe": Qwen3MoeConfig(**COMMON, head_dim=16, num_experts=12, num_experts_per_tok=2,
                                moe_intermediate_size=32, norm_topk_prob=True,
                                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
    "qwen3": Qwen3Config(**COMMON, head_dim=16, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
    "llama3": LlamaConfig(**COMMON, tie_word_embeddings=True,
                          rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                           "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                           "original_max_position_embeddings": 64}),
    "qwen2": Qwen2Config(**COMMON, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}),
}


def to_v4(config: dict) -> dict:
    """transformers 4.x's spelling of a transformers 5 config.json."""
    out = dict(config)
    rope = dict(out.pop("rope_parameters"))
    out["rope_theta"] = rope.pop("rope_theta")
    rope_type = rope.get("rope_type", "default")
    out["rope_scaling"] = None if rope_type == "default" else rope
    if "num_local_experts" in out:
        out["num_experts"] = out.pop("num_local_experts")
    out["torch_dtype"] = out.pop("dtype")
    out["transformers_version"] = "4.51.3"
    return out


def logits_of(folder: pathlib.Path) -> torch.Tensor:
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        return model(torch.tensor([INPUT_IDS])).logits[0].float()


def main():
    torch.manual_seed(20261201)
    for name, config in MODELS.items():
        folder = OUT / name
        shutil.rmtree(folder, ignore_errors=True)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        with torch.no_grad():   # norms away from 1 so that a missed or misread norm shows in the logits
            for p_name, p in model.named_parameters():
                if p_name.endswith("norm.weight"):
                    p.copy_(1.0 + 0.2 * torch.randn_like(p))
                elif p_name.endswith(".bias"):
                    p.copy_(0.1 * torch.randn_like(p))
        model.save_pretrained(folder)
        logits = logits_of(folder)
        saved = json.loads((folder / "config.json").read_text())
        v4 = to_v4(saved)
        (folder / "config.v4.json").write_text(json.dumps(v4, indent=2, sort_keys=True) + "\n")
        with tempfile.TemporaryDirectory() as tmp:
            twin = pathlib.Path(tmp)
            shutil.copy(folder / "model.safetensors", twin / "model.safetensors")
            (twin / "config.json").write_text(json.dumps(v4))
            twin_logits = logits_of(twin)
        assert torch.equal(logits, twin_logits), f"{name}: transformers reads the 4.x spelling differently"
        save_file({"input_ids": torch.tensor(INPUT_IDS, dtype=torch.int64), "logits": logits.contiguous()},
                  folder / "logits.safetensors")
        print(f"{name}: {sum(f.stat().st_size for f in folder.iterdir())} bytes, logits {tuple(logits.shape)}")


if __name__ == "__main__":
    main()
