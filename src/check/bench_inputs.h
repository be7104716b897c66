// The seeded inputs of op-time rows: the bytes every producer of records makes from a seed, and the handle an
// op's case file builds its row's inputs with (src/check/op_cases/op_case.h).
#pragma once

#include <cstdint>
#include <functional>

#include "fourfold/dtype.h"
#include "fourfold/tensor.h"

namespace fourfold {

// A benchmark input: element i is float((2 u(seed, i) - 1) * scale), u = counter_uniform, stored rounded to
// nearest even in `dtype`. Other producers of records (python/fourfold_torch) make the same bytes from it;
// tests/data/bench_inputs/golden.json pins both.
Tensor bench_tensor(const Shape& shape, DType dtype, uint64_t seed, double scale = 1.0);

// One row's call on inputs made once: it runs the op and returns its output.
using BenchCall = std::function<Tensor()>;

// A row's inputs in its dtype from its seed, or, for the float64 oracle, the same values widened to float64
// (complex64 stays complex64: the reference tier computes it in double; FP8 operands are made with bench_tensor
// and left unwidened by the case file, only their output widens).
class BenchInputs {
 public:
  BenchInputs(DType dtype, uint64_t seed, bool float64_oracle)
      : dtype_(dtype), seed_(seed), oracle_(float64_oracle) {}
  // bench_tensor(shape, dtype(), seed() + offset, scale), widened for the oracle.
  Tensor operator()(const Shape& shape, uint64_t offset = 0, double scale = 1.0) const {
    return wide(bench_tensor(shape, dtype_, seed_ + offset, scale));
  }
  Tensor wide(const Tensor& t) const {
    return oracle_ && t.dtype() != DType::complex64 ? t.to(DType::f64) : t;
  }
  DType dtype() const { return dtype_; }
  uint64_t seed() const { return seed_; }
  bool oracle() const { return oracle_; }

 private:
  DType dtype_;
  uint64_t seed_;
  bool oracle_;
};

}  // namespace fourfold
