#!/usr/bin/env bash
# HISTORY: the STAGEWISE_FFT_* switches existed only in the experiment binaries of 2026-11-23 (session 5);
# the findings became the radix kernel's defaults (docs/PERFORMANCE.md). Kept as the record of what ran.
# Scan tile shapes without the clear pass; FFT radix in-place schedule with virtual threads
# (STAGEWISE_FFT_INPLACE / STAGEWISE_FFT_VB experiment switches). Everything verified first.
# After `source .gpu/enter`: bash bench/h100-fft3.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
N=268435456; M=134217728
SHAPES=("512 4" "256 4" "256 5" "256 6" "256 7" "512 3" "512 5" "512 6" "128 4" "128 6" "1024 3")
FFTS=("4096 16 old" "4096 16 1" "4096 16 2" "4096 16 4" "4096 8 1" "4096 8 2" "4096 8 4" "4096 32 1" "4096 32 2"
      "1024 16 old" "1024 16 1" "1024 16 2" "1024 8 2" "256 8 old" "256 8 1")
fenv() { if [ "$3" = old ]; then echo ""; else echo "STAGEWISE_FFT_INPLACE=1 STAGEWISE_FFT_VB=$3"; fi; }
{
for sh in "${SHAPES[@]}"; do set -- $sh
  for n in 16777216 10000019; do V "scan $1x$2 n=$n" scan --variant decoupled --n $n --workgroup-size $1 --per-thread $2; done
done
for f in "${FFTS[@]}"; do set -- $f
  env $(fenv $@) bash -c "source bench/lib.sh; out=$out S=$S; V 'fft $1 E$2 vb=$3' fft --size $1 --batch 67 --signal noise --kernel radix --elements-per-invocation $2"
  env $(fenv $@) bash -c "source bench/lib.sh; out=$out S=$S; V 'fft $1 E$2 vb=$3 inv' fft --size $1 --batch 5 --signal noise --kernel radix --elements-per-invocation $2 --inverse"
done
B copy-warm copy --n $N --reps 200
for sh in "${SHAPES[@]}"; do set -- $sh; B "scan $1x$2" scan --variant decoupled --n $N --workgroup-size $1 --per-thread $2 --reps 100; done
B "scan 256x6 excl" scan --variant decoupled --n $N --workgroup-size 256 --per-thread 6 --exclusive --reps 100
B "scan 256x6 again" scan --variant decoupled --n $N --workgroup-size 256 --per-thread 6 --reps 100
B "scan 512x4 again" scan --variant decoupled --n $N --reps 100
for f in "${FFTS[@]}"; do set -- $f
  env $(fenv $@) bash -c "source bench/lib.sh; out=$out S=$S WARMUP=${WARMUP:-300}; B 'fft $1 E$2 vb=$3' fft --size $1 --n $M --kernel radix --elements-per-invocation $2 --reps 60"
done
B copy copy --n $N --reps 100
} 2>&1 | tee "$out/summary.txt"
