#!/usr/bin/env bash
# The generator's baseline: wpg bench on the null backend, 64-byte frames, one
# worker, streaming plan vs prerender plan, each 3 times (alternating), 10 s;
# prints the median pps of each. Usage: scripts/bench-null.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
go build -o /tmp/wpg-bench ./cmd/wpg
declare -A runs
for i in 1 2 3; do
	for plan in stream prerender; do
		pps=$(/tmp/wpg-bench bench --backend null --plan "$plan" --duration "${secs}s" --json |
			python3 -c 'import json,sys; r=json.load(sys.stdin); print(int(r["pps"]))')
		echo "run $i plan $plan: $pps pps" >&2
		runs[$plan]+="$pps "
	done
done
for plan in stream prerender; do
	med=$(echo ${runs[$plan]} | tr ' ' '\n' | sort -n | sed -n 2p)
	echo "$plan median: $med pps (runs: ${runs[$plan]})"
done
