"""fourfold_torch.optimize on the transformers and diffusers fixture folders (tests/data): the optimized model's
logits, greedy tokens and frames against the unmodified model's, a subset of ops, and bad arguments."""
import copy
import os

import pytest
import torch

from conftest import REPO, TRANSFORMERS
from torch_ops_support import psnr_db, require_extension


@pytest.fixture(autouse=True)
def _extension():
    require_extension()


def _load_decoder(name):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoModelForCausalLM.from_pretrained(os.path.join(TRANSFORMERS, name),
                                                             dtype=torch.float32).eval()


@pytest.mark.parametrize("name", ["qwen3_moe", "qwen3", "qwen2", "llama3"])
def test_optimized_decoder_matches_the_unmodified_one(name):
    from fourfold_torch import optimize
    plain = _load_decoder(name)
    fast = optimize(copy.deepcopy(plain))
    rewired = {op for _, op in fast.fourfold_optimized}
    assert {"linear", "rms_norm", "add_rms_norm", "scaled_dot_product_attention"} <= rewired
    assert ("moe_block" if name == "qwen3_moe" else "silu_mul") in rewired
    ids = torch.randint(0, plain.config.vocab_size, (1, 19), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        expected, got = plain(ids).logits, fast(ids).logits
        assert psnr_db(got, expected) >= 120.0
        # generate() unchanged: prefill, then decode steps through transformers' own KV cache.
        a = plain.generate(ids, max_new_tokens=6, do_sample=False)
        b = fast.generate(ids, max_new_tokens=6, do_sample=False)
    assert torch.equal(a, b)


def test_a_subset_of_ops_rewires_only_those():
    from fourfold_torch import optimize
    model = optimize(_load_decoder("qwen3"), ops=["rms_norm"])
    assert model.fourfold_optimized and {op for _, op in model.fourfold_optimized} == {"rms_norm"}
    assert "forward" not in vars(model.model.layers[0].self_attn.q_proj)


def test_weights_stay_in_place_unless_a_copy_is_asked_for():
    from fourfold_torch import optimize
    torch.manual_seed(0)
    plain = torch.nn.Sequential(torch.nn.Linear(1024, 1024))   # a 4 MiB weight: above the copy's 2 MiB
    x = torch.randn(3, 1024)
    kept = copy.deepcopy(plain)
    ptr = kept[0].weight.data_ptr()
    kept = optimize(kept, kernels="fourfold")   # both on fourfold: two probes may choose differently
    assert kept.fourfold_optimized
    assert kept[0].weight.data_ptr() == ptr
    copied = copy.deepcopy(plain)
    ptr = copied[0].weight.data_ptr()
    copied = optimize(copied, weights="copy", kernels="fourfold")
    assert copied[0].weight.data_ptr() != ptr
    assert torch.equal(copied[0].weight, plain[0].weight)
    with torch.inference_mode():
        assert torch.allclose(kept(x), plain(x), rtol=1e-5, atol=1e-5)
        assert torch.equal(copied(x), kept(x))


def test_bf16_decoder_stays_within_bf16_rounding():
    from fourfold_torch import optimize
    plain = _load_decoder("qwen3_moe").to(torch.bfloat16)
    fast = optimize(copy.deepcopy(plain))
    ids = torch.arange(3, 14).unsqueeze(0)
    with torch.inference_mode():
        reference = _load_decoder("qwen3_moe")(ids).logits
        assert psnr_db(fast(ids).logits, reference) >= psnr_db(plain(ids).logits, reference) - 3.0


@pytest.mark.parametrize("folder", ["wan2.1_tiny", "wan2.2_tiny"])
def test_optimized_wan_vae_decodes_the_same_frames(folder):
    diffusers = pytest.importorskip("diffusers")
    from fourfold_torch import optimize
    plain = diffusers.AutoencoderKLWan.from_pretrained(os.path.join(REPO, "tests", "data", "diffusers", folder)).eval()
    fast = optimize(copy.deepcopy(plain))
    rewired = {op for _, op in fast.fourfold_optimized}
    assert {"padded_conv3d", "channel_rms_norm+silu"} <= rewired
    z = torch.randn(1, plain.config.z_dim, 2, 4, 6, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        expected, got = plain.decode(z).sample, fast.decode(z).sample
    assert got.shape == expected.shape
    assert psnr_db(got, expected) >= 100.0


def test_unknown_ops_are_refused_by_name():
    from fourfold_torch import optimize
    with pytest.raises(ValueError, match=r"optimize.*'ops'.*found rms_nrom"):
        optimize(torch.nn.Linear(2, 2), ops=["rms_nrom"])


def test_the_probe_chooses_per_weight_shape_and_says_so():
    from fourfold_torch import optimize
    plain = _load_decoder("qwen3")
    fast = optimize(copy.deepcopy(plain))
    shapes = {tuple(m.weight.shape) for m in fast.modules() if isinstance(m, torch.nn.Linear)}
    assert len(fast.fourfold_choices) == len(shapes)
    assert all("decode" in c and "prefill" in c for c in fast.fourfold_choices)
    ids = torch.randint(0, plain.config.vocab_size, (1, 19), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        assert psnr_db(fast(ids).logits, plain(ids).logits) >= 120.0


def test_a_linear_left_to_pytorch_gives_pytorchs_bits_at_the_rows_it_was_left_for():
    from fourfold_torch import optimize, speed_probe
    model = optimize(torch.nn.Sequential(torch.nn.Linear(64, 48)), kernels="fourfold")
    linear = model[0]
    assert model.fourfold_choices == []   # nothing probed
    choice = speed_probe.fixed_choice(linear, fourfold=True)
    choice.fourfold_at_decode = False      # PyTorch's at decode, fourfold's at prefill
    linear.fourfold_linear_choice = choice
    one, many = torch.randn(1, 64), torch.randn(speed_probe.DECODE_ROWS + 1, 64)
    with torch.inference_mode():
        assert torch.equal(model(one), torch.nn.functional.linear(one, linear.weight, linear.bias))
        assert torch.equal(model(many), torch.ops.fourfold.linear(many, linear.weight, linear.bias))


def test_an_unknown_kernels_choice_is_refused():
    from fourfold_torch import optimize
    with pytest.raises(ValueError, match=r"optimize.*'kernels'.*found 'fastest'"):
        optimize(torch.nn.Linear(2, 2), kernels="fastest")
