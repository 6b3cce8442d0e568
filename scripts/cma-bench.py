#!/usr/bin/env python3
"""cma against the C loop (#14, session 6): wpg's verified default and --verify off, one or two builds,
against `cma -m readv` (the reference of issue #14) and `cma -m readv -H` (the same loop on transparent
huge pages, which wpg's cma buffers use since session 6), at 460,800 B and 1 MiB.

Every rep runs each configuration once, in an order that rotates from rep to rep; a paired ratio divides
a wpg run by the C run of the same rep. Medians of --reps (5). A wpg run whose receiver did not get every
frame intact counts as failed (left out). The C figure is the median of its warm iterations (2..4).

  scripts/cma-bench.py --wpg BIN [--before BIN] [--reps 5] [--duration 3s] [--sizes 460800,1MiB]
                       [--prefix 'chrt -f 1'] [--max-load L] [--json out.json]

--prefix runs every program under a command (e.g. `chrt -f 1` on a machine that others load: both sides
get the same priority); the figures of issue #14 are taken without it, on a quiet machine.
"""
import argparse, importlib.util, json, os, shlex, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("local_bench", os.path.join(ROOT, "scripts", "local-bench.py"))
lb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lb)


def c_cma(anchors, size, thp, prefix):
    cmd = prefix + [f"{anchors}/cma", "-m", "readv", "-s", str(size), "-i", "4"] + (["-H"] if thp else [])
    rc, out, err = lb.run(cmd)
    if rc != 0:
        sys.stderr.write(f"{' '.join(cmd)}: rc {rc}: {err.strip()[-300:]}\n")
        return None
    r = lb.c_result(out, size)
    return r and r["gbs"]


def wpg_cma(wpg, size, duration, verify, prefix):
    if not prefix:
        r = lb.wpg_bench(wpg, "cma", size, duration, verify)
        return r and r["gbs"]
    cmd = prefix + [wpg, "bench", "--backend", "cma", "--size", str(size), "--duration", duration,
                    "--verify", verify, "--json"]
    rc, out, err = lb.run(cmd)
    try:
        j = json.loads(out)
    except ValueError:
        sys.stderr.write(f"{' '.join(cmd)}: no JSON (rc {rc}): {err.strip()[-300:]}\n")
        return None
    v = j.get("verification") or {}
    if j.get("error") or v.get("frames") != j.get("frames") or v.get("corrupted", 0) or v.get("lost", 0):
        sys.stderr.write(f"{' '.join(cmd)}: failed or frames not intact: {j.get('error') or v}\n")
        return None
    return j["bytes"] / j["seconds"] / 1e9


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f2(v):
    return "–" if v is None else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", required=True, help="the wpg build to measure (after)")
    ap.add_argument("--before", default="", help="a second build (before), alternated with --wpg")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--sizes", default="460800,1MiB")
    ap.add_argument("--prefix", default="", help="run every program under this command, e.g. 'chrt -f 1'")
    ap.add_argument("--max-load", type=float, default=0, help="before each rep wait (up to 300 s) for the 1-minute load to drop to this")
    ap.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors", "ipc"))
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    prefix = shlex.split(a.prefix)
    sizes = [lb.parse_size(s) for s in a.sizes.split(",")]
    builds = [("after", a.wpg)] + ([("before", a.before)] if a.before else [])
    tmp = tempfile.mkdtemp(prefix="wpg-cma-bench-")
    try:
        anchors = os.path.join(tmp, "ipc")
        shutil.copytree(a.anchors, anchors)
        subprocess.run(["make", "-s"], cwd=anchors, check=True, stdout=subprocess.DEVNULL)
        runs = []
        for size in sizes:
            confs = [("C", None), ("C -H", None)] + [(f"{b} {v}", (bin_, v)) for b, bin_ in builds for v in ("on", "off")]
            for rep in range(a.reps):
                if a.max_load:
                    end = time.time() + 300
                    while lb.load1() > a.max_load and time.time() < end:
                        time.sleep(5)
                k = rep % len(confs)
                row = {"size": size, "rep": rep, "load": lb.load1()}
                for name, c in confs[k:] + confs[:k]:
                    if c is None:
                        row[name] = c_cma(anchors, size, name == "C -H", prefix)
                    else:
                        row[name] = wpg_cma(c[0], size, a.duration, c[1], prefix)
                runs.append(row)
                sys.stderr.write(f"{size} rep {rep}: " + " ".join(f"{n}={f2(row[n])}" for n, _ in confs) + "\n")
        print(f"cma, GB/s of payload, medians of {a.reps} reps; ratios are medians of per-rep ratios"
              + (f"; every program under `{a.prefix}`" if a.prefix else ""))
        print()
        print("| build | size | verified (default) | --verify off | C `cma -m readv` | C `-H` | default ÷ C | off ÷ C | default ÷ C -H | on ÷ off |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        summary = []
        for size in sizes:
            rs = [r for r in runs if r["size"] == size]
            for b, _ in builds:
                def ratio(x, y):
                    return med([r[x] / r[y] if r[x] and r[y] else None for r in rs])
                s = {"build": b, "size": size, "on": med([r[f"{b} on"] for r in rs]), "off": med([r[f"{b} off"] for r in rs]),
                     "c": med([r["C"] for r in rs]), "c_thp": med([r["C -H"] for r in rs]),
                     "on_c": ratio(f"{b} on", "C"), "off_c": ratio(f"{b} off", "C"),
                     "on_cthp": ratio(f"{b} on", "C -H"), "on_off": ratio(f"{b} on", f"{b} off")}
                summary.append(s)
                print(f"| {b} | {size:,} B | {f2(s['on'])} | {f2(s['off'])} | {f2(s['c'])} | {f2(s['c_thp'])} | "
                      f"**{f2(s['on_c'])}×** | {f2(s['off_c'])}× | {f2(s['on_cthp'])}× | {f2(s['on_off'])} |")
        print()
        print("Per rep (GB/s):")
        for r in runs:
            print(f"  {r['size']:>8} rep {r['rep']} load {r['load']:.1f}: " +
                  " ".join(f"{k}={f2(v)}" for k, v in r.items() if k not in ("size", "rep", "load")))
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"runs": runs, "summary": summary, "prefix": a.prefix}, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
