#!/usr/bin/env bash
# Builds the release and asan (AddressSanitizer + UBSan) presets and runs every test on both, then a short run of
# each fuzz target (scripts/fuzz.sh; FUZZ_SECONDS sets each one's length).

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
