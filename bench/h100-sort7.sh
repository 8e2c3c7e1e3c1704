#!/usr/bin/env bash
# Sorting, last run of 2026-11-23 (after `source .gpu/enter`): bash bench/h100-sort7.sh OUTDIR
# 1. transposition's cost against n (one workgroup: n phases, n(n-1)/2 comparisons; segments of L over
#    2^24 keys: L phases per segment) and global (one dispatch per phase);
# 2. the committed defaults (no experiment switches left) verified and timed again; PyTorch's sorts.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "transposition 8191" oddeven --n 8191 --fill random
V "transposition 12288" oddeven --n 12288 --fill random --dtype f32
V "transposition seg 1000" oddeven --segment 1000 --n 1000000 --fill random
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "seg4096 i32" oddeven --variant batcher --segment 4096 --n $M --dtype i32 --fill random
B copy-warm copy --n $M --reps 200
WARMUP=20 J transposition oddeven --variant transposition --log-n 6..13 --reps 30
WARMUP=20 J transposition-12288 oddeven --variant transposition --n 12288 --reps 30
for L in 64 256 1024 4096; do WARMUP=3 J "transposition-seg$L" oddeven --variant transposition --segment $L --n $M --reps 5; done
WARMUP=2 J global oddeven --variant global --log-n 8..14 --reps 5
for L in 1024 2048 4096; do J "seg$L" oddeven --variant batcher --segment $L --n $M --reps 100; done
J full24 oddeven --variant batcher --n $M --reps 30
B copy28 copy --n $G --reps 50
WARMUP=3 J full28 oddeven --variant batcher --n $G --reps 5
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -12 "$out/peers.txt"
