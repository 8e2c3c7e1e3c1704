#!/usr/bin/env python3
"""The peers of the benchmark suite: what users would otherwise run, timed on the same GPU.

`stagewise bench --suite bench/suite.toml --out R.json` runs this script for the cases that name a
`peer`, at the case's sizes and dtype, and merges the medians into its result.

Each peer: warm-up runs, then REPS timed runs between CUDA events, median reported (as
`stagewise bench` reports medians of GPU timestamps). Peers:
  torch.copy              y.copy_(x)
  torch.gather-bitrev     torch.index_select(x, 0, bit-reversed indices)
  torch.transpose         y.copy_(x.view(2^(k/2), -1).t())
  torch.cumsum            torch.cumsum(x, 0)
  torch.sort              torch.sort(x)              (values and int64 indices)
  torch.sort-rows:L       torch.sort(x.view(-1, L), dim=1)
  cupy.sort               cupy.sort(x)               (CUB's keys-only radix sort)
  torch.fft:S             torch.fft.fft over N/S signals of S complex64 points (cuFFT)
  torch.rfft:S            torch.fft.rfft over N/S signals of S float32 points (cuFFT)
  fft:S, rfft:S           the faster of cuFFT (as above) and VkFFT (pyvkfft's CUDA backend, same
                          input, out of place) at each size; VkFFT's output is checked against
                          cuFFT's first (a VkFFT that differs is not timed). Without pyvkfft: cuFFT
                          alone. The row says which won (`by`) and both times (`candidates`).
u32 keys are timed as int32 by torch (it has no unsigned sort); cupy sorts uint32.
Usage: python3 bench/peers.py --suite bench/suite.toml [--cases ID,ID] [--reps 50] --json OUT
"""
import argparse
import json
import statistics
import sys
import tomllib

import torch


def timeit(fn, reps, warmup=10):
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


def keys(n, dtype, dev):
    if dtype == "f32":
        return torch.randn(n, device=dev, dtype=torch.float32)
    return torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=dev)


def vkfft():
    """pyvkfft's CUDA backend, or None where it is not installed."""
    try:
        import pyvkfft.cuda
        import pyvkfft.version
        return pyvkfft
    except Exception:  # not installed, or built without CUDA
        return None


def vkfft_fn(real, s, n, dev):
    """VkFFT over the same batch as `peer_fn`'s cuFFT, checked against cuFFT; None if it differs."""
    import cupy
    from pyvkfft.cuda import VkFFTApp
    stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    b = n // s
    if real:
        x = torch.randn(b, s, dtype=torch.float32, device=dev)
        y = torch.empty(b, s // 2 + 1, dtype=torch.complex64, device=dev)
        app = VkFFTApp((b, s), cupy.float32, ndim=1, inplace=False, r2c=True, stream=stream)
        want = torch.fft.rfft(x, dim=1)
    else:
        x = torch.randn(b, s, dtype=torch.complex64, device=dev)
        y = torch.empty_like(x)
        app = VkFFTApp((b, s), cupy.complex64, ndim=1, inplace=False, stream=stream)
        want = torch.fft.fft(x, dim=1)
    xc, yc = cupy.asarray(x), cupy.asarray(y)
    app.fft(xc, yc)
    torch.cuda.synchronize()
    err = (y - want).abs().max().item() / max(want.abs().max().item(), 1e-30)
    if not err <= 1e-5:
        print(f"peers.py: VkFFT differs from cuFFT at {s} points (relative error {err:.1e}): not timed",
              file=sys.stderr)
        return None
    del want
    return lambda: app.fft(xc, yc)


def peer_fn(peer, n, dtype, dev):
    """The function to time for one peer at one size (its inputs made once, outside the timing)."""
    name, _, param = peer.partition(":")
    log_n = n.bit_length() - 1
    if name == "torch.copy":
        x = keys(n, dtype, dev)
        y = torch.empty_like(x)
        return lambda: y.copy_(x)
    if name == "torch.gather-bitrev":
        x = keys(n, dtype, dev)
        y = torch.empty_like(x)
        idx = bitrev_index(log_n, dev)
        return lambda: torch.index_select(x, 0, idx, out=y)
    if name == "torch.transpose":
        x = keys(n, dtype, dev).view(1 << (log_n // 2), -1)
        y = torch.empty((x.shape[1], x.shape[0]), dtype=x.dtype, device=dev)
        return lambda: y.copy_(x.t())
    if name == "torch.cumsum":
        x = keys(n, dtype, dev)
        y = torch.empty_like(x)
        return lambda: torch.cumsum(x, 0, out=y)
    if name == "torch.sort":
        x = keys(n, dtype, dev)
        return lambda: torch.sort(x)
    if name == "torch.sort-rows":
        x = keys(n, dtype, dev).view(-1, int(param))
        return lambda: torch.sort(x, dim=1)
    if name == "cupy.sort":
        import cupy
        x = cupy.asarray(keys(n, dtype, dev))
        if dtype != "f32":
            x = x.view(cupy.uint32)
        return lambda: cupy.sort(x)
    if name == "torch.fft":
        z = torch.randn(n // int(param), int(param), dtype=torch.complex64, device=dev)
        return lambda: torch.fft.fft(z, dim=1)
    if name == "torch.rfft":
        z = torch.randn(n // int(param), int(param), dtype=torch.float32, device=dev)
        return lambda: torch.fft.rfft(z, dim=1)
    if name in ("fft", "rfft"):
        # Timed by `timeit_best` (two libraries); here cuFFT alone.
        return peer_fn(f"torch.{name}:{param}", n, dtype, dev)
    raise SystemExit(f"peers.py: unknown peer '{peer}'")


def time_peer(peer, n, dtype, dev, reps):
    """(median, min, extra row fields): `fft:S`/`rfft:S` time cuFFT and VkFFT and keep the faster."""
    name, _, param = peer.partition(":")
    fn = peer_fn(peer, n, dtype, dev)
    med, mn = timeit(fn, reps)
    del fn
    if name not in ("fft", "rfft"):
        return med, mn, {}
    cands = {"cuFFT": med}
    best = ("cuFFT", med, mn)
    if vkfft() is not None:
        vk = vkfft_fn(name == "rfft", int(param), n, dev)
        if vk is not None:
            vmed, vmn = timeit(vk, reps)
            cands["VkFFT"] = vmed
            if vmed < med:
                best = ("VkFFT", vmed, vmn)
        del vk
    return best[1], best[2], {"by": best[0], "candidates": cands}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--cases", default="", help="comma-separated case ids (default: every case)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    with open(args.suite, "rb") as f:
        suite = tomllib.load(f)
    want = [c for c in args.cases.split(",") if c]
    dev = torch.device("cuda")
    torch.manual_seed(0)
    rows = []
    for case in suite["case"]:
        if "peer" not in case or (want and case["id"] not in want):
            continue
        for k in case["log_n"]:
            n = 1 << k
            med, mn, extra = time_peer(case["peer"], n, case.get("dtype", "u32"), dev, args.reps)
            rows.append({"case": case["id"], "peer": case["peer"], "n": n, "median_ms": med, "min_ms": mn, **extra})
            by = f" ({extra['by']})" if "by" in extra else ""
            print(f"peer {case['id']:<28} {case['peer']:<22} 2^{k:<2} {med:9.4f} ms{by}", file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    try:
        import cupy
        cupy_version = cupy.__version__
    except ImportError:
        cupy_version = None
    vk = vkfft()
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cupy": cupy_version,
            "vkfft": vk.version.__version__ if vk else None, "reps": args.reps, "rows": rows}
    with open(args.json, "w") as f:
        json.dump(info, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
