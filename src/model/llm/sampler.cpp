// Sampling goes through the op API (argmax, topk, softmax, mul); only the draw over the kept probabilities is
// host code.
#include "model/llm/sampler.h"

#include <algorithm>
#include <vector>

#include "fourfold/errors.h"
#include "fourfold/ops.h"

namespace fourfold::model {

Sampler::Sampler(const SamplerOptions& o) : options_(o), state_(o.seed) {
  if (!(o.temperature >= 0.0)) fail<ValueError>("sampler", "temperature", ">= 0", std::to_string(o.temperature));
  if (o.top_k < 0) fail<ValueError>("sampler", "top_k", ">= 0", std::to_string(o.top_k));
  if (!(o.top_p > 0.0 && o.top_p <= 1.0)) fail<ValueError>("sampler", "top_p", "in (0, 1]", std::to_string(o.top_p));
}

double Sampler::uniform() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);   // SplitMix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

int64_t Sampler::sample(const Tensor& logits) {
  const Tensor row = logits.reshape({logits.numel()});
  if (options_.temperature == 0.0) return static_cast<int64_t>(argmax(row).item());
  const int64_t vocab = row.numel();
  const int64_t k = options_.top_k > 0 ? std::min(options_.top_k, vocab) : vocab;
  const Tensor scaled = mul(row.to(DType::f32), Tensor::full({}, 1.0 / options_.temperature, DType::f32));
  auto [values, indices] = topk(scaled, k, -1, /*largest=*/true, /*sorted=*/true);
  const std::vector<double> p = softmax(values, -1).to_vector(), idx = indices.to_vector();
  // top-p: the most likely tokens, in order, until their mass reaches top_p (always at least one).
  size_t kept = 0;
  double mass = 0.0;
  while (kept < p.size() && (kept == 0 || mass < options_.top_p)) mass += p[kept++];
  const double u = uniform() * mass;
  double acc = 0.0;
  for (size_t i = 0; i < kept; ++i) {
    acc += p[i];
    if (u < acc) return static_cast<int64_t>(idx[i]);
  }
  return static_cast<int64_t>(idx[kept - 1]);
}

}  // namespace fourfold::model
