#!/usr/bin/env bash
# Simulator speed and memory through the CLI:
#  1. 4 KiB random writes, QD 3, 8 GiB span, vertex450-128g, 3 minutes of simulated time
#     (goal: <= 2 s of wall time), best of ROUNDS;
#  2. peak RSS of a 128 GiB-class drive with a 4 KiB mapping unit (goal: <= 400 MiB);
#  3. the 144-point simulated stripe sweep of examples/sweeps (goal: <= 60 s on 2 cores);
#  4. the job compared with MQSim: 2M 4 KiB random writes at QD 32 over a fresh vertex450-128g
#     with the pSLC region off, simulator only (crates/ssdsim/examples/speed.rs; goal >= 5.2M
#     requests/s) and through the CLI (wall time, drive set-up and JSON included), ROUNDS each.
# usage: bench/sim-speed.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
if [ -z "${SSDLAB:-}" ]; then cargo build --release --quiet; SSDLAB=target/release/ssdlab; fi
best=""
for _ in $(seq 1 "$ROUNDS"); do
  t=$( { /usr/bin/time -f "%e %M" "$SSDLAB" run --sim vertex450-128g --rw randwrite --bs 4k --qd 3 \
        --span 8GiB --time 3m --align 4k --json >/tmp/ssdlab-sim-speed.json; } 2>&1 | tail -1)
  secs=${t% *}; rss=${t#* }
  ios=$(python3 -c 'import json; print(json.load(open("/tmp/ssdlab-sim-speed.json"))["jobs"][0]["write"]["total_ios"])')
  echo "3 min simulated: ${secs} s wall, ${ios} requests, $(python3 -c "print(f'{$ios/$secs/1e6:.2f}')")M req/s, peak RSS $((rss / 1024)) MiB"
  if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $secs < $best else 1)"; then best=$secs; fi
done
echo "best: ${best} s (goal <= 2 s)"
t=$( { /usr/bin/time -f "%e %M" "$SSDLAB" run --sim vertex450-128g --state steady --rw randwrite --bs 4k \
      --qd 32 --time 10s >/dev/null; } 2>&1 | tail -1)
echo "128 GB drive, 4 KiB mapping unit, steady state over the whole span: peak RSS $(( ${t#* } / 1024 )) MiB" \
     "(goal <= 400 MiB), ${t% *} s wall incl. preconditioning"
db=$(mktemp -u /tmp/ssdlab-sweep-XXXX.sqlite)
start=$(date +%s.%N)
"$SSDLAB" sweep examples/sweeps/stripe-study-sim.toml --db "$db" | head -1
end=$(date +%s.%N)
rm -f "$db"
python3 -c "print(f'144-point simulated sweep: {$end - $start:.1f} s wall on $(nproc) cores (goal <= 60 s)')"
cargo build --release --quiet -p ssdlab-ssdsim --example speed
for _ in $(seq 1 "$ROUNDS"); do
  /usr/bin/time -f "  (process: %e s wall, %U s user, %S s sys, peak RSS %M KiB)" target/release/examples/speed requests 2000000
done
for _ in $(seq 1 "$ROUNDS"); do
  t=$( { /usr/bin/time -f "%e %U" "$SSDLAB" run --sim vertex450-128g --set ftl.pslc_bytes=0 --rw randwrite --bs 4k \
        --qd 32 --ios 2000000 --json >/dev/null; } 2>&1 | tail -1)
  python3 -c "print(f'CLI, 2M 4 KiB random writes QD 32, pSLC off: ${t% *} s wall ({2e6/${t% *}/1e6:.2f}M requests/s), ${t#* } s user ({2e6/${t#* }/1e6:.2f}M requests/s of CPU)')"
done
