#!/usr/bin/env python3
"""What users would otherwise use, measured on the same GPU as `stagewise bench`: PyTorch's copy,
index gather/scatter (bit-reversal), transpose, cumsum, sort (full and batched rows), batched FFT.

Each case: warm-up, then REPS timed runs with CUDA events, median reported. Bytes are the floor
(each input element read once, each output written once), as in `stagewise bench`.
Usage: python3 bench/peers.py [--reps 50] [--json FILE] [--quick] [--only fft,cumsum]
"""
import argparse
import json
import statistics
import sys

import torch


def timeit(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times)


def bitrev_index(log_n, device):
    i = torch.arange(1 << log_n, device=device, dtype=torch.int64)
    r = torch.zeros_like(i)
    for b in range(log_n):
        r |= ((i >> b) & 1) << (log_n - 1 - b)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--only", default="", help="comma-separated substrings: time only the cases that contain one")
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    log_big = 20 if args.quick else 28
    rows = []

    only = [o for o in args.only.split(",") if o]

    def add(case, n, nbytes, fn, items=None):
        if only and not any(o in case for o in only):
            return
        med, mn = timeit(fn, args.reps)
        row = {"peer": "torch " + torch.__version__, "case": case, "n": n, "bytes": nbytes,
               "median_ms": med, "min_ms": mn, "gbps": nbytes / (med * 1e6),
               "gitems_per_s": (items if items is not None else n) / (med * 1e6)}
        rows.append(row)
        print(f"{case:<34} n={n:<11} {med:9.4f} ms {row['gbps']:8.1f} GB/s {row['gitems_per_s']:8.2f} G/s",
              flush=True)

    n = 1 << log_big
    x = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=dev)
    y = torch.empty_like(x)
    add("copy (y.copy_(x))", n, 8 * n, lambda: y.copy_(x))
    idx = bitrev_index(log_big, dev)
    add("bitrev gather (x[idx])", n, 8 * n, lambda: torch.index_select(x, 0, idx, out=y))
    add("bitrev scatter (y[idx] = x)", n, 8 * n, lambda: y.index_copy_(0, idx, x))
    del idx
    side = 1 << (log_big // 2)
    xm = x.view(side, -1)
    ym = torch.empty((xm.shape[1], side), dtype=x.dtype, device=dev)
    add(f"transpose {side}x{xm.shape[1]}", n, 8 * n, lambda: ym.copy_(xm.t()))
    add("cumsum int32", n, 8 * n, lambda: torch.cumsum(x, 0, out=y))
    xf = torch.randn(n, device=dev)
    yf = torch.empty_like(xf)
    add("cumsum float32", n, 8 * n, lambda: torch.cumsum(xf, 0, out=yf))
    del xf, yf
    for lg in ([20] if args.quick else [24, 25, 26, 27, 28]):
        k = x[: 1 << lg].clone()
        add(f"sort int32 2^{lg}", 1 << lg, 8 * (1 << lg), lambda k=k: torch.sort(k), items=1 << lg)
    total = 1 << (20 if args.quick else 24)
    for seg in [1024, 2048, 4096]:
        k = x[:total].view(-1, seg).clone()
        add(f"sort rows of {seg} int32", total, 8 * total, lambda k=k: torch.sort(k, dim=1), items=total)
    del x, y, xm, ym
    torch.cuda.empty_cache()
    cplx = 1 << (20 if args.quick else 27)
    for lg in [8, 10, 12]:
        z = torch.randn(cplx // (1 << lg), 1 << lg, dtype=torch.complex64, device=dev)
        add(f"fft c64 size 2^{lg} batched", cplx, 16 * cplx, lambda z=z: torch.fft.fft(z, dim=1))
        del z
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "reps": args.reps, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
    print(json.dumps({"device": info["device"], "torch": info["torch"], "cuda": info["cuda"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
