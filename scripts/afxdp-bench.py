#!/usr/bin/env python3
"""One sitting of the AF_XDP comparison (issue 12, docs/perf.md "AF_XDP (#12)").

Alternates, run by run and with the order rotated every round, four senders
on the same CPU over a veth pair whose ends live in two network namespaces
this script creates and deletes (nothing is created in the root namespace):

  wpg afxdp     wpg send --backend afxdp --batch 64 (copy mode on veth)
  xsk_tx -b 64  the C reference AF_XDP sender (copy mode), built from a copy of
                the anchor folder (--anchor, default ../shared/anchors/afxdp)
  trafgen       netsniff-ng trafgen -P 1 (AF_PACKET TX ring, qdisc bypass)
  wpg afpacket  wpg send --backend afpacket --batch 64

at 64 B and 1500 B (at 1500 B also both wpg backends with --plan stream). Every frame goes to 02:00:00:00:00:99, a MAC the peer
does not own, so the peer drops it early (PACKET_OTHERHOST) and the figure is
the sender's. A run: start the sender, wait --warmup, read the peer's
rx_packets from sysfs, wait --secs, read it again, SIGINT the sender; rate =
delta / window. The ratios are medians of the per-round ratios to xsk_tx
(each round measures all four back to back), and the table prints the median
rate of each over --rounds rounds. It also divides the frames by the
sender's CPU time in the window (utime + stime from /proc/PID/stat; the
peer's receive softirq runs on the sending CPU and is counted there): on a
shared machine frames per CPU-second compare senders more fairly than frames
per second.

With --workers2 it also runs wpg afxdp with 2 workers on the 2-queue veth
(--pin-cores CPU,CPU2), and two single-worker wpg processes at once, one per
queue and CPU ("2 processes": what two independent senders reach, so that
what one process's two workers lose to each other shows against what the
kernel and the machine lose), and gives each one's ratio to 1 worker.

With --baseline BIN it also runs wpg afxdp (and, with --workers2, its 2
workers) from an earlier build BIN, alternated in the same rounds: a
before/after of a change in one sitting.

Needs root, trafgen (apt-get install netsniff-ng), gcc, a wpg binary. Never
touches any interface but the veth it creates.

  scripts/afxdp-bench.py --wpg ./wpg --rounds 5 --secs 5          # the sitting
  scripts/afxdp-bench.py --wpg ./wpg --rounds 1 --secs 1 --sizes 64   # smoke run
  scripts/afxdp-bench.py --wpg ./wpg --baseline /tmp/wpg-before --workers2 --sizes 1500
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

NS_TX, NS, OUTER, INNER = "wpgxdp-tx", "wpgxdp", "wpgx0", "wpgx1"
DST = "02:00:00:00:00:99"
HERE = os.path.dirname(os.path.abspath(__file__))


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def setup_veth():
    teardown_veth()
    sh("ip", "netns", "add", NS_TX)
    sh("ip", "netns", "add", NS)
    sh("ip", "-n", NS_TX, "link", "add", OUTER, "numtxqueues", "2", "numrxqueues", "2", "type", "veth",
       "peer", "name", INNER, "numtxqueues", "2", "numrxqueues", "2", "netns", NS)
    for ns, dev in ((NS_TX, OUTER), (NS, INNER)):
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "-n", NS_TX, "link", "set", OUTER, "address", "02:00:00:00:00:01")
    sh("ip", "-n", NS, "link", "set", INNER, "address", "02:00:00:00:00:02")


def teardown_veth():
    sh("ip", "netns", "del", NS_TX, check=False)  # deletes the pair with it
    sh("ip", "netns", "del", NS, check=False)


def peer_rx():
    out = sh("ip", "netns", "exec", NS, "cat", f"/sys/class/net/{INNER}/statistics/rx_packets").stdout
    return int(out)


def template(dirname, size):
    """A UDP/IPv4 frame of size bytes to DST, as wpg's template."""
    p = os.path.join(dirname, f"udp{size}.wpg.yaml")
    with open(p, "w") as f:
        f.write(f"streams:\n  - name: udp{size}\n    size: {size}\n"
                f"    ethernet: {{src: \"02:00:00:00:00:01\", dst: \"{DST}\"}}\n"
                "    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 9, dst: 9}\n")
    return p


def trafgen_cfg(dirname, size):
    ip_len = size - 14
    udp_len = ip_len - 20
    p = os.path.join(dirname, f"udp{size}.cfg")
    with open(p, "w") as f:
        f.write("{\n  0x02,0x00,0x00,0x00,0x00,0x99, 0x02,0x00,0x00,0x00,0x00,0x01, c16(0x0800),\n"
                f"  0x45, 0x00, c16({ip_len}), c16(1), c16(0), 64, 17, csumip(14, 33),\n"
                "  198,18,0,1, 198,19,0,1,\n"
                f"  c16(9), c16(9), c16({udp_len}), c16(0),\n"
                f"  fill(0xa5, {udp_len - 8})\n}}\n")
    return p


def build_xsk_tx(anchor, dirname):
    src = os.path.join(dirname, "anchor")
    shutil.copytree(anchor, src)
    sh("make", "-C", src, "xsk_tx")
    return os.path.join(src, "xsk_tx")


def commands(a, tmp, xsk_tx, size):
    cpu = str(a.cpu)
    inns = ["ip", "netns", "exec", NS_TX]
    tpl = template(tmp, size)
    wpg = inns + ["taskset", "-c", cpu, a.wpg, "send", tpl, "-i", OUTER, "--batch", "64", "--duration", "0"]
    c = {
        "wpg afxdp": wpg + ["--backend", "afxdp"],
        "xsk_tx -b 64": inns + [xsk_tx, "-i", OUTER, "-b", "64", "-s", str(size), "-C", cpu, "-d", DST],
        "trafgen": inns + ["taskset", "-c", cpu, "trafgen", "-o", OUTER, "-i", trafgen_cfg(tmp, size), "-P", "1", "-Q"],
        "wpg afpacket": wpg + ["--backend", "afpacket"],
    }
    if size >= 256:
        # Frames of 256 B+ rendered into buffers that keep their contents
        # (UMEM chunks, TX-ring slots) get only their varying bytes written,
        # streamed or (since session 6) prerendered: the default plan
        # should now be at --plan stream's rate.
        c["wpg afxdp --plan stream"] = wpg + ["--backend", "afxdp", "--plan", "stream"]
        c["wpg afpacket --plan stream"] = wpg + ["--backend", "afpacket", "--plan", "stream"]
    two = ["--batch", "64", "--duration", "0", "--backend", "afxdp", "--workers", "2", "--pin-cores", f"{a.cpu},{a.cpu2}"]
    if a.workers2:
        c["wpg afxdp 2 workers"] = inns + [a.wpg, "send", tpl, "-i", OUTER] + two
        # Two processes of one worker each, on queues 0 and 1: a list of
        # commands started together.
        c["wpg afxdp 2 processes"] = [
            inns + ["taskset", "-c", str(cpu_), a.wpg, "send", tpl, "-i", OUTER, "--batch", "64", "--duration", "0",
                    "--backend", "afxdp", "--queue", str(q)] for q, cpu_ in ((0, a.cpu), (1, a.cpu2))]
    if a.baseline:
        c["wpg afxdp (baseline)"] = inns + ["taskset", "-c", cpu, a.baseline, "send", tpl, "-i", OUTER, "--batch", "64",
                                            "--duration", "0", "--backend", "afxdp"]
        if a.workers2:
            c["wpg afxdp 2 workers (baseline)"] = inns + [a.baseline, "send", tpl, "-i", OUTER] + two
    return c


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(sid):
    """utime + stime of every process of session sid (the sender runs in a
    session of its own; trafgen forks its worker), threads included."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # field 6: session
            total += int(fields[11]) + int(fields[12])
    return total / TICK


def run_one(argv, a):
    """Returns (frames per second, frames per CPU-second of the sender).
    argv is one command, or a list of commands run at once (their frames
    and CPU time summed)."""
    argvs = argv if isinstance(argv[0], list) else [argv]
    ps = [subprocess.Popen(v, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, text=True)
          for v in argvs]
    time.sleep(a.warmup)
    r0, t0, c0 = peer_rx(), time.monotonic(), sum(cpu_seconds(p.pid) for p in ps)
    time.sleep(a.secs)
    r1, t1, c1 = peer_rx(), time.monotonic(), sum(cpu_seconds(p.pid) for p in ps)
    alive = [p.poll() is None for p in ps]
    for p in ps:
        try:
            os.killpg(p.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    errs = []
    for p in ps:
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
        errs.append(err)
    for v, ok, err in zip(argvs, alive, errs):
        if not ok:
            raise SystemExit(f"{' '.join(v)} ended early: {err}")
    time.sleep(1.0)  # a closed XSK holds its queue for a moment
    cpu = c1 - c0
    return (r1 - r0) / (t1 - t0), (r1 - r0) / cpu if cpu > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wpg", default="./wpg")
    ap.add_argument("--anchor", default=os.path.join(HERE, "..", "..", "shared", "anchors", "afxdp"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1.5)
    ap.add_argument("--sizes", default="64,1500")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU of every single-worker run (trafgen -P 1 takes CPU 0 itself)")
    ap.add_argument("--cpu2", type=int, default=1, help="the second worker's CPU with --workers2")
    ap.add_argument("--workers2", action="store_true", help="also wpg afxdp with 2 workers on 2 queues")
    ap.add_argument("--only", help="comma list of the senders to run")
    ap.add_argument("--baseline", help="an earlier wpg build: its afxdp rows alternate with --wpg's (before/after)")
    a = ap.parse_args()
    a.wpg = os.path.abspath(a.wpg)
    if a.baseline:
        a.baseline = os.path.abspath(a.baseline)
    if os.geteuid() != 0:
        raise SystemExit("needs root (network namespaces, AF_XDP)")
    tmp = tempfile.mkdtemp(prefix="afxdp-bench-")
    try:
        xsk_tx = build_xsk_tx(a.anchor, tmp)
        setup_veth()
        time.sleep(1)
        print(sh(a.wpg, "sysinfo").stdout.splitlines()[0:3], file=sys.stderr)
        for size in [int(s) for s in a.sizes.split(",")]:
            cmds = commands(a, tmp, xsk_tx, size)
            names = list(cmds) if not a.only else [n for n in cmds if n in a.only.split(",")]
            rates = {n: [] for n in names}
            ratios = {n: [] for n in names}
            per_cpu = {n: [] for n in names}
            cpu_ratios = {n: [] for n in names}
            for r in range(a.rounds):
                order = names[r % len(names):] + names[:r % len(names)]
                got, gotc = {}, {}
                for n in order:
                    got[n], gotc[n] = run_one(cmds[n], a)
                    rates[n].append(got[n])
                    per_cpu[n].append(gotc[n])
                    print(f"[{size} B r{r}] {n:26s} {got[n] / 1e6:7.3f} Mpps  {gotc[n] / 1e6:7.3f} M frames/CPU-s",
                          file=sys.stderr, flush=True)
                ref, refc = got.get("xsk_tx -b 64"), gotc.get("xsk_tx -b 64")
                for n in names:
                    if ref:
                        ratios[n].append(got[n] / ref)
                    if refc:
                        cpu_ratios[n].append(gotc[n] / refc)
            print(f"\n{size} B, {a.rounds} rounds of {a.secs} s, CPU {a.cpu}, frames to {DST}\n")
            print("| sender | median Mpps | range | × xsk_tx -b 64 | M frames per CPU-second | × xsk_tx -b 64 |")
            print("| --- | --- | --- | --- | --- | --- |")
            for n in names:
                v, c = rates[n], per_cpu[n]
                ratio = f"{statistics.median(ratios[n]):.3f}" if ratios[n] else "-"
                cratio = f"{statistics.median(cpu_ratios[n]):.3f}" if cpu_ratios[n] else "-"
                print(f"| {n} | {statistics.median(v) / 1e6:.3f} | {min(v) / 1e6:.3f}-{max(v) / 1e6:.3f} | {ratio} "
                      f"| {statistics.median(c) / 1e6:.3f} | {cratio} |")
            print()
            for two, one in (("wpg afxdp 2 workers", "wpg afxdp"), ("wpg afxdp 2 processes", "wpg afxdp"),
                             ("wpg afxdp 2 workers (baseline)", "wpg afxdp (baseline)")):
                if two in rates and one in rates:
                    per = [b / s for s, b in zip(rates[one], rates[two])]
                    print(f"{two} / {one} (per round, median): {statistics.median(per):.3f}")
            for new, old in (("wpg afxdp", "wpg afxdp (baseline)"), ("wpg afxdp 2 workers", "wpg afxdp 2 workers (baseline)")):
                if new in rates and old in rates:
                    per = [n / o for o, n in zip(rates[old], rates[new])]
                    print(f"{new} / {old} (per round, median): {statistics.median(per):.3f}")
    finally:
        teardown_veth()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
