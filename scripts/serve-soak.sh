#!/usr/bin/env bash
# The load and soak figures of `wpg serve` (docs/perf.md, "wpg serve (#11)"), on loopback only:
# N event-stream clients on one running 20 kpps null job for DURATION, alternating with a
# 1-client reference run REPEATS times (medians, and the ratio to the reference); then 200 rapid
# create/stop cycles. Each run checks that goroutines and fds return to their baseline.
#
#   scripts/serve-soak.sh                          # 100 clients, 60 s, 3 repeats: about 7 minutes
#   DURATION=10s REPEATS=1 scripts/serve-soak.sh   # a quick check
set -euo pipefail
DURATION=${DURATION:-60s}
REPEATS=${REPEATS:-3}
CLIENTS=${CLIENTS:-100}
CYCLES=${CYCLES:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

go build -o "$out/wpg" ./cmd/wpg
go test -c -o "$out/server.test" ./server
echo "## machine"
"$out/wpg" sysinfo | sed -n 1,6p   # sed reads to the end: head would end sysinfo by SIGPIPE, and pipefail the script
echo
echo "## command"
echo "DURATION=$DURATION REPEATS=$REPEATS CLIENTS=$CLIENTS CYCLES=$CYCLES scripts/serve-soak.sh"
echo
for i in $(seq 1 "$REPEATS"); do
	for n in 1 "$CLIENTS"; do
		(cd server && "$out/server.test" -test.run '^TestSoakEvents$' -test.v -test.count=1 \
			-soak-duration "$DURATION" -soak-clients "$n") | grep -E 'soak:|FAIL|ok' | tee -a "$out/events-$n.log"
	done
done
(cd server && "$out/server.test" -test.run '^TestSoakCreateStop$' -test.v -test.count=1 -soak-cycles "$CYCLES") |
	grep -E 'soak:|FAIL|ok' | tee "$out/cycles.log"

python3 - "$out" "$CLIENTS" <<'PY'
import re, statistics, sys, pathlib
out, n = pathlib.Path(sys.argv[1]), sys.argv[2]
def dur(s):
    m = re.match(r'([\d.]+)(ns|µs|us|ms|s)$', s)
    return float(m[1]) * {'ns': 1e-6, 'µs': 1e-3, 'us': 1e-3, 'ms': 1, 's': 1e3}[m[2]]
def runs(k):
    rs = []
    for line in (out / f'events-{k}.log').read_text().splitlines():
        m = re.search(r'latency p50 (\S+) p99 (\S+) max (\S+); heap in use ([\d.]+) MiB before, ([\d.]+) MiB at most', line)
        if m:
            rs.append((dur(m[1]), dur(m[2]), dur(m[3]), float(m[5])))
    return rs
ref, load = runs('1'), runs(n)
if not ref or not load:
    sys.exit('no soak figures: see the output above')
med = lambda rs, i: statistics.median(r[i] for r in rs)
print()
print('## summary (medians of %d alternated runs)' % len(load))
print('| clients | delivery p50 (ms) | delivery p99 (ms) | max (ms) | heap at most (MiB) |')
print('| --- | --- | --- | --- | --- |')
for k, rs in (('1', ref), (n, load)):
    print('| %s | %.2f | %.2f | %.2f | %.1f |' % (k, med(rs, 0), med(rs, 1), med(rs, 2), med(rs, 3)))
print('ratio %s clients / 1 client: delivery p99 %.2f×, heap %.2f×' % (n, med(load, 1) / med(ref, 1), med(load, 3) / med(ref, 3)))
PY
