// conv2d on the reference tier: hand cases, an explicit loop formula over stride/padding/dilation/groups,
// layouts, special values, and bad arguments.
#include <cmath>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

using testing::kFloatDTypes;

double rtol_for(DType dtype) { return testing::one_ulp_tolerance(dtype); }

struct Params {
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

// conv2d written out: out[n, o, i, j] = b[o] + sum_{c, u, v} x[n, g*Cg + c, i*sh - ph + u*dh, j*sw - pw + v*dw]
// * w[o, c, u, v] over the positions inside x, with g = o / (O / groups).
Tensor conv2d_formula(const Tensor& x, const Tensor& w, const Tensor* b, const Params& p) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), Cg = w.size(1), KH = w.size(2), KW = w.size(3);
  const int64_t OH = (H + 2 * p.ph - p.dh * (KH - 1) - 1) / p.sh + 1;
  const int64_t OW = (W + 2 * p.pw - p.dw * (KW - 1) - 1) / p.sw + 1;
  const std::vector<double> xv = x.to_vector(), wv = w.to_vector();
  const std::vector<double> bv = b ? b->to_vector() : std::vector<double>(O, 0.0);
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          const int64_t g = o / (O / p.groups);
          double acc = bv[o];
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t u = 0; u < KH; ++u)
              for (int64_t v = 0; v < KW; ++v) {
                const int64_t ih = i * p.sh - p.ph + u * p.dh, iw = j * p.sw - p.pw + v * p.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += xv[((n * C + g * Cg + c) * H + ih) * W + iw] * wv[((o * Cg + c) * KH + u) * KW + v];
              }
          out.push_back(acc);
        }
  return Tensor::from_vector(out, {N, O, OH, OW}, DType::f64);
}

Tensor run(const Tensor& x, const Tensor& w, const OptTensor& b, const Params& p) {
  return conv2d(x, w, b, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.groups);
}

TEST(Conv2d, HandComputedCases) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3}, DType::f32);
  Tensor w = Tensor::from_vector({1, 0, 0, -1}, {1, 1, 2, 2}, DType::f32);
  // Each output is x[i, j] - x[i+1, j+1].
  EXPECT_TRUE(all_close(conv2d(x, w), {-4, -4, -4, -4}, 0, 0));
  EXPECT_TRUE(all_close(conv2d(x, w, Tensor::from_vector({0.5}, {1}, DType::f32)), {-3.5, -3.5, -3.5, -3.5}, 0, 0));
  // Padding 1, stride 2: windows at rows/cols {-1, 0} and {1, 2}; the padded zeros contribute nothing.
  Tensor y = conv2d(x, w, std::nullopt, {2, 2}, {1, 1});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_TRUE(all_close(y, {-1, -3, -7, -4}, 0, 0));
  // Dilation 2 with a 2x2 kernel: x[0, 0] - x[2, 2], a single output.
  EXPECT_TRUE(all_close(conv2d(x, w, std::nullopt, {1, 1}, {0, 0}, {2, 2}), {-8}, 0, 0));
  // Groups: two channels convolved separately, or mixed by one output.
  Tensor xc = Tensor::from_vector({2, 3}, {1, 2, 1, 1}, DType::f32);
  EXPECT_TRUE(all_close(conv2d(xc, Tensor::from_vector({10, 100}, {2, 1, 1, 1}, DType::f32), std::nullopt, {1, 1},
                               {0, 0}, {1, 1}, 2),
                        {20, 300}, 0, 0));
  EXPECT_TRUE(all_close(conv2d(xc, Tensor::from_vector({10, 100}, {1, 2, 1, 1}, DType::f32)), {320}, 0, 0));
}

TEST(Conv2d, MatchesTheLoopFormulaWithStridePaddingDilationAndGroups) {
  testing::ReferenceOnly ref;
  struct Case { Shape x, w; Params p; bool bias; };
  const Case cases[] = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1, 0, 0, 1, 1, 1}, true},
      {{1, 4, 9, 8}, {6, 2, 3, 2}, {2, 3, 1, 2, 1, 1, 2}, true},
      {{2, 6, 10, 9}, {6, 2, 2, 3}, {1, 2, 2, 0, 2, 3, 3}, false},
      {{1, 4, 5, 5}, {4, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 4}, true},       // depthwise
      {{3, 2, 1, 1}, {5, 2, 1, 1}, {1, 1, 0, 0, 1, 1, 1}, true},       // 1x1 on 1x1
      {{1, 1, 3, 3}, {1, 1, 2, 2}, {3, 3, 4, 4, 1, 1, 1}, true},       // padding larger than the kernel
      {{1, 3, 11, 4}, {3, 1, 5, 1}, {3, 1, 0, 2, 2, 1, 3}, false},     // stride larger than 1 with remainder
      {{1, 2, 6, 7}, {2, 2, 6, 7}, {1, 1, 0, 0, 1, 1, 1}, true},       // kernel as large as the input
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    for (DType dtype : kFloatDTypes) {
      const Tensor x = randn(c.x, dtype, ++seed);
      const Tensor w = randn(c.w, dtype, ++seed);
      const Tensor b = randn({c.w[0]}, dtype, ++seed);
      const Tensor got = run(x, w, c.bias ? OptTensor(b) : std::nullopt, c.p);
      const Tensor want = conv2d_formula(x, w, c.bias ? &b : nullptr, c.p);
      EXPECT_EQ(got.dtype(), dtype);
      EXPECT_TRUE(all_close(got, want, rtol_for(dtype), 1e-12))
          << dtype_name(dtype) << " x " << shape_string(c.x) << " w " << shape_string(c.w);
    }
  }
}

TEST(Conv2d, SingleValueParametersApplyToBothDims) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({1, 2, 9, 8}, DType::f64, 20);
  const Tensor w = randn({2, 2, 2, 3}, DType::f64, 21);
  EXPECT_TRUE(all_close(conv2d(x, w, std::nullopt, {2}, {1}, {2}), conv2d(x, w, std::nullopt, {2, 2}, {1, 1}, {2, 2}),
                        0, 0));
}

TEST(Conv2d, NonContiguousExpandedAndEmptyInputs) {
  testing::ReferenceOnly ref;
  const Params p{2, 1, 1, 0, 1, 2, 2};
  const Tensor x = randn({2, 4, 7, 9}, DType::f32, 30);
  const Tensor w = randn({6, 2, 3, 3}, DType::f32, 31);
  const Tensor b = randn({6}, DType::f32, 32);
  const Tensor want = run(x, w, b, p);
  EXPECT_TRUE(all_close(run(testing::non_contiguous(x), testing::non_contiguous(w), testing::non_contiguous(b), p),
                        want, 0, 0));
  // Broadcast (stride-0) operands: one image repeated over the batch, one bias value for every channel.
  const Tensor one = randn({1, 4, 7, 9}, DType::f32, 33);
  const Tensor bias1 = Tensor::from_vector({0.25}, {1}, DType::f32).expand({6});
  EXPECT_TRUE(all_close(run(one.expand({3, 4, 7, 9}), w, bias1, p), run(one.expand({3, 4, 7, 9}).contiguous(), w,
                                                                        bias1.contiguous(), p),
                        0, 0));
  EXPECT_TRUE(all_close(run(one.expand({3, 4, 7, 9}), w, bias1, p), conv2d_formula(one.expand({3, 4, 7, 9}), w,
                                                                                   &bias1, p),
                        rtol_for(DType::f32), 1e-12));
  // An empty batch gives an empty output of the right shape.
  EXPECT_EQ(run(Tensor::empty({0, 4, 7, 9}, DType::f32), w, b, p).shape(), (Shape{0, 6, 4, 5}));
}

TEST(Conv2d, NaNAndInfinityStayInTheirWindows) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::zeros({1, 1, 4, 4}, DType::f32);
  x.select(2, 0).select(2, 0).fill(NAN);
  x.select(2, 3).select(2, 3).fill(INFINITY);
  const Tensor w = Tensor::full({1, 1, 2, 2}, 1.0, DType::f32);
  const std::vector<double> y = conv2d(x, w).to_vector();   // 3x3 outputs
  for (int64_t i = 0; i < 9; ++i) {
    if (i == 0) EXPECT_TRUE(std::isnan(y[i]));
    else if (i == 8) EXPECT_EQ(y[i], INFINITY);
    else EXPECT_EQ(y[i], 0.0) << i;
  }
}

TEST(Conv2d, BadArgumentsNameOpAndArgument) {
  const Tensor x = Tensor::zeros({1, 4, 5, 5}, DType::f32);
  const Tensor w = Tensor::zeros({2, 4, 3, 3}, DType::f32);
  using testing::throws_with;
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x.select(0, 0), w); }, {"conv2d", "'x'", "4-D"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, w.select(0, 0)); }, {"conv2d", "'weight'", "4-D"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { conv2d(Tensor::zeros({1, 4, 5, 5}, DType::i32), w); },
                                      {"conv2d", "'x'", "int32"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { conv2d(x, w.to(DType::bf16)); }, {"conv2d", "'weight'", "bfloat16"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { conv2d(x, w, Tensor::zeros({2}, DType::f16)); }, {"conv2d", "'bias'"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, w, Tensor::zeros({3}, DType::f32)); }, {"conv2d", "'bias'", "3"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, w, Tensor::zeros({1, 2}, DType::f32)); }, {"conv2d", "'bias'"}));
  // Channels against weight and groups.
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, Tensor::zeros({2, 3, 3, 3}, DType::f32)); },
                                      {"conv2d", "'x'", "3 channels"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, Tensor::zeros({2, 4, 3, 3}, DType::f32), std::nullopt, {1, 1},
                                                   {0, 0}, {1, 1}, 2); },
                                      {"conv2d", "'x'", "8 channels", "groups=2"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, Tensor::zeros({3, 2, 3, 3}, DType::f32), std::nullopt, {1, 1},
                                                   {0, 0}, {1, 1}, 2); },
                                      {"conv2d", "'weight'", "multiple of groups=2"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {1, 1}, {0, 0}, {1, 1}, 0); },
                                      {"conv2d", "'groups'", "0"}));
  // Parameter lengths and values.
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {1, 1, 1}); }, {"conv2d", "'stride'", "1 or 2"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {}); }, {"conv2d", "'stride'"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {0, 1}); }, {"conv2d", "'stride'", ">= 1"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {1, 1}, {-1, 0}); },
                                      {"conv2d", "'padding'", ">= 0"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv2d(x, w, std::nullopt, {1, 1}, {0, 0}, {1, 0}); },
                                      {"conv2d", "'dilation'", ">= 1"}));
  // Output size <= 0: the (dilated) kernel does not fit the padded input.
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(Tensor::zeros({1, 4, 2, 5}, DType::f32), w); },
                                      {"conv2d", "'x'", "dim 2"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, w, std::nullopt, {1, 1}, {0, 0}, {1, 3}); },
                                      {"conv2d", "'x'", "dim 3", "7"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(Tensor::zeros({1, 4, 5, 0}, DType::f32), w, std::nullopt, {1, 1},
                                                   {0, 1}); },
                                      {"conv2d", "'x'", "dim 3"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv2d(x, Tensor::zeros({2, 4, 0, 3}, DType::f32)); },
                                      {"conv2d", "'weight'", "kernel sizes"}));
}

}  // namespace
}  // namespace fourfold
