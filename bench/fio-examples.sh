#!/usr/bin/env bash
# Which of fio's example job files `ssdlab fio` accepts, refuses by name, or cannot start for
# this machine's lack of a path, device or variable — next to what fio itself makes of each
# (`fio --parse-only`, which fails for engines fio was built without). Nothing is run: both
# tools only parse and check (ssdlab also plans the targets), in an empty scratch directory.
#
# usage: bench/fio-examples.sh EXAMPLES_DIR    (fio's `examples/`, e.g. of a fio-3.33 checkout)
# env:   SSDLAB=path to the binary (default: builds target/release/ssdlab)
# needs: fio.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:?usage: bench/fio-examples.sh EXAMPLES_DIR}
DIR=$(realpath "$DIR")
command -v fio >/dev/null || { echo "fio is not installed (apt-get install -y fio)" >&2; exit 2; }
if [ -z "${SSDLAB:-}" ]; then
  cargo build --release --quiet
  SSDLAB=target/release/ssdlab
fi
SSDLAB=$(realpath "$SSDLAB")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
declare -A count
printf '%-34s %-9s %-11s %s\n' example fio ssdlab why
for f in "$DIR"/*.fio; do
  name=$(basename "$f")
  if fio --parse-only "$f" >/dev/null 2>&1; then fio_says=parses; else fio_says=fails; fi
  if out=$("$SSDLAB" fio --parse-only "$f" 2>&1 >/dev/null); then
    ours=runs
    why=
  else
    why=$(printf '%s' "$out" | tail -n 1 | sed "s#$DIR/##g; s/^ssdlab: error: //")
    if printf '%s' "$out" | grep -q 'not supported by ssdlab'; then
      ours=refused
      why=$(printf '%s' "$why" | sed 's/^not supported by ssdlab (nothing was run; --ignore-unsupported runs without them): //')
    elif printf '%s' "$out" | grep -qiE 'unknown option|did you mean'; then
      ours=UNKNOWN
    else
      ours=needs
    fi
  fi
  count["$fio_says/$ours"]=$(( ${count["$fio_says/$ours"]:-0} + 1 ))
  printf '%-34s %-9s %-11s %s\n' "$name" "$fio_says" "$ours" "$(printf '%s' "$why" | cut -c1-100)"
done
echo
echo "fio/ssdlab: files (runs: accepted and planned; refused: an option or engine named as not"
echo "supported; needs: a path, device or variable this machine lacks; UNKNOWN: must not happen)"
for k in "${!count[@]}"; do printf '  %-18s %s\n' "$k" "${count[$k]}"; done | sort
