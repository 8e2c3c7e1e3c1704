#!/usr/bin/env bash
# The issue cases at the defaults (after `source .gpu/enter`): bash bench/h100-radix2.sh OUTDIR
# Everything verified on the H100 first; then timed with long warm-ups (the GPU idles at low clocks
# between the CPU-bound verifications: 5 warm-up runs of 1 ms are not enough).
# scan decoupled shapes (per-pass medians: the clear pass and the look-back scan), the FFT defaults
# (radix kernel in natural order) beside the fast kernel, sort segments, PyTorch peers.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
{
[ -x .gpu/test-scan ] && timeout 120 .gpu/test-scan decoupled 2>&1 | grep -E "^test |test result|panicked" | head -20
for cfg in "" "--workgroup-size 256 --per-thread 4" "--workgroup-size 256 --per-thread 8"; do
  for n in 16777216 10000019; do V "scan [$cfg] n=$n" scan --variant decoupled --n $n $cfg; done
done
for n in 16777216 10000019; do V "scan counter n=$n" scan --variant decoupled --n $n --tile-order counter; done
for s in 256 1024 4096; do V "fft$s auto" fft --size $s --batch 67 --signal noise; done
V "fft4096 radix E32" fft --size 4096 --batch 67 --signal noise --kernel radix --elements-per-invocation 32
B copy-warm copy --n 268435456 --reps 200
B "scan default" scan --variant decoupled --n 268435456 --reps 100
B "scan default again" scan --variant decoupled --n 268435456 --reps 100
B "scan exclusive" scan --variant decoupled --exclusive --n 268435456 --reps 100
B "scan counter" scan --variant decoupled --n 268435456 --tile-order counter --reps 100
B "scan 256x4" scan --variant decoupled --n 268435456 --workgroup-size 256 --per-thread 4 --reps 100
B "scan 256x8" scan --variant decoupled --n 268435456 --workgroup-size 256 --per-thread 8 --reps 50
for s in 256 1024 4096; do B "fft$s auto (radix)" fft --size $s --n 134217728 --reps 60; done
B "fft4096 radix E32" fft --size 4096 --n 134217728 --kernel radix --elements-per-invocation 32 --reps 60
B "fft4096 radix E8" fft --size 4096 --n 134217728 --kernel radix --elements-per-invocation 8 --reps 60
B "fft1024 radix E32 G1" fft --size 1024 --n 134217728 --kernel radix --elements-per-invocation 32 --ffts-per-workgroup 1 --reps 60
B "fft1024 fast E8 G1 (old default)" fft --size 1024 --n 134217728 --kernel fast --elements-per-invocation 8 --reps 60
B "fft4096 fast (old default)" fft --size 4096 --n 134217728 --kernel fast --reps 60
B "fft1024 auto again" fft --size 1024 --n 134217728 --reps 60
for L in 1024 2048 4096; do B "oddeven batcher --segment $L" oddeven --variant batcher --segment $L --n 16777216 --reps 60; done
B copy copy --n 268435456 --reps 100
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 100 --only "fft,cumsum,copy,sort rows" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -8 "$out/peers.txt"
