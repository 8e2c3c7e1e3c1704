#!/usr/bin/env bash
# Session 9, first run (H100): tiles per workgroup with prefetch, A/B of the candidate defaults
# (temporary switches, this binary only: STAGEWISE_SORT_TPW = S for passes that store through
# workgroup memory, _TPW_OTHER = S for the others, _TPW_BLOCKED: workgroup g runs tiles
# g·S … g·S + S − 1, else g, g + G, …). Per-pass medians kept as JSON for a per-pass choice.
# (Those switches were removed once the rule was chosen: this script needs the binary of that run.)
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
export STAGEWISE_SORT_TPW=8 STAGEWISE_SORT_TPW_OTHER=4 STAGEWISE_SORT_TPW_BLOCKED=1
V "full 2^24 8/4b" oddeven --variant batcher --n $M --fill random
V "full 10000019 f32 8/4b" oddeven --variant batcher --n 10000019 --fill random --dtype f32
V "seg1024 8/4b" oddeven --variant batcher --segment 1024 --n $M --fill random --dtype i32
V "seg1000 f32 desc 8/4b" oddeven --variant batcher --segment 1000 --n 1000000 --fill random --dtype f32 --descending
unset STAGEWISE_SORT_TPW STAGEWISE_SORT_TPW_OTHER STAGEWISE_SORT_TPW_BLOCKED
B copy-warm copy --n $M --reps 200
B copy28 copy --n $G --reps 50
for cfg in "1 1" "8 4 blocked" "8 4" "4 4 blocked" "8 8 blocked" "4 4" "8 1 blocked"; do
  set -- $cfg; tag="$1-$2${3:+-$3}"
  export STAGEWISE_SORT_TPW=$1 STAGEWISE_SORT_TPW_OTHER=$2
  if [ -n "${3:-}" ]; then export STAGEWISE_SORT_TPW_BLOCKED=1; else unset STAGEWISE_SORT_TPW_BLOCKED; fi
  WARMUP=3 J full28-$tag oddeven --variant batcher --n $G --reps 5
  J full24-$tag oddeven --variant batcher --n $M --reps 30
  J seg4096-$tag oddeven --variant batcher --segment 4096 --n $M --reps 100
  J seg1024-$tag oddeven --variant batcher --segment 1024 --n $M --reps 100
done
} 2>&1 | tee "$out/summary.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
