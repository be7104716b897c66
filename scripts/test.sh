#!/usr/bin/env bash
# Builds the release and asan (AddressSanitizer + UBSan) presets and runs every test on both, `fourfold check` once
# per ISA level the host runs (scripts/check-every-isa.sh, about 2 minutes for 5 levels on 2 cores), then a short run of
# each fuzz target (scripts/fuzz.sh; FUZZ_SECONDS sets each one's length), then the PyTorch driver's and
# extension's pytest.
# FOURFOLD_TEST_PRUNE=1 (.ci/run sets it: a clean clone keeps nothing) removes the asan tree once its tests have
# run, so the disk holds the release tree with the sanitizer tree or with the Python environment (about 6 GB:
# PyPI's torch brings its CUDA libraries), never all three; a stop of CI ran out of disk with both builds there.

set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build() {
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j "$(nproc)"
}
build release
ctest --preset release
bash scripts/check-every-isa.sh build/release/fourfold
build asan
ctest --preset asan
if [ "${FOURFOLD_TEST_PRUNE:-0}" = 1 ]; then
  du -sh build/asan
  rm -rf build/asan
fi
bash scripts/fuzz.sh
# The PyTorch driver and extension (python/fourfold_torch, torch.ops.fourfold linked against the release library):
# PyTorch from PyPI in its own environment, its tests against the release binary (fourfold compare must read
# what the driver writes); the extension's tests may not skip here.
bash scripts/python-env.sh build/pyenv
FOURFOLD_TORCH_EXTENSION=required FOURFOLD_CLI="$PWD/build/release/fourfold" build/pyenv/bin/python -m pytest -q python/tests
[ "${FOURFOLD_TEST_PRUNE:-0}" = 1 ] && du -sh build/* || true
