#!/usr/bin/env bash
# Scan without a clear pass (two status halves, alternate runs) against the clear-pass kernel
# (STAGEWISE_SCAN_OLD=1: an experiment switch in the binary of that run, since removed), tile shapes;
# FFT 4096 ablations (STAGEWISE_FFT_ABLATE, timing only).
# After `source .gpu/enter`: bash bench/h100-scan2.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
N=268435456
SHAPES=("--workgroup-size 512 --per-thread 4" "--workgroup-size 256 --per-thread 4" "--workgroup-size 256 --per-thread 8"
        "--workgroup-size 512 --per-thread 2" "--workgroup-size 1024 --per-thread 2" "--workgroup-size 1024 --per-thread 4"
        "--workgroup-size 512 --per-thread 8" "--workgroup-size 256 --per-thread 6" "--workgroup-size 128 --per-thread 8")
{
[ -x .gpu/test-scan ] && timeout 200 .gpu/test-scan decoupled 2>&1 | grep -E "^test |test result|panicked" | head -20
for cfg in "${SHAPES[@]}"; do
  for n in 16777216 10000019; do V "scan [$cfg] n=$n" scan --variant decoupled --n $n $cfg; done
done
V "scan exclusive" scan --variant decoupled --n 10000019 --exclusive
V "scan counter" scan --variant decoupled --n 10000019 --tile-order counter
V "scan f32" scan --variant decoupled --n 10000019 --dtype f32
B copy-warm copy --n $N --reps 200
for k in 1 2; do
  B "scan new 512x4 ($k)" scan --variant decoupled --n $N --reps 100
  STAGEWISE_SCAN_OLD=1 B "scan OLD 512x4 ($k)" scan --variant decoupled --n $N --reps 100
  B "scan new excl ($k)" scan --variant decoupled --exclusive --n $N --reps 100
  STAGEWISE_SCAN_OLD=1 B "scan OLD excl ($k)" scan --variant decoupled --exclusive --n $N --reps 100
done
for cfg in "${SHAPES[@]}"; do B "scan new [$cfg]" scan --variant decoupled --n $N $cfg --reps 60; done
B "scan new counter" scan --variant decoupled --n $N --tile-order counter --reps 60
for a in none nocompute notranspose loadstore; do
  for s in 4096 1024; do STAGEWISE_FFT_ABLATE=$a B "fft$s radix ablate=$a" fft --size $s --n 134217728 --kernel radix --reps 60; done
done
STAGEWISE_FFT_ABLATE=nocompute B "fft4096 E8 nocompute" fft --size 4096 --n 134217728 --kernel radix --elements-per-invocation 8 --reps 60
STAGEWISE_FFT_ABLATE=loadstore B "fft4096 E8 loadstore" fft --size 4096 --n 134217728 --kernel radix --elements-per-invocation 8 --reps 60
B copy copy --n $N --reps 100
} 2>&1 | tee "$out/summary.txt"
