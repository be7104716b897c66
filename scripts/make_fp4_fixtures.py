#!/usr/bin/env python3
"""Writes tests/data/transformers/qwen3_moe_nvfp4 and qwen3_moe_mxfp4: the qwen3_moe fixture (written by transformers,
scripts/make_transformers_fixtures.py) quantized to FP4 in compressed-tensors' layout by this script, independently
of fourfold, with the logits transformers computes from the dequantized weights, so that the C++ tests check
fourfold's FP4 path against a folder it did not write and a run it did not make.

    build/pyenv/bin/python scripts/make_fp4_fixtures.py

Every Linear module but lm_head and the routers is quantized (attention and experts), as compressed-tensors'
nvfp4-pack-quantized / mxfp4-pack-quantized formats store them:
  X.weight_packed        uint8 [out, in/2], two e2m1 codes a byte, the even column in the low nibble
  X.weight_scale         NVFP4: float8_e4m3fn [out, in/16], e4m3(amax_block / 6 * global)
                         MXFP4: uint8 [out, in/32], e8m0 codes of 2^(floor(log2 amax_block) - 2)
  X.weight_global_scale  NVFP4 only: float32 [1], 448 * 6 / amax of the tensor (a divisor)
and dequantized as compressed-tensors does: e2m1 * (scale / global) in float32 (MXFP4: e2m1 * 2^(code - 127)).
logits.safetensors holds input_ids, logits (float32 [T, V]: transformers' float32 forward on the dequantized
weights, eager attention) and logits_f64 (the same model in float64).
"""
import json
import pathlib
import shutil
import tempfile

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "transformers"
SOURCE = DATA / "qwen3_moe"
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)


def e2m1_codes(x: torch.Tensor) -> torch.Tensor:
    """Round to nearest e2m1 (ties to the even code), saturating at 6."""
    a = x.abs().clamp(max=6.0)
    mids = (E2M1[1:] + E2M1[:-1]) / 2
    code = torch.bucketize(a, mids, right=False)          # a <= mid goes below
    tie = torch.isin(a, mids)
    below = torch.bucketize(a, mids, right=False)
    code = torch.where(tie & (below % 2 == 1), below + 1, code)   # a tie goes to the even code
    return (code | (torch.signbit(x).to(torch.int64) << 3)).to(torch.uint8)


def pack(codes: torch.Tensor) -> torch.Tensor:
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).contiguous()


def unpack(packed: torch.Tensor) -> torch.Tensor:
    low, high = packed & 0xF, packed >> 4
    codes = torch.stack((low, high), dim=-1).reshape(packed.shape[0], -1).to(torch.int64)
    values = E2M1[codes & 7]
    return torch.where((codes & 8) != 0, -values, values)


def quantize(w: torch.Tensor, nv: bool):
    w = w.to(torch.float64)
    out, inn = w.shape
    block = 16 if nv else 32
    blocks = w.reshape(out, inn // block, block)
    amax = blocks.abs().amax(dim=-1)
    if nv:
        g = torch.tensor([448.0 * 6.0 / w.abs().max().item()], dtype=torch.float32)
        scale = (amax / 6.0 * g.double()).to(torch.float32).to(torch.float8_e4m3fn)
        unit = scale.to(torch.float32) / g                              # compressed-tensors' scale / global_scale
        tensors = {"weight_scale": scale, "weight_global_scale": g}
    else:
        exponent = torch.floor(torch.log2(amax.clamp(min=2.0 ** -126))) - 2
        code = (exponent + 127).clamp(0, 254).to(torch.uint8)
        unit = torch.pow(2.0, code.to(torch.float64) - 127).to(torch.float32)
        tensors = {"weight_scale": code}
    codes = e2m1_codes(blocks / unit.to(torch.float64).unsqueeze(-1)).reshape(out, inn)
    tensors["weight_packed"] = pack(codes)
    dequantized = (unpack(tensors["weight_packed"]).reshape(out, inn // block, block) *
                   unit.to(torch.float64).unsqueeze(-1)).reshape(out, inn)
    return tensors, dequantized


def quantized(name: str) -> bool:
    return name.endswith("_proj.weight")   # attention and experts; not lm_head, embeddings, norms or mlp.gate


def logits_of(folder: pathlib.Path, dtype) -> torch.Tensor:
    kwargs = dict(dtype=dtype, attn_implementation="eager")
    if dtype == torch.float64:
        kwargs["experts_implementation"] = "eager"   # the grouped_mm kernels take no float64
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    model.eval()
    ids = load_file(SOURCE / "logits.safetensors")["input_ids"]
    with torch.no_grad():
        return model(ids.unsqueeze(0)).logits[0]


def main():
    weights = load_file(SOURCE / "model.safetensors")
    config = json.loads((SOURCE / "config.json").read_text())
    for fmt, nv in (("nvfp4", True), ("mxfp4", False)):
        folder = DATA / f"qwen3_moe_{fmt}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        stored, dequantized = {}, {}
        for name, w in weights.items():
            if not quantized(name):
                stored[name] = w
                dequantized[name] = w.to(torch.float64)
                continue
            tensors, deq = quantize(w, nv)
            base = name[: -len("weight")]
            for suffix, t in tensors.items():
                stored[base + suffix] = t
            dequantized[name] = deq
        q = dict(config)
        q["quantization_config"] = {
            "quant_method": "compressed-tensors", "format": f"{fmt}-pack-quantized",
            "quantization_status": "compressed",
            "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                          "weights": {"num_bits": 4, "type": "float", "symmetric": True,
                                                      "dynamic": False, "group_size": 16 if nv else 32,
                                                      "strategy": "tensor_group" if nv else "group"}}},
            "ignore": ["lm_head", "re:.*mlp\\.gate$"]}
        (folder / "config.json").write_text(json.dumps(q, indent=2) + "\n")
        shutil.copy(SOURCE / "generation_config.json", folder / "generation_config.json")
        save_file(stored, folder / "model.safetensors", metadata={"format": "pt"})
        logits = {}
        with tempfile.TemporaryDirectory() as tmp:
            twin = pathlib.Path(tmp)
            (twin / "config.json").write_text(json.dumps(config))
            for dtype, key in ((torch.float32, "logits"), (torch.float64, "logits_f64")):
                save_file({k: v.to(dtype).contiguous() for k, v in dequantized.items()}, twin / "model.safetensors",
                          metadata={"format": "pt"})
                logits[key] = logits_of(twin, dtype).to(dtype).contiguous()
        ids = load_file(SOURCE / "logits.safetensors")["input_ids"]
        save_file({"input_ids": ids, **logits}, folder / "logits.safetensors")
        print(f"{folder.name}: {sum(f.stat().st_size for f in folder.iterdir())} bytes")


if __name__ == "__main__":
    main()
