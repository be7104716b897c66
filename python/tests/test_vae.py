"""The VAE side by side: diffusers' decode (python -m fourfold_torch vae-decode) and fourfold's
(fourfold vae decode --npy) of the same folder and latents agree, tiled and untiled."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

TINY = os.path.join(REPO, "tests", "data", "diffusers", "wan2.1_tiny")


def _psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * np.log10(np.max(np.abs(b)) ** 2 / mse) if mse > 0 else np.inf


@pytest.mark.parametrize("tile", [0, 32])
def test_fourfold_and_diffusers_decode_the_same_latents_alike(fourfold, tmp_path, tile):
    pytest.importorskip("diffusers")
    z = np.random.default_rng(0).standard_normal((1, 4, 2, 4, 6)).astype(np.float32)
    np.save(tmp_path / "z.npy", z)
    tiles = ["--tile", str(tile), "--tile-stride", "16"] if tile else []
    out = fourfold("vae", "decode", "--model", TINY, "--latents", str(tmp_path / "z.npy"), "--npy",
                   str(tmp_path / "ff.npy"), *tiles)
    assert "throughput: 5 frames of 48x32" in out.stdout
    run = subprocess.run([sys.executable, "-m", "fourfold_torch", "vae-decode", "--model", TINY, "--latents",
                          str(tmp_path / "z.npy"), "--repeats", "1", "--out", str(tmp_path / "pt.npy"), *tiles],
                         capture_output=True, text=True, timeout=300, cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert run.returncode == 0, run.stderr
    assert "frames/s" in run.stdout and "peak rss" in run.stdout
    ff, pt = np.load(tmp_path / "ff.npy"), np.load(tmp_path / "pt.npy")
    assert ff.shape == pt.shape == (1, 3, 5, 32, 48)
    assert _psnr(ff, pt) > 100
