#include "model/llm/kv_cache.h"

#include "fourfold/errors.h"

namespace fourfold::model {

KvCache::KvCache(const ModelConfig& c, int64_t max_context, DType dtype) : dtype_(dtype), max_context_(max_context) {
  if (dtype != DType::bf16 && dtype != DType::f32)
    fail<DTypeError>("kv cache", "dtype", "bf16 or f32", std::string(dtype_name(dtype)));
  if (max_context < 1) fail<ValueError>("kv cache", "max_context", ">= 1", std::to_string(max_context));
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (c.is_linear_layer(l)) {   // a hybrid's Gated DeltaNet layer keeps a state instead (linear_states.h)
      k_.emplace_back();
      v_.emplace_back();
      continue;
    }
    k_.push_back(Tensor::zeros({1, c.num_key_value_heads, max_context, c.head_dim}, dtype));
    v_.push_back(Tensor::zeros({1, c.num_key_value_heads, max_context, c.head_dim}, dtype));
  }
}

void KvCache::write(int64_t layer, int64_t start, const Tensor& k, const Tensor& v) {
  const int64_t t = k.size(0);
  if (start + t > max_context_)
    fail<ValueError>("kv cache", "position", "within the context of " + std::to_string(max_context_),
                     std::to_string(start + t));
  // [T, Hk, D] -> [1, Hk, T, D] views; copy_from converts to the cache's dtype.
  k_[layer].narrow(2, start, t).copy_from(k.transpose(0, 1).unsqueeze(0));
  v_[layer].narrow(2, start, t).copy_from(v.transpose(0, 1).unsqueeze(0));
}

Tensor KvCache::keys(int64_t layer, int64_t length) const { return k_[layer].narrow(2, 0, length); }
Tensor KvCache::values(int64_t layer, int64_t length) const { return v_[layer].narrow(2, 0, length); }

uint64_t KvCache::nbytes() const {
  uint64_t n = 0;
  for (size_t l = 0; l < k_.size(); ++l)
    if (k_[l].defined()) n += k_[l].nbytes() + v_[l].nbytes();
  return n;
}

uint64_t KvCache::bytes_per_position() const { return max_context_ > 0 ? nbytes() / max_context_ : 0; }

}  // namespace fourfold::model
