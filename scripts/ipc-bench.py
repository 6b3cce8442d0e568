#!/usr/bin/env python3
"""Issue #14's speed targets: wpg's default local paths against the plain C technique.

For each target, in one sitting, alternating run by run (medians of --reps, 5 by default):
  shm  at 1 MiB      wpg bench --backend shm (default: in place, --verify on)   vs  stream -t shmring -m copy   goal >= 1.00x
  cma  at 460,800 B  wpg bench --backend cma (default: readv, --verify on)      vs  cma -m readv                goal >= 0.95x
  cma  at 1 MiB      (as above)                                                                                 goal >= 0.95x
  unix at 64 MiB     wpg bench --backend unix (default: --verify on)            vs  stream -t unix -m rw        goal >= 0.95x
Every wpg configuration also runs with --verify off (the same bytes moved, no CRC-32C and two stamps
per frame instead of one per 4 KiB page): the ratio of the two is what verification costs on that path,
and --verify off is what scripts/local-bench.py measures. shm --verify off is also compared with the C
ring's in-place reader (stream -t shmring -m read), its like-for-like technique.

Order within a rep alternates (rep 0: wpg on, C, wpg off; rep 1: wpg off, C, wpg on; ...), so neither
side always runs first; a paired ratio divides a wpg run by the C run of the same rep. A wpg run whose
receiver did not get every frame intact counts as failed (and is left out). The C programs' figure is the
median of their warm iterations (2..4).

The wpg binary is built from the working tree (go build ./cmd/wpg) unless --wpg BIN; the C anchors are
copied from --anchors (../shared/anchors/ipc, read-only) to a temporary directory and built there.

With --max-load L, each target's rep first waits (up to --max-wait seconds, 300 by default) until the
1-minute load average is at most L: wpg's paths keep two processes busy and the C cma and memlocal
programs one, so a loaded machine penalises wpg more than its references (the load is in the output).

usage: scripts/ipc-bench.py [--reps 5] [--duration 3s] [--only shm,cma,unix] [--lock FILE]
                            [--max-load L] [--max-wait S] [--wpg BIN] [--anchors DIR] [--json out.json]
"""
import argparse, importlib.util, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The run helpers (wpg bench with its receiver's verdict, the C anchors' CSV, the lock) are
# scripts/local-bench.py's: one implementation of each.
_spec = importlib.util.spec_from_file_location("local_bench", os.path.join(ROOT, "scripts", "local-bench.py"))
lb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lb)

MiB = 1 << 20
# name, wpg backend, wpg flags, payload size, C reference (local-bench kind), goal for the default
TARGETS = [
    ("shm", "shm", [], MiB, "ring-copy", 1.00),
    ("cma", "cma", [], 460800, "cma", 0.95),
    ("cma", "cma", [], MiB, "cma", 0.95),
    ("unix", "unix", [], 64 * MiB, "unix", 0.95),
]
# Extra C reference per wpg --verify off row (like for like), where it differs.
LIKE_FOR_LIKE = {("shm", MiB): "ring-read"}


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(v, nd=2, unit=""):
    return "–" if v is None else f"{v:.{nd}f}{unit}"


def sysinfo_head(wpg):
    rc, out, _ = lb.run([wpg, "sysinfo"], timeout=60)
    return "\n".join(out.splitlines()[:6]) if rc == 0 else "(wpg sysinfo failed)"


def wait_quiet(limit, max_wait):
    """Waits until the 1-minute load average is at most limit, or max_wait seconds."""
    end = time.time() + max_wait
    while lb.load1() > limit and time.time() < end:
        time.sleep(5)
    if lb.load1() > limit:
        sys.stderr.write(f"load {lb.load1():.2f} still above {limit} after {max_wait:.0f} s: running anyway\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--only", default="", help="comma-separated backends (shm, cma, unix) to run; default all")
    ap.add_argument("--lock", default="", help="flock this file around every rep of a target")
    ap.add_argument("--max-load", type=float, default=0, help="wait before each rep of a target until the 1-minute load is at most this")
    ap.add_argument("--max-wait", type=float, default=300, help="give up waiting for --max-load after this many seconds (and run anyway)")
    ap.add_argument("--wpg", default="", help="measure this wpg binary instead of building the working tree")
    ap.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors", "ipc"))
    ap.add_argument("--json", default="", help="write every run (and the summary) to this file")
    a = ap.parse_args()
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    unknown = only - {t[0] for t in TARGETS}
    if unknown:
        ap.error(f"--only {','.join(sorted(unknown))}: choose from shm, cma, unix")
    targets = [t for t in TARGETS if not only or t[0] in only]

    tmp = tempfile.mkdtemp(prefix="wpg-ipc-bench-")
    try:
        wpg = os.path.abspath(a.wpg) if a.wpg else os.path.join(tmp, "wpg")
        if not a.wpg:
            subprocess.run(["go", "build", "-o", wpg, "./cmd/wpg"], cwd=ROOT, check=True)
        anchors = os.path.join(tmp, "ipc")
        shutil.copytree(a.anchors, anchors)
        subprocess.run(["make", "-s"], cwd=anchors, check=True, stdout=subprocess.DEVNULL)
        report(a, wpg, anchors, targets)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(a, wpg, anchors, targets, runs, loads):
    """Runs every rep of every target, appending to runs and loads."""
    for rep in range(a.reps):
        for name, be, extra, size, ck, _ in targets:
            order = ["on", "C", "off"] if rep % 2 == 0 else ["off", "C", "on"]
            lf = LIKE_FOR_LIKE.get((name, size))
            if lf:
                order.append("C2")
            if a.max_load > 0:
                wait_quiet(a.max_load, a.max_wait)
            with lb.locked(a.lock):
                loads.append(lb.load1())
                for who in order:
                    if who in ("on", "off"):
                        r = lb.wpg_bench(wpg, be, size, a.duration, who, extra)
                    else:
                        r = lb.c_bench(anchors, ck if who == "C" else lf, size)
                    runs.append({"target": name, "size": size, "who": who, "rep": rep,
                                 "gbs": r["gbs"] if r else None, "load1": loads[-1],
                                 "c_kind": ck if who == "C" else (lf if who == "C2" else None)})
        sys.stderr.write(f"rep {rep + 1}/{a.reps} done ({time.strftime('%H:%M:%S')}, load {lb.load1():.2f})\n")


def report(a, wpg, anchors, targets):
    start = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    head = sysinfo_head(wpg)
    runs = []  # every run: target, size, who, verify, rep, gbs, load1
    loads = []
    # Ctrl-C or SIGTERM (a timeout) stops the measuring; the tables then
    # cover the reps done so far.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        measure(a, wpg, anchors, targets, runs, loads)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: reporting the runs done so far\n")
    if not loads:
        return

    def series(name, size, who):
        return {r["rep"]: r["gbs"] for r in runs if r["target"] == name and r["size"] == size and r["who"] == who}

    def paired(x, y):
        return [x[k] / y[k] for k in sorted(x) if x.get(k) and y.get(k)]

    done = len({r["rep"] for r in runs})
    print(f"Sitting {start}, {done} of {a.reps} reps of {a.duration} per run, alternated; "
          f"1-minute load at the reps' start {min(loads):.2f}-{max(loads):.2f} (median {med(loads):.2f}).")
    print("wpg sysinfo:\n" + "\n".join("    " + l for l in head.splitlines()) + "\n")
    print("GB/s of payload; ratio = median of the per-rep ratios wpg ÷ C (same rep).\n")
    print("| path | size | wpg default (verify on) | wpg --verify off | C reference | C | default ÷ C | off ÷ C | goal | default |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    summary = []
    for name, be, extra, size, ck, goal in targets:
        on, off, c = series(name, size, "on"), series(name, size, "off"), series(name, size, "C")
        ron, roff = med(paired(on, c)), med(paired(off, c))
        status = "–" if ron is None else ("met" if ron >= goal else "not met")
        print(f"| {name} | {lb.human(size)} | {fmt(med([v for v in on.values() if v]))} | "
              f"{fmt(med([v for v in off.values() if v]))} | {ck} | {fmt(med([v for v in c.values() if v]))} | "
              f"{fmt(ron, 2, '×')} | {fmt(roff, 2, '×')} | ≥ {goal:.2f}× | {status} |")
        summary.append({"target": name, "size": size, "c": ck, "goal": goal, "ratio_default": ron,
                        "ratio_verify_off": roff, "status": status})

    print("\nWhat verification costs (wpg --verify on ÷ --verify off, per rep; 1.00 = free):\n")
    print("| path | size | on runs (GB/s) | off runs (GB/s) | C runs (GB/s) | on ÷ off per rep | median | cost |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, be, extra, size, ck, goal in targets:
        on, off, c = series(name, size, "on"), series(name, size, "off"), series(name, size, "C")
        rs = paired(on, off)
        m = med(rs)
        cost = "–" if m is None else f"{(1 - m) * 100:.0f} %"
        runs_of = lambda s: " ".join(fmt(s.get(k)) for k in sorted(s))
        print(f"| {name} | {lb.human(size)} | {runs_of(on)} | {runs_of(off)} | {runs_of(c)} | "
              f"{' '.join(f'{x:.2f}' for x in rs)} | {fmt(m, 2, '×')} | {cost} |")
        for s in summary:
            if s["target"] == name and s["size"] == size:
                s["verify_on_over_off"] = m

    for (name, size), lf in LIKE_FOR_LIKE.items():
        if not any(t[0] == name and t[3] == size for t in targets):
            continue
        off, c2 = series(name, size, "off"), series(name, size, "C2")
        print(f"\nLike for like: {name} --verify off (in place, every byte summed) ÷ C {lf} at {lb.human(size)}: "
              f"{fmt(med(paired(off, c2)), 2, '×')} (C {lf} runs: {' '.join(fmt(c2.get(k)) for k in sorted(c2))} GB/s)")
    failed = [r for r in runs if r["gbs"] is None]
    if failed:
        print(f"\n{len(failed)} run(s) failed or were dropped (see stderr): "
              + ", ".join(f"{r['target']} {lb.human(r['size'])} {r['who']} rep {r['rep']}" for r in failed))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"start": start, "sysinfo": head, "reps": a.reps, "duration": a.duration,
                       "runs": runs, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
