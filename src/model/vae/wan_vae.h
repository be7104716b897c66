// The causal video VAE of Wan 2.1 (diffusers' AutoencoderKLWan), built on the op API: causal conv3d with
// time padded on the past side only (constant_pad_nd, then conv3d), channel RMS norm, SiLU, residual blocks,
// the single-head attention of the mid block, spatial and temporal resampling. Decoding runs one latent frame
// at a time and encoding one chunk of frames at a time, each causal conv keeping the last two frames of its
// input (diffusers' feat_cache), so a video of any length decodes in memory bounded by one frame's work.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "fourfold/tensor.h"
#include "model/vae/wan_vae_config.h"

namespace fourfold::model {

class WanVae {
 public:
  // Checks that `weights` holds every tensor the config asks for, with its shape (FormatError naming the
  // first missing or misshapen one), and converts them to `activation` (f32 or bf16) once.
  WanVae(WanVaeConfig config, std::map<std::string, Tensor> weights, DType activation);

  // latents [B, z_dim, T, h, w] -> video [B, out_channels, decoded_frames(T), h * 8, w * 8] in [-1, 1].
  // on_frame(i, T): called after latent frame i is decoded (a progress line).
  Tensor decode(const Tensor& latents, const std::function<void(int64_t, int64_t)>& on_frame = {}) const;
  // video [B, in_channels, 1 + 4k, H, W] (H, W multiples of 8) -> the posterior's mean [B, z_dim, 1 + k, H/8,
  // W/8] (diffusers' latent_dist.mode()).
  Tensor encode(const Tensor& video) const;

  // diffusers' enable_tiling(): tiles of `tile` x `tile` output pixels every `stride`, blended over the
  // overlap; an input that fits in one tile runs untiled, as in diffusers. on_tile(i, n) after each tile.
  struct Tiling {
    int64_t tile = 256, stride = 192;
  };
  Tensor decode_tiled(const Tensor& latents, const Tiling& tiling,
                      const std::function<void(int64_t, int64_t)>& on_tile = {}) const;
  Tensor encode_tiled(const Tensor& video, const Tiling& tiling) const;

  const WanVaeConfig& config() const { return config_; }
  DType activation() const { return activation_; }
  int64_t parameter_bytes() const;

 private:
  Tensor decode_frames(const Tensor& latents, const std::function<void(int64_t, int64_t)>& on_frame) const;
  Tensor encode_moments(const Tensor& video) const;   // [B, 2 z_dim, ...]: mean, then log-variance
  void check_video(const Tensor& video) const;
  WanVaeConfig config_;
  DType activation_;
  std::map<std::string, Tensor> weights_;
};

// Every tensor a config implies, with its shape, under diffusers' names (the state dict of AutoencoderKLWan).
std::map<std::string, Shape> wan_vae_tensor_shapes(const WanVaeConfig& config);

// FormatError unless `weights` holds every tensor wan_vae_tensor_shapes(config) lists, floating-point and of that
// shape: a missing one names `where` (the folder), a misshapen one the file file_of says it came from (a name
// within `where`), each with the tensor, what was expected and what was found. Extra tensors are ignored.
void check_wan_vae_weights(const WanVaeConfig& config, const std::map<std::string, Tensor>& weights,
                           const std::string& where, const std::map<std::string, std::string>& file_of = {});

// A diffusers folder: config.json and diffusion_pytorch_model.safetensors (or its sharded form with
// diffusion_pytorch_model.safetensors.index.json, which wins when both are there, as in diffusers), read through
// model/formats/folder_files.h. FormatError naming the file for anything missing or wrong.
WanVae load_wan_vae(const std::filesystem::path& dir, DType activation = DType::f32);

}  // namespace fourfold::model
