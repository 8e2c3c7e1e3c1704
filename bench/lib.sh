# Helpers sourced by the H100 scripts (bench/h100-*.sh), after `source .gpu/enter`.
# Needs $out (the output folder) and $S (the stagewise binary).
#   row NAME        < bench JSON : one line per row (median, min, GB/s, copy, fraction, first passes)
#   B NAME ARGS...  stagewise bench ARGS with $WARMUP warm-up runs (default 300: the GPU idles at low
#                   clocks during CPU-bound checks; 5 runs of ~1 ms do not bring it back)
#   V NAME ARGS...  stagewise run ARGS: prints whether the GPU's result matched the CPU model
#   J FILE ARGS...  like B, and keeps the bench JSON (per-pass medians) as $out/FILE.json
row() { python3 -c '
import json, sys
name = sys.argv[1]
try: rows = json.load(sys.stdin)["rows"]
except Exception as e: print("%-40s FAILED (%s)" % (name, e)); sys.exit()
for r in rows:
    ps = " ".join("%s=%.4f" % (p["label"][:18].replace(" ", "_"), p["median_ms"]) for p in r.get("passes", [])[:3])
    print("%-40s 2^%-2d %9.4f ms (min %.4f) %7.1f GB/s copy %7.1f x%.3f  [%s]" % (name, r["n"].bit_length() - 1,
          r["median_ms"], r["min_ms"], r["gbps"], r["copy_gbps"], r["fraction_of_copy"], ps))' "$1"; }
B() { local name=$1; shift; timeout 60 $S bench "$@" --warmup "${WARMUP:-300}" --json 2>> "$out/errors.txt" | row "$name"; }
V() { local name=$1; shift
  timeout 60 $S run "$@" --json 2>> "$out/errors.txt" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin); print("verify %-36s %s %s %s" % (sys.argv[1], r["verified"], r.get("kernel", ""), (r.get("mismatch") or "")[:160]))
except Exception as e: print("verify %-36s FAILED (%s)" % (sys.argv[1], e))' "$name"; }
J() { local f=$1; shift; timeout 120 $S bench "$@" --warmup "${WARMUP:-300}" --json > "$out/$f.json" 2>> "$out/errors.txt"; row "$f" < "$out/$f.json"; }
