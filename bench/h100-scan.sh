#!/usr/bin/env bash
# decoupled scan configurations on the H100 (after `source .gpu/enter`)
set -uo pipefail
S=.gpu/stagewise
for cfg in "" "--workgroup-size 256 --per-thread 16" "--workgroup-size 512 --per-thread 8" "--workgroup-size 512 --per-thread 16" \
           "--workgroup-size 1024 --per-thread 4" "--workgroup-size 128 --per-thread 16" "--shared-scan"; do
  echo -n "decoupled $cfg: "
  $S bench scan --variant decoupled --n 268435456 $cfg --reps 30 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%9.4f ms %7.1f GB/s x%.3f" % (r["median_ms"], r["gbps"], r["fraction_of_copy"]))'
done
$S run scan --variant decoupled --n 268435456 --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print("2^28 run verified:", r["verified"], r.get("tile_scan"))'
