#!/usr/bin/env bash
# Session 7 (2026-11-23), first run: keys per invocation 8/16/32, merge-pass shapes (temporary
# switches STAGEWISE_SORT_HEADR / _TAILR / _HALOF in that binary only), per-pass medians at 2^28,
# and an occupancy probe (the local-sort pass against its tile count).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "full 2^24 e8" oddeven --variant batcher --n $M --fill random --keys-per-invocation 8
V "full 2^24 e32" oddeven --variant batcher --n $M --fill random --keys-per-invocation 32
V "full 3000017 e8" oddeven --variant batcher --n 3000017 --fill random --keys-per-invocation 8 --dtype f32
V "seg4096 e8" oddeven --variant batcher --segment 4096 --n $M --fill random --keys-per-invocation 8
V "seg4096 e32" oddeven --variant batcher --segment 4096 --n $M --fill random --keys-per-invocation 32
STAGEWISE_SORT_HALOF=32 V "full 2^24 halo32" oddeven --variant batcher --n $M --fill random
STAGEWISE_SORT_HEADR=16 V "full 2^24 headr16" oddeven --variant batcher --n $M --fill random
B copy-warm copy --n $M --reps 200
for e in 16 8 32; do J full24-e$e oddeven --variant batcher --n $M --reps 30 --keys-per-invocation $e; done
for e in 16 8 32; do J seg4096-e$e oddeven --variant batcher --segment 4096 --n $M --reps 100 --keys-per-invocation $e; done
B copy28 copy --n $G --reps 50
for e in 16 8 32; do WARMUP=3 J full28-e$e oddeven --variant batcher --n $G --reps 5 --keys-per-invocation $e; done
for f in 8 32; do STAGEWISE_SORT_HALOF=$f WARMUP=3 J full28-halo$f oddeven --variant batcher --n $G --reps 5; done
for r in 4 16; do STAGEWISE_SORT_HEADR=$r WARMUP=3 J full28-headr$r oddeven --variant batcher --n $G --reps 5; done
for r in 4 16; do STAGEWISE_SORT_TAILR=$r WARMUP=3 J full28-tailr$r oddeven --variant batcher --n $G --reps 5; done
WARMUP=5 J full26 oddeven --variant batcher --n 67108864 --reps 10
for w in 1 2 3 4 6 8 12 16; do WARMUP=20 J occ$w oddeven --variant batcher --n $((8192*132*w)) --reps 30; done
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -12 "$out/peers.txt"
