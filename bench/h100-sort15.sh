#!/usr/bin/env bash
# Session 8, second run: the committed halo tiles again (confirmation: full sort 2^24 … 2^28 and
# segments against PyTorch in the same run), and S tiles per workgroup whose next tile's loads are
# issued before this tile's stores (STAGEWISE_SORT_TPW=S, a temporary switch, this binary only;
# _TPW_ALL also on passes that store straight from registers).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "full 2^24" oddeven --variant batcher --n $M --fill random
V "full 10000019 f32" oddeven --variant batcher --n 10000019 --fill random --dtype f32
V "seg1024" oddeven --variant batcher --segment 1024 --n $M --fill random --dtype i32
V "seg2048" oddeven --variant batcher --segment 2048 --n $M --fill random
V "seg1000 f32 desc" oddeven --variant batcher --segment 1000 --n 1000000 --fill random --dtype f32 --descending
STAGEWISE_SORT_TPW=4 V "full 2^24 tpw4" oddeven --variant batcher --n $M --fill random
STAGEWISE_SORT_TPW=4 V "full 3000017 f32 desc tpw4" oddeven --variant batcher --n 3000017 --fill random --dtype f32 --descending
STAGEWISE_SORT_TPW=4 V "seg4096 tpw4" oddeven --variant batcher --segment 4096 --n $M --fill random --dtype i32
STAGEWISE_SORT_TPW=2 STAGEWISE_SORT_TPW_ALL=1 V "full 2^24 tpw2 all" oddeven --variant batcher --n $M --fill random
B copy-warm copy --n $M --reps 200
for L in 1024 2048 4096; do J seg$L oddeven --variant batcher --segment $L --n $M --reps 100; done
STAGEWISE_SORT_TPW=4 J seg4096-tpw4 oddeven --variant batcher --segment 4096 --n $M --reps 100
J full24 oddeven --variant batcher --n $M --reps 30
STAGEWISE_SORT_TPW=4 J full24-tpw4 oddeven --variant batcher --n $M --reps 30
WARMUP=10 J full25 oddeven --variant batcher --n 33554432 --reps 20
WARMUP=5 J full26 oddeven --variant batcher --n 67108864 --reps 10
WARMUP=3 J full27 oddeven --variant batcher --n 134217728 --reps 5
B copy28 copy --n $G --reps 50
WARMUP=3 J full28 oddeven --variant batcher --n $G --reps 5
for t in 2 4 8; do STAGEWISE_SORT_TPW=$t WARMUP=3 J full28-tpw$t oddeven --variant batcher --n $G --reps 5; done
STAGEWISE_SORT_TPW=4 STAGEWISE_SORT_TPW_ALL=1 WARMUP=3 J full28-tpw4all oddeven --variant batcher --n $G --reps 5
} 2>&1 | tee "$out/summary.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
