#!/usr/bin/env bash
# Rated vs simulated figures for every drive preset, through the ssdlab CLI (virtual time, so the
# result does not depend on the machine). Prints a markdown table for docs/CALIBRATION.md.
# Method (QD 32, 0.5 s ramp + 2 s measured, seed 1, first 8 GiB):
#   seq read 128 KiB on a `full` drive, seq write 128 KiB on a `fresh` drive,
#   rand read 4 KiB on a `full` drive, rand write 4 KiB on a `fresh` drive.
# usage: bench/calibrate.sh [PRESET...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SSDLAB:-}" ]; then cargo build --release --quiet; SSDLAB=target/release/ssdlab; fi
presets=("$@")
[ ${#presets[@]} -gt 0 ] || mapfile -t presets < <("$SSDLAB" drives --json | python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)]')
measure() { # preset state rw bs field → MB/s or IOPS
  "$SSDLAB" run --sim "$1" --state "$2" --rw "$3" --bs "$4" --qd 32 --span 8g --ramp 500ms --time 2s --seed 1 --json |
    python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; k='read' if 'read' in '$3' else 'write'; print(j[k]['$5'] / (1e6 if '$5'=='bw_bytes' else 1))"
}
rated() { # preset key
  python3 - "$1" "$2" <<'PY'
import sys, tomllib, pathlib
name, key = sys.argv[1], sys.argv[2]
p = pathlib.Path("presets") / f"{name}.toml"
r = tomllib.loads(p.read_text()).get("rated", {}) if p.exists() else {}
v = r.get(key)
print(v if v is not None else "")
PY
}
cell() { # rated sim unit
  python3 - "$1" "$2" "$3" <<'PY'
import sys
r, s, u = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if r and float(r) > 0:
    r = float(r)
    print(f"{r:,.0f} / {s:,.0f} {u} ({(s - r) / r * 100:+.0f}%)")
else:
    print(f"— / {s:,.0f} {u}")
PY
}
echo "| preset | seq read 128K QD32 (rated / sim) | seq write 128K QD32 | rand read 4K QD32 | rand write 4K QD32 |"
echo "|---|---|---|---|---|"
for p in "${presets[@]}"; do
  sr=$(measure "$p" full read 128k bw_bytes); sw=$(measure "$p" fresh write 128k bw_bytes)
  rr=$(measure "$p" full randread 4k iops); rw=$(measure "$p" fresh randwrite 4k iops)
  echo "| $p | $(cell "$(rated "$p" seq_read_mb_s)" "$sr" MB/s) | $(cell "$(rated "$p" seq_write_mb_s)" "$sw" MB/s) | $(cell "$(rated "$p" rand_read_iops)" "$rr" IOPS) | $(cell "$(rated "$p" rand_write_iops)" "$rw" IOPS) |"
done
