// compressed-tensors FP4 checkpoints (NVFP4, MXFP4) as the engine binds them. A quantized projection X.weight is
// stored as X.weight_packed (U8 [out, in/2], two e2m1 values a byte), X.weight_scale (float8_e4m3fn, or U8 e8m0
// codes for MXFP4, [out, in/block]) and for NVFP4 X.weight_global_scale (f32 [1], a divisor: the weight counts
// as e2m1 * scale / global). In memory they are X.weight (float4_e2m1fn_x2), X.weight_fp4_scale (float8_e4m3fn or
// float8_e8m0fnu) and X.weight_fp4_global (f32 [1], still the divisor), so that weight_layout's names hold.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/llm/model_config.h"
#include "model/llm/presets.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {

// Whether config.fp4 stores this tensor as FP4: a projection or lm_head that a target matches and no ignore
// entry does (Fp4Quantization says how they match).
bool stored_as_fp4(const ModelConfig& config, const WeightSpec& spec);
std::string fp4_scale_name(const std::string& weight_name);    // "X.weight" -> "X.weight_fp4_scale"
std::string fp4_global_name(const std::string& weight_name);   // "X.weight" -> "X.weight_fp4_global"

// The in-memory names and dtypes from a folder's (file_of follows): FormatError naming `where` and the tensor
// for a packed weight that is not U8, a scale of the wrong dtype, or a zero point (FP4 is symmetric).
// input_global_scale (the activations' scale of W4A4 checkpoints) is dropped: fourfold keeps activations exact.
void read_compressed_tensors_fp4(const ModelConfig& config, TensorMap& weights,
                                 std::map<std::string, std::string>& file_of, const std::string& where);

// The file names and dtypes of one in-memory tensor (the identity for everything but FP4 companions).
std::pair<std::string, Tensor> compressed_tensors_entry(const std::string& name, const Tensor& tensor);

// The multiplier the op takes for a stored divisor: 1 / global, rounded once to f32, one per element.
Tensor fp4_global_multiplier(const Tensor& stored_divisor);

}  // namespace fourfold::model
