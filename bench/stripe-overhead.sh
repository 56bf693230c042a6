#!/usr/bin/env bash
# Stripe set overhead: RAID 0 of 2 null members vs 1 null target, 4 KiB random read, QD 32.
# Runs both side by side, several rounds, prints medians and the ratio (goal: >= 0.8x).
# usage: bench/stripe-overhead.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
SECS=${2:-3}
if [ -z "${SSDLAB:-}" ]; then cargo build --release --quiet; SSDLAB=target/release/ssdlab; fi
iops() { "$SSDLAB" run "$@" --rw randread --bs 4k --qd 32 --time "${SECS}s" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])'; }
single=(); raid=()
for _ in $(seq 1 "$ROUNDS"); do
  single+=("$(iops --null)")
  raid+=("$(iops --raid0 null:1t,null:1t --stripe 16k)")
done
python3 - "${#single[@]}" "${single[@]}" "${raid[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1]); v = list(map(float, sys.argv[2:]))
s, r = statistics.median(v[:n]), statistics.median(v[n:])
print(f"null single {s:,.0f} IOPS | raid0 2 x null, 16k stripe {r:,.0f} IOPS | ratio {r/s:.2f}x (goal >= 0.80x)")
PY
