#!/usr/bin/env bash
# Segmented batcher on the H100 (after `source .gpu/enter`): tile x threads sweep for L = 1024/2048/4096
# over 2^24 u32, the defaults, and verify runs. Usage: bash bench/h100-sortseg.sh [sweep]
S=${SW:-.gpu/stagewise}
g() { python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%.4f ms %.2f Gkeys/s x%.3f copy" % (r["median_ms"], r["gitems_per_s"], r["fraction_of_copy"]))' 2>&1 | tail -1; }
if [ "${1:-}" = sweep ]; then
  for L in 1024 2048 4096; do
    for tile in 1024 2048 4096; do
      [ $tile -lt $L ] && continue
      for thr in 128 256 512 1024; do
        echo "seg$L tile$tile thr$thr: $(timeout 30 $S bench oddeven --variant batcher --segment $L --n 16777216 --tile $tile --threads $thr --reps 30 --json | g)"
      done
    done
  done
fi
for L in 1024 2048 4096; do
  timeout 30 $S run oddeven --variant batcher --segment $L --n 4194304 --dtype i32 > /dev/null && v=ok || v=FAILED
  echo "seg$L default (verify $v): $(timeout 30 $S bench oddeven --variant batcher --segment $L --n 16777216 --reps 40 --json | g)"
done
