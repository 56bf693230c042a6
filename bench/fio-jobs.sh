#!/usr/bin/env bash
# The same fio job files run by fio and by `ssdlab fio`, alternately, several rounds; prints
# per job the median IOPS, bandwidth, mean and p99 completion latency of each tool.
#
# usage: bench/fio-jobs.sh [ROUNDS] [SECONDS]     (defaults: 3 rounds, 5 s per job)
# env:   SCRATCH=dir for the 1 GiB test file (default: bench/.scratch, ignored by git)
#        SSDLAB=path to the binary (default: builds target/release/ssdlab)
# needs: fio, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
SCRATCH=${SCRATCH:-bench/.scratch}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install -y fio)" >&2; exit 2; }
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
SSDLAB=$(realpath "$SSDLAB")
mkdir -p "$SCRATCH"
cd "$SCRATCH"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
FILE=fio-jobs-1g.img
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" -lt $((1 << 30)) ]; then
  "$SSDLAB" run --target "$FILE" --span 1g --rw write --bs 1m --qd 4 --bytes 1g --json >/dev/null
fi

# fio's examples (fio-rand-read, fio-seq-read, fio-rand-RW, fio-rand-write, null) with this
# file, a 1 GiB size, SECS seconds and direct=1 (so the page cache does not decide).
job() {
  local name=$1 body=$2
  printf '[global]\nfilename=%s\nsize=1g\ndirect=1\ntime_based\nruntime=%s\n%s\n' \
    "$FILE" "$SECS" "$body" >"$OUT/$name.fio"
}
job rand-read-qd16 $'[file1]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=16'
job rand-read-qd1-psync $'[file1]\nrw=randread\nbs=4k'
job seq-read-256k $'[file1]\nrw=read\nbs=256k\nioengine=libaio\niodepth=16'
job rand-rw-60-4jobs $'[file1]\nrw=randrw\nrwmixread=60\nbs=4k\nioengine=libaio\niodepth=16\nnumjobs=4\ngroup_reporting'
job rand-write-uring-qd32 $'[file1]\nrw=randwrite\nbs=4k\nioengine=io_uring\niodepth=32'
job uring-sqpoll-qd32 $'[file1]\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=32\nsqthread_poll=1\nfixedbufs=1\nregisterfiles=1'
printf '[null]\nioengine=null\nsize=100g\nrw=randread\nbs=4k\niodepth=32\ntime_based\nruntime=%s\nnorandommap\n' "$SECS" >"$OUT/null-qd32.fio"

# prints: iops bw_bytes clat_mean_ns clat_p99_ns (reads + writes of the first entry)
parse() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
iops = bw = 0.0
lat_n = lat_sum = 0.0
p99 = 0
for k in ("read", "write"):
    o = j[k]
    iops += o["iops"]; bw += o["bw_bytes"]
    n = o["clat_ns"]["N"]
    lat_n += n; lat_sum += n * o["clat_ns"]["mean"]
    if n:
        p99 = max(p99, o["clat_ns"]["percentile"]["99.000000"])
print(iops, bw, lat_sum / max(lat_n, 1), p99)
PY
}
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

printf '%-22s %-7s %10s %10s %10s %10s\n' job tool IOPS MB/s "clat mean" "clat p99"
for f in "$OUT"/*.fio; do
  name=$(basename "$f" .fio)
  declare -A v=()
  for tool in fio ssdlab; do for m in 0 1 2 3; do v[$tool$m]=""; done; done
  for r in $(seq 1 "$ROUNDS"); do
    fio --output-format=json "$f" >"$OUT/f.json" 2>/dev/null
    read -r a b c d < <(parse "$OUT/f.json"); v[fio0]+=" $a"; v[fio1]+=" $b"; v[fio2]+=" $c"; v[fio3]+=" $d"
    "$SSDLAB" fio --output-format=json "$f" >"$OUT/s.json" 2>/dev/null
    read -r a b c d < <(parse "$OUT/s.json"); v[ssdlab0]+=" $a"; v[ssdlab1]+=" $b"; v[ssdlab2]+=" $c"; v[ssdlab3]+=" $d"
  done
  for tool in fio ssdlab; do
    # shellcheck disable=SC2086
    printf '%-22s %-7s %10.0f %10.1f %8.1fus %8.1fus\n' "$name" "$tool" \
      "$(median ${v[${tool}0]})" "$(python3 -c "print($(median ${v[${tool}1]})/1e6)")" \
      "$(python3 -c "print($(median ${v[${tool}2]})/1e3)")" "$(python3 -c "print($(median ${v[${tool}3]})/1e3)")"
  done
done
