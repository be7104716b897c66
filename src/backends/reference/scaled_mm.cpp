// Reference scaled_mm: each FP8 element times its scale element, a float64 product plus bias, rounded once.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

constexpr int64_t kBlock = 128;

// The scale element of a[m, k] (row = m, col = k) or of b[k, n] (row = k, col = n) under `recipe`.
// For b, rowwise means one scale per column n, and block_1x128 means 128x1 blocks along K.
double scale_of_a(const Tensor& s, ScaleRecipe recipe, int64_t m, int64_t k) {
  switch (recipe) {
    case ScaleRecipe::tensorwise: return at(s, 0, 0);
    case ScaleRecipe::rowwise: return at(s, m, 0);
    case ScaleRecipe::block_1x128: return at(s, m, k / kBlock);
    case ScaleRecipe::block_128x128: return at(s, m / kBlock, k / kBlock);
  }
  return 0.0;
}

double scale_of_b(const Tensor& s, ScaleRecipe recipe, int64_t k, int64_t n) {
  switch (recipe) {
    case ScaleRecipe::tensorwise: return at(s, 0, 0);
    case ScaleRecipe::rowwise: return at(s, 0, n);
    case ScaleRecipe::block_1x128: return at(s, k / kBlock, n);
    case ScaleRecipe::block_128x128: return at(s, k / kBlock, n / kBlock);
  }
  return 0.0;
}

}  // namespace

void scaled_mm(const ScaledMmArgs& args) {
  const int64_t m_size = args.a.size(0), k_size = args.a.size(1), n_size = args.b.size(1);
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < k_size; ++k) {
        const double a = at(args.a, m, k) * scale_of_a(args.scale_a, args.recipe_a, m, k);
        const double b = at(args.b, k, n) * scale_of_b(args.scale_b, args.recipe_b, k, n);
        acc += a * b;
      }
      if (args.bias != nullptr) acc += at(*args.bias, n);
      put(args.out, Index{m, n}, acc);
    }
}

}  // namespace fourfold::ref
