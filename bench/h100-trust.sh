#!/usr/bin/env bash
# Faults on the H100 (issue #8): sizes beyond the adapter's limits, injected out-of-memory, the
# memory budget; each case checks the exit code and the one-line message. Well under 60 s.
# Usage (after `source .gpu/enter`): bash bench/h100-trust.sh OUTDIR   (binary: ${SW:-.gpu/stagewise})
set -uo pipefail
out=${1:?usage: bench/h100-trust.sh OUTDIR}
S=${SW:-.gpu/stagewise}
mkdir -p "$out"
sum="$out/summary.txt"
: > "$sum"
pass=0
fail=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >> "$sum" 2>/dev/null || true
$S adapters >> "$sum" 2>&1

# case NAME WANT_RC PATTERN [ENV=V ...] -- ARGS...
# Passes when the exit code is WANT_RC, stderr is at most one line, no panic, and (when PATTERN is
# not empty) the stderr line contains PATTERN.
case_() {
  local name=$1 want=$2 pat=$3; shift 3
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0=$(date +%s%N)
  env "${envs[@]}" timeout 25 "$S" "$@" > "$out/$name.out" 2> "$out/$name.err"
  local rc=$?
  local t1=$(date +%s%N)
  local lines=$(grep -c . "$out/$name.err")
  local msg=$(head -1 "$out/$name.err" | cut -c1-300)
  local ok=ok
  [ "$rc" = "$want" ] || ok=FAIL
  [ "$lines" -le 1 ] || ok=FAIL
  grep -q -i "panicked\|internal error" "$out/$name.err" && ok=FAIL
  if [ -n "$pat" ] && ! grep -q -F -- "$pat" "$out/$name.err"; then ok=FAIL; fi
  [ $ok = ok ] && pass=$((pass + 1)) || fail=$((fail + 1))
  local ms=$(( (t1 - t0) / 1000000 ))
  printf '%-26s %-4s rc=%s want=%s %6d ms  %s\n' "$name" "$ok" "$rc" "$want" "$ms" \
    "${msg:-<no stderr>}" >> "$sum"
}

# Sizes (override for a smaller adapter, e.g. lavapipe's 128 MiB binding: N24=65536 N28=16777216 N29=67108864 N30=134217728).
N24=${N24:-16777216}; N28=${N28:-268435456}; N29=${N29:-536870912}; N30=${N30:-1073741824}
# Beyond the binding limit (2 GiB on NVIDIA/Vulkan): refused before any allocation, naming the limit.
case_ beyond_binding_run     1 "binding limit"  -- run copy --n $N30 --fill iota
case_ beyond_binding_bench   1 "binding limit"  -- bench copy --variant vec4 --n $N29 --reps 3
# A trace that would read back more than 1 GiB.
case_ trace_too_big          1 "use a smaller N or drop --trace" -- run scan --variant ladder --n $N28 --fill iota --trace
# Injected out of memory: the first allocation fails through the OOM error-scope path.
case_ oom_fault_run          1 "GPU out of memory: allocating" STAGEWISE_FAULT=oom -- run bitrev --n $N28 --fill iota
case_ oom_fault_bench        1 "use a smaller N" STAGEWISE_FAULT=oom -- bench copy --variant vec4 --n $N24 --reps 3
case_ oom_fault_scan         1 "GPU out of memory" STAGEWISE_FAULT=oom -- run scan --variant decoupled --n $N24 --fill iota
# Memory budget: a tiny share of max_buffer_size refuses a 1 GiB buffer cleanly.
case_ budget_refuses_2e28    1 "STAGEWISE_MEMORY_BUDGET" STAGEWISE_MEMORY_BUDGET=0.001 -- run bitrev --n $N28 --fill iota
case_ budget_refuses_bench   1 "memory budget" STAGEWISE_MEMORY_BUDGET=0.001 -- bench scan --variant decoupled --n $N28 --reps 3
case_ budget_100_ok          0 ""               STAGEWISE_MEMORY_BUDGET=100 -- run bitrev --n $N24 --fill iota --json
case_ budget_bad_value_warns 0 "ignoring STAGEWISE_MEMORY_BUDGET" STAGEWISE_MEMORY_BUDGET=abc -- run bitrev --n 1024 --fill iota --json
# A run after the faults (fresh process, same GPU) works and verifies.
case_ after_faults_ok        0 ""               -- run scan --variant decoupled --n $N24 --fill iota --json
grep -q '"verified":true' "$out/after_faults_ok.out" && echo "after_faults_ok verified=true" >> "$sum" \
  || { echo "after_faults_ok verified NOT true" >> "$sum"; fail=$((fail + 1)); }
# One-line option errors.
case_ scan_wg_on_ladder      1 "applies to --variant decoupled or reduce-then-scan only" -- run scan --variant ladder --workgroup-size 128
case_ bmmc_tile_bits_14      1 "--tile-bits must be in 5..=13" -- run bmmc --variant tiled --tile-bits 14
echo "passed $pass failed $fail" >> "$sum"
rm -f "$out"/*.out
cat "$sum"
