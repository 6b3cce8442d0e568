#!/usr/bin/env python3
"""Before/after sitting: two wpg binaries, alternated run by run, on the
generator bound (null, both plans), on AF_PACKET over a veth pair (64 B) and
on shared memory with its own receiver (1 MiB frames, verified).

Each configuration runs REPS times per binary, A then B then A ..., every
run pinned to the same CPU; the script prints the median pps of each and
the ratio B/A: Mpps, or GB/s of payload for shm. The veth pair lives in two network namespaces the script
creates and deletes (nothing is created in the root namespace).

  scripts/ab-bench.py --a /tmp/wpg-base --b ./wpg --reps 5 --duration 5
"""

import argparse
import json
import statistics
import subprocess

NS_TX, NS, OUTER, INNER = "wpgab-tx", "wpgab", "wpgab0", "wpgab1"


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def setup():
    teardown()
    sh("ip", "netns", "add", NS_TX)
    sh("ip", "netns", "add", NS)
    sh("ip", "-n", NS_TX, "link", "add", OUTER, "type", "veth", "peer", "name", INNER, "netns", NS)
    sh("ip", "-n", NS_TX, "link", "set", OUTER, "up")
    sh("ip", "-n", NS, "link", "set", INNER, "up")


def teardown():
    sh("ip", "netns", "del", NS_TX, check=False)
    sh("ip", "netns", "del", NS, check=False)


CONFIGS = {
    "null stream": lambda d: ["bench", "--backend", "null", "--plan", "stream", "--duration", f"{d}s"],
    "null prerender": lambda d: ["bench", "--backend", "null", "--plan", "prerender", "--duration", f"{d}s"],
    "afpacket veth 64B": lambda d: ["bench", "--backend", "afpacket", "-i", OUTER, "--duration", f"{d}s"],
    "shm 1MiB": lambda d: ["bench", "--backend", "shm", "--size", "1MiB", "--duration", f"{d}s"],
}


def run(binary, name, dur, cpu):
    # The shm bench starts its receiver as a child, which would inherit the
    # pinning: it runs unpinned, the sender and the receiver on a CPU each.
    args = [] if name.startswith("shm") else ["taskset", "-c", str(cpu)]
    if "veth" in name:
        args = ["ip", "netns", "exec", NS_TX] + args
    rep = json.loads(sh(*args, binary, *CONFIGS[name](dur), "--json").stdout)
    if name.startswith("shm"):
        return rep["payload_bytes_per_second"] / 1e3  # printed as GB/s below
    return rep["pps"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="the previous build")
    ap.add_argument("--b", required=True, help="the new build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--only", default="", help="substring of the configurations to run")
    o = ap.parse_args()
    setup()
    try:
        for name in CONFIGS:
            if o.only and o.only not in name:
                continue
            res = {"a": [], "b": []}
            for _ in range(o.reps):
                for k in ("a", "b"):
                    res[k].append(run(getattr(o, k), name, o.duration, o.cpu))
            ma, mb = statistics.median(res["a"]), statistics.median(res["b"])
            print(f"| {name} | {ma/1e6:.2f} | {mb/1e6:.2f} | {mb/ma:.3f} | "
                  f"{' '.join(f'{x/1e6:.2f}' for x in res['a'])} | {' '.join(f'{x/1e6:.2f}' for x in res['b'])} |",
                  flush=True)
    finally:
        teardown()


if __name__ == "__main__":
    main()
