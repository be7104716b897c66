"""diffusers' Wan VAE decode as a peer of `fourfold vae decode`: the same folder, the same latents (.npy), the
same tile settings (diffusers' enable_tiling), timed per repeat; prints frames/s, megapixels/s and the
process's peak RSS (getrusage), one line each, in the words fourfold prints them.

    python -m fourfold_torch vae-decode --model DIR --latents z.npy [--tile 256 --tile-stride 192] [--repeats 3]
"""

import resource
import statistics
import time

import numpy as np
import torch


def decode(model_dir, latents_path, tile, stride, repeats, dtype="float32", threads=None, kernels="torch"):
    from diffusers import AutoencoderKLWan
    if threads:
        torch.set_num_threads(threads)
    vae = AutoencoderKLWan.from_pretrained(model_dir, torch_dtype=getattr(torch, dtype)).eval()
    if kernels == "fourfold":
        from .rewire import optimize
        optimize(vae)
    if tile > 0:
        vae.enable_tiling(tile_sample_min_height=tile, tile_sample_min_width=tile, tile_sample_stride_height=stride,
                          tile_sample_stride_width=stride)
    z = torch.from_numpy(np.load(latents_path)).to(getattr(torch, dtype))
    samples, out = [], None
    with torch.inference_mode():
        for _ in range(repeats):
            start = time.perf_counter()
            out = vae.decode(z).sample
            samples.append(out.shape[2] / (time.perf_counter() - start))
    frames, h, w = out.shape[2], out.shape[3], out.shape[4]
    median = statistics.median(samples)
    return {"frames": frames, "height": h, "width": w, "samples_frames_per_s": samples, "median_frames_per_s": median,
            "megapixels_per_s": median * h * w / 1e6,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "output": out}


def main(args):
    r = decode(args.model, args.latents, args.tile, args.tile_stride, args.repeats, threads=args.threads,
               kernels=args.kernels)
    on = " on torch.ops.fourfold (fourfold_torch.optimize)" if args.kernels == "fourfold" else ""
    print(f"PyTorch {torch.__version__} diffusers decode{on}: {r['frames']} frames of {r['width']}x{r['height']}")
    print("throughput: " + ", ".join(f"{s:.4f}" for s in r["samples_frames_per_s"]) +
          f" frames/s (median {r['median_frames_per_s']:.4f}, {r['megapixels_per_s']:.4f} megapixels/s)")
    print(f"memory (process): peak rss {r['peak_rss_bytes'] / 2**20:.1f} MiB (getrusage, since process start)")
    if args.out:
        np.save(args.out, r["output"].float().numpy())
    return 0
