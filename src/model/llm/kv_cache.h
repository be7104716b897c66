// The key/value cache: one preallocated [1, Hk, max_context, D] pair per full-attention layer (a hybrid's Gated
// DeltaNet layers have none); new keys are written in place and attention reads a narrowed view, so a decode step
// never copies the past.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

class KvCache {
 public:
  KvCache(const ModelConfig& config, int64_t max_context, DType dtype);   // dtype bf16 or f32

  // Writes k and v [T, Hk, D] (any float dtype, converted) at positions [start, start + T) of `layer`.
  void write(int64_t layer, int64_t start, const Tensor& k, const Tensor& v);
  // [1, Hk, length, D] views of the first `length` positions.
  Tensor keys(int64_t layer, int64_t length) const;
  Tensor values(int64_t layer, int64_t length) const;

  DType dtype() const { return dtype_; }
  int64_t max_context() const { return max_context_; }
  uint64_t nbytes() const;                          // all layers, preallocated
  uint64_t bytes_per_position() const;              // keys and values of one position over all layers

 private:
  DType dtype_;
  int64_t max_context_;
  std::vector<Tensor> k_, v_;
};

}  // namespace fourfold::model
