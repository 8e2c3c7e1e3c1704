#!/usr/bin/env bash
# Session of 2026-11-23 (afternoon), after `source .gpu/enter`. Usage: bash bench/h100-radix.sh OUTDIR
# 1. scan decoupled: every shape verified on the H100, then timed at 2^28 with per-pass medians
#    (first run of 2026-11-23 afternoon: a version without the clear pass, since reverted: slower);
#    the scan tests' decoupled cases first if .gpu/test-scan exists.
# 2. FFT --kernel radix (rounds of log2 E stages, transposes through workgroup memory): verified
#    against rustfft on the H100 for each (size, E, G), then timed over 2^27 complex values beside
#    the fast kernel's default; cuFFT and cumsum through PyTorch in the same run.
# Its recorded run (docs/PERFORMANCE.md) timed with 5 warm-up runs; bench/lib.sh now uses 300.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
{
if [ -x .gpu/test-scan ]; then
  timeout 120 .gpu/test-scan decoupled 2>&1 | grep -E "^test |test result" | head -20
fi
for cfg in "" "--workgroup-size 256 --per-thread 8" "--workgroup-size 256 --per-thread 4" "--workgroup-size 1024 --per-thread 4" "--workgroup-size 512 --per-thread 2"; do
  for o in dispatch counter; do
    for n in 16777216 10000019; do V "scan [$cfg $o] n=$n" scan --variant decoupled --n $n $cfg --tile-order $o; done
    B "scan decoupled [$cfg $o]" scan --variant decoupled --n 268435456 $cfg --tile-order $o --reps 50
  done
done
B "scan decoupled exclusive" scan --variant decoupled --exclusive --n 268435456 --reps 50
for s in 256 1024 4096; do
  B "fft$s fast default" fft --size $s --n 134217728 --reps 40
  B "fft$s fast raw" fft --size $s --n 134217728 --order raw --reps 40
done
R() { # size, then ExG pairs
  local s=$1; shift; local eg
  for eg in "$@"; do local e=${eg%x*} g=${eg#*x}
    V "fft$s radix E$e G$g" fft --size $s --batch 67 --signal noise --kernel radix --elements-per-invocation $e --ffts-per-workgroup $g
    B "fft$s radix E$e G$g" fft --size $s --n 134217728 --kernel radix --elements-per-invocation $e --ffts-per-workgroup $g --reps 40
  done
}
R 1024 32x4 32x2 32x1 16x2 16x4 16x1 8x1 8x2 64x1
R 4096 16x1 32x1 64x1 8x1 16x2
R 256 16x8 16x4 8x4 32x4 32x8
V "fft1024 radix inverse" fft --size 1024 --batch 33 --signal noise --kernel radix --inverse
B copy copy --n 268435456 --reps 50
} 2>&1 | tee "$out/summary.txt"
timeout 200 python3 bench/peers.py --reps 50 --only "fft,cumsum,copy" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -8 "$out/peers.txt"
