"""The driver with --kernels fourfold: the same suites and end-to-end workload on torch.ops.fourfold, recorded as
such, and fourfold compare reading it against the --kernels torch run (the per-op and end-to-end change)."""
import json
import os
import subprocess
import sys

from conftest import REPO, TRANSFORMERS
from fourfold_torch import op_cases
from fourfold_torch.suites import load_suite
from torch_ops_support import psnr_db, require_extension


def _check(tmp_path, kernels, *extra):
    out = tmp_path / kernels
    cmd = [sys.executable, "-m", "fourfold_torch", "check", "--suite", "softmax", "decoder-fused", "fp8",
           "--rows-per-suite", "2", "--repeats", "1", "--kernels", kernels, "--out", str(out), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert run.returncode == 0, run.stderr
    return out / "records.json", json.loads((out / "records.json").read_text())


def test_fourfold_kernels_are_recorded_and_compare_against_torch(fourfold, tmp_path):
    require_extension()
    e2e = ["--model", os.path.join(TRANSFORMERS, "qwen3_moe"), "--e2e-contexts", "24", "--e2e-prefill", "8",
           "--e2e-repeats", "1"]
    torch_path, _ = _check(tmp_path, "torch", *e2e)
    path, records = _check(tmp_path, "fourfold", *e2e)
    manifest = records["manifest"]
    assert manifest["torch"]["kernels"] == "fourfold" and "fourfold kernels" in manifest["producer"]
    variants = {r["op"]: r["variant"] for r in records["op_time"]["rows"]}
    assert variants["softmax"] == "fourfold.softmax" and variants["rms_norm"].startswith("fourfold.")
    logits = records["correctness"]["end_to_end"][0]
    assert logits["psnr_db"] > 100 and logits["top1_agreement_percent"] == 100.0
    out = fourfold("compare", str(torch_path), str(path), check=False)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert "== Throughput" in out.stdout and "fourfold kernels" in out.stdout


def test_weight_only_fp8_rows_run_on_scaled_linear_against_a_float64_oracle():
    """PyTorch has no op for them (a counted skip with --kernels torch); fourfold runs them."""
    require_extension()
    cases = load_suite("decode-linear")
    fp8 = [c for c in cases if (c.p.get("weight_dtype") or "").startswith("float8")][:3]
    assert fp8
    for c in fp8:
        fn, args, variant = op_cases.build_call(c, 0, kernels="fourfold")
        assert variant == "fourfold.scaled_linear"
        ofn, oargs, _ = op_cases.build_call(c, 0, oracle=True)
        assert psnr_db(fn(*args), ofn(*oargs)) > (120 if c.dtype == "float32" else 40)
