#!/usr/bin/env bash
# Radix sort (issue 22) on the H100, after `source .gpu/enter`: bash bench/h100-radixsort.sh OUTDIR
# 1. The radix tests (if .gpu/test-radix exists: the test binary of tests/radix.rs) and every case
#    verified against the CPU model on the H100 (32-lane subgroups: lavapipe only has 8).
# 2. onesweep at the defaults (8-bit digits, 256 threads × 15 keys) over 2^24 … 2^28: u32, f32,
#    key-value (--values iota); per-pass medians kept (histogram, scan, each digit's pass).
# 3. Tile shapes at 2^28 (keys per thread, workgroup size), counter tile order (auto = dispatch on
#    GPUs) and the workgroup-memory ranking.
# 4. Peers in the same run: cupy.sort (CUB keys-only radix sort) if cupy is installed, torch.sort
#    through bench/peers.py, and the copy roofline.
set -uo pipefail
out=${1:-/tmp/out}; S=${SW:-.gpu/stagewise}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
source "$(dirname "$0")/lib.sh"
M=16777216
{
[ -x .gpu/test-radix ] && timeout 300 .gpu/test-radix 2>&1 | grep -E "^test |test result|panicked" | head -20
for v in onesweep classic; do
  V "radix $v 2^24 u32" radix --variant $v --n $M --fill random
  V "radix $v 10000019 f32 desc" radix --variant $v --n 10000019 --fill random --dtype f32 --descending
  V "radix $v 3000017 i32 kv" radix --variant $v --n 3000017 --fill random --dtype i32 --values iota
  V "radix $v 1000003 4-bit" radix --variant $v --n 1000003 --fill random --digit-bits 4
done
V "radix onesweep 2^24 spin0" radix --n $M --fill random --spin 0
V "radix onesweep 2^24 shared-rank" radix --n $M --fill random --shared-rank
V "radix onesweep 2^24 counter order" radix --n $M --fill random --tile-order counter
B copy copy --n $((M*16)) --reps 50
for lg in 24 26 28; do
  n=$((1 << lg))
  WARMUP=20 J radix-u32-$lg radix --variant onesweep --n $n --reps 20
  WARMUP=20 J radix-f32-$lg radix --variant onesweep --n $n --dtype f32 --reps 20
  WARMUP=20 J radix-kv-$lg radix --variant onesweep --n $n --values iota --reps 20
done
for k in 8 12 16 20; do
  WARMUP=20 B "radix 2^28 256x$k" radix --variant onesweep --n $((M*16)) --keys-per-thread $k --reps 20
done
WARMUP=20 B "radix 2^28 512x8" radix --variant onesweep --n $((M*16)) --workgroup-size 512 --keys-per-thread 8 --reps 20
WARMUP=20 B "radix 2^28 counter order" radix --variant onesweep --n $((M*16)) --tile-order counter --reps 20
WARMUP=20 B "radix 2^28 shared-rank" radix --variant onesweep --n $((M*16)) --shared-rank --reps 20
WARMUP=5 B "radix classic 2^24" radix --variant classic --n $M --reps 5
} 2>&1 | tee "$out/summary.txt"
timeout 300 python3 - > "$out/cub.txt" 2>&1 <<'EOF'
import time
try:
    import cupy as cp
except Exception as e:
    print("cupy unavailable:", e); raise SystemExit
for dt in (cp.uint32, cp.float32):
    for lg in (24, 26, 28):
        x = cp.random.randint(0, 2**32, size=1 << lg, dtype=cp.uint64).astype(cp.uint32)
        if dt == cp.float32:
            x = cp.random.standard_normal(1 << lg, dtype=cp.float32)
        for _ in range(5): cp.sort(x)
        s, e = cp.cuda.Event(), cp.cuda.Event()
        ts = []
        for _ in range(20):
            s.record(); cp.sort(x); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
        ts.sort(); print("cupy.sort %s 2^%d %.4f ms (median of 20)" % (cp.dtype(dt).name, lg, ts[10]))
EOF
cat "$out/cub.txt"
timeout 150 python3 bench/peers.py --reps 50 --only "sort" --json "$out/peers.json" > "$out/peers.txt" 2>&1; tail -9 "$out/peers.txt"
(cd "$out" && tar czf json.tgz *.json && rm -f *.json)
