#include "model/vae/wan_vae_config.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/checked_math.h"
#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/checked_json.h"

namespace fourfold::model {
namespace {

using nlohmann::json;

// Bounds on the sizes a config may state. Real Wan configs: base_dim 96 / 160, decoder_base_dim 256, z_dim 16 /
// 48, dim_mult [1, 2, 4, 4], num_res_blocks 2, patch_size 1 / 2, 3 / 12 channels. The bounds are generous (a
// research variant fits well inside) yet keep every product of them - a conv weight of the widest stage, a
// channel count times patch_size^2, the scale factors - far inside 64 bits, and the module tree small enough to
// build at once: num_res_blocks 10^7 would otherwise build for ever before any weight is checked.
constexpr int64_t kMaxDim = 4096;           // base_dim, decoder_base_dim
constexpr int64_t kMaxZDim = 1024;
constexpr int64_t kMaxStages = 8;           // entries of dim_mult
constexpr int64_t kMaxDimMult = 64;
constexpr int64_t kMaxResBlocks = 64;
constexpr int64_t kMaxChannels = 1024;      // in_channels, out_channels
constexpr int64_t kMaxPatch = 16;
constexpr int64_t kMaxScaleFactor = 1 << 16;   // before the check against the network, which is far smaller
constexpr size_t kMaxAttnScales = 64;

[[noreturn]] void bad(const std::string& file, std::string_view key, std::string_view expected, std::string_view found) {
  fail_field<FormatError>(file, key, expected, found);
}

void bounded(const std::string& file, std::string_view key, int64_t value, int64_t max) {
  if (value < 1 || value > max) bad(file, key, fmt::format("an integer in [1, {}]", max), std::to_string(value));
}

// The keys of the config with diffusers' defaults where a key is absent (CheckedObject). Any integer that fits
// in int64 is read: check_wan_vae_config bounds it, for presets and files alike.
class Reader : public CheckedObject {
 public:
  using CheckedObject::CheckedObject;

  int64_t integer(const char* key, int64_t fallback) const {
    return CheckedObject::integer(key, fallback, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  }
  template <class T, class Read>
  std::vector<T> list(const char* key, std::vector<T> fallback, Read read, size_t max_size) const {
    const json* v = find(key);
    return v ? checks().elements<T>(*v, key, read, /*non_empty=*/false, max_size) : fallback;
  }
  std::vector<double> numbers(const char* key, size_t max_size) const {
    return list<double>(key, {}, [&](const json& e, const std::string& p) { return checks().number(e, p); }, max_size);
  }
};

int64_t power_of_two(int64_t exponent) { return int64_t(1) << exponent; }

// Wan 2.2's shortcuts around each residual stage: AvgDown3D folds an ft x fs x fs block of `in` channels into
// groups of `out`, DupUp3D spreads `in` channels over one; diffusers asserts that each divides.
void check_residual_shortcuts(const WanVaeConfig& c, const std::string& file) {
  const auto stages = static_cast<int64_t>(c.dim_mult.size());
  int64_t in = c.base_dim;
  for (int64_t i = 0; i < stages; ++i) {
    const int64_t out = c.base_dim * c.dim_mult[static_cast<size_t>(i)];
    const bool down = i != stages - 1;
    const int64_t factor = (down && c.temperal_downsample[static_cast<size_t>(i)] ? 2 : 1) * (down ? 4 : 1);
    if (in * factor % out != 0)
      bad(file, "dim_mult", fmt::format("encoder stage {}: {} x {} channels a multiple of {} (AvgDown3D)", i, in,
                                        factor, out), fmt::format("[{}]", fmt::join(c.dim_mult, ", ")));
    in = out;
  }
  for (int64_t i = 0; i + 1 < stages; ++i) {   // decoder stage i: dims[i] -> dims[i + 1] (see decoder_dims)
    const size_t from = i == 0 ? c.dim_mult.size() - 1 : static_cast<size_t>(stages - i);
    const int64_t block_in = c.decoder_base_dim * c.dim_mult[from];
    const int64_t out = c.decoder_base_dim * c.dim_mult[static_cast<size_t>(stages - 1 - i)];
    const int64_t factor = (c.temperal_downsample[static_cast<size_t>(stages - 2 - i)] ? 2 : 1) * 4;
    if (out * factor % block_in != 0)
      bad(file, "dim_mult", fmt::format("decoder stage {}: {} x {} channels a multiple of {} (DupUp3D)", i, out,
                                        factor, block_in), fmt::format("[{}]", fmt::join(c.dim_mult, ", ")));
  }
}

}  // namespace

int64_t WanVaeConfig::decoded_frames(int64_t latent_frames) const {
  if (latent_frames <= 0) return 0;
  return checked_add(1, checked_mul(latent_frames - 1, scale_factor_temporal, "wan vae decode", "latents' frames"),
                     "wan vae decode", "latents' frames");
}

void check_wan_vae_config(const WanVaeConfig& c, const std::string& file) {
  bounded(file, "base_dim", c.base_dim, kMaxDim);
  bounded(file, "decoder_base_dim", c.decoder_base_dim, kMaxDim);
  bounded(file, "z_dim", c.z_dim, kMaxZDim);
  bounded(file, "num_res_blocks", c.num_res_blocks, kMaxResBlocks);
  bounded(file, "in_channels", c.in_channels, kMaxChannels);
  bounded(file, "out_channels", c.out_channels, kMaxChannels);
  bounded(file, "patch_size", c.patch_size, kMaxPatch);
  bounded(file, "scale_factor_temporal", c.scale_factor_temporal, kMaxScaleFactor);
  bounded(file, "scale_factor_spatial", c.scale_factor_spatial, kMaxScaleFactor);
  const std::string dim_mult = fmt::format("[{}]", fmt::join(c.dim_mult, ", "));
  if (c.dim_mult.empty() || static_cast<int64_t>(c.dim_mult.size()) > kMaxStages)
    bad(file, "dim_mult", fmt::format("1 to {} stages", kMaxStages), dim_mult);
  for (int64_t m : c.dim_mult)
    if (m < 1 || m > kMaxDimMult) bad(file, "dim_mult", fmt::format("integers in [1, {}]", kMaxDimMult), dim_mult);
  if (c.attn_scales.size() > kMaxAttnScales)
    bad(file, "attn_scales", fmt::format("at most {} values", kMaxAttnScales), std::to_string(c.attn_scales.size()));
  if (c.temperal_downsample.size() + 1 != c.dim_mult.size())
    bad(file, "temperal_downsample", fmt::format("{} values (one per downsampling stage: len(dim_mult) - 1)",
                                                 c.dim_mult.size() - 1),
        fmt::format("{} values", c.temperal_downsample.size()));

  const int64_t patch_area = c.patch_size * c.patch_size;
  if (c.in_channels % patch_area != 0)
    bad(file, "in_channels", fmt::format("a multiple of patch_size^2 ({}): the patchified pixel channels", patch_area),
        std::to_string(c.in_channels));
  if (c.out_channels % patch_area != 0)
    bad(file, "out_channels", fmt::format("a multiple of patch_size^2 ({})", patch_area), std::to_string(c.out_channels));

  // What the network does, which the pipelines and the encoder's chunking take from these two keys: each
  // temporal downsampling stage halves the frames, each stage but the last halves the pixels, then the patches.
  const auto temporal = std::count(c.temperal_downsample.begin(), c.temperal_downsample.end(), true);
  const int64_t frames = power_of_two(temporal);
  if (c.scale_factor_temporal != frames)
    bad(file, "scale_factor_temporal", fmt::format("{} (2^{}: the true entries of temperal_downsample)", frames, temporal),
        std::to_string(c.scale_factor_temporal));
  const auto halvings = static_cast<int64_t>(c.dim_mult.size()) - 1;
  const int64_t pixels = power_of_two(halvings) * c.patch_size;
  if (c.scale_factor_spatial != pixels)
    bad(file, "scale_factor_spatial",
        fmt::format("{} (2^{} from the {} stages of dim_mult, times patch_size {})", pixels, halvings,
                    c.dim_mult.size(), c.patch_size),
        std::to_string(c.scale_factor_spatial));

  if (!c.latents_mean.empty() && static_cast<int64_t>(c.latents_mean.size()) != c.z_dim)
    bad(file, "latents_mean", fmt::format("z_dim ({}) values", c.z_dim), fmt::format("{} values", c.latents_mean.size()));
  if (!c.latents_std.empty() && static_cast<int64_t>(c.latents_std.size()) != c.z_dim)
    bad(file, "latents_std", fmt::format("z_dim ({}) values", c.z_dim), fmt::format("{} values", c.latents_std.size()));
  for (double s : c.latents_std)
    if (!(s > 0)) bad(file, "latents_std", "positive values", fmt::format("{}", s));
  if (c.latents_mean.empty() != c.latents_std.empty()) {   // latents are z * std + mean: one alone is half of it
    const bool mean_missing = c.latents_mean.empty();
    bad(file, mean_missing ? "latents_mean" : "latents_std",
        fmt::format("z_dim ({}) values, as {} has", c.z_dim, mean_missing ? "latents_std" : "latents_mean"), "none");
  }
  if (c.is_residual) check_residual_shortcuts(c, file);
}

WanVaeConfig parse_wan_vae_config(const std::string& text, const std::string& file) {
  const json j = parse_bounded_json(text, file, "config.json");
  if (!j.is_object()) throw FormatError(fmt::format("{}: expected a JSON object (a diffusers config.json)", file));
  const Reader r(j, file);
  if (const json* cls = r.find("_class_name"); cls != nullptr && *cls != "AutoencoderKLWan")
    r.bad("_class_name", "\"AutoencoderKLWan\" (the Wan VAE)", *cls);
  WanVaeConfig c;
  c.base_dim = r.integer("base_dim", c.base_dim);
  c.decoder_base_dim = r.integer("decoder_base_dim", c.base_dim);
  c.z_dim = r.integer("z_dim", c.z_dim);
  const CheckedJson& check = r.checks();
  c.dim_mult = r.list<int64_t>("dim_mult", c.dim_mult, [&](const json& e, const std::string& p) {
    return check.integer(e, p, std::numeric_limits<int64_t>::min());
  }, kMaxStages);
  c.num_res_blocks = r.integer("num_res_blocks", c.num_res_blocks);
  c.attn_scales = r.numbers("attn_scales", kMaxAttnScales);
  c.temperal_downsample = r.list<bool>("temperal_downsample", c.temperal_downsample,
                                       [&](const json& e, const std::string& p) { return check.boolean(e, p); }, kMaxStages);
  c.is_residual = r.boolean("is_residual", false);
  c.in_channels = r.integer("in_channels", 3);
  c.out_channels = r.integer("out_channels", 3);
  c.patch_size = r.integer("patch_size", 1);
  c.scale_factor_temporal = r.integer("scale_factor_temporal", 4);
  c.scale_factor_spatial = r.integer("scale_factor_spatial", 8);
  c.latents_mean = r.numbers("latents_mean", kMaxZDim);
  c.latents_std = r.numbers("latents_std", kMaxZDim);
  check_wan_vae_config(c, file);
  return c;
}

}  // namespace fourfold::model
