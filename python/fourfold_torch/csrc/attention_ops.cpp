// rotary_embedding and scaled_dot_product_attention (decode and prefill, GQA, causal masks over a KV cache).
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor rotary_embedding(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool interleaved) {
  return run_op([&] {
    return to_torch(fourfold::rotary_embedding(
        to_fourfold(x, "rotary_embedding", "x"), to_fourfold(cos, "rotary_embedding", "cos"),
        to_fourfold(sin, "rotary_embedding", "sin"),
        interleaved ? fourfold::RotaryStyle::interleaved : fourfold::RotaryStyle::half_split));
  });
}

// causal: "none", "top_left" (PyTorch's is_causal) or "lower_right" (a query block at the end of the keys:
// prefill after a cache, and decode).
fourfold::CausalMode causal_mode(const std::string& causal) {
  if (causal == "none") return fourfold::CausalMode::none;
  if (causal == "top_left") return fourfold::CausalMode::top_left;
  if (causal == "lower_right") return fourfold::CausalMode::lower_right;
  refuse("scaled_dot_product_attention", "causal", "\"none\", \"top_left\" or \"lower_right\"", "\"" + causal + "\"");
}

at::Tensor scaled_dot_product_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const std::optional<at::Tensor>& attn_mask, const std::string& causal,
                                        std::optional<double> scale, bool enable_gqa) {
  const char* op = "scaled_dot_product_attention";
  return run_op([&] {
    fourfold::AttentionOptions options;
    options.attn_mask = to_fourfold(attn_mask, op, "attn_mask");
    options.causal = causal_mode(causal);
    options.scale = scale;
    options.enable_gqa = enable_gqa;
    return to_torch(fourfold::scaled_dot_product_attention(to_fourfold(q, op, "query"), to_fourfold(k, op, "key"),
                                                           to_fourfold(v, op, "value"), options));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("rotary_embedding(Tensor x, Tensor cos, Tensor sin, bool interleaved=False) -> Tensor");
  m.def("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
        "str causal=\"none\", float? scale=None, bool enable_gqa=False) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("rotary_embedding", &rotary_embedding);
  m.impl("scaled_dot_product_attention", &scaled_dot_product_attention);
}

}  // namespace fourfold_torch
