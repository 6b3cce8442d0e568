#!/usr/bin/env python3
"""DMA buffers (#13): the check/clear cache-mode table and the udmabuf data path, in one sitting.

Part 1 runs `wpg dmabuf bench [DEVICE] --json` REPS times and prints, per program,
target/cache mode and size, the median seconds, MB/s and the ratio of MB/s to the
memfd reference of the same run (the reference row is measured in every run, so a
ratio always compares one sitting).

Part 2 (only with DEVICE) alternates `wpg bench --backend udmabuf --device DEVICE`
and `wpg bench --backend shm` (the shared-memory reference) REPS times per size and
prints the median payload rates and their paired ratio (udmabuf / the shm run right
before it).

On a host without a DMA buffer device only the memfd rows of part 1 exist. Under
the QEMU test bed (TCG) every figure is emulated: it shows the shape, not speeds.

usage: scripts/dmabuf-bench.py [--reps 5] [--sizes 1MiB,5MiB,10MiB] [--duration 3s]
                               [--frame-sizes 4KiB,1MiB] [--wpg BIN] [DEVICE]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(wpg):
    if wpg:
        return wpg
    out = os.path.join(tempfile.mkdtemp(prefix="wpg-dmabuf-bench-"), "wpg")
    subprocess.run(["go", "build", "-o", out, "./cmd/wpg"], cwd=ROOT, check=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("device", nargs="?", default="")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="1MiB,5MiB,10MiB")
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--frame-sizes", default="4KiB,1MiB")
    ap.add_argument("--wpg", default="")
    a = ap.parse_args()
    wpg = build(a.wpg)
    info = subprocess.run([wpg, "sysinfo"], capture_output=True, text=True).stdout.splitlines()
    print("```")
    print("\n".join(info[:6]))
    print()
    print(" ".join(["scripts/dmabuf-bench.py", "--reps", str(a.reps), "--sizes", a.sizes] + ([a.device] if a.device else [])))
    print()

    cells = {}  # (program, target, osync, mode, sync, size) -> [(secs, mbps, ratio)]
    order = []
    for _ in range(a.reps):
        args = [wpg, "dmabuf", "bench", "--sizes", a.sizes, "--json"] + ([a.device] if a.device else [])
        rep = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        ref = {}
        for row in rep["rows"]:
            if row["target"] == "memfd":
                for c in row["cells"]:
                    ref[(row["program"], c["size"])] = c["mb_per_s"]
        for row in rep["rows"]:
            mode = row.get("sync_mode")
            for c in row["cells"]:
                key = (row["program"], row["target"], row["o_sync"], "-" if mode is None else mode, row["sync"], c["size"])
                if key not in cells:
                    cells[key] = []
                    order.append(key)
                base = ref.get((row["program"], c["size"]))
                cells[key].append((c["seconds"], c["mb_per_s"], c["mb_per_s"] / base if base else float("nan")))
    print("%-10s %-14s %-6s %-9s %-7s %10s %10s %10s %8s" % ("program", "target", "O_SYNC", "sync_mode", "sync", "size", "seconds", "MB/s", "/memfd"))
    for key in order:
        v = cells[key]
        prog, target, osync, mode, sync, size = key
        print("%-10s %-14s %-6s %-9s %-7s %10d %10.4f %10.0f %8.3f" % (prog, target, "yes" if osync else "no", mode, sync, size,
              statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))

    if a.device:
        print()
        print("%-10s %14s %14s %10s" % ("frame", "udmabuf MB/s", "shm MB/s", "udmabuf/shm"))
        for fs in a.frame_sizes.split(","):
            rates = {"udmabuf": [], "shm": []}
            ratios = []
            for _ in range(a.reps):
                got = {}
                for b in ("shm", "udmabuf"):
                    args = [wpg, "bench", "--backend", b, "--size", fs, "--duration", a.duration, "--json"]
                    if b == "udmabuf":
                        args += ["--device", a.device]
                    r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
                    got[b] = r["payload_bytes_per_second"] / 1e6
                    rates[b].append(got[b])
                ratios.append(got["udmabuf"] / got["shm"])
            print("%-10s %14.0f %14.0f %10.3f" % (fs, statistics.median(rates["udmabuf"]), statistics.median(rates["shm"]), statistics.median(ratios)))
    print("```")


if __name__ == "__main__":
    sys.exit(main())
