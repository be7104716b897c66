#!/usr/bin/env bash
# The README's main job, `fourfold check`, once per ISA level this host runs (FOURFOLD_ISA forced to each level
# `fourfold info` lists): every level's dedicated kernels against its generic tier, so that a level CI's host does
# not pick by itself is still judged. Fails, naming the levels, when a run exits non-zero or reports a REGRESSION.
# The workloads are the default ones and the correctness records the same as without the options below: --hot
# (op time on one input set, not rotated over 128 MiB: a third of a run) and fewer repeats only change the op-time
# and throughput figures, which never fail a check. Usage: scripts/check-every-isa.sh [path/to/fourfold]

set -euo pipefail
cd "$(dirname "$0")/.."
fourfold=${1:-build/release/fourfold}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
levels=$("$fourfold" info | sed -n 's/^isa levels: //p')
if [[ -z $levels ]]; then
  echo "check-every-isa: '$fourfold info' printed no 'isa levels:' line" >&2
  exit 1
fi
failed=()
for isa in $levels; do
  start=$SECONDS
  rc=0
  FOURFOLD_ISA=$isa "$fourfold" check --hot --repeats 2 --e2e-repeats 1 --vae-repeats 1 --out "$out/$isa" \
    >"$out/$isa.log" 2>&1 || rc=$?
  regressions=$(grep -c 'REGRESSION' "$out/$isa.log" || true)
  echo "check at isa $isa: exit $rc, $regressions REGRESSION line(s), $((SECONDS - start)) s"
  if ((rc != 0 || regressions > 0)); then
    grep 'REGRESSION' "$out/$isa.log" >&2 || tail -n 20 "$out/$isa.log" >&2
    failed+=("$isa")
  fi
done
if ((${#failed[@]} > 0)); then
  echo "check-every-isa: fourfold check failed at isa level(s): ${failed[*]}" >&2
  exit 1
fi
