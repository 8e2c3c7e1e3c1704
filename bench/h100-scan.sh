#!/usr/bin/env bash
# decoupled scan shapes on the H100 (after `source .gpu/enter`), each verified against the CPU model on
# the H100 first (2^24 and an odd N), then timed at 2^28. Usage: bash bench/h100-scan.sh OUTDIR
set -uo pipefail
S=${SW:-.gpu/stagewise}; out=${1:-/tmp/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for cfg in "" "--workgroup-size 256 --per-thread 8" "--workgroup-size 256 --per-thread 4" "--workgroup-size 256 --per-thread 12" \
           "--workgroup-size 512 --per-thread 4" "--workgroup-size 512 --per-thread 6" "--workgroup-size 512 --per-thread 8" \
           "--workgroup-size 128 --per-thread 16" "--workgroup-size 1024 --per-thread 4"; do
  for o in dispatch counter; do
    v=""
    for n in 16777216 10000019; do
      timeout 30 $S run scan --variant decoupled --n $n $cfg --tile-order $o > /dev/null 2> "$out/err.txt" && v="$v ok" || v="$v FAIL($(tail -c 120 "$out/err.txt"))"
    done
    echo -n "decoupled [$cfg --tile-order $o] verify:$v: "
    timeout 30 $S bench scan --variant decoupled --n 268435456 $cfg --tile-order $o --reps 40 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%9.4f ms %7.1f GB/s x%.3f (copy %.1f)" % (r["median_ms"], r["gbps"], r["fraction_of_copy"], r["copy_gbps"]))'
  done
done | tee "$out/scan_summary.txt"
timeout 60 $S bench scan --variant decoupled --log-n 20..28 --reps 30 --json > "$out/scan_decoupled.json"
timeout 30 $S bench scan --variant decoupled --exclusive --n 268435456 --reps 30 --json > "$out/scan_decoupled_excl.json"
