// What conv2d's and conv3d's rows share: the conv suite's ConvCase (check/op_cases/conv_params.h), whose x
// rank picks the op.
#pragma once

#include <cmath>

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

struct ConvInputs {
  Tensor x, weight;
  OptTensor bias;
};

inline ConvInputs conv_inputs(const ConvCase& v, const BenchInputs& in) {
  const double fan_in = numel(v.weight) / static_cast<double>(v.weight[0]);
  ConvInputs t{in(v.x, 0), in(v.weight, 1, 1.0 / std::sqrt(fan_in)), std::nullopt};
  if (v.bias) t.bias = in({v.weight[0]}, 2);
  return t;
}

// read x, weight and bias, write out; flops = 2 N O out_spatial (C / groups) prod(kernel): out elements times
// the weight's fan-in.
inline OpCost conv_cost(const BenchCase& c) {
  const ConvCase& v = case_params<ConvCase>(c);
  const double s = element_size(c);
  const double out = numel(v.out_shape()), fan_in = numel(v.weight) / static_cast<double>(v.weight[0]);
  return OpCost{(numel(v.x) + numel(v.weight) + (v.bias ? static_cast<double>(v.weight[0]) : 0.0)) * s, out * s,
                2.0 * out * fan_in};
}

}  // namespace fourfold
