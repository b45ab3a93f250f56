#!/usr/bin/env bash
# Memory benchmark: peak RSS of `fcorr import` on reports with one huge element, which must not
# grow with that element's size (issue 9, point 10: at most 64 MB for a 200 MB <system-out>).
# Each file is imported RUNS times (default 2) by FCORR_BIN and, when set, BASELINE_BIN (an older
# fcorr, to show the change side by side); whole process, peak RSS and wall time from GNU time.
# Prints a Markdown table and checks the counts each import reports.
#
#   benches/memory/run.sh
#   FCORR_BIN=target/debug/fcorr BASELINE_BIN=/tmp/fcorr-main MB=200 benches/memory/run.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

HERE="$ROOT/benches/memory"
RUNS="${RUNS:-2}"
MB="${MB:-200}"
DATA="${DATA:-benches/data/memory-$MB}"
LIMIT_KB="${LIMIT_KB:-65536}"

need_gnu_time || { echo "cannot install GNU time; giving up" >&2; exit 1; }
have_fcorr || { echo "no fcorr at $FCORR_BIN: cargo build --release (or set FCORR_BIN)" >&2; exit 1; }
if [ ! -s "$DATA/tap-yaml.tap" ]; then
  echo "generating $DATA ($MB MB elements, about 3.5 x $MB MB on disk)..." >&2
  python3 "$HERE/gen.py" "$DATA" "$MB" >&2 || exit 1
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# What each file must import as (from the generator): cases, failures.
declare -A EXPECT=(
  [junit-system-out.xml]="cases=3 failures=1"
  [junit-cdata.xml]="cases=3 failures=1"
  [tap-yaml.tap]="cases=3 failures=1"
)

machine_line
echo
echo "| input | size | reader | peak RSS (max of $RUNS) | wall (median) | counts |"
echo "|---|---|---|---|---|---|"
status=0
for file in junit-system-out.xml junit-cdata.xml tap-yaml.tap; do
  size_mb=$(awk -v s="$(stat -c %s "$DATA/$file")" 'BEGIN {printf "%.0f MB", s/1e6}')
  for reader in fcorr baseline; do
    bin="$FCORR_BIN"
    if [ "$reader" = baseline ]; then
      [ -n "${BASELINE_BIN:-}" ] || continue
      bin="$BASELINE_BIN"
    fi
    peak=0; walls=(); said=""
    for ((i = 1; i <= RUNS; i++)); do
      rm -rf "$tmp/out"
      /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" import "$DATA/$file" --out "$tmp/out" --fail-on none \
        --timings >/dev/null 2>"$tmp/err"
      read -r wall kb < <(tail -n 1 "$tmp/time")
      walls+=("$wall"); [ "$kb" -gt "$peak" ] && peak=$kb
      said="$(grep -o 'cases=[0-9]* failures=[0-9]*' "$tmp/err" | tail -n 1)"
    done
    note="$said"
    [ "$said" = "${EXPECT[$file]}" ] || note="$said (want ${EXPECT[$file]})"
    if [ "$reader" = fcorr ] && [ "$peak" -gt "$LIMIT_KB" ]; then
      note="$note, OVER the $((LIMIT_KB / 1024)) MB limit"; status=1
    fi
    wall=$(printf '%s\n' "${walls[@]}" | median 2)
    echo "| $file | $size_mb | $reader ($(basename "$bin")) | $(awk -v k="$peak" 'BEGIN {printf "%.1f MB", k/1024}') | ${wall} s | $note |"
  done
done
exit $status
