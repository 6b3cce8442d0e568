#!/bin/sh
# bench-matrix.sh: the bench matrix (#14) for docs/perf.md and docs/tuning.md,
# in one sitting: the machine record, `wpg bench --json` (every path, ranked,
# with its noise verdict), the ranking as markdown, and the picture.
#
#   sudo scripts/bench-matrix.sh                 # 5 repeats of 1 s per cell (~2 min), root adds afpacket/afxdp
#   REPEAT=3 DURATION=2s SIZES=64,460800,1MiB scripts/bench-matrix.sh /tmp/out
#
# Writes OUT/matrix.json, OUT/matrix.md, OUT/matrix.svg (OUT default /tmp/wpg-bench-matrix).
# Run it on a quiet machine: the verdict line says whether the figures can be trusted.
set -eu
out=${1:-/tmp/wpg-bench-matrix}
repeat=${REPEAT:-5}
duration=${DURATION:-1s}
sizes=${SIZES:-64,1MiB}
mkdir -p "$out"
cd "$(dirname "$0")/.."
go build -o "$out/wpg" ./cmd/wpg
wpg="$out/wpg"
{
	echo '```'
	"$wpg" sysinfo | sed -n 1,8p
	echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo '```'
	echo
	echo "\`wpg bench --repeat $repeat --duration $duration --sizes $sizes --json\`"
	echo
} >"$out/matrix.md"
"$wpg" bench --repeat "$repeat" --duration "$duration" --sizes "$sizes" --json >"$out/matrix.json"
"$wpg" plot "$out/matrix.json" -o "$out/matrix.svg"
python3 - "$out/matrix.json" >>"$out/matrix.md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def si(v, unit):
    for p, f in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= f:
            return f"{v / f:.2f} {p}{unit}"
    return f"{v:.1f} {unit}"
for t in d["tables"]:
    print(f"**{t['size']} B frames** (median of {d['repeat']} × {d['duration_seconds']} s)\n")
    print("| # | path | frames/s | rate | ratio | spread | CPU/frame |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in t["rows"]:
        rate = si(r["bits_per_second"], "bit/s") if r["unit"] == "bit/s" else si(r["bytes_per_second"], "B/s")
        ratio = "reference" if r["group"] == "reference" else (f"{r['ratio']:.2f}× {r['reference']}" if r["ratio"] else "-")
        spread = f"{r['spread'] * 100:.0f} %" if len(r["runs"]) > 1 else "-"
        print(f"| {r['rank']} | {r['path']} | {si(r['pps'], '')} | {rate} | {ratio} | {spread} | {r['cpu_ns_per_frame']:.0f} ns |")
    print(f"\nadvice: {t['advice']}\n")
for s in d.get("skipped") or []:
    print(f"- skipped: {s['path']}" + (f" at {s['size']} B" if s.get("size") else "") + f": {s['reason']}")
print(f"\nnoise: **{d['noise']['verdict']}**: {d['noise']['summary']}")
print(f"\nrun: {d['provenance']['start']} on {d['provenance']['host']}, {d['provenance']['version']}")
PY
cat "$out/matrix.md"
echo "wrote $out/matrix.json $out/matrix.md $out/matrix.svg"
