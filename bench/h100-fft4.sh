#!/usr/bin/env bash
# HISTORY: the STAGEWISE_FFT_* switches existed only in the experiment binaries of 2026-11-23 (session 5);
# the findings became the radix kernel's defaults (docs/PERFORMANCE.md). Kept as the record of what ran.
# FFT radix at 2^12 (and 2^10, 2^8): register-saving experiments (STAGEWISE_FFT_LAZY: twiddles computed
# where used; STAGEWISE_FFT_SQ: one table twiddle per round, squared for the next stages;
# STAGEWISE_FFT_INPLACE: the in-place schedule; _PRE: each round's twiddle read at the start; _SINCOS:
# computed with cos/sin instead). Everything verified first. 
# After `source .gpu/enter`: bash bench/h100-fft4.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=134217728
# CASES="N:E:FLAGS,..." overrides the list.
DEFAULT="4096:16:-,4096:16:L,4096:16:I,4096:16:IS,4096:16:ISL,4096:16:IL,4096:32:L,4096:32:ISL,4096:8:ISL,1024:16:-,1024:16:ISL,1024:16:L,256:8:-,256:8:ISL"
IFS=, read -ra CASES <<< "${CASES:-$DEFAULT}"; CASES=("${CASES[@]//:/ }")
envs() { local e=""; case "$1" in *I*) e="$e STAGEWISE_FFT_INPLACE=1";; esac; case "$1" in *S*) e="$e STAGEWISE_FFT_SQ=1";; esac
  case "$1" in *L*) e="$e STAGEWISE_FFT_LAZY=1";; esac; case "$1" in *P*) e="$e STAGEWISE_FFT_PRE=1";; esac
  case "$1" in *C*) e="$e STAGEWISE_FFT_SINCOS=1";; esac; case "$1" in *A*) e="$e STAGEWISE_FFT_ADDR=1";; esac
  case "$1" in *R*) e="$e STAGEWISE_FFT_R16=1";; esac; case "$1" in *O*) e="$e STAGEWISE_FFT_SEQLOOP=1";; esac; case "$1" in *B*) e="$e STAGEWISE_FFT_LATEBAR=1";; esac; case "$1" in *Q*) e="$e STAGEWISE_FFT_SEQ=early";; esac; case "$1" in *Z*) e="$e STAGEWISE_FFT_SEQ=late";; esac; echo "X=1 $e"; }
{
for c in "${CASES[@]}"; do set -- $c; G=${4:+--ffts-per-workgroup $4}
  env $(envs $3) bash -c "source bench/lib.sh; out=$out S=$S; V 'fft $1 E$2 $3' fft --size $1 --batch 67 --signal noise --kernel radix --elements-per-invocation $2 $G; V 'fft $1 E$2 $3 inv' fft --size $1 --batch 5 --signal noise --kernel radix --elements-per-invocation $2 $G --inverse"
done
B copy-warm copy --n 268435456 --reps 200
for k in 1 2; do for c in "${CASES[@]}"; do set -- $c; G=${4:+--ffts-per-workgroup $4}
  env $(envs $3) bash -c "source bench/lib.sh; out=$out S=$S WARMUP=${WARMUP:-300}; B 'fft $1 E$2 $3 G${4:-d} ($k)' fft --size $1 --n $M --kernel radix --elements-per-invocation $2 $G --reps 60"
done; done
} 2>&1 | tee "$out/summary.txt"
