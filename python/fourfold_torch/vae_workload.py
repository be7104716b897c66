"""fourfold check's VAE workload (src/check/vae_workload.cpp) through diffusers' AutoencoderKLWan on a diffusers
folder: the same seeded latents and synthetic scene (model/vae/synthetic_inputs.cpp, ported), the same tile
settings and the same workload line, so that `fourfold compare` pairs the two sides' VAE records.

Throughput: frames/s of the tiled decode (diffusers' enable_tiling) after one warm-up decode, which also counts
the constant_pad_nd calls that reach ATen. Memory: the three levels over one tiled decode. Correctness: the
decode of small latents against the same model in float64 on the CPU ("vae_decode"), and the encode -> decode
round trip of the synthetic scene against the scene ("vae_round_trip")."""

import json
import math
import os
import statistics
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .counter_rng import counter_normal, counter_uniform
from .device import synchronize
from .error_metrics import compare_to_reference
from .memory import measure_memory
from .records import real


@dataclass
class Options:
    """VaeWorkloadOptions's defaults (src/check/vae_workload.h)."""
    model_dir: str
    seed: int = 0
    latent_frames: int = 3
    latent_height: int = 12
    latent_width: int = 12
    tile: int = 64
    tile_stride: int = 48
    repeats: int = 3
    reference_frames: int = 2
    reference_size: int = 4
    round_trip_frames: int = 5
    round_trip_size: int = 32
    reference: str = "float64"


@dataclass
class Result:
    shape_line: str
    throughput: dict
    memory: dict
    decode: dict
    round_trip: dict


def seeded_latents(config, frames, h, w, seed):
    """model::seeded_latents: N(0, 1) from (seed + 17, index) stored in float32, then, where the config has
    latent statistics, times latents_std plus latents_mean per channel (in double, stored in float32)."""
    z_dim = config["z_dim"]
    n = z_dim * frames * h * w
    z = counter_normal(seed + 17, n).astype(np.float32).astype(np.float64)
    std, mean = config.get("latents_std"), config.get("latents_mean")
    if std:
        per_channel = frames * h * w
        channel = np.arange(n) // per_channel
        z = z * np.asarray(std, dtype=np.float64)[channel] + np.asarray(mean, dtype=np.float64)[channel]
    return torch.from_numpy(z.astype(np.float32).reshape(1, z_dim, frames, h, w))


def synthetic_scene(frames, h, w, seed):
    """model::synthetic_scene: three channels of slow sine waves, moving a little from frame to frame."""
    phase = float(counter_uniform(seed, 0)) * 2 * math.pi
    c = np.arange(3, dtype=np.float64).reshape(3, 1, 1, 1)
    t = np.arange(frames, dtype=np.float64).reshape(1, frames, 1, 1)
    q = (np.arange(h, dtype=np.float64) / h).reshape(1, 1, h, 1)
    u = (np.arange(w, dtype=np.float64) / w).reshape(1, 1, 1, w)
    v = 0.8 * np.sin(2 * math.pi * (u * (1 + c) + q * 0.5 + 0.05 * t) + phase + c)
    return torch.from_numpy(v.astype(np.float32).reshape(1, 3, frames, h, w))


def tile_count(o, scale):
    """model::tile_count on the latent grid."""
    stride = o.tile_stride // scale
    return math.ceil(o.latent_height / stride) * math.ceil(o.latent_width / stride)


def description(o, config, tiles):
    """VaeResult::description: the workload line fourfold writes after "vae: "."""
    latents = f"[1, {config['z_dim']}, {o.latent_frames}, {o.latent_height}, {o.latent_width}]"
    return (f"model {o.model_dir} (z_dim {config['z_dim']}, base_dim {config['base_dim']}); tiled decode of latents "
            f"{latents} in tiles of {o.tile} px every {o.tile_stride} ({tiles} tiles), {o.repeats} repeats; "
            f"reference decode of {o.reference_frames} latent frames of {o.reference_size}x{o.reference_size}; "
            f"round trip of {o.round_trip_frames} frames of {o.round_trip_size}x{o.round_trip_size}")


class PadCounter(TorchDispatchMode):
    """Counts the constant pads under it (diffusers pads before every causal conv). Under inference_mode
    F.pad reaches the mode as aten.pad, whose constant_pad_nd runs below the mode; otherwise as
    constant_pad_nd."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.constant_pad_nd.default:
            self.calls += 1
        elif func is torch.ops.aten.pad.default:
            mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
            self.calls += mode == "constant"
        return func(*args, **kwargs)


def _load(model_dir, dtype, device):
    from diffusers import AutoencoderKLWan
    return AutoencoderKLWan.from_pretrained(model_dir, torch_dtype=dtype).to(device).eval()


def _end_to_end_row(name, psnr_db):
    return {"name": name, "psnr_db": real(psnr_db), "top1_agreement_percent": None, "mean_kl": None}


def run(o, device, compiled, say, kernels="torch"):
    if o.repeats < 1:
        raise ValueError(f"VAE workload: repeats: expected >= 1, found {o.repeats}")
    say("VAE: loading the model")
    vae = _load(o.model_dir, torch.float32, device)
    if kernels == "fourfold":
        from .rewire import optimize
        optimize(vae)
    config = dict(vae.config)
    scale = config.get("scale_factor_spatial", 8)
    if o.tile % scale or o.tile_stride % scale or o.tile_stride > o.tile:
        raise ValueError(f"VAE workload: tiling: expected multiples of {scale} with stride <= tile, found tile "
                         f"{o.tile}, stride {o.tile_stride}")
    tiles = tile_count(o, scale)
    line = description(o, config, tiles)
    # The statistics as the file has them, as fourfold reads them (diffusers fills in Wan's where it has none).
    with open(os.path.join(o.model_dir, "config.json"), encoding="utf-8") as f:
        raw = json.load(f)
    stats = {"z_dim": config["z_dim"], "latents_mean": raw.get("latents_mean"), "latents_std": raw.get("latents_std")}
    latents = seeded_latents(stats, o.latent_frames, o.latent_height, o.latent_width, o.seed).to(device)
    decode_fn = torch.compile(vae.decode, dynamic=False) if compiled else vae.decode

    def decode():
        out = decode_fn(latents).sample
        synchronize(device)
        return out

    with torch.inference_mode():
        vae.enable_tiling(tile_sample_min_height=o.tile, tile_sample_min_width=o.tile,
                          tile_sample_stride_height=o.tile_stride, tile_sample_stride_width=o.tile_stride)
        say("VAE: warm-up decode")
        with PadCounter() as pads:
            shape = decode().shape
        samples = []
        for r in range(o.repeats):
            say(f"VAE: tiled decode, repeat {r + 1}/{o.repeats}")
            start = time.perf_counter()
            frames = decode().shape[2]
            samples.append(frames / (time.perf_counter() - start))
        median = statistics.median(samples)
        row = {"name": "tiled decode", "frames": int(shape[2]), "height": int(shape[3]), "width": int(shape[4]),
               "tiles": tiles, "pad_calls": pads.calls, "median_frames_per_s": real(median),
               "min_frames_per_s": real(min(samples)), "max_frames_per_s": real(max(samples)),
               "samples_frames_per_s": [real(s) for s in samples],
               "megapixels_per_s": real(median * int(shape[3]) * int(shape[4]) / 1e6)}
        say("VAE: memory of the tiled decode")
        memory = measure_memory(decode, device)
        vae.disable_tiling()

        say(f"VAE: {o.reference} CPU reference decode")
        small = seeded_latents(stats, o.reference_frames, o.reference_size, o.reference_size, o.seed + 1)
        oracle = _load(o.model_dir, getattr(torch, o.reference), "cpu")
        reference = oracle.decode(small.to(oracle.dtype)).sample.to(torch.float64)
        del oracle
        say("VAE: correctness")
        got = vae.decode(small.to(device)).sample.cpu()
        scene = synthetic_scene(o.round_trip_frames, o.round_trip_size, o.round_trip_size, o.seed)
        back = vae.decode(vae.encode(scene.to(device)).latent_dist.mode()).sample.cpu()
    decode_row = _end_to_end_row("vae_decode", compare_to_reference(got, reference).psnr_db)
    round_trip_row = _end_to_end_row("vae_round_trip", compare_to_reference(back, scene.to(torch.float64)).psnr_db)
    return Result(line, {"warmup_runs": 1, "rows": [row]}, memory, decode_row, round_trip_row)
