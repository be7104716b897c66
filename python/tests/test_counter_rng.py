"""The driver makes fourfold's inputs bit for bit: both producers are pinned to one golden file
(tests/data/bench_inputs/golden.json; the C++ side is tests/check/bench_inputs_golden_test.cpp)."""

import json
import os

from conftest import REPO
from fourfold_torch.counter_rng import counter_bits, synthetic_prompt
from fourfold_torch.golden import tensor_hex
from fourfold_torch.op_calls import bench_tensor, uniform_tensor
from fourfold_torch.vae_workload import seeded_latents, synthetic_scene

with open(os.path.join(REPO, "tests", "data", "bench_inputs", "golden.json"), encoding="utf-8") as f:
    GOLDEN = json.load(f)


def test_counter_bits_match_fourfold():
    assert len(GOLDEN["counter_bits"]) >= 20
    for e in GOLDEN["counter_bits"]:
        assert f"{int(counter_bits(e['seed'], e['counter'])):016x}" == e["bits"], e


def test_bench_tensors_have_fourfolds_bytes_in_every_dtype():
    dtypes = {e["dtype"] for e in GOLDEN["bench_tensors"]}
    assert {"float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "complex64"} <= dtypes
    for e in GOLDEN["bench_tensors"]:
        assert tensor_hex(bench_tensor([e["numel"]], e["dtype"], e["seed"], e["scale"])) == e["hex"], e["dtype"]


def test_fill_uniform_scales_and_prompts_match():
    u = GOLDEN["fill_uniform_f32"]
    assert tensor_hex(uniform_tensor([u["numel"]], u["seed"], u["low"], u["high"])) == u["hex"]
    for p in GOLDEN["synthetic_prompts"]:
        assert synthetic_prompt(p["n"], p["vocab"], p["seed"]) == p["ids"]


def test_chunked_generation_equals_one_pass():
    from fourfold_torch.counter_rng import bench_values_f32
    assert (bench_values_f32(5, 1000, 2.0, chunk=7) == bench_values_f32(5, 1000, 2.0)).all()


def test_vae_latents_and_scene_match():
    assert len(GOLDEN["vae_latents"]) >= 2
    for e in GOLDEN["vae_latents"]:
        with open(os.path.join(REPO, "tests", "data", "diffusers", e["config"], "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        z = seeded_latents(config, e["frames"], e["height"], e["width"], e["seed"])
        assert tensor_hex(z) == e["hex"], e["config"]
    s = GOLDEN["vae_scene"]
    assert tensor_hex(synthetic_scene(s["frames"], s["height"], s["width"], s["seed"])) == s["hex"]
