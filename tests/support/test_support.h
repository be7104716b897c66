// Helpers shared by every test: random inputs, non-contiguous copies, closeness checks, error checks,
// finite differences against the reference tier.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "fourfold/ops.h"
#include "fourfold/policy.h"
#include "fourfold/tensor.h"

namespace fourfold::testing {

// Every dtype fourfold has, f64 included.
inline constexpr DType kAllDTypes[] = {DType::f32,       DType::f16, DType::bf16, DType::f8_e4m3fn, DType::f8_e5m2,
                                       DType::complex64, DType::i32, DType::i64,  DType::boolean,   DType::f64};

// Relative tolerance of a result computed in float64 and rounded once to `dtype`, against a float64 formula
// evaluated on the same (rounded) inputs: a few units of the dtype's rounding. f64 results differ from the
// formula only by evaluation order, which `f64_tolerance` bounds.
double rounding_tolerance(DType dtype, double f64_tolerance = 1e-12);

// The real floating dtypes every float op accepts.
inline constexpr DType kFloatDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64};

// One unit in the last place of `dtype` relative to the value (2^-8 bf16, 2^-10 f16, 2^-23 f32; 1e-12 f64):
// twice the half ulp a single rounding of the exact result may cost, for kernels that round once.
double one_ulp_tolerance(DType dtype);

// For matrix products rounded once to the output dtype: half an ulp relative, with an absolute floor for
// results near zero (where cancellation makes a relative bound meaningless).
struct Tolerance {
  double rtol, atol;
};
Tolerance product_tolerance(DType dtype);

// Random bytes: NaN payloads, subnormals, int64 beyond 2^53 and nonzero imaginary parts all appear, so a kernel
// that should move bytes but converts through double anywhere is caught. Bool bytes stay 0 or 1.
Tensor random_bits(const Shape& shape, DType dtype, uint64_t seed);

// Random normal values of `dtype` (rounded to it), from a seed.
Tensor randn(const Shape& shape, DType dtype, uint64_t seed, double stddev = 1.0);
Tensor rand_uniform(const Shape& shape, DType dtype, uint64_t seed, double low, double high);

// The same values laid out non-contiguously: a transposed buffer read back through a permuted view, with
// padding between rows so that no stride is what a contiguous tensor would have.
Tensor non_contiguous(const Tensor& t);

// |a - b| <= atol + rtol * |b| element-wise (NaN matches NaN, inf matches the same inf). On failure reports
// the first mismatches with their indices.
::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol, double atol);
::testing::AssertionResult all_close(const Tensor& actual, const std::vector<double>& expected, double rtol,
                                     double atol);
// Bit-exact equality of two tensors of the same dtype and shape.
::testing::AssertionResult bit_equal(const Tensor& a, const Tensor& b);

// Runs fn, expects exception E whose message contains every fragment.
template <class E>
::testing::AssertionResult throws_with(const std::function<void()>& fn, std::vector<std::string> fragments) {
  try {
    fn();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& f : fragments)
      if (msg.find(f) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks '" << f << "': " << msg;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// Central finite difference of a scalar function of one tensor argument (f64 tensors): d f / d x[i].
Tensor finite_difference(const std::function<double(const Tensor&)>& f, const Tensor& x, double h = 1e-6);

// sum(a * b) over all elements, in double: turns a tensor function into the scalar a backward test needs.
double dot(const Tensor& a, const Tensor& b);

// Forces every op to the reference tier for the life of the object (the only tier today; later tiers make
// this meaningful).
struct ReferenceOnly {
  ScopedPolicy scope{Policy::parse("reference")};
};

}  // namespace fourfold::testing
