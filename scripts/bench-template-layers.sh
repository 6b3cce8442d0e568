#!/usr/bin/env bash
# Template rendering before/after issue #15's layer stack (tunnels, raw
# layers, checksums on request, tuples, fragments): BenchmarkRender of the
# classic templates at a base revision and at the working tree, alternated
# round by round, medians of the CPU time per frame (cpu-ns/frame: this
# thread's CPU time, so a busy machine inflates it less than wall time) and
# the ratio new/base; then BenchmarkRenderLayers (the new headers) at the
# working tree. Run it in a quiet sitting.
#
#   scripts/bench-template-layers.sh [BASE_REV [ROUNDS [BENCHTIME]]]
#   scripts/bench-template-layers.sh f38e71e 5 1s
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD}
rounds=${2:-5}
benchtime=${3:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$base" | tar -x -C "$tmp/" 
pattern='Render/(default|two-fields|mixed)'
go build -o "$tmp/wpg" ./cmd/wpg
"$tmp/wpg" sysinfo | head -6
echo "base $base ($(git rev-parse --short "$base")), new: the working tree; $rounds rounds, -benchtime $benchtime"
for r in $(seq "$rounds"); do
	(cd "$tmp" && go test ./template -run '^$' -bench "$pattern" -count 1 -benchtime "$benchtime") >>"$tmp/base.txt"
	go test ./template -run '^$' -bench "$pattern" -count 1 -benchtime "$benchtime" >>"$tmp/new.txt"
	echo "round $r done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
python3 - "$tmp/base.txt" "$tmp/new.txt" <<'PY'
import re, statistics, sys
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r'(Benchmark\S+?)-\d+\s.*?([\d.]+) cpu-ns/frame.*?(\d+) allocs/op', line)
        if m:
            d.setdefault(m.group(1), []).append((float(m.group(2)), int(m.group(3))))
    return d
base, new = load(sys.argv[1]), load(sys.argv[2])
print(f"{'benchmark':40s} {'base':>8s} {'new':>8s} {'new/base':>9s}  allocs")
for k in base:
    b = statistics.median(x[0] for x in base[k])
    n = statistics.median(x[0] for x in new[k])
    print(f"{k:40s} {b:8.2f} {n:8.2f} {n/b:9.3f}  {max(x[1] for x in new[k])}")
PY
go test ./template -run '^$' -bench 'RenderLayers' -count 3 -benchtime "$benchtime" | grep -E '^Benchmark' |
	awk '{for (i = 1; i <= NF; i++) if ($(i+1) == "cpu-ns/frame") c[$1] = c[$1] " " $i} END {for (k in c) print k, "cpu-ns/frame:" c[k]}' | sort
