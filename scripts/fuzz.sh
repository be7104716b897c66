#!/usr/bin/env bash
# Builds the libFuzzer target for the safetensors header and config.json parsers (only their sources, with
# clang's -fsanitize=fuzzer,address,undefined) and runs it for FUZZ_SECONDS (default 60) from fuzz/corpus/.
# New inputs go to a scratch copy of the corpus, so the repository's seeds stay as committed. Any crash,
# sanitizer report or unexpected exception fails the script and leaves the input in build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
cxx="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}"
out=build/fuzz
mkdir -p "$out"
sources=(fuzz/safetensors_config_fuzzer.cpp src/model/safetensors_header.cpp src/model/model_config_json.cpp
         src/core/errors.cpp src/core/dtype.cpp src/core/minifloat.cpp)
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -Isrc "${sources[@]}" -lfmt -o "$out/safetensors_config_fuzzer"
rm -rf "$out/corpus"
cp -r fuzz/corpus "$out/corpus"
"$out/safetensors_config_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/corpus" 2>&1 | tail -n 25
echo "fuzz: ${seconds}s without a finding"
