#!/usr/bin/env bash
# Odd-even sorts on the H100 (after `source .gpu/enter`), ≤ 200 s. Usage: bash bench/h100-sort.sh OUTDIR
# One line per case in OUTDIR/summary.txt: verify lines (GPU vs CPU model on this adapter), the
# segmented batcher (L = 1024/2048/4096 over 2^24 u32: default, then a tile/threads sweep), the full
# sort (2^24..2^28 default, then a few tiles) with the copy roofline measured in the same run.
# Issue targets (PyTorch batched sort / 0.3x torch.sort): seg 28.3 / 30.2 / 28.7 Gkeys/s; full
# ≥ 5.2 Gkeys/s at 2^24, ≥ 5.8 Gkeys/s at 2^28.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"; sum="$out/summary.txt"; : > "$sum"
err="$out/errors.txt"; : > "$err"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# /' >> "$sum"
V() { # verify: run (the CLI checks the GPU output against the CPU model; exit 3 = mismatch)
  local name=$1; shift
  if timeout 60 $S run "$@" > /dev/null 2>> "$err"; then echo "verify $name ok" >> "$sum"
  else echo "verify $name FAILED rc=$? $(tail -1 "$err")" >> "$sum"; fi
}
B() { # bench: one line per row (N) with Gkeys/s, ms, fraction of copy
  local name=$1; shift
  timeout 60 $S bench "$@" --json 2>> "$err" | python3 -c '
import json, sys
name = sys.argv[1]
try: rows = json.load(sys.stdin)["rows"]
except Exception as e: print("%-28s FAILED (%s)" % (name, e)); sys.exit()
for r in rows:
    print("%-28s 2^%-2d %9.4f ms %7.2f Gkeys/s %7.1f GB/s copy %7.1f GB/s x%.3f" % (name, r["n"].bit_length() - 1,
          r["median_ms"], r["gitems_per_s"], r["gbps"], r["copy_gbps"], r["fraction_of_copy"]))' "$name" >> "$sum"
}
V batcher_2e20_u32 oddeven --variant batcher --n 1048576
V batcher_2e22p3_f32_desc oddeven --variant batcher --n 4194307 --dtype f32 --descending
V batcher_seg4096_i32 oddeven --variant batcher --segment 4096 --n 4194304 --dtype i32
V batcher_seg1000_f32 oddeven --variant batcher --segment 1000 --n 1000000 --dtype f32 --descending
V transposition_t8_1024 oddeven --variant transposition --threads 8 --n 1024
V transposition_t1_2048 oddeven --variant transposition --threads 1 --n 2048
for L in 1024 2048 4096; do B seg${L}_default oddeven --variant batcher --segment $L --n 16777216 --reps 30; done
for L in 1024 2048 4096; do
  for tt in "4096 512" "4096 1024" "8192 512" "8192 1024"; do
    set -- $tt; B seg${L}_tile$1_thr$2 oddeven --variant batcher --segment $L --n 16777216 --tile $1 --threads $2 --reps 30
  done
done
B full_default oddeven --variant batcher --log-n 24..28 --reps 10
for tt in "4096 512" "8192 512" "8192 1024"; do
  set -- $tt; B full_tile$1_thr$2 oddeven --variant batcher --log-n 24..24 --tile $1 --threads $2 --reps 10
done
B copy_vec4 copy --variant vec4 --log-n 24..28 --reps 30
cat "$sum"
