// The tables are made once per decoder for its whole context and narrowed per call.
#include "model/llm/rotary.h"

#include <cmath>
#include <numbers>

#include "fourfold/errors.h"

namespace fourfold::model {

std::vector<double> rope_inverse_frequencies(const ModelConfig& c) {
  // A partial rotary (the hybrids': the first rotary_dim dims of each head) takes its frequencies over those dims.
  const int64_t dim = c.rotary_dim(), half = dim / 2;
  std::vector<double> inv(half);
  for (int64_t i = 0; i < half; ++i)
    inv[i] = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(dim));
  if (!c.rope_scaling) return inv;
  const RopeScaling& s = *c.rope_scaling;
  if (s.rope_type == "linear") {   // positions divided by factor, which is the same as every frequency
    for (double& f : inv) f /= s.factor;
    return inv;
  }
  if (s.rope_type != "llama3") fail<ValueError>("rotary", "rope_scaling.rope_type", "linear or llama3", s.rope_type);
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
  for (double& f : inv) {
    const double wavelen = 2.0 * std::numbers::pi / f;
    if (wavelen < high_wavelen) continue;              // high frequencies: unchanged
    if (wavelen > low_wavelen) {                       // low frequencies: slowed by `factor`
      f /= s.factor;
      continue;
    }
    const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    f = (1.0 - smooth) * f / s.factor + smooth * f;
  }
  return inv;
}

RotaryTables rotary_tables(const ModelConfig& config, int64_t positions, DType dtype) {
  const std::vector<double> inv = rope_inverse_frequencies(config);
  const int64_t half = static_cast<int64_t>(inv.size());
  std::vector<double> c(positions * half), s(positions * half);
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * inv[i];
      c[p * half + i] = std::cos(angle);
      s[p * half + i] = std::sin(angle);
    }
  return {Tensor::from_vector(c, {positions, half}, dtype), Tensor::from_vector(s, {positions, half}, dtype)};
}

}  // namespace fourfold::model
