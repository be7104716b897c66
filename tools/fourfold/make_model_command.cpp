// fourfold make-model: a Hugging Face model folder with deterministic random weights (see presets.h for how
// they are scaled so activations stay in range through every layer).
#include <fmt/format.h>

#include "commands.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/llm/model_folder.h"
#include "model/llm/model_maker.h"
#include "model/llm/presets.h"
#include "model/vae/wan_vae_presets.h"

namespace fourfold::cli {

void register_make_model(CLI::App& app) {
  auto* cmd = app.add_subcommand("make-model", "write a model folder (config.json + safetensors) of a preset");
  static std::string preset, out, dtype = "bf16";
  static uint64_t seed = 0;
  static int64_t layers = 0;
  static bool all_projections = false;
  static double shard_mib = double(model::kDefaultMaxShardBytes >> 20);
  cmd->add_option("--preset", preset,
                  "tiny-moe, tiny-qwen3, tiny-llama, small-moe, qwen3-30b-a3b, the hybrids tiny-hybrid and "
                  "qwen3.6-35b-a3b (--layers cuts them, every 4th layer full attention); or a Wan VAE in the "
                  "diffusers layout: "
                  "wan2.1-vae-tiny, wan2.1-vae, wan2.2-vae-tiny, wan2.2-vae")
      ->required();
  cmd->add_option("--out", out, "the folder to write")->required();
  cmd->add_option("--dtype", dtype, "bf16, fp8 (e4m3 with 128x128 block scales), or nvfp4 / mxfp4 (FP4 experts, "
                  "compressed-tensors layout); a VAE: f32 or bf16")
      ->check(CLI::IsMember({"bf16", "fp8", "nvfp4", "mxfp4", "f32"}));
  cmd->add_option("--seed", seed, "weights seed");
  cmd->add_flag("--all-projections", all_projections,
                "with --dtype nvfp4 / mxfp4: every projection in FP4, not only the routed experts");
  cmd->add_option("--layers", layers, "number of layers (default: the preset's)")->check(CLI::Range(1, 1000));
  cmd->add_option("--max-shard-mib", shard_mib, "shard the safetensors above this size")->check(finite_in(1e-3, 1e9));
  cmd->callback([] {
    // Written whole into a staging folder and swapped in, as quantize does: a killed run leaves the previous
    // folder, not one whose checkpoint was removed first.
    const bool vae = model::is_wan_vae_preset(preset);
    OutputFolder folder(out,
                        vae ? OwnedNames{"config.json", "diffusion_pytorch_model.safetensors"}
                            : OwnedNames([](const std::string& name) { return model::is_checkpoint_file_name(name); }),
                        "--out");
    set_current_input("preset " + preset);
    if (vae) {
      if (dtype != "f32" && dtype != "bf16") fail<ValueError>("make-model", "--dtype", "f32 or bf16 for a VAE preset", dtype);
      const uint64_t bytes =
          model::write_wan_vae_folder(folder.staging(), model::wan_vae_preset(preset), parse_dtype(dtype), seed);
      folder.commit();
      fmt::print("make-model: wrote {} ({} {}, diffusers AutoencoderKLWan layout, {} bytes = {:.1f} MiB)\n", out, preset,
                 dtype, bytes, bytes / 1048576.0);
      return;
    }
    if (dtype == "f32") fail<ValueError>("make-model", "--dtype", "bf16, fp8, nvfp4 or mxfp4 for a decoder preset", dtype);
    const auto w = model::make_model(preset, folder.staging(), dtype, seed,
                                     layers > 0 ? std::optional<int64_t>(layers) : std::nullopt,
                                     static_cast<uint64_t>(shard_mib * 1048576.0), all_projections);
    folder.commit();
    fmt::print("make-model: wrote {} ({} {}, {} layers, {} parameters, {} bytes = {:.1f} MiB)\n", out, preset,
               dtype, w.config.num_hidden_layers, w.parameters, w.bytes, w.bytes / 1048576.0);
  });
}

}  // namespace fourfold::cli
