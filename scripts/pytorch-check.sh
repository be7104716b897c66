#!/usr/bin/env bash
# One command from a clean clone to a PyTorch build's records: makes the driver's environment when it is
# missing (scripts/python-env.sh: PyTorch TORCH_VERSION, default 2.15.0, from PyPI) and runs
#   python -m fourfold_torch check ARGS        (default: --device cpu --out fourfold-torch-check)
# PYENV names the environment (default build/pyenv, or build/pyenv-$TORCH_VERSION when TORCH_VERSION is set).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_dir="${PYENV:-$root/build/pyenv${TORCH_VERSION:+-$TORCH_VERSION}}"
[ -x "$env_dir/bin/python" ] && "$env_dir/bin/python" -c "import fourfold_torch" 2>/dev/null ||
  bash "$root/scripts/python-env.sh" "$env_dir"
exec "$env_dir/bin/python" -m fourfold_torch check "$@"
