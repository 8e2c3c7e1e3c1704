#!/usr/bin/env bash
# Confirmation of the committed FFT defaults (radix, S = 4 from 2048 for large batches) with cuFFT in
# the same run. After `source .gpu/enter`: bash bench/h100-final4.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=134217728
{
for s in 2048 4096; do V "fft$s auto B=8200" fft --size $s --batch 8200 --signal noise; V "fft$s auto B=8200 inv" fft --size $s --batch 8200 --signal noise --inverse; done
B copy-warm copy --n 268435456 --reps 200
for k in 1 2; do for s in 256 1024 2048 4096; do B "fft$s auto ($k)" fft --size $s --n $M --reps 60; done; done
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 100 --only "fft" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -5 "$out/peers.txt"
