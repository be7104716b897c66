#!/usr/bin/env bash
# Builds the libFuzzer targets with clang's -fsanitize=fuzzer,address,undefined, each from just the sources it
# needs, and runs each for FUZZ_SECONDS (default 30) from its seed corpus:
#   safetensors_config_fuzzer  the safetensors header and config.json parsers (fuzz/corpus)
#   records_suites_fuzzer      the records readers and the suite reader        (fuzz/corpus_records; the suite
#                              reader names its rows from the op case table, src/check/op_cases/, whose files
#                              call the ops: they come uninstrumented from the release library, so build the
#                              release preset first)
#   tokenizer_fuzzer           tokenizer.json, encode, decode, streaming decode (fuzz/corpus_tokenizer)
#   npy_fuzzer                 the .npy header and data bounds                  (fuzz/corpus_npy)
#   vae_folder_fuzzer          the VAE config.json, an index's weight_map,
#                              a safetensors header                          (fuzz/corpus_vae)
#   png_fuzzer                 a PNG file as the frame reader decodes it     (fuzz/corpus_png; libpng itself is
#                              the system's, not instrumented: crashes show, coverage inside it does not)
# max_len is large enough to nest past every reader's depth limit. New inputs go to a scratch copy of each corpus,
# so the repository's seeds stay as committed. Any crash, sanitizer report or unexpected exception fails the
# script and leaves the input in build/fuzz/. FUZZ_TARGETS limits the run to some targets; FUZZ_RUNS replaces
# the time limit by a number of executions per target (for the long runs in the notes).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
cxx="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}"
out=build/fuzz
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc)
core=(src/core/errors.cpp src/core/dtype.cpp src/core/minifloat.cpp src/core/file_io.cpp)

declare -A sources corpus max_len libs
sources[safetensors_config_fuzzer]="src/model/formats/safetensors_header.cpp src/model/llm/model_config_json.cpp"
corpus[safetensors_config_fuzzer]=fuzz/corpus
max_len[safetensors_config_fuzzer]=8192
sources[records_suites_fuzzer]="src/check/records_reader.cpp src/check/records.cpp src/check/statistics.cpp
                                 src/check/manifest.cpp src/check/suites.cpp"
corpus[records_suites_fuzzer]=fuzz/corpus_records
max_len[records_suites_fuzzer]=16384
libs[records_suites_fuzzer]="build/release/libfourfold.a -lpcre2-8 -lutf8proc -lpng -lpthread"
sources[tokenizer_fuzzer]="$(echo src/model/tokenizer/*.cpp)"
corpus[tokenizer_fuzzer]=fuzz/corpus_tokenizer
max_len[tokenizer_fuzzer]=32768
libs[tokenizer_fuzzer]="-lpcre2-8 -lutf8proc"
sources[npy_fuzzer]="src/model/formats/npy_header.cpp"
corpus[npy_fuzzer]=fuzz/corpus_npy
max_len[npy_fuzzer]=4096
sources[vae_folder_fuzzer]="src/model/vae/wan_vae_config.cpp src/model/formats/folder_files.cpp
                             src/model/formats/safetensors_header.cpp"
corpus[vae_folder_fuzzer]=fuzz/corpus_vae
max_len[vae_folder_fuzzer]=8192
sources[png_fuzzer]="src/model/formats/png_image.cpp"
corpus[png_fuzzer]=fuzz/corpus_png
max_len[png_fuzzer]=65536
libs[png_fuzzer]="-lpng"

release_library=build/release/libfourfold.a
targets="${FUZZ_TARGETS:-safetensors_config_fuzzer records_suites_fuzzer tokenizer_fuzzer vae_folder_fuzzer png_fuzzer npy_fuzzer}"
if [[ " $targets " == *" records_suites_fuzzer "* && ! -f "$release_library" ]]; then
  echo "fuzz.sh: records_suites_fuzzer links $release_library; build it first: cmake --preset release && cmake --build --preset release" >&2
  exit 1
fi
for target in $targets; do
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" "fuzz/$target.cpp" ${sources[$target]} "${core[@]}" -lfmt ${libs[$target]:-} -o "$out/$target"
  rm -rf "$out/corpus_$target"
  cp -r "${corpus[$target]}" "$out/corpus_$target"
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  "$out/$target" "${limit[@]}" -max_len="${max_len[$target]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/$target-" "$out/corpus_$target" 2>&1 | tail -n 12
  echo "fuzz: $target without a finding"
done
