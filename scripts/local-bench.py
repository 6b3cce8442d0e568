#!/usr/bin/env python3
"""Local data paths: wpg vs its own memcpy and vs the C references, in one sitting.

Builds wpg and the C anchors (../shared/anchors/ipc, copied to a temporary
directory first), then for every rep runs, interleaved, for each size:
  wpg bench --backend memcpy|shm|shm(copy)|pipe|pipe --vmsplice|cma|unix
  C: memlocal memcpy, stream pipe rw / vmsplice-read, stream shmring copy / read,
     stream unix rw, cma readv
and prints a markdown table of medians with the ratios asked for in issue #5
(to wpg's memcpy and to the C reference of the same technique).

Each wpg configuration runs right before the C program of its technique, so that
a pair sees the same load; with --lock FILE every such pair holds an exclusive
flock on FILE (engineers sharing a machine then never measure at the same time).

After the table of medians it prints, for every wpg configuration and size, the
paired ratios (wpg ÷ the C run right after it, per rep) and their median: the
figure to quote on a noisy machine. --wpg BIN measures a prebuilt wpg (e.g. an
older build, for before/after pairs) instead of building the working tree.

usage: scripts/local-bench.py [--reps 3] [--duration 3s] [--sizes 64,460800,1MiB,64MiB]
                              [--verify off] [--anchors DIR] [--csv out.csv] [--lock FILE]
                              [--only LABELS] [--wpg BIN]
"""
import argparse, contextlib, csv, fcntl, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HDR = 32  # wpg payload header bytes


def parse_size(s):
    s = s.strip()
    for suf, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if s.endswith(suf):
            return int(float(s[: -len(suf)]) * m)
    return int(s)


def human(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    return f"{n:,} B"


def run(cmd, timeout=120):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"timed out after {timeout} s"
    return p.returncode, p.stdout, p.stderr


@contextlib.contextmanager
def locked(path):
    """Holds an exclusive flock on path (no-op when path is empty)."""
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def wpg_bench(wpg, backend, size, duration, verify, extra=()):
    if "--verify" in extra:
        i = list(extra).index("--verify")
        verify, extra = extra[i + 1], list(extra[:i]) + list(extra[i + 2:])
    cmd = [wpg, "bench", "--backend", backend, "--size", str(size), "--duration", duration,
           "--verify", verify, "--json"] + list(extra)
    if backend == "pipe":
        # A receiver child of its own (what wpg bench does by itself too).
        cmd += ["--connect", "auto"]
    rc, out, err = run(cmd)
    if backend == "pipe" and not out.strip().startswith("{"):
        # The report may go to stderr when stdout could carry the frames.
        out = err[err.find("{"):err.rfind("}") + 1]
    try:
        r = json.loads(out)
    except ValueError:
        sys.stderr.write(f"{' '.join(cmd)}: no JSON (rc {rc}): {err.strip()[-400:]}\n")
        return None
    if r.get("error"):
        sys.stderr.write(f"{' '.join(cmd)}: {r['error']}\n")
        return None
    v = r.get("verification") or {}
    if backend != "memcpy" and (v.get("frames") != r["frames"] or v.get("corrupted", 0) or v.get("lost", 0)):
        sys.stderr.write(f"{' '.join(cmd)}: receiver saw {v.get('frames')} of {r['frames']} frames, "
                         f"{v.get('corrupted')} corrupted, {v.get('lost')} lost\n")
        return None
    return {"fps": r["pps"], "gbs": r["bytes"] / r["seconds"] / 1e9}


def c_result(lines, size):
    """Median GB/s of the warm iterations (iter >= 2) of R lines."""
    vals = []
    for l in lines.splitlines():
        f = l.split(",")
        if f[0] == "R" and int(f[6]) >= 2:
            vals.append(float(f[9]))
    if not vals:
        return None
    g = statistics.median(vals)
    return {"gbs": g, "fps": g * 1e9 / size}


def c_bench(anchors, kind, size):
    total = max(size * 64, 64 << 20) if size >= 4096 else 16 << 20
    total = min(total, 1 << 30)
    it = ["-i", "4"]
    if kind == "memcpy":
        cmd = [f"{anchors}/memlocal", "-m", "memcpy", "-s", str(size)] + it
    elif kind in ("pipe", "pipe-vmsplice"):
        m = "rw" if kind == "pipe" else "vmsplice-read"
        cmd = [f"{anchors}/stream", "-t", "pipe", "-m", m, "-c", str(size), "-T", str(total), "-P", "-1"] + it
    elif kind in ("ring-copy", "ring-read"):
        m = "copy" if kind == "ring-copy" else "read"
        cmd = [f"{anchors}/stream", "-t", "shmring", "-m", m, "-c", str(size), "-T", str(total)] + it
    elif kind == "unix":
        cmd = [f"{anchors}/stream", "-t", "unix", "-m", "rw", "-c", str(size), "-T", str(total), "-S", str(4 << 20)] + it
    elif kind == "cma":
        if size < 4096:
            return None  # the C reference moves one buffer per call; no frames/s figure
        cmd = [f"{anchors}/cma", "-m", "readv", "-s", str(size)] + it
    else:
        raise ValueError(kind)
    rc, out, err = run(cmd)
    if rc != 0:
        sys.stderr.write(f"{' '.join(cmd)}: rc {rc}: {err.strip()[-300:]}\n")
        return None
    return c_result(out, size)


# wpg configuration -> (backend, extra flags, C reference of the same technique)
WPG = [
    ("memcpy", "memcpy", [], "memcpy"),
    # In place with verification on: the receiver reads every byte (CRC-32C);
    # with --verify off it would read only headers and stamps.
    ("shm (in place, verify on)", "shm", ["--verify", "on"], "ring-copy"),
    ("shm (copy out)", "shm", ["--recv-mode", "copy"], "ring-copy"),
    # Like for like with the C ring's in-place reader (an AVX-512 sum of every
    # byte): with --verify off wpg's in-place receiver sums every byte too.
    ("shm (in place)", "shm", [], "ring-read"),
    ("pipe", "pipe", [], "pipe"),
    ("pipe --vmsplice", "pipe", ["--vmsplice"], "pipe-vmsplice"),
    ("cma", "cma", [], "cma"),
    ("unix", "unix", [], "unix"),
]
C_KINDS = ["memcpy", "ring-copy", "ring-read", "pipe", "pipe-vmsplice", "cma", "unix"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--sizes", default="64,460800,1MiB,64MiB")
    ap.add_argument("--verify", default="off", help="wpg --verify for the comparison runs (the C programs do not verify while timing)")
    ap.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors", "ipc"))
    ap.add_argument("--csv", default="")
    ap.add_argument("--only", default="", help="comma-separated wpg labels or C kinds to run (default all)")
    ap.add_argument("--lock", default="", help="flock this file around every wpg/C pair")
    ap.add_argument("--wpg", default="", help="use this wpg binary instead of building the working tree")
    a = ap.parse_args()
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    # Labels contain commas inside parentheses ("shm (in place, verify on)"):
    # split only on the others.
    only = set(x.strip() for x in re.split(r",(?![^(]*\))", a.only) if x.strip())

    tmp = tempfile.mkdtemp(prefix="wpg-local-bench-")
    wpg = os.path.abspath(a.wpg) if a.wpg else os.path.join(tmp, "wpg")
    if not a.wpg:
        subprocess.run(["go", "build", "-o", wpg, "./cmd/wpg"], cwd=ROOT, check=True)
    anchors = os.path.join(tmp, "ipc")
    shutil.copytree(a.anchors, anchors)
    subprocess.run(["make", "-s"], cwd=anchors, check=True, stdout=subprocess.DEVNULL)

    res = {}  # (who, size) -> list of {fps, gbs}
    paired = {}  # (wpg label, size) -> list of (wpg, C) per rep, same lock
    rows = []
    loads = []
    # The pairs: every wpg configuration with the C program of its technique
    # (a C program shared by two configurations runs once, with the first).
    pairs, seen = [], set()
    for label, be, extra, ck in WPG:
        pairs.append(((label, be, extra), ck if ck not in seen else None))
        seen.add(ck)
    pairs += [(None, k) for k in C_KINDS if k not in seen]
    for rep in range(a.reps):
        for size in sizes:
            for w, ck in pairs:
                if w and only and w[0] not in only:
                    w = None
                if ck and only and ck not in only:
                    ck = None
                if not w and not ck:
                    continue
                with locked(a.lock):
                    loads.append(load1())
                    wrow = crow = None
                    if w:
                        r = wpg_bench(wpg, w[1], size, a.duration, a.verify, w[2])
                        if r:
                            res.setdefault(("wpg " + w[0], size), []).append(r)
                            wrow = ["wpg", w[0], size, rep, r["fps"], r["gbs"], loads[-1]]
                            rows.append(wrow)
                    if ck:
                        r = c_bench(anchors, ck, size)
                        if r:
                            res.setdefault(("C " + ck, size), []).append(r)
                            crow = ["C", ck, size, rep, r["fps"], r["gbs"], loads[-1]]
                            rows.append(crow)
                    if wrow and crow:
                        paired.setdefault((w[0], size), []).append((wrow, crow))
            sys.stderr.write(f"rep {rep + 1}/{a.reps} size {size} done ({time.strftime('%H:%M:%S')}, load {load1():.2f})\n")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["impl", "what", "size", "rep", "frames_per_s", "gb_per_s", "load1"])
            w.writerows(rows)

    def med(key, field):
        v = res.get(key)
        return statistics.median(x[field] for x in v) if v else None

    def fmt(v, field):
        if v is None:
            return "–"
        return f"{v / 1e6:.2f} M/s" if field == "fps" else f"{v:.2f} GB/s"

    def ratio(a_, b_):
        return f"{a_ / b_:.2f}×" if a_ and b_ else "–"

    print(f"wpg --verify {a.verify}, medians of {a.reps} reps; wpg sizes are payload bytes (+{HDR}-byte header per frame); "
          f"1-minute load average at the pairs' start {min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f})\n")
    print("| path | size | wpg | ÷ wpg memcpy | C reference (same technique) | C | wpg ÷ C |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, _, _, ck in WPG:
        for size in sizes:
            field = "fps" if size < 4096 else "gbs"
            w = med(("wpg " + label, size), field)
            m = med(("wpg memcpy", size), field)
            c = med(("C " + ck, size), field)
            print(f"| {label} | {human(size)} | {fmt(w, field)} | {ratio(w, m) if label != 'memcpy' else '1'} | {ck} | {fmt(c, field)} | {ratio(w, c)} |")
    print("\nPaired ratios (wpg ÷ the C run right after it, under the same lock), per rep, and their median:\n")
    print("| path | size | wpg runs | C runs | paired ratios | median ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, _, _, ck in WPG:
        for size in sizes:
            ps = paired.get((label, size))
            if not ps:
                continue
            field = 4 if size < 4096 else 5
            unit = (lambda v: f"{v / 1e6:.2f}") if size < 4096 else (lambda v: f"{v:.2f}")
            rs = [wr[field] / cr[field] for wr, cr in ps]
            print(f"| {label} | {human(size)} | {' '.join(unit(wr[field]) for wr, _ in ps)} | "
                  f"{' '.join(unit(cr[field]) for _, cr in ps)} | {' '.join(f'{x:.2f}' for x in rs)} | "
                  f"{statistics.median(rs):.2f}× |")
    print("\nC references also measured (same sitting):")
    for size in sizes:
        field = "fps" if size < 4096 else "gbs"
        print(f"- {human(size)}: " + ", ".join(f"{k} {fmt(med(('C ' + k, size), field), field)}" for k in C_KINDS))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
