#!/usr/bin/env bash
# Batched forward complex-f32 FFTs (issue #6) on the H100, after `source .gpu/enter`:
#   bash bench/h100-fft.sh OUTDIR
# Sizes 2^8, 2^10, 2^12 over 2^27 complex values (1 GiB in + 1 GiB out) each: the default, the
# teaching kernel, raw order, --no-shuffle, and an (E, G) sweep of the fast kernel; the copy kernel
# moving the same 2 GiB (copy of 2^28 u32) first. One line per case in OUTDIR/summary.txt:
#   name  median ms  GB/s  fraction of that copy (xcopy)  [bench row's own copy fraction]
# A few 64-FFT `run`s per size check the fast kernel against rustfft on this GPU and record what
# `auto` picks (kernel, E, G, shuffle_below). Raw JSON rows in OUTDIR/rows.jsonl. About 40 cases.
set -uo pipefail
out=${1:-/tmp/fft-out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
sum="$out/summary.txt"; rows="$out/rows.jsonl"; : > "$sum"; : > "$rows"; : > "$out/errors.txt"
N=${FFT_N:-134217728} # 2^27 complex values (FFT_N overrides, for a quick check)
REPS=${REPS:-20}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$sum"

copy_gbps=0
line() { # name, then one bench JSON on stdin
  python3 -c '
import json, sys
name, copy = sys.argv[1], float(sys.argv[2])
rows = json.load(sys.stdin)["rows"]
if not rows:
    print("%-28s SKIPPED (refused: see errors.txt)" % name); sys.exit()
r = rows[0]
frac = r["gbps"] / copy if copy > 0 else r["fraction_of_copy"]
print("%-28s %9.4f ms %8.1f GB/s x%.3f  [row x%.3f]" % (name, r["median_ms"], r["gbps"], frac, r["fraction_of_copy"]))
print(json.dumps(dict(r, case=name)), file=open(sys.argv[3], "a"))
' "$1" "$copy_gbps" "$rows"
}
B() { # name, bench args...
  local name=$1; shift
  local j
  if j=$(timeout 30 $S bench "$@" --reps "$REPS" --json 2>>"$out/errors.txt"); then
    echo "$j" | line "$name" | tee -a "$sum"
  else
    echo "$name FAILED: $(tail -1 "$out/errors.txt")" | tee -a "$sum"
  fi
}

# The copy roofline for the same bytes: 2^28 u32 = 1 GiB read + 1 GiB written.
cj=$(timeout 30 $S bench copy --n $((2 * N)) --reps 30 --json 2>>"$out/errors.txt")
copy_gbps=$(echo "$cj" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["gbps"])' 2>/dev/null || echo 0)
echo "$cj" | line "copy 2^28 u32 (2 GiB moved)" | tee -a "$sum"

for s in 256 1024 4096; do
  # What auto picks, and a correctness check on this GPU (64 FFTs against rustfft).
  for k in auto teaching; do
    timeout 30 $S run fft --size $s --batch 64 --signal noise --kernel $k --json 2>>"$out/errors.txt" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("check %-5s %-8s kernel=%s E=%s G=%s shuffle_below=%s verified=%s err=%.2e wg_bytes=%s" % (sys.argv[1], sys.argv[2], r["kernel"], r["elements_per_invocation"], r["ffts_per_workgroup"], r["shuffle_below"], r["verified"], r["max_rel_error"], r["workgroup_bytes"]))
' $s $k | tee -a "$sum"
  done
  B "fft$s default"            fft --size $s --n $N
  B "fft$s teaching"           fft --size $s --n $N --kernel teaching
  B "fft$s raw"                fft --size $s --n $N --kernel fast --order raw
  B "fft$s no-shuffle"         fft --size $s --n $N --kernel fast --no-shuffle
done

# (E, G) sweep of the fast kernel, natural order (default --natural-store direct; bench/h100-fft2.sh
# compares it with staged). Staged natural order needs 8·G·N bytes (+ padding) of
# workgroup memory: with 48 KiB, G ≤ 16 at 256, G ≤ 4 at 1024, G = 1 at 4096.
sweep() { local s=$1; shift; for eg in "$@"; do local e=${eg%x*} g=${eg#*x}
  B "fft$s E$e G$g" fft --size $s --n $N --kernel fast --elements-per-invocation $e --ffts-per-workgroup $g
done; }
sweep 256  4x2 4x4 4x8 8x4 8x8 8x16 16x8 16x16 32x16 64x16
sweep 1024 8x1 8x2 8x4 16x1 16x2 16x4 32x2 32x4 64x4
sweep 4096 8x1 16x1 32x1 64x1
# Raw order with the best-guess shapes (no staging: workgroup memory only for exchanges).
B "fft256 raw E8 G16"  fft --size 256  --n $N --kernel fast --order raw --elements-per-invocation 8 --ffts-per-workgroup 16
B "fft1024 raw E32 G4" fft --size 1024 --n $N --kernel fast --order raw --elements-per-invocation 32 --ffts-per-workgroup 4
B "fft4096 raw E32 G1" fft --size 4096 --n $N --kernel fast --order raw --elements-per-invocation 32 --ffts-per-workgroup 1
echo "done: $(grep -c . "$sum") lines in $sum"
