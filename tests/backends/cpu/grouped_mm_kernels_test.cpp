// grouped_mm on the generic tier and the dedicated tier (every host ISA level) against the reference: all four
// cases, uneven groups with empty and one-row groups, the transposed (K-contiguous) b of checkpoint weights and
// the plain layout, rows or columns past offs[G-1] left as they were (NaN-poisoned out), f32 out under bf16,
// NaN/inf, non-contiguous a, prefill groups across the packed GEMM's tile edges, 1 vs 2 threads giving the
// same bytes; and the dot-tile kernel's fp8 weight path
// (moe_experts) on every e4m3 code and across 128x128 scale blocks.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/isa.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"
#include "backends/op_args.h"
#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr GroupedMmCase kCases[] = {GroupedMmCase::a2d_b3d, GroupedMmCase::a3d_b2d, GroupedMmCase::a2d_b2d,
                                    GroupedMmCase::a3d_b3d};

const char* case_name(GroupedMmCase c) {
  switch (c) {
    case GroupedMmCase::a2d_b3d: return "2Dx3D";
    case GroupedMmCase::a3d_b2d: return "3Dx2D";
    case GroupedMmCase::a2d_b2d: return "2Dx2D";
    case GroupedMmCase::a3d_b3d: return "3Dx3D";
  }
  return "?";
}

// One grouped_mm call's inputs. The sliced extent has 40 entries: groups of 0, 1, 0, 19, 13 and 3 past the end.
struct Problem {
  Tensor a, b;
  OptTensor offs;
  Shape out_shape;
};

constexpr int64_t kGroups = 5, kExtent = 40, kM = 6, kK = 37, kN = 19;
const std::vector<double> kOffs = {0, 1, 1, 20, 33};

// b_k_contiguous: b is the transposed view of a stored [.., N, K] tensor (a checkpoint's weights).
Problem make(GroupedMmCase c, DType dtype, bool b_k_contiguous, uint64_t seed) {
  const auto bmat = [&](Shape kn, uint64_t s) {   // kn: [..., K, N]
    if (!b_k_contiguous) return randn(kn, dtype, s, 0.3);
    Shape nk = kn;
    std::swap(nk[nk.size() - 1], nk[nk.size() - 2]);
    return randn(nk, dtype, s, 0.3).transpose(-1, -2);
  };
  const Tensor offs = Tensor::from_vector(kOffs, {kGroups}, DType::i32);
  switch (c) {
    case GroupedMmCase::a2d_b3d: return {randn({kExtent, kK}, dtype, seed), bmat({kGroups, kK, kN}, seed + 1), offs, {kExtent, kN}};
    case GroupedMmCase::a3d_b2d: return {randn({kGroups, kM, kK}, dtype, seed), bmat({kK, kExtent}, seed + 1), offs, {kM, kExtent}};
    case GroupedMmCase::a2d_b2d: return {randn({kM, kExtent}, dtype, seed), bmat({kExtent, kN}, seed + 1), offs, {kGroups, kM, kN}};
    case GroupedMmCase::a3d_b3d: return {randn({kGroups, kM, kK}, dtype, seed), bmat({kGroups, kK, kN}, seed + 1), std::nullopt, {kGroups, kM, kN}};
  }
  return {};
}

// grouped_mm_out into a NaN-filled out under `policy`; returns out, and the tier and variant that ran.
struct Ran {
  Tensor out;
  Tier tier;
  std::string variant;
};
Ran run(const char* policy, const Problem& p, DType out_dtype) {
  ScopedPolicy scope(Policy::parse(policy));
  Tensor out = Tensor::full(p.out_shape, kNaN, out_dtype);
  reset_dispatch_counts();
  grouped_mm_out(out, p.a, p.b, p.offs);
  Ran r{out, Tier::reference, ""};
  for (const DispatchCount& d : dispatch_counts())
    if (d.op == "grouped_mm") {
      for (int t = 0; t < kTierCount; ++t)
        if (d.calls[t] > 0) r.tier = static_cast<Tier>(t);
      r.variant = d.last_variant;
    }
  return r;
}

::testing::AssertionResult matches(const Ran& got, const Ran& want, DType out_dtype) {
  const testing::Tolerance tol = testing::product_tolerance(out_dtype == DType::f32 ? DType::f32 : DType::bf16);
  // The f32 products accumulate in f32 over up to 40 terms.
  return all_close(got.out, want.out, std::max(tol.rtol, 1e-5), std::max(tol.atol, 1e-5));
}

TEST(GroupedMmKernels, AllCasesEveryTierAndIsaLevel) {
  uint64_t seed = 1;
  for (GroupedMmCase c : kCases)
    for (DType dtype : {DType::f32, DType::bf16})
      for (bool k_contiguous : {true, false})
        for (DType out_dtype : {dtype, DType::f32}) {
          SCOPED_TRACE(::testing::Message() << case_name(c) << " " << dtype_name(dtype) << " out "
                                            << dtype_name(out_dtype) << (k_contiguous ? " b K-contiguous" : " b N-contiguous"));
          const Problem p = make(c, dtype, k_contiguous, seed++);
          const Ran want = run("reference", p, out_dtype);
          const Ran generic = run("generic", p, out_dtype);
          EXPECT_EQ(generic.tier, Tier::generic);
          EXPECT_TRUE(matches(generic, want, out_dtype));
          for (cpu::Isa isa : cpu::host_isas()) {
            cpu::ScopedIsa level(isa);
            const Ran dedicated = run("dedicated", p, out_dtype);
            // The plain [K, N] layout is left to the generic tier.
            EXPECT_EQ(dedicated.tier, k_contiguous ? Tier::dedicated : Tier::generic) << cpu::isa_name(isa);
            if (k_contiguous) {
              EXPECT_EQ(dedicated.variant, cpu::isa_name(isa));
            }
            EXPECT_TRUE(matches(dedicated, want, out_dtype)) << cpu::isa_name(isa);
          }
        }
}

// The rows (2Dx3D) or columns (3Dx2D) past offs[G-1] keep their NaN; every other element is a number.
TEST(GroupedMmKernels, PastTheLastOffsetUntouched) {
  for (GroupedMmCase c : {GroupedMmCase::a2d_b3d, GroupedMmCase::a3d_b2d}) {
    const Problem p = make(c, DType::bf16, true, 77);
    const Ran r = run("dedicated", p, DType::bf16);
    ASSERT_EQ(r.tier, Tier::dedicated);
    const std::vector<double> v = r.out.to_vector();
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      const int64_t sliced = c == GroupedMmCase::a2d_b3d ? i / kN : i % kExtent;
      EXPECT_EQ(std::isnan(v[static_cast<size_t>(i)]), sliced >= 33) << case_name(c) << " element " << i;
    }
  }
}

// Decode shapes: one row in a few of many groups, a K with a vector tail, one large group next to tiny ones.
TEST(GroupedMmKernels, DecodeAndUnevenGroups) {
  const int64_t groups = 16, k = 300, n = 70;
  for (const std::vector<double>& offs : {std::vector<double>{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3},
                                          std::vector<double>{0, 130, 131, 131, 131, 131, 131, 131, 131, 131, 131, 131,
                                                              131, 131, 131, 140}}) {
    const int64_t rows = static_cast<int64_t>(offs.back()) + 2;
    const Tensor a = randn({rows, k}, DType::bf16, 5);
    const Tensor b = randn({groups, n, k}, DType::bf16, 6, 0.1).transpose(1, 2);
    Problem p{a, b, Tensor::from_vector(offs, {groups}, DType::i32), {rows, n}};
    const Ran want = run("reference", p, DType::bf16);
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      const Ran got = run("dedicated", p, DType::bf16);
      EXPECT_EQ(got.tier, Tier::dedicated);
      EXPECT_TRUE(matches(got, want, DType::bf16)) << cpu::isa_name(isa);
    }
  }
}

// Prefill groups (more rows than the decode loops take) run the packed GEMM's tiles: a group taller than one
// tile (300 > 288 rows), N past one tile's 256 columns and not a multiple of the register tile, K past one
// 512-deep block with an odd tail, next to empty, GEMV-sized and barely-GEMM-sized groups; and a 3-D a.
TEST(GroupedMmKernels, PrefillGroupsAcrossTheGemmTileEdges) {
  const int64_t k = 601, n = 300;
  const std::vector<double> offs = {0, 3, 303, 308, 325, 325};
  const int64_t groups = static_cast<int64_t>(offs.size()), rows = 330;
  for (DType dtype : {DType::bf16, DType::f32}) {
    const Tensor b = randn({groups, n, k}, dtype, 12, 0.05).transpose(1, 2);
    const Problem flat{randn({rows, k}, dtype, 11), b, Tensor::from_vector(offs, {groups}, DType::i32), {rows, n}};
    const Problem batched{randn({2, 20, k}, dtype, 13), randn({2, n, k}, dtype, 14, 0.05).transpose(1, 2),
                          std::nullopt, {2, 20, n}};
    for (const Problem* p : {&flat, &batched}) {
      const Ran want = run("reference", *p, DType::f32);   // the float64 sums rounded once, to f32
      for (DType out_dtype : {dtype, DType::f32})
        for (cpu::Isa isa : cpu::host_isas()) {
          SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " out " << dtype_name(out_dtype) << " "
                                            << cpu::isa_name(isa) << (p == &flat ? " 2-D a" : " 3-D a"));
          cpu::ScopedIsa level(isa);
          const Ran got = run("dedicated", *p, out_dtype);
          EXPECT_EQ(got.tier, Tier::dedicated);
          // bf16 out: within one bf16 ulp of the f32-rounded sums (f32 sums of 601 products may round to the
          // other neighbour).
          EXPECT_TRUE(out_dtype == DType::f32 ? matches(got, want, out_dtype) : all_close(got.out, want.out, 0x1p-7, 1e-3));
          if (p == &flat) {   // rows 325.. lie past offs[G-1]: left as they were
            const std::vector<double> v = got.out.to_vector();
            EXPECT_TRUE(std::isnan(v[static_cast<size_t>(325 * n)]) && std::isnan(v.back()));
          }
        }
    }
  }
}

TEST(GroupedMmKernels, NaNInfAndNonContiguousA) {
  Problem p = make(GroupedMmCase::a2d_b3d, DType::f32, true, 9);
  Tensor a = p.a.clone();
  const int64_t nan_at[2] = {3, 5}, inf_at[2] = {25, 0};
  store_from_double(DType::f32, a.element_ptr(nan_at), kNaN);
  store_from_double(DType::f32, a.element_ptr(inf_at), std::numeric_limits<double>::infinity());
  p.a = a;
  EXPECT_TRUE(matches(run("dedicated", p, DType::f32), run("reference", p, DType::f32), DType::f32));
  p.a = testing::non_contiguous(a);   // K stride != 1: the generic tier's
  const Ran got = run("dedicated", p, DType::f32);
  EXPECT_EQ(got.tier, Tier::generic);
  EXPECT_TRUE(matches(got, run("reference", p, DType::f32), DType::f32));
}

TEST(GroupedMmKernels, OneAndTwoThreadsGiveTheSameBytes) {
  const int previous = num_threads();
  std::vector<std::pair<std::string, Problem>> problems;
  for (GroupedMmCase c : kCases) problems.emplace_back(case_name(c), make(c, DType::bf16, true, 31));
  // GEMM tiles of uneven groups, claimed by the threads in another order on every run.
  problems.emplace_back("prefill", Problem{randn({700, 300}, DType::bf16, 32),
                                           randn({4, 200, 300}, DType::bf16, 33, 0.1).transpose(1, 2),
                                           Tensor::from_vector({2, 302, 640, 700}, {4}, DType::i32), {700, 200}});
  for (const auto& [name, p] : problems) {
    set_num_threads(1);
    const Ran one = run("dedicated", p, DType::bf16);
    set_num_threads(2);
    const Ran two = run("dedicated", p, DType::bf16);
    EXPECT_EQ(two.tier, Tier::dedicated);
    EXPECT_TRUE(testing::bit_equal(one.out, two.out)) << name;
  }
  set_num_threads(previous);
}

}  // namespace
}  // namespace fourfold

namespace fourfold {
namespace {

void (*dot_tile_at(cpu::Isa isa))(const cpu::DotTile&) {
  switch (isa) {
    case cpu::Isa::amx: return &cpu::amx::dot_tile;
    case cpu::Isa::avx512bf16: return &cpu::avx512bf16::dot_tile;
    case cpu::Isa::avx512: return &cpu::avx512::dot_tile;
    case cpu::Isa::avx2: return &cpu::avx2::dot_tile;
    case cpu::Isa::scalar: return &cpu::scalar::dot_tile;
  }
  return nullptr;
}

// The fp8 (e4m3fn) weight path moe_experts uses: every one of the 256 codes, on the vector lanes and in the
// scalar tail, against the library's conversion; and the per-128-block scales applied per block.
TEST(DotTileKernel, E4m3CodesAndBlockScales) {
  for (cpu::Isa isa : cpu::host_isas()) {
    const auto dot = dot_tile_at(isa);
    // 256 rows of B^T, each 17 copies of one code (16 on lanes or fewer, the rest in the tail); a = 1.
    std::vector<uint8_t> b(256 * 17);
    for (int code = 0; code < 256; ++code)
      for (int k = 0; k < 17; ++k) b[static_cast<size_t>(code * 17 + k)] = static_cast<uint8_t>(code);
    const std::vector<float> a(17, 1.0f), scale(2, 1.0f);
    std::vector<float> out(256, -1.0f);
    cpu::DotTile t{a.data(), nullptr, 17, cpu::MatType::f32, b.data(), 17, cpu::MatType::e4m3, 1, 256, 17,
                   out.data(), 256, scale.data(), 1, 0};
    dot(t);
    for (int code = 0; code < 256; ++code) {
      const float want = 17.0f * fp8_e4m3fn_to_f32(static_cast<uint8_t>(code));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[static_cast<size_t>(code)])) << cpu::isa_name(isa) << " code " << code;
      } else {
        EXPECT_EQ(out[static_cast<size_t>(code)], want) << cpu::isa_name(isa) << " code " << code;
      }
    }
    // K = 300 (blocks of 128, 128, 44), rows 126..129 of the weight (across a row block): code 0x38 is 1.0.
    std::vector<uint8_t> ones(4 * 300, 0x38);
    const std::vector<float> a2(300, 1.0f), s2 = {1, 2, 4, 8, 16, 32};   // [2 row blocks, 3 K blocks]
    std::vector<float> out2(4);
    dot(cpu::DotTile{a2.data(), nullptr, 300, cpu::MatType::f32, ones.data(), 300, cpu::MatType::e4m3, 1, 4, 300,
                     out2.data(), 4, s2.data(), 3, 126});
    EXPECT_EQ(out2[0], 128 * 1 + 128 * 2 + 44 * 4) << cpu::isa_name(isa);
    EXPECT_EQ(out2[1], 128 * 1 + 128 * 2 + 44 * 4) << cpu::isa_name(isa);
    EXPECT_EQ(out2[2], 128 * 8 + 128 * 16 + 44 * 32) << cpu::isa_name(isa);
    EXPECT_EQ(out2[3], 128 * 8 + 128 * 16 + 44 * 32) << cpu::isa_name(isa);
  }
}

}  // namespace
}  // namespace fourfold
