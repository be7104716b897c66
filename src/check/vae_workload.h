// The check's VAE workload: a Wan VAE (a preset built in memory, or a diffusers folder) under the
// baseline and the candidate policy. Throughput: frames/s of a multi-tile decode of seeded latents, A B
// interleaved, with the pad calls of one decode; memory at the three levels over that decode; correctness:
// each side's decode of small latents against the float64 reference tier ("vae_decode") and each side's
// encode -> decode round trip of a synthetic scene against the scene itself ("vae_round_trip").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "check/records.h"
#include "fourfold/policy.h"

namespace fourfold {

struct VaeWorkloadOptions {
  bool enabled = true;
  std::string preset = "wan2.1-vae-tiny";   // built in memory from `seed`
  std::string model_dir;                    // a diffusers folder instead
  uint64_t seed = 0;
  int64_t latent_frames = 3, latent_height = 12, latent_width = 12;   // 9 frames of 96 x 96
  int64_t tile = 64, tile_stride = 48;      // pixels: a 2 x 2 grid of tiles here
  int repeats = 3;
  // Small enough for the float64 reference tier's convolutions (a few seconds).
  int64_t reference_frames = 2, reference_size = 4;
  int64_t round_trip_frames = 5, round_trip_size = 32;
};

struct VaeSide {
  VaeThroughputRecord throughput;
  EndToEndRow decode, round_trip;
  MemoryRecord memory;
};

struct VaeResult {
  std::string description;   // for the workload's shapes
  VaeSide sides[2];
};

// constant_pad_nd calls on every tier since the dispatch counters were last reset.
uint64_t pad_calls_since_reset();

// `account(side)`: as run_end_to_end's, after each stretch under one side's policy.
VaeResult run_vae_workload(const VaeWorkloadOptions& options, const Policy policies[2],
                           const std::function<void(int)>& account,
                           const std::function<void(const std::string&)>& progress = {});

}  // namespace fourfold
