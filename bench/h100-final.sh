#!/usr/bin/env bash
# The final H100 session (after `source .gpu/enter`). Usage: bench/h100-final.sh OUTDIR all|cases
set -uo pipefail
out=${1:-/tmp/out}; mode=${2:-all}; S=.gpu/stagewise; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "$mode" = all ]; then
  time $S bench --all --log-n 24..28 --reps 20 --json > "$out/all.json" 2> "$out/all.err"; echo "rc=$?"; tail -5 "$out/all.err"
else
  B() { local name=$1; shift; $S bench "$@" --reps 30 --json > "$out/$name.json" 2>> "$out/cases.err" || echo "FAILED $name: $(tail -1 "$out/cases.err")"; }
  B bmmc_transpose bmmc --preset transpose:14,14 --n 268435456
  B bmmc_random bmmc --preset random:1 --n 268435456
  B bitrev bitrev --n 268435456
  B scan scan --variant decoupled --log-n 24..28
  for L in 1024 2048 4096; do B oe_seg$L oddeven --variant batcher --segment $L --n 16777216; done
  B oe_batcher oddeven --variant batcher --log-n 24..28
  for s in 256 1024 4096; do B fft_$s fft --size $s --n 134217728; done
  python3 bench/peers.py --reps 50 --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -16 "$out/peers.txt"
  mkdir -p "$out/r"; python3 - "$out" > "$out/cases.txt" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    if f.endswith("peers.json"): continue
    try: rows = json.load(open(f))["rows"]
    except Exception as e: print(os.path.basename(f), "unreadable", e); continue
    for r in rows:
        print("%-15s %-8s %-16s 2^%-3d %10.4f ms %8.1f GB/s x%.3f %8.2f Gitem/s" % (os.path.basename(f)[:-5], r["algorithm"], r["variant"], r["n"].bit_length() - 1, r["median_ms"], r["gbps"], r["fraction_of_copy"], r["gitems_per_s"]))
PY
  cat "$out/cases.txt"
  cd "$out" && tar czf cases.tgz *.json *.txt && rm -f *.json
fi
