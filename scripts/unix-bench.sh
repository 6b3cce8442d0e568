#!/bin/bash
# unix at 64 MiB, the verified default, against the C anchor (#14): each rep runs the build under test,
# an optional second build and the C loop `stream -t unix -m rw`, in an order that rotates from rep to
# rep; GB/s of payload per run (the C figure is its median warm iteration). A wpg run whose receiver did
# not get every frame intact prints FAIL.
#
#   NEW=path/to/wpg [OLD=path/to/wpg] [REPS=6] [SIZE=64MiB] scripts/unix-bench.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NEW=${NEW:?give NEW=path/to/wpg}
OLD=${OLD:-}
REPS=${REPS:-6}
SIZE=${SIZE:-64MiB}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$ROOT/../shared/anchors/ipc" "$tmp/ipc"
make -s -C "$tmp/ipc" stream >/dev/null
bytes=$(python3 -c "import sys; u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; s=sys.argv[1]; print(next((int(s[:-3])*v for k,v in u.items() if s.endswith(k)), s))" "$SIZE")
w() {
  [ -z "$1" ] && { echo -; return; }
  "$1" bench --backend unix --size "$SIZE" --duration 3s --verify on --json | python3 -c 'import json,sys
j=json.load(sys.stdin); v=j.get("verification") or {}
ok=v.get("frames")==j["frames"] and not v.get("corrupted") and not v.get("lost")
print(round(j["bytes"]/j["seconds"]/1e9,3) if ok else "FAIL")'
}
c() { "$tmp/ipc/stream" -t unix -m rw -c "$bytes" -T $((16*bytes)) -S 4194304 2>&1 | grep ^R | awk -F, '$7>1 {print $10}' | sort -n | sed -n 2p; }
for r in $(seq 1 "$REPS"); do
  case $((r % 3)) in
    0) o=$(w "$OLD"); n=$(w "$NEW"); k=$(c);;
    1) n=$(w "$NEW"); k=$(c); o=$(w "$OLD");;
    2) k=$(c); o=$(w "$OLD"); n=$(w "$NEW");;
  esac
  echo "rep $r new $n old $o C $k load $(cut -d' ' -f1 /proc/loadavg)"
done
