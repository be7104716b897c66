"""torch.ops.fourfold against PyTorch's own ops and a float64 reference, on odd shapes and strided views, eager and
under torch.compile (fullgraph: no graph break), and the errors bad arguments raise."""
import math

import pytest
import torch
import torch.nn.functional as F

from torch_ops_support import MIN_DB, psnr_db, require_extension


@pytest.fixture(autouse=True)
def _extension():
    require_extension()


ops = torch.ops.fourfold
DTYPES = [torch.float32, torch.bfloat16]


def rand(*shape, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1).mul(scale).to(dtype)


def wide(*tensors):
    return [None if t is None else t.to(torch.float64) for t in tensors]


def check(got, reference, dtype, torch_result=None):
    assert got.shape == reference.shape and got.dtype == dtype
    db = psnr_db(got, reference)
    assert db >= MIN_DB[dtype], f"{db:.1f} dB against float64"
    if torch_result is not None:   # no worse than PyTorch's own op, less a dB of rounding luck
        assert db >= psnr_db(torch_result, reference) - 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 3, 37])
def test_linear_on_odd_shapes_and_a_row_strided_weight(dtype, m):
    x = rand(m, 45, dtype=dtype)
    storage = rand(29, 50, dtype=dtype, seed=1, scale=1 / math.sqrt(45))
    w, b = storage[:, 3:48], rand(29, dtype=dtype, seed=2)   # rows 50 apart: read in place
    got = ops.linear(x, w, b)
    check(got, F.linear(*wide(x, w, b)), dtype, F.linear(x, w, b))
    assert ops.linear(x.view(1, m, 45), w, None).shape == (1, m, 29)


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "block"])
def test_scaled_linear_reads_fp8_weights_with_their_scales(recipe):
    n, k = 200, 300
    w = rand(n, k, seed=1, scale=64).to(torch.float8_e4m3fn)
    shape = {"tensorwise": [1], "rowwise": [n, 1], "block": [2, 3]}[recipe]
    s = rand(*shape, seed=3).abs().add(0.5).div(64 * math.sqrt(k)).float()
    x = rand(4, k, dtype=torch.bfloat16)
    full = s.to(torch.float64)
    if recipe == "block":
        full = full.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    reference = F.linear(x.to(torch.float64), w.to(torch.float64) * full)
    check(ops.scaled_linear(x, w, s), reference, torch.bfloat16)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norms_and_the_fused_residual(dtype):
    x = rand(7, 33, dtype=dtype).t()   # [33, 7], not contiguous
    r, w = rand(33, 7, dtype=dtype, seed=1), rand(7, dtype=dtype, seed=2)
    check(ops.rms_norm(x, [7], w, 1e-6), F.rms_norm(*wide(x), [7], wide(w)[0], 1e-6), dtype, F.rms_norm(x, [7], w, 1e-6))
    normed, total = ops.add_rms_norm(x, r, [7], w, 1e-6)
    assert torch.equal(total, x + r)
    check(normed, F.rms_norm((x + r).to(torch.float64), [7], wide(w)[0], 1e-6), dtype)
    v = rand(2, 5, 3, 4, 6, dtype=dtype, seed=4)
    g = rand(5, dtype=dtype, seed=5)
    v64, g64 = wide(v, g)
    reference = F.silu(v64 * torch.rsqrt(v64.pow(2).mean(1, keepdim=True) + 1e-6) * g64.view(1, 5, 1, 1, 1))
    check(ops.channel_rms_norm(v, g, 1e-6, True), reference, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rotary_embedding_half_split_and_interleaved(dtype):
    x = rand(1, 3, 5, 10, dtype=dtype).transpose(1, 2)   # [1, 5, 3, 10] strided
    cos, sin = rand(1, 5, 1, 5, dtype=dtype, seed=1), rand(1, 5, 1, 5, dtype=dtype, seed=2)
    x64, c64, s64 = wide(x, cos, sin)
    a, b = x64[..., :5], x64[..., 5:]
    check(ops.rotary_embedding(x, cos, sin), torch.cat((a * c64 - b * s64, b * c64 + a * s64), -1), dtype)
    a, b = x64[..., 0::2], x64[..., 1::2]
    inter = torch.stack((a * c64 - b * s64, b * c64 + a * s64), -1).flatten(-2)
    check(ops.rotary_embedding(x, cos, sin, True), inter, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("q_len,kv_len,causal", [(1, 37, "none"), (5, 5, "top_left"), (3, 11, "lower_right")])
def test_attention_with_grouped_heads_and_causal_masks(dtype, q_len, kv_len, causal):
    q = rand(2, 6, q_len, 16, dtype=dtype)
    k, v = rand(2, 2, kv_len, 16, dtype=dtype, seed=1), rand(2, 2, kv_len, 16, dtype=dtype, seed=2)
    mask = None
    if causal == "top_left":
        mask = torch.ones(q_len, kv_len, dtype=torch.bool).tril()
    elif causal == "lower_right":
        mask = torch.ones(q_len, kv_len, dtype=torch.bool).tril(kv_len - q_len)
    reference = F.scaled_dot_product_attention(*wide(q, k, v), attn_mask=mask, enable_gqa=True)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    check(ops.scaled_dot_product_attention(q, k, v, None, causal, None, True), reference, dtype, theirs)
    if mask is not None:   # the same mask given as a tensor
        check(ops.scaled_dot_product_attention(q, k, v, mask, "none", None, True), reference, dtype, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_topk_argmax(dtype):
    x = rand(9, 151, dtype=dtype, scale=8)
    check(ops.softmax(x, -1), torch.softmax(x.double(), -1), dtype, torch.softmax(x, -1))
    check(ops.log_softmax(x, -1), torch.log_softmax(x.double(), -1), dtype, torch.log_softmax(x, -1))
    values, indices = ops.topk(x, 8)
    assert torch.equal(values, torch.topk(x, 8).values)
    # Ties (bf16 has many) keep the lower index first; PyTorch promises no order among them.
    assert torch.equal(x.gather(-1, indices), values)
    for row, chosen in zip(x, indices):
        for value in row[chosen].unique():
            tied = (row == value).nonzero().flatten()
            assert torch.equal(chosen[row[chosen] == value], tied[: int((row[chosen] == value).sum())])
    assert torch.equal(ops.argmax(x, -1), torch.argmax(x, -1))
    assert torch.equal(ops.argmax(x), torch.argmax(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_video_ops(dtype):
    x = rand(1, 5, 3, 7, 9, dtype=dtype)
    w, b = rand(6, 5, 3, 3, 3, dtype=dtype, seed=1, scale=0.2), rand(6, dtype=dtype, seed=2)
    pad = [1, 1, 1, 1, 2, 0]
    assert torch.equal(ops.constant_pad_nd(x, pad, 0.0), F.pad(x, pad))
    assert torch.equal(ops.constant_pad_nd(x.transpose(3, 4), [2, -1], 1.5), F.pad(x.transpose(3, 4), [2, -1], value=1.5))
    check(ops.conv3d(x, w, b, [1, 1, 1], [0, 1, 1], [1, 1, 1], 1), F.conv3d(*wide(x, w, b), 1, [0, 1, 1]), dtype,
          F.conv3d(x, w, b, 1, [0, 1, 1]))
    check(ops.padded_conv3d(x, w, b, pad, [1, 1, 1]), F.conv3d(*wide(F.pad(x, pad), w, b)), dtype)
    x2, w2 = x[:, :, 0], rand(4, 5, 3, 3, dtype=dtype, seed=3, scale=0.2)
    check(ops.conv2d(x2, w2, None, [2, 1], [1, 1], [1, 1], 1), F.conv2d(*wide(x2, w2), None, [2, 1], [1, 1]), dtype)
    up = ops.upsample_nearest(x2, [14, 18])
    assert torch.equal(up, F.interpolate(x2, size=[14, 18], mode="nearest"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_moe_route_experts_and_block_against_a_per_expert_loop(dtype):
    tokens, hidden, inter, experts, top_k = 5, 24, 16, 6, 2
    x = rand(tokens, hidden, dtype=dtype)
    gate_up = rand(experts, 2 * inter, hidden, dtype=dtype, seed=1, scale=0.3)   # transformers' fused layout
    gate, up = gate_up[:, :inter], gate_up[:, inter:]
    down = rand(experts, hidden, inter, dtype=dtype, seed=2, scale=0.3)
    router = rand(experts, hidden, dtype=dtype, seed=3)
    probs = torch.softmax(F.linear(*wide(x, router)), -1)
    weights, index = torch.topk(probs, top_k)
    weights = weights / weights.sum(-1, keepdim=True)
    x64, g64, u64, d64 = wide(x, gate, up, down)
    reference = torch.zeros(tokens, hidden, dtype=torch.float64)
    for t in range(tokens):
        for j in range(top_k):
            e = index[t, j]
            reference[t] += weights[t, j] * F.linear(F.silu(F.linear(x64[t], g64[e])) * F.linear(x64[t], u64[e]), d64[e])
    token_of_row, row_weight, offs = ops.moe_route(index, weights.float(), experts)
    assert offs[-1].item() == tokens * top_k and token_of_row.dtype == torch.int32
    check(ops.moe_experts(x, gate, up, down, token_of_row, row_weight, offs), reference, dtype)
    check(ops.moe_block(x, router, gate, up, down, top_k, True), reference, dtype)


def test_ops_compile_without_a_graph_break():
    x, w = rand(3, 40), rand(24, 40, seed=1)
    norm_w = rand(24, seed=2)

    def block(x, w, norm_w):
        h = ops.linear(x, w, None)
        h = ops.rms_norm(h, [24], norm_w, 1e-6)
        return ops.softmax(ops.silu_mul(h, h), -1)

    compiled = torch.compile(block, fullgraph=True, backend="eager")
    torch._dynamo.reset()
    assert torch.equal(compiled(x, w, norm_w), block(x, w, norm_w))
    inductor = torch.compile(block, fullgraph=True)
    assert torch.allclose(inductor(x, w, norm_w), block(x, w, norm_w))


def test_bad_arguments_raise_naming_the_op_and_argument():
    x, w = rand(2, 8), rand(4, 8)
    with pytest.raises(ValueError, match=r"fourfold\.linear.*'weight'.*last dim is contiguous"):
        ops.linear(x, rand(8, 4).t(), None)   # a transposed weight is refused, not copied
    with pytest.raises(TypeError, match=r"linear.*'x'.*int8"):
        ops.linear(x.to(torch.int8), w, None)
    with pytest.raises((TypeError, ValueError), match=r"linear"):
        ops.linear(x.double().to(torch.bfloat16), w, None)   # one dtype for all: no silent promotion
    with pytest.raises(ValueError, match=r"linear"):
        ops.linear(x, rand(4, 9), None)
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention.*'causal'"):
        ops.scaled_dot_product_attention(rand(1, 1, 1, 4), rand(1, 1, 2, 4), rand(1, 1, 2, 4), None, "upper", None, False)
    with pytest.raises(ValueError, match=r"moe_route.*'top_k_index'.*\[0, 4\)"):
        ops.moe_route(torch.tensor([[7]]), torch.ones(1, 1), 4)
    # The hybrids' in-place states: a wrong shape or dtype is refused by name, never written past.
    channels_last = rand(1, 7, 16).transpose(1, 2)
    with pytest.raises(ValueError, match=r"causal_conv1d.*'conv_state'.*\[1, 16, 3\].*found shape \[1, 16, 2\]"):
        ops.causal_conv1d(channels_last, rand(16, 4), None, rand(1, 2, 16).transpose(1, 2), True)
    with pytest.raises(TypeError, match=r"causal_conv1d.*'conv_state'.*float64"):
        ops.causal_conv1d(channels_last, rand(16, 4), None, rand(1, 3, 16).double().transpose(1, 2), True)
    q, v, g = rand(1, 5, 2, 16), rand(1, 5, 4, 16), rand(1, 5, 4)
    with pytest.raises(ValueError, match=r"gated_delta_rule.*'state'.*\[1, 4, 16, 16\].*found shape \[1, 4, 16, 8\]"):
        ops.gated_delta_rule(q, q, v, g, g, rand(1, 4, 16, 8), rand(4), rand(4), "auto", None, True, 64)
    with pytest.raises(TypeError, match=r"gated_delta_rule.*'state'.*bfloat16"):
        ops.gated_delta_rule(q, q, v, g, g, rand(1, 4, 16, 16).bfloat16(), rand(4), rand(4), "auto", None, True, 64)
    with pytest.raises(ValueError, match=r"gated_delta_rule.*'order'.*found \"sideways\""):
        ops.gated_delta_rule(q, q, v, g, g, None, rand(4), rand(4), "sideways", None, True, 64)
    if torch.cuda.is_available():
        with pytest.raises((ValueError, NotImplementedError, RuntimeError)):
            ops.linear(x.cuda(), w.cuda(), None)


def test_the_thread_count_follows_torch():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        single = ops.linear(rand(64, 256), rand(128, 256, seed=1), None)
        torch.set_num_threads(2)
        assert torch.equal(ops.linear(rand(64, 256), rand(128, 256, seed=1), None), single)
        assert torch.ops.fourfold.num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_outputs_come_from_pytorchs_allocator():
    """One memory cache: an op's output (and its temporaries) are PyTorch allocator blocks, which its profiler
    counts, not memory of a second cache of fourfold's beside it."""
    from fourfold_torch.memory import _cpu_allocator_totals
    x, w = rand(4, 64), rand(1 << 20, 64)   # the output: 4 x 2^20 floats = 16 MiB
    kept = []
    _, peak = _cpu_allocator_totals(lambda: kept.append(ops.linear(x, w, None)))
    assert peak >= 16 << 20, f"PyTorch's allocator saw a peak of {peak} bytes"
    torch.testing.assert_close(kept[0], F.linear(x, w), rtol=1e-5, atol=1e-5)
