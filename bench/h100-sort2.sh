#!/usr/bin/env bash
# Sorting with the register kernel (src/algo/oddeven/regs.rs) against the generic tile kernel, on the
# H100 (after `source .gpu/enter`): bash bench/h100-sort2.sh OUTDIR. Every configuration is verified
# against the CPU sort on the H100 first; then timed with 300 warm-ups; PyTorch's sorts in the same run.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216
{
for L in 1024 2048 4096; do V "seg$L i32" oddeven --variant batcher --segment $L --n $M --dtype i32 --fill random; done
V "seg1000 f32 desc" oddeven --variant batcher --segment 1000 --n 10000000 --dtype f32 --descending --fill random
V "seg3000 u32" oddeven --variant batcher --segment 3000 --n 9000000 --fill random
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "full 10000019 f32 desc" oddeven --variant batcher --n 10000019 --dtype f32 --descending --fill random
V "full 2^26 i32" oddeven --variant batcher --n 67108864 --dtype i32 --fill random
V "merge-split 1000003" oddeven --variant merge-split --n 1000003 --fill random
B copy-warm copy --n $M --reps 200
for L in 1024 2048 4096; do
  J "seg$L-registers" oddeven --variant batcher --segment $L --n $M --reps 60
  J "seg$L-generic" oddeven --variant batcher --segment $L --n $M --reps 60 --kernel generic
done
for L in 1024 2048; do for t in 2048 4096; do [ $t -le $L ] && continue; J "seg$L-tile$t" oddeven --variant batcher --segment $L --n $M --reps 60 --tile $t; done; done
V "full 2^24 tile8192" oddeven --variant batcher --n $M --fill random --tile 8192
V "seg1024 tile4096" oddeven --variant batcher --segment 1024 --n $M --fill random --tile 4096
J full24-registers oddeven --variant batcher --n $M --reps 30
J full24-tile8192 oddeven --variant batcher --n $M --reps 30 --tile 8192
J full24-generic oddeven --variant batcher --n $M --reps 20 --kernel generic
WARMUP=20 J full26-registers oddeven --variant batcher --n 67108864 --reps 10
WARMUP=5 J full28-registers oddeven --variant batcher --n 268435456 --reps 5
WARMUP=5 J full28-tile8192 oddeven --variant batcher --n 268435456 --reps 5 --tile 8192
for L in 1024 2048 4096; do J "seg$L-registers-again" oddeven --variant batcher --segment $L --n $M --reps 60; done
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -12 "$out/peers.txt"
