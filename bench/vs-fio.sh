#!/usr/bin/env bash
# ssdlab vs fio on the same workloads, in one run, several rounds; prints medians and ratios.
#
# usage: bench/vs-fio.sh [ROUNDS] [SECONDS]      (defaults: 3 rounds of 5 s per tool and case)
# env:   SCRATCH=dir for the 1 GiB test file (default: bench/.scratch, ignored by git)
#        SSDLAB=path to the binary (default: builds target/release/ssdlab)
#        CASES="null qd1 qd32 buffered" to pick cases
# needs: fio (Debian: apt-get install -y fio), python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
SCRATCH=${SCRATCH:-bench/.scratch}
CASES=${CASES:-"null qd1 qd32 buffered"}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install -y fio)" >&2; exit 2; }
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
mkdir -p "$SCRATCH"
FILE="$SCRATCH/vs-fio-1g.img"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Lay the file out once with real data (ssdlab never truncates; fio reuses an existing file).
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" -lt $((1 << 30)) ]; then
  "$SSDLAB" run --target "$FILE" --span 1g --rw write --bs 1m --qd 4 --bytes 1g --json >/dev/null
fi

# metric extraction: prints "iops cpu_ns_per_io"
parse() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
r = j["read"]
ios = r["total_ios"]
runtime_ms = j["job_runtime"] or r["runtime"]
if "ssdlab" in j:
    cpu_ns = j["ssdlab"]["cpu_ns_per_io"]
else:
    cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1e6 / max(ios, 1)
print(r["iops"], cpu_ns)
PY
}

median() { python3 -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print(statistics.median(v))' "$@"; }

run_case() {
  local name=$1 ssd_args=$2 fio_args=$3
  local si=() sc=() fi_=() fc=()
  for r in $(seq 1 "$ROUNDS"); do
    [ "$name" = buffered ] && cat "$FILE" >/dev/null
    # shellcheck disable=SC2086
    "$SSDLAB" run $ssd_args --time "${SECS}s" --json >"$OUT/s.json"
    read -r i c < <(parse "$OUT/s.json"); si+=("$i"); sc+=("$c")
    [ "$name" = buffered ] && cat "$FILE" >/dev/null
    # shellcheck disable=SC2086
    fio --name=bench --output-format=json --time_based --runtime="$SECS" $fio_args >"$OUT/f.json"
    read -r i c < <(parse "$OUT/f.json"); fi_+=("$i"); fc+=("$c")
  done
  local msi msc mfi mfc
  msi=$(median "${si[@]}"); msc=$(median "${sc[@]}"); mfi=$(median "${fi_[@]}"); mfc=$(median "${fc[@]}")
  python3 - "$name" "$msi" "$msc" "$mfi" "$mfc" <<'PY'
import sys
name, si, sc, fi, fc = sys.argv[1], *map(float, sys.argv[2:])
print(f"{name:<10} ssdlab {si:>12,.0f} IOPS {sc:>8.0f} ns CPU/IO | fio {fi:>12,.0f} IOPS {fc:>8.0f} ns CPU/IO | IOPS ratio {si/fi:5.2f}x  CPU/IO ratio {sc/fc if fc else 0:5.2f}x")
PY
}

echo "ssdlab vs fio $(fio --version): $ROUNDS rounds x ${SECS}s, medians; $(nproc) CPUs, kernel $(uname -r)"
for c in $CASES; do
  case $c in
    null) run_case null "--null --rw randread --bs 4k --qd 32" \
            "--ioengine=null --rw=randread --bs=4k --iodepth=32 --size=1t" ;;
    qd1) run_case qd1 "--target $FILE --rw randread --bs 4k --qd 1" \
            "--ioengine=io_uring --direct=1 --filename=$FILE --size=1g --rw=randread --bs=4k --iodepth=1" ;;
    qd32) run_case qd32 "--target $FILE --rw randread --bs 4k --qd 32" \
            "--ioengine=io_uring --direct=1 --filename=$FILE --size=1g --rw=randread --bs=4k --iodepth=32" ;;
    buffered) run_case buffered "--target $FILE --rw randread --bs 4k --qd 32 --buffered" \
            "--ioengine=io_uring --direct=0 --filename=$FILE --size=1g --rw=randread --bs=4k --iodepth=32" ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
done
