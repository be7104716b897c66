#include "check/vae_workload.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "check/error_metrics.h"
#include "check/memory_workload.h"
#include "check/statistics.h"
#include "fourfold/errors.h"
#include "model/vae/synthetic_inputs.h"
#include "model/vae/wan_vae.h"
#include "model/vae/wan_vae_presets.h"
#include "model/vae/tiled.h"

namespace fourfold {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

uint64_t pad_calls_since_reset() {
  for (const DispatchCount& d : dispatch_counts())
    if (d.op == "constant_pad_nd") return d.calls[0] + d.calls[1] + d.calls[2];
  return 0;
}

VaeResult run_vae_workload(const VaeWorkloadOptions& o, const Policy policies[2], const std::function<void(int)>& account,
                           const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& m) {
    if (progress) progress(m);
  };
  if (o.repeats < 1) fail<ValueError>("check", "VAE repeats", ">= 1", std::to_string(o.repeats));
  say("VAE: building the model");
  const model::WanVae vae = model::open_wan_vae(o.model_dir, o.preset, o.seed, DType::f32);
  const model::WanVaeConfig& c = vae.config();
  const int64_t s = c.scale_factor_spatial;
  const Tensor latents = model::seeded_latents(c, o.latent_frames, o.latent_height, o.latent_width, o.seed);
  const model::WanVae::Tiling tiling{o.tile, o.tile_stride};
  const int64_t tiles = model::tile_count(o.latent_height, o.latent_width,
                                          {o.tile / s, o.tile_stride / s, 0, 0, 0, 0});
  VaeResult result;
  result.description = fmt::format(
      "{} (z_dim {}, base_dim {}); tiled decode of latents {} in tiles of {} px every {} ({} tiles), {} repeats; "
      "reference decode of {} latent frames of {}x{}; round trip of {} frames of {}x{}",
      o.model_dir.empty() ? "preset " + o.preset : "model " + o.model_dir, c.z_dim, c.base_dim,
      shape_string(latents.shape()), o.tile, o.tile_stride, tiles, o.repeats, o.reference_frames, o.reference_size,
      o.reference_size, o.round_trip_frames, o.round_trip_size, o.round_trip_size);
  const auto under = [&](int side, const std::function<void()>& work) {
    ScopedPolicy scope(policies[side]);
    reset_dispatch_counts();
    work();
    if (account) account(side);
  };
  const auto decode = [&] { return vae.decode_tiled(latents, tiling); };

  // Warm-up, which also counts one decode's pad calls.
  Shape decoded;
  for (int side = 0; side < 2; ++side) {
    say(fmt::format("VAE: warm-up decode under '{}'", policies[side].to_string()));
    under(side, [&] {
      decoded = decode().shape();
      VaeThroughputRow row;
      row.name = "tiled decode";
      row.frames = decoded[2];
      row.height = decoded[3];
      row.width = decoded[4];
      row.tiles = tiles;
      row.pad_calls = static_cast<int64_t>(pad_calls_since_reset());
      result.sides[side].throughput.rows.push_back(row);
      result.sides[side].throughput.warmup_runs = 1;
    });
  }
  for (int r = 0; r < o.repeats; ++r)
    for (int side = 0; side < 2; ++side) {
      say(fmt::format("VAE: tiled decode, repeat {}/{}", r + 1, o.repeats));
      under(side, [&] {
        const auto start = Clock::now();
        const Tensor v = decode();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        result.sides[side].throughput.rows[0].samples_frames_per_s.push_back(static_cast<double>(v.size(2)) / seconds);
      });
    }
  for (VaeSide& side : result.sides) {
    VaeThroughputRow& row = side.throughput.rows[0];
    row.median_frames_per_s = median(row.samples_frames_per_s);
    row.min_frames_per_s = min_of(row.samples_frames_per_s);
    row.max_frames_per_s = max_of(row.samples_frames_per_s);
  }

  for (int side = 0; side < 2; ++side) {
    say(fmt::format("VAE: memory of the tiled decode under '{}'", policies[side].to_string()));
    under(side, [&] { result.sides[side].memory = measure_memory([&] { decode(); }); });
  }

  say("VAE: reference-tier decode (float64)");
  const Tensor small = model::seeded_latents(c, o.reference_frames, o.reference_size, o.reference_size, o.seed + 1);
  Tensor reference;
  {
    ScopedPolicy scope(Policy::parse("reference"));
    reference = vae.decode(small).to(DType::f64);
  }
  const Tensor scene = model::synthetic_scene(o.round_trip_frames, o.round_trip_size, o.round_trip_size, o.seed);
  const Tensor scene64 = scene.to(DType::f64);
  for (int side = 0; side < 2; ++side) {
    say(fmt::format("VAE: correctness under '{}'", policies[side].to_string()));
    under(side, [&] {
      result.sides[side].decode = {"vae_decode", compare_to_reference(vae.decode(small), reference).psnr_db, {}, {}};
      result.sides[side].round_trip = {"vae_round_trip",
                                       compare_to_reference(vae.decode(vae.encode(scene)), scene64).psnr_db, {}, {}};
    });
  }
  return result;
}

}  // namespace fourfold
