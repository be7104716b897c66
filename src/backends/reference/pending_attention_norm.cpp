// PLACEHOLDER: reference kernels not written yet; each is replaced by backends/reference/<op>.cpp.
#include "backends/reference/reference.h"
#include "fourfold/errors.h"

namespace fourfold::ref {

void scaled_dot_product_attention(const AttentionArgs&) { throw UnsupportedError("scaled_dot_product_attention: reference kernel not implemented yet"); }
void scaled_dot_product_attention_backward(const AttentionBackwardArgs&) { throw UnsupportedError("scaled_dot_product_attention_backward: reference kernel not implemented yet"); }
void rms_norm(const RmsNormArgs&) { throw UnsupportedError("rms_norm: reference kernel not implemented yet"); }
void rms_norm_backward(const RmsNormBackwardArgs&) { throw UnsupportedError("rms_norm_backward: reference kernel not implemented yet"); }
void layer_norm(const LayerNormArgs&) { throw UnsupportedError("layer_norm: reference kernel not implemented yet"); }
void group_norm(const GroupNormArgs&) { throw UnsupportedError("group_norm: reference kernel not implemented yet"); }
void rotary_embedding(const RotaryArgs&) { throw UnsupportedError("rotary_embedding: reference kernel not implemented yet"); }

}  // namespace fourfold::ref
