// The modes an op takes besides tensors (fourfold/ops.h documents each op): part of what every tier's kernel
// receives (src/backends/op_args.h), so they sit below the op API with the backend interface.
#pragma once

namespace fourfold {

// rotary_embedding's pairing of the rotated dims: (i, i + R/2) or (2i, 2i + 1).
enum class RotaryStyle { half_split, interleaved };

enum class GeluApproximate { none, tanh };

// gated_delta_rule's order of work: token by token, or chunks of tokens as small matrix products; auto is each
// tier's choice: the dedicated tier goes token by token at any length (on a CPU the chunked form does as many
// flops per token at Qwen3.6's head size and measured 3.3x slower; docs/hybrid.md), the generic tier chunks a
// prompt as transformers does.
enum class GatedDeltaMode { auto_, recurrent, chunked };

// scaled_dot_product_attention's causal mask.
enum class CausalMode {
  none,
  top_left,      // PyTorch's is_causal=True: query i attends keys j <= i (tril of the [L, S] matrix)
  lower_right,   // torch.nn.attention.bias.causal_lower_right: query i attends keys j <= i + (S - L); decode
};

}  // namespace fourfold
