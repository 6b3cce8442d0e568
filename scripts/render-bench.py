#!/usr/bin/env python3
"""The sitting of issue #27 (varied traffic at full speed), one script.

  sudo scripts/render-bench.py                         # builds this tree and the session-start build (21b6e23)
  sudo scripts/render-bench.py --rounds 7 --seconds 10 --cpu 1
  sudo scripts/render-bench.py --wpg /tmp/wpg-new --base /tmp/wpg-base --groups net_null

Groups (--groups), each run alternating (A B C A B C ...), medians:

  net_null: on DPDK's net_null sink, one sending core each (--cpu; testpmd's main
            lcore on the other CPU, idle), 64-byte frames: dpdk-testpmd
            --forward-mode=txonly, plain and --txonly-multi-flow (the IPv4 source
            varying per frame), against wpg --backend dpdk sending a static
            template (one prerendered frame), the default template (prerendered),
            one incrementing IPv4 source (--plan stream) and one random IPv4 source
            (--plan stream). Targets: streamed incrementing >= 1.0x multi-flow,
            streamed random >= 0.9x multi-flow, static and prerendered >= 1.2x
            plain txonly.
  null:     wpg --backend null, one worker pinned to --cpu, this build against the
            base build: one random field (--plan stream), examples/mixed.wpg.yaml
            (plan auto); with --all also one incrementing field, four varied
            fields and a tuple of 1M flows (all --plan stream). Targets: random
            >= 1.4x, mixed >= 1.3x the base.

The templates are template/testdata/varied/*.wpg.yaml and examples/mixed.wpg.yaml.
Rates are the reports' pps (wpg) and testpmd's per-second Tx-pps (median of the
run's seconds); "per CPU-s" divides the frames by the sending thread's CPU time,
which holds up when a thread gets only part of its core. Needs root,
dpdk-testpmd (Debian's dpdk or dpdk-dev), libdpdk-dev and libpcap-dev for the
builds. Only DPDK virtual devices, no hugepages (scripts/dpdk-bench.py's EAL
arguments, whose helpers this script uses). Prints `wpg sysinfo`'s first lines,
the commands, and a Markdown table for docs/perf.md.
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("dpdk_bench", os.path.join(ROOT, "scripts", "dpdk-bench.py"))
db = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(db)

VARIED = os.path.join(ROOT, "template", "testdata", "varied")
MIXED = os.path.join(ROOT, "examples", "mixed.wpg.yaml")
BASE_REV = "21b6e23"  # the build issue #27's work started from


def tmpl(name):
    return os.path.join(VARIED, name + ".wpg.yaml")


def table(rows, res, skip):
    """rows: [(group, name, ref name or None, target or None)]; the median
    rate and frames per CPU-second of each, their ratios to the row's ref."""
    med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for n, v in res.items() if v}
    out = ["| group | contender | median rate | vs | ratio | frames per CPU-s | ratio | target | spread |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for group, name, ref, target in rows:
        v = res.get(name)
        if not v:
            out.append(f"| {group} | {name} | n/a | | | | | | {skip.get(name, '')[:100]} |")
            continue
        pps, per_cpu = med[name]
        r1 = r2 = verdict = ""
        if ref in med:
            r1 = f"{pps / med[ref][0]:.2f}x"
            r2 = f"{per_cpu / med[ref][1]:.2f}x" if med[ref][1] else ""
            if target:
                verdict = f">= {target:.1f}x: {'met' if pps / med[ref][0] >= target else 'NOT met'}"
        lo, hi = min(x[0] for x in v), max(x[0] for x in v)
        out.append(f"| {group} | {name} | {pps / 1e6:.3f} Mpps | {ref or ''} | {r1} | {per_cpu / 1e6:.2f} M | {r2} | {verdict} | {len(v)} runs, {lo / 1e6:.2f}-{hi / 1e6:.2f} Mpps |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", help="this tree's wpg built with -tags pcap,dpdk (default: build one)")
    ap.add_argument("--base", help="the base build (default: build it from --base-rev)")
    ap.add_argument("--base-rev", default=BASE_REV, help=f"the revision the base is built from (default {BASE_REV}, git archive)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=1, help="the CPU each contender's sending core runs on")
    ap.add_argument("--groups", default="net_null,null")
    ap.add_argument("--all", action="store_true", help="the null group also runs inc1, four and tuple1m")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("render-bench.py: run as root (DPDK)")
    groups = a.groups.split(",")
    if "net_null" in groups and not shutil.which("dpdk-testpmd"):
        sys.exit("render-bench.py: needs dpdk-testpmd: apt-get install dpdk-dev")
    tmp = tempfile.mkdtemp(prefix="wpg-render-bench-")
    try:
        wpg = a.wpg or os.path.join(tmp, "wpg")
        if not a.wpg:
            db.build(wpg)
        base = a.base
        if not base and "null" in groups:
            base = db.build_rev(a.base_rev, tmp)
        main_cpu = 0 if a.cpu != 0 else 1
        print("```")
        print("\n".join(db.sh(wpg, "sysinfo").stdout.splitlines()[:6]))
        print("```")
        print(f"`{' '.join(sys.argv)}`: {a.rounds} rounds of {a.seconds} s, alternating; sending core on CPU {a.cpu}; "
              f"wpg {wpg}, base {base or 'n/a'} ({a.base_rev if not a.base else 'given'}); load before: {open('/proc/loadavg').read().split()[0]}\n")
        eal = f"{db.EAL} --vdev net_null0 -l {main_cpu}"
        dpdk = ["--backend", "dpdk", "--dpdk-args", eal, "-i", "0"]
        contenders, rows = [], []
        if "net_null" in groups:
            contenders += [
                ("testpmd txonly", lambda: db.testpmd_run("net_null0", a.seconds, a.cpu, main_cpu)),
                ("testpmd txonly-multi-flow", lambda: db.testpmd_run("net_null0", a.seconds, a.cpu, main_cpu, ["--txonly-multi-flow"])),
                ("wpg static", lambda: db.wpg_run(wpg, [tmpl("static")] + dpdk, a.seconds, a.cpu)),
                ("wpg prerendered", lambda: db.wpg_run(wpg, dpdk + ["--size", "64"], a.seconds, a.cpu)),
                ("wpg inc1 stream", lambda: db.wpg_run(wpg, [tmpl("inc1"), "--plan", "stream"] + dpdk, a.seconds, a.cpu)),
                ("wpg rand1 stream", lambda: db.wpg_run(wpg, [tmpl("rand1"), "--plan", "stream"] + dpdk, a.seconds, a.cpu)),
            ]
            rows += [("net_null", "testpmd txonly", None, None), ("net_null", "testpmd txonly-multi-flow", "testpmd txonly", None),
                     ("net_null", "wpg static", "testpmd txonly", 1.2), ("net_null", "wpg prerendered", "testpmd txonly", 1.2),
                     ("net_null", "wpg inc1 stream", "testpmd txonly-multi-flow", 1.0),
                     ("net_null", "wpg rand1 stream", "testpmd txonly-multi-flow", 0.9)]
        if "null" in groups:
            cases = [("rand1", [tmpl("rand1"), "--plan", "stream"], 1.4), ("mixed", [MIXED], 1.3)]
            if a.all:
                cases += [(c, [tmpl(c), "--plan", "stream"], None) for c in ("inc1", "four", "tuple1m")]
            for name, args, target in cases:
                contenders += [
                    (f"base {name}", lambda args=args: db.wpg_run(base, args + ["--backend", "null"], a.seconds, a.cpu)),
                    (f"wpg {name}", lambda args=args: db.wpg_run(wpg, args + ["--backend", "null"], a.seconds, a.cpu)),
                ]
                rows += [("null", f"base {name}", None, None), ("null", f"wpg {name}", f"base {name}", target)]
        res, skip = db.alternate(contenders, a.rounds)
        print("\n".join(table(rows, res, skip)))
        print(f"\nload after: {open('/proc/loadavg').read().split()[0]}")
    finally:
        db.cleanup(tmp)


if __name__ == "__main__":
    main()
