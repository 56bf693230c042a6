#!/usr/bin/env bash
# What fio's time-series logs cost per I/O: the same run with and without all three logs
# (--write-bw-log, --write-iops-log, --write-lat-log at --log-avg-msec 1000), in ssdlab and in
# fio (write_bw_log, write_iops_log, write_lat_log, log_avg_msec=1000), alternating off/on
# rounds so drift hits both alike. The null target at QD 32 is the worst case: nothing but the
# tool's own work per I/O. Prints the medians of CPU time per I/O; results in docs/PERFORMANCE.md.
#
# usage: bench/log-overhead.sh [ROUNDS] [SECONDS]   (defaults: 3 rounds of 60 s per tool and mode)
# env:   SSDLAB=path to the binary (default: builds target/release/ssdlab); TOOLS="ssdlab fio"
#        TARGET=null (default) or cached: 4k randread QD32 of a 1 GiB file through the page cache
#        (SCRATCH=dir for the file, default bench/.scratch)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-60}
TOOLS=${TOOLS:-"ssdlab fio"}
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
TARGET=${TARGET:-null}
SCRATCH=${SCRATCH:-bench/.scratch}
case $TARGET in
  null)
    ssd_target=(--null)
    fio_target=(--ioengine=null --size=1t) ;;
  cached)
    mkdir -p "$SCRATCH"
    FILE="$SCRATCH/log-overhead-1g.img"
    if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" -lt $((1 << 30)) ]; then
      "$SSDLAB" run --target "$FILE" --span 1g --rw write --bs 1m --qd 4 --bytes 1g --json >/dev/null
    fi
    cat "$FILE" >/dev/null
    ssd_target=(--target "$FILE" --buffered)
    fio_target=(--ioengine=io_uring --filename="$FILE" --size=1g --direct=0) ;;
  *) echo "TARGET is null or cached" >&2; exit 2 ;;
esac

cpu_per_io() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r = j["read"]
if "ssdlab" in j:
    print(j["ssdlab"]["cpu_ns_per_io"], r["iops"])
else:
    ms = j["job_runtime"]
    print((j["usr_cpu"] + j["sys_cpu"]) / 100.0 * ms * 1e6 / max(r["total_ios"], 1), r["iops"])
PY
}
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

run() { # tool mode → "cpu_ns iops"
  local tool=$1 mode=$2 logs=()
  rm -f "$OUT"/l_*
  if [ "$tool" = ssdlab ]; then
    [ "$mode" = on ] && logs=(--write-bw-log "$OUT/l" --write-iops-log "$OUT/l" --write-lat-log "$OUT/l" --log-avg-msec 1000)
    "$SSDLAB" run "${ssd_target[@]}" --rw randread --bs 4k --qd 32 --time "${SECS}s" --json "${logs[@]}" >"$OUT/r.json" 2>/dev/null
  else
    [ "$mode" = on ] && logs=(--write_bw_log="$OUT/l" --write_iops_log="$OUT/l" --write_lat_log="$OUT/l" --log_avg_msec=1000)
    fio --name=bench "${fio_target[@]}" --rw=randread --bs=4k --iodepth=32 --time_based \
      --runtime="$SECS" --output-format=json "${logs[@]}" >"$OUT/r.json"
  fi
  if [ "$mode" = on ]; then
    test "$(ls "$OUT"/l_* | wc -l)" -eq 5 || { echo "$tool wrote no logs" >&2; exit 1; }
  fi
  cpu_per_io "$OUT/r.json"
}

echo "log overhead: $TARGET target, 4k randread QD32, ${ROUNDS} x ${SECS}s per tool and mode, medians; $(nproc) CPUs, kernel $(uname -r)"
for tool in $TOOLS; do
  declare -a off=() on=() ioff=() ion=()
  for r in $(seq 1 "$ROUNDS"); do
    read -r c i < <(run "$tool" off); off+=("$c"); ioff+=("$i")
    read -r c i < <(run "$tool" on); on+=("$c"); ion+=("$i")
  done
  python3 - "$tool" "$(median "${off[@]}")" "$(median "${on[@]}")" "$(median "${ioff[@]}")" "$(median "${ion[@]}")" "${off[*]}" "${on[*]}" <<'PY'
import sys
tool, off, on, ioff, ion = sys.argv[1], *map(float, sys.argv[2:6])
print(f"{tool:<7} CPU/IO without logs {off:7.1f} ns, with logs {on:7.1f} ns: {100*(on-off)/off:+5.1f} %"
      f"  (IOPS {ioff:,.0f} / {ion:,.0f}; rounds off: {sys.argv[6]}; on: {sys.argv[7]})")
PY
done
