#!/usr/bin/env bash
# Effect of wgpu's injected bounds checks and workgroup-memory zeroing on the workgroup-memory kernels.
set -uo pipefail
S=.gpu/stagewise
for k in "" no-zero-init unchecked unchecked,no-zero-init; do
  echo "== STAGEWISE_KERNELS=$k"
  for args in "bitrev --variant tiled --n 268435456" "bmmc --preset random:1 --variant tiled --n 268435456" \
              "scan --variant decoupled --n 268435456" "oddeven --variant batcher --segment 1024 --n 16777216" \
              "copy --variant vec4 --n 268435456"; do
    STAGEWISE_KERNELS=$k $S bench $args --reps 30 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print("%-8s %-10s %9.4f ms %7.1f GB/s x%.3f %7.2f Gitem/s" % (r["algorithm"], r["variant"], r["median_ms"], r["gbps"], r["fraction_of_copy"], r["gitems_per_s"]))'
  done
done
