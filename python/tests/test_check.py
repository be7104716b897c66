"""The driver's records as fourfold compare reads them: same workload, rows paired, producer in the header,
counted skips, refusals by fourfold's rule, the end-to-end workload on a folder written by transformers and the
VAE workload on one written by diffusers."""

import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import REPO, TRANSFORMERS
from fourfold_torch import end_to_end
from fourfold_torch.check import CheckOptions, run_check
from fourfold_torch.records import write

SUITES = ["softmax", "fp8"]


def _driver(tmp_path, name, **kw):
    o = CheckOptions(suites=SUITES, rows_per_suite=3, repeats=2, **kw)
    records, skips = run_check(o, say=lambda m: None)
    path = tmp_path / name
    write(str(path), records)
    return path, records, skips


@pytest.fixture(scope="module")
def fourfold_records(fourfold, tmp_path_factory):
    out = tmp_path_factory.mktemp("fourfold")
    fourfold("check", "--suite", *SUITES, "--rows-per-suite", "3", "--repeats", "2", "--no-end-to-end", "--no-vae", "--out", str(out))
    return out / "candidate.json"


def test_compare_reads_the_driver_records_against_fourfolds(fourfold, fourfold_records, tmp_path):
    path, records, skips = _driver(tmp_path, "torch.json")
    ours = json.loads(fourfold_records.read_text())
    assert records["manifest"]["workload"] == ours["manifest"]["workload"]
    out = fourfold("compare", str(fourfold_records), str(path), check=False)
    assert out.returncode in (0, 1), out.stderr
    assert f"candidate: PyTorch {torch.__version__}" in out.stdout
    assert "dedicated -> pytorch" in out.stdout
    # Every fourfold row either ran here (same key) or is a counted skip with its reason.
    ran = {(r["suite"], r["op"], r["shape"], r["dtype"]) for r in records["op_time"]["rows"]}
    skipped = {(s.suite, s.op, s.shape, s.dtype) for s in skips}
    theirs = {(r["suite"], r["op"], r["shape"], r["dtype"]) for r in ours["op_time"]["rows"]}
    assert theirs == ran | skipped and not ran & skipped
    assert len(ran) >= 4
    for r in records["correctness"]["ops"]:
        assert r["tier"] == "pytorch" and (r["psnr_db"] == "inf" or r["psnr_db"] > 20), r


def test_a_recipe_this_build_lacks_is_a_counted_skip_with_its_reason(tmp_path):
    _, records, skips = _driver(tmp_path, "torch.json")
    block = [s for s in skips if "block_128x128" in s.shape]
    if torch.cuda.is_available():
        pytest.skip("block scales may run on CUDA")
    assert block and all("_scaled_mm refuses block_128x128 on cpu" in s.reason for s in block)
    assert records["manifest"]["skipped"] == [s.__dict__ for s in skips]


def test_compare_refuses_a_different_workload(fourfold, fourfold_records, tmp_path):
    o = CheckOptions(suites=SUITES, rows_per_suite=3, repeats=2, seed=1)
    records, _ = run_check(o, say=lambda m: None)
    write(str(tmp_path / "seed1.json"), records)
    out = fourfold("compare", str(fourfold_records), str(tmp_path / "seed1.json"), check=False)
    assert out.returncode == 2 and "workload.seed" in out.stdout + out.stderr


def test_memory_record_keeps_the_identity_and_levels(tmp_path):
    _, records, _ = _driver(tmp_path, "torch.json")
    m = records["memory"]
    assert m["outside_allocator_bytes"] == ((m["process_peak_bytes"] - m["present_before_bytes"])
                                            - (m["reserved_peak_bytes"] - m["reserved_before_bytes"])
                                            + m["reserved_untouched_bytes"])
    assert 0 < m["allocated_peak_bytes"] <= m["reserved_peak_bytes"]
    assert m["process_peak_bytes"] >= m["present_before_bytes"] > 0


def test_end_to_end_on_a_transformers_folder_compares_with_fourfold(fourfold, tmp_path):
    model = os.path.join(TRANSFORMERS, "llama3")
    args = ["--suite", "softmax", "--rows-per-suite", "1", "--repeats", "1"]
    e2e = ["--model", model, "--e2e-contexts", "32", "--e2e-prefill", "16", "--e2e-repeats", "1"]
    fourfold("check", *args, *e2e, "--no-vae", "--out", str(tmp_path / "ff"))
    cmd = [sys.executable, "-m", "fourfold_torch", "check", *args, *e2e, "--out", str(tmp_path / "pt")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert run.returncode == 0, run.stderr
    records = json.loads((tmp_path / "pt" / "records.json").read_text())
    logits = records["correctness"]["end_to_end"][0]
    assert logits["name"] == "logits, float32 activations" and logits["top1_agreement_percent"] == 100.0 and logits["psnr_db"] > 100
    assert [(r["phase"], r["context_tokens"]) for r in records["throughput"]["rows"]] == [("prefill", 16), ("decode", 32)]
    assert records["manifest"]["workload"]["config_hash"] == end_to_end.config_hash(model)
    out = fourfold("compare", str(tmp_path / "ff" / "candidate.json"), str(tmp_path / "pt" / "records.json"), check=False)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert "== Throughput" in out.stdout and "logits" in out.stdout


def test_vae_workload_on_a_diffusers_folder_compares_with_fourfold(fourfold, tmp_path):
    pytest.importorskip("diffusers")
    vae = os.path.join(REPO, "tests", "data", "diffusers", "wan2.1_tiny")
    args = ["--suite", "softmax", "--rows-per-suite", "1", "--repeats", "1", "--vae-model", vae, "--vae-repeats", "1"]
    fourfold("check", *args, "--no-end-to-end", "--out", str(tmp_path / "ff"))
    cmd = [sys.executable, "-m", "fourfold_torch", "check", *args, "--out", str(tmp_path / "pt")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert run.returncode == 0, run.stderr
    ours = json.loads((tmp_path / "ff" / "candidate.json").read_text())
    records = json.loads((tmp_path / "pt" / "records.json").read_text())
    assert records["manifest"]["workload"]["shapes"] == ours["manifest"]["workload"]["shapes"]
    row, our_row = records["vae_throughput"]["rows"][0], ours["vae_throughput"]["rows"][0]
    key = ("name", "frames", "height", "width", "tiles")
    assert [row[k] for k in key] == [our_row[k] for k in key] == ["tiled decode", 9, 96, 96, 4]
    assert row["pad_calls"] > 0 and len(row["samples_frames_per_s"]) == 1
    figures = {r["name"]: r for r in records["correctness"]["end_to_end"]}
    assert figures["vae_decode"]["psnr_db"] > 100   # float32 against the same model in float64
    assert isinstance(figures["vae_round_trip"]["psnr_db"], float)
    m = records["vae_memory"]
    assert m["process_peak_bytes"] >= m["present_before_bytes"] > 0 and m["allocated_peak_bytes"] > 0
    out = fourfold("compare", str(tmp_path / "ff" / "candidate.json"), str(tmp_path / "pt" / "records.json"), check=False)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert "VAE" in out.stdout and "vae_decode" in out.stdout


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "fourfold_torch", *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))


def test_bad_arguments_get_clear_errors(tmp_path):
    out = _cli("check", "--repeats", "0", "--out", str(tmp_path))
    assert out.returncode == 2 and "--repeats: expected an integer >= 1, found 0" in out.stderr
    out = _cli("check", "--model", str(tmp_path / "none"), "--out", str(tmp_path))
    assert out.returncode == 2 and "expected a Hugging Face folder with config.json" in out.stderr
    if not torch.cuda.is_available():
        out = _cli("check", "--device", "cuda", "--suite", "softmax", "--out", str(tmp_path))
        assert out.returncode != 0 and "--device cuda: expected a CUDA device, found none" in out.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_records_use_the_device_memory_levels(tmp_path):
    _, records, _ = _driver(tmp_path, "cuda.json", device="cuda")
    assert records["manifest"]["device"].startswith("cuda:") and records["memory"]["process_source"] == "device"


@pytest.mark.skipif(not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()), reason="no MPS device")
def test_mps_records(tmp_path):
    _, records, _ = _driver(tmp_path, "mps.json", device="mps")
    assert records["manifest"]["device"] == "mps"
