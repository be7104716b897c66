// conv3d and the causal_conv3d composite on the reference tier: hand case, an explicit loop formula, kT = 1
// against conv2d per frame, causality, the causal padding written out, and bad arguments.
#include <array>
#include <cmath>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;
using testing::randn;

using testing::kFloatDTypes;

double rtol_for(DType dtype) { return testing::one_ulp_tolerance(dtype); }

using Triple = std::array<int64_t, 3>;

// conv3d written out over an input padded on each side by (lo, hi) per dim with `fill`: conv3d's zero padding
// when lo == hi and fill == 0, the causal layout otherwise.
// out[n, o, t, i, j] = b[o] + sum_{c, a, u, v} xpad[n, g*Cg + c, t*s0 + a*d0, i*s1 + u*d1, j*s2 + v*d2] * w[o, c, a, u, v]
Tensor conv3d_formula(const Tensor& x, const Tensor& w, const Tensor* b, Triple s, Triple lo, Triple hi, Triple d,
                      int64_t groups, double fill = 0.0) {
  const int64_t N = x.size(0), C = x.size(1);
  const Triple in = {x.size(2), x.size(3), x.size(4)};
  const int64_t O = w.size(0), Cg = w.size(1);
  const Triple k = {w.size(2), w.size(3), w.size(4)};
  Triple out_size;
  for (int e = 0; e < 3; ++e) out_size[e] = (in[e] + lo[e] + hi[e] - d[e] * (k[e] - 1) - 1) / s[e] + 1;
  const std::vector<double> xv = x.to_vector(), wv = w.to_vector();
  const std::vector<double> bv = b ? b->to_vector() : std::vector<double>(O, 0.0);
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t t = 0; t < out_size[0]; ++t)
        for (int64_t i = 0; i < out_size[1]; ++i)
          for (int64_t j = 0; j < out_size[2]; ++j) {
            const int64_t g = o / (O / groups);
            double acc = bv[o];
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t a = 0; a < k[0]; ++a)
                for (int64_t u = 0; u < k[1]; ++u)
                  for (int64_t v = 0; v < k[2]; ++v) {
                    const int64_t it = t * s[0] - lo[0] + a * d[0];
                    const int64_t ih = i * s[1] - lo[1] + u * d[1];
                    const int64_t iw = j * s[2] - lo[2] + v * d[2];
                    const bool inside = it >= 0 && it < in[0] && ih >= 0 && ih < in[1] && iw >= 0 && iw < in[2];
                    const double xval =
                        inside ? xv[(((n * C + g * Cg + c) * in[0] + it) * in[1] + ih) * in[2] + iw] : fill;
                    acc += xval * wv[(((o * Cg + c) * k[0] + a) * k[1] + u) * k[2] + v];
                  }
            out.push_back(acc);
          }
  return Tensor::from_vector(out, {N, O, out_size[0], out_size[1], out_size[2]}, DType::f64);
}

TEST(Conv3d, HandComputedCase) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2}, DType::f32);
  // A temporal difference: frame 0 minus frame 1, which is -4 everywhere.
  Tensor w = Tensor::from_vector({1, -1}, {1, 1, 2, 1, 1}, DType::f32);
  Tensor y = conv3d(x, w);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2, 2}));
  EXPECT_TRUE(all_close(y, {-4, -4, -4, -4}, 0, 0));
  EXPECT_TRUE(all_close(conv3d(x, Tensor::full({1, 1, 2, 2, 2}, 1.0, DType::f32), Tensor::full({1}, 1, DType::f32)),
                        {37}, 0, 0));
}

TEST(Conv3d, MatchesTheLoopFormulaWithStridePaddingDilationAndGroups) {
  testing::ReferenceOnly ref;
  struct Case { Shape x, w; Triple s, p, d; int64_t groups; bool bias; };
  const Case cases[] = {
      {{2, 3, 4, 5, 6}, {2, 3, 2, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, true},
      {{1, 4, 6, 7, 5}, {4, 2, 3, 2, 3}, {2, 1, 2}, {1, 0, 2}, {1, 2, 1}, 2, true},
      {{1, 3, 5, 4, 4}, {3, 1, 2, 2, 2}, {1, 2, 3}, {2, 1, 0}, {2, 1, 1}, 3, false},
      {{2, 2, 3, 3, 3}, {1, 2, 3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, true},
  };
  uint64_t seed = 50;
  for (const Case& c : cases) {
    for (DType dtype : kFloatDTypes) {
      const Tensor x = randn(c.x, dtype, ++seed);
      const Tensor w = randn(c.w, dtype, ++seed);
      const Tensor b = randn({c.w[0]}, dtype, ++seed);
      const Tensor got = conv3d(x, w, c.bias ? OptTensor(b) : std::nullopt, {c.s[0], c.s[1], c.s[2]},
                                {c.p[0], c.p[1], c.p[2]}, {c.d[0], c.d[1], c.d[2]}, c.groups);
      const Tensor want = conv3d_formula(x, w, c.bias ? &b : nullptr, c.s, c.p, c.p, c.d, c.groups);
      EXPECT_TRUE(all_close(got, want, rtol_for(dtype), 1e-12)) << dtype_name(dtype) << " x " << shape_string(c.x);
    }
  }
  // Non-contiguous and broadcast operands read the same values.
  const Tensor x = randn({2, 4, 5, 4, 6}, DType::f32, 60);
  const Tensor w = randn({2, 2, 2, 3, 1}, DType::f32, 61);
  const Tensor b = Tensor::full({1}, 0.5, DType::f32).expand({2});
  const Tensor want = conv3d(x, w, b.contiguous(), {1, 2, 1}, {1, 0, 1}, {2, 1, 1}, 2);
  EXPECT_TRUE(all_close(conv3d(testing::non_contiguous(x), testing::non_contiguous(w), b, {1, 2, 1}, {1, 0, 1},
                               {2, 1, 1}, 2),
                        want, 0, 0));
  EXPECT_EQ(conv3d(Tensor::empty({0, 4, 5, 4, 6}, DType::f32), w, std::nullopt, {1}, {0}, {1}, 2).shape(),
            (Shape{0, 2, 4, 2, 6}));
}

TEST(Conv3d, KernelDepthOneIsConv2dOnEachStridedFrame) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({2, 4, 5, 6, 7}, DType::f32, 70);
  const Tensor w = randn({6, 2, 1, 3, 3}, DType::f32, 71);
  const Tensor b = randn({6}, DType::f32, 72);
  // Temporal padding 1 adds a zero frame on each side, whose outputs are the bias alone; dilation in T is moot with kT = 1.
  const Tensor y = conv3d(x, w, b, {2, 1, 2}, {1, 1, 0}, {3, 1, 2}, 2);
  ASSERT_EQ(y.shape(), (Shape{2, 6, 4, 6, 2}));
  const Tensor w2 = w.select(2, 0);
  for (int64_t t = 0; t < y.size(2); ++t) {
    const int64_t frame = t * 2 - 1;
    const Tensor want = frame < 0 || frame >= x.size(2) ? conv2d(Tensor::zeros({2, 4, 6, 7}, DType::f32), w2, b, {1, 2}, {1, 0}, {1, 2}, 2)
                                  : conv2d(x.select(2, frame), w2, b, {1, 2}, {1, 0}, {1, 2}, 2);
    EXPECT_TRUE(all_close(y.select(2, t), want, rtol_for(DType::f32), 1e-12)) << "frame " << t;
  }
}

TEST(CausalConv3d, EqualsThePaddingAndConvolutionWrittenOut) {
  testing::ReferenceOnly ref;
  struct Case { Shape x, w; Triple s; double pad_value; };
  const Case cases[] = {
      {{1, 2, 5, 4, 6}, {3, 2, 3, 3, 3}, {1, 1, 1}, 0.0},
      {{2, 3, 6, 5, 5}, {2, 3, 2, 1, 5}, {2, 1, 2}, 0.75},
      {{1, 2, 4, 3, 3}, {2, 2, 4, 3, 1}, {3, 2, 1}, -1.5},
  };
  uint64_t seed = 80;
  for (const Case& c : cases) {
    for (DType dtype : kFloatDTypes) {
      const Tensor x = randn(c.x, dtype, ++seed);
      const Tensor w = randn(c.w, dtype, ++seed);
      const Tensor b = randn({c.w[0]}, dtype, ++seed);
      const Triple lo = {c.w[2] - 1, (c.w[3] - 1) / 2, (c.w[4] - 1) / 2};
      const Triple hi = {0, (c.w[3] - 1) / 2, (c.w[4] - 1) / 2};
      const Tensor want = conv3d_formula(x, w, &b, c.s, lo, hi, {1, 1, 1}, 1, c.pad_value);
      const Tensor got = causal_conv3d(x, w, b, {c.s[0], c.s[1], c.s[2]}, c.pad_value);
      EXPECT_TRUE(all_close(got, want, rtol_for(dtype), 1e-12)) << dtype_name(dtype) << " x " << shape_string(c.x);
      // Same spatial size at stride 1 (odd kernels centred); ceil(T / sT) frames.
      EXPECT_EQ(got.size(2), (c.x[2] - 1) / c.s[0] + 1);
      EXPECT_EQ(got.size(3), (c.x[3] - 1) / c.s[1] + 1);
    }
  }
}

TEST(CausalConv3d, AnOutputFrameNeverSeesLaterInputFrames) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({1, 2, 7, 4, 5}, DType::f32, 90);
  const Tensor w = randn({3, 2, 3, 3, 3}, DType::f32, 91);
  const Tensor b = randn({3}, DType::f32, 92);
  for (int64_t st : {1, 2}) {
    const Tensor y = causal_conv3d(x, w, b, {st, 1, 1}, 0.5);
    for (int64_t t = 0; t < y.size(2); ++t) {
      const int64_t last_seen = t * st;   // output frame t reads input frames <= t * sT
      if (last_seen + 1 >= x.size(2)) continue;
      Tensor changed = x.clone();
      changed.narrow(2, last_seen + 1, x.size(2) - last_seen - 1).fill_normal(93 + t, 5.0, 2.0);
      const Tensor y2 = causal_conv3d(changed, w, b, {st, 1, 1}, 0.5);
      EXPECT_TRUE(bit_equal(y2.narrow(2, 0, t + 1), y.narrow(2, 0, t + 1))) << "stride " << st << " frame " << t;
      // ...and the next output frame does see the change, so the comparison above is not vacuous.
      if (t + 1 < y.size(2)) {
        EXPECT_FALSE(bit_equal(y2.narrow(2, t + 1, 1), y.narrow(2, t + 1, 1))) << "stride " << st << " frame " << t;
      }
    }
  }
}

TEST(CausalConv3d, PointwiseKernelIsPlainConv3d) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({2, 3, 4, 3, 5}, DType::f64, 95);
  const Tensor w = randn({2, 3, 1, 1, 1}, DType::f64, 96);
  EXPECT_TRUE(all_close(causal_conv3d(x, w, std::nullopt, {1, 1, 1}, 9.0), conv3d(x, w), 0, 0));
}

TEST(Conv3d, BadArgumentsNameOpAndArgument) {
  using testing::throws_with;
  const Tensor x = Tensor::zeros({1, 4, 3, 5, 5}, DType::f32);
  const Tensor w = Tensor::zeros({2, 4, 3, 3, 3}, DType::f32);
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv3d(x.select(2, 0), w); }, {"conv3d", "'x'", "5-D"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv3d(x, w.select(2, 0)); }, {"conv3d", "'weight'", "5-D"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { conv3d(x.to(DType::f16), w); }, {"conv3d", "'weight'", "float16"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv3d(x, Tensor::zeros({2, 2, 3, 3, 3}, DType::f32)); },
                                      {"conv3d", "'x'", "2 channels"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv3d(x, Tensor::zeros({3, 2, 3, 3, 3}, DType::f32), std::nullopt,
                                                   {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 2); },
                                      {"conv3d", "'weight'", "groups=2"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv3d(x, w, std::nullopt, {1, 1}); }, {"conv3d", "'stride'", "1 or 3"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv3d(x, w, std::nullopt, {1, 1, 1}, {0, 0, -2}); },
                                      {"conv3d", "'padding'"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { conv3d(x, w, std::nullopt, {1, 1, 1}, {0, 0, 0}, {1, 1}); },
                                      {"conv3d", "'dilation'"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { conv3d(x, w, std::nullopt, {1, 1, 1}, {0, 0, 0}, {2, 1, 1}); },
                                      {"conv3d", "'x'", "dim 2"}));

  const char* op = "causal_conv3d";
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x, Tensor::zeros({2, 4, 3, 2, 3}, DType::f32)); },
                                      {op, "'weight'", "odd"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x, Tensor::zeros({2, 4, 3, 3, 4}, DType::f32)); },
                                      {op, "'weight'", "odd"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x.select(2, 0), w); }, {op, "'x'", "5-D"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x, w.select(2, 0)); }, {op, "'weight'", "5-D"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { causal_conv3d(x, w.to(DType::bf16)); }, {op, "'weight'"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x, Tensor::zeros({2, 3, 3, 3, 3}, DType::f32)); },
                                      {op, "'x'", "channels"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(x, w, Tensor::zeros({5}, DType::f32)); }, {op, "'bias'"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { causal_conv3d(x, w, std::nullopt, {0, 1, 1}); }, {op, "'stride'"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(Tensor::zeros({1, 4, 0, 5, 5}, DType::f32), w); },
                                      {op, "'x'", "dim 2"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { causal_conv3d(Tensor::zeros({1, 4, 3, 5, 0}, DType::f32), w); },
                                      {op, "'x'", "dim 4"}));
}

}  // namespace
}  // namespace fourfold
