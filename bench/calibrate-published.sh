#!/usr/bin/env bash
# Calibrates every preset that has published figures in data/published (the seed findings are
# never fitted), then validates the built-in and the fitted presets against all the data.
# Writes the fitted presets to OUT (default: target/calibrated) and prints the tables for
# docs/CALIBRATION.md with each command's wall time.
# usage: bench/calibrate-published.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SSDLAB:-}" ]; then cargo build --release --quiet; SSDLAB=target/release/ssdlab; fi
out=${1:-target/calibrated}
mkdir -p "$out"
presets=$(python3 - <<'PY'
import glob, tomllib
names = set()
for f in glob.glob("data/published/*.toml"):
    d = tomllib.load(open(f, "rb"))
    if d["source"]["kind"] != "findings":
        names |= {x["drive"] for x in d.get("figure", [])}
print(" ".join(sorted(names)))
PY
)
echo "## validate, built-in presets"
echo '```'
/usr/bin/time -f "(%e s wall)" "$SSDLAB" validate --against data/published 2>&1 | grep -v '^ssdlab: simulating'
echo '```'
for p in $presets; do
  echo "## calibrate $p"
  echo '```'
  /usr/bin/time -f "(%e s wall)" "$SSDLAB" calibrate --from data/published --base "$p" --out "$out/$p-fitted.toml" 2>&1 | grep -v '^ssdlab: calibrate: pass'
  echo '```'
  echo "## validate $p-fitted"
  echo '```'
  "$SSDLAB" validate "$out/$p-fitted.toml" --drive "$p" --against data/published 2>&1 | grep -v '^ssdlab: simulating'
  echo '```'
done
