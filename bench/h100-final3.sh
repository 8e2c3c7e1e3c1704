#!/usr/bin/env bash
# The issue cases at the current defaults (after `source .gpu/enter`): bash bench/h100-final3.sh OUTDIR
# Scan (decoupled without a clear pass, 256x6) and FFT (radix: in-place rounds, constant-twiddle
# rounds with one twiddle per slot, S FFTs per thread group in a loop from 2048), every default
# verified on the H100 first, then timed with 300 warm-ups; PyTorch peers in the same run.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
N=268435456; M=134217728
{
for n in 16777216 10000019; do V "scan default n=$n" scan --variant decoupled --n $n; done
V "scan default exclusive" scan --variant decoupled --n 10000019 --exclusive
V "scan default f32" scan --variant decoupled --n 10000019 --dtype f32
for s in 256 1024 2048 4096; do
  V "fft$s auto B=67" fft --size $s --batch 67 --signal noise
  V "fft$s auto B=8200" fft --size $s --batch 8200 --signal noise
  V "fft$s auto B=8200 inverse" fft --size $s --batch 8200 --signal noise --inverse
done
V "fft4096 E8 B=8200" fft --size 4096 --batch 8200 --signal noise --elements-per-invocation 8
B copy-warm copy --n $N --reps 200
B "scan decoupled (default)" scan --variant decoupled --n $N --reps 100
B "scan decoupled exclusive" scan --variant decoupled --exclusive --n $N --reps 100
B "scan decoupled again" scan --variant decoupled --n $N --reps 100
for s in 256 1024 2048 4096; do B "fft$s auto" fft --size $s --n $M --reps 60; done
B "fft4096 E8" fft --size 4096 --n $M --elements-per-invocation 8 --reps 60
B "fft4096 S4" fft --size 4096 --n $M --sequential-ffts 4 --reps 60
B "fft4096 S1" fft --size 4096 --n $M --sequential-ffts 1 --reps 60
B "fft2048 S1" fft --size 2048 --n $M --sequential-ffts 1 --reps 60
B "fft1024 S4" fft --size 1024 --n $M --sequential-ffts 4 --reps 60
B "fft4096 auto again" fft --size 4096 --n $M --reps 60
WARMUP=20 B "scan every variant" scan --n $N --reps 10
B copy copy --n $N --reps 100
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 100 --only "fft,cumsum,copy" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -8 "$out/peers.txt"
