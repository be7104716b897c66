"""Shared fixtures: the repo's paths and the fourfold binary the records are checked with."""

import os
import shutil
import subprocess

import sys

import pytest

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))   # the checkout's driver, not an installed copy
TRANSFORMERS = os.path.join(REPO, "tests", "data", "transformers")


def _cli():
    path = os.environ.get("FOURFOLD_CLI") or os.path.join(REPO, "build", "release", "fourfold")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else shutil.which("fourfold")


@pytest.fixture(scope="session")
def fourfold():
    """Runs the fourfold command; tests that need it are skipped without a build (CI sets FOURFOLD_CLI)."""
    path = _cli()
    if path is None:
        pytest.skip("no fourfold binary (set FOURFOLD_CLI or build build/release)")

    def run(*args, check=True):
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=600)
        if check and out.returncode != 0:
            raise AssertionError(f"fourfold {' '.join(args)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
        return out
    return run
