#!/usr/bin/env python3
"""Segment scaling (issue #25): N segments of one job, each a wpg send
process pinned to a core of its own, against one segment (the whole job)
on one core, on the null backend (the generator's own bound, no path in
the way).

Each round runs the whole job on CPU 0 for DURATION seconds, then the N
segments at once (segment i on CPU i), alternating, REPS rounds. The
segments' rate is their merged report's (wpg report merge: frames over
the union of their time spans). The script prints every round, the load
average before and after, and the median ratio N segments / one; and, for
a machine whose cores are not free (other work takes turns on them), the
same ratio per CPU-second of the sending threads (each run's frames over
its cpu_seconds, summed over the segments): what N cores of their own
would give if nothing but the CPU is shared.

  scripts/segments-bench.py --wpg ./wpg --segments 2 --reps 7 --duration 5
  scripts/segments-bench.py --wpg ./wpg --segments 3 --reps 7 --duration 5   # needs 3 free cores

Targets (docs/perf.md): 3 segments >= 2.7x one where three cores are free;
2 segments pinned to 2 cores >= 1.8x one.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile


def send(wpg, template, duration, cpu, segment=None):
    args = [wpg, "send", "--backend", "null", "--duration", f"{duration}s", "--pin-core", str(cpu), "--json"]
    if template:
        args.insert(2, template)
    if segment:
        args += ["--segment", segment]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p):
    out, err = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"wpg send: exit {p.returncode}: {err}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", default="./wpg")
    ap.add_argument("--template", default="", help="template (default: the embedded 64-byte UDP one)")
    ap.add_argument("--segments", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--duration", type=float, default=5)
    a = ap.parse_args()
    if a.segments > os.cpu_count():
        raise SystemExit(f"{a.segments} segments need {a.segments} cores; this machine has {os.cpu_count()}")
    print(f"load average before: {os.getloadavg()}")
    ratios, cpu_ratios = [], []
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.reps):
            rep = json.loads(finish(send(a.wpg, a.template, a.duration, 0)))
            one, one_cpu = rep["pps"], rep["frames"] / rep["cpu_seconds"]
            procs = [send(a.wpg, a.template, a.duration, i, f"{i}/{a.segments}") for i in range(a.segments)]
            files = []
            seg_cpu = 0
            for i, p in enumerate(procs):
                f = os.path.join(d, f"seg{i}.json")
                out = finish(p)
                seg = json.loads(out)
                seg_cpu += seg["frames"] / seg["cpu_seconds"]
                with open(f, "w") as fh:
                    fh.write(out)
                files.append(f)
            m = subprocess.run([a.wpg, "report", "merge", *files], check=True, capture_output=True, text=True)
            merged = json.loads(m.stdout)["pps"]
            ratios.append(merged / one)
            cpu_ratios.append(seg_cpu / one_cpu)
            print(f"round {r + 1}: one segment {one / 1e6:.2f} Mpps, {a.segments} segments {merged / 1e6:.2f} Mpps: {merged / one:.2f}x; "
                  f"per CPU-second {one_cpu / 1e6:.2f} and {seg_cpu / 1e6:.2f} M frames: {seg_cpu / one_cpu:.2f}x", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(f"median {statistics.median(ratios):.2f}x ({a.segments} segments over one; min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    print(f"median per CPU-second {statistics.median(cpu_ratios):.2f}x (min {min(cpu_ratios):.2f}x, max {max(cpu_ratios):.2f}x)")


if __name__ == "__main__":
    main()
