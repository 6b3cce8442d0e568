#!/usr/bin/env python3
"""One sitting of the AF_PACKET baseline (issue 3, docs/perf.md, AF_PACKET baseline).

Runs, alternating run by run, `wpg bench` (null; afpacket TX ring with
--batch 64/128/256/512, with and without --qdisc-bypass; --no-tx-ring) and
netsniff-ng's trafgen (qdisc bypass is trafgen's default; -q goes through
the qdisc) on lo and on a veth pair whose two ends live in two network
namespaces this script creates and deletes (the tools run in the first:
nothing is created in the root namespace). Every tool runs on the same CPU (taskset) for
the same duration; each figure is the median of REPS runs. Besides the
rate it records the CPU time (user+sys) of each run, since on a shared
machine frames per CPU-second compare tools more fairly than frames per
wall-second.

trafgen runs with -Q (leave IRQ affinity alone; lo and veth have no IRQs
anyway). Needs root (CAP_NET_RAW, CAP_NET_ADMIN), trafgen (apt-get install
netsniff-ng) and a wpg binary. Never touches any interface but lo and the
veth it creates.

  scripts/afpacket-bench.py --wpg ./wpg --duration 10 --reps 3 > table.md
  scripts/afpacket-bench.py --quick          # 2 s, 1 rep: smoke run
  scripts/afpacket-bench.py --sizes 1500 --only 'bypass$|ring-depth|trafgen \(' --reps 1   # one repetition of a few
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The sender's namespace (OUTER) and the peer's (INNER).
NS_TX, NS, OUTER, INNER = "wpgbench-tx", "wpgbench", "wpgb0", "wpgb1"


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def setup_veth():
    teardown_veth()
    sh("ip", "netns", "add", NS_TX)
    sh("ip", "netns", "add", NS)
    sh("ip", "-n", NS_TX, "link", "add", OUTER, "type", "veth", "peer", "name", INNER, "netns", NS)
    sh("ip", "-n", NS_TX, "link", "set", OUTER, "up")
    sh("ip", "-n", NS, "link", "set", INNER, "up")


def teardown_veth():
    sh("ip", "netns", "del", NS_TX, check=False)  # deletes the veth pair with it
    sh("ip", "netns", "del", NS, check=False)


def netns(iface):
    """The command prefix that runs a tool where iface lives."""
    return ["ip", "netns", "exec", NS_TX] if iface == OUTER else []


def trafgen_ref(label):
    """The trafgen configuration a wpg configuration is compared with: the
    same number of CPUs and the same qdisc path."""
    if "2 workers" in label:
        return "trafgen -P 2 (2 CPUs)"
    if "--qdisc-bypass" in label:
        return "trafgen (qdisc bypass, its default)"
    return "trafgen -q (through the qdisc)"


def trafgen_cfg(size):
    """A UDP/IPv4 frame of size bytes (no FCS), like wpg's default template."""
    ip_len = size - 14
    udp_len = ip_len - 20
    payload = udp_len - 8
    return (
        "{\n"
        "  0x02,0x00,0x00,0x00,0x00,0x02, 0x02,0x00,0x00,0x00,0x00,0x01, c16(0x0800),\n"
        f"  0x45, 0x00, c16({ip_len}), c16(1), c16(0), 64, 17, csumip(14, 33),\n"
        "  198,18,0,1, 198,19,0,1,\n"
        f"  c16(1000), c16(5001), c16({udp_len}), c16(0),\n"
        f"  fill(0xa5, {payload})\n"
        "}\n"
    )


def timed(cmd):
    """Run cmd under /usr/bin/time; return (stdout, stderr, cpu seconds)."""
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S"] + cmd, capture_output=True, text=True)
    m = re.search(r"TIME ([0-9.]+) ([0-9.]+)", p.stderr)
    cpu = float(m.group(1)) + float(m.group(2)) if m else float("nan")
    return p.stdout, p.stderr, cpu, p.returncode


def run_wpg(a, iface, size, extra):
    cmd = netns(iface) + ["taskset", "-c", str(a.cpu), a.wpg, "bench", "--duration", f"{a.duration}s", "--json"]
    if iface:
        cmd += ["--backend", "afpacket", "-i", iface]
    else:
        cmd += ["--backend", "null"]
    if size != 64:
        cmd += ["--size", str(size)]
    cmd += extra
    out, err, cpu, rc = timed(cmd)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {rc}: {err}")
    r = json.loads(out)
    return r["pps"], r["frames"], cpu, r.get("backend", {}).get("mode", "")


def run_trafgen(a, iface, cfg, extra, cpus=1):
    cmd = netns(iface) + ["timeout", "-s", "INT", str(a.duration), "taskset", "-c", a.cpus_trafgen if cpus > 1 else str(a.cpu),
           "trafgen", "-o", iface, "-i", cfg, "-P", str(cpus), "-Q"] + extra
    out, err, cpu, rc = timed(cmd)
    m = re.search(r"(\d+) packets outgoing", out + err)
    if not m:
        raise SystemExit(f"{' '.join(cmd)}: no packet count in output: {out} {err}")
    frames = int(m.group(1))
    return frames / a.duration, frames, cpu, "trafgen"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", default="./wpg")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0,
                    help="CPU every single-CPU run is pinned to. trafgen -P 1 pins itself to CPU 0 whatever "
                         "taskset says (its report: 'on CPU0'), so wpg runs there too by default (before session 3 "
                         "wpg ran on CPU 1 and trafgen on CPU 0)")
    ap.add_argument("--ifaces", default="lo,veth")
    ap.add_argument("--sizes", default="64,1500", help="frame sizes to run (64, 1500)")
    ap.add_argument("--only", help="run only the configurations whose label matches this regular expression")
    ap.add_argument("--settle", type=float, default=5,
                    help="seconds to wait before the first run: the kernel tears a deleted namespace down in the "
                         "background (cleanup_net), and an earlier invocation's teardown slowed the first runs "
                         "of the next one (2.15 vs 2.37 Mpps, lo 64 B, in a check)")
    ap.add_argument("--quick", action="store_true", help="2 s, 1 repetition")
    ap.add_argument("--json", help="also write every run to this file")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="run nothing: print the tables of the runs in these --json files (each file's repetitions "
                         "paired within that file), so that a sitting can be taken in short pieces, e.g. one "
                         "repetition of one interface per invocation")
    ap.add_argument("--focus", action="store_true",
                    help="only the headline pairs (64 B ring --batch 256 with/without --qdisc-bypass, trafgen "
                         "with/without -q, 1500 B --plan stream, 2 workers), for more repetitions")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.reps = 2, 1
    if a.merge:
        runs = []
        for i, path in enumerate(a.merge):
            with open(path) as f:
                for r in json.load(f):
                    r["rep"] = f"{i}.{r['rep']}"
                    runs.append(r)
        a.duration = runs[0].get("duration", a.duration)
        a.json = None
        results = {}
        for r in runs:
            results.setdefault((r["iface"], r["config"], r["size"]), []).append((r["pps"], r["cpu_seconds"]))
        report(a, results, runs)
        return
    a.cpus_trafgen = "0,1"
    if os.geteuid() != 0:
        raise SystemExit("needs root: CAP_NET_RAW and CAP_NET_ADMIN (veth, netns)")

    tmp = tempfile.mkdtemp(prefix="wpg-afbench-")
    cfgs = {}
    for size in (64, 1500):
        cfgs[size] = os.path.join(tmp, f"udp{size}.cfg")
        with open(cfgs[size], "w") as f:
            f.write(trafgen_cfg(size))

    # (label, kind, size, extra args, workers)
    configs = [("null", "wpg-null", 64, [], 1), ("null", "wpg-null", 1500, [], 1)]
    for size in (64, 1500):
        batches = (64, 128, 256, 512) if size == 64 else (256,)
        for b in batches:
            configs.append((f"wpg ring --batch {b}", "wpg", size, ["--batch", str(b)], 1))
            configs.append((f"wpg ring --batch {b} --qdisc-bypass", "wpg", size, ["--batch", str(b), "--qdisc-bypass"], 1))
        if size == 1500:
            # --plan auto prerenders one period of the port (64512 frames,
            # kept as one image + 16 bytes per frame); streaming patches
            # the fields. --ring-depth 256 is trafgen's ring (256 slots of
            # 2 KiB, 512 KiB: cache-resident) instead of 4096 (8 MiB).
            configs.append(("wpg ring --batch 256 --qdisc-bypass --plan stream", "wpg", size,
                            ["--batch", "256", "--qdisc-bypass", "--plan", "stream"], 1))
            configs.append(("wpg ring --batch 256 --qdisc-bypass --ring-depth 256", "wpg", size,
                            ["--batch", "256", "--qdisc-bypass", "--ring-depth", "256"], 1))
            # Ring pages as fragments, as trafgen sends them (wpg's
            # default on lo and veth is a copy into the skb head).
            configs.append(("wpg ring --batch 256 --qdisc-bypass --tx-copy frags", "wpg", size,
                            ["--batch", "256", "--qdisc-bypass", "--tx-copy", "frags"], 1))
            configs.append(("wpg ring --batch 256 --qdisc-bypass --tx-copy frags --ring-depth 256", "wpg", size,
                            ["--batch", "256", "--qdisc-bypass", "--tx-copy", "frags", "--ring-depth", "256"], 1))
        configs.append(("wpg --no-tx-ring --batch 256", "wpg", size, ["--no-tx-ring", "--batch", "256"], 1))
        configs.append(("wpg --no-tx-ring --batch 256 --qdisc-bypass", "wpg", size, ["--no-tx-ring", "--batch", "256", "--qdisc-bypass"], 1))
        configs.append(("trafgen (qdisc bypass, its default)", "trafgen", size, [], 1))
        configs.append(("trafgen -q (through the qdisc)", "trafgen", size, ["-q"], 1))
    configs.append(("wpg ring --batch 256 --qdisc-bypass, 2 workers", "wpg", 64,
                    ["--batch", "256", "--qdisc-bypass", "--workers", "2", "--pin-cores", "0,1"], 2))
    configs.append(("trafgen -P 2 (2 CPUs)", "trafgen", 64, [], 2))

    if a.focus:
        keep = {"wpg ring --batch 256", "wpg ring --batch 256 --qdisc-bypass",
                "wpg ring --batch 256 --qdisc-bypass --plan stream",
                "wpg ring --batch 256 --qdisc-bypass --ring-depth 256",
                "wpg ring --batch 256 --qdisc-bypass --tx-copy frags",
                "wpg ring --batch 256 --qdisc-bypass --tx-copy frags --ring-depth 256",
                "trafgen (qdisc bypass, its default)", "trafgen -q (through the qdisc)",
                "wpg ring --batch 256 --qdisc-bypass, 2 workers", "trafgen -P 2 (2 CPUs)"}
        configs = [c for c in configs if c[0] in keep and not (c[2] == 1500 and c[0] == "wpg ring --batch 256")]
    sizes = {int(x) for x in a.sizes.split(",")}
    configs = [c for c in configs if c[2] in sizes and (not a.only or re.search(a.only, c[0]))]
    ifaces = a.ifaces.split(",")
    results = {}  # (iface, label, size) -> list of (pps, cpu)
    runs = []
    try:
        if "veth" in ifaces:
            setup_veth()
        time.sleep(a.settle)
        for rep in range(a.reps):
            for iface in ifaces:
                dev = OUTER if iface == "veth" else iface
                for label, kind, size, extra, workers in configs:
                    try:
                        one_run(a, rep, iface, dev, label, kind, size, extra, workers, cfgs, results, runs, ifaces)
                    except SystemExit as e:  # a failed run is reported, the sitting goes on
                        print(f"rep {rep} {iface} {size} {label}: FAILED: {e}", file=sys.stderr, flush=True)
    finally:
        if "veth" in ifaces:
            teardown_veth()
    report(a, results, runs)


def one_run(a, rep, iface, dev, label, kind, size, extra, workers, cfgs, results, runs, ifaces):
    if kind == "wpg-null":
        if iface != ifaces[0]:
            return
        key = ("-", label, size)
        pps, frames, cpu, mode = run_wpg(a, None, size, extra)
    elif kind == "wpg":
        key = (iface, label, size)
        cmd_extra = extra
        if workers > 1:
            # 2 workers need 2 CPUs: no taskset to one CPU.
            out, err, cpu, rc = timed(netns(dev) + [a.wpg, "bench", "--backend", "afpacket", "-i", dev,
                                       "--duration", f"{a.duration}s", "--json"] + cmd_extra)
            if rc != 0:
                raise SystemExit(err)
            r = json.loads(out)
            pps, frames, mode = r["pps"], r["frames"], r["backend"]["mode"]
        else:
            pps, frames, cpu, mode = run_wpg(a, dev, size, cmd_extra)
    else:
        key = (iface, label, size)
        pps, frames, cpu, mode = run_trafgen(a, dev, cfgs[size], extra, workers)
    results.setdefault(key, []).append((pps, cpu))
    runs.append({"rep": rep, "duration": a.duration, "iface": key[0], "config": label, "size": size, "pps": pps,
                 "frames": frames, "cpu_seconds": cpu, "mode": mode})
    print(f"rep {rep} {key[0]:5} {size:5} {label:50} {pps/1e6:8.3f} Mpps  cpu {cpu:6.2f} s",
          file=sys.stderr, flush=True)


def report(a, results, runs):
    if a.json:
        with open(a.json, "w") as f:
            json.dump(runs, f, indent=1)

    def med(key):
        v = results.get(key)
        if not v:
            return None, None
        pps = statistics.median(x[0] for x in v)
        per_cpu = statistics.median(x[0] * a.duration / x[1] for x in v if x[1] > 0)
        return pps, per_cpu

    reps = sorted({r["rep"] for r in runs}, key=str)
    n = max((len(v) for v in results.values()), default=0)
    print(f"duration {a.duration} s per run, median of {n}, single-CPU runs pinned to CPU {a.cpu}\n")
    print("| interface | frame | configuration | Mpps (median) | runs (Mpps) | Mpps per CPU-second | vs trafgen (same qdisc path) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (iface, label, size), v in results.items():
        pps, per_cpu = med((iface, label, size))
        ref = None
        if label.startswith("wpg") and iface != "-":
            ref = med((iface, trafgen_ref(label), size))
        ratio = ""
        if ref and ref[0]:
            ratio = f"{pps / ref[0]:.2f}x rate, {per_cpu / ref[1]:.2f}x per CPU-s"
        runs_s = " ".join(f"{x[0]/1e6:.3f}" for x in v)
        print(f"| {iface} | {size} B | {label} | {pps/1e6:.3f} | {runs_s} | {per_cpu/1e6:.3f} | {ratio} |")
    # Paired ratios: each wpg run against the trafgen run of the same
    # repetition (taken a few seconds apart), then the median of those.
    by = {}
    for r in runs:
        by[(r["rep"], r["iface"], r["config"], r["size"])] = r
    print("\nPaired (same repetition) ratios, median over repetitions:\n")
    print("| interface | frame | wpg configuration | trafgen reference | rate ratio (median, range) | per-CPU-s ratio (median) |")
    print("| --- | --- | --- | --- | --- | --- |")
    seen = set()
    for r in runs:
        label, iface, size = r["config"], r["iface"], r["size"]
        if not label.startswith("wpg") or iface == "-" or (iface, label, size) in seen:
            continue
        seen.add((iface, label, size))
        ref_label = trafgen_ref(label)
        rr, cr = [], []
        for rep in reps:
            w, t = by.get((rep, iface, label, size)), by.get((rep, iface, ref_label, size))
            if w and t and t["pps"] > 0 and t["cpu_seconds"] > 0 and w["cpu_seconds"] > 0:
                rr.append(w["pps"] / t["pps"])
                cr.append((w["frames"] / w["cpu_seconds"]) / (t["frames"] / t["cpu_seconds"]))
        if rr:
            print(f"| {iface} | {size} B | {label} | {ref_label} | {statistics.median(rr):.2f}x ({min(rr):.2f}-{max(rr):.2f}) | {statistics.median(cr):.2f}x |")
    one = med(("veth", "wpg ring --batch 256 --qdisc-bypass", 64))[0]
    two = med(("veth", "wpg ring --batch 256 --qdisc-bypass, 2 workers", 64))[0]
    if one and two:
        print(f"\nveth 64 B: 2 workers / 1 worker = {two / one:.2f}x")


if __name__ == "__main__":
    main()
