// The dedicated CPU tier's packed GEMM behind linear (prefill, M > 8), matmul/bmm (real and complex64) and
// linear_backward, at every ISA level the host has: against the reference tier over dtypes (bf16/f16 weights
// under f32 x included), odd M/N/K around the register-tile and cache-block edges, bias, strided and broadcast
// (stride-0 batch) inputs, empty dims, NaN/inf, and one thread against two (bit-identical by construction: the
// per-element summation order does not depend on the tiling).
#include <cmath>
#include <functional>
#include <limits>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/isa.h"
#include "fourfold/parallel.h"
#include "support/tier_fixture.h"

namespace fourfold {
namespace {

using testing::all_close;
using Results = std::vector<Tensor>;
using Fn = std::function<Results()>;

// f32 accumulation over K terms of unit-variance products: a few f32 ulps times sqrt(K) absolute, plus the
// output dtype's own rounding.
testing::Tolerance tolerance(DType out, int64_t k) {
  const testing::Tolerance t = testing::product_tolerance(out);
  const double acc = 2e-6 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  return {std::max(t.rtol, 1e-5), t.atol + acc};
}

// fn() on the reference once, then with the dedicated tier forced at every ISA level the host has;
// `dedicated` says whether that tier must have run (or left the call to a slower tier).
::testing::AssertionResult matches_reference(const Fn& fn, int64_t k, bool dedicated = true) {
  return testing::dedicated_matches_at_every_level<Results>(fn, dedicated, [&](const Results& got, const Results& want) {
    for (size_t i = 0; i < want.size(); ++i) {
      if (!want[i].defined()) continue;
      const testing::Tolerance tol = tolerance(got[i].dtype(), k);
      auto r = all_close(got[i], want[i], tol.rtol, tol.atol);
      if (!r) return r << " (result " << i << ")";
    }
    return ::testing::AssertionSuccess();
  });
}

// Results of fn with 1 thread and with 2, bit for bit.
::testing::AssertionResult threads_agree(const Fn& fn) {
  const int saved = num_threads();
  set_num_threads(1);
  const Results one = fn();
  set_num_threads(2);
  const Results two = fn();
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i)
    if (one[i].defined()) {
      auto r = testing::bit_equal(one[i], two[i]);
      if (!r) return r << " (result " << i << ")";
    }
  return ::testing::AssertionSuccess();
}

struct Mnk {
  int64_t m, n, k;
};
// Around the edges: the register tile (12 x 32 / 6 x 16 / 4 x 8), the K block (512), the row block (144) and
// the tile (576 rows x 512 columns).
constexpr Mnk kShapes[] = {{9, 1, 1}, {13, 33, 7}, {37, 65, 513}, {145, 47, 31}, {20, 513, 40}, {580, 17, 9}, {25, 31, 600}};

Fn linear_fn(const Tensor& x, const Tensor& w, const OptTensor& b) {
  return [=] { return Results{linear(x, w, b)}; };
}

TEST(CpuGemm, LinearPrefillDTypesAndEdges) {
  struct Types {
    DType x, w;
  };
  const Types types[] = {{DType::f32, DType::f32}, {DType::bf16, DType::bf16}, {DType::f16, DType::f16},
                         {DType::f32, DType::bf16}, {DType::f32, DType::f16}};
  {
    uint64_t seed = 1;
    for (const Types& t : types)
      for (const Mnk& s : kShapes) {
        const Tensor x = testing::randn({s.m, s.k}, t.x, seed++);
        const Tensor w = testing::randn({s.n, s.k}, t.w, seed++);
        const OptTensor bias = seed % 2 ? OptTensor(testing::randn({s.n}, t.x, seed++)) : std::nullopt;
        EXPECT_TRUE(matches_reference(linear_fn(x, w, bias), s.k)) << s.m << "x" << s.n << "x" << s.k;
      }
  }
}

TEST(CpuGemm, LinearStridedBatchedAndEmpty) {
  {
    const Tensor x = testing::randn({3, 7, 40}, DType::f32, 10);   // M = 21 after flattening
    const Tensor w = testing::randn({70, 40}, DType::bf16, 11);
    const Tensor b = testing::randn({70}, DType::f32, 12);
    EXPECT_TRUE(matches_reference(linear_fn(x, w, b), 40));
    EXPECT_TRUE(matches_reference(linear_fn(testing::non_contiguous(x.reshape({21, 40})), testing::non_contiguous(w), b),
                                  40));
    // Strided rows and a weight viewed through a transpose.
    const Tensor wt = testing::randn({40, 70}, DType::f32, 13).transpose(0, 1);
    EXPECT_TRUE(matches_reference(linear_fn(x.reshape({21, 40}).slice(0, 0, 21, 2), wt, std::nullopt), 40));
    // K = 0: the bias (or zeros); N = 0: nothing.
    EXPECT_TRUE(matches_reference(linear_fn(Tensor::empty({12, 0}, DType::f32), Tensor::empty({5, 0}, DType::f32),
                                            testing::randn({5}, DType::f32, 14)),
                                  0));
    EXPECT_TRUE(matches_reference(linear_fn(Tensor::empty({12, 0}, DType::bf16), Tensor::empty({5, 0}, DType::bf16),
                                            std::nullopt),
                                  0));
    EXPECT_TRUE(matches_reference(linear_fn(testing::randn({12, 4}, DType::f32, 15), Tensor::empty({0, 4}, DType::f32),
                                            std::nullopt),
                                  4));
  }
}

TEST(CpuGemm, LinearDeclinesDecodeRowsAndTakesFp8) {
  const Tensor x = testing::randn({8, 16}, DType::f32, 20);
  const Tensor w = testing::randn({16, 16}, DType::f32, 21);
  Tensor out = Tensor::empty({8, 16}, DType::f32);
  EXPECT_FALSE(cpu::linear_prefill_covers(LinearArgs{x, w, nullptr, out}));   // decode rows are the GEMV's
  EXPECT_TRUE(matches_reference(linear_fn(x, w, std::nullopt), 16, true));
  EXPECT_TRUE(matches_reference(linear_fn(x.to(DType::f64), w.to(DType::f64), std::nullopt), 16, false));
  const Tensor x9 = testing::randn({9, 16}, DType::f32, 22);
  const Tensor w8 = w.to(DType::f8_e4m3fn);
  const Tensor scale = Tensor::full({1}, 0.5, DType::f32);
  // fp8 weights (scaled_linear) are packed with their scales: cpu_scaled_prefill_test.cpp covers them.
  EXPECT_TRUE(matches_reference([&] { return Results{scaled_linear(x9, w8, scale)}; }, 16, true));
}

TEST(CpuGemm, NanAndInfPropagate) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  {
    for (DType t : {DType::f32, DType::bf16}) {
      std::vector<double> xv = testing::randn({20, 30}, DType::f32, 30).to_vector();
      std::vector<double> wv = testing::randn({40, 30}, DType::f32, 31).to_vector();
      xv[3 * 30 + 5] = std::nan("");   // row 3 all NaN
      wv[7 * 30 + 2] = kInf;           // column 7 +-inf (or NaN where inf meets 0 or -inf)
      xv[11 * 30 + 29] = -kInf;        // row 11 -inf / NaN
      const Tensor x = Tensor::from_vector(xv, {20, 30}, t), w = Tensor::from_vector(wv, {40, 30}, t);
      EXPECT_TRUE(matches_reference(linear_fn(x, w, std::nullopt), 30));
      const Tensor b = x.narrow(0, 0, 12).reshape({1, 12, 30}), c = w.transpose(0, 1).reshape({1, 30, 40});
      EXPECT_TRUE(matches_reference([&] { return Results{matmul(b, c)}; }, 30));
    }
  }
}

TEST(CpuGemm, MatmulRealBatchedBroadcastStrided) {
  {
    uint64_t seed = 40;
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      const Tensor a = testing::randn({2, 1, 13, 37}, t, seed++);
      const Tensor b = testing::randn({3, 37, 45}, t, seed++);   // batch broadcast: a's dim 1, b's leading dim
      EXPECT_TRUE(matches_reference([=] { return Results{matmul(a, b)}; }, 37));
      const Tensor a3 = testing::randn({4, 33, 20}, t, seed++), b3 = testing::randn({4, 20, 9}, t, seed++);
      EXPECT_TRUE(matches_reference([=] { return Results{bmm(a3, b3)}; }, 20));
      const Tensor an = testing::non_contiguous(a3), bn = testing::non_contiguous(b3);
      EXPECT_TRUE(matches_reference([=] { return Results{bmm(an, bn)}; }, 20));
      // 1-D operands, K = 0, and the B block edge.
      const Tensor v = testing::randn({20}, t, seed++);
      EXPECT_TRUE(matches_reference([=] { return Results{matmul(a3, v)}; }, 20));
      EXPECT_TRUE(matches_reference([=] { return Results{matmul(Tensor::empty({5, 0}, t), Tensor::empty({0, 7}, t))}; },
                                    0));
      const Tensor a2 = testing::randn({13, 100}, t, seed++), b2 = testing::randn({100, 530}, t, seed++);
      EXPECT_TRUE(matches_reference([=] { return Results{matmul(a2, b2)}; }, 100));
    }
  }
}

TEST(CpuGemm, MatmulComplex64) {
  {
    const Tensor a = testing::randn({2, 1, 11, 19}, DType::complex64, 50);
    const Tensor b = testing::randn({3, 19, 23}, DType::complex64, 51);
    EXPECT_TRUE(matches_reference([=] { return Results{matmul(a, b)}; }, 2 * 19));
    // a with non-unit stride along K (copied), b transposed.
    const Tensor at = testing::randn({19, 11}, DType::complex64, 52).transpose(0, 1);
    const Tensor bt = testing::randn({23, 19}, DType::complex64, 53).transpose(0, 1);
    EXPECT_TRUE(matches_reference([=] { return Results{matmul(at, bt)}; }, 2 * 19));
    const Tensor a2 = testing::randn({40, 300}, DType::complex64, 54), b2 = testing::randn({300, 17}, DType::complex64, 55);
    EXPECT_TRUE(matches_reference([=] { return Results{matmul(a2, b2)}; }, 600));
  }
}

// Up to kMatmulRowsMax rows: the unpacked row-sum path (real and complex64), around the vector and column-tile
// edges, with broadcast batches, a strided along K, b strided along N (the packed path takes it), NaN, and
// one thread against two.
TEST(CpuGemm, MatmulSmallMRows) {
  uint64_t seed = 60;
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::complex64})
    for (int64_t m : {int64_t{1}, int64_t{3}, cpu::kMatmulRowsMax})
      for (int64_t n : {1, 7, 31, 33, 64, 65, 130})
        for (int64_t k : {1, 37}) {
          const Tensor a = testing::randn({2, 1, m, k}, t, seed++), b = testing::randn({3, k, n}, t, seed++);
          EXPECT_TRUE(matches_reference([=] { return Results{matmul(a, b)}; }, 2 * k))
              << dtype_name(t) << " m " << m << " n " << n << " k " << k;
        }
  for (DType t : {DType::f32, DType::bf16, DType::complex64}) {
    const Tensor a = testing::randn({5, 40}, t, seed++), b = testing::randn({40, 70}, t, seed++);
    const Tensor an = testing::non_contiguous(a), bn = testing::non_contiguous(b);
    EXPECT_TRUE(matches_reference([=] { return Results{matmul(an, b)}; }, 80));
    EXPECT_TRUE(matches_reference([=] { return Results{matmul(a, bn)}; }, 80));
    EXPECT_TRUE(threads_agree([=] { return Results{matmul(a, b)}; }));
  }
  std::vector<double> v = testing::randn({2, 9}, DType::f32, seed++).to_vector();
  v[3] = std::nan("");
  v[12] = std::numeric_limits<double>::infinity();
  const Tensor an = Tensor::from_vector(v, {2, 9}, DType::f32), b = testing::randn({9, 20}, DType::f32, seed++);
  EXPECT_TRUE(matches_reference([=] { return Results{matmul(an, b)}; }, 9));
}

Fn backward_fn(const Tensor& g, const Tensor& x, const Tensor& w, bool bias) {
  return [=] {
    const LinearGrads r = linear_backward(g, x, w, bias);
    return Results{r.grad_x, r.grad_weight, r.grad_bias};
  };
}

TEST(CpuGemm, LinearBackward) {
  {
    uint64_t seed = 60;
    for (DType t : {DType::f32, DType::bf16, DType::f16})
      for (const Mnk& s : {Mnk{1, 1, 1}, Mnk{13, 33, 7}, Mnk{37, 65, 40}, Mnk{300, 20, 30}}) {
        const Tensor x = testing::randn({s.m, s.k}, t, seed++);
        const Tensor w = testing::randn({s.n, s.k}, t, seed++);
        const Tensor g = testing::randn({s.m, s.n}, t, seed++);
        EXPECT_TRUE(matches_reference(backward_fn(g, x, w, seed % 2 == 0), std::max({s.m, s.n})));
      }
    const Tensor x = testing::randn({21, 40}, DType::f32, 70), w = testing::randn({30, 40}, DType::f32, 71);
    const Tensor g = testing::randn({21, 30}, DType::f32, 72);
    EXPECT_TRUE(matches_reference(
        backward_fn(testing::non_contiguous(g), testing::non_contiguous(x), testing::non_contiguous(w), true), 40));
    EXPECT_TRUE(matches_reference(backward_fn(Tensor::empty({0, 3}, DType::f32), Tensor::empty({0, 4}, DType::f32),
                                              testing::randn({3, 4}, DType::f32, 73), true),
                                  0));
  }
}

// Each level's pieces, to force one path on.
cpu::GemmPieces pieces_of(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::scalar: return FOURFOLD_GEMM_PIECES(scalar);
    case cpu::Isa::avx2: return FOURFOLD_GEMM_PIECES(avx2);
    case cpu::Isa::avx512: return FOURFOLD_GEMM_PIECES(avx512);
    case cpu::Isa::avx512bf16: return FOURFOLD_GEMM_PIECES(avx512bf16);
    default: return FOURFOLD_GEMM_PIECES(amx);
  }
}

// linear_prefill through each host level's pieces with one path forced on (where it is not the level's own,
// its portable emulation), against the reference: a strided weight too, bias, the output poisoned first.
void forced_path_matches_reference(bool (*cpu::GemmPieces::*path)(), std::initializer_list<Mnk> shapes, uint64_t seed) {
  for (const Mnk& s : shapes) {
    const Tensor x = testing::randn({s.m, s.k}, DType::bf16, seed++);
    const Tensor w = testing::randn({s.n, s.k}, DType::bf16, seed++);
    const Tensor b = testing::randn({s.n}, DType::bf16, seed++);
    for (const Tensor& weight : {w, testing::non_contiguous(w)}) {
      Tensor want;
      {
        testing::ReferenceOnly ref;
        want = linear(x, weight, b);
      }
      for (cpu::Isa isa : cpu::host_isas()) {
        cpu::GemmPieces pieces = pieces_of(isa);
        pieces.*path = [] { return true; };
        Tensor out = Tensor::full({s.m, s.n}, std::nan(""), DType::bf16);
        cpu::linear_prefill(LinearArgs{x, weight, &b, out}, pieces);
        const testing::Tolerance tol = tolerance(DType::bf16, s.k);
        EXPECT_TRUE(all_close(out, want, tol.rtol, tol.atol)) << cpu::isa_name(isa) << " " << s.m << "x" << s.n << "x" << s.k;
      }
    }
  }
}

// The bf16 pair path (vdpbf16ps at the avx512bf16 and amx levels, which the sweep above runs for bf16 operands)
// at every level: odd K (a half pair), odd and even row strides (the scalar and the transposing pack).
TEST(CpuGemm, Bf16PairPathAtEveryLevel) {
  forced_path_matches_reference(&cpu::GemmPieces::pairs_fast, {Mnk{13, 33, 7}, Mnk{37, 65, 40}, Mnk{20, 40, 290}}, 90);
}

// The AMX path (tile matrix unit at the amx level) forced at every level, where its block is the scalar
// emulation of the same layouts: rows and columns short of a whole 32 x 32 block, K short of a tile (odd, and
// not a multiple of 32) and over one kc block (the accumulating pass).
TEST(CpuGemm, Bf16AmxPathAtEveryLevel) {
  forced_path_matches_reference(&cpu::GemmPieces::amx_fast,
                                {Mnk{13, 33, 7}, Mnk{37, 65, 40}, Mnk{20, 40, 290}, Mnk{64, 96, 1100}}, 190);
}

// The AMX direct path (few rows: the weight's rows as tiles, unpacked) forced at every level, where it is the
// scalar emulation: bf16 rows and f32 rows (three exact bf16 terms each), a group short of 32 rows, a weight
// with a row stride wider than K, bias. f32 rows must keep f32 accuracy, not bf16's.
// The direct path (gemm_direct.cpp) forced at every level: its AMX block at the amx level, its vdpbf16ps and FMA
// blocks at avx512bf16, the scalar emulation elsewhere. 5 rows (one vector of 16 rows), 40 (a full group of 32
// and one of 8), and a K of two chunks of the vdpbf16ps block's summation and a part.
TEST(CpuGemm, DirectPathAtEveryLevel) {
  uint64_t seed = 290;
  for (const Mnk& s : {Mnk{5, 64, 64}, Mnk{40, 96, 320}, Mnk{20, 32, 1088}}) {
    const Tensor w = testing::randn({s.n, s.k}, DType::bf16, seed++);
    const Tensor wide = testing::randn({s.n, s.k + 32}, DType::bf16, seed++).slice(1, 0, s.k);
    const Tensor b = testing::randn({s.n}, DType::f32, seed++);
    for (DType xt : {DType::bf16, DType::f32}) {
      const Tensor x = testing::randn({s.m, s.k}, xt, seed++);
      for (const Tensor& weight : {w, wide}) {
        ASSERT_TRUE(cpu::avx2::gemm_direct_covers(cpu::operand(x), cpu::operand(weight, true), s.m, s.n, s.k));
        const Tensor bx = b.to(xt);
        Tensor want, want_nobias;
        {
          testing::ReferenceOnly ref;
          want = linear(x, weight, bx);
          want_nobias = linear(x, weight).to(DType::f32);
        }
        const testing::Tolerance tol = tolerance(xt, s.k);
        for (cpu::Isa isa : cpu::host_isas()) {
          cpu::GemmPieces pieces = pieces_of(isa);
          pieces.amx_fast = [] { return true; };
          pieces.direct_fast = [] { return true; };
          Tensor out = Tensor::full({s.m, s.n}, std::nan(""), xt);
          cpu::linear_prefill(LinearArgs{x, weight, &bx, out}, pieces);
          EXPECT_TRUE(all_close(out, want, tol.rtol, tol.atol)) << cpu::isa_name(isa) << " " << dtype_name(xt) << " " << s.k;
          // The tile itself, rows [0, m) and every column, into an f32 block.
          Tensor c = Tensor::full({s.m, s.n}, std::nan(""), DType::f32);
          const cpu::RowType at = cpu::row_type(xt, "gemm_test", "a");
          std::vector<float> scratch(static_cast<size_t>(cpu::gemm_direct_packed(at, s.m, s.k)));
          std::vector<float> split(static_cast<size_t>(cpu::gemm_direct_split(at, s.m, s.k)) + 1);
          pieces.pack_direct(cpu::operand(x), 0, s.m, s.k, scratch.data(), split.data());
          pieces.tile_direct(cpu::direct_rows(scratch.data(), at, s.m, s.k), cpu::operand(weight, true), 0, s.n, s.k,
                             c.data_as<float>(), s.n);
          const testing::Tolerance f32 = tolerance(DType::f32, s.k);
          EXPECT_TRUE(all_close(c, want_nobias, xt == DType::f32 ? f32.rtol : tol.rtol, xt == DType::f32 ? f32.atol : tol.atol))
              << cpu::isa_name(isa) << " tile " << dtype_name(xt);
        }
      }
    }
  }
}

// Where the host has AMX, its level takes the AMX path for bf16 operands (the level sweep above checks its
// results), and the lower levels do not; the direct path's fast blocks are at the amx and avx512bf16 levels.
TEST(CpuGemm, AmxAndDirectPathsAtTheirLevels) {
  for (cpu::Isa isa : cpu::host_isas()) {
    EXPECT_EQ(pieces_of(isa).amx_fast(), isa == cpu::Isa::amx) << cpu::isa_name(isa);
    // The direct path's fast blocks: AMX tiles, or vdpbf16ps (and FMAs for f32 rows).
    EXPECT_EQ(pieces_of(isa).direct_fast(), isa >= cpu::Isa::avx512bf16) << cpu::isa_name(isa);
  }
  if (cpu::host_isas().front() != cpu::Isa::amx) GTEST_SKIP() << "this host has no amx level (AMX-TILE, AMX-BF16)";
}

TEST(CpuGemm, OneAndTwoThreadsAgree) {
  ScopedPolicy forced(Policy::parse("dedicated"));
  const Tensor x = testing::randn({300, 270}, DType::bf16, 80), w = testing::randn({600, 270}, DType::bf16, 81);
  const Tensor b = testing::randn({600}, DType::bf16, 82);
  EXPECT_TRUE(threads_agree(linear_fn(x, w, b)));
  EXPECT_TRUE(threads_agree(linear_fn(x.to(DType::f32), w, std::nullopt)));
  const Tensor a3 = testing::randn({3, 50, 60}, DType::complex64, 83), b3 = testing::randn({3, 60, 70}, DType::complex64, 84);
  EXPECT_TRUE(threads_agree([=] { return Results{bmm(a3, b3)}; }));
  const Tensor g = testing::randn({300, 600}, DType::f32, 85);
  EXPECT_TRUE(threads_agree(backward_fn(g, x.to(DType::f32), w.to(DType::f32), true)));
}

}  // namespace
}  // namespace fourfold
