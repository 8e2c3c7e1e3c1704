#!/usr/bin/env bash
# The H100 measurement session: `source .gpu/enter` first (see DEVELOPERS.md / shared/gpu/prepare).
# Usage: bench/h100.sh OUTDIR [tune|all]
set -uo pipefail
out=${1:-/tmp/out}; mode=${2:-all}
S=.gpu/stagewise
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/gpu.txt"
$S adapters | tee -a "$out/gpu.txt"
if [ "$mode" = tune ]; then
  for wg in 128 256 512 1024; do for per in 1 2 4 8; do
    echo -n "copy wg=$wg per=$per: "
    $S bench copy --variant vec4 --n 268435456 --workgroup-size $wg --per-thread $per --reps 50 --json \
      | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print(f"{r[\"gbps\"]:.1f} GB/s {r[\"median_ms\"]:.4f} ms")'
  done; done 2>&1 | tee "$out/copy_tune.txt"
  $S bench copy --log-n 20..28 --reps 100 --json > "$out/copy.json"
  $S bench bitrev --log-n 20..28 --reps 50 --json > "$out/bitrev.json"
  python3 -c 'import json; [print(f"{r[\"algorithm\"]:<7}{r[\"variant\"]:<8}2^{r[\"n\"].bit_length()-1:<3}{r[\"median_ms\"]:9.4f} ms {r[\"gbps\"]:8.1f} GB/s  copy {r[\"copy_gbps\"]:8.1f}  x{r[\"fraction_of_copy\"]:.3f}") for f in ["'"$out"'/copy.json","'"$out"'/bitrev.json"] for r in json.load(open(f))["rows"]]'
  python3 bench/peers.py --reps 50 --json "$out/peers.json" 2>&1 | tail -20
else
  $S bench --all --reps 50 --log-n 20..28 --json > "$out/all.json"; echo "bench --all rc=$?"
  python3 bench/peers.py --reps 50 --json "$out/peers.json" 2>&1 | tail -20
fi
