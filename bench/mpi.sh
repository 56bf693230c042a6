#!/usr/bin/env bash
# ssdlab on MPI ranks: what aggregation costs and how a distributed sweep compares with --jobs.
# Needs `cargo build --release --features mpi` and Open MPI (mpirun). Results: docs/PERFORMANCE.md.
#
#   bench/mpi.sh            # aggregation at 4 ranks (10 s null runs), tree-reduction cost at
#                           # 4/16/64 simulated ranks, 4-rank sweep vs --jobs 4
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/ssdlab}
RED=${RED:-target/release/examples/reduce_cost}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
dir=bench/.scratch/mpi
mkdir -p "$dir"

echo "== aggregation at 4 ranks: 10 s null runs (aggregation_ns from the job's JSON)"
for i in 1 2 3; do
  mpirun --oversubscribe -n 4 "$BIN" run --null --qd 4 --time 10s --json \
    | python3 -c 'import json,sys; c=json.load(sys.stdin)["jobs"][0]["ssdlab"]["cluster"]; a=c["aggregation_ns"]; print("aggregation %.2f ms = %.3f %% of 10 s" % (a/1e6, a/1e8))'
done

echo "== tree reduction and gather at rank 0, ranks simulated as threads (one process)"
"$RED" 4 16 64

echo "== distributed simulated sweep: 4 ranks vs --jobs 4 in one process"
sed -e 's/^name = .*/name = "mpi-bench"/' examples/sweeps/stripe-study-sim.toml > "$dir/sweep.toml"
rm -f "$dir"/one.sqlite "$dir"/four.sqlite
/usr/bin/time -f "one process --jobs 4: %e s" "$BIN" sweep "$dir/sweep.toml" --db "$dir/one.sqlite" --jobs 4 >/dev/null
/usr/bin/time -f "mpirun -n 4: %e s" mpirun --oversubscribe -n 4 "$BIN" sweep "$dir/sweep.toml" --db "$dir/four.sqlite" >/dev/null
python3 - "$dir" <<'PY'
import sqlite3, sys
d = sys.argv[1]
q = "SELECT point_key, result_json FROM results ORDER BY point_key"
a = list(sqlite3.connect(f"{d}/one.sqlite").execute(q))
b = list(sqlite3.connect(f"{d}/four.sqlite").execute(q))
print(f"stores identical: {a == b} ({len(a)} points)")
PY
