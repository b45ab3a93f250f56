#!/usr/bin/env bash
# Issue #27's history row: what loading a baseline adds to the peak memory of `fcorr import`.
# The baseline is the results.json (~45 MB) that importing benches/data/junit-100k.xml writes;
# each round imports the same file without and with `--baseline` (the same cases, so the
# comparison is empty and the cost is the baseline's own), ALTERNATED, REPS rounds, and prints
# the peak RSS of each (GNU time's %M) and their difference, median over the rounds.
#
#   benches/history/baseline.sh                              # 5 rounds, FCORR_BIN (target/release/fcorr)
#   FCORR_OLD=/tmp/fcorr-main benches/history/baseline.sh    # the same rounds for an earlier build too
#   FORMATS="json all" ...                                   # --format json (default) and/or every report
#
# Peak memory hardly depends on optimisation: a debug build measures about the same difference
# (say which build a figure came from).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

REPS="${REPS:-5}"
FORMATS="${FORMATS:-json}"
FCORR_OLD="${FCORR_OLD:-}"
JUNIT_FILE="${JUNIT_FILE:-benches/data/junit-100k.xml}"

need_gnu_time || { echo "cannot install GNU time; giving up" >&2; exit 1; }
have_fcorr || { echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; }
ensure_junit "$JUNIT_FILE" || exit 1

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$FCORR_BIN" import "$JUNIT_FILE" --name bench --out "$tmp/base" --fail-on none --format json >/dev/null 2>&1 \
  || { echo "could not write the baseline" >&2; exit 1; }

declare -A PEAKS
peak() { # NAME BIN FORMAT [--baseline FILE]: appends the run's peak RSS (KiB) to PEAKS[NAME]
  local name=$1 bin=$2 format=$3; shift 3
  local fmt=(--format json); [ "$format" = all ] && fmt=()
  rm -rf "$tmp/out"
  /usr/bin/time -f "%M" -o "$tmp/time" "$bin" import "$JUNIT_FILE" --name bench --out "$tmp/out" --fail-on none \
    "${fmt[@]}" "$@" >/dev/null 2>"$tmp/err" || echo "  $name: exit $? $(tail -n 2 "$tmp/err")" >&2
  PEAKS[$name]+="$(tail -n 1 "$tmp/time") "
}

echo "$(machine_line)"
echo "file: $JUNIT_FILE; baseline: its results.json, $(stat -c %s "$tmp/base/results.json") bytes; $REPS alternated rounds"
bins=("fcorr|$FCORR_BIN"); [ -n "$FCORR_OLD" ] && bins+=("fcorr (old)|$FCORR_OLD")
for ((i = 1; i <= REPS; i++)); do
  echo "round $i/$REPS, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  for entry in "${bins[@]}"; do
    label=${entry%%|*}; bin=${entry#*|}
    for format in $FORMATS; do
      peak "$label $format" "$bin" "$format"
      peak "$label $format baseline" "$bin" "$format" --baseline "$tmp/base/results.json"
    done
  done
done

mib() { awk '{printf "%.1f", $1 / 1024}'; }
echo
echo "| binary | formats | peak without baseline (MiB) | peak with baseline (MiB) | extra (MiB), median |"
echo "|---|---|--:|--:|--:|"
for entry in "${bins[@]}"; do
  label=${entry%%|*}
  for format in $FORMATS; do
    without=${PEAKS[$label $format]}; with=${PEAKS[$label $format baseline]}
    extra=$(paste -d' ' <(tr ' ' '\n' <<<"$with" | grep -v '^$') <(tr ' ' '\n' <<<"$without" | grep -v '^$') \
      | awk '{print $1 - $2}' | median 0)
    echo "| $label | $format | $(tr ' ' '\n' <<<"$without" | grep -v '^$' | median 0 | mib) |" \
      "$(tr ' ' '\n' <<<"$with" | grep -v '^$' | median 0 | mib) | $(mib <<<"$extra") |"
  done
done
echo
for key in "${!PEAKS[@]}"; do echo "$key, each round (KiB): ${PEAKS[$key]}"; done | sort
