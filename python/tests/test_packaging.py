"""A plain (not editable) pip install of the package: it carries the compiled extension and the suites' rows,
and runs from outside the checkout."""
import os
import subprocess
import sys

from conftest import REPO
from torch_ops_support import require_extension


def test_a_plain_pip_install_runs_without_the_checkout(tmp_path):
    require_extension()   # the same build prerequisites (build/release/libfourfold.a)
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target),
           os.path.join(REPO, "python")]
    run = subprocess.run(pip, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    probe = ("import torch, fourfold_torch, fourfold_torch.suites as s, fourfold_torch.torch_ops as o; o.require(); "
             "print(s.default_rows_path(), len(s.load_suite('decode-linear'))); print(torch.ops.fourfold.linear(torch.ones(1, 3), torch.ones(2, 3)).sum().item())")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FOURFOLD_SUITE_ROWS")}
    env["PYTHONPATH"] = str(target)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    rows_path, decode_rows, total = out.stdout.split()
    assert rows_path.startswith(str(target)) and os.path.isfile(rows_path) and int(decode_rows) > 0
    assert float(total) == 6.0
