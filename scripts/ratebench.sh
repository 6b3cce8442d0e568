#!/usr/bin/env bash
# ratebench.sh: rate-control precision of `wpg send --backend null`.
#
# For every rate × wait mode × clock it runs wpg send for DURATION (default
# 10s), REPS times (default 3), and prints one Markdown table row with the
# medians: achieved ratio, lateness mean/p50/p99/max and the CPU the sender
# thread used (cores). Paste the table into docs/perf.md (rate-control precision).
#
#   scripts/ratebench.sh                       # the full matrix, 10 s × 3
#   DURATION=3s REPS=1 RATES="1kpps 100kpps" WAITS=hybrid CLOCKS=tsc scripts/ratebench.sh
#
# Environment: WPG (binary; default: build ./cmd/wpg into a temp dir),
# RATES, WAITS, CLOCKS, DURATION, REPS, EXTRA (more wpg send flags, e.g.
# "--pin-core 1"), PREFIX (a command to run wpg under, e.g. "chrt -f 1").
# The last column is the 1-minute load average when the row started: the
# machine may be shared.
set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${RATES:-"1kpps 10kpps 100kpps 1Mpps"}
WAITS=${WAITS:-"hybrid spin sleep"}
CLOCKS=${CLOCKS:-"tsc monotonic"}
DURATION=${DURATION:-10s}
REPS=${REPS:-3}
EXTRA=${EXTRA:-}
PREFIX=${PREFIX:-}

if [[ -z "${WPG:-}" ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	go build -o "$tmp/wpg" ./cmd/wpg
	WPG=$tmp/wpg
fi

echo "| rate | wait | clock | achieved | mean lateness | p50 | p99 | max | sender CPU (cores) | load |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for rate in $RATES; do
	for wait in $WAITS; do
		for clock in $CLOCKS; do
			runs=()
			load=$(cut -d' ' -f1 /proc/loadavg)
			for ((i = 0; i < REPS; i++)); do
				# shellcheck disable=SC2086
				runs+=("$($PREFIX "$WPG" send --backend null --rate "$rate" --wait "$wait" --clock "$clock" \
					--duration "$DURATION" --json $EXTRA | tr -d '\n')")
			done
			printf '%s\n' "${runs[@]}" | LOAD=$load python3 -c '
import json, os, statistics, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
med = lambda f: statistics.median(f(r) for r in rows)
def ns(v):
    return "%.0f ns" % v if v < 1000 else ("%.1f µs" % (v / 1e3) if v < 1e6 else "%.2f ms" % (v / 1e6))
print("| %s | %s | %s | %.5f | %s | %s | %s | %s | %.3f | %s |" % (
    rows[0]["rate"], rows[0]["wait"], rows[0]["clock"],
    med(lambda r: r["achieved_ratio"]),
    ns(med(lambda r: r["lateness_mean_ns"])), ns(med(lambda r: r["p50_jitter"])),
    ns(med(lambda r: r["p99_jitter"])), ns(med(lambda r: r["lateness_max_ns"])),
    med(lambda r: r["cpu_seconds"] / r["seconds"]), os.environ["LOAD"]))
'
		done
	done
done
