// Bytes, flops and the roofline of op-time rows on hand-computed cases; small rows timed end to end through
// the reference tier; the reference cap; a failing op recorded, not thrown.
#include <cmath>

#include "check/error_metrics.h"
#include "check/op_bench.h"
#include "check/op_cases/op_case.h"
#include "fourfold/policy.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

BenchCase make(std::string op, DType dtype, CaseParams params) {
  BenchCase c;
  c.suite = "test";
  c.op = std::move(op);
  c.name = "hand";
  c.shape = "hand";
  c.dtype = dtype;
  c.params = std::move(params);
  return c;
}

RooflineProbe fake_probe(double read, double write, double fma) {
  RooflineProbe p;
  p.read_gbs.median = read;
  p.write_gbs.median = write;
  p.fma_gflops.median = fma;
  return p;
}

TEST(OpBench, CostsOnHandCases) {
  // linear bf16, M 4, N 8, K 16, bias: read (64 + 128 + 8) * 2, write 32 * 2, 2*4*8*16 flops.
  OpCost c = op_cost(make("linear", DType::bf16, LinearCase{4, 8, 16, true}));
  EXPECT_EQ(c.bytes_read, 400);
  EXPECT_EQ(c.bytes_written, 64);
  EXPECT_EQ(c.flops, 1024);
  // Weight-only: f32 x [1, 16], bf16 weight [8, 16]: read 16 * 4 + 128 * 2; fp8 blocks add one f32 scale.
  c = op_cost(make("linear", DType::f32, LinearCase{1, 8, 16, false, DType::bf16}));
  EXPECT_EQ(c.bytes_read, 64 + 256);
  EXPECT_EQ(c.bytes_written, 32);
  c = op_cost(make("linear", DType::bf16, LinearCase{1, 8, 16, false, DType::f8_e4m3fn, Fp8Recipe::block_128x128}));
  EXPECT_EQ(c.bytes_read, 32 + 128 + 4);
  c = op_cost(make("softmax", DType::f32, SoftmaxCase{3, 10, -1}));
  EXPECT_EQ(c.bytes_read, 120);
  EXPECT_EQ(c.bytes_written, 120);
  EXPECT_EQ(c.flops, 0);
  // pad [1, 2, 3, 4, 5] by W (1, 1), H (1, 1), T (2, 0) -> [1, 2, 5, 6, 7].
  c = op_cost(make("constant_pad_nd", DType::bf16, PadCase{{1, 2, 3, 4, 5}, {1, 1, 1, 1, 2, 0}}));
  EXPECT_EQ(c.bytes_read, 120 * 2);
  EXPECT_EQ(c.bytes_written, 420 * 2);
  // moe: 2 tokens x top 2 over 4 experts, even -> groups 1, 1, 1, 1 (all active); K 8, N 6, bf16.
  c = op_cost(make("grouped_mm", DType::bf16, MoeCase{2, 4, 2, 6, 8, "p", MoeRouting::even}));
  EXPECT_EQ(c.bytes_read, (4 * 8 + 4 * 8 * 6) * 2 + 16);
  EXPECT_EQ(c.bytes_written, 4 * 6 * 2);
  EXPECT_EQ(c.flops, 2 * 4 * 6 * 8);
  // empty routing: the same rows on 2 experts only -> 2 experts' weights read.
  c = op_cost(make("grouped_mm", DType::bf16, MoeCase{2, 4, 2, 6, 8, "p", MoeRouting::empty}));
  EXPECT_EQ(c.bytes_read, (4 * 8 + 2 * 8 * 6) * 2 + 16);
  // moe_experts, same routing (n = I 6, k = H 8): x [2, 8] once, gate + up + down of the 2 active experts,
  // token and weight per row and offs per expert, out [2, 8]; 3 products per row.
  c = op_cost(make("moe_experts", DType::bf16, MoeCase{2, 4, 2, 6, 8, "p", MoeRouting::empty}));
  EXPECT_EQ(c.bytes_read, (2 * 8 + 3 * 2 * 8 * 6) * 2 + 4 * (2 * 4 + 4));
  EXPECT_EQ(c.bytes_written, 2 * 8 * 2);
  EXPECT_EQ(c.flops, 6 * 4 * 6 * 8);
  // attention decode: B 1, Hq 4, Hk 2, L 1, S 10, E 8, f32.
  c = op_cost(make("scaled_dot_product_attention", DType::f32, AttentionCase{1, 4, 2, 8, 1, 10, CausalMode::none}));
  EXPECT_EQ(c.bytes_read, (4 * 8 + 2 * 2 * 10 * 8) * 4);
  EXPECT_EQ(c.bytes_written, 4 * 8 * 4);
  EXPECT_EQ(c.flops, 2.0 * 4 * 10 * 16);
  // causal prefill L = S = 4: 1 + 2 + 3 + 4 = 10 pairs per head.
  c = op_cost(make("scaled_dot_product_attention", DType::f32, AttentionCase{1, 2, 2, 8, 4, 4, CausalMode::top_left}));
  EXPECT_EQ(c.flops, 2.0 * 2 * 10 * 16);
  // lower_right L 2, S 5: query 0 sees 4 keys, query 1 sees 5.
  c = op_cost(make("scaled_dot_product_attention", DType::f32, AttentionCase{1, 1, 1, 8, 2, 5, CausalMode::lower_right}));
  EXPECT_EQ(c.flops, 2.0 * 9 * 16);
  // fp8 rowwise M 2, N 256, K 300: bytes 1 each, scales [2, 1] + [1, 256] in f32, bf16 out.
  c = op_cost(make("scaled_mm", DType::f8_e4m3fn, Fp8LinearCase{2, 256, 300, Fp8Recipe::rowwise, DType::bf16}));
  EXPECT_EQ(c.bytes_read, 2 * 300 + 256 * 300 + 4 * (2 + 256));
  EXPECT_EQ(c.bytes_written, 2 * 256 * 2);
  // 128x128 blocks: a [2, 3] and b [3, 2].
  c = op_cost(make("scaled_mm", DType::f8_e4m3fn, Fp8LinearCase{2, 256, 300, Fp8Recipe::block_128x128, DType::bf16}));
  EXPECT_EQ(c.bytes_read, 2 * 300 + 256 * 300 + 4 * (6 + 6));
}

TEST(OpBench, RooflinePointFormula) {
  const RooflineProbe p = fake_probe(40, 20, 100);
  // Memory bound: 4e9 read + 1e9 written at 40 / 20 GB/s -> 0.1 + 0.05 s; 1e9 flops -> 0.01 s.
  OpCost cost{4e9, 1e9, 1e9};
  RooflinePoint r = roofline_point(cost, 0.3, p);
  EXPECT_NEAR(r.floor_us, 0.15e6, 1e-3);
  EXPECT_NEAR(r.fraction, 0.5, 1e-12);
  EXPECT_NEAR(r.gbs, 5e9 / 0.3 / 1e9, 1e-9);
  EXPECT_NEAR(r.gflops, 1e9 / 0.3 / 1e9, 1e-9);
  EXPECT_NEAR(r.bandwidth_gbs, 5e9 / 0.15 / 1e9, 1e-9);
  EXPECT_FALSE(r.compute_bound);
  // Compute bound: 1e11 flops at 100 GFLOP/s = 1 s.
  r = roofline_point(OpCost{4e9, 0, 1e11}, 2.0, p);
  EXPECT_TRUE(r.compute_bound);
  EXPECT_NEAR(r.fraction, 0.5, 1e-12);
  EXPECT_EQ(roofline_point(cost, 0.0, p).fraction, 0.0);
}

TEST(OpBench, SmallRowsRunOnTheReferenceTier) {
  testing::ReferenceOnly ref;
  EXPECT_EQ(expected_tier("linear"), Tier::reference);
  const RooflineProbe p = fake_probe(30, 20, 100);
  BenchOptions options;
  options.timer.warmup = 1;
  options.timer.samples = 3;
  options.timer.min_sample_seconds = 1e-4;
  options.rotate_bytes = 1 << 16;
  options.max_copies = 4;
  const std::vector<BenchCase> cases = {
      make("linear", DType::bf16, LinearCase{1, 16, 32, true}),
      make("linear", DType::f32, LinearCase{1, 16, 32, false, DType::bf16}),
      make("linear", DType::bf16, LinearCase{1, 130, 260, false, DType::f8_e4m3fn, Fp8Recipe::block_128x128}),
      make("softmax", DType::f32, SoftmaxCase{2, 64, -1}),
      make("constant_pad_nd", DType::bf16, PadCase{{1, 2, 3, 4, 5}, {1, 1, 1, 1, 2, 0}, PadLayout::channels_last}),
      make("constant_pad_nd", DType::f32, PadCase{{6, 7}, {0, 3}, PadLayout::sliced}),
      make("constant_pad_nd", DType::f32, PadCase{{6, 7}, {1, 1}, PadLayout::channels_last}),
      make("grouped_mm", DType::bf16, MoeCase{3, 8, 2, 16, 8, "p", MoeRouting::skewed}),
      make("moe_experts", DType::bf16, MoeCase{3, 8, 2, 16, 8, "p", MoeRouting::skewed}),
      make("scaled_dot_product_attention", DType::bf16, AttentionCase{1, 4, 2, 8, 1, 12, CausalMode::none}),
      make("scaled_dot_product_attention", DType::f32, AttentionCase{1, 2, 1, 8, 4, 4, CausalMode::top_left}),
      make("scaled_mm", DType::f8_e4m3fn, Fp8LinearCase{2, 130, 260, Fp8Recipe::block_128x128, DType::bf16}),
      make("scaled_mm", DType::f8_e4m3fn, Fp8LinearCase{1, 16, 32, Fp8Recipe::tensorwise, DType::f32}),
      make("rms_norm", DType::bf16, RowOpCase{find_op_cases("rms_norm"), 3, 40}),
      make("rms_norm", DType::f32, RowOpCase{find_op_cases("add_rms_norm"), 3, 40}),
      make("rotary_embedding", DType::bf16, RowOpCase{find_op_cases("rotary_embedding"), 2, 16, 3}),
      make("silu_mul", DType::f32, RowOpCase{find_op_cases("silu_mul"), 2, 33}),
      make("softmax_backward", DType::f32, RowOpCase{find_op_cases("softmax_backward"), 2, 33}),
      make("constant_pad_nd_backward", DType::bf16, RowOpCase{find_op_cases("constant_pad_nd_backward"), 5, 6}),
      make("linear_backward", DType::f32, RowOpCase{find_op_cases("linear_backward"), 1, 1, 1, 3, 5, 7}),
      make("matmul", DType::complex64, RowOpCase{find_op_cases("complex_matmul"), 1, 1, 1, 2, 5, 7}),
      make("log_softmax", DType::bf16, RowOpCase{find_op_cases("log_softmax"), 2, 33}),
      make("log_softmax_backward", DType::f32, RowOpCase{find_op_cases("log_softmax_backward"), 2, 33}),
      make("rms_norm_backward", DType::bf16, RowOpCase{find_op_cases("rms_norm_backward"), 3, 40}),
      make("scaled_dot_product_attention_backward", DType::f32,
           RowOpCase{find_op_cases("scaled_dot_product_attention_backward"), 5, 8, 4, 1, 1, 1, 2}),
      make("layer_norm", DType::f32, RowOpCase{find_op_cases("layer_norm"), 3, 40}),
      make("group_norm", DType::bf16, RowOpCase{find_op_cases("group_norm"), 1, 1, 1, 1, 1, 1, 1, {2, 8, 3, 5}, {}, 4}),
      make("channel_rms_norm", DType::bf16, RowOpCase{find_op_cases("channel_rms_norm"), 1, 1, 1, 1, 1, 1, 1, {1, 6, 2, 3, 5}}),
      make("silu", DType::f32, RowOpCase{find_op_cases("silu"), 2, 33}),
      make("gelu", DType::bf16, RowOpCase{find_op_cases("gelu"), 2, 33}),
      make("add", DType::bf16, RowOpCase{find_op_cases("add"), 2, 33}),
      make("mul", DType::f32, RowOpCase{find_op_cases("mul"), 2, 33}),
      make("embedding", DType::bf16, RowOpCase{find_op_cases("embedding"), 4, 16, 1, 1, 50}),
      make("topk", DType::f32, RowOpCase{find_op_cases("topk"), 3, 100, 1, 1, 1, 5}),
      make("argmax", DType::bf16, RowOpCase{find_op_cases("argmax"), 3, 100}),
      make("upsample_nearest", DType::f32,
           RowOpCase{find_op_cases("upsample_nearest"), 1, 1, 1, 1, 1, 1, 1, {2, 3, 4, 5}, {8, 10}}),
  };
  for (const BenchCase& c : cases) {
    SCOPED_TRACE(c.op);
    const BenchRow row = run_bench_case(c, p, options);
    ASSERT_TRUE(row.ran()) << row.error << row.skipped;
    EXPECT_EQ(row.tier, "reference");
    EXPECT_EQ(row.timing.samples, 3);
    EXPECT_GT(row.timing.median_us, 0.0);
    EXPECT_GT(row.roof.gbs, 0.0);
    EXPECT_GT(row.roof.fraction, 0.0);
    EXPECT_GE(row.copies, 1);
    EXPECT_LE(row.copies, 4);
  }
}

// rms_norm rows pass an explicit eps: the default (the dtype's epsilon) would differ between an f32 row and its
// float64 oracle and shift every output by ~0.5 ulp. The reference tier computes in float64, so with one eps
// its f32 output is exactly the oracle's, rounded.
TEST(OpBench, RmsNormRowsUseOneEpsForTheRowAndItsOracle) {
  testing::ReferenceOnly ref;
  const BenchCase c = make("rms_norm", DType::f32, RowOpCase{find_op_cases("rms_norm"), 3, 40});
  const Tensor got = make_bench_call(c, 7)();
  const Tensor want = make_bench_call(c, 7, true)();
  EXPECT_TRUE(compare_to_reference(got, want).exact);
}

TEST(OpBench, ReferenceCapSkipsBigRows) {
  testing::ReferenceOnly ref;
  BenchOptions options;
  options.reference_work_cap = 1000;
  const BenchCase big = make("linear", DType::bf16, LinearCase{1, 4096, 4096, false});
  EXPECT_GT(case_work(big), 1000);
  const BenchRow row = run_bench_case(big, fake_probe(30, 20, 100), options);
  EXPECT_FALSE(row.ran());
  EXPECT_NE(row.skipped.find("reference tier"), std::string::npos);
  EXPECT_EQ(row.cost.flops, 2.0 * 4096 * 4096);
}

TEST(OpBench, AFailingOpIsRecordedNotThrown) {
  testing::ReferenceOnly ref;
  // A pad that crops a dim below zero is a ShapeError from the op.
  const BenchCase bad = make("constant_pad_nd", DType::f32, PadCase{{2, 3}, {-2, -2}});
  BenchOptions options;
  options.timer.warmup = 1;
  options.timer.samples = 1;
  const BenchRow row = run_bench_case(bad, fake_probe(30, 20, 100), options);
  EXPECT_FALSE(row.ran());
  EXPECT_NE(row.error.find("constant_pad_nd"), std::string::npos) << row.error;
}

}  // namespace
}  // namespace fourfold
