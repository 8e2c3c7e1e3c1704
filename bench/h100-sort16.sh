#!/usr/bin/env bash
# Session 8, third run: tiles per workgroup with prefetch, per pass kind (temporary switches, this
# binary only): STAGEWISE_SORT_TPW = S for passes that store through workgroup memory (the next
# tile's loads fly during the stores), _TPW_OTHER = S for the others, _TPW_BLOCKED: workgroup g
# runs tiles g·S … g·S + S − 1 (default: g, g + G, …).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
export STAGEWISE_SORT_TPW=8 STAGEWISE_SORT_TPW_OTHER=4
V "full 2^24 8/4" oddeven --variant batcher --n $M --fill random
V "full 10000019 f32 8/4" oddeven --variant batcher --n 10000019 --fill random --dtype f32
V "seg1024 8/4" oddeven --variant batcher --segment 1024 --n $M --fill random --dtype i32
V "seg4096 8/4" oddeven --variant batcher --segment 4096 --n $M --fill random
V "seg1000 f32 desc 8/4" oddeven --variant batcher --segment 1000 --n 1000000 --fill random --dtype f32 --descending
unset STAGEWISE_SORT_TPW STAGEWISE_SORT_TPW_OTHER
B copy-warm copy --n $M --reps 200
B copy28 copy --n $G --reps 50
for cfg in "8 4 blocked" "8 4" "8 8" "4 4" "16 4" "8 2"; do
  set -- $cfg; tag="$1-$2${3:+-$3}"
  export STAGEWISE_SORT_TPW=$1 STAGEWISE_SORT_TPW_OTHER=$2
  if [ -n "${3:-}" ]; then export STAGEWISE_SORT_TPW_BLOCKED=1; else unset STAGEWISE_SORT_TPW_BLOCKED; fi
  WARMUP=3 J full28-$tag oddeven --variant batcher --n $G --reps 5
  J full24-$tag oddeven --variant batcher --n $M --reps 30
  J seg4096-$tag oddeven --variant batcher --segment 4096 --n $M --reps 100
  J seg1024-$tag oddeven --variant batcher --segment 1024 --n $M --reps 100
done
unset STAGEWISE_SORT_TPW STAGEWISE_SORT_TPW_OTHER STAGEWISE_SORT_TPW_BLOCKED
export STAGEWISE_SORT_TPW=8 STAGEWISE_SORT_TPW_OTHER=4
WARMUP=10 J full25-8-4 oddeven --variant batcher --n 33554432 --reps 20
WARMUP=5 J full26-8-4 oddeven --variant batcher --n 67108864 --reps 10
WARMUP=3 J full27-8-4 oddeven --variant batcher --n 134217728 --reps 5
J seg2048-8-4 oddeven --variant batcher --segment 2048 --n $M --reps 100
} 2>&1 | tee "$out/summary.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
