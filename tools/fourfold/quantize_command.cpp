// fourfold quantize: an FP8 copy of a model folder in Hugging Face's FP8 layout (weight_scale_inv per 128x128
// block or per row).
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/llm/model_folder.h"
#include "model/llm/model_maker.h"

namespace fourfold::cli {
namespace {

// What quantize may replace in an existing --out: a checkpoint's own files and the files it copies from --model
// (tokenizer, generation_config.json, ...), so the previous copy of the same model is replaced and anything else
// is refused.
OwnedNames quantize_owned_names(const std::string& model) {
  std::set<std::string> copied;
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(model, ec))
    copied.insert(entry.path().filename().string());
  return OwnedNames([copied](const std::string& name) {
    return model::is_checkpoint_file_name(name) || copied.count(name) > 0;
  });
}

}  // namespace

void register_quantize(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "write an FP8 copy (Hugging Face FP8 layout) or an FP4 copy (compressed-tensors NVFP4 / MXFP4) of a model folder");
  static std::string model, to, out;
  static double shard_mib = double(model::kDefaultMaxShardBytes >> 20);
  static bool lm_head = false, all_projections = false;
  cmd->add_option("--model", model, "the model folder to read")->required();
  cmd->add_option("--to", to,
                  "fp8-block (128x128 scales), fp8-row (one scale per row), nvfp4 (e4m3 scales per 16 and a global "
                  "scale) or mxfp4 (e8m0 scales per 32); FP4 quantizes the routed experts unless --all-projections")
      ->required()
      ->check(CLI::IsMember({"fp8-block", "fp8-row", "nvfp4", "mxfp4"}));
  cmd->add_option("--out", out, "the folder to write")->required();
  cmd->add_option("--max-shard-mib", shard_mib, "shard the safetensors above this size")->check(finite_in(1e-3, 1e9));
  cmd->add_flag("--lm-head", lm_head,
                "quantize lm_head too (Hugging Face FP8 checkpoints keep it bf16; 8-bit formats of other engines do not)");
  cmd->add_flag("--all-projections", all_projections,
                "FP4: every projection (attention, linear attention, MLPs, shared expert), not only the routed experts");
  cmd->callback([] {
    std::error_code ec;
    if (std::filesystem::equivalent(model, out, ec))
      fail<ValueError>("quantize", "--out", "a folder other than --model (the weights are read from it)", out);
    // The new checkpoint is written whole into a staging folder and swapped in: until then --out keeps the
    // previous checkpoint, which loads, rather than one removed before the new one is complete.
    OutputFolder folder(out, quantize_owned_names(model), "--out");
    set_current_input("model " + model);
    const auto w = model::quantize_model_folder(model, to, folder.staging(),
                                                static_cast<uint64_t>(shard_mib * 1048576.0), lm_head, all_projections);
    folder.commit();
    fmt::print("quantize: wrote {} ({} of {}, {} parameters with scales, {} bytes = {:.1f} MiB)\n", out, to, model,
               w.parameters, w.bytes, w.bytes / 1048576.0);
    if (!w.copied_files.empty()) fmt::print("quantize: copied {}\n", fmt::join(w.copied_files, ", "));
  });
}

}  // namespace fourfold::cli
