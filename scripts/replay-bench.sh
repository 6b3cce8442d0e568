#!/usr/bin/env bash
# replay-bench.sh: pcap replay measured (issue #15, item 1). Needs root,
# ip, trafgen (netsniff-ng), tcpdump, tcpreplay and python3.
#
#  1. Capture: trafgen sends FRAMES (1000) UDP frames GAP (1ms) apart on a
#     veth pair in a throw-away network namespace; tcpdump in the namespace
#     writes them (nanosecond timestamps).
#  2. Original timing on the null path: `wpg send --pcap CAPTURE --backend
#     null`, REPS times for each wait mode; a frame's gap is off by at most
#     the grant's lateness, so the report's lateness_max_ns against 1 % of
#     the capture's smallest gap says whether every gap was kept within 1 %.
#  3. At a fixed rate on the wire: tcpreplay --pps=PPS and `wpg send --pcap
#     CAPTURE --rate PPSpps`, alternated REPS times, each replaying the
#     capture LOOPS times onto the veth and captured by tcpdump in the
#     namespace; gaps compared as docs/rate.md / docs/perf.md do (share
#     within ±10 % of the interval, p50, p99, most frames in 1 ms, achieved
#     rate in the capture). The table gives the medians and the ratio
#     wpg / tcpreplay of the share within ±10 %.
#
#   sudo scripts/replay-bench.sh
#   sudo REPS=1 LOOPS=20 PPS=10000 scripts/replay-bench.sh       # a quick try
#
# Environment: WPG (binary; default: build ./cmd/wpg), FRAMES, GAP, PPS
# (default 100000), LOOPS (default 100), REPS (default 3), WAITS (null
# path, default "hybrid spin"). Prints Markdown for docs/perf.md.
set -euo pipefail
cd "$(dirname "$0")/.."

FRAMES=${FRAMES:-1000}
GAP=${GAP:-1ms}
PPS=${PPS:-100000}
LOOPS=${LOOPS:-100}
REPS=${REPS:-3}
WAITS=${WAITS:-"hybrid spin"}

for tool in ip trafgen tcpdump tcpreplay python3; do
	command -v "$tool" >/dev/null || { echo "replay-bench: needs $tool" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "replay-bench: needs root (a network namespace and a veth pair)" >&2; exit 2; }

tmp=$(mktemp -d)
ns=wpgrb$$
out=wrbo$$
in=wrbi$$
cleanup() {
	[[ -n "${dump:-}" ]] && kill "$dump" 2>/dev/null || true
	ip link del "$out" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
if [[ -z "${WPG:-}" ]]; then
	go build -o "$tmp/wpg" ./cmd/wpg
	WPG=$tmp/wpg
fi

ip netns add "$ns"
ip link add "$out" type veth peer name "$in" netns "$ns"
echo 1 >"/proc/sys/net/ipv6/conf/$out/disable_ipv6"
ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$in.disable_ipv6=1"
ip link set "$out" up
ip -n "$ns" link set lo up
ip -n "$ns" link set "$in" up
until [[ $(cat "/sys/class/net/$out/operstate") == up ]]; do sleep 0.05; done

# capture FILE COUNT: tcpdump in the namespace until COUNT UDP frames.
capture_start() {
	ip netns exec "$ns" tcpdump -i "$in" -w "$1" -U --immediate-mode --time-stamp-precision=nano -B 65536 -s 0 -c "$2" udp 2>"$tmp/dump.err" &
	dump=$!
	until grep -q "listening on" "$tmp/dump.err" 2>/dev/null; do sleep 0.05; done
}
capture_wait() {
	# Give the last frames a second, then stop a capture that is short.
	for _ in $(seq 50); do kill -0 "$dump" 2>/dev/null || break; sleep 0.1; done
	kill -INT "$dump" 2>/dev/null || true
	wait "$dump" 2>/dev/null || true
	dump=
}

cat >"$tmp/udp.cfg" <<'EOF'
{
  0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
  0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
  0x08, 0x00,
  0x45, 0x00, const16(46), 0x00, 0x00, 0x40, 0x00, 64, 17, csumip(14, 33),
  198, 18, 0, 1, 198, 19, 0, 1,
  const16(1024), const16(9), const16(26), csumudp(14, 34),
  fill(0x41, 14), dinc(0, 255), dinc(0, 255, 3), 0x00, 0x00
}
EOF
cap=$tmp/trafgen.pcap
capture_start "$cap" "$FRAMES"
trafgen --dev "$out" --conf "$tmp/udp.cfg" --num "$FRAMES" --gap "$GAP" --cpus 1 --no-cpu-stats --qdisc-path >/dev/null 2>&1
capture_wait

analyse=$(cat <<'EOF'
import struct, sys, statistics
def stamps(path):
    b = open(path, "rb").read()
    magic = struct.unpack("<I", b[:4])[0]
    scale = 1 if magic == 0xa1b23c4d else 1000
    off, ts = 24, []
    while off + 16 <= len(b):
        s, frac, incl, _ = struct.unpack("<IIII", b[off:off + 16])
        ts.append(s * 10**9 + frac * scale)
        off += 16 + incl
    return ts
EOF
)

echo "## Replay (#15)"; echo; "$WPG" sysinfo | head -4 | sed "s/^/    /"
echo
echo "capture: trafgen $FRAMES frames --gap $GAP on a veth, tcpdump in the namespace"
python3 -c "$analyse
ts = stamps('$cap'); g = [b - a for a, b in zip(ts, ts[1:])]
print('captured: %d frames, gaps min %.1f µs, median %.1f µs, max %.1f µs' % (len(ts), min(g)/1e3, statistics.median(g)/1e3, max(g)/1e3))"
echo
echo "### Original timing, null path: \`wpg send --pcap CAPTURE --backend null --wait W --json\`"
echo
echo "| wait | run | frames | lateness p50 | p99 | max | max / smallest gap | every gap within 1 % |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
mingap=$(python3 -c "$analyse
ts = stamps('$cap'); print(min(b - a for a, b in zip(ts, ts[1:])))")
for wait in $WAITS; do
	for ((i = 1; i <= REPS; i++)); do
		"$WPG" send --pcap "$cap" --backend null --wait "$wait" --json | MINGAP=$mingap WAIT=$wait RUN=$i python3 -c '
import json, os, sys
r = json.load(sys.stdin); m = int(os.environ["MINGAP"])
ratio = r["lateness_max_ns"] / m
print("| %s | %s | %d | %d ns | %.1f µs | %.1f µs | %.2f %% | %s |" % (os.environ["WAIT"], os.environ["RUN"], r["frames"],
    r["p50_jitter"], r["p99_jitter"] / 1e3, r["lateness_max_ns"] / 1e3, 100 * ratio, "yes" if ratio <= 0.01 else "no"))'
	done
done

echo
echo "### At ${PPS} pps on the veth: tcpreplay --pps vs wpg send --pcap --rate, $((FRAMES * LOOPS)) frames, captured by tcpdump"
echo
echo "| tool | run | frames captured | achieved (capture) | gaps within ±10 % | gap p50 | gap p99 | most frames in 1 ms | load |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
total=$((FRAMES * LOOPS))
rows=$tmp/rows
: >"$rows"
for ((i = 1; i <= REPS; i++)); do
	for tool in tcpreplay wpg; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		capture_start "$tmp/$tool$i.pcap" "$total"
		if [[ $tool == tcpreplay ]]; then
			tcpreplay -q --intf1="$out" --pps="$PPS" --loop="$LOOPS" "$cap" >/dev/null 2>&1
		else
			"$WPG" send --pcap "$cap" -i "$out" --rate "${PPS}pps" --count "$total" >/dev/null
		fi
		capture_wait
		python3 -c "$analyse
ts = stamps('$tmp/$tool$i.pcap'); iv = 1e9 / $PPS
g = [b - a for a, b in zip(ts, ts[1:])]
within = sum(1 for x in g if 0.9 * iv <= x <= 1.1 * iv) / max(len(g), 1)
most, j = 0, 0
for k in range(len(ts)):
    while ts[k] - ts[j] >= 10**6: j += 1
    most = max(most, k - j + 1)
gs = sorted(g); p = lambda q: gs[min(len(gs) - 1, int(q * len(gs)))] if gs else 0
ach = (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9) / $PPS if len(ts) > 1 else 0
print('$tool %d %.5f %.4f %d %d %d $load' % (len(ts), ach, within, p(0.5), p(0.99), most))" >>"$rows"
		tail -1 "$rows" | awk -v run="$i" '{printf "| %s | %s | %s | %s | %.2f %% | %.3f µs | %.3f µs | %s | %s |\n", $1, run, $2, $3, 100*$4, $5/1e3, $6/1e3, $7, $8}'
	done
done
echo
python3 - "$rows" <<'EOF'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = lambda tool, col: statistics.median(float(r[col]) for r in rows if r[0] == tool)
t, w = med("tcpreplay", 3), med("wpg", 3)
print("medians: gaps within ±10 %%: tcpreplay %.2f %%, wpg %.2f %% (ratio wpg/tcpreplay %.2f); gap p99: tcpreplay %.3f µs, wpg %.3f µs; achieved: tcpreplay %.5f, wpg %.5f"
      % (100 * t, 100 * w, w / t if t else float("nan"), med("tcpreplay", 5) / 1e3, med("wpg", 5) / 1e3, med("tcpreplay", 2), med("wpg", 2)))
EOF
