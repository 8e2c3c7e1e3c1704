#!/usr/bin/env bash
# Sorting: the defaults (register kernel; full sort: 8192-key tiles, merge rows of 8 residues = 32 B,
# halo tiles while 16·d ≤ rows) verified on the H100 and timed, a last residue sweep (R = 4, 2, 1 via
# STAGEWISE_SORT_RES), and PyTorch's sorts in the same run: bash bench/h100-sort5.sh OUTDIR
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
for r in 4 2 1; do STAGEWISE_SORT_RES=$r V "full 10000019 R$r" oddeven --variant batcher --n 10000019 --fill random; done
B copy-warm copy --n $M --reps 200
for L in 1024 2048 4096; do J "seg$L" oddeven --variant batcher --segment $L --n $M --reps 100; done
J full24 oddeven --variant batcher --n $M --reps 30
for r in 4 2 1; do STAGEWISE_SORT_RES=$r J "full24-R$r" oddeven --variant batcher --n $M --reps 30; done
J full24-generic oddeven --variant batcher --n $M --reps 20 --kernel generic
J full26 oddeven --variant batcher --n 67108864 --reps 10
B copy28 copy --n $G --reps 50
WARMUP=3 J full28 oddeven --variant batcher --n $G --reps 5
for r in 4 2; do STAGEWISE_SORT_RES=$r WARMUP=3 J "full28-R$r" oddeven --variant batcher --n $G --reps 5; done
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -12 "$out/peers.txt"
