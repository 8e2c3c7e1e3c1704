#!/usr/bin/env bash
# Session 8 (2026-11-23), first run: halo tiles that start on the first stage's pair blocks (halo d
# rows instead of 2d); STAGEWISE_SORT_HALOMUL=2 (a temporary switch, this binary only) gives the
# old halos for the A/B. Full sort at 2^24 … 2^28 against PyTorch in the same run, per-pass
# medians, and an occupancy probe at E = 32 (the local-sort pass against its tile count).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "full 2^24 i32 desc" oddeven --variant batcher --n $M --fill random --dtype i32 --descending
V "full 10000019 f32" oddeven --variant batcher --n 10000019 --fill random --dtype f32
V "full 3000017 u32 desc" oddeven --variant batcher --n 3000017 --fill random --descending
V "full 2^25" oddeven --variant batcher --n 33554432 --fill random
V "full 2^22 generic f32" oddeven --variant batcher --n 4194301 --fill random --dtype f32 --kernel generic
V "seg4096" oddeven --variant batcher --segment 4096 --n $M --fill random --dtype i32
STAGEWISE_SORT_HALOMUL=2 V "full 2^24 halo2" oddeven --variant batcher --n $M --fill random
B copy-warm copy --n $M --reps 200
J full24 oddeven --variant batcher --n $M --reps 30
STAGEWISE_SORT_HALOMUL=2 J full24-halo2 oddeven --variant batcher --n $M --reps 30
WARMUP=10 J full25 oddeven --variant batcher --n 33554432 --reps 20
WARMUP=5 J full26 oddeven --variant batcher --n 67108864 --reps 10
WARMUP=3 J full27 oddeven --variant batcher --n 134217728 --reps 5
B copy28 copy --n $G --reps 50
WARMUP=3 J full28 oddeven --variant batcher --n $G --reps 5
STAGEWISE_SORT_HALOMUL=2 WARMUP=3 J full28-halo2 oddeven --variant batcher --n $G --reps 5
for w in 1 2 3 4; do WARMUP=20 J occ$w oddeven --variant batcher --n $((8192*132*w)) --reps 30; done
} 2>&1 | tee "$out/summary.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
