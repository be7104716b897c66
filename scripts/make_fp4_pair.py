#!/usr/bin/env python3
"""The peers' copy of an MXFP4 folder, with the same codes and scales: a GGUF for llama.cpp and ik_llama.cpp whose
routed experts are GGML's MXFP4 blocks built from a fourfold (compressed-tensors mxfp4-pack-quantized) folder's
weight_packed / weight_scale, everything else copied from the bf16 GGUF that llama.cpp's converter wrote from the
same bf16 folder the FP4 one was quantized from (../shared/peers/make_hybrid_pair.py).

    fourfold quantize --model HF_BF16 --to mxfp4 --out FP4_DIR
    PYTHONPATH=PEERS/llama.cpp/gguf-py python scripts/make_fp4_pair.py --bf16-gguf BF16.gguf --fp4-dir FP4_DIR --gguf OUT.gguf

GGML's MXFP4 block is the e8m0 code, then 16 bytes whose low nibbles are values 0..15 and high nibbles values
16..31, each value e2m1 (its table holds them doubled, its scale is halved: the same product); compressed-tensors
packs values 2i and 2i + 1 into byte i. So only the nibbles move. NVFP4 has no pair here: ik_llama.cpp has no NVFP4
type, and llama.cpp's NVFP4 block has no place for the per-tensor global scale.
"""
import argparse
import json
import os
import re

import numpy as np
from safetensors.numpy import safe_open


def open_fp4(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    handles = [safe_open(os.path.join(folder, f), "np") for f in files]
    where = {k: h for h in handles for k in h.keys()}
    return lambda name: where[name].get_tensor(name)


def mxfp4_blocks(packed: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """[out, in/2] compressed-tensors pairs and [out, in/32] e8m0 codes -> [out, in/32 * 17] GGML block bytes."""
    out, half = packed.shape
    codes = np.empty((out, half * 2), dtype=np.uint8)
    codes[:, 0::2] = packed & 0xF
    codes[:, 1::2] = packed >> 4
    codes = codes.reshape(out, -1, 32)
    blocks = np.empty((out, codes.shape[1], 17), dtype=np.uint8)
    blocks[:, :, 0] = scales
    blocks[:, :, 1:] = codes[:, :, :16] | (codes[:, :, 16:] << 4)
    return blocks.reshape(out, -1)


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float64)


def check_same_values(gguf, blocks: np.ndarray, packed: np.ndarray, scales: np.ndarray):
    """GGML's own dequantization of the blocks must give compressed-tensors' values of the same codes."""
    ours = np.empty((packed.shape[0], packed.shape[1] * 2))
    ours[:, 0::2] = E2M1[packed & 0xF]
    ours[:, 1::2] = E2M1[packed >> 4]
    ours *= np.repeat(np.ldexp(1.0, scales.astype(np.int64) - 127), 32, axis=1)
    theirs = gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType.MXFP4).astype(np.float64)
    if not np.array_equal(ours, theirs.reshape(ours.shape)):
        raise SystemExit("GGML's MXFP4 blocks do not decode to the folder's values")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bf16-gguf", required=True)
    ap.add_argument("--fp4-dir", required=True)
    ap.add_argument("--gguf", required=True)
    a = ap.parse_args()
    import gguf

    config = json.load(open(os.path.join(a.fp4_dir, "config.json")))
    q = config.get("quantization_config") or {}
    if q.get("format") != "mxfp4-pack-quantized":
        raise SystemExit(f"{a.fp4_dir}: an mxfp4-pack-quantized folder is needed, found {q.get('format')}")
    get = open_fp4(a.fp4_dir)
    reader = gguf.GGUFReader(a.bf16_gguf)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    experts = int(reader.fields[f"{arch}.expert_count"].contents())
    writer = gguf.GGUFWriter(a.gguf, arch)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), value_type, sub_type=sub_type)
    pattern = re.compile(r"blk\.(\d+)\.ffn_(gate|up|down)_exps\.weight")
    prefix = "model.language_model." if "text_config" in config else "model."
    datas = []
    for t in reader.tensors:
        m = pattern.fullmatch(t.name)
        if not m:
            writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
            datas.append(t.data)
            continue
        layer, proj = m.group(1), m.group(2)
        rows = []
        for e in range(experts):
            base = f"{prefix}layers.{layer}.mlp.experts.{e}.{proj}_proj.weight"
            try:
                packed, scales = get(base + "_packed"), get(base + "_scale")
            except KeyError:
                base = base.replace("model.language_model.", "model.")
                packed, scales = get(base + "_packed"), get(base + "_scale")
            rows.append(mxfp4_blocks(packed, scales))
            if e == 0:
                check_same_values(gguf, rows[-1], packed, scales)
        data = np.stack(rows)
        writer.add_tensor_info(t.name, data.shape, data.dtype, data.nbytes, gguf.GGMLQuantizationType.MXFP4)
        datas.append(data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for d in datas:
        writer.write_tensor_data(d)
    writer.close()
    print(f"{a.gguf}: {os.path.getsize(a.gguf) / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
