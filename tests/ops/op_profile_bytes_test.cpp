// The op profile's bytes per call (its GB/s column): the VAE's and the norms' ops count each input, weight and
// output once, as the decode's ops do; an op without an estimate would print 0.00 GB/s.
#include <map>

#include "fourfold/profile.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

double nbytes(const Tensor& t) { return static_cast<double>(t.nbytes()); }

TEST(OpProfileBytes, TheVaeOpsCountTheirInputsWeightsAndOutputs) {
  const Tensor x3 = testing::randn({1, 4, 3, 6, 5}, DType::f32, 1);
  const Tensor w3 = testing::randn({8, 4, 3, 3, 3}, DType::f32, 2);
  const Tensor b = testing::randn({8}, DType::f32, 3);
  const Tensor x2 = testing::randn({1, 4, 6, 5}, DType::f32, 4);
  const Tensor w2 = testing::randn({8, 4, 3, 3}, DType::f32, 5);
  const Tensor gamma = testing::randn({4}, DType::f32, 6);
  const Tensor beta = testing::randn({4}, DType::f32, 7);
  start_op_profile();
  const Tensor c3 = conv3d(x3, w3, b);
  const Tensor c2 = conv2d(x2, w2, b);
  const Tensor padded = constant_pad_nd(x3, {1, 1, 1, 1, 2, 0});
  const Tensor normed = channel_rms_norm(x3, gamma, 1e-6, true);
  const Tensor up = upsample_nearest(x3, {3, 12, 10});
  const Tensor grouped = group_norm(x2, 2, gamma, beta);
  const Tensor layered = layer_norm(x2, {5});
  const Tensor g = gelu(x2);
  stop_op_profile();
  std::map<std::string, double> bytes;
  for (const OpProfileRow& r : op_profile_rows()) bytes[r.op] += r.bytes;
  EXPECT_DOUBLE_EQ(bytes["conv3d"], nbytes(x3) + nbytes(w3) + nbytes(b) + nbytes(c3));
  EXPECT_DOUBLE_EQ(bytes["conv2d"], nbytes(x2) + nbytes(w2) + nbytes(b) + nbytes(c2));
  EXPECT_DOUBLE_EQ(bytes["constant_pad_nd"], nbytes(x3) + nbytes(padded));
  EXPECT_DOUBLE_EQ(bytes["channel_rms_norm"], nbytes(x3) + nbytes(gamma) + nbytes(normed));
  EXPECT_DOUBLE_EQ(bytes["upsample_nearest"], nbytes(x3) + nbytes(up));
  EXPECT_DOUBLE_EQ(bytes["group_norm"], nbytes(x2) + nbytes(gamma) + nbytes(beta) + nbytes(grouped));
  EXPECT_DOUBLE_EQ(bytes["layer_norm"], nbytes(x2) + nbytes(layered));
  EXPECT_DOUBLE_EQ(bytes["gelu"], nbytes(x2) + nbytes(g));
}

// The ops whose Args once fell to a default of 0 bytes (op_bytes.h now deletes it, so a missing estimate does not
// compile): a matrix product and the backward ops.
TEST(OpProfileBytes, ProductsAndBackwardOpsCountTheirTensors) {
  const Tensor a = testing::randn({3, 5}, DType::f32, 1), b = testing::randn({5, 4}, DType::f32, 2);
  const Tensor s = softmax(testing::randn({3, 5}, DType::f32, 3), -1), grad = testing::randn({3, 5}, DType::f32, 4);
  start_op_profile();
  const Tensor m = matmul(a, b);
  const Tensor gs = softmax_backward(grad, s, -1);
  stop_op_profile();
  std::map<std::string, double> bytes;
  for (const OpProfileRow& r : op_profile_rows()) bytes[r.op] += r.bytes;
  EXPECT_DOUBLE_EQ(bytes["matmul"], nbytes(a) + nbytes(b) + nbytes(m));
  EXPECT_DOUBLE_EQ(bytes["softmax_backward"], nbytes(grad) + nbytes(s) + nbytes(gs));
}

}  // namespace
}  // namespace fourfold
