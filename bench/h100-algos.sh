#!/usr/bin/env bash
# Per-algorithm H100 cases (after `source .gpu/enter`). Usage: bench/h100-algos.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/out}; S=.gpu/stagewise; mkdir -p "$out"
B() { local name=$1; shift; $S bench "$@" --reps 30 --json > "$out/$name.json" 2> "$out/$name.err" || echo "FAILED $name: $(tail -1 "$out/$name.err")"; }
B copy copy --n 268435456
B bitrev_tiled bitrev --variant tiled --log-n 24..28
B bmmc_bitrev bmmc --preset bit-reverse --n 268435456
B bmmc_transpose bmmc --preset transpose:14,14 --n 268435456
B bmmc_random bmmc --preset random:1 --n 268435456
B scan_decoupled scan --variant decoupled --log-n 24..28
B scan_others scan --n 16777216
B oe_seg1024 oddeven --variant batcher --segment 1024 --n 16777216
B oe_seg2048 oddeven --variant batcher --segment 2048 --n 16777216
B oe_seg4096 oddeven --variant batcher --segment 4096 --n 16777216
B oe_batcher oddeven --variant batcher --log-n 24..28
B oe_mergesplit oddeven --variant merge-split --n 16777216
python3 - "$out" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        rows = json.load(open(f))["rows"]
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    for r in rows:
        print("%-15s %-8s %-16s 2^%-3d %10.4f ms %8.1f GB/s x%.3f %8.2f Gitem/s" % (os.path.basename(f)[:-5], r["algorithm"], r["variant"], r["n"].bit_length() - 1, r["median_ms"], r["gbps"], r["fraction_of_copy"], r["gitems_per_s"]))
PY
