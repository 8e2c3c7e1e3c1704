#!/usr/bin/env bash
# Session 9, confirmation (H100): the committed defaults (tiles per workgroup per pass) against
# --tiles-per-workgroup 1 (session 8's kernels) at 2^20 … 2^28 and segments of 1024 / 2048 / 4096,
# every configuration verified first; copy and PyTorch in the same run.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216
{
V "full 2^24 u32" oddeven --variant batcher --n $M --fill random
V "full 2^24 i32 desc" oddeven --variant batcher --n $M --fill random --dtype i32 --descending
V "full 10000019 f32" oddeven --variant batcher --n 10000019 --fill random --dtype f32
V "full 3000017 u32 desc" oddeven --variant batcher --n 3000017 --fill random --descending
V "full 2^25" oddeven --variant batcher --n $((M*2)) --fill random
V "full 2^20+7" oddeven --variant batcher --n 1048583 --fill random
V "merge-split 1000003" oddeven --variant merge-split --n 1000003 --fill random
V "seg1024 i32" oddeven --variant batcher --segment 1024 --n $M --fill random --dtype i32
V "seg2048" oddeven --variant batcher --segment 2048 --n $M --fill random
V "seg4096 i32" oddeven --variant batcher --segment 4096 --n $M --fill random --dtype i32
V "seg1000 f32 desc" oddeven --variant batcher --segment 1000 --n 1000000 --fill random --dtype f32 --descending
B copy-warm copy --n $M --reps 200
B copy28 copy --n $((M*16)) --reps 50
for t in "" "--tiles-per-workgroup 1"; do
  tag=${t:+-s1}
  J full20$tag oddeven --variant batcher --n $((M/16)) --reps 100 $t
  J full22$tag oddeven --variant batcher --n $((M/4)) --reps 50 $t
  J full24$tag oddeven --variant batcher --n $M --reps 30 $t
  WARMUP=20 J full25$tag oddeven --variant batcher --n $((M*2)) --reps 20 $t
  WARMUP=10 J full26$tag oddeven --variant batcher --n $((M*4)) --reps 10 $t
  WARMUP=5 J full27$tag oddeven --variant batcher --n $((M*8)) --reps 5 $t
  WARMUP=3 J full28$tag oddeven --variant batcher --n $((M*16)) --reps 5 $t
  for L in 1024 2048 4096; do J seg$L$tag oddeven --variant batcher --segment $L --n $M --reps 100 $t; done
done
} 2>&1 | tee "$out/summary.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
