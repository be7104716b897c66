#include "model/vae/wan_vae_presets.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/fnv1a.h"
#include "fourfold/errors.h"
#include "model/formats/safetensors.h"
#include "model/vae/wan_vae.h"

namespace fourfold::model {
namespace {

// Wan 2.1's published latent statistics (diffusers' AutoencoderKLWan defaults).
const std::vector<double> kWanMean = {-0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
                                      0.4134,  -0.0715, 0.5517,  -0.3632, -0.1922, -0.9497, 0.2503, -0.2921};
const std::vector<double> kWanStd = {2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                                     3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160};

uint64_t name_seed(uint64_t seed, const std::string& name) {
  return fnv1a64(name, kFnv1aBasis ^ seed);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> wan_vae_preset_names() { return {"wan2.1-vae", "wan2.1-vae-tiny", "wan2.2-vae", "wan2.2-vae-tiny"}; }

bool is_wan_vae_preset(const std::string& name) {
  for (const std::string& n : wan_vae_preset_names())
    if (n == name) return true;
  return false;
}

WanVaeConfig wan_vae_preset(const std::string& name) {
  WanVaeConfig c;   // the defaults are Wan 2.1's
  if (name == "wan2.1-vae") {
    c.latents_mean = kWanMean;
    c.latents_std = kWanStd;
    return c;
  }
  if (name == "wan2.1-vae-tiny") {
    c.base_dim = c.decoder_base_dim = 8;
    c.z_dim = 4;
    c.num_res_blocks = 1;
    c.latents_mean = {0.0, 0.0, 0.0, 0.0};
    c.latents_std = {1.0, 1.0, 1.0, 1.0};
    return c;
  }
  if (name == "wan2.2-vae" || name == "wan2.2-vae-tiny") {
    // Wan 2.2 TI2V's VAE: residual blocks, 2x2 patches (12 channels in and out), 16x spatial compression.
    const bool tiny = name == "wan2.2-vae-tiny";
    c.base_dim = tiny ? 4 : 160;
    c.decoder_base_dim = tiny ? 8 : 256;
    c.z_dim = tiny ? 8 : 48;
    c.num_res_blocks = tiny ? 1 : 2;
    c.is_residual = true;
    c.patch_size = 2;
    c.in_channels = c.out_channels = 12;
    c.scale_factor_spatial = 16;
    c.latents_mean.assign(static_cast<size_t>(c.z_dim), 0.0);   // a trained checkpoint's statistics come with it
    c.latents_std.assign(static_cast<size_t>(c.z_dim), 1.0);
    return c;
  }
  fail<ValueError>("vae", "preset", fmt::format("one of {}", fmt::join(wan_vae_preset_names(), ", ")), "'" + name + "'");
}

std::map<std::string, Tensor> wan_vae_synthetic_weights(const WanVaeConfig& config, DType dtype, uint64_t seed) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, shape] : wan_vae_tensor_shapes(config)) {
    Tensor t = Tensor::empty(shape, dtype);
    const uint64_t s = name_seed(seed, name);
    if (ends_with(name, ".gamma")) {
      t.fill_uniform(s, 0.9, 1.1);
    } else if (ends_with(name, ".bias")) {
      t.fill_normal(s, 0.0, 0.02);
    } else {
      double fan_in = 1.0;
      for (size_t d = 1; d < shape.size(); ++d) fan_in *= static_cast<double>(shape[d]);
      const double bound = 1.0 / std::sqrt(fan_in);
      t.fill_uniform(s, -bound, bound);
    }
    out.emplace(name, std::move(t));
  }
  return out;
}

WanVae open_wan_vae(const std::string& model_dir, const std::string& preset, uint64_t seed, DType activation) {
  if (!model_dir.empty()) return load_wan_vae(model_dir, activation);
  const WanVaeConfig config = wan_vae_preset(preset);
  return WanVae(config, wan_vae_synthetic_weights(config, DType::f32, seed), activation);
}

std::string wan_vae_config_json(const WanVaeConfig& c) {
  nlohmann::ordered_json j;
  j["_class_name"] = "AutoencoderKLWan";
  j["_diffusers_version"] = "0.42.1";
  j["attn_scales"] = c.attn_scales;
  j["base_dim"] = c.base_dim;
  j["decoder_base_dim"] = c.decoder_base_dim == c.base_dim ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.decoder_base_dim);
  j["dim_mult"] = c.dim_mult;
  j["dropout"] = 0.0;
  j["in_channels"] = c.in_channels;
  j["is_residual"] = c.is_residual;
  j["latents_mean"] = c.latents_mean;
  j["latents_std"] = c.latents_std;
  j["num_res_blocks"] = c.num_res_blocks;
  j["out_channels"] = c.out_channels;
  j["patch_size"] = c.patch_size == 1 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.patch_size);
  j["scale_factor_spatial"] = c.scale_factor_spatial;
  j["scale_factor_temporal"] = c.scale_factor_temporal;
  j["temperal_downsample"] = c.temperal_downsample;
  j["z_dim"] = c.z_dim;
  return j.dump(2) + "\n";
}

uint64_t write_wan_vae_folder(const std::filesystem::path& dir, const WanVaeConfig& config, DType dtype, uint64_t seed) {
  std::filesystem::create_directories(dir);
  const std::map<std::string, Tensor> weights = wan_vae_synthetic_weights(config, dtype, seed);
  std::vector<std::pair<std::string, Tensor>> list(weights.begin(), weights.end());
  write_safetensors(dir / "diffusion_pytorch_model.safetensors", list);
  write_file_atomically((dir / "config.json").string(), wan_vae_config_json(config));
  uint64_t bytes = 0;
  for (const auto& [name, t] : weights) bytes += static_cast<uint64_t>(t.numel()) * dtype_size(dtype);
  return bytes;
}

}  // namespace fourfold::model
