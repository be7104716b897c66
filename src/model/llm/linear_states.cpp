#include "model/llm/linear_states.h"

#include "fourfold/errors.h"

namespace fourfold::model {

LinearStates::LinearStates(const ModelConfig& c, DType conv_dtype) {
  const LinearAttentionConfig& la = c.linear;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (!c.is_linear_layer(l)) {
      conv_.emplace_back();
      recurrent_.emplace_back();
      continue;
    }
    // [1, K-1, C] in memory: the conv reads each past input as one row of channels.
    conv_.push_back(Tensor::zeros({1, la.conv_kernel - 1, la.conv_dim()}, conv_dtype));
    recurrent_.push_back(Tensor::zeros({1, la.num_value_heads, la.key_head_dim, la.value_head_dim}, DType::f32));
  }
}

Tensor LinearStates::conv(int64_t layer) const { return conv_[static_cast<size_t>(layer)].transpose(1, 2); }
Tensor LinearStates::recurrent(int64_t layer) const { return recurrent_[static_cast<size_t>(layer)]; }

void LinearStates::reset() {
  for (Tensor& t : conv_)
    if (t.defined()) t.fill(0.0);
  for (Tensor& t : recurrent_)
    if (t.defined()) t.fill(0.0);
}

void LinearStates::save() {
  saved_.clear();
  for (size_t l = 0; l < conv_.size(); ++l)
    if (conv_[l].defined()) {
      saved_.push_back(conv_[l].clone());
      saved_.push_back(recurrent_[l].clone());
    }
}

void LinearStates::restore() {
  if (saved_.empty()) fail<ValueError>("decoder", "rewind", "a position whose linear-attention state was saved", "none saved");
  size_t i = 0;
  for (size_t l = 0; l < conv_.size(); ++l)
    if (conv_[l].defined()) {
      conv_[l].copy_from(saved_[i++]);
      recurrent_[l].copy_from(saved_[i++]);
    }
}

uint64_t LinearStates::conv_bytes() const {
  uint64_t n = 0;
  for (const Tensor& t : conv_) n += t.defined() ? t.nbytes() : 0;
  return n;
}

uint64_t LinearStates::recurrent_bytes() const {
  uint64_t n = 0;
  for (const Tensor& t : recurrent_) n += t.defined() ? t.nbytes() : 0;
  return n;
}

}  // namespace fourfold::model
