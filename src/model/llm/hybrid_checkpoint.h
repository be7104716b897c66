// What the hybrids' checkpoints (Qwen3.5 / 3.6, Qwen3-Next) store differently from one another, brought to one
// layout at load, as transformers' own loading does: the multimodal folders' model.language_model. prefix, the
// tensors the decoder does not use (the vision tower, the multi-token-prediction head), transformers 5's fused
// experts, and Qwen3-Next's fused, head-grouped input projections.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/llm/model_config.h"
#include "model/llm/presets.h"

namespace fourfold::model {

// Renames and splits `weights` (and their file_of entries) in place into weight_layout(config)'s names:
//   model.language_model.X -> model.X (config.wrapper set);
//   model.visual.*, mtp.*, model.mtp.* dropped (one note says how many);
//   mlp.experts.gate_up_proj [E, 2I, H] / down_proj [E, H, I] -> per-expert gate_proj, up_proj, down_proj views
//     (no copy; config.fused_experts set);
//   qwen3_next's linear_attn.in_proj_qkvz and in_proj_ba (rows grouped per key head) -> in_proj_qkv, in_proj_z,
//     in_proj_b, in_proj_a with transformers' row order (one copy each, listed in `copied`).
// A fused tensor of the wrong rank or shape, or an FP8 one, is a FormatError / UnsupportedError naming `where` and
// the tensor. Notes (what was ignored or copied) go to config.notes.
void normalize_hybrid_checkpoint(ModelConfig& config, TensorMap& weights, std::map<std::string, std::string>& file_of,
                                 std::map<std::string, std::string>& copied, const std::string& where);

}  // namespace fourfold::model
