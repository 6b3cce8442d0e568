#!/usr/bin/env bash
# Refreshes the web UI's vendored JavaScript (server/web/static/vendor/) from the npm registry at
# exact versions, with their licences. Node is needed only to run this script, never to build wpg:
# the files it writes are committed and embedded by `go build`.
#
#   scripts/vendor-web.sh            # the versions below
#   HTMX=2.0.11 UPLOT=1.6.32 scripts/vendor-web.sh
# (The examples the new-job page offers are embedded from examples/ itself: package examples.)
set -euo pipefail

HTMX=${HTMX:-2.0.11}     # htmx.org, 2.x (4.x changed the API)
UPLOT=${UPLOT:-1.6.32}   # uplot

root=$(cd "$(dirname "$0")/.." && pwd)

dest=$root/server/web/static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "vendor-web.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
(cd "$tmp" && npm pack --silent "htmx.org@$HTMX" "uplot@$UPLOT" >/dev/null)
mkdir -p "$tmp/htmx" "$tmp/uplot"
tar -xzf "$tmp/htmx.org-$HTMX.tgz" -C "$tmp/htmx"
tar -xzf "$tmp/uplot-$UPLOT.tgz" -C "$tmp/uplot"

rm -rf "$dest"
mkdir -p "$dest"
install -m 0644 "$tmp/htmx/package/dist/htmx.min.js" "$dest/htmx.min.js"
install -m 0644 "$tmp/htmx/package/LICENSE" "$dest/htmx.LICENSE"
install -m 0644 "$tmp/uplot/package/dist/uPlot.iife.min.js" "$dest/uPlot.iife.min.js"
install -m 0644 "$tmp/uplot/package/dist/uPlot.min.css" "$dest/uPlot.min.css"
install -m 0644 "$tmp/uplot/package/LICENSE" "$dest/uPlot.LICENSE"
cat >"$dest/VERSIONS" <<END
# written by scripts/vendor-web.sh: npm package, exact version, licence
htmx.org $HTMX $(node -p "require('$tmp/htmx/package/package.json').license")
uplot $UPLOT $(node -p "require('$tmp/uplot/package/package.json').license")
END
(cd "$dest" && sha256sum htmx.min.js uPlot.iife.min.js uPlot.min.css >>VERSIONS)
echo "vendored into $dest:"
cat "$dest/VERSIONS"
