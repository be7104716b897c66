#!/usr/bin/env bash
# Makes the Python environment of the PyTorch driver (python/fourfold_torch) and its tests: a virtual
# environment with PyTorch and transformers from PyPI and the driver installed from the repo.
#   scripts/python-env.sh [DIR]     DIR defaults to build/pyenv; TORCH_VERSION picks the PyTorch build
# The versions are pinned so that a record says which build it judged; a second environment with another
# TORCH_VERSION is how an upgrade is judged (docs/pytorch_driver.md).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/pyenv}"
torch_version="${TORCH_VERSION:-2.15.0}"
if [ ! -x "$dir/bin/python" ]; then
  python3 -m venv "$dir"
fi
# No wheel cache: PyPI's torch and its CUDA libraries are about 5 GB installed; a cached copy would double it.
"$dir/bin/python" -m pip install -q --no-cache-dir --upgrade pip
"$dir/bin/python" -m pip install -q --no-cache-dir "torch==${torch_version}" "transformers==5.23.0" "diffusers==0.42.1" safetensors numpy \
  pytest setuptools
# Editable: the driver runs from this checkout and reads its suite rows (fourfold_torch/data/suite_rows.json). The build compiles the extension
# (torch.ops.fourfold) against this environment's torch, in place, and links build/release/libfourfold.a:
# build the release preset first. No build isolation: the extension must match the torch it loads into.
if [ ! -f build/release/libfourfold.a ]; then
  echo "python-env.sh: build/release/libfourfold.a is missing; run cmake --preset release && cmake --build --preset release" >&2
  exit 1
fi
"$dir/bin/python" -m pip install -q --no-deps --no-build-isolation -e ./python
"$dir/bin/python" -c "import torch, fourfold_torch.torch_ops as o; o.require(); print('python-env:', '$dir', 'torch', torch.__version__, 'with torch.ops.fourfold')"
