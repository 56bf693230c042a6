#!/usr/bin/env bash
# The simulator behaviours of docs/SIMULATOR.md, each as ssdlab runs and the figures read from
# their JSON. Run it with two binaries to compare models:
#   SSDLAB=path/to/ssdlab bench/sim-physics.sh [CASE...]
# Cases: qd-rmw (C300, full, 512-byte-aligned 4 KiB random writes over QD), gc-write (128 GB steady
# state, 4 KiB random writes QD 32 for 200 s), gc-mix (the same drive, 70/30 random read/write
# QD 4 for 60 s), seqread (128 KiB sequential reads over QD, full drive), qd-write (4 KiB random
# writes at QD 1/2/4, full drive), series (QD 1 random reads for 2 s and
# 2.6 s: the last interval).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SSDLAB:-}" ]; then cargo build --release --quiet; SSDLAB=target/release/ssdlab; fi
CASES=${*:-qd-rmw gc-write gc-mix seqread qd-write series}
out=$(mktemp -d /tmp/ssdlab-physics-XXXX)
trap 'rm -rf "$out"' EXIT

run() { # name, ssdlab run arguments...
  local name=$1; shift
  echo "\$ ssdlab run $*" >&2
  "$SSDLAB" run "$@" --json >"$out/$name.json"
}

# Prints the named figures of one result.
show() { # json, label
  python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
s = j["ssdlab"]
dev = (s.get("device") or [{}])[0]
u = dev.get("utilisation") or {}
def lat(kind, p):
    return j[kind]["lat_ns"].get("percentile", {}).get(p, 0) / 1e6
parts = [sys.argv[2]]
r, w = j["read"], j["write"]
if r["total_ios"]:
    parts.append(f"read {r['iops']:,.0f} IOPS {r['bw_bytes']/1e6:.1f} MB/s mean {r['lat_ns']['mean']/1e3:,.0f} us"
                 f" p99.9 {lat('read', '99.900000'):.2f} ms max {r['lat_ns']['max']/1e6:.1f} ms")
if w["total_ios"]:
    parts.append(f"write {w['iops']:,.0f} IOPS {w['bw_bytes']/1e6:.1f} MB/s"
                 f" p99.9 {lat('write', '99.900000'):.2f} ms max {w['lat_ns']['max']/1e6:.1f} ms")
series = s.get("series") or []
if len(series) > 1:
    wi = [p["write_iops"] + p["read_iops"] for p in series]
    zero = sum(1 for v in wi if v == 0)
    parts.append(f"per-second IOPS min {min(wi):,.0f} max {max(wi):,.0f}, {zero} empty seconds of {len(wi)}")
if dev:
    if "utilisation" in dev:
        parts.append(f"busiest {u['busiest']} {u['busiest_utilisation']*100:.0f} %, die max {u['die_max']*100:.0f} %,"
                     f" channel max {u['channel_max']*100:.0f} %, link {u['link']*100:.0f} %")
    else:
        win = s["runtime_ns"]
        dies = dev.get("per_die_busy_ns") or []
        if dies:
            parts.append(f"die max {max(dies)/win*100:.0f} %, firmware {dev['fw_busy_ns']/win*100:.0f} %,"
                         f" link {dev['link_busy_ns']/win*100:.0f} % (busy ns / runtime; no channel counter)")
    if dev.get("nand_programs"):
        cmds = dev.get("nand_program_cmds")
        parts.append(f"WA {dev['write_amplification']:.2f}, gc runs {dev['gc_runs']}"
                     + (f", pages per program command {dev['nand_programs']/cmds:.2f}" if cmds else "")
                     + f", die time per programmed page {sum(dev['per_die_busy_ns'])/dev['nand_programs']/1e3:,.0f} us")
print(" | ".join(parts))
EOF
}

for c in $CASES; do
  case $c in
  qd-rmw)
    echo "== C300, 4 KiB random writes at 512-byte alignment (read-modify-write), full drive, 10 s"
    for q in 1 2 4 8 16 32; do
      run "rmw$q" --sim c300-256g --state full --rw randwrite --bs 4k --align 512 --qd "$q" --time 10s
      show "$out/rmw$q.json" "QD $q"
    done ;;
  gc-write)
    echo "== vertex450-128g, steady state, 4 KiB random writes, QD 32, 200 s"
    run gcw --sim vertex450-128g --state steady --rw randwrite --bs 4k --qd 32 --time 200s
    show "$out/gcw.json" "QD 32" ;;
  gc-mix)
    echo "== vertex450-128g, steady state, 4 KiB random 70 % reads / 30 % writes, QD 4, 60 s"
    run gcm --sim vertex450-128g --state steady --rw randrw --read-pct 70 --bs 4k --qd 4 --time 60s
    show "$out/gcm.json" "QD 4" ;;
  seqread)
    echo "== vertex450-128g, full drive, 128 KiB sequential reads, 5 s"
    for q in 1 2 4 8; do
      run "seq$q" --sim vertex450-128g --state full --rw read --bs 128k --qd "$q" --time 5s
      show "$out/seq$q.json" "QD $q"
    done ;;
  qd-write)
    echo "== vertex450-128g, full drive (pSLC region used up), 4 KiB random writes, 10 s"
    for q in 1 2 4; do
      run "w$q" --sim vertex450-128g --state full --rw randwrite --bs 4k --qd "$q" --time 10s
      show "$out/w$q.json" "QD $q"
    done ;;
  series)
    echo "== vertex450-128g, full drive, 4 KiB random reads, QD 1, 2 s and 2.6 s: the per-second series"
    for t in 2s 2600ms; do
      run "ser$t" --sim vertex450-128g --state full --rw randread --bs 4k --qd 1 --time "$t"
      python3 - "$out/ser$t.json" "$t" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["jobs"][0]["ssdlab"]
print(f"--time {sys.argv[2]}, runtime {s['runtime_ns']} ns: "
      + " | ".join(f"t {p['t_ms']} ms: {p['read_iops']:,.0f} IOPS" for p in s["series"]))
EOF
    done ;;
  *) echo "unknown case $c" >&2; exit 2 ;;
  esac
done
