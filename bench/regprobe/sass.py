#!/usr/bin/env python3
"""Machine code of a kernel from the pipeline cache blob regprobe wrote (REGPROBE_CACHE).

NVIDIA's Vulkan driver (580) stores a pipeline as a zstd frame after a small header; inside, a
table gives the code's size and offset (u32s at bytes 76 and 80, the offset counted from byte 8).
Usage: sass.py BLOB.cache [OUT.sass]. Needs `zstd` (the program, or the Python module zstandard)
and nvdisasm (CUDA's, found on PATH or under /usr/local/cuda*/bin)."""
import glob, os, shutil, struct, subprocess, sys

def unzstd(data):
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 28)
    except ImportError:
        exe = shutil.which("zstd") or os.path.join(os.path.dirname(__file__), "zstd")
        return subprocess.run([exe, "-d", "-q", "-c"], input=data, capture_output=True, check=True).stdout

blob = open(sys.argv[1], "rb").read()
frame = blob.find(b"\x28\xb5\x2f\xfd")
if frame < 0:
    sys.exit("no zstd frame in the blob: not an NVIDIA pipeline cache?")
z = unzstd(blob[frame:])
size, off = struct.unpack_from("<II", z, 76)
code = z[8 + off : 8 + off + size]
nvd = shutil.which("nvdisasm") or sorted(glob.glob("/usr/local/cuda*/bin/nvdisasm"))[-1]
tmp = sys.argv[1] + ".bin"
open(tmp, "wb").write(code)
r = subprocess.run([nvd, "--binary", "SM90", tmp], capture_output=True, text=True)
os.remove(tmp)
out = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1].rsplit(".", 1)[0] + ".sass"
open(out, "w").write(r.stdout)
print(f"{out}: {size} bytes of code, {r.stdout.count(chr(10))} lines", r.stderr.strip()[:200])
