#!/usr/bin/env bash
# Natural-order store of the fast FFT kernel on the H100 (issue #6), after `source .gpu/enter`:
#   bash bench/h100-fft2.sh OUTDIR          (about 90 s; REPS=20 by default, FFT_N overrides n)
# Compares `--natural-store direct` (each thread stores its runs of E/2 consecutive outputs as
# 16-byte pairs straight from registers: no staging memory, no extra barrier) with `staged` (the
# old path: through padded workgroup memory) at sizes 2^8, 2^10, 2^12 over 2^27 complex values
# (1 GiB in + 1 GiB out), a few (E, G) each, plus raw order as the no-permutation reference and the
# copy of the same 2 GiB first. The defaults are the first `direct` shape of each size (E8 G4,
# E8 G1, E16 G1); `staged` at the same shape is the old default path. One line per case in OUTDIR/summary.txt:
#   name  median ms  GB/s  fraction of that copy (xcopy)  [bench row's own copy fraction]
# cuFFT (torch.fft) measured 0.7287 / 0.7312 / 0.7389 ms: ≥ 0.9x cuFFT means ≤ 0.809 / 0.812 / 0.821.
# A 16-FFT `run` per size and store (default shape) checks the kernel against rustfft on this GPU first.
set -uo pipefail
out=${1:-/tmp/fft2-out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
sum="$out/summary.txt"; rows="$out/rows.jsonl"; : > "$sum"; : > "$rows"; : > "$out/errors.txt"
N=${FFT_N:-134217728} # 2^27 complex values
REPS=${REPS:-20}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$sum"

copy_gbps=0
line() { # name, then one bench JSON on stdin
  python3 -c '
import json, sys
name, copy = sys.argv[1], float(sys.argv[2])
rows = json.load(sys.stdin)["rows"]
if not rows:
    print("%-30s SKIPPED (refused: see errors.txt)" % name); sys.exit()
r = rows[0]
frac = r["gbps"] / copy if copy > 0 else r["fraction_of_copy"]
print("%-30s %9.4f ms %8.1f GB/s x%.3f  [row x%.3f]" % (name, r["median_ms"], r["gbps"], frac, r["fraction_of_copy"]))
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

cj=$(timeout 30 $S bench copy --n $((2 * N)) --reps 30 --json 2>>"$out/errors.txt")
copy_gbps=$(echo "$cj" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["gbps"])' 2>/dev/null || echo 0)
echo "$cj" | line "copy 2^28 u32 (2 GiB moved)" | tee -a "$sum"

for s in 256 1024 4096; do
  for st in direct staged; do
    timeout 30 $S run fft --size $s --batch 16 --signal noise --natural-store $st --json 2>>"$out/errors.txt" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("check %-5s %-6s kernel=%s E=%s G=%s store=%s verified=%s err=%.2e wg_bytes=%s" % (sys.argv[1], sys.argv[2], r["kernel"], r["elements_per_invocation"], r["ffts_per_workgroup"], r["natural_store"], r["verified"], r["max_rel_error"], r["workgroup_bytes"]))
' $s $st | tee -a "$sum"
  done
done

F() { # size, store (direct|staged|raw), then E x G pairs
  local s=$1 st=$2; shift 2; local eg
  for eg in "$@"; do local e=${eg%x*} g=${eg#*x}
    local how=(--natural-store "$st"); [ "$st" = raw ] && how=(--order raw)
    B "fft$s $st E$e G$g" fft --size "$s" --n "$N" --kernel fast "${how[@]}" \
      --elements-per-invocation "$e" --ffts-per-workgroup "$g"
  done
}
F 256 staged 8x4
F 256 direct 8x4 8x8 8x16 4x8 16x8
F 1024 staged 8x1
F 1024 direct 8x1 8x2 16x1 16x2 16x4
F 1024 raw 16x4
F 4096 staged 16x1
F 4096 direct 16x1 32x1 8x1
F 4096 raw 16x1
echo "done: $(grep -c . "$sum") lines in $sum"
