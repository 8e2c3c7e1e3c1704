#!/usr/bin/env bash
# decoupled scan configurations on the H100 (after `source .gpu/enter`). Usage: bench/h100-scan.sh [OUTDIR]
# One line per case on stdout and in OUTDIR/scan_summary.txt; JSON of the default over 2^20..2^28.
set -uo pipefail
S=${SW:-.gpu/stagewise}; out=${1:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for cfg in "" "--tile-order counter" "--lookback-depth 1" "--lookback-depth 2" "--lookback-depth 8" \
           "--workgroup-size 256 --per-thread 4" "--workgroup-size 256 --per-thread 8" "--workgroup-size 256 --per-thread 16" \
           "--workgroup-size 512 --per-thread 6" "--workgroup-size 512 --per-thread 8" "--workgroup-size 1024 --per-thread 4" \
           "--workgroup-size 128 --per-thread 16" "--workgroup-size 512 --per-thread 8 --lookback-depth 2"; do
  echo -n "decoupled [$cfg]: "
  timeout 30 $S bench scan --variant decoupled --n 268435456 $cfg --reps 40 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%9.4f ms %7.1f GB/s x%.3f (copy %.1f)" % (r["median_ms"], r["gbps"], r["fraction_of_copy"], r["copy_gbps"]))'
done | tee "$out/scan_summary.txt"
for d in "" "--exclusive" "--tile-order counter"; do
  timeout 30 $S run scan --variant decoupled --n 268435456 $d --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print("2^28 run verified:", r["verified"], r.get("mismatch"), r.get("tile_order"), r.get("tiles"), r.get("lookback_depth"))' 2>&1 | tee -a "$out/scan_summary.txt"
done
timeout 60 $S bench scan --variant decoupled --log-n 20..28 --reps 30 --json > "$out/scan_decoupled.json"
timeout 30 $S bench scan --variant decoupled --exclusive --n 268435456 --reps 30 --json > "$out/scan_decoupled_excl.json"
