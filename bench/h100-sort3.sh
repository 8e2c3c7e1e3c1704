#!/usr/bin/env bash
# Register kernel sweep on the H100 (after `source .gpu/enter`): bash bench/h100-sort3.sh OUTDIR
# tiles per workgroup S (the next tile's loads in flight) and the halo-pass depth (STAGEWISE_SORT_HALO,
# an experiment switch: a halo tile runs stages while DIV·d ≤ its rows; 8 was the plan's rule).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "full 2^24 default" oddeven --variant batcher --n $M --fill random
STAGEWISE_SORT_HALO=16 V "full 2^24 S4 halo16" oddeven --variant batcher --n $M --fill random --tiles-per-workgroup 4
STAGEWISE_SORT_HALO=16 V "full 10000019 f32 desc S2 halo16" oddeven --variant batcher --n 10000019 --dtype f32 --descending --fill random --tiles-per-workgroup 2
V "seg4096 S4" oddeven --variant batcher --segment 4096 --n $M --dtype i32 --fill random --tiles-per-workgroup 4
V "seg1000 S3" oddeven --variant batcher --segment 1000 --n 9000000 --dtype f32 --fill random --tiles-per-workgroup 3
B copy-warm copy --n $M --reps 200
for L in 1024 2048 4096; do for s in 1 2 4; do J "seg$L-S$s" oddeven --variant batcher --segment $L --n $M --reps 60 --tiles-per-workgroup $s; done; done
for h in 8 16; do for s in 1 2 4; do STAGEWISE_SORT_HALO=$h J "full24-h$h-S$s" oddeven --variant batcher --n $M --reps 30 --tiles-per-workgroup $s; done; done
B copy28 copy --n $G --reps 50
for h in 8 16; do for s in 1 4; do STAGEWISE_SORT_HALO=$h WARMUP=5 J "full28-h$h-S$s" oddeven --variant batcher --n $G --reps 5 --tiles-per-workgroup $s; done; done
} 2>&1 | tee "$out/summary.txt"
