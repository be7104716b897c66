// What one op-time row must move and compute at the least. Each op's rule is beside its call, in its case file
// (src/check/op_cases/<op>.cpp); op_cost() in check/op_bench.h picks it.
#pragma once

namespace fourfold {

// Each input read once, each output written once (bytes of the logical tensors in their dtypes; a strided input
// counts its elements, not the buffer around them), and 2 flops per multiply-add of the matrix products it
// contains. Elementwise work (exp, max, the bias add, scaling) is not counted: ops without a matrix product have
// flops = 0 and their roofline is bandwidth.
struct OpCost {
  double bytes_read = 0.0;
  double bytes_written = 0.0;
  double flops = 0.0;
  // Input bytes a row makes that the op need not read (embedding: the table rows no id picks). Not part of
  // the roofline; counted where the inputs' size matters: rotation copies and the reference cap's work.
  double bytes_made = 0.0;
  double bytes() const { return bytes_read + bytes_written; }
};

}  // namespace fourfold
