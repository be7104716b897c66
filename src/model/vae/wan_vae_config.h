// The config.json of diffusers' AutoencoderKLWan (Wan 2.1's causal video VAE, also Qwen-Image's; Wan 2.2's
// TI2V variant sets is_residual, patch_size 2, 12 channels in and out and z_dim 48), with diffusers' defaults
// for absent keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fourfold::model {

struct WanVaeConfig {
  int64_t base_dim = 96;
  int64_t decoder_base_dim = 96;             // null in the file: base_dim
  int64_t z_dim = 16;
  std::vector<int64_t> dim_mult = {1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  std::vector<double> attn_scales;           // encoder scales with an attention block after each residual block
  std::vector<bool> temperal_downsample = {false, true, true};   // diffusers' spelling
  bool is_residual = false;
  int64_t in_channels = 3, out_channels = 3;   // of the encoder and decoder: pixel channels * patch_size^2
  int64_t patch_size = 1;                    // null in the file: 1 (no patchify)
  int64_t pixel_channels(bool input) const { return (input ? in_channels : out_channels) / (patch_size * patch_size); }
  std::vector<double> latents_mean, latents_std;   // the pipelines' latent normalization, z_dim values each
  int64_t scale_factor_temporal = 4, scale_factor_spatial = 8;

  // Frames out of the decoder for `latent_frames` in: the first latent frame gives one, each later one
  // scale_factor_temporal (through the temporal upsamplers). FormatError naming "latents" on overflow.
  int64_t decoded_frames(int64_t latent_frames) const;
};

// Parses config.json text; `file` names it in errors. FormatError "<file>: field '<key>': expected ..., found
// ..." for a bad value, a config of another _class_name, or any failure of check_wan_vae_config.
WanVaeConfig parse_wan_vae_config(const std::string& text, const std::string& file);

// FormatError "<file>: field '<key>': ..." unless every size is within its bound and the config describes one
// network: temperal_downsample one entry per downsampling stage, the scale factors those the stages give, the
// channels whole patches, the latent statistics z_dim values, and (Wan 2.2) every shortcut's channels dividing
// as diffusers' AvgDown3D / DupUp3D require. Everything the network later slices by is checked here, before any
// tensor is built, so a bad config never surfaces as an op's internal error.
void check_wan_vae_config(const WanVaeConfig& config, const std::string& file);

}  // namespace fourfold::model
