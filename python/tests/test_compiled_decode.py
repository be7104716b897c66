"""An optimized model under torch.compile(fullgraph=True, dynamic=True), as the article runs transformers: no graph
break through the rewired modules, 32 greedy tokens equal to the eager optimized model's, and no recompile per
token. Dynamo compiles the prompt, the first decode step (the cache's first use) and the second (the grown cache's
strides), then reuses that graph for every later position."""
import copy
import os

import pytest
import torch

from conftest import TRANSFORMERS
from torch_ops_support import require_extension

TOKENS = 32


@pytest.fixture(autouse=True)
def _extension():
    require_extension()


@pytest.mark.parametrize("name", ["qwen3", "qwen3_moe", "qwen3_5_moe_text"])
def test_compiled_decode_neither_breaks_nor_recompiles_per_token(name):
    transformers = pytest.importorskip("transformers")
    from torch._dynamo.utils import counters
    from fourfold_torch import optimize
    model = transformers.AutoModelForCausalLM.from_pretrained(os.path.join(TRANSFORMERS, name),
                                                              dtype=torch.float32).eval()
    eager = optimize(model, kernels="fourfold")
    compiled = copy.copy(eager)   # the same modules and weights, its own forward
    graphs_by_step = []

    class CountGraphs(transformers.LogitsProcessor):
        def __call__(self, input_ids, scores):
            graphs_by_step.append(counters["stats"]["unique_graphs"])
            return scores

    torch._dynamo.reset()
    counters.clear()
    compiled.forward = torch.compile(eager.forward, fullgraph=True, dynamic=True)
    ids = torch.randint(0, model.config.vocab_size, (1, 7), generator=torch.Generator().manual_seed(3))
    greedy = dict(max_new_tokens=TOKENS, min_new_tokens=TOKENS, do_sample=False)
    with torch.no_grad():
        got = compiled.generate(ids, logits_processor=transformers.LogitsProcessorList([CountGraphs()]), **greedy)
        want = eager.generate(ids, **greedy)
    assert sum(counters["graph_break"].values()) == 0
    assert len(graphs_by_step) == TOKENS
    assert graphs_by_step[-1] == graphs_by_step[2] <= 3, graphs_by_step   # nothing new after the third step
    assert torch.equal(got, want)
