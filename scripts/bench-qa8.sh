#!/usr/bin/env bash
# Helper L's session 8 fixes, before/after: bytes, allocations and time per
# op of BenchmarkSnapshot (a running job's snapshot, lateness and receiver
# latency histograms shared read-only instead of copied per snapshot) and
# of BenchmarkParseManyStreams (the 65,535-stream template: the raw values
# decoded without go-yaml's per-struct reflection). The benchmark files
# are copied into a tree of BASE_REV (they are new), the two trees run
# alternately, round by round; medians and the ratio new/base. B/op and
# allocs/op do not depend on the machine; ns/op does: run it in a quiet
# sitting for the times.
#
#   scripts/bench-qa8.sh [BASE_REV [ROUNDS]]
#   scripts/bench-qa8.sh 26e5aea 3
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-26e5aea}
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$base" | tar -x -C "$tmp/"
cp job/snapshot_bench_linux_test.go "$tmp/job/"
cp template/parse_bench_test.go "$tmp/template/"
go build -o "$tmp/wpg" ./cmd/wpg
"$tmp/wpg" sysinfo | head -6
echo "base $base ($(git rev-parse --short "$base")), new: the working tree; $rounds rounds"
run() { # dir out
	(cd "$1" && go test ./job -run '^$' -bench 'BenchmarkSnapshot' -benchtime 200x -count 1 -benchmem &&
		go test ./template -run '^$' -bench 'BenchmarkParseManyStreams' -benchtime 1x -count 1 -benchmem) >>"$2"
}
for r in $(seq "$rounds"); do
	run "$tmp" "$tmp/base.txt"
	run . "$tmp/new.txt"
	echo "round $r done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
python3 - "$tmp/base.txt" "$tmp/new.txt" <<'PY'
import re, statistics, sys
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r'(Benchmark\S+?)-\d+\s+\d+\s+([\d.]+) ns/op.*?(\d+) B/op\s+(\d+) allocs/op', line)
        if m:
            d.setdefault(m.group(1), []).append((float(m.group(2)), int(m.group(3)), int(m.group(4))))
    return d
base, new = load(sys.argv[1]), load(sys.argv[2])
print(f"{'benchmark':40s} {'base ms':>9s} {'new ms':>9s} {'ratio':>6s} {'base B/op':>13s} {'new B/op':>13s} {'ratio':>7s} {'base allocs':>11s} {'new allocs':>10s}")
for k in base:
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    bt, nt = med(base[k], 0) / 1e6, med(new[k], 0) / 1e6
    bb, nb = med(base[k], 1), med(new[k], 1)
    ba, na = med(base[k], 2), med(new[k], 2)
    print(f"{k:40s} {bt:9.3f} {nt:9.3f} {nt/bt:6.3f} {bb:13.0f} {nb:13.0f} {nb/bb:7.4f} {ba:11.0f} {na:10.0f}")
PY
