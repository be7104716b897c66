#!/usr/bin/env bash
# Builds the release and asan (AddressSanitizer + UBSan) presets and runs every test on both, then a short fuzz
# run of the safetensors and config.json parsers (scripts/fuzz.sh; FUZZ_SECONDS sets its length).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
for preset in release asan; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
done
ctest --preset release
ctest --preset asan
bash scripts/fuzz.sh
