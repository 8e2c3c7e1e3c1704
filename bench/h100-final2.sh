#!/usr/bin/env bash
# Final H100 cases of 2026-11-23 (after `source .gpu/enter`). Usage: bash bench/h100-final2.sh OUTDIR
# the issue cases at the defaults (scan: see bench/h100-scan.sh, which verifies first), peers (torch).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
row() { python3 -c '
import json, sys
name = sys.argv[1]
try: rows = json.load(sys.stdin)["rows"]
except Exception as e: print("%-34s FAILED (%s)" % (name, e)); sys.exit()
for r in rows:
    print("%-34s 2^%-2d %9.4f ms %8.2f Gitem/s %7.1f GB/s copy %7.1f GB/s x%.3f" % (name, r["n"].bit_length() - 1,
          r["median_ms"], r["gitems_per_s"], r["gbps"], r["copy_gbps"], r["fraction_of_copy"]))' "$1"; }
B() { local name=$1; shift; timeout 60 $S bench "$@" --json 2>> "$out/errors.txt" | row "$name"; }
{
B scan_counter_default scan --variant decoupled --n 268435456 --tile-order counter --reps 40
B scan_default scan --variant decoupled --log-n 24..28 --reps 30
B scan_default_excl scan --variant decoupled --exclusive --n 268435456 --reps 30
for s in 256 1024 4096; do B fft_$s fft --size $s --n 134217728 --reps 40; done
for L in 1024 2048 4096; do B oe_seg$L oddeven --variant batcher --segment $L --n 16777216 --reps 40; done
B oe_batcher_full oddeven --variant batcher --log-n 24..28 --reps 10
B oe_mergesplit oddeven --variant merge-split --n 16777216 --reps 10
B copy copy --log-n 24..28 --reps 40
} | tee "$out/final.txt"
timeout 150 python3 bench/peers.py --reps 50 --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -16 "$out/peers.txt"
