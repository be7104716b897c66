// conv2d / conv3d cases shared by the tier tests (cpu_conv_test, generic_conv_test): the Wan 2.1 VAE decoder's
// shapes scaled down to small channel counts (3x3x3 on causally pre-padded input, 3x3 with padding 1, 1x1, the
// (3, 1, 1) time conv, stride 2), odd sizes, dilation, groups, batches, a reduction longer than one GEMM K
// block, and non-contiguous inputs.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/tier_check.h"

namespace fourfold::conv_cases {

struct ConvCase {
  std::string name;
  Shape x, w;                    // x [N, C, *spatial], w [O, C / groups, *kernel]
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  bool bias = true;
  bool strided_x = false;        // x as a view with gaps between its rows and channels
};

inline const std::vector<ConvCase>& cases() {
  static const std::vector<ConvCase> all = {
      {"wan 3x3x3 causal (pre-padded)", {1, 8, 3, 10, 14}, {12, 8, 3, 3, 3}, {1}, {0}, {1}},
      {"wan 3x3x3 two frames, no bias", {1, 6, 4, 7, 9}, {10, 6, 3, 3, 3}, {1}, {0}, {1}, 1, false},
      {"wan time conv (3,1,1)", {1, 8, 3, 6, 10}, {16, 8, 3, 1, 1}, {1}, {0}, {1}},
      {"wan 1x1x1 shortcut", {1, 8, 2, 5, 7}, {16, 8, 1, 1, 1}, {1}, {0}, {1}},
      {"wan upsample 3x3 pad 1", {2, 8, 9, 13}, {16, 8, 3, 3}, {1}, {1}, {1}},
      {"wan attention 1x1", {1, 24, 7, 9}, {40, 24, 1, 1}, {1}, {0}, {1}},
      {"encoder 3x3 stride 2", {1, 8, 11, 17}, {8, 8, 3, 3}, {2}, {0}, {1}},
      {"3x3 stride 2 pad 1", {3, 5, 10, 9}, {7, 5, 3, 3}, {2}, {1}, {1}},
      {"3x3x3 stride (1,2,2) pad 1", {1, 4, 4, 9, 10}, {6, 4, 3, 3, 3}, {1, 2, 2}, {1}, {1}},
      {"1x1 stride 2", {1, 6, 9, 11}, {5, 6, 1, 1}, {2}, {0}, {1}},
      {"dilation 2 pad 2", {1, 4, 12, 12}, {6, 4, 3, 3}, {1}, {2}, {2}},
      {"odd sizes, mixed params", {2, 5, 4, 7, 33}, {7, 5, 3, 3, 3}, {1, 2, 1}, {1, 0, 2}, {1, 1, 2}},
      {"reduction over two K blocks", {1, 24, 3, 12, 40}, {20, 24, 3, 3, 3}, {1}, {0}, {1}},
      {"wide output row (several runs a panel)", {1, 3, 3, 70}, {4, 3, 3, 3}, {1}, {1}, {1}},
      {"non-contiguous x", {1, 6, 3, 8, 11}, {9, 6, 3, 3, 3}, {1}, {1}, {1}, 1, true, true},
      {"non-contiguous x 1x1", {2, 6, 5, 7}, {9, 6, 1, 1}, {1}, {0}, {1}, 1, true, true},
      {"groups 2", {2, 8, 6, 6}, {12, 4, 3, 3}, {1}, {1}, {1}, 2},
      {"depthwise", {1, 6, 5, 5}, {6, 1, 3, 3}, {1}, {1}, {1}, 6},
      {"groups 3, 3-D, stride 2", {1, 6, 3, 7, 8}, {9, 2, 3, 3, 3}, {2}, {1}, {1}, 3},
  };
  return all;
}

// The x of a case: random values, laid out as the case says (a strided view keeps unit stride along W).
inline Tensor input(const ConvCase& c, DType dtype, uint64_t seed) {
  if (!c.strided_x) return testing::randn(c.x, dtype, seed);
  Shape wide = c.x;
  wide[1] += 2;
  wide.back() += 3;
  const Tensor big = testing::randn(wide, dtype, seed);
  return big.narrow(1, 1, c.x[1]).narrow(static_cast<int>(c.x.size()) - 1, 2, c.x.back());
}

// The op call of a case: weights scaled by 1 / sqrt(fan-in) so outputs stay near unit size.
inline tier_check::Fn call(const ConvCase& c, DType dtype, uint64_t seed) {
  int64_t fan_in = 1;
  for (size_t d = 1; d < c.w.size(); ++d) fan_in *= c.w[d];
  const Tensor x = input(c, dtype, seed);
  const Tensor w = testing::randn(c.w, dtype, seed + 1, 1.0 / std::sqrt(static_cast<double>(fan_in)));
  const OptTensor b = c.bias ? OptTensor(testing::randn({c.w[0]}, dtype, seed + 2)) : std::nullopt;
  return [=] {
    if (c.x.size() == 4) return tier_check::Outputs{conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups)};
    return tier_check::Outputs{conv3d(x, w, b, c.stride, c.padding, c.dilation, c.groups)};
  };
}

inline const char* op_of(const ConvCase& c) { return c.x.size() == 4 ? "conv2d" : "conv3d"; }

inline std::string describe(const ConvCase& c, DType dtype) {
  return fmt::format("{} x[{}] w[{}] {}", c.name, fmt::join(c.x, ","), fmt::join(c.w, ","), dtype_name(dtype));
}

// f32: the f32 accumulation over fan-ins of up to a few hundred terms; bf16 / f16: one rounding of the
// result (the reference rounds once too, so the two may sit one output ulp apart).
inline tier_check::Tol tolerance(DType dtype) {
  return dtype == DType::f32 ? tier_check::Tol{1e-4, 1e-5} : tier_check::Tol{1e-2, 1e-3};
}

inline constexpr DType kTypes[] = {DType::f32, DType::bf16, DType::f16};

// Every case in every dtype on `tier` against the reference; the dedicated tier must leave grouped convs to a
// slower tier.
inline void expect_every_case_matches(Tier tier, uint64_t seed) {
  for (DType t : kTypes)
    for (const ConvCase& c : cases()) {
      tier_check::expect_matches(op_of(c), tier, call(c, t, seed), tolerance(t), describe(c, t),
                                 /*covered=*/tier != Tier::dedicated || c.groups == 1);
      seed += 3;
    }
}

}  // namespace fourfold::conv_cases
