"""fourfold_torch.optimize on the 2026 Qwen hybrids' fixture folders (tests/data/transformers, written by
transformers 5.23): the Gated DeltaNet layers, zero-centred norms and the MoE block with its shared expert on
fourfold, over transformers' own hybrid cache; logits and greedy tokens against the unmodified model."""
import copy
import os

import pytest
import torch

from conftest import TRANSFORMERS
from torch_ops_support import psnr_db, require_extension


@pytest.fixture(autouse=True)
def _extension():
    require_extension()


def _load(name, dtype=torch.float32):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoModelForCausalLM.from_pretrained(os.path.join(TRANSFORMERS, name), dtype=dtype).eval()


# Qwen3-Next's GatedDeltaNet projects qkvz and ba grouped per key head: it stays transformers' (its norms and MoE
# block are rewired).
EXPECTED = {
    "qwen3_5_moe_text": {"gated_delta_rule", "rms_norm_gated", "rms_norm", "moe_block", "linear"},
    "qwen3_5_text": {"gated_delta_rule", "rms_norm_gated", "rms_norm", "silu_mul", "linear"},
    "qwen3_next": {"rms_norm_gated", "rms_norm", "moe_block", "linear"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_optimized_hybrid_matches_the_unmodified_one(name):
    from fourfold_torch import optimize
    plain = _load(name)
    fast = optimize(copy.deepcopy(plain))
    rewired = {op for _, op in fast.fourfold_optimized}
    assert EXPECTED[name] <= rewired
    # The gated attention (q_proj yields q and a gate) is not the plain attention rewiring's.
    assert "scaled_dot_product_attention" not in rewired
    ids = torch.randint(0, plain.config.vocab_size, (1, 70), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        # 70 tokens: transformers' prefill chunks of 64 and a partial one; fourfold picks its own order.
        assert psnr_db(fast(ids).logits, plain(ids).logits) >= 110.0
        # generate(): the prompt, then steps on transformers' conv and recurrent states, updated in place.
        a = plain.generate(ids, max_new_tokens=12, do_sample=False)
        b = fast.generate(ids, max_new_tokens=12, do_sample=False)
    assert torch.equal(a, b)


def test_optimized_hybrid_steps_match_a_whole_prompt():
    # Token by token through the cache (the conv state's view and the recurrent state updated in place) against
    # the same tokens in one forward.
    from fourfold_torch import optimize
    transformers = pytest.importorskip("transformers")
    model = optimize(_load("qwen3_5_moe_text"))
    ids = torch.randint(0, model.config.vocab_size, (1, 9), generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        whole = model(ids).logits
        cache = transformers.DynamicCache(config=model.config)
        steps = [model(ids[:, :4], past_key_values=cache, use_cache=True).logits]
        for t in range(4, 9):
            steps.append(model(ids[:, t:t + 1], past_key_values=cache, use_cache=True).logits)
    assert psnr_db(torch.cat(steps, dim=1), whole) >= 110.0
