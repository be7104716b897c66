// The shipped suite files load with the promised counts and real model figures; bad files and unknown names
// give errors that name the file and the field; MoE routings add up.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "check/op_cases/op_case.h"
#include "check/suites.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::throws_with;

std::string dir() { return default_suites_dir(); }

TEST(Suites, ShippedSuitesAreAllThere) {
  const std::vector<std::string> names = list_suites(dir());
  for (const char* expected : {"attention", "backward", "complex-matmul", "conv", "decode-linear", "decode-ops", "decoder-fused",
                               "diffusion-ops", "fp8", "moe", "pad", "prefill-linear", "softmax"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const std::string& name : names) {
    const Suite s = load_suite(name, dir());
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.description.empty()) << name;
    EXPECT_FALSE(s.cases.empty()) << name;
    for (const BenchCase& c : s.cases) {
      EXPECT_EQ(c.suite, name);
      // The moe suite's "experts" rows time moe_experts; a row_ops suite's rows each name their op; every
      // other row is its suite's op.
      if (s.op == "row_ops") {
        EXPECT_EQ(c.op, std::get<RowOpCase>(c.params).cases->op) << name;
      } else if (s.op == "conv") {
        EXPECT_EQ(c.op, std::get<ConvCase>(c.params).x.size() == 4 ? "conv2d" : "conv3d") << name;
      } else {
        EXPECT_TRUE(c.op == s.op || (name == "moe" && c.op == "moe_experts")) << name << " " << c.op;
      }
      EXPECT_FALSE(c.name.empty());
      EXPECT_FALSE(c.shape.empty());
    }
  }
}

TEST(Suites, DecodeLinearHas96DistinctShapesFromRealConfigs) {
  const Suite s = load_suite("decode-linear", dir());
  EXPECT_EQ(s.op, "linear");
  EXPECT_EQ(s.entries, 96);
  // M = 1, 4; bias off, on; bf16; plus M = 1 weight-only: bf16 weights under f32 x, fp8, nvfp4 and mxfp4 under
  // bf16 x.
  EXPECT_EQ(s.cases.size(), 96u * 2 * 2 + 96u * 4);
  int64_t bf16_under_f32 = 0, fp8_blocks = 0, nvfp4 = 0, mxfp4 = 0;
  for (const BenchCase& c : s.cases) {
    const auto& l = std::get<LinearCase>(c.params);
    if (!l.weight_dtype) continue;
    EXPECT_EQ(l.m, 1);
    EXPECT_FALSE(l.bias);
    bf16_under_f32 += c.dtype == DType::f32 && l.weight_dtype == DType::bf16;
    fp8_blocks += c.dtype == DType::bf16 && l.weight_dtype == DType::f8_e4m3fn && l.recipe == Fp8Recipe::block_128x128;
    nvfp4 += c.dtype == DType::bf16 && l.weight_dtype == DType::f4_e2m1fn_x2 && l.recipe == Fp8Recipe::nvfp4;
    mxfp4 += c.dtype == DType::bf16 && l.weight_dtype == DType::f4_e2m1fn_x2 && l.recipe == Fp8Recipe::mxfp4;
  }
  EXPECT_EQ(bf16_under_f32, 96);
  EXPECT_EQ(fp8_blocks, 96);
  EXPECT_EQ(nvfp4, 96);
  EXPECT_EQ(mxfp4, 96);
  std::set<std::pair<int64_t, int64_t>> shapes;
  std::set<int64_t> vocabularies;
  auto find = [&](const std::string& name) -> const LinearCase* {
    for (const BenchCase& c : s.cases)
      if (c.name == name) return &std::get<LinearCase>(c.params);
    return nullptr;
  };
  for (const BenchCase& c : s.cases) {
    const auto& l = std::get<LinearCase>(c.params);
    if (!l.weight_dtype) {
      EXPECT_EQ(c.dtype, DType::bf16);
    }
    EXPECT_TRUE(l.m == 1 || l.m == 4);
    shapes.insert({l.n, l.k});
    if (c.name.find("lm_head") != std::string::npos) vocabularies.insert(l.n);
  }
  EXPECT_EQ(shapes.size(), 96u);
  const std::set<int64_t> expected_vocab = {32000, 32768, 128256, 151936, 201088, 256000, 262144, 262208};
  EXPECT_EQ(vocabularies, expected_vocab);
  // A few figures checked by hand against the models' config.json.
  const LinearCase* q8b = find("llama-3.1-8b q_proj");
  ASSERT_NE(q8b, nullptr);
  EXPECT_EQ(q8b->n, 4096);
  EXPECT_EQ(q8b->k, 4096);
  const LinearCase* kv8b = find("llama-3.1-8b k_proj");
  ASSERT_NE(kv8b, nullptr);
  EXPECT_EQ(kv8b->n, 8 * 128);
  const LinearCase* down70 = find("llama-3.1-70b down_proj");
  ASSERT_NE(down70, nullptr);
  EXPECT_EQ(down70->n, 8192);
  EXPECT_EQ(down70->k, 28672);
  const LinearCase* expert = find("qwen3-30b-a3b expert down_proj");
  ASSERT_NE(expert, nullptr);
  EXPECT_EQ(expert->n, 2048);
  EXPECT_EQ(expert->k, 768);
  const LinearCase* router = find("qwen3-235b-a22b router");
  ASSERT_NE(router, nullptr);
  EXPECT_EQ(router->n, 128);
  EXPECT_EQ(router->k, 4096);
  const LinearCase* qwen32_q = find("qwen3-32b q_proj");
  ASSERT_NE(qwen32_q, nullptr);
  EXPECT_EQ(qwen32_q->n, 64 * 128);
  EXPECT_EQ(qwen32_q->k, 5120);
  const LinearCase* oss = find("gpt-oss-20b expert gate_up_proj (fused)");
  ASSERT_NE(oss, nullptr);
  EXPECT_EQ(oss->n, 5760);
  EXPECT_EQ(oss->k, 2880);
  const LinearCase* gemma = find("gemma-3-1b lm_head");
  ASSERT_NE(gemma, nullptr);
  EXPECT_EQ(gemma->n, 262144);
  EXPECT_EQ(gemma->k, 1152);
}

TEST(Suites, SoftmaxPadMoeAttentionFp8Counts) {
  const Suite softmax = load_suite("softmax", dir());
  EXPECT_EQ(softmax.cases.size(), 3u * 4 * 2);   // rows 1, 4, 8 x 4 vocabularies x f32, bf16
  std::set<int64_t> vocab;
  for (const BenchCase& c : softmax.cases) vocab.insert(std::get<SoftmaxCase>(c.params).cols);
  EXPECT_EQ(vocab, (std::set<int64_t>{32000, 128256, 151936, 262144}));

  const Suite pad = load_suite("pad", dir());
  EXPECT_EQ(pad.entries, 16);
  EXPECT_EQ(pad.cases.size(), 32u);
  int five_d = 0, strided = 0, two_d = 0, four_d = 0;
  bool long_inner = false;
  for (const BenchCase& c : pad.cases) {
    const auto& p = std::get<PadCase>(c.params);
    if (p.shape.size() == 5) {
      ++five_d;
      EXPECT_EQ(p.pads, (std::vector<int64_t>{1, 1, 1, 1, 2, 0}));
    }
    two_d += p.shape.size() == 2;
    four_d += p.shape.size() == 4;
    strided += p.layout != PadLayout::contiguous;
    long_inner |= p.shape.back() >= 65536 || p.shape.back() * p.shape[p.shape.size() - 2] >= 65536;
  }
  EXPECT_GT(five_d, 0);
  EXPECT_GT(two_d, 0);
  EXPECT_GT(four_d, 0);
  EXPECT_GT(strided, 0);
  EXPECT_TRUE(long_inner);

  const Suite moe = load_suite("moe", dir());
  EXPECT_EQ(moe.op, "grouped_mm");
  // gate_up, down (grouped_mm), experts (moe_experts) x 1, 16, 128, 512 tokens x even, skewed, empty
  EXPECT_EQ(moe.cases.size(), 3u * 4 * 3);
  for (const BenchCase& c : moe.cases) {
    const auto& m = std::get<MoeCase>(c.params);
    EXPECT_EQ(m.experts, 128);
    EXPECT_EQ(m.top_k, 8);
    if (m.projection == "experts") {
      EXPECT_EQ(c.op, "moe_experts");
      EXPECT_TRUE(m.n == 768 && m.k == 2048) << c.shape;
    } else {
      EXPECT_EQ(c.op, "grouped_mm");
      EXPECT_TRUE((m.n == 1536 && m.k == 2048) || (m.n == 2048 && m.k == 768)) << c.shape;
    }
  }

  const Suite attention = load_suite("attention", dir());
  EXPECT_EQ(attention.cases.size(), 5u * 2);
  std::set<int64_t> contexts;
  for (const BenchCase& c : attention.cases) {
    const auto& a = std::get<AttentionCase>(c.params);
    EXPECT_EQ(a.q_heads, 32);
    EXPECT_EQ(a.kv_heads, 4);
    EXPECT_EQ(a.head_dim, 128);
    if (a.q_len == 1) {
      contexts.insert(a.kv_len);
      EXPECT_EQ(a.causal, CausalMode::none);
    } else {
      EXPECT_EQ(a.q_len, 512);
      EXPECT_EQ(a.causal, CausalMode::top_left);
    }
  }
  EXPECT_EQ(contexts, (std::set<int64_t>{512, 2048, 8192, 32768}));

  const Suite fp8 = load_suite("fp8", dir());
  EXPECT_EQ(fp8.op, "scaled_mm");
  std::set<Fp8Recipe> recipes;
  for (const BenchCase& c : fp8.cases) {
    EXPECT_EQ(c.dtype, DType::f8_e4m3fn);
    recipes.insert(std::get<Fp8LinearCase>(c.params).recipe);
  }
  EXPECT_EQ(recipes.size(), 3u);
  // default M = 1, 4; expert shapes M = 1, 4, 32; the prefill shape M = 128, 512
  EXPECT_EQ(fp8.cases.size(), 13u * 2 * 3 + 7u * 3 * 3 + 1u * 2 * 3);
}

TEST(Suites, UnknownSuiteNameListsTheKnownOnes) {
  EXPECT_TRUE(throws_with<ValueError>([] { load_suite("decode-linaer", dir()); },
                                      {"'suite'", "decode-linear", "softmax", "'decode-linaer'"}));
  EXPECT_TRUE(throws_with<ValueError>([] { list_suites("/nonexistent/suites"); }, {"/nonexistent/suites"}));
}

TEST(Suites, RowOpSuitesNameEachCasesOp) {
  const Suite s = parse_suite(R"({"suite": "s", "op": "row_ops", "dtypes": ["bf16", "f32"], "cases": [
      {"op": "add_rms_norm", "name": "h", "rows": 2, "cols": 64},
      {"op": "rotary_embedding", "name": "q", "rows": 1, "heads": 4, "cols": 32},
      {"op": "linear_backward", "name": "p", "m": 3, "n": 5, "k": 7},
      {"op": "complex_matmul", "name": "c", "m": 1, "n": 8, "k": 8}]})", "s.json");
  ASSERT_EQ(s.cases.size(), 8u);
  EXPECT_EQ(s.entries, 4);
  EXPECT_EQ(s.cases[0].op, "rms_norm");            // add_rms_norm dispatches as rms_norm
  EXPECT_EQ(s.cases[2].op, "rotary_embedding");
  EXPECT_EQ(s.cases[2].shape, "x[1,4,32] cos,sin[1,1,16]");
  EXPECT_EQ(s.cases[4].op, "linear_backward");
  EXPECT_EQ(std::get<RowOpCase>(s.cases[4].params).k, 7);
  EXPECT_EQ(s.cases[6].op, "matmul");
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "row_ops", "dtypes": ["f32"], "cases": [{"op": "conv", "name": "x", "rows": 1, "cols": 1}]})", "b.json"); },
      {"b.json", "field 'cases[0].op'", "rms_norm"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "row_ops", "dtypes": ["f32"], "cases": [{"op": "linear_backward", "name": "x", "m": 1, "n": 1}]})", "b.json"); },
      {"b.json", "field 'cases[0].k'", "missing"}));
}

TEST(Suites, RowOpsTakeTheFieldsTheirCallNeeds) {
  const Suite s = parse_suite(R"({"suite": "s", "op": "row_ops", "dtypes": ["bf16"], "cases": [
      {"op": "channel_rms_norm", "name": "n", "x": [1, 8, 1, 4, 6]},
      {"op": "group_norm", "name": "g", "x": [1, 8, 4, 4], "groups": 4},
      {"op": "upsample_nearest", "name": "u", "x": [2, 3, 4, 5], "size": [8, 10]},
      {"op": "embedding", "name": "e", "rows": 3, "cols": 16, "n": 100},
      {"op": "topk", "name": "t", "rows": 2, "cols": 100, "k": 8},
      {"op": "scaled_dot_product_attention_backward", "name": "a", "rows": 5, "cols": 16, "heads": 4, "kv_heads": 2}]})",
                              "s.json");
  ASSERT_EQ(s.cases.size(), 6u);
  EXPECT_EQ(s.cases[0].shape, "x[1,8,1,4,6] gamma[8] +silu");
  EXPECT_EQ(s.cases[1].shape, "x[1,8,4,4] groups 4");
  EXPECT_EQ(s.cases[2].shape, "x[2,3,4,5] -> [8,10]");
  EXPECT_EQ(s.cases[3].shape, "w[100,16] idx[3]");
  EXPECT_EQ(s.cases[4].shape, "x[2,100] k 8");
  EXPECT_EQ(s.cases[5].shape, "q[1,4,5,16] kv[1,2,5,16] causal");
  for (const BenchCase& c : s.cases) EXPECT_EQ(c.op, std::get<RowOpCase>(c.params).cases->name);
  const auto refused = [](const std::string& a_case, std::initializer_list<std::string> parts) {
    return throws_with<FormatError>(
        [&] { parse_suite(R"({"suite": "s", "op": "row_ops", "dtypes": ["f32"], "cases": [)" + a_case + "]}", "b.json"); },
        parts);
  };
  EXPECT_TRUE(refused(R"({"op": "group_norm", "name": "g", "x": [1, 6, 4], "groups": 4})", {"cases[0].groups", "C=6"}));
  EXPECT_TRUE(refused(R"({"op": "upsample_nearest", "name": "u", "x": [1, 6, 4], "size": [8, 8]})", {"cases[0].size", "1 values"}));
  EXPECT_TRUE(refused(R"({"op": "upsample_nearest", "name": "u", "x": [1, 6, 4]})", {"cases[0].size", "missing"}));
  EXPECT_TRUE(refused(R"({"op": "topk", "name": "t", "rows": 1, "cols": 4, "k": 5})", {"cases[0].k", "cols=4"}));
  EXPECT_TRUE(refused(R"({"op": "embedding", "name": "e", "rows": 1, "cols": 4})", {"cases[0].n", "missing"}));
  EXPECT_TRUE(refused(R"({"op": "scaled_dot_product_attention_backward", "name": "a", "rows": 1, "cols": 4, "heads": 3,
                          "kv_heads": 2})", {"cases[0].kv_heads", "heads=3"}));
}

TEST(Suites, ConvRowsPickTheOpByRankAndExpandTheirParameters) {
  const Suite s = parse_suite(R"({"suite": "s", "op": "conv", "dtypes": ["bf16"], "cases": [
      {"name": "a", "x": [2, 4, 9, 9], "weight": [8, 4, 3, 3], "padding": [1], "stride": [2]},
      {"name": "b", "x": [1, 6, 3, 5, 7], "weight": [6, 2, 3, 1, 1], "groups": 3, "bias": false}]})", "s.json");
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_EQ(s.cases[0].op, "conv2d");
  EXPECT_EQ(s.cases[0].shape, "x[2,4,9,9] w[8,4,3,3] +bias stride 2,2 pad 1,1");
  const auto& a = std::get<ConvCase>(s.cases[0].params);
  EXPECT_EQ(a.out_shape(), (Shape{2, 8, 5, 5}));
  EXPECT_EQ(s.cases[1].op, "conv3d");
  EXPECT_EQ(std::get<ConvCase>(s.cases[1].params).out_shape(), (Shape{1, 6, 1, 5, 7}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "conv", "dtypes": ["f32"], "cases": [{"name": "x", "x": [1, 4, 5, 5], "weight": [2, 3, 3, 3]}]})", "b.json"); },
      {"b.json", "field 'cases[0].weight'", "C = 4"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "conv", "dtypes": ["f32"], "cases": [{"name": "x", "x": [1, 4, 5], "weight": [2, 4, 3]}]})", "b.json"); },
      {"b.json", "field 'cases[0].x'", "conv3d"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "conv", "dtypes": ["f32"], "cases": [{"name": "x", "x": [1, 4, 2, 2], "weight": [2, 4, 3, 3]}]})", "b.json"); },
      {"b.json", "field 'cases[0].x'", "dilated kernel"}));
}

TEST(Suites, WanVaeConvSuiteHasTheDecoderLayers) {
  const Suite s = load_suite("conv", dir());
  EXPECT_EQ(s.op, "conv");
  const auto find = [&](const std::string& name) -> const ConvCase* {
    for (const BenchCase& c : s.cases)
      if (c.name == name) return &std::get<ConvCase>(c.params);
    return nullptr;
  };
  // Stage 0 works at the latent 60 x 104 on one latent frame (T = 1 + 2 cached), the last stage at 480 x 832
  // on 4 frames.
  const ConvCase* first = find("wan2.1-vae decoder stage0 residual conv 384->384");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->x, (Shape{1, 384, 3, 62, 106}));
  EXPECT_EQ(first->out_shape(), (Shape{1, 384, 1, 60, 104}));
  const ConvCase* last = find("wan2.1-vae decoder stage3 residual conv 96->96");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->out_shape(), (Shape{1, 96, 4, 480, 832}));
  const ConvCase* up = find("wan2.1-vae decoder stage2 upsample conv 192->96");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->out_shape(), (Shape{4, 96, 480, 832}));
}

TEST(Suites, BadFilesNameTheFileAndTheField) {
  const char* src = "bad.json";
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite("{\"suite\": ", src); }, {"bad.json", "valid JSON"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite("[1, 2]", src); }, {"bad.json", "an object"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite(R"({"op": "softmax", "dtypes": ["f32"]})", src); },
                                       {"bad.json", "field 'suite'", "missing"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "conv9d", "dtypes": ["f32"]})", src); },
      {"bad.json", "field 'op'", "conv9d"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "softmax", "dtypes": ["f33"], "rows": [1], "vocabularies": [{"size": 8}]})", src); },
      {"bad.json", "field 'dtypes[0]'", "f33"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false],
                           "shapes": [{"n": 8, "k": 8, "model": "a", "projection": "q"},
                                      {"n": -4, "k": 8, "model": "a", "projection": "k"}]})", src); },
      {"bad.json", "field 'shapes[1].n'", "positive integer", "-4"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false],
                           "shapes": [{"n": 8, "k": 8, "model": "a", "projection": "q", "kk": 3}]})", src); },
      {"bad.json", "field 'shapes[0].kk'", "unknown field"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "constant_pad_nd", "dtypes": ["f32"],
                           "cases": [{"name": "x", "shape": [4, 4], "pads": [1, 1, 1]}]})", src); },
      {"bad.json", "field 'cases[0].pads'", "pairs"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "grouped_mm", "dtypes": ["bf16"], "experts": 4, "top_k": 2,
                           "tokens": [1], "routing": ["lumpy"], "projections": [{"name": "p", "n": 8, "k": 8}]})", src); },
      {"bad.json", "field 'routing[0]'", "even, skewed, empty"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "scaled_dot_product_attention", "dtypes": ["bf16"], "q_heads": 6,
                           "kv_heads": 4, "head_dim": 8, "cases": [{"name": "d", "q_len": 1, "kv_len": 8}]})", src); },
      {"bad.json", "field 'kv_heads'", "divisor"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_suite(R"({"suite": "s", "op": "scaled_mm", "dtypes": ["bf16"], "recipes": ["rowwise"], "m": [1],
                           "shapes": [{"n": 8, "k": 8, "model": "a", "projection": "q"}]})", src); },
      {"bad.json", "field 'dtypes[0]'", "FP8"}));
  // A weight-only row's recipe must be its weight's: nvfp4 / mxfp4 for FP4, an FP8 recipe for FP8.
  const auto weight_only = [&](const char* weight, const char* recipe) {
    return parse_suite(fmt::format(R"({{"suite": "s", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false],
                           "weight_only": [{{"x": "bfloat16", "weight": "{}", "recipe": "{}", "m": [1]}}],
                           "shapes": [{{"n": 64, "k": 64, "model": "a", "projection": "q"}}]}})", weight, recipe), src);
  };
  EXPECT_TRUE(throws_with<FormatError>([&] { weight_only("float4_e2m1fn_x2", "tensorwise"); },
                                       {"bad.json", "weight_only[0].recipe", "nvfp4 or mxfp4"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { weight_only("float8_e4m3fn", "nvfp4"); },
                                       {"bad.json", "weight_only[0].recipe", "block_128x128"}));
  EXPECT_EQ(weight_only("float4_e2m1fn_x2", "mxfp4").cases.size(), 2u);   // the plain row and the FP4 one
}

// A list entry that is not an object (a number where a case belongs) is a FormatError naming the entry, never an
// exception from the JSON library (the records/suites fuzzer aborted on one within a minute).
TEST(Suites, ListEntriesThatAreNotObjectsNameTheEntry) {
  const char* src = "bad.json";
  const std::vector<std::pair<std::string, std::string>> files = {
      {R"({"suite": "s", "op": "constant_pad_nd", "dtypes": ["f32"], "cases": [7]})", "cases[0]"},
      {R"({"suite": "s", "op": "row_ops", "dtypes": ["f32"], "cases": [[1]]})", "cases[0]"},
      {R"({"suite": "s", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false], "shapes": [3]})", "shapes[0]"},
      {R"({"suite": "s", "op": "softmax", "dtypes": ["f32"], "rows": [1], "vocabularies": ["x"]})", "vocabularies[0]"},
      {R"({"suite": "s", "op": "grouped_mm", "dtypes": ["bf16"], "experts": 4, "top_k": 2, "tokens": [1],
           "routing": ["even"], "projections": [1.5]})", "projections[0]"},
      {R"({"suite": "s", "op": "scaled_dot_product_attention", "dtypes": ["bf16"], "q_heads": 4, "kv_heads": 4,
           "head_dim": 8, "cases": [null]})", "cases[0]"},
      {R"({"suite": "s", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false], "weight_only": [2],
           "shapes": [{"n": 8, "k": 8, "model": "a", "projection": "q"}]})", "weight_only[0]"},
  };
  for (const auto& [text, field] : files)
    EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite(text, src); }, {"bad.json", "field '" + field + "'", "an object"}))
        << text;
}

TEST(Suites, FileNameAndSuiteFieldMustAgree) {
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / "fourfold_suites_test";
  std::filesystem::create_directories(tmp);
  std::ofstream(tmp / "mine.json") << R"({"suite": "other", "op": "softmax", "dtypes": ["f32"], "rows": [2],
                                        "vocabularies": [{"size": 10}]})";
  std::ofstream(tmp / "broken.json") << R"({"suite": "broken", "op": "softmax", "dtypes": ["f32"], "rows": "2",
                                          "vocabularies": [{"size": 10}]})";
  EXPECT_TRUE(throws_with<FormatError>([&] { load_suite("mine", tmp.string()); },
                                       {"mine.json", "field 'suite'", "\"mine\"", "\"other\""}));
  EXPECT_TRUE(throws_with<FormatError>([&] { load_suite("broken", tmp.string()); },
                                       {"broken.json", "field 'rows'", "non-empty array", "\"2\""}));
  EXPECT_TRUE(throws_with<FormatError>([&] { load_suite_file((tmp / "absent.json").string()); },
                                       {"absent.json", "No such file"}));
  std::filesystem::remove_all(tmp);
}

TEST(Suites, MoeGroupSizes) {
  for (MoeRouting r : {MoeRouting::even, MoeRouting::skewed, MoeRouting::empty})
    for (int64_t tokens : {0, 1, 16, 128, 512}) {
      const std::vector<int64_t> g = moe_group_sizes(tokens, 128, 8, r);
      ASSERT_EQ(g.size(), 128u);
      EXPECT_EQ(std::accumulate(g.begin(), g.end(), int64_t{0}), tokens * 8);
      for (int64_t v : g) {
        EXPECT_GE(v, 0);
        EXPECT_LE(v, tokens);
      }
    }
  // even: 512 tokens x 8 / 128 experts = 32 each; 1 token: the first 8 experts get one row.
  EXPECT_EQ(moe_group_sizes(512, 128, 8, MoeRouting::even), std::vector<int64_t>(128, 32));
  const std::vector<int64_t> one = moe_group_sizes(1, 128, 8, MoeRouting::even);
  EXPECT_EQ(std::count(one.begin(), one.end(), 1), 8);
  // skewed: non-increasing, the first expert saturated at 16 tokens (128 rows, weight 1 of H(128) ~ 5.4).
  const std::vector<int64_t> skew = moe_group_sizes(16, 128, 8, MoeRouting::skewed);
  EXPECT_TRUE(std::is_sorted(skew.rbegin(), skew.rend()));
  EXPECT_EQ(skew[0], 16);
  EXPECT_GT(std::count(skew.begin(), skew.end(), 0), 0);
  // empty: experts 0, 16, ..., 112 take every token, 120 groups are empty.
  const std::vector<int64_t> empty = moe_group_sizes(128, 128, 8, MoeRouting::empty);
  EXPECT_EQ(std::count(empty.begin(), empty.end(), 0), 120);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(empty[static_cast<size_t>(16 * j)], 128);
  EXPECT_TRUE(throws_with<ValueError>([] { moe_group_sizes(1, 4, 8, MoeRouting::even); }, {"moe_group_sizes"}));
}

}  // namespace
}  // namespace fourfold
