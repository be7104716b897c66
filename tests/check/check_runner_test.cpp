// fourfold check end to end on a tiny workload: both sides measured on the same rows, all records present,
// the same workload on both sides, and the result survives its own JSON round trip.
#include <algorithm>
#include <cmath>

#include "check/check_runner.h"
#include "check/compare.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

CheckOptions tiny_options() {
  CheckOptions o;
  o.suites = {"softmax", "pad"};
  o.rows_per_suite = 1;
  o.repeats = 2;
  o.memory_tiles = 3;
  o.reference_work_cap = 1e5;   // nothing fits: each suite contributes its smallest row
  o.probe_budget = ProbeBudget::tiny();
  o.baseline = "reference";
  // The generic pad moves bytes, so it is exact like the reference: a candidate with no correctness regression.
  o.candidate = "pad=generic,softmax=reference";
  // The decoder end to end on tiny-moe, with short contexts.
  o.end_to_end.prefill_tokens = 8;
  o.end_to_end.decode_contexts = {16, 24};
  o.end_to_end.decode_tokens = 2;
  o.end_to_end.repeats = 2;
  o.end_to_end.correctness_prompt = 4;
  o.end_to_end.correctness_steps = 4;
  o.vae.enabled = false;   // VaeWorkloadRecordsBothSides runs it: on the reference tier it takes minutes
  return o;
}

TEST(CheckRunner, VaeWorkloadRecordsBothSides) {
  CheckOptions o = tiny_options();
  o.end_to_end.enabled = false;
  o.baseline = "generic";
  o.candidate = "dedicated";
  o.vae.enabled = true;
  o.vae.latent_frames = 2;
  o.vae.latent_height = o.vae.latent_width = 4;
  o.vae.tile = 32;
  o.vae.tile_stride = 16;   // latent tiles of 4 every 2: a 2 x 2 grid
  o.vae.repeats = 2;
  o.vae.reference_frames = 1;
  o.vae.reference_size = 2;
  o.vae.round_trip_frames = 1;
  o.vae.round_trip_size = 16;
  const CheckResult r = run_check(o);
  for (const RecordSet* s : {&r.baseline, &r.candidate}) {
    ASSERT_TRUE(s->vae_throughput.has_value());
    ASSERT_EQ(s->vae_throughput->rows.size(), 1u);
    const VaeThroughputRow& row = s->vae_throughput->rows[0];
    EXPECT_EQ(row.frames, 5);
    EXPECT_EQ(row.height, 32);
    EXPECT_EQ(row.tiles, 4);
    EXPECT_GT(row.pad_calls, 0);
    EXPECT_EQ(row.samples_frames_per_s.size(), 2u);
    EXPECT_GT(row.median_frames_per_s, 0.0);
    ASSERT_TRUE(s->vae_memory.has_value());
    EXPECT_GT(s->vae_memory->allocated_peak_bytes, 0u);
    ASSERT_EQ(s->correctness->end_to_end.size(), 2u);
    EXPECT_EQ(s->correctness->end_to_end[0].name, "vae_decode");
    EXPECT_GT(s->correctness->end_to_end[0].psnr_db, 100.0);   // f32 tiers against float64
    EXPECT_EQ(s->correctness->end_to_end[1].name, "vae_round_trip");
  }
  EXPECT_EQ(r.baseline.vae_throughput->rows[0].pad_calls, r.candidate.vae_throughput->rows[0].pad_calls);
  const std::vector<std::string>& shapes = r.baseline.manifest.workload.shapes;
  EXPECT_EQ(shapes.back().rfind("vae: preset wan2.1-vae-tiny", 0), 0u) << shapes.back();
  const Comparison c = compare_records(r.baseline, r.candidate);
  ASSERT_TRUE(c.vae_throughput.has_value() && c.vae_memory.has_value());
  EXPECT_EQ(c.vae_throughput->rows.size(), 1u);
  const std::string text = render_text(c);
  EXPECT_NE(text.find("VAE decode (frames/s)"), std::string::npos);
  EXPECT_NE(text.find("Memory of the VAE's tiled decode"), std::string::npos);
  EXPECT_EQ(parse_check_result(to_json_text(r), "round trip"), r);
}

TEST(CheckRunner, WritesAllMeasuredRecordsForBothSides) {
  const CheckResult r = run_check(tiny_options());
  for (const RecordSet* s : {&r.baseline, &r.candidate}) {
    ASSERT_TRUE(s->op_time.has_value());
    ASSERT_TRUE(s->correctness.has_value());
    ASSERT_TRUE(s->memory.has_value());
    ASSERT_TRUE(s->throughput.has_value());
    ASSERT_EQ(s->throughput->rows.size(), 3u);   // prefill, decode at 16 and at 24
    EXPECT_EQ(s->throughput->rows[0].phase, "prefill");
    EXPECT_EQ(s->throughput->rows[2].context_tokens, 24);
    for (const ThroughputRow& t : s->throughput->rows) {
      EXPECT_EQ(t.samples_tokens_per_s.size(), 2u);
      EXPECT_GT(t.median_tokens_per_s, 0.0);
    }
    // tiny-moe is bf16: its run's mode is bf16, judged with the f32 mode against the reference tier in f32.
    ASSERT_EQ(s->correctness->end_to_end.size(), 2u);
    const EndToEndRow& bf16 = s->correctness->end_to_end[0];
    const EndToEndRow& f32 = s->correctness->end_to_end[1];
    EXPECT_EQ(bf16.name, "logits, bfloat16 activations");
    EXPECT_EQ(f32.name, "logits, float32 activations");
    EXPECT_GT(f32.psnr_db, 60.0);   // the baseline's is the reference tier itself: +inf
    EXPECT_EQ(f32.top1_agreement_percent, 100.0);
    // bf16 between ops costs dB that f32 does not: finite even on the reference tier.
    EXPECT_TRUE(std::isfinite(bf16.psnr_db));
    EXPECT_GT(bf16.psnr_db, 20.0);
    EXPECT_LT(bf16.psnr_db, f32.psnr_db);
    ASSERT_TRUE(s->model_memory.has_value());
    EXPECT_GT(s->model_memory->allocated_peak_bytes, 0u);
    EXPECT_EQ(s->model_memory->mapped_weights_bytes, 0u);   // a preset: weights in the allocator
    ASSERT_EQ(s->op_time->rows.size(), 2u);    // one row per suite, the smallest
    EXPECT_EQ(s->op_time->rows[0].suite, "softmax");
    EXPECT_EQ(s->op_time->rows[1].op, "constant_pad_nd");
    for (const OpTimeRow& row : s->op_time->rows) {
      EXPECT_EQ(row.samples_us.size(), 2u);
      EXPECT_GT(row.median_us, 0.0);
      EXPECT_EQ(row.tier, s == &r.candidate && row.op == "constant_pad_nd" ? "generic" : "reference");
      ASSERT_TRUE(row.roofline_percent.has_value());
      EXPECT_GT(*row.roofline_percent, 0.0);
      // Inputs rotate past the caches by default; a row both sides run on the reference tier keeps one set.
      if (row.op == "constant_pad_nd") EXPECT_GT(row.input_copies, 1);
      else EXPECT_EQ(row.input_copies, 1);
    }
    for (const CorrectnessRow& row : s->correctness->ops) {
      EXPECT_TRUE(row.exact) << row.op;   // the reference tier rounds the float64 result once
      EXPECT_EQ(row.max_ulp, 0);
    }
    EXPECT_GT(s->memory->reserved_peak_bytes, 0u);
    EXPECT_GE(s->memory->reserved_peak_bytes, s->memory->allocated_peak_bytes);
    EXPECT_GT(s->memory->process_peak_bytes, 0u);
    ASSERT_TRUE(s->manifest.machine_before.read_bandwidth_gb_per_s.has_value());
    EXPECT_GT(*s->manifest.machine_before.read_bandwidth_gb_per_s, 0.0);
  }
  EXPECT_TRUE(workload_equal(r.baseline.manifest.workload, r.candidate.manifest.workload));
  EXPECT_EQ(r.baseline.manifest.workload.context_lengths, (std::vector<int64_t>{16, 24}));
  EXPECT_EQ(r.baseline.manifest.workload.preset, "tiny-moe");
  const std::vector<std::string>& shapes = r.baseline.manifest.workload.shapes;
  const auto e2e =
      std::find_if(shapes.begin(), shapes.end(), [](const std::string& l) { return l.rfind("end-to-end:", 0) == 0; });
  ASSERT_NE(e2e, shapes.end());
  EXPECT_NE(e2e->find("; activations bfloat16, kv cache bfloat16;"), std::string::npos) << *e2e;
  EXPECT_EQ(r.baseline.manifest.dtypes, (std::vector<std::string>{"float32", "bfloat16"}));
  EXPECT_EQ(r.baseline.manifest.policy, "all=reference");
  EXPECT_EQ(r.candidate.manifest.policy, "constant_pad_nd=generic,softmax=reference");
  // The same rows in the same order on both sides: compare pairs them and finds no regression.
  const Comparison c = compare_records(r.baseline, r.candidate);
  ASSERT_TRUE(c.correctness.has_value());
  for (const CorrectnessDelta& d : c.correctness->ops) EXPECT_TRUE(d.regressions.empty()) << d.op;
  // End to end the baseline is the reference tier itself (PSNR +inf), so any other tier "loses exactness";
  // the candidate's logits must still be close.
  ASSERT_EQ(c.correctness->end_to_end.size(), 2u);
  EXPECT_TRUE(std::isinf(r.baseline.correctness->end_to_end[1].psnr_db));
  EXPECT_EQ(parse_check_result(to_json_text(r), "round trip"), r);
}

// --dtype f32 on a bf16 model: one row, f32 throughout, which is the reference's own mode. --dtype f32 with a
// bf16 cache: that mode's row and the f32 mode's.
TEST(CheckRunner, TheLogitsRowsFollowTheDtypes) {
  CheckOptions o = tiny_options();
  o.suites = {"pad"};
  o.end_to_end.activation = "f32";
  const CheckResult f32 = run_check(o);
  ASSERT_EQ(f32.candidate.correctness->end_to_end.size(), 1u);
  EXPECT_EQ(f32.candidate.correctness->end_to_end[0].name, "logits, float32 activations");
  EXPECT_TRUE(std::isinf(f32.baseline.correctness->end_to_end[0].psnr_db));
  o.end_to_end.kv_cache = "bf16";
  const CheckResult mixed = run_check(o);
  ASSERT_EQ(mixed.candidate.correctness->end_to_end.size(), 2u);
  EXPECT_EQ(mixed.candidate.correctness->end_to_end[0].name, "logits, float32 activations, bfloat16 kv cache");
  EXPECT_EQ(mixed.candidate.correctness->end_to_end[1].name, "logits, float32 activations");
}

// --hot: one input set for every row, and the report says so.
TEST(CheckRunner, HotKeepsOneInputSetAndTheReportSaysWhich) {
  CheckOptions o = tiny_options();
  o.end_to_end.enabled = false;
  o.rotate_bytes = 0;
  const CheckResult hot = run_check(o);
  for (const OpTimeRow& row : hot.candidate.op_time->rows) EXPECT_EQ(row.input_copies, 1) << row.op;
  o.rotate_bytes = size_t{1} << 20;
  const CheckResult rotated = run_check(o);
  const Comparison c = compare_records(hot.candidate, rotated.candidate);
  ASSERT_TRUE(c.op_time.has_value());
  bool saw_mixed = false;
  for (const OpTimeDelta& d : c.op_time->rows)
    if (d.op == "constant_pad_nd") {
      EXPECT_EQ(d.baseline_copies, 1);
      EXPECT_GT(d.candidate_copies, 1);
      saw_mixed = true;
    }
  EXPECT_TRUE(saw_mixed);
}

TEST(CheckRunner, BadArgumentsAreClearErrors) {
  CheckOptions o = tiny_options();
  o.suites = {"no-such-suite"};
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_check(o); }, {"no-such-suite"}));
  o = tiny_options();
  o.baseline = "softmax=fastest";
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_check(o); }, {"policy", "'fastest'"}));
}

}  // namespace
}  // namespace fourfold
