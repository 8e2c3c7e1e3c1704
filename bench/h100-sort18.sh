#!/usr/bin/env bash
# Session 9, second run (H100, same binary as sort17): where tiles per workgroup stop paying for
# the passes that store straight from registers (heads, strided tails) as the array shrinks
# (2^25 … 2^27), and S for segments of 1024 / 2048 / 4096 (spill passes).
# (Those switches were removed once the rule was chosen: this script needs the binary of that run.)
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216
{
B copy-warm copy --n $M --reps 200
for cfg in "1 1" "8 1 blocked" "8 4 blocked" "8 2 blocked"; do
  set -- $cfg; tag="$1-$2${3:+-$3}"
  export STAGEWISE_SORT_TPW=$1 STAGEWISE_SORT_TPW_OTHER=$2
  if [ -n "${3:-}" ]; then export STAGEWISE_SORT_TPW_BLOCKED=1; else unset STAGEWISE_SORT_TPW_BLOCKED; fi
  WARMUP=20 J full25-$tag oddeven --variant batcher --n $((M*2)) --reps 20
  WARMUP=10 J full26-$tag oddeven --variant batcher --n $((M*4)) --reps 10
  WARMUP=5 J full27-$tag oddeven --variant batcher --n $((M*8)) --reps 5
done
for cfg in "1 1" "2 2" "2 2 blocked" "4 4" "4 4 blocked" "8 8"; do
  set -- $cfg; tag="$1-$2${3:+-$3}"
  export STAGEWISE_SORT_TPW=$1 STAGEWISE_SORT_TPW_OTHER=$2
  if [ -n "${3:-}" ]; then export STAGEWISE_SORT_TPW_BLOCKED=1; else unset STAGEWISE_SORT_TPW_BLOCKED; fi
  for L in 1024 2048 4096; do J seg$L-$tag oddeven --variant batcher --segment $L --n $M --reps 100; done
done
} 2>&1 | tee "$out/summary.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
