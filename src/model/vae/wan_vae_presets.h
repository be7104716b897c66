// Wan VAE presets with deterministic random weights, built in memory or written as a diffusers folder
// (config.json in diffusers' spelling + diffusion_pytorch_model.safetensors), for tests and for measuring
// the real layer shapes without a download.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fourfold/tensor.h"
#include "model/vae/wan_vae_config.h"

namespace fourfold::model {

// "wan2.1-vae": Wan 2.1's shapes (base_dim 96, z_dim 16, dim_mult [1, 2, 4, 4], 2 residual blocks per stage,
// its latents_mean / latents_std); "wan2.1-vae-tiny": the same layout at base_dim 8, z_dim 4; "wan2.2-vae":
// Wan 2.2 TI2V's (base_dim 160, decoder_base_dim 256, z_dim 48, residual blocks, patch size 2, 16x spatial;
// latent statistics 0 / 1, since they come with a trained checkpoint); "wan2.2-vae-tiny": base 4 / 8, z_dim 8.
std::vector<std::string> wan_vae_preset_names();
bool is_wan_vae_preset(const std::string& name);
WanVaeConfig wan_vae_preset(const std::string& name);   // ValueError listing the names for an unknown one

// Convolutions uniform in +-1/sqrt(fan_in) (PyTorch's default scale), norm gains in [0.9, 1.1], biases
// N(0, 0.02), from (seed, tensor name): the same weights for a seed on every machine.
std::map<std::string, Tensor> wan_vae_synthetic_weights(const WanVaeConfig& config, DType dtype, uint64_t seed);

// A diffusers folder when model_dir is set, else the preset with its seeded weights, in `activation`.
class WanVae;
WanVae open_wan_vae(const std::string& model_dir, const std::string& preset, uint64_t seed, DType activation);

// config.json as diffusers writes it for AutoencoderKLWan.
std::string wan_vae_config_json(const WanVaeConfig& config);

// Writes the folder; returns the weights' bytes.
uint64_t write_wan_vae_folder(const std::filesystem::path& dir, const WanVaeConfig& config, DType dtype, uint64_t seed);

}  // namespace fourfold::model
