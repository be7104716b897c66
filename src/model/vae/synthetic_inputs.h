// Seeded inputs of the VAE workload, shared by `fourfold vae` and the check: latents as a sampler hands them
// over, and a moving scene of smooth colour fields an autoencoder should give back.
#pragma once

#include <cstdint>

#include "fourfold/tensor.h"
#include "model/vae/wan_vae_config.h"

namespace fourfold::model {

// [1, z_dim, frames, h, w]: N(0, 1) from the seed, de-normalized by the config's latents_std / latents_mean.
Tensor seeded_latents(const WanVaeConfig& config, int64_t frames, int64_t h, int64_t w, uint64_t seed);

// [1, 3, frames, h, w] f32 in [-0.8, 0.8].
Tensor synthetic_scene(int64_t frames, int64_t h, int64_t w, uint64_t seed);

}  // namespace fourfold::model
