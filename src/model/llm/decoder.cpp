#include "model/llm/decoder.h"

#include <tuple>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "fourfold/moe.h"
#include "fourfold/profile.h"
#include "model/llm/attention.h"
#include "model/llm/dense_mlp.h"
#include "model/llm/linear_attention.h"

namespace fourfold::model {
namespace {

int64_t context_of(const ModelConfig& c, const DecoderOptions& o) {
  return o.max_context > 0 ? o.max_context : c.max_position_embeddings;
}

}  // namespace

Decoder::Decoder(ModelConfig config, ModelWeights weights, const DecoderOptions& options)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      options_(options),
      cache_(config_, context_of(config_, options), options.kv_cache),
      states_(config_, options.activation),
      rotary_(rotary_tables(config_, context_of(config_, options), options.activation)) {}

Tensor Decoder::mlp(const LayerWeights& layer, const Tensor& x) const {
  const ProfileScope scope(layer.mlp ? "mlp" : "moe");
  if (layer.mlp) return dense_mlp(x, *layer.mlp);
  const MoeWeights& moe = *layer.moe;
  const Tensor routed = moe_block(x, moe.router, moe.experts, config_.num_experts_per_tok, config_.norm_topk_prob);
  if (!moe.shared) return routed;
  // The hybrids' shared expert, scaled per token by sigmoid(shared_gate x) [T, 1].
  return add(routed, mul(dense_mlp(x, *moe.shared), sigmoid(project(x, moe.shared_gate))));
}

void Decoder::reset() {
  position_ = 0;
  saved_position_ = -1;
  states_.reset();
}

void Decoder::rewind(int64_t position) {
  if (position < 0 || position > position_)
    fail<ValueError>("decoder", "rewind position", "in [0, " + std::to_string(position_) + "]", std::to_string(position));
  if (config_.is_hybrid() && position != position_) {
    if (position == 0) {
      reset();
      return;
    }
    if (position != saved_position_)
      fail<ValueError>("decoder", "rewind position",
                       fmt::format("0 or {}, where the linear-attention states were last saved", saved_position_),
                       std::to_string(position));
    states_.restore();
  }
  position_ = position;
}

Tensor Decoder::forward(std::span<const int64_t> tokens, bool all_logits) {
  const int64_t t = static_cast<int64_t>(tokens.size()), h = config_.hidden_size;
  if (t == 0) fail<ValueError>("decoder", "tokens", "at least one token", "none");
  if (position_ + t > cache_.max_context())
    fail<ValueError>("decoder", "tokens", "a context of at most " + std::to_string(cache_.max_context()),
                     std::to_string(position_ + t));
  const Tensor ids = Tensor::from_values(std::vector<int64_t>(tokens.begin(), tokens.end()), {t}, DType::i64);
  Tensor x;
  {
    const ProfileScope scope("embedding");
    x = embedding(weights_.embed_tokens, ids).to(options_.activation);
  }
  const Tensor cos = rotary_.cos.narrow(0, position_, t), sin = rotary_.sin.narrow(0, position_, t);
  // Each residual add is fused with the RMSNorm that follows it (add_rms_norm): the sum is the new residual
  // stream, the normed sum the next block's input.
  const double eps = config_.rms_norm_eps;
  const ProfileScope norms("norm");   // the add_rms_norms; the blocks name their own calls
  Tensor normed = rms_norm(x, {h}, weights_.layers.empty() ? weights_.final_norm : weights_.layers[0].input_norm, eps);
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l) {
    const LayerWeights& layer = weights_.layers[l];
    Tensor a;
    if (layer.linear) {
      const ProfileScope scope("linear attention");
      a = linear_attention(normed, *layer.linear, config_, states_, l);
    } else {
      const ProfileScope scope("attention");
      a = attention(normed, layer.attention, config_, cos, sin, cache_, l, position_);
    }
    std::tie(normed, x) = add_rms_norm(a, x, {h}, layer.post_attention_norm, eps);
    const Tensor& next_norm = l + 1 < config_.num_hidden_layers ? weights_.layers[l + 1].input_norm : weights_.final_norm;
    std::tie(normed, x) = add_rms_norm(mlp(layer, normed), x, {h}, next_norm, eps);
  }
  position_ += t;
  if (config_.is_hybrid() && t > 1) {
    states_.save();
    saved_position_ = position_;
  }
  if (!all_logits) normed = normed.narrow(0, t - 1, 1);
  const ProfileScope scope("lm_head");
  return project(normed, weights_.lm_head).to(DType::f32);
}

Decoder build_decoder(const ModelConfig& config, TensorMap weights, const DecoderOptions& options,
                      const std::string& source) {
  return Decoder(config, bind_weights(config, std::move(weights), options.activation, source), options);
}

}  // namespace fourfold::model
