#!/usr/bin/env bash
# Sorting at the committed defaults (register kernel; halo tiles inside one merge block skip the
# per-comparator block test), verified on the H100 first, then timed; PyTorch's sorts in the same run.
# Usage (after `source .gpu/enter`): bash bench/h100-sort6.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
for L in 1024 2048 4096; do V "seg$L i32" oddeven --variant batcher --segment $L --n $M --dtype i32 --fill random; done
V "seg1000 f32 desc" oddeven --variant batcher --segment 1000 --n 10000000 --dtype f32 --descending --fill random
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "full 2^24 i32 desc" oddeven --variant batcher --n $M --dtype i32 --descending --fill random
V "full 10000019 f32" oddeven --variant batcher --n 10000019 --dtype f32 --fill random
V "full 3000017 u32" oddeven --variant batcher --n 3000017 --fill random
B copy-warm copy --n $M --reps 200
for L in 1024 2048 4096; do J "seg$L" oddeven --variant batcher --segment $L --n $M --reps 100; done
J full24 oddeven --variant batcher --n $M --reps 30
J full24-generic oddeven --variant batcher --n $M --reps 20 --kernel generic
WARMUP=20 J full26 oddeven --variant batcher --n 67108864 --reps 10
B copy28 copy --n $G --reps 50
WARMUP=3 J full28 oddeven --variant batcher --n $G --reps 5
WARMUP=3 J full27 oddeven --variant batcher --n 134217728 --reps 5
WARMUP=3 J full25 oddeven --variant batcher --n 33554432 --reps 10
for L in 1024 2048 4096; do J "seg$L-again" oddeven --variant batcher --segment $L --n $M --reps 100; done
J full24-again oddeven --variant batcher --n $M --reps 30
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -12 "$out/peers.txt"
