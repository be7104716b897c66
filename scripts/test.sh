#!/usr/bin/env bash
# Builds the release and asan (AddressSanitizer + UBSan) presets and runs every test on both, `fourfold check` once
# per ISA level the host runs (scripts/check-every-isa.sh, about 2 minutes for 5 levels on 2 cores), then a short run of
# each fuzz target (scripts/fuzz.sh; FUZZ_SECONDS sets each one's length), then the PyTorch driver's and
# extension's pytest.

set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
for preset in release asan; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
done
ctest --preset release
bash scripts/check-every-isa.sh build/release/fourfold
ctest --preset asan
bash scripts/fuzz.sh
# The PyTorch driver and extension (python/fourfold_torch, torch.ops.fourfold linked against the release library):
# PyTorch from PyPI in its own environment, its tests against the release binary (fourfold compare must read
# what the driver writes); the extension's tests may not skip here.
bash scripts/python-env.sh build/pyenv
FOURFOLD_TORCH_EXTENSION=required FOURFOLD_CLI="$PWD/build/release/fourfold" build/pyenv/bin/python -m pytest -q python/tests
