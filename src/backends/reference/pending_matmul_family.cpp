// PLACEHOLDER: reference kernels not written yet; each is replaced by backends/reference/<op>.cpp.
#include "backends/reference/reference.h"
#include "fourfold/errors.h"

namespace fourfold::ref {

void linear(const LinearArgs&) { throw UnsupportedError("linear: reference kernel not implemented yet"); }
void matmul(const MatmulArgs&) { throw UnsupportedError("matmul: reference kernel not implemented yet"); }
void grouped_mm(const GroupedMmArgs&) { throw UnsupportedError("grouped_mm: reference kernel not implemented yet"); }
void scaled_mm(const ScaledMmArgs&) { throw UnsupportedError("scaled_mm: reference kernel not implemented yet"); }
void linear_backward(const LinearBackwardArgs&) { throw UnsupportedError("linear_backward: reference kernel not implemented yet"); }

}  // namespace fourfold::ref
