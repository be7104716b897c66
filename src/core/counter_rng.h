// Counter-based random numbers: value = f(seed, counter), so the same seed gives the same bytes whatever the
// thread count or chunking. splitmix64's finalizer is the mixing function (a bijection on 64 bits).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace fourfold {

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t counter_bits(uint64_t seed, uint64_t counter) {
  return mix64(mix64(seed + 0x9E3779B97F4A7C15ull) ^ (counter * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
}

// Uniform in [0, 1) with 53 random bits.
inline double counter_uniform(uint64_t seed, uint64_t counter) {
  return static_cast<double>(counter_bits(seed, counter) >> 11) * 0x1.0p-53;
}

// Standard normal by Box-Muller from the uniforms at counters 2i and 2i+1 (one value per element: the
// second Box-Muller output is dropped so that element i depends on nothing but i).
inline double counter_normal(uint64_t seed, uint64_t i) {
  const double u1 = 1.0 - counter_uniform(seed, 2 * i);   // (0, 1]: log is finite
  const double u2 = counter_uniform(seed, 2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace fourfold
