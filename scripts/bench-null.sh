#!/usr/bin/env bash
# The generator's baseline: wpg bench on the null backend, 64-byte frames, one
# worker, streaming plan vs prerender plan, each 3 times (alternating), 10 s;
# prints the median pps of each. Usage: scripts/bench-null.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
go build -o /tmp/wpg-bench ./cmd/wpg
declare -A runs cpu
for i in 1 2 3; do
	for plan in stream prerender; do
		read -r pps cpupps < <(/tmp/wpg-bench bench --backend null --plan "$plan" --duration "${secs}s" --json |
			python3 -c 'import json,sys; r=json.load(sys.stdin); print(int(r["pps"]), int(r["frames"]/max(r["cpu_seconds"],1e-9)))')
		echo "run $i plan $plan: $pps pps, $cpupps frames per CPU-second (load $(cut -d' ' -f1 /proc/loadavg))" >&2
		runs[$plan]+="$pps "
		cpu[$plan]+="$cpupps "
	done
done
for plan in stream prerender; do
	med=$(echo ${runs[$plan]} | tr ' ' '\n' | sort -n | sed -n 2p)
	cmed=$(echo ${cpu[$plan]} | tr ' ' '\n' | sort -n | sed -n 2p)
	echo "$plan median: $med pps (runs: ${runs[$plan]}); per CPU-second median $cmed (runs: ${cpu[$plan]})"
done
