// FNV-1a, the one hash of the tree: file and prompt fingerprints in the records' workloads, and per-name seeds
// of the synthetic presets (a name mixed into the run's seed, so adding a tensor never shifts the others).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace fourfold {

inline constexpr uint64_t kFnv1aBasis = 1469598103934665603ull;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;

// Over bytes, from `basis` (a seed mixes in as kFnv1aBasis ^ seed).
inline uint64_t fnv1a64(std::string_view bytes, uint64_t basis = kFnv1aBasis) {
  uint64_t h = basis;
  for (unsigned char ch : bytes) h = (h ^ ch) * kFnv1aPrime;
  return h;
}

// Over 64-bit words, each mixed in whole (token ids: the prompt fingerprint of `run` records).
inline uint64_t fnv1a64_words(std::span<const int64_t> words) {
  uint64_t h = kFnv1aBasis;
  for (int64_t w : words) h = (h ^ static_cast<uint64_t>(w)) * kFnv1aPrime;
  return h;
}

}  // namespace fourfold
