#!/usr/bin/env bash
# The decode / prefill table of docs/decode.md: each model folder given, at contexts 512 and 2048 and 1 and 2
# threads, bf16 activations, through `fourfold run` (its own read probe and floor per run); the vCPU placement
# (thread hop) and the FMA peak probed before each thread count. Take it with nothing else running.
# Usage: scripts/measure_decode_table.sh BUILD/fourfold DIR [DIR ...]
#   e.g. fourfold make-model --preset qwen3-30b-a3b --layers 6 --out /tmp/q30
#        fourfold quantize --model /tmp/q30 --to fp8-block --out /tmp/q30f8
#        fourfold quantize --model /tmp/q30 --to fp8-block --lm-head --out /tmp/q30f8h
set -euo pipefail
bin=$1
shift
for t in 1 2; do
  "$bin" bench ops --probes-only --threads "$t" 2>&1 | grep -E "read |FMA|dot peak|amx|hop" | sed "s/^/threads=$t probe: /"
  for ctx in 512 2048; do
    for model in "$@"; do
      out=$("$bin" run --model "$model" --threads "$t" --prompt-tokens "$ctx" --gen 33 --ignore-eos --dtype bf16 2>&1)
      echo "threads=$t context=$ctx model=$model"
      echo "$out" | grep -E "^load:|^prefill|^decode|^bandwidth floor" | sed 's/^/  /'
    done
  done
done
