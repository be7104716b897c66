// Correctness figures of one output against the float64 reference (DESIGN.md section 2.3).
#pragma once

#include <cstdint>

#include "fourfold/tensor.h"

namespace fourfold {

struct ErrorStats {
  int64_t count = 0;               // elements compared (complex: real and imaginary parts count separately)
  double max_abs = 0.0;
  double max_rel = 0.0;            // |a - r| / max(|r|, rel_floor)
  double rel_floor = 0.0;
  int64_t max_ulp = 0;             // in the output dtype: distance between a and r rounded to that dtype
  double psnr_db = 0.0;            // 10 log10(peak^2 / MSE), peak = max |r|; +inf when MSE == 0
  double peak = 0.0;
  int64_t nan_mismatches = 0;      // NaN on one side only (counted, and they make PSNR NaN)
  bool exact = false;              // every element equals the reference rounded to the output dtype
};

// `actual` in any dtype; `reference` the same shape, normally float64 (complex64 for complex outputs).
// rel_floor < 0 picks the default: 1e-3 * peak, so near-zero elements do not dominate max_rel.
ErrorStats compare_to_reference(const Tensor& actual, const Tensor& reference, double rel_floor = -1.0);

// End-to-end figures over logits [positions, vocab] (any float dtype; reference normally float64):
// mean over positions of KL(softmax(reference) || softmax(candidate)) in nats, computed in float64 with
// log-sum-exp; and the % of positions whose argmax agrees (ties: the first index, as argmax).
double mean_kl_divergence(const Tensor& reference_logits, const Tensor& candidate_logits);
double top1_agreement_percent(const Tensor& reference_logits, const Tensor& candidate_logits);

// Distance in units in the last place between two values of `dtype` (both given as doubles representable
// in it): the difference of their positions in the ordered list of that dtype's values.
int64_t ulp_distance(double a, double b, DType dtype);

}  // namespace fourfold
