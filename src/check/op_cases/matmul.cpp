// matmul's correctness case. Its op-time rows are complex_matmul's (a row_ops case that times matmul in
// complex64), so this file has no call of its own.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(matmul) {
  return {
      .op = "matmul",
      .sweep = {{"a[2,7,33] b[33,9] (batch broadcast)", [](SweepInputs& in) {
                   return matmul(in.randn({2, 7, 33}), in.randn({33, 9}));
                 }},
                {"a[1,5] b[5,130]", [](SweepInputs& in) { return matmul(in.randn({1, 5}), in.randn({5, 130})); }}},
  };
}

}  // namespace fourfold
