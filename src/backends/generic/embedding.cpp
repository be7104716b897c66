// Generic embedding: a gather, one same-dtype row copy per index (the bytes move as they are, so every dtype
// is covered).
#include <vector>

#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

void embedding(const EmbeddingArgs& a) {
  const std::vector<double> indices = a.indices.to_vector();   // validated in [0, V): exact in a double
  for (size_t t = 0; t < indices.size(); ++t) {
    Tensor row = a.out.select(0, static_cast<int64_t>(t));
    copy(a.weight.select(0, static_cast<int64_t>(indices[t])), row);
  }
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(embedding) {
  t.embedding = entry(&embedding);
}

}  // namespace fourfold::generic
