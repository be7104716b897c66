// The hybrid checkpoints' layouts, each brought to the qwen3_5 names by views where the bytes allow it.
#include "model/llm/hybrid_checkpoint.h"

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The layer index in "model.layers.<l>.<rest>", or -1.
int64_t layer_of(const std::string& name) {
  if (!starts_with(name, "model.layers.")) return -1;
  const size_t begin = 13, end = name.find('.', begin);
  if (end == std::string::npos || end == begin) return -1;
  try {
    return std::stoll(name.substr(begin, end - begin));
  } catch (const std::exception&) {
    return -1;
  }
}

// `to` holds t, from the file `from` came from (the caller drops `from` once every part of it is named).
void rename(TensorMap& w, std::map<std::string, std::string>& file_of, const std::string& from, const std::string& to,
            const Tensor& t) {
  const auto f = file_of.find(from);
  if (f != file_of.end()) file_of[to] = f->second;
  w[to] = t;
}

void require_rank(const Tensor& t, int rank, const std::string& where, const std::string& name, const char* layout) {
  if (t.dim() != rank)
    fail<FormatError>(where, name, fmt::format("a {}-D tensor {}", rank, layout), shape_string(t.shape()));
  if (is_fp8(t.dtype()))
    fail<UnsupportedError>(where, name, "a bf16, f16 or f32 tensor (fused FP8 tensors are not read)",
                           std::string(dtype_name(t.dtype())));
}

// transformers 5's fused experts of one layer: gate_up_proj [E, 2I, H] (gate rows first), down_proj [E, H, I].
void split_fused_experts(const ModelConfig& c, TensorMap& w, std::map<std::string, std::string>& file_of,
                         const std::string& name, const std::string& where) {
  const int64_t layer = layer_of(name);
  const Tensor fused = w.at(name);
  const bool gate_up = ends_with(name, ".gate_up_proj") || ends_with(name, ".gate_up_proj.weight");
  require_rank(fused, 3, where, name, gate_up ? "[E, 2I, H]" : "[E, H, I]");
  if (gate_up && fused.size(1) % 2 != 0)
    fail<FormatError>(where, name, "[E, 2I, H] with an even middle dim", shape_string(fused.shape()));
  for (int64_t e = 0; e < fused.size(0); ++e) {
    const Tensor expert = fused.select(0, e);
    if (gate_up) {
      const int64_t i = fused.size(1) / 2;
      rename(w, file_of, name, expert_weight(layer, e, "gate_proj"), expert.narrow(0, 0, i));
      rename(w, file_of, name, expert_weight(layer, e, "up_proj"), expert.narrow(0, i, i));
    } else {
      rename(w, file_of, name, expert_weight(layer, e, "down_proj"), expert);
    }
  }
  (void)c;
  w.erase(name);
  file_of.erase(name);
}

// Qwen3-Next's in_proj_qkvz [Hk * (2 Dk + 2 r Dv), H] holds, per key head, its q, k, r value heads' v and their z;
// in_proj_ba [Hk * 2r, H] per key head r b's then r a's. transformers reorders them into q | k | v and z, b, a.
void split_qwen3_next(const ModelConfig& c, TensorMap& w, std::map<std::string, std::string>& file_of,
                      std::map<std::string, std::string>& copied, int64_t layer, const std::string& where) {
  const LinearAttentionConfig& la = c.linear;
  const int64_t hk = la.num_key_heads, dk = la.key_head_dim, dv = la.value_head_dim, r = la.num_value_heads / hk;
  const int64_t group = 2 * dk + 2 * r * dv;
  const std::string qkvz = layer_weight(layer, "linear_attn.in_proj_qkvz.weight");
  const std::string ba = layer_weight(layer, "linear_attn.in_proj_ba.weight");
  const Tensor a = w.at(qkvz), b = w.at(ba);
  require_rank(a, 2, where, qkvz, "[rows, H]");
  require_rank(b, 2, where, ba, "[rows, H]");
  if (a.size(0) != hk * group)
    fail<FormatError>(where, qkvz, fmt::format("{} rows (per key head 2 x {} + 2 x {} x {})", hk * group, dk, r, dv),
                      shape_string(a.shape()));
  if (b.size(0) != 2 * la.num_value_heads)
    fail<FormatError>(where, ba, fmt::format("{} rows (2 per value head)", 2 * la.num_value_heads), shape_string(b.shape()));
  const int64_t h = a.size(1);
  Tensor qkv = Tensor::empty({la.conv_dim(), h}, a.dtype()), z = Tensor::empty({la.value_dim(), h}, a.dtype());
  Tensor beta = Tensor::empty({la.num_value_heads, h}, b.dtype()), alpha = Tensor::empty({la.num_value_heads, h}, b.dtype());
  for (int64_t g = 0; g < hk; ++g) {
    const Tensor part = a.narrow(0, g * group, group);
    qkv.narrow(0, g * dk, dk).copy_from(part.narrow(0, 0, dk));
    qkv.narrow(0, la.key_dim() + g * dk, dk).copy_from(part.narrow(0, dk, dk));
    qkv.narrow(0, 2 * la.key_dim() + g * r * dv, r * dv).copy_from(part.narrow(0, 2 * dk, r * dv));
    z.narrow(0, g * r * dv, r * dv).copy_from(part.narrow(0, 2 * dk + r * dv, r * dv));
    beta.narrow(0, g * r, r).copy_from(b.narrow(0, g * 2 * r, r));
    alpha.narrow(0, g * r, r).copy_from(b.narrow(0, g * 2 * r + r, r));
  }
  const auto put = [&](const std::string& from, const char* suffix, const Tensor& t) {
    const std::string to = layer_weight(layer, suffix);
    rename(w, file_of, from, to, t);
    copied[to] = fmt::format("Qwen3-Next's head-grouped {} reordered to transformers' rows (a copy)",
                             from.substr(from.rfind("in_proj")));
  };
  put(qkvz, "linear_attn.in_proj_qkv.weight", qkv);
  put(qkvz, "linear_attn.in_proj_z.weight", z);
  put(ba, "linear_attn.in_proj_b.weight", beta);
  put(ba, "linear_attn.in_proj_a.weight", alpha);
  w.erase(qkvz);
  w.erase(ba);
  file_of.erase(qkvz);
  file_of.erase(ba);
}

}  // namespace

void normalize_hybrid_checkpoint(ModelConfig& c, TensorMap& weights, std::map<std::string, std::string>& file_of,
                                 std::map<std::string, std::string>& copied, const std::string& where) {
  TensorMap renamed;
  std::map<std::string, std::string> files;
  int64_t ignored = 0;
  const std::string prefix = c.weight_prefix();
  for (auto& [name, t] : weights) {
    std::string to = name;
    if (starts_with(name, "mtp.") || starts_with(name, "model.mtp.") || starts_with(name, "model.visual.") ||
        starts_with(name, "visual.")) {
      ++ignored;
      continue;
    }
    if (!c.wrapper.empty() && starts_with(name, prefix)) to = "model." + name.substr(prefix.size());
    renamed[to] = t;
    const auto f = file_of.find(name);
    if (f != file_of.end()) files[to] = f->second;
  }
  weights = std::move(renamed);
  file_of = std::move(files);
  if (ignored > 0)
    c.notes.push_back(fmt::format("{} tensors of the vision tower and the multi-token-prediction head not read "
                                  "(model.visual.*, mtp.*)", ignored));
  std::vector<std::string> fused;
  for (const auto& [name, t] : weights)
    if (ends_with(name, ".mlp.experts.gate_up_proj") || ends_with(name, ".mlp.experts.down_proj") ||
        ends_with(name, ".mlp.experts.gate_up_proj.weight") || ends_with(name, ".mlp.experts.down_proj.weight"))
      fused.push_back(name);
  for (const std::string& name : fused) split_fused_experts(c, weights, file_of, name, where);
  c.fused_experts = !fused.empty();
  if (c.model_type != "qwen3_next") return;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    if (c.is_linear_layer(l) && weights.count(layer_weight(l, "linear_attn.in_proj_qkvz.weight")) &&
        weights.count(layer_weight(l, "linear_attn.in_proj_ba.weight")))
      split_qwen3_next(c, weights, file_of, copied, l, where);
}

}  // namespace fourfold::model
