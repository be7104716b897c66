// PLACEHOLDER: reference kernels not written yet; each is replaced by backends/reference/<op>.cpp.
#include "backends/reference/reference.h"
#include "fourfold/errors.h"

namespace fourfold::ref {

void add(const BinaryArgs&) { throw UnsupportedError("add: reference kernel not implemented yet"); }
void mul(const BinaryArgs&) { throw UnsupportedError("mul: reference kernel not implemented yet"); }
void silu(const UnaryArgs&) { throw UnsupportedError("silu: reference kernel not implemented yet"); }
void gelu(const GeluArgs&) { throw UnsupportedError("gelu: reference kernel not implemented yet"); }
void embedding(const EmbeddingArgs&) { throw UnsupportedError("embedding: reference kernel not implemented yet"); }
void topk(const TopkArgs&) { throw UnsupportedError("topk: reference kernel not implemented yet"); }
void argmax(const ArgmaxArgs&) { throw UnsupportedError("argmax: reference kernel not implemented yet"); }

}  // namespace fourfold::ref
