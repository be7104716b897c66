// The dedicated CPU constant_pad_nd, at every ISA level the host has: bit-exact against the reference for every
// dtype, crops and mixed pads, layouts, a large 5-D video tensor, and one or two threads.
#include "backends/cpu/isa.h"
#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::bit_equal;

struct PadCase {
  Shape shape;
  std::vector<int64_t> pads;
  double value;
};

const PadCase kCases[] = {
    {{7}, {2, 1}, 3},
    {{7}, {-1, 2}, 1},
    {{7}, {-3, -4}, 1},                          // cropped to nothing
    {{2, 3, 4}, {1, -1, 0, 2}, -2},
    {{2, 3, 4, 5}, {1, 2, -1, 1, 2, 0}, 0.5},    // three padded dims, leading dim flattened
    {{4, 5, 6}, {0, 0, 0, 0, 1, 1}, 1},          // only the outermost dim padded
    {{3, 4, 33}, {0, 0, 2, -1}, 0},              // rows copied whole, some rows fill only
    {{0, 3}, {1, 1, 1, 0}, 4},                   // empty input, padded
    {{}, {}, 0},                                 // rank 0
    {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 1, 0, 0, 1, 0, 0, 0, 1, -1, 0, 0, 1, 1, 0, 1}, 2},   // rank 8
};

// The call on the reference and on the dedicated tier (which must report that it ran, with this level's name).
::testing::AssertionResult matches_reference(const Tensor& x, const std::vector<int64_t>& pads, double value,
                                             cpu::Isa isa) {
  Tensor want;
  {
    testing::ReferenceOnly ref;
    want = constant_pad_nd(x, pads, value);
  }
  reset_dispatch_counts();
  Tensor got;
  {
    ScopedPolicy dedicated(Policy::parse("dedicated"));
    got = constant_pad_nd(x, pads, value);
  }
  const auto counts = dispatch_counts();
  if (counts.size() != 1 || counts[0].calls[static_cast<int>(Tier::dedicated)] != 1 ||
      counts[0].last_variant != cpu::isa_name(isa))
    return ::testing::AssertionFailure() << "the dedicated kernel did not run at level " << cpu::isa_name(isa);
  return bit_equal(got, want) << " (" << x.describe() << ", level " << cpu::isa_name(isa) << ")";
}

class CpuPad : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_num_threads(GetParam()); }
  void TearDown() override { set_num_threads(threads_); }
  int threads_ = num_threads();
};

TEST_P(CpuPad, EveryDTypeAndCaseIsBitExact) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    uint64_t seed = 1;
    for (DType t : testing::kAllDTypes)
      for (const PadCase& c : kCases) {
        const Tensor x = testing::random_bits(c.shape, t, seed++);
        EXPECT_TRUE(matches_reference(x, c.pads, c.value, isa));
      }
  }
}

TEST_P(CpuPad, NonContiguousInputs) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    uint64_t seed = 100;
    for (DType t : {DType::f32, DType::bf16, DType::f8_e4m3fn, DType::i64, DType::complex64})
      for (const PadCase& c : kCases) {
        const Tensor x = testing::random_bits(c.shape, t, seed++);
        EXPECT_TRUE(matches_reference(testing::non_contiguous(x), c.pads, c.value, isa));
      }
    // Inner stride 2, a broadcast (stride 0) input, and a transposed plane.
    const Tensor y = testing::random_bits({5, 6, 40}, DType::f16, 7);
    EXPECT_TRUE(matches_reference(y.slice(2, 1, 40, 2), {3, -2, 1, 1}, 0, isa));
    EXPECT_TRUE(matches_reference(testing::random_bits({1, 9}, DType::i32, 8).expand({4, 9}), {1, 1, 2, 2}, 5, isa));
    EXPECT_TRUE(matches_reference(y.transpose(0, 2), {1, 0, 0, 0, 2, 2}, 1, isa));
    // Channels-last (C stride 1, rows strided): the tiled path, with tiles cut by the pads and crops of C.
    for (DType t : {DType::bf16, DType::f32, DType::f8_e5m2, DType::complex64}) {
      const Tensor cl = testing::random_bits({1, 3, 5, 7, 70}, t, 9).permute({0, 4, 1, 2, 3});
      EXPECT_TRUE(matches_reference(cl, {1, 1, 1, 1, 2, 0}, 0, isa));
      EXPECT_TRUE(matches_reference(cl, {-1, 2, 0, 0, 1, -1, 3, -5}, 1, isa));
      EXPECT_TRUE(matches_reference(cl, {0, 0, 0, 0, 0, 0, -3, 40}, 2, isa));
    }
  }
}

// The causal video VAE's pad: [1, C, T, H, W] with a large H * W plane, frames padded before T only.
TEST_P(CpuPad, LargeVideoTensor) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    const Tensor x = testing::random_bits({1, 2, 3, 256, 257}, DType::bf16, 11);
    EXPECT_TRUE(matches_reference(x, {1, 1, 1, 1, 2, 0}, 0, isa));
    EXPECT_TRUE(matches_reference(x, {-1, 2, 0, -3, 1, -1}, 0, isa));
  }
}

TEST_P(CpuPad, BackwardIsTheCrop) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    const Tensor g = testing::random_bits({3, 6, 9}, DType::f32, 12);
    Tensor want;
    {
      testing::ReferenceOnly ref;
      want = constant_pad_nd_backward(g, {1, 2, -1, 2});
    }
    ScopedPolicy dedicated(Policy::parse("dedicated"));
    EXPECT_TRUE(bit_equal(constant_pad_nd_backward(g, {1, 2, -1, 2}), want));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuPad, ::testing::Values(1, 2));

}  // namespace
}  // namespace fourfold
