#!/usr/bin/env python3
"""Writes tests/data/diffusers/: small random-weight Wan VAEs saved by diffusers itself (save_pretrained), with
what diffusers computes on fixed inputs, so that the C++ tests check fourfold's VAE against folders it did not
write, without Python at test time.

Run with a virtual environment outside the build that has the peers installed:
    ~/ffpy/bin/pip install torch==2.15.0 diffusers==0.42.1 safetensors numpy
    ~/ffpy/bin/python scripts/make_diffusers_fixtures.py

Each folder DIR holds what save_pretrained wrote (config.json, diffusion_pytorch_model.safetensors, f32) plus
golden.safetensors (float32):
  video        [1, 3, 5, H, W] in [-1, 1): the encoder's input
  latent_mean  the encoder's posterior mean (latent_dist.mode()) of `video`
  decoded      decode(latent_mean), clamped to [-1, 1] as diffusers does
  z            [1, z_dim, 3, h, w] seeded normal latents, and z_decoded = decode(z)
  tiled_latent_mean, z_tiled_decoded: the same through enable_tiling(32, 32, 16, 16) (tiles of 32 pixels every
               16, blended over the overlap)
The weights are diffusers' initialization with every norm gain and bias drawn away from its default, so that a
loader that dropped one would not pass by accident.
"""
import pathlib

import torch
from diffusers import AutoencoderKLWan
from safetensors.torch import save_file

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "diffusers"

MODELS = {
    # The Wan 2.1 layout (also Qwen-Image's) at small widths: 4 stages, 3 spatial downsamples, 2 temporal.
    "wan2.1_tiny": dict(base_dim=4, z_dim=4, dim_mult=[1, 2, 4, 4], num_res_blocks=1, attn_scales=[],
                        temperal_downsample=[False, True, True], latents_mean=[0.1, -0.2, 0.3, -0.4],
                        latents_std=[1.5, 2.0, 0.5, 1.0]),
    # Wan 2.2 TI2V's layout (residual down/up blocks with their AvgDown3D / DupUp3D shortcuts, patch size 2,
    # 12 channels in and out, 16x spatial compression) at small widths.
    "wan2.2_tiny": dict(base_dim=2, decoder_base_dim=4, z_dim=8, dim_mult=[1, 2, 4, 4], num_res_blocks=1,
                        attn_scales=[], temperal_downsample=[False, True, True], is_residual=True, patch_size=2,
                        in_channels=12, out_channels=12, scale_factor_spatial=16, latents_mean=[0.0] * 8,
                        latents_std=[1.0] * 8),
}
SIZES = {"wan2.1_tiny": (32, 48), "wan2.2_tiny": (32, 48)}


def main():
    for name, cfg in MODELS.items():
        torch.manual_seed(0)
        vae = AutoencoderKLWan(**cfg).eval()
        with torch.no_grad():
            for pname, p in vae.named_parameters():
                if pname.endswith("gamma"):
                    p.copy_(1.0 + 0.2 * torch.randn_like(p))
                elif pname.endswith("bias"):
                    p.copy_(0.05 * torch.randn_like(p))
        out = OUT / name
        vae.save_pretrained(out, safe_serialization=True)
        g = torch.Generator().manual_seed(1)
        h, w = SIZES[name]
        video = torch.rand(1, 3, 5, h, w, generator=g) * 2 - 1
        z = torch.randn(1, cfg["z_dim"], 3, h // cfg["scale_factor_spatial"] if "scale_factor_spatial" in cfg else h // 8,
                        w // cfg.get("scale_factor_spatial", 8), generator=g)
        with torch.no_grad():
            mean = vae.encode(video).latent_dist.mode()
            decoded = vae.decode(mean).sample
            z_decoded = vae.decode(z).sample
            # Tiled, at sizes that make a grid of this small input: 32-pixel tiles every 16 pixels.
            tile = 32
            vae.enable_tiling(tile_sample_min_height=tile, tile_sample_min_width=tile, tile_sample_stride_height=tile // 2,
                              tile_sample_stride_width=tile // 2)
            tiled_mean = vae.encode(video).latent_dist.mode()
            z_tiled_decoded = vae.decode(z).sample
        save_file({"video": video.contiguous(), "latent_mean": mean.contiguous(), "decoded": decoded.contiguous(),
                   "z": z.contiguous(), "z_decoded": z_decoded.contiguous(), "tiled_latent_mean": tiled_mean.contiguous(),
                   "z_tiled_decoded": z_tiled_decoded.contiguous()}, out / "golden.safetensors")
        print(name, "latent", tuple(mean.shape), "decoded", tuple(decoded.shape), "z_decoded", tuple(z_decoded.shape))


if __name__ == "__main__":
    main()
