"""Fake (meta) kernels of torch.ops.fourfold: the output shapes and dtypes alone, so that torch.compile and
FakeTensor tracing go through the ops without running them (and without a graph break)."""
import torch


def _register(name):
    return torch.library.register_fake(f"fourfold::{name}")


def _conv_out(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@_register("linear")
def _linear(x, weight, bias=None):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@_register("scaled_linear")
def _scaled_linear(x, weight, weight_scale, bias=None):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@_register("silu_mul")
def _silu_mul(gate, up):
    return torch.empty_like(gate, memory_format=torch.contiguous_format)


@_register("rms_norm")
def _rms_norm(x, normalized_shape, weight=None, eps=None):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("add_rms_norm")
def _add_rms_norm(x, residual, normalized_shape, weight=None, eps=None):
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(x, memory_format=torch.contiguous_format))


@_register("channel_rms_norm")
def _channel_rms_norm(x, weight, eps, silu=False):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("rotary_embedding")
def _rotary_embedding(x, cos, sin, interleaved=False):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("scaled_dot_product_attention")
def _sdpa(query, key, value, attn_mask=None, causal="none", scale=None, enable_gqa=False):
    return query.new_empty((*query.shape[:-1], value.shape[-1]))


@_register("softmax")
def _softmax(x, dim):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("log_softmax")
def _log_softmax(x, dim):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("topk")
def _topk(x, k, dim=-1, largest=True, sorted=True):
    shape = list(x.shape)
    if shape:
        shape[dim] = k
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)


@_register("argmax")
def _argmax(x, dim=None, keepdim=False):
    if dim is None:
        return x.new_empty((1,) * x.dim() if keepdim else (), dtype=torch.int64)
    shape = list(x.shape)
    if keepdim:
        shape[dim] = 1
    else:
        del shape[dim]
    return x.new_empty(shape, dtype=torch.int64)


@_register("constant_pad_nd")
def _constant_pad_nd(x, pad, value=0.0):
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    return x.new_empty(shape)


def _conv_shape(x, weight, stride, padding, dilation):
    spatial = [_conv_out(x.shape[2 + i], weight.shape[2 + i], stride[i], padding[i], dilation[i])
               for i in range(x.dim() - 2)]
    return (x.shape[0], weight.shape[0], *spatial)


@_register("conv2d")
def _conv2d(x, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    return x.new_empty(_conv_shape(x, weight, stride, padding, dilation))


@_register("conv3d")
def _conv3d(x, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1):
    return x.new_empty(_conv_shape(x, weight, stride, padding, dilation))


@_register("padded_conv3d")
def _padded_conv3d(x, weight, bias, pad, stride=(1, 1, 1)):
    padded = _constant_pad_nd(x, pad)
    return x.new_empty(_conv_shape(padded, weight, stride, (0, 0, 0), (1, 1, 1)))


@_register("upsample_nearest")
def _upsample_nearest(x, output_size):
    return x.new_empty((*x.shape[:2], *output_size))


@_register("moe_route")
def _moe_route(top_k_index, top_k_weights, num_experts):
    rows = torch.library.get_ctx().new_dynamic_size()
    return (top_k_index.new_empty((rows,), dtype=torch.int32), top_k_weights.new_empty((rows,), dtype=torch.float32),
            top_k_index.new_empty((num_experts,), dtype=torch.int32))


@_register("moe_experts")
def _moe_experts(x, gate, up, down, token_of_row, row_weight, offs, gate_scale=None, up_scale=None, down_scale=None):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("moe_block")
def _moe_block(x, router_weight, gate, up, down, top_k, norm_topk_prob, gate_scale=None, up_scale=None,
               down_scale=None):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_register("to_huge_pages")
def _to_huge_pages(t):
    return torch.empty_like(t)


@_register("causal_conv1d")
def _causal_conv1d(x, weight, bias=None, conv_state=None, silu=False):
    # x's layout, as the op keeps it: channel-last in, channel-last out.
    if x.dim() == 3 and x.shape[1] > 1 and x.stride(1) == 1:
        return x.new_empty((x.shape[0], x.shape[2], x.shape[1])).transpose(1, 2)
    return x.new_empty(x.shape)


@_register("gated_delta_rule")
def _gated_delta_rule(q, k, v, g, beta, state=None, a_log=None, dt_bias=None, order="auto", scale=None,
                      qk_l2norm=True, chunk_size=64):
    return v.new_empty(v.shape)


@_register("rms_norm_gated")
def _rms_norm_gated(x, gate, weight=None, eps=1e-6):
    return torch.empty_like(x, memory_format=torch.contiguous_format)
