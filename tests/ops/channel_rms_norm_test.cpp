// channel_rms_norm: hand cases on the reference tier, the composition it replaces (permute, rms_norm, silu,
// permute back), the generic tier and the dedicated tier at every ISA level against the reference (f32, bf16,
// f16; whole blocks of positions, vector tails, several runs; weight or none, silu or not), strided input,
// zero positions, empty tensors and bad arguments.
#include <cmath>
#include <vector>

#include "backends/dedicated_check.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

TEST(ChannelRmsNorm, HandComputed) {
  testing::ReferenceOnly ref;
  // [1, 2, 2]: position 0 holds channels (3, 4), position 1 (0, 0).
  const Tensor x = Tensor::from_vector({3, 0, 4, 0}, {1, 2, 2}, DType::f64);
  const double rms = std::sqrt(12.5);
  EXPECT_TRUE(all_close(channel_rms_norm(x, std::nullopt, 0.0), {3 / rms, NAN, 4 / rms, NAN}, 1e-15, 0));
  const Tensor w = Tensor::from_vector({2, 0.5}, {2}, DType::f64);
  EXPECT_TRUE(all_close(channel_rms_norm(x, w, 0.5), {6 / std::sqrt(13.0), 0, 2 / std::sqrt(13.0), 0}, 1e-15, 0));
  const double y = 6 / std::sqrt(13.0);
  EXPECT_NEAR(channel_rms_norm(x, w, 0.5, true).data_as<double>()[0], y / (1 + std::exp(-y)), 1e-15);
}

// The op is the composition the VAE made before it: channels last, rms_norm over C, silu, channels first.
TEST(ChannelRmsNorm, IsTheComposition) {
  testing::ReferenceOnly ref;
  for (DType dt : {DType::f64, DType::bf16}) {
    const Tensor x = randn({2, 5, 3, 4}, dt, 1), w = randn({5}, dt, 2);
    const double eps = 1e-6;
    const Tensor composed = rms_norm(x.permute({0, 2, 3, 1}).contiguous(), {5}, w, eps).permute({0, 3, 1, 2});
    EXPECT_TRUE(testing::bit_equal(channel_rms_norm(x, w, eps), composed.contiguous())) << dtype_name(dt);
    EXPECT_TRUE(testing::bit_equal(channel_rms_norm(x, w, eps, true), silu(composed.contiguous()))) << dtype_name(dt);
  }
}

testing::Tolerance tolerance(DType dtype) {
  const testing::Tolerance t = testing::product_tolerance(dtype);
  return {t.rtol * 4, t.atol * 4};
}

// [1, 96, 7, 9]: 63 positions, a vector tail only; [2, 48, 2, 20, 33]: 1320 positions per image, three runs of
// up to 512 and blocks of 4 vectors; rank 3 (conv1d-like) and a single position.
TEST(ChannelRmsNorm, DedicatedAtEveryLevelAndGenericMatchTheReference) {
  uint64_t seed = 10;
  const Shape shapes[] = {{1, 96, 7, 9}, {2, 48, 2, 20, 33}, {3, 17, 70}, {1, 5, 1}};
  for (const Shape& shape : shapes)
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const Tensor x = randn(shape, dt, seed++, 3.0), w = randn({shape[1]}, dt, seed++);
      for (bool with_weight : {true, false})
        for (bool fused : {false, true}) {
          const OptTensor weight = with_weight ? OptTensor(w) : std::nullopt;
          const auto call = [&] { return channel_rms_norm(x, weight, 1e-6, fused); };
          EXPECT_TRUE(testing::matches_at_every_level(call, true, &tolerance))
              << shape_string(shape) << " " << dtype_name(dt) << " weight " << with_weight << " silu " << fused;
          Tensor want, generic;
          {
            testing::ReferenceOnly ref;
            want = call();
          }
          {
            ScopedPolicy forced(Policy::parse("generic"));
            generic = call();
          }
          EXPECT_TRUE(all_close(generic, want, tolerance(dt).rtol, tolerance(dt).atol)) << shape_string(shape) << " generic";
        }
    }
}

// A channels-last tensor viewed channel-first (the op copies it to [N, C, S]), and positions whose channels are
// all zero: 0 with eps > 0, NaN (0 / 0) without, on every tier.
TEST(ChannelRmsNorm, StridedInputAndZeroPositions) {
  const Tensor last = randn({2, 6, 5, 8}, DType::f32, 30);   // [N, H, W, C]
  const Tensor x = last.permute({0, 3, 1, 2});
  EXPECT_TRUE(testing::matches_at_every_level([&] { return channel_rms_norm(x, std::nullopt, 1e-6, true); }, true, &tolerance));
  Tensor zeros = randn({1, 8, 40}, DType::f32, 31);
  for (int64_t c = 0; c < 8; ++c) zeros.data_as<float>()[c * 40 + 17] = 0.0f;
  for (double eps : {1e-6, 0.0})
    EXPECT_TRUE(testing::matches_at_every_level([&] { return channel_rms_norm(zeros, std::nullopt, eps); }, true,
                                                &tolerance)) << eps;
}

TEST(ChannelRmsNorm, EmptyTensors) {
  EXPECT_EQ(channel_rms_norm(Tensor::empty({0, 4, 3}, DType::f32), std::nullopt, 1e-6).shape(), (Shape{0, 4, 3}));
  EXPECT_EQ(channel_rms_norm(Tensor::empty({2, 0, 3}, DType::bf16), std::nullopt, 1e-6, true).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(channel_rms_norm(Tensor::empty({2, 4, 0}, DType::f32), std::nullopt, 1e-6).shape(), (Shape{2, 4, 0}));
}

TEST(ChannelRmsNorm, BadArgumentsNameOpAndArgument) {
  const char* op = "channel_rms_norm";
  const Tensor x = randn({2, 4, 3}, DType::f32, 40);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { channel_rms_norm(randn({4}, DType::f32, 41), std::nullopt, 1e-6); },
                                               {op, "'x'", "rank >= 2"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { channel_rms_norm(x, randn({3}, DType::f32, 42), 1e-6); },
                                               {op, "'weight'", "[4]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { channel_rms_norm(x, randn({4}, DType::bf16, 43), 1e-6); },
                                               {op, "'weight'"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { channel_rms_norm(x, std::nullopt, -1.0); }, {op, "'eps'"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { channel_rms_norm(x.to(DType::i32), std::nullopt, 1e-6); },
                                               {op, "'x'"}));
}

}  // namespace
}  // namespace fourfold
