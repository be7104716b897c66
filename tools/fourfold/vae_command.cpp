// fourfold vae decode | roundtrip: the Wan VAE workload (src/model/vae) on a diffusers folder or a preset
// built in memory, writing PNG frames and printing the records: frames/s and megapixels/s, time per op (the
// conv and pad rows), round-trip PSNR (and, on request, the decode against the float64 reference tier), and
// memory at three levels with "outside the allocator" and the pad calls on their own lines.
#include <algorithm>
#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/error_metrics.h"
#include "check/memory_workload.h"
#include "check/report_tables.h"
#include "check/vae_workload.h"
#include "commands.h"
#include "core/file_io.h"
#include "fourfold/allocator.h"
#include "fourfold/errors.h"
#include "fourfold/policy.h"
#include "fourfold/profile.h"
#include "model/formats/npy.h"
#include "model/formats/png_frames.h"
#include "model/vae/synthetic_inputs.h"
#include "model/vae/wan_vae.h"
#include "model/vae/wan_vae_presets.h"

namespace fourfold::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct VaeOptions {
  std::string model_dir, preset = "wan2.1-vae-tiny", dtype = "f32", out_dir, latents_path, frames_dir, npy_path;
  std::vector<std::string> force;
  int64_t latent_frames = 3, latent_height = 8, latent_width = 8;   // decode: seeded latents
  int64_t frames = 5, height = 64, width = 64;                      // roundtrip: the synthetic scene
  uint64_t seed = 0;
  bool against_reference = false;
  int threads = 0;
  int64_t tile = 0, tile_stride = 192;   // diffusers' enable_tiling sizes in pixels; 0: untiled
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

model::WanVae open_vae(const VaeOptions& o) {
  return model::open_wan_vae(o.model_dir, o.preset, o.seed, parse_dtype(o.dtype));
}

void print_profile(double total_seconds) {
  fmt::print("op time (outermost calls; % of the workload's wall time):\n");
  for (const OpProfileRow& r : op_profile_rows())
    fmt::print("  {:<30} {:<10} {:>7} calls {:>10.1f} ms {:>6.1f}%  {:>7.2f} GB/s\n", r.op, r.tier, r.calls,
               r.seconds * 1e3, 100 * r.seconds / total_seconds, r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0);
}

void print_memory(const MemoryRecord& m, uint64_t pads, int64_t weights) {
  using report::bytes_text;
  fmt::print("memory (process): rss peak {} (anon {}, file {}), {} before the workload{}\n",
             bytes_text(int64_t(m.process_peak_bytes)), bytes_text(int64_t(m.process_peak_anon_bytes)),
             bytes_text(int64_t(m.process_peak_file_bytes)), bytes_text(int64_t(m.present_before_bytes)),
             m.peak_reset_supported ? "" : " [sampled peak: the kernel's could not be reset]");
  fmt::print("memory (allocator): reserved peak {} ({} before the workload), allocated peak {}\n",
             bytes_text(int64_t(m.reserved_peak_bytes)), bytes_text(int64_t(m.reserved_before_bytes)),
             bytes_text(int64_t(m.allocated_peak_bytes)));
  fmt::print("memory (outside the allocator): {} = (rss peak {} - {} before) - (reserved peak {} - {} before) + {} "
             "reserved never touched; the weights are {}\n",
             bytes_text(outside_allocator_bytes(m)), bytes_text(int64_t(m.process_peak_bytes)),
             bytes_text(int64_t(m.present_before_bytes)), bytes_text(int64_t(m.reserved_peak_bytes)),
             bytes_text(int64_t(m.reserved_before_bytes)), bytes_text(m.reserved_untouched_bytes), bytes_text(weights));
  fmt::print("pad calls: {}\n", pads);
}

// The tiled decode's promise: the allocator's cache serves every tile after the first, so what it reserves
// stops growing once one tile of each shape has run (edge tiles are smaller than the inner ones).
void print_reserved_per_tile(const std::vector<uint64_t>& reserved) {
  if (reserved.size() < 2) return;
  const uint64_t growth = reserved.back() - std::min(reserved.back(), reserved[1]);
  fmt::print("memory (allocator) per tile: reserved after tile 1 {}, after tile 2 {}, after the last {} "
             "(growth from tile 2 on: {})\n", report::bytes_text(int64_t(reserved[0])),
             report::bytes_text(int64_t(reserved[1])), report::bytes_text(int64_t(reserved.back())),
             report::bytes_text(int64_t(growth)));
}

// Runs `work` (which returns the decoded video) with the profile and the memory record around it.
template <class F>
Tensor measured(const char* what, const model::WanVae& vae, F&& work, double& seconds) {
  reset_dispatch_counts();
  start_op_profile();
  Tensor out;
  Clock::time_point start;
  const MemoryRecord memory = measure_memory([&] {
    start = Clock::now();
    out = work();
    seconds = seconds_since(start);
  });
  stop_op_profile();
  fmt::print("{}: {:.3f} s\n", what, seconds);
  print_profile(seconds);
  print_memory(memory, pad_calls_since_reset(), vae.parameter_bytes());
  return out;
}

void print_header(const model::WanVae& vae, const VaeOptions& o) {
  const model::WanVaeConfig& c = vae.config();
  fmt::print("vae: {} ({} layout, base_dim {}, z_dim {}, dim_mult [{}], {} residual blocks per stage), "
             "activations {}, weights {}\n",
             o.model_dir.empty() ? "preset " + o.preset : o.model_dir,
             c.is_residual ? fmt::format("Wan 2.2 residual, patch size {}", c.patch_size) : std::string("Wan 2.1"),
             c.base_dim, c.z_dim,
             fmt::join(c.dim_mult, ", "), c.num_res_blocks, dtype_name(vae.activation()),
             report::bytes_text(vae.parameter_bytes()));
}

// --out: the frames of one run are staged and swapped in together, so a killed run leaves the previous run's
// frames (never truncated ones under final names) and a shorter run leaves none of a longer one's behind. The
// folder may hold only frames these commands write.
std::optional<OutputFolder> frames_folder(const VaeOptions& o) {
  if (o.out_dir.empty()) return std::nullopt;
  static const std::regex frame_name(R"((frame|decoded|input)_\d{4,}\.png)");
  return std::optional<OutputFolder>(std::in_place, o.out_dir,
                                     OwnedNames([](const std::string& name) { return std::regex_match(name, frame_name); }),
                                     "--out");
}

void finish(const Tensor& video, const VaeOptions& o, std::optional<OutputFolder>& out, double seconds,
            const char* name) {
  const int64_t frames = video.size(2), h = video.size(3), w = video.size(4);
  fmt::print("throughput: {} frames of {}x{} in {:.3f} s: {:.3f} frames/s, {:.3f} megapixels/s\n", frames, w, h,
             seconds, frames / seconds, frames * h * w / seconds / 1e6);
  if (out) {
    const auto paths = model::write_png_frames(out->staging(), video, name);
    fmt::print("wrote {} PNG frames to {}\n", paths.size(), o.out_dir);
  }
}

Policy policy_of(const VaeOptions& o) {
  std::string text;
  for (const std::string& f : o.force) text += (text.empty() ? "" : ",") + f;
  return text.empty() ? current_policy() : Policy::parse(text);
}

void against_reference(const model::WanVae& vae, const Tensor& latents, const Tensor& decoded) {
  ScopedPolicy scope(Policy::parse("reference"));
  const Tensor ref = vae.decode(latents);
  const ErrorStats s = compare_to_reference(decoded, ref.to(DType::f64));
  fmt::print("correctness: decode against the reference tier: PSNR {:.2f} dB, max abs {:.3g}\n", s.psnr_db, s.max_abs);
}

std::string vae_input(const VaeOptions& o) { return o.model_dir.empty() ? "preset " + o.preset : "model " + o.model_dir; }

void decode_command(const VaeOptions& o) {
  apply_threads(o.threads);
  ScopedPolicy scope(policy_of(o));
  std::optional<OutputFolder> out = frames_folder(o);   // refused now, not after the decode
  if (!o.npy_path.empty()) check_output_path(o.npy_path, "--npy");
  set_current_input("VAE " + vae_input(o));
  const model::WanVae vae = open_vae(o);
  print_header(vae, o);
  set_current_input(fmt::format("VAE {}, latents {}", vae_input(o),
                                o.latents_path.empty() ? fmt::format("seeded {}x{}x{}", o.latent_frames,
                                                                     o.latent_height, o.latent_width)
                                                       : o.latents_path));
  const Tensor latents = o.latents_path.empty()
                             ? model::seeded_latents(vae.config(), o.latent_frames, o.latent_height, o.latent_width, o.seed)
                             : model::read_npy(o.latents_path);
  fmt::print("latents: {}\n", shape_string(latents.shape()));
  double seconds = 0;
  std::vector<uint64_t> reserved_after_tile;
  const Tensor video = measured("decode", vae, [&] {
    if (o.tile > 0) {
      fmt::print("tiling: tiles of {} pixels every {} (blended over {})\n", o.tile, o.tile_stride, o.tile - o.tile_stride);
      return vae.decode_tiled(latents, {o.tile, o.tile_stride}, [&](int64_t i, int64_t n) {
        reserved_after_tile.push_back(cpu_allocator().stats().reserved_bytes);
        fmt::print(stderr, "decode: tile {}/{} done, allocator reserved {}\n", i + 1, n,
                   report::bytes_text(int64_t(reserved_after_tile.back())));
      });
    }
    return vae.decode(latents, [](int64_t i, int64_t n) { fmt::print(stderr, "\rdecode: latent frame {}/{}", i + 1, n); });
  }, seconds);
  fmt::print(stderr, "\n");
  print_reserved_per_tile(reserved_after_tile);
  finish(video, o, out, seconds, "frame");
  if (out) out->commit();
  if (!o.npy_path.empty()) model::write_npy(o.npy_path, video.to(DType::f32));
  if (o.against_reference) against_reference(vae, latents, video);
}

void roundtrip_command(const VaeOptions& o) {
  apply_threads(o.threads);
  ScopedPolicy scope(policy_of(o));
  std::optional<OutputFolder> out = frames_folder(o);
  set_current_input("VAE " + vae_input(o));
  const model::WanVae vae = open_vae(o);
  print_header(vae, o);
  set_current_input(fmt::format("VAE {}, frames {}", vae_input(o),
                                o.frames_dir.empty() ? fmt::format("synthetic {}x{}x{}", o.frames, o.height, o.width)
                                                     : o.frames_dir));
  const Tensor video = o.frames_dir.empty() ? model::synthetic_scene(o.frames, o.height, o.width, o.seed)
                                            : model::read_png_frames(o.frames_dir);
  fmt::print("input: {} ({})\n", shape_string(video.shape()), o.frames_dir.empty() ? "synthetic scene" : o.frames_dir);
  const auto start = Clock::now();
  const Tensor latents = o.tile > 0 ? vae.encode_tiled(video, {o.tile, o.tile_stride}) : vae.encode(video);
  fmt::print("encode: {:.3f} s, latents {}\n", seconds_since(start), shape_string(latents.shape()));
  double seconds = 0;
  const Tensor decoded = measured("decode", vae, [&] {
    return o.tile > 0 ? vae.decode_tiled(latents, {o.tile, o.tile_stride},
                                         [](int64_t i, int64_t n) { fmt::print(stderr, "decode: tile {}/{} done\n", i + 1, n); })
                      : vae.decode(latents);
  }, seconds);
  finish(decoded, o, out, seconds, "decoded");
  if (out) {
    model::write_png_frames(out->staging(), video, "input");
    out->commit();
  }
  const ErrorStats s = compare_to_reference(decoded, video.to(DType::f64));
  fmt::print("correctness: round trip PSNR {:.2f} dB against the input (max abs {:.3g}){}\n", s.psnr_db, s.max_abs,
             o.model_dir.empty() ? " [random weights: a preset is not a trained autoencoder]" : "");
  if (o.against_reference) against_reference(vae, latents, decoded);
}

void add_common(CLI::App& cmd, VaeOptions& o) {
  cmd.add_option("--model", o.model_dir, "a diffusers AutoencoderKLWan folder (config.json + safetensors)");
  cmd.add_option("--preset", o.preset, "a VAE built in memory: wan2.1-vae-tiny, wan2.1-vae, wan2.2-vae-tiny, wan2.2-vae")
      ->capture_default_str();
  cmd.add_option("--dtype", o.dtype, "activations: f32 or bf16")->capture_default_str()->check(CLI::IsMember({"f32", "bf16"}));
  cmd.add_option("--out", o.out_dir, "write PNG frames here");
  cmd.add_option("--seed", o.seed, "seed of the preset's weights and of the synthetic inputs")->capture_default_str();
  cmd.add_option("--force", o.force, "policy: a tier for all ops or op=tier, repeatable");
  cmd.add_flag("--against-reference", o.against_reference, "also decode on the float64 reference tier and compare");
  cmd.add_option("--tile", o.tile, "tiled encode/decode: tiles of this many pixels (a multiple of 8; 0: untiled)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  cmd.add_option("--tile-stride", o.tile_stride, "tiled: a tile every this many pixels (<= --tile)")
      ->capture_default_str()->check(CLI::Range(int64_t(8), int64_t(1) << 20));
  add_threads_option(cmd, o.threads);
}

}  // namespace

void register_vae(CLI::App& app) {
  auto* vae = app.add_subcommand("vae", "the Wan video VAE: decode latents, or encode and decode a video");
  vae->require_subcommand(1);
  static VaeOptions d, r;
  auto* dec = vae->add_subcommand("decode", "decode latents (a .npy, or seeded) to PNG frames");
  add_common(*dec, d);
  dec->add_option("--latents", d.latents_path, "latents [1, z_dim, T, h, w] as .npy (default: seeded)");
  dec->add_option("--npy", d.npy_path, "also write the decoded video [1, C, T, H, W] as f32 .npy (to compare engines)");
  dec->add_option("--latent-frames", d.latent_frames, "seeded latents: frames")->check(CLI::Range(1, 4096))->capture_default_str();
  dec->add_option("--latent-height", d.latent_height, "seeded latents: height")->check(CLI::Range(1, 4096))->capture_default_str();
  dec->add_option("--latent-width", d.latent_width, "seeded latents: width")->check(CLI::Range(1, 4096))->capture_default_str();
  dec->callback([] { decode_command(d); });
  auto* rt = vae->add_subcommand("roundtrip", "encode a video (PNG frames or a synthetic scene) and decode it");
  add_common(*rt, r);
  rt->add_option("--frames-dir", r.frames_dir, "a folder of PNG frames (1 + 4k of them, sides multiples of the spatial factor)");
  rt->add_option("--frames", r.frames, "synthetic scene: frames (1 + 4k)")->check(CLI::Range(1, 4097))->capture_default_str();
  rt->add_option("--height", r.height, "synthetic scene: height (a multiple of 8; 16 for Wan 2.2)")->check(CLI::Range(8, 8192))->capture_default_str();
  rt->add_option("--width", r.width, "synthetic scene: width (a multiple of 8; 16 for Wan 2.2)")->check(CLI::Range(8, 8192))->capture_default_str();
  rt->callback([] { roundtrip_command(r); });
}

}  // namespace fourfold::cli
