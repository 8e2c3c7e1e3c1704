#!/usr/bin/env bash
# Full-sort pass plan sweep on the H100 (after `source .gpu/enter`): bash bench/h100-sort4.sh OUTDIR
# Experiment switches: STAGEWISE_SORT_RES (residues per merge-tile row, i.e. bytes per contiguous run / 4),
# STAGEWISE_SORT_MTILE (merge tile keys), STAGEWISE_SORT_HALO (halo tiles run stages while DIV·d ≤ rows).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
cfgs=("R32 h16:STAGEWISE_SORT_RES=32 STAGEWISE_SORT_HALO=16"
      "R16 h16:STAGEWISE_SORT_RES=16 STAGEWISE_SORT_HALO=16"
      "R8 h16:STAGEWISE_SORT_RES=8 STAGEWISE_SORT_HALO=16"
      "R16 h8:STAGEWISE_SORT_RES=16 STAGEWISE_SORT_HALO=8"
      "m4096 R32 h16:STAGEWISE_SORT_MTILE=4096 STAGEWISE_SORT_RES=32 STAGEWISE_SORT_HALO=16"
      "m4096 R16 h16:STAGEWISE_SORT_MTILE=4096 STAGEWISE_SORT_RES=16 STAGEWISE_SORT_HALO=16"
      "m4096 R8 h16:STAGEWISE_SORT_MTILE=4096 STAGEWISE_SORT_RES=8 STAGEWISE_SORT_HALO=16"
      "m2048 R16 h16:STAGEWISE_SORT_MTILE=2048 STAGEWISE_SORT_RES=16 STAGEWISE_SORT_HALO=16"
      "m2048 R8 h16:STAGEWISE_SORT_MTILE=2048 STAGEWISE_SORT_RES=8 STAGEWISE_SORT_HALO=16")
{
for c in "${cfgs[@]}"; do name=${c%%:*}; envs=${c#*:}
  env $envs timeout 60 $S run oddeven --variant batcher --n 10000019 --fill random --json 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print("verify", sys.argv[1], r["verified"], len(r["passes"]), "passes")' "$name"
done
B copy-warm copy --n $M --reps 200
for c in "${cfgs[@]}"; do name=${c%%:*}; envs=${c#*:}; f=$(echo "$name" | tr ' ' '-')
  env $envs bash -c "source bench/lib.sh; out=$out S=$S; J full24-$f oddeven --variant batcher --n $M --reps 30"
done
B copy28 copy --n $G --reps 50
for c in "${cfgs[@]}"; do name=${c%%:*}; envs=${c#*:}; f=$(echo "$name" | tr ' ' '-')
  env $envs WARMUP=3 bash -c "source bench/lib.sh; out=$out S=$S; J full28-$f oddeven --variant batcher --n $G --reps 5"
done
} 2>&1 | tee "$out/summary.txt"
