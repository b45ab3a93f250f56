#!/usr/bin/env bash
# History size: how many bytes `history` adds to results.json per case per run kept, on 100,000
# cases, over chained imports (each run's results.json is the next one's --baseline).
# RUNS (default 3; 21 shows the 20-run window full and trimmed), CASES (default 100000).
# Sizes do not depend on build flags, so a debug binary measures the same bytes:
# FCORR_BIN=target/debug/fcorr benches/history/run.sh
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
RUNS="${RUNS:-3}"
CASES="${CASES:-100000}"
if ! have_fcorr; then echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
machine_line
echo "cases: $CASES, chained runs: $RUNS, binary: $FCORR_BIN"
echo
echo "| runs kept | cases | results.json bytes | history bytes | history.cases bytes | bytes/case/run (history) | bytes/case/run (cases only) | id-keyed alternative bytes/case/run |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|"
for r in $(seq 1 "$RUNS"); do
  python3 "$ROOT/benches/history/gen.py" "$work/r$r.xml" --cases "$CASES" --run "$r"
  base=()
  if [ "$r" -gt 1 ]; then base=(--baseline "out$((r - 1))/results.json"); fi
  (cd "$work" && "$FCORR_BIN" import "r$r.xml" --name bench --out "out$r" --fail-on none --format json "${base[@]}" >/dev/null)
  python3 "$ROOT/benches/history/measure.py" "$work/out$r/results.json"
  # Only the newest results are needed for the next run.
  rm -f "$work/r$r.xml"
  [ "$r" -gt 1 ] && rm -rf "$work/out$((r - 1))"
done
