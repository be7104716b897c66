"""python -m fourfold_torch check --device cpu|cuda|mps [--compile] --out DIR

Writes DIR/records.json: the four records of this PyTorch build on fourfold check's workload, which
`fourfold compare` reads against fourfold's own records (DIR/candidate.json of `fourfold check`) or against
another PyTorch build's."""

import argparse
import os
import sys

import torch

from . import end_to_end, vae_workload
from .check import DEFAULT_SUITES, CheckOptions, run_check
from .records import write


def _parser():
    p = argparse.ArgumentParser(prog="python -m fourfold_torch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="write the four records of this PyTorch build")
    c.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default cpu)")
    c.add_argument("--compile", action="store_true", help="run every op (and the model) through torch.compile")
    c.add_argument("--kernels", default="torch", choices=["torch", "fourfold"],
                   help="torch: PyTorch's own ops; fourfold: torch.ops.fourfold where it has the op, and the models "
                        "through fourfold_torch.optimize (default torch)")
    c.add_argument("--out", default="fourfold-torch-check", help="directory for records.json")
    c.add_argument("--suite", nargs="+", default=DEFAULT_SUITES, help="op suites (data/suites/*.json); default: all ten")
    c.add_argument("--repeats", type=int, default=5, help="timed samples per row (fourfold check's A B pairs)")
    c.add_argument("--rows-per-suite", type=int, default=6, help="rows taken from each suite (0: all)")
    c.add_argument("--reference-cap", type=float, default=3e6, help="skip rows whose float64 reference work exceeds this")
    c.add_argument("--seed", type=int, default=0, help="seed of every input")
    c.add_argument("--hot", action="store_true", help="op time on one input set (default: rotate over >= 128 MiB)")
    c.add_argument("--threads", type=int, help="torch.set_num_threads (default: PyTorch's)")
    c.add_argument("--model", help="end-to-end workloads on this Hugging Face model folder (through transformers)")
    c.add_argument("--e2e-contexts", type=int, nargs="+", default=[512, 2048], help="contexts of the decode figures")
    c.add_argument("--e2e-prefill", type=int, default=64, help="prompt length of the prefill figure")
    c.add_argument("--e2e-repeats", type=int, default=3, help="samples per throughput figure")
    c.add_argument("--dtype", default="auto", choices=["auto", "bf16", "f32", "f16"],
                   help="the model's activations (auto: the checkpoint's dtype, as fourfold check's --dtype auto)")
    c.add_argument("--e2e-reference", default="float64", choices=["float64", "float32"],
                   help="dtype of the CPU run the logits are judged against (float32 for a model too big)")
    c.add_argument("--vae-model", help="the VAE workload on this diffusers AutoencoderKLWan folder (as fourfold check's "
                   "--vae-model; without it, pass --no-vae to fourfold check)")
    c.add_argument("--vae-repeats", type=int, default=3, help="timed tiled decodes of the VAE figure")
    v = sub.add_parser("vae-decode", help="diffusers' Wan VAE decode of .npy latents, timed (a peer of fourfold vae decode)")
    v.add_argument("--model", required=True, help="a diffusers AutoencoderKLWan folder")
    v.add_argument("--latents", required=True, help="latents [1, z_dim, T, h, w] as .npy (float32)")
    v.add_argument("--tile", type=int, default=0, help="enable_tiling with tiles of this many pixels (0: untiled)")
    v.add_argument("--tile-stride", type=int, default=192, help="a tile every this many pixels")
    v.add_argument("--repeats", type=int, default=3, help="timed decodes")
    v.add_argument("--threads", type=int, help="torch.set_num_threads")
    v.add_argument("--kernels", default="torch", choices=["torch", "fourfold"],
                   help="fourfold: the VAE through fourfold_torch.optimize (default torch)")
    v.add_argument("--out", help="write the decoded video as .npy")
    return p


def _positive(parser, name, value, minimum=1):
    if value < minimum:
        parser.error(f"argument {name}: expected an integer >= {minimum}, found {value}")


def main(argv=None):
    parser = _parser()
    a = parser.parse_args(argv)
    _positive(parser, "--repeats", a.repeats)
    if a.command == "vae-decode":
        from . import vae
        return vae.main(a)
    _positive(parser, "--rows-per-suite", a.rows_per_suite, 0)
    _positive(parser, "--seed", a.seed, 0)
    for c in a.e2e_contexts:
        _positive(parser, "--e2e-contexts", c)
    if a.threads is not None:
        _positive(parser, "--threads", a.threads)
        torch.set_num_threads(a.threads)
    if a.model and not os.path.isfile(os.path.join(a.model, "config.json")):
        parser.error(f"argument --model: expected a Hugging Face folder with config.json, found '{a.model}'")
    if a.vae_model and not os.path.isfile(os.path.join(a.vae_model, "config.json")):
        parser.error(f"argument --vae-model: expected a diffusers folder with config.json, found '{a.vae_model}'")
    _positive(parser, "--vae-repeats", a.vae_repeats)
    e2e = None
    if a.model:
        e2e = end_to_end.Options(a.model, a.seed, a.e2e_prefill, a.e2e_contexts, 8, a.e2e_repeats, 16, 32,
                                 activation=a.dtype, reference=a.e2e_reference)
    if a.kernels == "fourfold":
        from . import torch_ops
        try:
            torch_ops.require()
        except ImportError as e:
            parser.error(f"argument --kernels: {e}")
    o = CheckOptions(device=a.device, compile=a.compile, kernels=a.kernels, suites=a.suite, repeats=a.repeats,
                     rows_per_suite=a.rows_per_suite, reference_cap=a.reference_cap, seed=a.seed,
                     rotate_bytes=0 if a.hot else 128 << 20, e2e=e2e,
                     vae=vae_workload.Options(a.vae_model, a.seed, repeats=a.vae_repeats) if a.vae_model else None)
    records, skips = run_check(o)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "records.json")
    write(path, records)
    ran = len(records["op_time"]["rows"])
    print(f"{records['manifest']['producer']}: {ran} rows ran, {len(skips)} skipped")
    for s in skips:
        print(f"  skipped {s.suite} {s.op} {s.shape} {s.dtype}: {s.reason}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
