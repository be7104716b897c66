"""Writes tests/data/bench_inputs/golden.json: counter-RNG bits, benchmark tensors' bytes in every dtype,
fill_uniform scales, synthetic prompts and the VAE workload's seeded latents and scene. The C++ test bench_inputs_golden_test and the pytest
test_counter_rng both check their producer against it, so the two make bit-identical inputs.

    python -m fourfold_torch.golden tests/data/bench_inputs/golden.json
"""

import json
import os
import sys

import torch

from .counter_rng import counter_bits, synthetic_prompt
from .op_calls import bench_tensor, uniform_tensor
from .vae_workload import seeded_latents, synthetic_scene

SEEDS = [0, 1, 7, 1000, 2**63 + 5]
COUNTERS = [0, 1, 2, 3, 1000, 2**40 + 17]
TENSORS = [("float32", 3, 1.0), ("bfloat16", 3, 1.0), ("float16", 4, 8.0), ("float8_e4m3fn", 5, 64.0),
           ("float8_e5m2", 5, 64.0), ("complex64", 6, 0.5), ("bfloat16", 2**33 + 1, 0.03125)]
LENGTH = 37
# Latents of the diffusers fixture with latent statistics (tests/data/diffusers/<name>/config.json), and a scene.
LATENTS = [("wan2.1_tiny", 2, 3, 5, 0), ("wan2.1_tiny", 1, 4, 4, 9)]
SCENE = (2, 4, 6, 3)


def tensor_hex(t):
    t = t.contiguous().cpu()
    return t.view(torch.uint8).numpy().tobytes().hex() if t.dtype != torch.complex64 else \
        torch.view_as_real(t).contiguous().view(torch.uint8).numpy().tobytes().hex()


def golden():
    bits = [{"seed": s, "counter": c, "bits": f"{int(counter_bits(s, c)):016x}"} for s in SEEDS for c in COUNTERS]
    tensors = [{"dtype": d, "seed": s, "scale": sc, "numel": LENGTH, "hex": tensor_hex(bench_tensor([LENGTH], d, s, sc))}
               for d, s, sc in TENSORS]
    uniform = {"seed": 9, "numel": LENGTH, "low": 0.5 / 64, "high": 1.5 / 64,
               "hex": tensor_hex(uniform_tensor([LENGTH], 9, 0.5 / 64, 1.5 / 64))}
    prompts = [{"n": 16, "vocab": 151936, "seed": 0, "ids": synthetic_prompt(16, 151936, 0)},
               {"n": 8, "vocab": 32000, "seed": 1, "ids": synthetic_prompt(8, 32000, 1)}]
    data = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "diffusers")
    latents = []
    for name, frames, h, w, seed in LATENTS:
        with open(os.path.join(data, name, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        latents.append({"config": name, "frames": frames, "height": h, "width": w, "seed": seed,
                        "hex": tensor_hex(seeded_latents(config, frames, h, w, seed))})
    frames, h, w, seed = SCENE
    scene = {"frames": frames, "height": h, "width": w, "seed": seed,
             "hex": tensor_hex(synthetic_scene(frames, h, w, seed))}
    return {"counter_bits": bits, "bench_tensors": tensors, "fill_uniform_f32": uniform, "synthetic_prompts": prompts,
            "vae_latents": latents, "vae_scene": scene}


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(golden(), f, indent=1)
        f.write("\n")
