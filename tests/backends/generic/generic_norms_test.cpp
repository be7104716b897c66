// The generic tier's layer_norm, group_norm, rms_norm_backward and embedding against the reference: dtypes,
// odd widths, non-contiguous inputs, empty dims, NaN / inf, one vs two threads.
#include <limits>
#include <string>

#include <fmt/format.h>

#include "backends/tier_check.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;
using tier_check::tol;
using tier_check::with_specials;
using testing::randn;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kTypes[] = {DType::f32, DType::bf16, DType::f16};

TEST(GenericLayerNorm, MatchesTheReference) {
  uint64_t seed = 1;
  for (DType t : kTypes)
    for (int64_t d : {1, 7, 67, 512}) {
      const Tensor x = randn({5, d}, t, seed++, 2.0), w = randn({d}, t, seed++), b = randn({d}, t, seed++);
      const std::string what = fmt::format("{} d={}", dtype_name(t), d);
      expect_matches("layer_norm", Tier::generic, [&] { return Outputs{layer_norm(x, {d}, w, b)}; }, tol(t), what);
      expect_matches("layer_norm", Tier::generic, [&] { return Outputs{layer_norm(x, {d})}; }, tol(t), what);
      expect_matches("layer_norm", Tier::generic, [&] {
        return Outputs{layer_norm(testing::non_contiguous(x), {d}, w, std::nullopt, 1e-3)};
      }, tol(t), what + " non-contiguous");
    }
  const Tensor x3 = randn({2, 3, 4, 5}, DType::f32, 9);
  expect_matches("layer_norm", Tier::generic, [&] { return Outputs{layer_norm(x3, {4, 5})}; }, tol(DType::f32), "2 dims");
  const Tensor xs = with_specials({3, 9}, DType::f32, 10, {kInf, kNaN});
  expect_matches("layer_norm", Tier::generic, [&] { return Outputs{layer_norm(xs, {9})}; }, tol(DType::f32), "specials");
}

TEST(GenericGroupNorm, MatchesTheReference) {
  uint64_t seed = 20;
  for (DType t : kTypes)
    for (auto [groups, spatial] : {std::pair<int64_t, Shape>{2, {5, 3}}, {3, {}}, {6, {7}}, {1, {2, 2, 2}}}) {
      Shape shape = {2, 6};
      shape.insert(shape.end(), spatial.begin(), spatial.end());
      const Tensor x = randn(shape, t, seed++, 2.0), w = randn({6}, t, seed++), b = randn({6}, t, seed++);
      const std::string what = fmt::format("{} groups={} rank={}", dtype_name(t), groups, shape.size());
      expect_matches("group_norm", Tier::generic, [&] { return Outputs{group_norm(x, groups, w, b)}; }, tol(t), what);
      expect_matches("group_norm", Tier::generic, [&] { return Outputs{group_norm(x, groups)}; }, tol(t), what);
      expect_matches("group_norm", Tier::generic, [&] {
        return Outputs{group_norm(testing::non_contiguous(x), groups, w, std::nullopt)};
      }, tol(t), what + " non-contiguous");
    }
}

TEST(GenericRmsNormBackward, MatchesTheReference) {
  uint64_t seed = 40;
  for (DType t : kTypes)
    for (int64_t d : {1, 9, 130}) {
      const Tensor x = randn({6, d}, t, seed++), g = randn({6, d}, t, seed++), w = randn({d}, t, seed++);
      const std::string what = fmt::format("{} d={}", dtype_name(t), d);
      // grad_weight sums over rows in another order than the reference: a few more roundings.
      tier_check::Tol tl = tol(t);
      tl.atol *= 10;
      expect_matches("rms_norm_backward", Tier::generic, [&] {
        RmsNormGrads r = rms_norm_backward(g, x, {d}, w, 1e-6);
        return Outputs{r.grad_x, r.grad_weight};
      }, tl, what);
      expect_matches("rms_norm_backward", Tier::generic, [&] {
        return Outputs{rms_norm_backward(testing::non_contiguous(g), x, {d}).grad_x};
      }, tl, what + " no weight, non-contiguous");
    }
  const Tensor x0 = randn({0, 4}, DType::f32, 50);
  expect_matches("rms_norm_backward", Tier::generic, [&] {
    RmsNormGrads r = rms_norm_backward(x0, x0, {4}, Tensor::full({4}, 1.0, DType::f32));
    return Outputs{r.grad_x, r.grad_weight};
  }, tol(DType::f32), "no rows");
}

TEST(GenericEmbedding, GathersRowsOfEveryDType) {
  uint64_t seed = 60;
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f8_e4m3fn})
    for (DType it : {DType::i32, DType::i64}) {
      const Tensor w = testing::random_bits({11, 13}, t, seed++);
      const Tensor idx = Tensor::from_vector({3, 0, 10, 3, 7, 1}, {2, 3}, it);
      expect_matches("embedding", Tier::generic, [&] { return Outputs{embedding(w, idx)}; }, {0.0, 0.0},
                     std::string(dtype_name(t)));
      expect_matches("embedding", Tier::generic, [&] { return Outputs{embedding(w.transpose(0, 1).contiguous().transpose(0, 1), idx)}; },
                     {0.0, 0.0}, std::string(dtype_name(t)) + " column-major weight");
    }
  const Tensor w = randn({4, 3}, DType::f32, 70);
  expect_matches("embedding", Tier::generic, [&] { return Outputs{embedding(w, Tensor::empty({0}, DType::i64))}; },
                 {0.0, 0.0}, "no indices");
}

}  // namespace
}  // namespace fourfold
