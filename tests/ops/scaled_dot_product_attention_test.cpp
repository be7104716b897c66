// scaled_dot_product_attention and its backward on the reference tier: the explicit formula, masks, causal
// modes, GQA, empty rows, finite differences, errors.
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Added to score (b, h, i, j): 0 to attend plainly, a float mask value, or -inf to exclude the key.
using Bias = std::function<double(int64_t b, int64_t h, int64_t i, int64_t j)>;

// softmax(q k^T * scale + bias) v written out with loops over 4-D f64 copies; a row with every score -inf
// gives zeros. kv head of q head h is h / group.
Tensor explicit_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, const Bias& bias,
                          int64_t group = 1) {
  const int64_t nb = q.size(0), hq = q.size(1), l = q.size(2), e = q.size(3);
  const int64_t hk = k.size(1), s = k.size(2), ev = v.size(3);
  const auto qv = q.to_vector(), kv = k.to_vector(), vv = v.to_vector();
  std::vector<double> out(static_cast<size_t>(nb * hq * l * ev), 0.0);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < l; ++i) {
        const int64_t kh = h / group;
        std::vector<double> w(s);
        double max = -kInf;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < e; ++c) dot += qv[((b * hq + h) * l + i) * e + c] * kv[((b * hk + kh) * s + j) * e + c];
          w[j] = dot * scale + bias(b, h, i, j);
          max = std::max(max, w[j]);
        }
        if (max == -kInf) continue;
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - max));
        for (int64_t c = 0; c < ev; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < s; ++j) acc += w[j] / sum * vv[((b * hk + kh) * s + j) * ev + c];
          out[((b * hq + h) * l + i) * ev + c] = acc;
        }
      }
  return Tensor::from_vector(out, {nb, hq, l, ev}, DType::f64);
}

const Bias kNoBias = [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };

// Tolerance of one rounding of the output to `dtype` (the inputs are already values of that dtype).
double tolerance(DType dtype) { return testing::rounding_tolerance(dtype); }

Tensor bool_mask(const Shape& shape, uint64_t seed) {
  std::vector<double> bits;
  for (double u : testing::rand_uniform(shape, DType::f64, seed, 0.0, 1.0).to_vector()) bits.push_back(u < 0.7);
  return Tensor::from_vector(bits, shape, DType::boolean);
}

// A float mask with some -inf entries.
Tensor float_mask(const Shape& shape, DType dtype, uint64_t seed) {
  std::vector<double> values = randn(shape, DType::f64, seed).to_vector();
  for (size_t n = 0; n < values.size(); n += 3) values[n] = -kInf;
  return Tensor::from_vector(values, shape, dtype);
}

// The bias a mask of any shape that broadcasts to `full` ([B, H, L, S]) adds: a bool mask gives 0 or -inf,
// a float mask its value.
Bias mask_bias(const Tensor& mask, const Shape& full) {
  const bool is_bool = mask.dtype() == DType::boolean;
  const std::vector<double> values = mask.expand(full).to_vector();
  const Shape f = full;
  return [=](int64_t b, int64_t h, int64_t i, int64_t j) {
    const double m = values[((b * f[1] + h) * f[2] + i) * f[3] + j];
    return is_bool ? (m != 0 ? 0.0 : -kInf) : m;
  };
}

Tensor repeat_heads(const Tensor& t, int64_t n) {
  const int64_t b = t.size(0), h = t.size(1), s = t.size(2), e = t.size(3);
  return t.unsqueeze(2).expand({b, h, n, s, e}).reshape({b, h * n, s, e});
}

TEST(ScaledDotProductAttention, HandComputed) {
  testing::ReferenceOnly ref;
  Tensor q = Tensor::from_vector({1, 0}, {1, 1, 1, 2}, DType::f64);
  Tensor k = Tensor::from_vector({1, 0, 0, 1}, {1, 1, 2, 2}, DType::f64);
  Tensor v = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 2, 2}, DType::f64);
  AttentionOptions o;
  o.scale = 1.0;
  // scores [1, 0]: weights e/(e+1), 1/(e+1)
  const double p = std::exp(1.0) / (std::exp(1.0) + 1);
  EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, o), {p * 1 + (1 - p) * 3, p * 2 + (1 - p) * 4}, 1e-15, 0));
  // default scale 1/sqrt(2)
  const double p2 = std::exp(1 / std::sqrt(2.0)) / (std::exp(1 / std::sqrt(2.0)) + 1);
  EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v), {p2 + (1 - p2) * 3, 2 * p2 + (1 - p2) * 4}, 1e-15, 0));
}

TEST(ScaledDotProductAttention, MatchesExplicitFormulaEveryDTypeAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor q = randn({2, 3, 4, 5}, dtype, 1), k = randn({2, 3, 6, 5}, dtype, 2), v = randn({2, 3, 6, 3}, dtype, 3);
    Tensor expected = explicit_attention(q, k, v, 1 / std::sqrt(5.0), kNoBias);
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v), expected, tolerance(dtype), tolerance(dtype)))
        << dtype_name(dtype);
    Tensor nc = scaled_dot_product_attention(testing::non_contiguous(q), testing::non_contiguous(k),
                                             testing::non_contiguous(v));
    EXPECT_EQ(nc.dtype(), dtype);
    EXPECT_TRUE(all_close(nc, expected, tolerance(dtype), tolerance(dtype))) << dtype_name(dtype) << " non-contiguous";
    AttentionOptions o;
    o.scale = 0.3;
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, o), explicit_attention(q, k, v, 0.3, kNoBias),
                          tolerance(dtype), tolerance(dtype)))
        << dtype_name(dtype) << " scale 0.3";
  }
}

TEST(ScaledDotProductAttention, LeadingDimsFlattenAndRestore) {
  testing::ReferenceOnly ref;
  Tensor q = randn({2, 2, 3, 4, 5}, DType::f64, 1), k = randn({2, 2, 3, 6, 5}, DType::f64, 2);
  Tensor v = randn({2, 2, 3, 6, 2}, DType::f64, 3);
  Tensor out = scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3, 4, 2}));
  Tensor expected = explicit_attention(q.reshape({4, 3, 4, 5}), k.reshape({4, 3, 6, 5}), v.reshape({4, 3, 6, 2}),
                                       1 / std::sqrt(5.0), kNoBias);
  EXPECT_TRUE(all_close(out.reshape({4, 3, 4, 2}), expected, 1e-12, 1e-12));
  // rank 3: no batch dims
  Tensor out3 = scaled_dot_product_attention(q.select(0, 1).select(0, 0), k.select(0, 1).select(0, 0),
                                             v.select(0, 1).select(0, 0));
  EXPECT_EQ(out3.shape(), (Shape{3, 4, 2}));
  EXPECT_TRUE(all_close(out3, expected.select(0, 2), 1e-12, 1e-12));
}

TEST(ScaledDotProductAttention, BoolAndFloatMasksBroadcast) {
  testing::ReferenceOnly ref;
  const int64_t nb = 2, h = 3, l = 4, s = 5;
  const Shape full{nb, h, l, s};
  Tensor q = randn({nb, h, l, 6}, DType::f64, 1), k = randn({nb, h, s, 6}, DType::f64, 2);
  Tensor v = randn({nb, h, s, 3}, DType::f64, 3);
  const double scale = 1 / std::sqrt(6.0);
  for (const Shape& shape : {Shape{l, s}, Shape{1, 1, l, s}, Shape{nb, 1, 1, s}, Shape{h, 1, s}, full}) {
    Tensor mb = bool_mask(shape, 7);
    Tensor expected = explicit_attention(q, k, v, scale, mask_bias(mb, full));
    AttentionOptions o;
    o.attn_mask = mb;
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, o), expected, 1e-12, 1e-12))
        << "bool " << shape_string(shape);
    // The same mask as 0 / -inf floats.
    std::vector<double> additive;
    for (double bit : mb.to_vector()) additive.push_back(bit != 0 ? 0.0 : -kInf);
    o.attn_mask = Tensor::from_vector(additive, shape, DType::f64);
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, o), expected, 1e-12, 1e-12))
        << "0/-inf float " << shape_string(shape);

    Tensor mf = float_mask(shape, DType::f64, 9);
    o.attn_mask = testing::non_contiguous(mf);
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, o), explicit_attention(q, k, v, scale, mask_bias(mf, full)),
                          1e-12, 1e-12))
        << "float " << shape_string(shape);
  }
  // Through PyTorch's signature, and in a reduced precision with the mask in q's dtype.
  Tensor mf = float_mask({l, s}, DType::f32, 11);
  Tensor q32 = q.to(DType::f32), k32 = k.to(DType::f32), v32 = v.to(DType::f32);
  EXPECT_TRUE(all_close(scaled_dot_product_attention(q32, k32, v32, mf, false),
                        explicit_attention(q32, k32, v32, scale, mask_bias(mf, full)), 1e-6, 1e-6));
}

TEST(ScaledDotProductAttention, CausalTopLeftAndLowerRight) {
  testing::ReferenceOnly ref;
  for (auto [l, s] : {std::pair<int64_t, int64_t>{3, 5}, {5, 3}, {4, 4}}) {
    Tensor q = randn({2, 2, l, 4}, DType::f64, 1), k = randn({2, 2, s, 4}, DType::f64, 2);
    Tensor v = randn({2, 2, s, 3}, DType::f64, 3);
    const double scale = 0.5;
    Bias top_left = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -kInf; };
    Bias lower_right = [&](int64_t, int64_t, int64_t i, int64_t j) { return j <= i + s - l ? 0.0 : -kInf; };
    AttentionOptions o;
    o.scale = scale;
    o.causal = CausalMode::top_left;
    Tensor tl = scaled_dot_product_attention(q, k, v, o);
    EXPECT_TRUE(all_close(tl, explicit_attention(q, k, v, scale, top_left), 1e-12, 1e-12)) << l << "x" << s;
    EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, std::nullopt, true, scale), tl, 0, 0)) << l << "x" << s;
    o.causal = CausalMode::lower_right;
    Tensor lr = scaled_dot_product_attention(q, k, v, o);
    EXPECT_TRUE(all_close(lr, explicit_attention(q, k, v, scale, lower_right), 1e-12, 1e-12)) << l << "x" << s;
    if (l > s) {
      // lower_right: the first L - S queries see no key at all and give zeros.
      for (double x : lr.narrow(2, 0, l - s).contiguous().to_vector()) EXPECT_EQ(x, 0.0);
      // top_left: query 0 sees key 0 only.
      EXPECT_TRUE(all_close(tl.narrow(2, 0, 1), v.narrow(2, 0, 1), 1e-15, 0));
    }
    if (l == s) {
      EXPECT_TRUE(all_close(tl, lr, 0, 0));
    }
  }
}

TEST(ScaledDotProductAttention, DecodeRowLowerRightSeesEveryKey) {
  testing::ReferenceOnly ref;
  Tensor q = randn({1, 2, 1, 4}, DType::f32, 1), k = randn({1, 2, 7, 4}, DType::f32, 2);
  Tensor v = randn({1, 2, 7, 3}, DType::f32, 3);
  AttentionOptions o;
  o.causal = CausalMode::lower_right;
  EXPECT_TRUE(testing::bit_equal(scaled_dot_product_attention(q, k, v, o), scaled_dot_product_attention(q, k, v)));
  o.causal = CausalMode::top_left;   // the single query is row 0: key 0 only
  EXPECT_TRUE(testing::bit_equal(scaled_dot_product_attention(q, k, v, o), v.narrow(2, 0, 1).contiguous()));
}

TEST(ScaledDotProductAttention, GroupedQueryAttentionEqualsRepeatedHeads) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f64, DType::bf16}) {
    Tensor q = randn({2, 6, 3, 4}, dtype, 1), k = randn({2, 2, 5, 4}, dtype, 2), v = randn({2, 2, 5, 3}, dtype, 3);
    Tensor kr = repeat_heads(k, 3), vr = repeat_heads(v, 3);
    AttentionOptions gqa;
    gqa.enable_gqa = true;
    Tensor out = scaled_dot_product_attention(q, k, v, gqa);
    EXPECT_TRUE(testing::bit_equal(out, scaled_dot_product_attention(q, kr, vr))) << dtype_name(dtype);
    EXPECT_TRUE(all_close(out, explicit_attention(q, k, v, 0.5, kNoBias, 3), tolerance(dtype), tolerance(dtype)));
    // with a per-head mask and with causal
    Tensor mask = bool_mask({2, 6, 3, 5}, 4);
    gqa.attn_mask = mask;
    AttentionOptions plain;
    plain.attn_mask = mask;
    EXPECT_TRUE(testing::bit_equal(scaled_dot_product_attention(q, k, v, gqa), scaled_dot_product_attention(q, kr, vr, plain)));
    gqa.attn_mask.reset();
    gqa.causal = CausalMode::lower_right;
    plain.attn_mask.reset();
    plain.causal = CausalMode::lower_right;
    EXPECT_TRUE(testing::bit_equal(scaled_dot_product_attention(q, k, v, gqa), scaled_dot_product_attention(q, kr, vr, plain)));
    // enable_gqa with equal head counts changes nothing
    EXPECT_TRUE(testing::bit_equal(scaled_dot_product_attention(q, kr, vr, std::nullopt, false, std::nullopt, true),
                                   scaled_dot_product_attention(q, kr, vr)));
  }
}

TEST(ScaledDotProductAttention, RowWithNothingToAttendGivesZerosAndNaNStaysInItsRow) {
  testing::ReferenceOnly ref;
  Tensor q = randn({1, 1, 3, 4}, DType::f32, 1), k = randn({1, 1, 4, 4}, DType::f32, 2);
  Tensor v = randn({1, 1, 4, 2}, DType::f32, 3);
  Tensor mask = Tensor::from_vector({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, {3, 4}, DType::boolean);
  Tensor out = scaled_dot_product_attention(q, k, v, mask, false);
  EXPECT_TRUE(all_close(out.select(2, 1), {0, 0}, 0, 0));
  EXPECT_TRUE(all_close(out, explicit_attention(q, k, v, 0.5, mask_bias(mask, {1, 1, 3, 4})), 1e-6, 1e-6));
  Tensor fmask = Tensor::from_vector({0, 0, 0, 0, -kInf, -kInf, -kInf, -kInf, 0, 0, 0, 0}, {3, 4}, DType::f32);
  EXPECT_TRUE(all_close(scaled_dot_product_attention(q, k, v, fmask, false).select(2, 1), {0, 0}, 0, 0));
  // NaN in one query row poisons that row only.
  Tensor qn = q.clone();
  qn.select(2, 2).select(2, 0).fill(NAN);
  const auto y = scaled_dot_product_attention(qn, k, v).to_vector();
  for (int n = 0; n < 6; ++n) EXPECT_EQ(std::isnan(y[n]), n >= 4) << n;
}

TEST(ScaledDotProductAttention, EmptyDims) {
  testing::ReferenceOnly ref;
  auto sdpa = [](const Shape& qs, const Shape& ks, const Shape& vs) {
    return scaled_dot_product_attention(randn(qs, DType::f32, 1), randn(ks, DType::f32, 2), randn(vs, DType::f32, 3));
  };
  EXPECT_EQ(sdpa({0, 2, 3, 4}, {0, 2, 5, 4}, {0, 2, 5, 3}).shape(), (Shape{0, 2, 3, 3}));
  EXPECT_EQ(sdpa({1, 2, 0, 4}, {1, 2, 5, 4}, {1, 2, 5, 3}).shape(), (Shape{1, 2, 0, 3}));
  EXPECT_EQ(sdpa({1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 0}).shape(), (Shape{1, 2, 3, 0}));
  // No keys: every row has nothing to attend.
  Tensor no_keys = sdpa({1, 2, 3, 4}, {1, 2, 0, 4}, {1, 2, 0, 3});
  EXPECT_EQ(no_keys.shape(), (Shape{1, 2, 3, 3}));
  for (double x : no_keys.to_vector()) EXPECT_EQ(x, 0.0);
  // E = 0: every score is 0 (PyTorch scales q and k before the product), so the output is the mean of v.
  Tensor v = randn({1, 1, 4, 2}, DType::f64, 3);
  Tensor out = scaled_dot_product_attention(Tensor::empty({1, 1, 2, 0}, DType::f64), Tensor::empty({1, 1, 4, 0}, DType::f64), v);
  const auto vv = v.to_vector();
  const double m0 = (vv[0] + vv[2] + vv[4] + vv[6]) / 4, m1 = (vv[1] + vv[3] + vv[5] + vv[7]) / 4;
  EXPECT_TRUE(all_close(out, {m0, m1, m0, m1}, 1e-14, 1e-14));
  // size-1 everything
  Tensor one = sdpa({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1});
  EXPECT_TRUE(all_close(one, randn({1, 1, 1, 1}, DType::f32, 3), 0, 0));
}

struct BackwardCase {
  const char* name;
  Shape q, k, v;
  AttentionOptions options;
};

TEST(ScaledDotProductAttentionBackward, MatchesFiniteDifferences) {
  testing::ReferenceOnly ref;
  std::vector<BackwardCase> cases;
  cases.push_back({"plain", {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 3}, {}});
  AttentionOptions float_mask_o;
  float_mask_o.attn_mask = float_mask({1, 1, 3, 5}, DType::f64, 5);
  cases.push_back({"float mask", {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 3}, float_mask_o});
  AttentionOptions bool_mask_o;
  bool_mask_o.attn_mask = Tensor::from_vector({1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0}, {3, 5}, DType::boolean);
  bool_mask_o.scale = 0.7;
  cases.push_back({"bool mask with an empty row", {1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 3}, bool_mask_o});
  AttentionOptions causal;
  causal.causal = CausalMode::top_left;
  cases.push_back({"top_left L > S", {1, 1, 4, 3}, {1, 1, 2, 3}, {1, 1, 2, 2}, causal});
  causal.causal = CausalMode::lower_right;
  cases.push_back({"lower_right L > S", {1, 1, 4, 3}, {1, 1, 2, 3}, {1, 1, 2, 2}, causal});
  AttentionOptions gqa;
  gqa.enable_gqa = true;
  gqa.attn_mask = float_mask({4, 3, 5}, DType::f64, 6);
  cases.push_back({"gqa with mask", {1, 4, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 3}, gqa});

  for (const BackwardCase& c : cases) {
    Tensor q = randn(c.q, DType::f64, 1), k = randn(c.k, DType::f64, 2), v = randn(c.v, DType::f64, 3);
    Shape out_shape = c.q;
    out_shape.back() = c.v.back();
    Tensor g = randn(out_shape, DType::f64, 4);
    const AttentionGrads grads = scaled_dot_product_attention_backward(g, q, k, v, c.options);
    auto fq = [&](const Tensor& x) { return testing::dot(scaled_dot_product_attention(x, k, v, c.options), g); };
    auto fk = [&](const Tensor& x) { return testing::dot(scaled_dot_product_attention(q, x, v, c.options), g); };
    auto fv = [&](const Tensor& x) { return testing::dot(scaled_dot_product_attention(q, k, x, c.options), g); };
    EXPECT_TRUE(all_close(grads.grad_q, testing::finite_difference(fq, q), 1e-6, 1e-8)) << c.name << " dq";
    EXPECT_TRUE(all_close(grads.grad_k, testing::finite_difference(fk, k), 1e-6, 1e-8)) << c.name << " dk";
    EXPECT_TRUE(all_close(grads.grad_v, testing::finite_difference(fv, v), 1e-6, 1e-8)) << c.name << " dv";
  }
}

TEST(ScaledDotProductAttentionBackward, EmptyRowHasZeroGradientAndLayoutsAgree) {
  testing::ReferenceOnly ref;
  Tensor q = randn({2, 1, 2, 3, 4}, DType::f32, 1), k = randn({2, 1, 2, 5, 4}, DType::f32, 2);
  Tensor v = randn({2, 1, 2, 5, 3}, DType::f32, 3), g = randn({2, 1, 2, 3, 3}, DType::f32, 4);
  AttentionOptions o;
  o.attn_mask = Tensor::from_vector({1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, {3, 5}, DType::boolean);
  const AttentionGrads a = scaled_dot_product_attention_backward(g, q, k, v, o);
  EXPECT_EQ(a.grad_q.shape(), q.shape());
  EXPECT_EQ(a.grad_k.shape(), k.shape());
  EXPECT_EQ(a.grad_v.shape(), v.shape());
  for (double x : a.grad_q.select(3, 1).contiguous().to_vector()) EXPECT_EQ(x, 0.0);
  const AttentionGrads b = scaled_dot_product_attention_backward(testing::non_contiguous(g), testing::non_contiguous(q),
                                                                 testing::non_contiguous(k), testing::non_contiguous(v), o);
  EXPECT_TRUE(testing::bit_equal(a.grad_q, b.grad_q));
  EXPECT_TRUE(testing::bit_equal(a.grad_k, b.grad_k));
  EXPECT_TRUE(testing::bit_equal(a.grad_v, b.grad_v));
  // The f32 result is the f64 gradient of the same values, rounded once.
  const AttentionGrads c = scaled_dot_product_attention_backward(g.to(DType::f64), q.to(DType::f64), k.to(DType::f64),
                                                                 v.to(DType::f64), o);
  EXPECT_TRUE(testing::bit_equal(a.grad_q, c.grad_q.to(DType::f32)));
  EXPECT_TRUE(testing::bit_equal(a.grad_k, c.grad_k.to(DType::f32)));
  EXPECT_TRUE(testing::bit_equal(a.grad_v, c.grad_v.to(DType::f32)));
}

TEST(ScaledDotProductAttention, BadArgumentsNameOpAndArgument) {
  const char* op = "scaled_dot_product_attention";
  Tensor q = Tensor::zeros({1, 4, 3, 8}, DType::f32), k = Tensor::zeros({1, 2, 5, 8}, DType::f32);
  Tensor v = Tensor::zeros({1, 2, 5, 6}, DType::f32);
  auto sdpa = [&](const Tensor& qq, const Tensor& kk, const Tensor& vv, AttentionOptions o) {
    return [=] { scaled_dot_product_attention(qq, kk, vv, o); };
  };
  AttentionOptions gqa;
  gqa.enable_gqa = true;
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q.select(0, 0).select(0, 0), k, v, gqa), {op, "'q'", "at least 3"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k.select(0, 0), v, gqa), {op, "'k'", "4-D"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, v.unsqueeze(0), gqa), {op, "'v'", "4-D"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k.expand({2, 2, 5, 8}), v, gqa), {op, "'k'", "leading dims"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, v, {}), {op, "'k'", "4 heads", "enable_gqa"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, Tensor::zeros({1, 3, 5, 8}, DType::f32),
                                                    Tensor::zeros({1, 3, 5, 6}, DType::f32), gqa),
                                               {op, "'k'", "divides the 4 heads", "[1, 3, 5, 8]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, Tensor::zeros({1, 2, 5, 7}, DType::f32), v, gqa), {op, "'k'", "size 8"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, Tensor::zeros({1, 2, 4, 6}, DType::f32), gqa), {op, "'v'", "size 5"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, Tensor::zeros({1, 1, 5, 6}, DType::f32), gqa), {op, "'v'", "size 2"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(sdpa(q, k.to(DType::bf16), v, gqa), {op, "'k'", "float32", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(sdpa(q.to(DType::i32), k, v, gqa), {op, "'q'", "int32"}));

  AttentionOptions m = gqa;
  m.attn_mask = Tensor::zeros({3, 4}, DType::boolean);
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "[1, 4, 3, 5]", "[3, 4]"}));
  m.attn_mask = Tensor::zeros({2, 4, 3, 5}, DType::boolean);
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "broadcasts"}));
  m.attn_mask = Tensor::zeros({1, 1, 4, 3, 5}, DType::boolean);
  EXPECT_TRUE(testing::throws_with<ShapeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "broadcasts"}));
  m.attn_mask = Tensor::zeros({3, 5}, DType::i32);
  EXPECT_TRUE(testing::throws_with<DTypeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "bool", "int32"}));
  m.attn_mask = Tensor::zeros({3, 5}, DType::i64);
  EXPECT_TRUE(testing::throws_with<DTypeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "int64"}));
  m.attn_mask = Tensor::zeros({3, 5}, DType::f16);
  EXPECT_TRUE(testing::throws_with<DTypeError>(sdpa(q, k, v, m), {op, "'attn_mask'", "float32", "float16"}));
  m.attn_mask = Tensor::zeros({3, 5}, DType::boolean);
  m.causal = CausalMode::top_left;
  EXPECT_TRUE(testing::throws_with<ValueError>(sdpa(q, k, v, m), {op, "'attn_mask'", "causal"}));
  EXPECT_TRUE(testing::throws_with<ValueError>(
      [&] { scaled_dot_product_attention(q, k, v, Tensor::zeros({3, 5}, DType::f32), true, std::nullopt, true); },
      {op, "'attn_mask'", "causal"}));

  const char* bop = "scaled_dot_product_attention_backward";
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { scaled_dot_product_attention_backward(Tensor::zeros({1, 4, 3, 8}, DType::f32), q, k, v, gqa); },
      {bop, "'grad_out'", "[1, 4, 3, 6]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { scaled_dot_product_attention_backward(Tensor::zeros({1, 4, 3, 6}, DType::f64), q, k, v, gqa); },
      {bop, "'grad_out'", "float64"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { scaled_dot_product_attention_backward(Tensor::zeros({1, 4, 3, 6}, DType::f32), q, k, v, {}); },
      {bop, "'k'", "enable_gqa"}));
}

}  // namespace
}  // namespace fourfold
