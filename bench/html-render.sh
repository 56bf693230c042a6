#!/usr/bin/env bash
# How long the HTML report of the full stripe study takes to make: runs the default study once
# (144 simulated points, into a scratch directory), then times `ssdlab report DB --html FILE`
# ROUNDS times (store read, analysis, findings, 16 charts, the page written) and prints each wall
# time and the median. Result in docs/PERFORMANCE.md.
#
# usage: bench/html-render.sh [ROUNDS]   (default 5)
# env:   SSDLAB=path to the binary (default: builds target/release/ssdlab)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
SSDLAB=$(realpath "$SSDLAB")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT"
SSDLAB_NO_STATUS=1 "$SSDLAB" study >/dev/null 2>&1
times=()
for _ in $(seq "$ROUNDS"); do
  rm -f r.html
  s=$(date +%s.%N)
  "$SSDLAB" report ssdlab-study-stripe-vertex450-128g.sqlite --html r.html >/dev/null 2>&1
  e=$(date +%s.%N)
  times+=("$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')")
done
printf 'report --html of the full stripe study (%s points, %s bytes, %s charts):\n' \
  144 "$(stat -c %s r.html)" "$(grep -o '<svg' r.html | wc -l)"
printf '  %s s\n' "${times[@]}"
printf 'median: %s s\n' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")"
