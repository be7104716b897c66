// scaled_dot_product_attention's generic tier and dedicated kernels (every ISA level the host has, 1 and 2
// threads) against the reference tier, called through the tier tables on NaN-poisoned outputs: decode and
// prefill, GQA groups 1/4/8, causal top_left and lower_right (rows with no key), bool and float masks broadcast
// over batch and heads, fully masked rows (zeros), odd E and Ev (vector tails), keys split into chunks, K and V
// read through a narrowed cache and a permuted layout, bf16 and f32, empty dims and NaN.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "backends/cpu/isa.h"
#include "backends/kernel_table.h"
#include "check/error_metrics.h"
#include "fourfold/parallel.h"
#include "backends/op_args.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

enum class MaskKind { none, boolean, additive };
enum class Layout { contiguous, narrowed_cache, heads_inner };

struct Case {
  int64_t batch = 1, hq = 4, hk = 4, l = 1, s = 17, e = 16, ev = 16;
  CausalMode causal = CausalMode::none;
  MaskKind mask = MaskKind::none;
  Shape mask_shape;   // broadcast to [B, Hq, L, S]
  Layout layout = Layout::contiguous;
  DType dtype = DType::f32;
  std::string name() const {
    std::ostringstream o;
    o << "B" << batch << " Hq" << hq << " Hk" << hk << " L" << l << " S" << s << " E" << e << " Ev" << ev << " causal "
      << static_cast<int>(causal) << " mask " << static_cast<int>(mask) << " layout " << static_cast<int>(layout) << " "
      << dtype_name(dtype);
    return o.str();
  }
};

struct Inputs {
  Tensor q, k, v, mask;
  CausalMode causal;
  double scale;
  int64_t group;
  Shape out_shape;
};

// K or V [B, Hk, S, D] laid out as the case says: a cache of S + 5 keys narrowed to S, or [B, S, Hk, D]
// permuted (row stride Hk * D).
Tensor kv_tensor(const Case& c, int64_t d, uint64_t seed) {
  switch (c.layout) {
    case Layout::narrowed_cache:
      return testing::randn({c.batch, c.hk, c.s + 5, d}, c.dtype, seed).narrow(2, 0, c.s);
    case Layout::heads_inner:
      return testing::randn({c.batch, c.s, c.hk, d}, c.dtype, seed).permute({0, 2, 1, 3});
    case Layout::contiguous: break;
  }
  return testing::randn({c.batch, c.hk, c.s, d}, c.dtype, seed);
}

Inputs make_inputs(const Case& c, uint64_t seed) {
  Inputs in;
  in.q = testing::randn({c.batch, c.hq, c.l, c.e}, c.dtype, seed, 1.5);
  in.k = kv_tensor(c, c.e, seed + 1);
  in.v = kv_tensor(c, c.ev, seed + 2);
  in.causal = c.causal;
  in.scale = c.e == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(c.e));
  in.group = c.hk == 0 ? 1 : c.hq / c.hk;
  in.out_shape = {c.batch, c.hq, c.l, c.ev};
  const Shape full{c.batch, c.hq, c.l, c.s};
  if (c.mask == MaskKind::boolean) {
    // About a third of the keys masked, and the first mask row entirely (its queries attend nothing: zeros).
    const Tensor u = testing::rand_uniform(c.mask_shape, DType::f64, seed + 3, 0.0, 1.0);
    std::vector<double> bits(static_cast<size_t>(u.numel()));
    const int64_t row = c.mask_shape.empty() ? 1 : c.mask_shape.back();
    for (int64_t i = 0; i < u.numel(); ++i) bits[i] = i < row ? 0.0 : (u.data_as<double>()[i] > 0.33);
    in.mask = Tensor::from_vector(bits, c.mask_shape, DType::boolean).expand(full);
  } else if (c.mask == MaskKind::additive) {
    // Finite biases and some -inf, with the first row all -inf.
    Tensor u = testing::rand_uniform(c.mask_shape, DType::f64, seed + 3, -2.0, 2.0);
    std::vector<double> vals(static_cast<size_t>(u.numel()));
    const int64_t row = c.mask_shape.empty() ? 1 : c.mask_shape.back();
    for (int64_t i = 0; i < u.numel(); ++i) {
      const double x = u.data_as<double>()[i];
      vals[i] = i < row || x < -1.3 ? -kInf : x;
    }
    in.mask = Tensor::from_vector(vals, c.mask_shape, c.dtype).expand(full);
  }
  return in;
}

// The tier's kernel on a NaN-filled output: every element must be written. Checks the tier covers the case.
Tensor run(const Kernel<AttentionArgs>& kernel, const Inputs& in, const std::string& what) {
  Tensor out = Tensor::full(in.out_shape, kNaN, in.q.dtype());
  const AttentionArgs args{in.q, in.k, in.v, in.mask.defined() ? &in.mask : nullptr, in.causal, in.scale, in.group,
                           out};
  EXPECT_TRUE(kernel.run != nullptr && (kernel.covers == nullptr || kernel.covers(args))) << what;
  if (kernel.run != nullptr) kernel.run(args);
  return out;
}

double rtol_for(DType t) { return t == DType::f32 ? 1e-5 : 1e-2; }
double atol_for(DType t) { return t == DType::f32 ? 2e-6 : 4e-3; }

// Generic and every dedicated level, on 1 and 2 threads, against the reference; the two thread counts agree.
void check_case(const Case& c, uint64_t seed) {
  SCOPED_TRACE(c.name());
  const Inputs in = make_inputs(c, seed);
  const Tensor want = run(reference_kernels().scaled_dot_product_attention, in, "reference");
  const double rtol = rtol_for(c.dtype), atol = atol_for(c.dtype);
  const int threads = num_threads();
  for (int t : {1, 2}) {
    set_num_threads(t);
    EXPECT_TRUE(all_close(run(generic_kernels()->scaled_dot_product_attention, in, "generic"), want, rtol, atol))
        << "generic, threads " << t;
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      const Tensor got = run(dedicated_kernels()->scaled_dot_product_attention, in, "dedicated");
      EXPECT_TRUE(all_close(got, want, rtol, atol)) << cpu::isa_name(isa) << ", threads " << t;
      if (t == 2) {
        set_num_threads(1);
        const Tensor one = run(dedicated_kernels()->scaled_dot_product_attention, in, "dedicated");
        set_num_threads(2);
        EXPECT_TRUE(all_close(got, one, rtol, atol)) << cpu::isa_name(isa) << ": 1 vs 2 threads";
      }
    }
  }
  set_num_threads(threads);
}

// Decode: a few query rows against the cache, GQA groups 1/4/8; S past 1024 splits the keys into chunks.
TEST(AttentionKernels, DecodeGqaGroups) {
  uint64_t seed = 1;
  for (DType dtype : {DType::f32, DType::bf16})
    for (int64_t group : {1, 4, 8})
      for (int64_t l : {1, 3})
        for (int64_t s : {1, 37, 1500}) {
          if (l > 1 && s > 1000) continue;   // the float64 reference is the slow part
          Case c;
          c.hk = 2, c.hq = 2 * group, c.l = l, c.s = s, c.e = 64, c.ev = 64, c.dtype = dtype;
          c.layout = Layout::narrowed_cache;
          c.causal = l > 1 ? CausalMode::lower_right : CausalMode::none;
          check_case(c, seed++);
        }
}

// The decode tile (kernels/attention_decode.cpp: up to 8 rows per tile, q heads of one KV head folded):
// groups giving 1, 2, 3 (a padding row), 4, 6 and 8 rows, odd head dims and value dims unlike them, key counts
// off the block and pair boundaries, f32, bf16 and f16 K/V, with and without masks and a causal limit.
TEST(AttentionKernels, DecodeTile) {
  uint64_t seed = 50;
  struct Shape2 {
    int64_t group, l;
  };
  for (DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (Shape2 g : {Shape2{8, 1}, Shape2{1, 1}, Shape2{2, 1}, Shape2{3, 1}, Shape2{4, 1}, Shape2{2, 3}})
      for (auto [e, ev] : {std::pair<int64_t, int64_t>{128, 128}, {13, 7}, {129, 17}, {40, 96}})
        for (int64_t s : {1, 63, 130}) {
          Case c;
          c.hk = 2, c.hq = 2 * g.group, c.l = g.l, c.s = s, c.e = e, c.ev = ev, c.dtype = dtype;
          c.causal = g.l > 1 ? CausalMode::lower_right : CausalMode::none;
          c.layout = s == 63 ? Layout::heads_inner : Layout::narrowed_cache;
          check_case(c, seed++);
        }
  for (DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (MaskKind kind : {MaskKind::boolean, MaskKind::additive}) {
      Case c;
      c.batch = 2, c.hk = 2, c.hq = 8, c.l = 2, c.s = 70, c.e = 24, c.ev = 20, c.mask = kind, c.dtype = dtype;
      c.mask_shape = {2, 8, 2, 70};
      check_case(c, seed++);
    }
  // Long enough for the keys to be split into chunks and merged.
  for (DType dtype : {DType::f32, DType::bf16}) {
    Case c;
    c.hk = 1, c.hq = 8, c.l = 1, c.s = 2500, c.e = 128, c.ev = 128, c.dtype = dtype;
    check_case(c, seed++);
  }
}

// Odd head dims (vector tails in every lane width), and a value dim unlike the key dim; f16 too (widened
// element by element: covered, not fast).
TEST(AttentionKernels, OddHeadDims) {
  uint64_t seed = 100;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (auto [e, ev] : {std::pair<int64_t, int64_t>{13, 7}, {1, 33}, {129, 17}, {24, 128}}) {
      Case c;
      c.batch = 2, c.hq = 4, c.hk = 2, c.l = 5, c.s = 45, c.e = e, c.ev = ev, c.dtype = dtype;
      check_case(c, seed++);
    }
}

// Prefill: tiles of queries against the keys, causal from the top left and the lower right, with L > S leaving
// the first rows no key at all (zeros).
TEST(AttentionKernels, PrefillCausal) {
  uint64_t seed = 200;
  for (DType dtype : {DType::f32, DType::bf16})
    for (CausalMode causal : {CausalMode::none, CausalMode::top_left, CausalMode::lower_right})
      for (auto [l, s] : {std::pair<int64_t, int64_t>{37, 37}, {20, 70}, {40, 33}})
        for (int64_t group : {1, 4}) {
          Case c;
          c.hk = 2, c.hq = 2 * group, c.l = l, c.s = s, c.e = 19, c.ev = 21, c.causal = causal, c.dtype = dtype;
          check_case(c, seed++);
        }
}

// Bool and float masks broadcast over batch, heads, rows or keys (read through stride 0), the first mask row
// fully masked (zeros).
TEST(AttentionKernels, BroadcastMasks) {
  uint64_t seed = 300;
  const int64_t b = 2, hq = 4, l = 6, s = 40;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (MaskKind kind : {MaskKind::boolean, MaskKind::additive})
      for (const Shape& shape : {Shape{l, s}, Shape{b, 1, l, s}, Shape{1, hq, l, s}, Shape{b, hq, 1, s}, Shape{l, 1}}) {
        Case c;
        c.batch = b, c.hq = hq, c.hk = 2, c.l = l, c.s = s, c.e = 20, c.ev = 12, c.mask = kind, c.mask_shape = shape;
        c.dtype = dtype;
        check_case(c, seed++);
      }
}

// K and V as views: a narrowed cache (row stride E, head stride (S + 5) E) and [B, S, Hk, D] permuted (row stride
// Hk D), long enough to be split into chunks.
TEST(AttentionKernels, NonContiguousKeysAndValues) {
  uint64_t seed = 400;
  for (DType dtype : {DType::f32, DType::bf16})
    for (Layout layout : {Layout::narrowed_cache, Layout::heads_inner})
      for (int64_t s : {33, 2100}) {
        Case c;
        c.hq = 8, c.hk = 2, c.l = 2, c.s = s, c.e = 32, c.ev = 40, c.layout = layout, c.dtype = dtype;
        c.causal = CausalMode::lower_right;
        check_case(c, seed++);
      }
}

// Non-contiguous q and output views.
TEST(AttentionKernels, StridedQueryAndOutput) {
  Case c;
  c.hq = 4, c.hk = 4, c.l = 9, c.s = 50, c.e = 24, c.ev = 24;
  Inputs in = make_inputs(c, 500);
  in.q = testing::non_contiguous(in.q);
  const Tensor want = run(reference_kernels().scaled_dot_product_attention, in, "reference");
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    Tensor buffer = Tensor::full({c.batch, c.hq, c.ev, c.l}, kNaN, c.dtype);
    Tensor out = buffer.transpose(2, 3);
    const AttentionArgs args{in.q, in.k, in.v, nullptr, in.causal, in.scale, in.group, out};
    dedicated_kernels()->scaled_dot_product_attention.run(args);
    EXPECT_TRUE(all_close(out, want, 1e-5, 2e-6)) << cpu::isa_name(isa);
  }
}

// Empty dims: no keys gives zeros; no queries, no value dim or no key dim are fine.
TEST(AttentionKernels, EmptyDims) {
  uint64_t seed = 600;
  for (auto [l, s, e, ev] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 0, 8, 8}, {0, 5, 8, 8}, {3, 5, 8, 0},
                             {3, 5, 0, 8}}) {
    Case c;
    c.l = l, c.s = s, c.e = e, c.ev = ev;
    check_case(c, seed++);
  }
}

// A NaN in one query row makes that row NaN (keys split into chunks), as the reference.
TEST(AttentionKernels, NaNAndInf) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    Case c;
    c.hq = 2, c.hk = 1, c.l = 3, c.s = 1100, c.e = 16, c.ev = 16, c.dtype = dtype;
    Inputs in = make_inputs(c, 700);
    std::vector<double> q(static_cast<size_t>(in.q.numel()), 0.25);
    q[16 + 3] = kNaN;   // row (h 0, i 1)
    in.q = Tensor::from_vector(q, in.q.shape(), dtype);
    const Tensor want = run(reference_kernels().scaled_dot_product_attention, in, "reference");
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      EXPECT_TRUE(all_close(run(dedicated_kernels()->scaled_dot_product_attention, in, "dedicated"), want,
                            rtol_for(dtype), atol_for(dtype)))
          << cpu::isa_name(isa);
    }
    EXPECT_TRUE(all_close(run(generic_kernels()->scaled_dot_product_attention, in, "generic"), want, rtol_for(dtype),
                          atol_for(dtype)));
  }
}

// Prefill tiles (more than 8 query rows) keep the softmax weights in f32 at every level: bf16 K/V with many keys
// come out as close to the float64 reference as the generic tier's (which never rounds P). Rounding P to bf16
// for a vdpbf16ps P.V, as the AVX512-BF16 tile once did, lost about 2 dB here and 14 dB on end-to-end logits.
TEST(AttentionKernels, PrefillKeepsWeightsF32) {
  Case c;
  c.hk = 1, c.hq = 8, c.l = 64, c.s = 512, c.e = 128, c.ev = 128, c.dtype = DType::bf16;
  const Inputs in = make_inputs(c, 900);
  Inputs wide = in;
  wide.q = in.q.to(DType::f64), wide.k = in.k.to(DType::f64), wide.v = in.v.to(DType::f64);
  const Tensor want = run(reference_kernels().scaled_dot_product_attention, wide, "reference");
  const double generic_db =
      compare_to_reference(run(generic_kernels()->scaled_dot_product_attention, in, "generic"), want).psnr_db;
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    const double db =
        compare_to_reference(run(dedicated_kernels()->scaled_dot_product_attention, in, "dedicated"), want).psnr_db;
    EXPECT_GE(db, generic_db - 0.5) << cpu::isa_name(isa) << ": generic " << generic_db << " dB";
  }
}

// The general tile (more than 8 query rows) runs Q K^T and P V on the GEMM register tile, a block of 64 keys
// at a time, only for the rows a block reaches: full 64-row tiles against several blocks, a partial last block
// and the causal prefix of rows a block has passed (both corners); and rows inside a tile whose mask hides a
// whole block (their P row is zeroed, the running state untouched) while the rows around them attend it.
TEST(AttentionKernels, PrefillTileBlocks) {
  uint64_t seed = 950;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (CausalMode causal : {CausalMode::top_left, CausalMode::lower_right}) {
      Case c;
      c.hk = 2, c.hq = 16, c.l = 24, c.s = 150, c.e = 72, c.ev = 40, c.causal = causal, c.dtype = dtype;
      check_case(c, seed++);
    }
  for (DType dtype : {DType::f32, DType::bf16}) {
    Case c;
    c.hk = 1, c.hq = 8, c.l = 16, c.s = 200, c.e = 64, c.ev = 48, c.dtype = dtype;
    Inputs in = make_inputs(c, seed++);
    std::vector<double> bits(static_cast<size_t>(c.l * c.s));
    for (int64_t i = 0; i < c.l; ++i)
      for (int64_t j = 0; j < c.s; ++j) {
        const bool hidden = (i % 2 == 1 && j >= 64 && j < 128) || (i == 4 && j < 64) || (i == 9 && j >= 128);
        bits[static_cast<size_t>(i * c.s + j)] = hidden ? 0.0 : 1.0;
      }
    in.mask = Tensor::from_vector(bits, {c.l, c.s}, DType::boolean).expand({1, c.hq, c.l, c.s});
    const Tensor want = run(reference_kernels().scaled_dot_product_attention, in, "reference");
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      EXPECT_TRUE(all_close(run(dedicated_kernels()->scaled_dot_product_attention, in, "dedicated"), want,
                            rtol_for(dtype), atol_for(dtype)))
          << cpu::isa_name(isa) << " " << dtype_name(dtype);
    }
  }
}

// Through the op: the dedicated tier runs at the active level (GQA, a bool mask broadcast from [L, S]).
TEST(AttentionKernels, OpRoutesToTheDedicatedTier) {
  const Tensor q = testing::randn({1, 8, 4, 32}, DType::bf16, 800);
  const Tensor k = testing::randn({1, 2, 30, 32}, DType::bf16, 801);
  const Tensor v = testing::randn({1, 2, 30, 32}, DType::bf16, 802);
  AttentionOptions options;
  options.enable_gqa = true;
  options.causal = CausalMode::lower_right;
  Tensor want;
  {
    testing::ReferenceOnly ref;
    want = scaled_dot_product_attention(q, k, v, options);
  }
  reset_dispatch_counts();
  Tensor got;
  {
    ScopedPolicy forced(Policy::parse("dedicated"));
    got = scaled_dot_product_attention(q, k, v, options);
  }
  const auto counts = dispatch_counts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].calls[static_cast<int>(Tier::dedicated)], 1u);
  EXPECT_EQ(counts[0].last_variant, cpu::isa_name(cpu::active_isa()));
  EXPECT_TRUE(all_close(got, want, 1e-2, 4e-3));
}

}  // namespace
}  // namespace fourfold
