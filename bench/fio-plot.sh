#!/usr/bin/env bash
# fio-plot draws ssdlab output: a simulated sweep exported with `ssdlab report --fio-json` drawn
# as fio-plot's queue-depth bar charts (-l), and the logs of one run (--write-bw/iops/lat-log)
# drawn as its time series (-g) and by fio's fio2gnuplot. Needs fio-plot (pip install fio-plot; tested with 1.1.21); the
# charts land in bench/.scratch/fio-plot/. Results: docs/FIO.md.
#
#   bench/fio-plot.sh                 # builds ssdlab (release) first
#   FIO_PLOT=/path/to/fio-plot SSDLAB=target/release/ssdlab bench/fio-plot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FIO_PLOT=${FIO_PLOT:-fio-plot}
command -v "$FIO_PLOT" >/dev/null || { echo "fio-plot not found (pip install fio-plot)" >&2; exit 2; }
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
out=bench/.scratch/fio-plot
rm -rf "$out"
mkdir -p "$out/logs"

# 1. A small simulated sweep: one drive vs RAID 0 of two (16k stripe), 4k random reads, QD 1-32.
cat > "$out/sweep.toml" <<'TOML'
name = "fio-plot-demo"
time = "500ms"
span = "4GiB"
qd = [1, 2, 4, 8, 16, 32]
workloads = ["4k-randread"]

[[target]]
label = "single"
sim = "vertex450-128g"
baseline = true

[[target]]
label = "raid0"
sim = "vertex450-128g"
drives = 2
stripes = ["16k"]
TOML
"$SSDLAB" sweep "$out/sweep.toml" --db "$out/sweep.sqlite" >/dev/null
"$SSDLAB" report "$out/sweep.sqlite" --fio-json "$out/json" >/dev/null
find "$out/json" -name '*.json' | sort
single="$out/json/fio-plot-demo/single/4k"
raid="$out/json/fio-plot-demo/raid0-stripe-16k/4k"
# -l takes one directory: one chart per target; -C compares the targets at one queue depth.
"$FIO_PLOT" -i "$single" -T "ssdlab: Vertex 450" -l -r randread -d 1 2 4 8 16 32 -n 1 \
  -o "$out/bars-single.png" >/dev/null
"$FIO_PLOT" -i "$raid" -T "ssdlab: RAID 0 of two, 16k stripe" -l -r randread -d 1 2 4 8 16 32 -n 1 \
  -o "$out/bars-raid0.png" >/dev/null
"$FIO_PLOT" -i "$single" "$raid" -T "ssdlab: single vs RAID 0 at QD 32" -C -r randread -d 32 -n 1 \
  -o "$out/compare.png" >/dev/null

# 2. The logs of one 10 s simulated run, named as bench-fio names fio's, with its JSON beside them.
name="$out/logs/randread-iodepth-8-numjobs-1"
"$SSDLAB" run --sim vertex450-128g --state full --rw randread --qd 8 --span 4GiB --time 10s \
  --write-bw-log "$name" --write-iops-log "$name" --write-lat-log "$name" --log-avg-msec 1000 \
  --json --output "$out/logs/randread-8-1.json" 2>/dev/null
ls "$out/logs"
"$FIO_PLOT" -i "$out/logs" -T "ssdlab: time series" -g -r randread -d 8 -n 1 -t bw iops lat \
  -o "$out/timeseries.png" >/dev/null

for f in bars-single.png bars-raid0.png compare.png timeseries.png; do
  test -s "$out/$f" || { echo "fio-plot made no $f" >&2; exit 1; }
  echo "ok: $out/$f ($(stat -c %s "$out/$f") bytes)"
done

# 3. fio's own fio2gnuplot on the same logs (Debian's fio package; needs gnuplot).
if command -v fio2gnuplot >/dev/null && command -v gnuplot >/dev/null; then
  mkdir -p "$out/gnuplot"
  (cd "$out/logs" && fio2gnuplot -p '*_bw.*.log' -g -d "../gnuplot" >/dev/null 2>&1)
  n=$(find "$out/gnuplot" -name '*.png' -size +0 | wc -l)
  test "$n" -gt 0 || { echo "fio2gnuplot made no chart" >&2; exit 1; }
  echo "ok: fio2gnuplot drew $n charts in $out/gnuplot"
else
  echo "skipped fio2gnuplot (apt-get install fio gnuplot-nox)"
fi
