#!/usr/bin/env python3
"""Measure wpg's cgo backends (issue #16) against their references, one sitting.

  sudo scripts/dpdk-bench.py                 # builds wpg with -tags pcap,dpdk
  sudo scripts/dpdk-bench.py --rounds 7 --seconds 10 --cpu 1
  sudo scripts/dpdk-bench.py --groups null --baseline /tmp/wpg-old   # an older build alongside
  sudo scripts/dpdk-bench.py --groups null,gen,afpacket --baseline /tmp/wpg-old   # and the other backends, old vs new
  sudo scripts/dpdk-bench.py --groups null,gen --baseline-rev HEAD~1      # the baseline built from a commit (git archive)

Groups (--groups), each run alternating (A B C A B C ...), medians and ratios:

  null:      wpg --backend dpdk on net_null vs dpdk-testpmd --forward-mode=txonly,
             64-byte frames, one core each (wpg's worker and testpmd's forwarding
             lcore both on --cpu; testpmd's main lcore on the other CPU, idle).
  afpacket:  on a veth pair this script creates in a namespace (and deletes):
             wpg dpdk on net_af_packet vs testpmd txonly on the same vdev vs wpg's
             own afpacket (and afxdp, when this build has it), 64-byte frames.
  pcap:      wpg pcap vs wpg afpacket on the same veth, 64-byte frames.
  gen:       with --baseline only: wpg --backend null (the generator alone, no
             DPDK) of this build vs the baseline's, 64-byte frames, so that a
             change for the dpdk backend is seen not to slow the others.

With --baseline, the null group runs the baseline's dpdk backend too and the
afpacket group its afpacket and afxdp (rows marked "(baseline)").

Only DPDK virtual devices are used (--no-pci: the machine's NICs are never
probed), no hugepages (--no-huge -m 512), no shared files or telemetry socket (--no-shconf
--no-telemetry).
Frames leave only into the veth pair. Prints `wpg sysinfo`'s first lines
and a Markdown table for docs/perf.md. Needs root, dpdk-testpmd (Debian
package dpdk), libdpdk-dev and libpcap-dev for the build.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = f"wpg-bench-{os.getpid()}"  # the EAL's (empty) runtime directory /var/run/dpdk/PREFIX, removed at the end
EAL = f"--no-huge -m 512 --no-shconf --no-telemetry --no-pci --file-prefix {PREFIX}"


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def build(out, src=ROOT):
    env = dict(os.environ, CGO_ENABLED="1")
    subprocess.run(["go", "build", "-tags", "pcap,dpdk", "-o", out, "./cmd/wpg"], cwd=src, env=env, check=True)


def build_rev(rev, tmp):
    """Build wpg at git revision rev (git archive into tmp: the work tree is
    not touched) and return the binary's path."""
    src = os.path.join(tmp, "baseline-src")
    os.makedirs(src)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    out = os.path.join(tmp, "wpg-baseline")
    build(out, src)
    return out


def wpg_run(wpg, args, seconds, cpu):
    """(pps, frames per CPU-second of the sending threads)."""
    cmd = [wpg, "bench", "--duration", f"{seconds}s", "--pin-core", str(cpu), "--json"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    r = json.loads(p.stdout)
    return r["pps"], r["frames"] / r["cpu_seconds"] if r["cpu_seconds"] else 0


def thread_cpu(pid, prefix):
    """CPU seconds of the threads of pid whose name starts with prefix."""
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if name.startswith(prefix):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


TESTPMD_EXTRA = []  # --testpmd-args


def testpmd_run(vdev, seconds, cpu, main_cpu, extra=()):
    """(median of testpmd's per-second Tx-pps, TX packets per CPU-second of
    its forwarding lcore: counted from the start of forwarding, as its
    CPU time is). extra: more testpmd options (--txonly-multi-flow)."""
    cmd = ["dpdk-testpmd", *EAL.split(), "--vdev", vdev,
           "-l", f"{main_cpu},{cpu}", "--main-lcore", str(main_cpu), "--",
           "--forward-mode=txonly", "--txpkts=64", "--nb-cores=1", "--total-num-mbufs=8192",
           "-a", "--stats-period", "1"] + TESTPMD_EXTRA + list(extra)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tempfile.gettempdir())
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if "Tx-pps" in line:
                break
        time.sleep(seconds)
        cpu_s = thread_cpu(p.pid, "rte-worker") or thread_cpu(p.pid, "lcore-worker")
        p.send_signal(signal.SIGINT)
        rest, _ = p.communicate(timeout=30)
    except Exception:
        p.kill()
        p.wait()
        raise
    text = "".join(out) + rest
    rates = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", text)]
    # One line per period (one port); the first non-zero one is the
    # warm-up, the last may cover a part-period at the stop.
    rates = [r for r in rates if r > 0]
    rates = rates[1:-1] if len(rates) > 2 else rates
    total = re.findall(r"Accumulated forward statistics.*?TX-packets:\s+(\d+)", text, re.S)
    if not rates or not total or not cpu_s:
        raise RuntimeError(f"testpmd gave no rate: exit {p.returncode}: {text[-800:]}")
    return statistics.median(rates), int(total[-1]) / cpu_s


class Veth:
    def __init__(self):
        n = os.getpid() % 100000
        self.ns, self.outer, self.inner = f"wpgbench{n}", f"wpbo{n}", f"wpbi{n}"

    def __enter__(self):
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.outer, "type", "veth", "peer", "name", self.inner, "netns", self.ns)
        sh("ip", "link", "set", self.outer, "up")
        sh("ip", "-n", self.ns, "link", "set", self.inner, "up")
        with open(f"/proc/sys/net/ipv6/conf/{self.outer}/disable_ipv6", "w") as f:
            f.write("1")
        return self

    def __exit__(self, *exc):
        sh("ip", "netns", "del", self.ns, check=False)
        sh("ip", "link", "del", self.outer, check=False)


def alternate(contenders, rounds):
    """contenders: [(name, fn)], run A B C A B C ...; fn gives (pps, frames
    per CPU-second); returns {name: [(pps, per_cpu)]} and the skipped ones."""
    res = {name: [] for name, _ in contenders}
    skip = {}
    for r in range(rounds):
        for name, fn in contenders:
            if name in skip:
                continue
            try:
                res[name].append(fn())
            except RuntimeError as e:
                skip[name] = str(e)
                print(f"  {name}: n/a ({e})", file=sys.stderr)
            else:
                pps, per_cpu = res[name][-1]
                print(f"  round {r + 1} {name}: {pps / 1e6:.3f} Mpps, {per_cpu / 1e6:.2f} M frames per CPU-s", file=sys.stderr)
    return res, skip


def table(group, res, skip, ref):
    """Rows: median rate and its ratio to ref, and the median frames per
    CPU-second of the sending thread and its ratio (this one holds up on a
    busy machine, where a thread gets only part of its core)."""
    rows = []
    med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for n, v in res.items() if v}
    for name, v in res.items():
        if not v:
            rows.append(f"| {group} | {name} | n/a | | | | {skip.get(name, '')[:100]} |")
            continue
        pps, per_cpu = med[name]
        r1 = f"{pps / med[ref][0]:.2f}x" if ref in med else ""
        r2 = f"{per_cpu / med[ref][1]:.2f}x" if ref in med and med[ref][1] else ""
        lo, hi = min(x[0] for x in v), max(x[0] for x in v)
        rows.append(f"| {group} | {name} | {pps / 1e6:.3f} Mpps | {r1} | {per_cpu / 1e6:.2f} M | {r2} | {len(v)} runs, {lo / 1e6:.2f}-{hi / 1e6:.2f} Mpps |")
    return rows


def cleanup(tmp):
    """Removes the sitting's folder tmp and the EAL's runtime directory
    (and /var/run/dpdk when nothing else is in it)."""
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(f"/var/run/dpdk/{PREFIX}", ignore_errors=True)
    try:
        os.rmdir("/var/run/dpdk")  # only when empty: no other DPDK process uses it
    except OSError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", help="a wpg built with -tags pcap,dpdk (default: build one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=1, help="the CPU each contender's sending core runs on")
    ap.add_argument("--groups", default="null,afpacket,pcap")
    ap.add_argument("--baseline", help="another wpg built with -tags dpdk (an earlier commit): the null and afpacket groups run it too, "
                    "alternating, as \"... (baseline)\"; the gen group compares the two on --backend null")
    ap.add_argument("--testpmd-args", default="", help="more testpmd application options, given with =: --testpmd-args=--mbuf-size=192 "
                    "(mbufs as small as wpg's for 64-byte frames; the default is testpmd's own 2176-byte rooms)")
    ap.add_argument("--baseline-rev", help="build the baseline from this git revision (git archive; the work tree is not touched)")
    a = ap.parse_args()
    TESTPMD_EXTRA.extend(a.testpmd_args.split())
    if a.baseline and a.baseline_rev:
        sys.exit("dpdk-bench.py: give --baseline or --baseline-rev, not both")
    if os.geteuid() != 0:
        sys.exit("dpdk-bench.py: run as root (DPDK, AF_PACKET, network namespaces)")
    if not shutil.which("dpdk-testpmd"):
        sys.exit("dpdk-bench.py: needs dpdk-testpmd: apt-get install dpdk")
    tmp = tempfile.mkdtemp(prefix="wpg-dpdk-bench-")
    try:
        wpg = a.wpg or os.path.join(tmp, "wpg")
        if not a.wpg:
            build(wpg)
        if a.baseline_rev:
            a.baseline = build_rev(a.baseline_rev, tmp)
        main_cpu = 0 if a.cpu != 0 else 1
        info = sh(wpg, "sysinfo").stdout.splitlines()[:6]
        print("```")
        print("\n".join(info))
        print("```")
        print(f"{a.rounds} rounds of {a.seconds} s, alternating; 64-byte frames; sending core on CPU {a.cpu}"
              + (f"; testpmd {a.testpmd_args}" if a.testpmd_args else "") + "\n")
        rows = ["| group | contender | median rate | ratio | frames per CPU-s | ratio | spread |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        groups = a.groups.split(",")
        size = ["--size", "64"]
        if "null" in groups:
            print("null: wpg dpdk vs testpmd txonly on net_null", file=sys.stderr)
            res, skip = alternate([
                ("testpmd txonly", lambda: testpmd_run("net_null0", a.seconds, a.cpu, main_cpu)),
                ("wpg dpdk", lambda: wpg_run(wpg, ["--backend", "dpdk", "--dpdk-args", f"{EAL} --vdev net_null0 -l {main_cpu}", "-i", "0"] + size, a.seconds, a.cpu)),
            ] + ([
                ("wpg dpdk (baseline)", lambda: wpg_run(a.baseline, ["--backend", "dpdk", "--dpdk-args", f"{EAL} --vdev net_null0 -l {main_cpu}", "-i", "0"] + size, a.seconds, a.cpu)),
            ] if a.baseline else []), a.rounds)
            rows += table("net_null", res, skip, "testpmd txonly")
        if "gen" in groups and a.baseline:
            print("gen: wpg --backend null, this build vs the baseline", file=sys.stderr)
            res, skip = alternate([
                ("wpg null (baseline)", lambda: wpg_run(a.baseline, ["--backend", "null"] + size, a.seconds, a.cpu)),
                ("wpg null", lambda: wpg_run(wpg, ["--backend", "null"] + size, a.seconds, a.cpu)),
            ], a.rounds)
            rows += table("null backend", res, skip, "wpg null (baseline)")
        elif "gen" in groups:
            print("gen: needs --baseline (skipped)", file=sys.stderr)
        if "afpacket" in groups or "pcap" in groups:
            with Veth() as v:
                vdev = f"net_af_packet0,iface={v.outer}"
                if "afpacket" in groups:
                    print("afpacket: on a veth pair", file=sys.stderr)
                    res, skip = alternate([
                        ("testpmd txonly (net_af_packet)", lambda: testpmd_run(vdev, a.seconds, a.cpu, main_cpu)),
                        ("wpg dpdk (net_af_packet)", lambda: wpg_run(wpg, ["--backend", "dpdk", "--dpdk-args", f"{EAL} --vdev {vdev} -l {main_cpu}", "-i", "0"] + size, a.seconds, a.cpu)),
                        ("wpg afpacket", lambda: wpg_run(wpg, ["--backend", "afpacket", "-i", v.outer] + size, a.seconds, a.cpu)),
                        ("wpg afxdp", lambda: wpg_run(wpg, ["--backend", "afxdp", "-i", v.outer] + size, a.seconds, a.cpu)),
                    ] + ([
                        ("wpg afpacket (baseline)", lambda: wpg_run(a.baseline, ["--backend", "afpacket", "-i", v.outer] + size, a.seconds, a.cpu)),
                        ("wpg afxdp (baseline)", lambda: wpg_run(a.baseline, ["--backend", "afxdp", "-i", v.outer] + size, a.seconds, a.cpu)),
                    ] if a.baseline else []), a.rounds)
                    rows += table("veth", res, skip, "testpmd txonly (net_af_packet)")
                if "pcap" in groups:
                    print("pcap: on a veth pair", file=sys.stderr)
                    res, skip = alternate([
                        ("wpg afpacket", lambda: wpg_run(wpg, ["--backend", "afpacket", "-i", v.outer] + size, a.seconds, a.cpu)),
                        ("wpg pcap", lambda: wpg_run(wpg, ["--backend", "pcap", "-i", v.outer] + size, a.seconds, a.cpu)),
                    ], a.rounds)
                    rows += table("veth (pcap)", res, skip, "wpg afpacket")
        print("\n".join(rows))
    finally:
        cleanup(tmp)


if __name__ == "__main__":
    main()
