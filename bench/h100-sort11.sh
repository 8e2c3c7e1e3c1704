#!/usr/bin/env bash
# Session 7, second run: 64 keys per invocation; E = 16/32/64 on whole arrays and segments; merge-pass
# shapes at E = 32 and 64 (temporary switches STAGEWISE_SORT_HEADR / _TAILR / _HALOF, this binary only).
# Every JSON is packed into $out/json.tgz (the device tool returns few files).
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216; G=268435456
{
V "full 2^24 e64" oddeven --variant batcher --n $M --fill random --keys-per-invocation 64
V "full 3000017 e64 f32 desc" oddeven --variant batcher --n 3000017 --fill random --keys-per-invocation 64 --dtype f32 --descending
V "seg1024 e64" oddeven --variant batcher --segment 1024 --n $M --fill random --keys-per-invocation 64
V "seg4096 e64 i32" oddeven --variant batcher --segment 4096 --n $M --fill random --keys-per-invocation 64 --dtype i32
V "seg1000 e32 f32" oddeven --variant batcher --segment 1000 --n 1000000 --fill random --keys-per-invocation 32 --dtype f32
B copy-warm copy --n $M --reps 200
for e in 32 64; do J full24-e$e oddeven --variant batcher --n $M --reps 30 --keys-per-invocation $e; done
for L in 1024 2048 4096; do for e in 16 32 64; do J seg$L-e$e oddeven --variant batcher --segment $L --n $M --reps 100 --keys-per-invocation $e; done; done
for e in 32 64; do WARMUP=5 J full26-e$e oddeven --variant batcher --n 67108864 --reps 10 --keys-per-invocation $e; done
B copy28 copy --n $G --reps 50
for e in 32 64; do
  WARMUP=3 J full28-e$e oddeven --variant batcher --n $G --reps 5 --keys-per-invocation $e
  for f in 8 32; do STAGEWISE_SORT_HALOF=$f WARMUP=3 J full28-e$e-halo$f oddeven --variant batcher --n $G --reps 5 --keys-per-invocation $e; done
  STAGEWISE_SORT_HEADR=16 WARMUP=3 J full28-e$e-headr16 oddeven --variant batcher --n $G --reps 5 --keys-per-invocation $e
  for r in 4 16; do STAGEWISE_SORT_TAILR=$r WARMUP=3 J full28-e$e-tailr$r oddeven --variant batcher --n $G --reps 5 --keys-per-invocation $e; done
done
} 2>&1 | tee "$out/summary.txt"
timeout 120 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -8 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
