#!/usr/bin/env bash
# Builds the release and asan (AddressSanitizer + UBSan) presets and runs every test on both. ctest's summary
# of the asan run is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
for preset in release asan; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
done
ctest --preset release
ctest --preset asan
