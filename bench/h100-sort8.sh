#!/usr/bin/env bash
# 16-byte global loads and stores in the register kernel (STAGEWISE_SORT_VEC=1, the default) against
# scalar ones (=0), verified on the H100 first: bash bench/h100-sort8.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
for L in 1024 4096; do V "seg$L i32" oddeven --variant batcher --segment $L --n $M --dtype i32 --fill random; done
V "seg1000 f32 desc" oddeven --variant batcher --segment 1000 --n 10000000 --dtype f32 --descending --fill random
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "full 10000019 f32 desc" oddeven --variant batcher --n 10000019 --dtype f32 --descending --fill random
V "full 3000017 i32" oddeven --variant batcher --n 3000017 --dtype i32 --fill random
B copy-warm copy --n $M --reps 200
for v in 1 0; do
  for L in 1024 2048 4096; do STAGEWISE_SORT_VEC=$v J "seg$L-vec$v" oddeven --variant batcher --segment $L --n $M --reps 100; done
  STAGEWISE_SORT_VEC=$v J "full24-vec$v" oddeven --variant batcher --n $M --reps 30
  STAGEWISE_SORT_VEC=$v WARMUP=20 J "full26-vec$v" oddeven --variant batcher --n 67108864 --reps 10
done
B copy28 copy --n $G --reps 50
for v in 1 0; do STAGEWISE_SORT_VEC=$v WARMUP=3 J "full28-vec$v" oddeven --variant batcher --n $G --reps 5; done
} 2>&1 | tee "$out/summary.txt"
timeout 100 python3 bench/peers.py --reps 50 --only "sort int32" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -5 "$out/peers.txt"
