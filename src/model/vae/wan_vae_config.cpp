#include "model/vae/wan_vae_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/bounded_json.h"

namespace fourfold::model {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string file) : j_(j), file_(std::move(file)) {}

  [[noreturn]] void bad(const std::string& key, std::string_view expected, const json& found) const {
    std::string text = found.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    throw FormatError(fmt::format("{}: field '{}': expected {}, found {}", file_, key, expected, text));
  }
  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  int64_t integer(const char* key, int64_t fallback, int64_t min = 1) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer() || v->get<int64_t>() < min)
      bad(key, min == 1 ? "a positive integer" : fmt::format("an integer >= {}", min), *v);
    return v->get<int64_t>();
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) bad(key, "true or false", *v);
    return v->get<bool>();
  }
  template <class T, class Check>
  std::vector<T> list(const char* key, std::vector<T> fallback, std::string_view expected, Check ok) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_array()) bad(key, expected, *v);
    std::vector<T> out;
    for (const json& e : *v) {
      if (!ok(e)) bad(key, expected, *v);
      out.push_back(e.get<T>());
    }
    return out;
  }

 private:
  const json& j_;
  std::string file_;
};

}  // namespace

int64_t WanVaeConfig::decoded_frames(int64_t latent_frames) const {
  return latent_frames <= 0 ? 0 : 1 + (latent_frames - 1) * scale_factor_temporal;
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
  const auto positive = [](const json& e) { return e.is_number_integer() && e.get<int64_t>() >= 1; };
  c.dim_mult = r.list<int64_t>("dim_mult", c.dim_mult, "a non-empty list of positive integers", positive);
  if (c.dim_mult.empty()) r.bad("dim_mult", "a non-empty list of positive integers", j["dim_mult"]);
  c.num_res_blocks = r.integer("num_res_blocks", c.num_res_blocks);
  c.attn_scales = r.list<double>("attn_scales", {}, "a list of numbers", [](const json& e) { return e.is_number(); });
  c.temperal_downsample = r.list<bool>("temperal_downsample", c.temperal_downsample, "a list of true/false",
                                       [](const json& e) { return e.is_boolean(); });
  if (c.temperal_downsample.size() + 1 != c.dim_mult.size())
    r.bad("temperal_downsample", fmt::format("{} values (one per downsampling stage: len(dim_mult) - 1)",
                                             c.dim_mult.size() - 1), j["temperal_downsample"]);
  c.is_residual = r.boolean("is_residual", false);
  c.in_channels = r.integer("in_channels", 3);
  c.out_channels = r.integer("out_channels", 3);
  c.patch_size = r.integer("patch_size", 1);
  c.scale_factor_temporal = r.integer("scale_factor_temporal", 4);
  c.scale_factor_spatial = r.integer("scale_factor_spatial", 8);
  const auto number = [](const json& e) { return e.is_number(); };
  c.latents_mean = r.list<double>("latents_mean", {}, "a list of numbers", number);
  c.latents_std = r.list<double>("latents_std", {}, "a list of numbers", number);
  if (!c.latents_mean.empty() && static_cast<int64_t>(c.latents_mean.size()) != c.z_dim)
    r.bad("latents_mean", fmt::format("z_dim ({}) values", c.z_dim), j["latents_mean"]);
  if (!c.latents_std.empty() && static_cast<int64_t>(c.latents_std.size()) != c.z_dim)
    r.bad("latents_std", fmt::format("z_dim ({}) values", c.z_dim), j["latents_std"]);
  for (double s : c.latents_std)
    if (!(s > 0)) r.bad("latents_std", "positive values", j["latents_std"]);
  if (c.latents_mean.empty() != c.latents_std.empty()) {   // latents are z * std + mean: one alone is half of it
    const char* missing = c.latents_mean.empty() ? "latents_mean" : "latents_std";
    r.bad(missing, fmt::format("z_dim ({}) values, as {} has", c.z_dim, c.latents_mean.empty() ? "latents_std" : "latents_mean"),
          j.contains(missing) ? j[missing] : json());
  }
  if (c.in_channels % (c.patch_size * c.patch_size) != 0)
    r.bad("in_channels", fmt::format("a multiple of patch_size^2 ({}): the patchified pixel channels",
                                     c.patch_size * c.patch_size), j["in_channels"]);
  if (c.out_channels % (c.patch_size * c.patch_size) != 0)
    r.bad("out_channels", fmt::format("a multiple of patch_size^2 ({})", c.patch_size * c.patch_size), j["out_channels"]);
  return c;
}

}  // namespace fourfold::model
