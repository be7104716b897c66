#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (fuzz/corpus/): a few small valid safetensors files and config.json files,
so that the fuzzer starts from inputs that get past the length field and the JSON parser. Rerun after changing
what the parsers accept; the files are committed."""
import json
import pathlib
import struct

corpus = pathlib.Path(__file__).parent / "corpus"
corpus.mkdir(exist_ok=True)
SIZES = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "BOOL": 1}


def safetensors(name, tensors, metadata=None):
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for tname, dtype, shape in tensors:
        n = SIZES[dtype]
        for s in shape:
            n *= s
        header[tname] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    data = bytes((i * 37) & 0xFF for i in range(offset))
    (corpus / name).write_bytes(struct.pack("<Q", len(text)) + text + data)


safetensors("st_two.safetensors", [("w", "F32", [2, 2]), ("b", "BF16", [3])], {"format": "pt"})
safetensors("st_all_dtypes.safetensors", [(f"t_{d.lower()}", d, [2, 1]) for d in SIZES])
safetensors("st_scalar_empty.safetensors", [("s", "F64", []), ("e", "F16", [0, 3]), ("x", "I32", [1])])
safetensors("st_experts.safetensors",
            [(f"model.layers.0.mlp.experts.{e}.up_proj.weight", "F8_E4M3", [2, 4]) for e in range(3)] +
            [(f"model.layers.0.mlp.experts.{e}.up_proj.weight_scale_inv", "F32", [1, 1]) for e in range(3)])

base = {"model_type": "qwen3_moe", "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1024,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "rope_theta": 1e6, "rope_scaling": None,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "num_experts": 8, "num_experts_per_tok": 2,
        "moe_intermediate_size": 64, "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": [1]}
configs = {
    "config_moe.json": base,
    "config_moe_fp8.json": {**base, "quantization_config": {
        "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128],
        "modules_to_not_convert": ["lm_head", "model.layers.0.mlp.gate"]}},
    "config_llama.json": {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                          "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 1,
                          "vocab_size": 10, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                             "original_max_position_embeddings": 8192}},
    # compressed-tensors FP4: NVFP4 over every Linear but lm_head and the routers, MXFP4 over the experts by regex.
    "config_moe_nvfp4.json": {**base, "quantization_config": {
        "quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                      "weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
        "ignore": ["lm_head", "re:.*mlp\\.gate$"]}},
    "config_moe_mxfp4.json": {**base, "quantization_config": {
        "quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
        "config_groups": {"group_0": {"targets": ["re:.*mlp\\.experts\\.\\d+\\.(gate|up|down)_proj$"],
                                      "weights": {"num_bits": 4, "type": "float", "group_size": 32}}}}},
    "config_qwen2_row.json": {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128,
                              "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 10,
                              "torch_dtype": "float16", "quantization_config": {"quant_method": "fp8"}},
}
# The hybrids: Gated DeltaNet's keys, layer_types, the partial rotary inside rope_parameters, a shared expert; the
# multimodal folder's nested text_config; Qwen3-Next with a full_attention_interval and mlp_only_layers.
hybrid = {"model_type": "qwen3_5_moe_text", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 256, "max_position_embeddings": 512,
          "layer_types": ["linear_attention"] * 3 + ["full_attention"], "linear_conv_kernel_dim": 4,
          "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
          "linear_num_value_heads": 4, "num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
          "shared_expert_intermediate_size": 48,
          "rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                              "mrope_section": [11, 11, 10], "mrope_interleaved": True}}
configs["config_qwen3_5_moe_text.json"] = hybrid
configs["config_qwen3_5_moe.json"] = {"model_type": "qwen3_5_moe", "tie_word_embeddings": False,
                                       "text_config": hybrid, "vision_config": {"depth": 1}}
configs["config_qwen3_next.json"] = {"model_type": "qwen3_next", "hidden_size": 64, "intermediate_size": 96,
                                     "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
                                     "head_dim": 32, "vocab_size": 256, "full_attention_interval": 4,
                                     "partial_rotary_factor": 0.25, "rope_theta": 1e7, "num_experts": 6,
                                     "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                                     "shared_expert_intermediate_size": 48, "mlp_only_layers": [1],
                                     "norm_topk_prob": True}
for name, config in configs.items():
    (corpus / name).write_text(json.dumps(config, indent=1) + "\n")
