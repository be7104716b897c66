// The reference convolution for any spatial rank, shared by conv2d and conv3d: each output element is summed
// in float64 over its own window and rounded once.
#pragma once

#include <cstdint>

#include "backends/reference/ref_access.h"
#include "backends/op_args.h"

namespace fourfold::ref {

inline void conv_nd(const ConvArgs& a) {
  const int rank = a.x.dim();
  const int spatial = rank - 2;
  const Shape kernel(a.weight.shape().begin() + 2, a.weight.shape().end());
  const int64_t in_per_group = a.weight.size(1);
  const int64_t out_per_group = a.out.size(1) / a.groups;
  Index xi(rank), wi(rank);
  for_each_index(a.out.shape(), [&](const int64_t* o) {
    const int64_t group = o[1] / out_per_group;
    double acc = a.bias != nullptr ? at(*a.bias, o[1]) : 0.0;
    xi[0] = o[0];
    wi[0] = o[1];
    for (int64_t c = 0; c < in_per_group; ++c) {
      xi[1] = group * in_per_group + c;
      wi[1] = c;
      for_each_index(kernel, [&](const int64_t* k) {
        bool inside = true;
        for (int d = 0; d < spatial; ++d) {
          // Positions in the zero-padded input; those in the padding contribute nothing.
          const int64_t pos = o[2 + d] * a.stride[d] - a.padding[d] + k[d] * a.dilation[d];
          inside = inside && pos >= 0 && pos < a.x.shape()[2 + d];
          xi[2 + d] = pos;
          wi[2 + d] = k[d];
        }
        if (inside) acc += get(a.x, xi) * get(a.weight, wi);
      });
    }
    put(a.out, o, acc);
  });
}

}  // namespace fourfold::ref
