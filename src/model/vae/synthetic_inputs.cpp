#include "model/vae/synthetic_inputs.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "core/counter_rng.h"

namespace fourfold::model {

Tensor seeded_latents(const WanVaeConfig& c, int64_t frames, int64_t h, int64_t w, uint64_t seed) {
  Tensor z = Tensor::empty({1, c.z_dim, frames, h, w}, DType::f32);
  z.fill_normal(seed + 17, 0.0, 1.0);
  if (c.latents_std.empty()) return z;
  std::vector<double> v = z.to_vector();
  const size_t per_channel = static_cast<size_t>(frames * h * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * c.latents_std[i / per_channel] + c.latents_mean[i / per_channel];
  return Tensor::from_vector(v, z.shape(), DType::f32);
}

Tensor synthetic_scene(int64_t frames, int64_t h, int64_t w, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(3 * frames * h * w));
  const double phase = counter_uniform(seed, 0) * 2 * std::numbers::pi;
  size_t i = 0;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t t = 0; t < frames; ++t)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x, ++i) {
          const double u = static_cast<double>(x) / static_cast<double>(w), q = static_cast<double>(y) / static_cast<double>(h);
          v[i] = 0.8 * std::sin(2 * std::numbers::pi * (u * static_cast<double>(1 + c) + q * 0.5 + 0.05 * static_cast<double>(t)) +
                                phase + static_cast<double>(c));
        }
  return Tensor::from_vector(v, {1, 3, frames, h, w}, DType::f32);
}

}  // namespace fourfold::model
