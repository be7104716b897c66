// The dtypes a decoder computes in by default follow the checkpoint, as transformers computes it; an explicit
// --dtype / --kv-dtype wins; the KV cache follows the activations unless set.
#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "model/llm/compute_dtypes.h"
#include "model/llm/presets.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

using fourfold::testing::throws_with;

ModelConfig checkpoint(DType dtype, bool fp8 = false) {
  ModelConfig c = preset_config("tiny-moe");
  c.torch_dtype = dtype;
  if (fp8) c.quantization = Fp8Quantization{};
  return c;
}

ModelConfig rowwise_fp8() {
  ModelConfig c = checkpoint(DType::bf16, true);
  c.quantization->weight_block_size.reset();
  return c;
}

TEST(ComputeDtypes, AutoFollowsTheCheckpoint) {
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::bf16), "run").activation, DType::bf16);
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::f32), "run").activation, DType::f32);
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::bf16, true), "run").activation, DType::bf16);
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", rowwise_fp8(), "run").activation, DType::bf16);
  // f16: no f16 activations here; f32 holds every f16 value where bf16 would round the weights.
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::f16), "run").activation, DType::f32);
  // A preset is bf16.
  EXPECT_EQ(checkpoint_activation(preset_config("tiny-qwen3")), DType::bf16);
}

TEST(ComputeDtypes, TheKvCacheFollowsTheActivations) {
  for (const char* act : {"auto", "bf16", "f32", "bfloat16", "float32"})
    for (DType ckpt : {DType::bf16, DType::f32}) {
      const ComputeDtypes d = resolve_compute_dtypes(act, "auto", checkpoint(ckpt), "run");
      EXPECT_EQ(d.kv_cache, d.activation) << act;
      EXPECT_EQ(d.kv_cache_from, "--kv-dtype auto: the activations'");
    }
}

TEST(ComputeDtypes, AnExplicitDtypeWins) {
  const ComputeDtypes f32 = resolve_compute_dtypes("f32", "auto", checkpoint(DType::bf16), "run");
  EXPECT_EQ(f32.activation, DType::f32);
  EXPECT_EQ(f32.activation_from, "--dtype f32");
  EXPECT_EQ(resolve_compute_dtypes("bf16", "auto", checkpoint(DType::f32), "run").activation, DType::bf16);
  EXPECT_EQ(resolve_compute_dtypes("f32", "auto", checkpoint(DType::bf16, true), "run").activation, DType::f32);
  const ComputeDtypes mixed = resolve_compute_dtypes("f32", "bf16", checkpoint(DType::bf16), "run");
  EXPECT_EQ(mixed.activation, DType::f32);
  EXPECT_EQ(mixed.kv_cache, DType::bf16);
  EXPECT_EQ(mixed.kv_cache_from, "--kv-dtype bf16");
}

TEST(ComputeDtypes, SaysWhyAutoChose) {
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::bf16), "run").activation_from,
            "--dtype auto: the model is bfloat16");
  EXPECT_EQ(resolve_compute_dtypes("auto", "auto", checkpoint(DType::bf16, true), "run").activation_from,
            "--dtype auto: the model is FP8, bfloat16 besides");
  EXPECT_NE(resolve_compute_dtypes("auto", "auto", checkpoint(DType::f16), "run").activation_from.find("f32 here"),
            std::string::npos);
}

TEST(ComputeDtypes, RefusesOtherDtypesNamingTheOption) {
  EXPECT_TRUE(throws_with<ValueError>([] { check_dtype_options("f16", "auto", "run"); },
                          {"run", "--dtype", "auto, bf16 or f32", "f16"}));
  EXPECT_TRUE(throws_with<ValueError>([] { check_dtype_options("auto", "fp8", "check"); },
                          {"check", "--kv-dtype", "auto, bf16 or f32", "fp8"}));
  EXPECT_TRUE(throws_with<ValueError>([] { resolve_compute_dtypes("nonsense", "auto", checkpoint(DType::bf16), "run"); },
                          {"--dtype", "nonsense"}));
  check_dtype_options("auto", "auto", "run");
  check_dtype_options("bf16", "f32", "run");
}

}  // namespace
}  // namespace fourfold::model
