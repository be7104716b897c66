// `fourfold run` and `fourfold quantize` as a user calls them, on folders saved by transformers and made by
// make-model: prompts as text and ids, text out, eos, logits as .npy, the FP8 copy as a complete folder.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/cpu/isa.h"
#include "check/error_metrics.h"
#include "model/llm/model_maker.h"
#include "model/formats/npy.h"
#include "model/formats/safetensors.h"
#include "model/temp_dirs.h"
#include "model/tokenizer/tokenizer.h"
#include "tools/cli_runner.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

const testing::TempDirs kTemp("fourfold_run_command_test");
const fs::path kData = FOURFOLD_TEST_DATA_DIR;

using Result = fourfold::testing::CliResult;
using fourfold::testing::fourfold;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The line of `out` that starts with `prefix`, without it.
std::string line_after(const std::string& out, const std::string& prefix) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "<no line " + prefix + ">";
}

int64_t argmax(const Tensor& logits, int64_t row) {
  const std::vector<double> v = logits.select(0, row).to_vector();
  return std::max_element(v.begin(), v.end()) - v.begin();
}

// A tiny-moe folder (vocab 1024) with the qwen2-style tokenizer fixture (vocab 903) as its tokenizer.json.
fs::path model_with_tokenizer() {
  const fs::path dir = kTemp.make("_model");
  make_model("tiny-moe", dir, "bf16", 7, std::nullopt);
  fs::copy_file(kData / "tokenizers" / "qwen2.json", dir / "tokenizer.json");
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [900, 901], "do_sample": false})";
  return dir;
}

TEST(RunCommand, ATextPromptPrintsTheGeneratedTextAndTheLogitsFollowTheTokens) {
  const fs::path dir = model_with_tokenizer();
  const fs::path logits = dir / "logits.npy", json = dir / "run.json";
  const Result r = fourfold(fmt::format("run --model {} --prompt 'Hello world, 123!' --gen 6 --ignore-eos "
                                        "--logits {} --json {}", dir.string(), logits.string(), json.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const Tokenizer tok = Tokenizer::from_file(dir / "tokenizer.json");
  const nlohmann::json run = read_json(json)["run"];
  const std::vector<int64_t> prompt = run["prompt_ids"], tokens = run["generated_tokens"];
  EXPECT_EQ(prompt, tok.encode("Hello world, 123!"));
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(line_after(r.out, "text: "), tok.decode(tokens));
  EXPECT_NE(r.out.find("prompt: --prompt (" + std::to_string(prompt.size()) + " tokens)"), std::string::npos);
  EXPECT_NE(r.out.find("sampling: greedy (generation_config.json"), std::string::npos) << r.out;
  // Row i holds the logits after token i of prompt + generated: greedy, so row P-1+j's argmax is token j.
  const Tensor l = read_npy(logits);
  ASSERT_EQ(l.shape(), (Shape{static_cast<int64_t>(prompt.size() + tokens.size()), 1024}));
  for (size_t j = 0; j < tokens.size(); ++j) EXPECT_EQ(argmax(l, prompt.size() - 1 + j), tokens[j]) << j;
}

TEST(RunCommand, StopsAtTheGenerationConfigsEos) {
  const fs::path dir = model_with_tokenizer();
  const fs::path json = dir / "free.json";
  ASSERT_EQ(fourfold(fmt::format("run --model {} --prompt-ids 5,6,7 --gen 4 --ignore-eos --json {}", dir.string(),
                                 json.string())).status, 0);
  const std::vector<int64_t> free_run = read_json(json)["run"]["generated_tokens"];
  // Make the second greedy token an eos token: generation stops right after it.
  std::ofstream(dir / "generation_config.json") << fmt::format(R"({{"eos_token_id": {}}})", free_run[1]);
  const fs::path stopped = dir / "stopped.json";
  const Result r = fourfold(fmt::format("run --model {} --prompt-ids 5,6,7 --gen 4 --json {}", dir.string(),
                                        stopped.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json run = read_json(stopped)["run"];
  EXPECT_TRUE(run["stopped_at_eos"].get<bool>());
  EXPECT_EQ(run["generated_tokens"], nlohmann::json(std::vector<int64_t>(free_run.begin(), free_run.begin() + 2)));
  EXPECT_NE(r.out.find("from generation_config.json"), std::string::npos);
}

// The prefill line judges bf16 against the doubled FMA probe (the issue's bf16 dot-product peak) and, where the
// kernels have no bf16 dot-product instruction, against the FMA probe too: that level's own ceiling.
TEST(RunCommand, PrefillComputeNamesTheLevelsOwnPeakWhereBf16IsWidened) {
  if (cpu::host_isas().front() < cpu::Isa::avx2) GTEST_SKIP() << "the host lacks the avx2 level";
  const fs::path dir = model_with_tokenizer();
  auto at_avx2 = [&](const char* dtype) {
    return fourfold::testing::shell(fmt::format("FOURFOLD_ISA=avx2 {} run --model {} --prompt-ids 5,6,7 --gen 1 --dtype {}",
                                                FOURFOLD_CLI, dir.string(), dtype));
  };
  const Result r = at_avx2("bf16");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string line = line_after(r.out, "prefill compute: ");
  EXPECT_NE(line.find("2 x the FMA probe of this run"), std::string::npos) << line;
  EXPECT_NE(line.find("of the FMA probe, this level's own peak (bf16 widened to f32 FMAs)"), std::string::npos) << line;
  const Result f32 = at_avx2("f32");
  ASSERT_EQ(f32.status, 0) << f32.out;
  EXPECT_EQ(line_after(f32.out, "prefill compute: ").find("own peak"), std::string::npos) << f32.out;
}

// The floor step by step: a read probe before each decode step, and each step's fraction against it, in the text
// and in the JSON (one probe sample and one step time per decoded token); --step-probe 0 turns it off.
TEST(RunCommand, TheFloorIsJudgedStepByStepAgainstAProbeBeforeEachStep) {
  const fs::path dir = model_with_tokenizer();
  const fs::path json = kTemp.make("_steps") / "run.json";
  const Result r = fourfold(fmt::format("run --model {} --prompt-ids 5,6,7 --gen 5 --ignore-eos --step-probe 8 --json {}",
                                        dir.string(), json.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string line = line_after(r.out, "bandwidth floor, step by step: ");
  EXPECT_NE(line.find("each step reached"), std::string::npos) << r.out;
  EXPECT_NE(line.find("(median of 4;"), std::string::npos) << line;
  EXPECT_NE(r.out.find("memory (the read probe between decode steps, --step-probe): 8.0 MiB"), std::string::npos) << r.out;
  const nlohmann::json by_step = read_json(json)["run"]["bandwidth_floor_by_step"];
  ASSERT_TRUE(by_step.is_object()) << by_step.dump();
  EXPECT_EQ(by_step["probe_bytes"], 8 << 20);
  ASSERT_EQ(by_step["read_gb_per_s"].size(), 4u);
  ASSERT_EQ(by_step["step_seconds"].size(), 4u);
  for (const auto& gbs : by_step["read_gb_per_s"]) EXPECT_GT(gbs.get<double>(), 0.0);
  EXPECT_GT(by_step["fraction_median"].get<double>(), 0.0);
  EXPECT_LE(by_step["fraction_p10"].get<double>(), by_step["fraction_p90"].get<double>());

  const Result off = fourfold(fmt::format("run --model {} --prompt-ids 5,6,7 --gen 3 --step-probe 0 --json {}",
                                          dir.string(), json.string()));
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(off.out.find("step by step"), std::string::npos) << off.out;
  EXPECT_TRUE(read_json(json)["run"]["bandwidth_floor_by_step"].is_null());
}

// The logits of a folder transformers saved, through the command line, against transformers' own.
TEST(RunCommand, LogitsOfATransformersFolderMatchTransformers) {
  SafetensorsFile golden = read_safetensors(kData / "transformers" / "qwen3" / "logits.safetensors");
  std::string ids;
  Tensor expected;
  for (auto& [name, t] : golden.tensors) {
    if (name == "logits") expected = t.contiguous();
    if (name == "input_ids")
      for (double v : t.to_vector()) ids += (ids.empty() ? "" : ",") + std::to_string(static_cast<int64_t>(v));
  }
  const fs::path out = kTemp.make("_logits") / "l.npy";
  const Result r = fourfold(fmt::format("run --model {} --prompt-ids {} --gen 1 --dtype f32 --kv-dtype f32 --logits {}",
                                        (kData / "transformers" / "qwen3").string(), ids, out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const Tensor l = read_npy(out);
  ASSERT_EQ(l.size(0), expected.size(0) + 1);
  const ErrorStats e = compare_to_reference(l.narrow(0, 0, expected.size(0)), expected.to(DType::f64));
  EXPECT_GT(e.psnr_db, 100.0);
}

// The activations follow the checkpoint as transformers computes it (bf16 for bf16 and FP8, f32 for f32), the
// KV cache follows the activations, an explicit --dtype wins; the header line and the record say what ran.
TEST(RunCommand, TheDtypeFollowsTheCheckpointAndIsPrintedAndRecorded) {
  const fs::path bf16 = model_with_tokenizer();
  const fs::path fp8 = kTemp.make("_fp8_dtype");
  ASSERT_EQ(fourfold(fmt::format("make-model --preset tiny-moe --dtype fp8 --out {}", fp8.string())).status, 0);
  const fs::path f32 = kData / "transformers" / "qwen3";   // saved by transformers in float32
  struct Case {
    fs::path model;
    std::string option, activation, kv_cache, why;
  };
  const Case cases[] = {
      {bf16, "", "bfloat16", "bfloat16", "--dtype auto: the model is bfloat16"},
      {fp8, "", "bfloat16", "bfloat16", "--dtype auto: the model is FP8, bfloat16 besides"},
      {f32, "", "float32", "float32", "--dtype auto: the model is float32"},
      {bf16, "--dtype f32", "float32", "float32", "--dtype f32"},
      {f32, "--dtype bf16", "bfloat16", "bfloat16", "--dtype bf16"},
      {bf16, "--kv-dtype f32", "bfloat16", "float32", "--dtype auto: the model is bfloat16"},
  };
  for (const Case& c : cases) {
    const fs::path json = kTemp.make("_dtype_json") / "run.json";
    const Result r = fourfold(fmt::format("run --model {} --prompt-ids 5,6,7 --gen 2 --step-probe 0 {} --json {}",
                                          c.model.string(), c.option, json.string()));
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string header = line_after(r.out, "weights ");
    EXPECT_NE(header.find(fmt::format("activations {} ({})", c.activation, c.why)), std::string::npos)
        << c.option << ": " << header;
    EXPECT_NE(header.find(fmt::format("kv cache {} (", c.kv_cache)), std::string::npos) << c.option << ": " << header;
    const nlohmann::json record = read_json(json);
    EXPECT_EQ(record["run"]["activation_dtype"], c.activation) << c.model << " " << c.option;
    EXPECT_EQ(record["run"]["activation_dtype_from"], c.why);
    EXPECT_EQ(record["run"]["kv_cache_dtype"], c.kv_cache);
    EXPECT_EQ(record["manifest"]["dtypes"], nlohmann::json({c.activation, c.kv_cache}));
    const std::vector<std::string> parameters = record["manifest"]["workload"]["parameters"];
    EXPECT_NE(std::find(parameters.begin(), parameters.end(), "activation=" + c.activation), parameters.end());
    EXPECT_NE(std::find(parameters.begin(), parameters.end(), "kv_cache=" + c.kv_cache), parameters.end());
  }
  // A preset is built in bf16: it runs in bf16.
  const Result preset = fourfold("run --preset tiny-qwen3 --prompt-ids 5,6,7 --gen 1 --step-probe 0");
  ASSERT_EQ(preset.status, 0) << preset.out;
  EXPECT_EQ(line_after(preset.out, "weights ").rfind("bfloat16, activations bfloat16 (--dtype auto", 0), 0u)
      << preset.out;
  const Result f16 = fourfold(fmt::format("run --model {} --prompt-ids 5 --gen 1 --dtype f16", bf16.string()));
  EXPECT_EQ(f16.status, 2);
  EXPECT_NE(f16.out.find("'--dtype': expected auto, bf16 or f32, found f16"), std::string::npos) << f16.out;
}

// The model's vocab (1024) pads past the tokenizer's (903), as real checkpoints do: such ids print as numbers.
TEST(RunCommand, IdsPastTheTokenizersVocabPrintAsNumbers) {
  const fs::path dir = model_with_tokenizer();
  const fs::path json = dir / "hot.json";
  const Result r = fourfold(fmt::format("run --model {} --prompt-ids 1,2 --gen 40 --temperature 5 --seed 3 "
                                        "--ignore-eos --json {}", dir.string(), json.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<int64_t> tokens = read_json(json)["run"]["generated_tokens"];
  const auto past = std::find_if(tokens.begin(), tokens.end(), [](int64_t t) { return t >= 903; });
  ASSERT_NE(past, tokens.end()) << "the seed gave no such id; pick another";
  EXPECT_NE(line_after(r.out, "text: ").find(fmt::format("<id {}>", *past)), std::string::npos) << r.out;
}

TEST(RunCommand, PromptErrorsNameTheOption) {
  const Result preset = fourfold("run --prompt hi --gen 1");
  EXPECT_EQ(preset.status, 2);
  EXPECT_NE(preset.out.find("--prompt"), std::string::npos) << preset.out;
  EXPECT_NE(preset.out.find("tokenizer.json"), std::string::npos) << preset.out;
  const Result bad = fourfold("run --prompt-ids 1,x,3 --gen 1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--prompt-ids"), std::string::npos) << bad.out;
  const Result big = fourfold("run --prompt-ids 1,99999999 --gen 1");
  EXPECT_EQ(big.status, 2);
  EXPECT_NE(big.out.find("[0, 1024)"), std::string::npos) << big.out;
  const Result both = fourfold("run --prompt-ids 1 --prompt hi --gen 1");
  EXPECT_EQ(both.status, 2);
}

TEST(RunCommand, QuantizeCopiesTheFolderAndTheCopyRuns) {
  const fs::path dir = model_with_tokenizer();
  const fs::path fp8 = kTemp.make("_fp8");
  const Result q = fourfold(fmt::format("quantize --model {} --to fp8-block --out {}", dir.string(), fp8.string()));
  ASSERT_EQ(q.status, 0) << q.out;
  for (const char* file : {"tokenizer.json", "generation_config.json", "config.json", "model.safetensors"})
    EXPECT_TRUE(fs::exists(fp8 / file)) << file;
  EXPECT_FALSE(fs::exists(fp8 / "logits.npy"));
  const Result r = fourfold(fmt::format("run --model {} --prompt 'Hello' --gen 3 --ignore-eos", fp8.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("text: "), std::string::npos);
  EXPECT_EQ(fourfold(fmt::format("quantize --model {} --to fp8-block --out {}", dir.string(), dir.string())).status, 2);
}

}  // namespace
}  // namespace fourfold::model
