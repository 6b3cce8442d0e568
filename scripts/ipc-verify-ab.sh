#!/bin/sh
# Before/after of the verified cma and unix receivers (#14, second round:
# the payload CRC-32C computed per copied chunk / per read(2)).
#
#   scripts/ipc-verify-ab.sh [BEFORE_COMMIT] [OUTDIR]
#
# Builds BEFORE_COMMIT (default HEAD) from `git archive` into OUTDIR/before
# and the working tree into OUTDIR/after, then runs scripts/ipc-bench.py
# --only cma,unix for each build in turn, ROUNDS times (the order swaps
# every round), and prints per build the medians over the rounds of
# default ÷ C, --verify off ÷ C and verify on ÷ off. Environment: ROUNDS
# (3), REPS (5), DURATION (3s), MAX_LOAD (none; e.g. 1.5 for a quiet
# sitting), ONLY (cma,unix).
set -eu
BEFORE=${1:-HEAD}
OUT=${2:-/tmp/wpg-ipc-verify-ab}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-5}
DURATION=${DURATION:-3s}
ONLY=${ONLY:-cma,unix}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
rm -rf "$OUT/before-src" && mkdir "$OUT/before-src"
(cd "$ROOT" && git archive "$BEFORE" | tar -x -C "$OUT/before-src")
(cd "$OUT/before-src" && go build -o "$OUT/before" ./cmd/wpg)
(cd "$ROOT" && go build -o "$OUT/after" ./cmd/wpg)
LOAD=""
if [ -n "${MAX_LOAD:-}" ]; then LOAD="--max-load $MAX_LOAD"; fi
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	if [ $((i % 2)) -eq 0 ]; then order="before after"; else order="after before"; fi
	for b in $order; do
		echo "round $((i + 1))/$ROUNDS: $b" >&2
		# shellcheck disable=SC2086
		python3 "$ROOT/scripts/ipc-bench.py" --reps "$REPS" --duration "$DURATION" --only "$ONLY" $LOAD \
			--wpg "$OUT/$b" --json "$OUT/$b-$i.json" > "$OUT/$b-$i.txt"
	done
	i=$((i + 1))
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for b in ("before", "after"):
    for i in range(rounds):
        for s in json.load(open(f"{out}/{b}-{i}.json"))["summary"]:
            r = rows.setdefault((s["target"], s["size"]), {}).setdefault(b, {"d": [], "o": [], "v": []})
            for k, f in (("d", "ratio_default"), ("o", "ratio_verify_off"), ("v", "verify_on_over_off")):
                if s.get(f) is not None:
                    r[k].append(s[f])
med = lambda v: "%.2f" % statistics.median(v) if v else "-"
print("| path | size | before: default ÷ C | after: default ÷ C | before: off ÷ C | after: off ÷ C | before: on ÷ off | after: on ÷ off |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for (t, size), r in rows.items():
    b, a = r.get("before", {"d": [], "o": [], "v": []}), r.get("after", {"d": [], "o": [], "v": []})
    print(f"| {t} | {size:,} B | {med(b['d'])} | {med(a['d'])} | {med(b['o'])} | {med(a['o'])} | {med(b['v'])} | {med(a['v'])} |")
PY
