// The inputs of a reference-sweep case (check/reference_sweep.h): seeded normal values rounded to the run's
// dtype, then (for the float64 run) widened, so that both runs see identical values.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/dtype.h"
#include "fourfold/tensor.h"

namespace fourfold {

class SweepInputs {
 public:
  SweepInputs(DType rounding, DType compute, uint64_t seed) : rounding_(rounding), compute_(compute), seed_(seed) {}
  Tensor randn(const Shape& shape, double stddev = 1.0) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_normal(seed_ + counter_++, 0.0, stddev);
    return t.to(rounding_).to(compute_);
  }
  Tensor positive(const Shape& shape) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_uniform(seed_ + counter_++, 0.5, 1.5);
    return t.to(rounding_).to(compute_);
  }
  Tensor from_values(const std::vector<double>& values, const Shape& shape) {
    return Tensor::from_vector(values, shape, DType::f64).to(rounding_).to(compute_);
  }
  // FP8 inputs are the same in every run: the run's dtype is only the output dtype.
  Tensor fp8(const Shape& shape) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_normal(seed_ + counter_++, 0.0, 64.0);
    return t.to(DType::f8_e4m3fn);
  }
  Tensor indices(const Shape& shape, int64_t bound) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_uniform(seed_ + counter_++, 0.0, static_cast<double>(bound) - 1e-9);
    return t.to(DType::i64);
  }
  DType compute() const { return compute_; }

 private:
  DType rounding_, compute_;
  uint64_t seed_;
  uint64_t counter_ = 0;
};

}  // namespace fourfold
