#!/usr/bin/env bash
# Issue #27's import rows, measured on a shared machine: the readers are ALTERNATED in one loop
# (fcorr, junitparser, fcorr `report` re-rendering the results.json that import wrote, and an
# earlier fcorr build when FCORR_OLD is set), REPS rounds, so a load that comes and goes hits
# every reader alike; medians of wall and CPU time (user + sys, which load inflates less), and
# fcorr's own phase and per-format split (`--timings`: wall, and CPU of each format's thread).
#
#   benches/import/alternate.sh                          # 100k cases, 5 rounds
#   REPS=3 CASES=1000000 benches/import/alternate.sh     # the 1M-case file (generated, ~460 MB)
#   FCORR_OLD=/tmp/fcorr-main benches/import/alternate.sh   # before/after a change
#   COMPETITOR=0 ...                                     # fcorr only (the 1M file takes junitparser minutes)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

HERE="$ROOT/benches/import"
REPS="${REPS:-5}"
CASES="${CASES:-100000}"
COMPETITOR="${COMPETITOR:-1}"
FCORR_OLD="${FCORR_OLD:-}"
if [ "$CASES" = 100000 ]; then JUNIT_FILE="${JUNIT_FILE:-benches/data/junit-100k.xml}"
else JUNIT_FILE="${JUNIT_FILE:-benches/data/junit-$CASES.xml}"; fi

need_gnu_time || { echo "cannot install GNU time; giving up" >&2; exit 1; }
have_fcorr || { echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; }
ensure_junit "$JUNIT_FILE" "$CASES" || exit 1
if [ "$COMPETITOR" = 1 ] && ! "$HERE/.venv/bin/python" -c 'import junitparser, lxml' 2>/dev/null; then
  echo "installing junitparser + lxml into benches/import/.venv (requirements.txt)..." >&2
  python3 -m venv "$HERE/.venv" && "$HERE/.venv/bin/pip" install -q -r "$HERE/requirements.txt" >&2 || exit 1
fi

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
declare -A WALL CPU PEAK PARSE PARSE_CPU FORMATS FORMATS_CPU
record() { # NAME: appends this run's figures from $tmp/time and $tmp/err
  local e u s m
  read -r e u s m < <(tail -n 1 "$tmp/time")
  WALL[$1]+="$e "; CPU[$1]+="$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.3f", u+s}') "
  [ "${m:-0}" -gt "${PEAK[$1]:-0}" ] && PEAK[$1]=$m
  local p; p="$(grep -ho 'parse=[0-9.]*' "$tmp/err" | tail -n 1 | cut -d= -f2)"; PARSE[$1]+="${p:-?} "
  # The parse on several cores: its CPU next to its wall time says how much ran at once.
  p="$(grep -ho 'parse_cpu=[0-9.]*' "$tmp/err" | tail -n 1 | cut -d= -f2)"; PARSE_CPU[$1]+="${p:-?} "
  FORMATS[$1]+="$(grep -h '^formats:' "$tmp/err" | tail -n 1 | cut -d' ' -f2-)|"
  FORMATS_CPU[$1]+="$(grep -h '^formats_cpu:' "$tmp/err" | tail -n 1 | cut -d' ' -f2-)|"
}
run_import() { # NAME BIN
  rm -rf "$tmp/out-$1"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$2" import "$JUNIT_FILE" --name bench --out "$tmp/out-$1" \
    --fail-on none --timings >/dev/null 2>"$tmp/err" || echo "  $1: exit $? $(tail -n 2 "$tmp/err")" >&2
  grep -q "cases=$CASES " "$tmp/err" || echo "  $1: unexpected counts: $(grep -o 'cases=.*' "$tmp/err")" >&2
  record "$1"
}
run_report() { # NAME BIN: re-renders every report from the results.json its import wrote
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$2" report "$tmp/out-$1" --quiet >/dev/null 2>"$tmp/err" \
    || echo "  $1 report: exit $? $(tail -n 2 "$tmp/err")" >&2
  record "$1 report"
}

echo "$(machine_line)"
echo "file: $JUNIT_FILE, $(stat -c %s "$JUNIT_FILE") bytes, $CASES cases; $REPS alternated rounds"
names=(fcorr "fcorr report")
[ -n "$FCORR_OLD" ] && names+=("fcorr (old)" "fcorr (old) report")
[ "$COMPETITOR" = 1 ] && names+=(junitparser)
for ((i = 1; i <= REPS; i++)); do
  echo "round $i/$REPS, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  run_import fcorr "$FCORR_BIN"; run_report fcorr "$FCORR_BIN"
  if [ -n "$FCORR_OLD" ]; then run_import "fcorr (old)" "$FCORR_OLD"; run_report "fcorr (old)" "$FCORR_OLD"; fi
  if [ "$COMPETITOR" = 1 ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$HERE/.venv/bin/python" "$HERE/read_junitparser.py" "$JUNIT_FILE" \
      >/dev/null 2>"$tmp/err"
    record junitparser
  fi
done

med() { tr ' ' '\n' | grep -v '^$' | grep -v '?' | median 3; }
# Median per format over the rounds: "json=0.1s junit=0.2s|json=..." -> "json 0.100, junit 0.200"
med_formats() {
  tr '|' '\n' | tr ' ' '\n' | grep = | sed 's/s$//' | awk -F= '{v[$1]=v[$1] " " $2; if (!($1 in o)) {o[$1]=++n; k[n]=$1}}
    END {for (i = 1; i <= n; i++) print k[i] v[k[i]]}' | while read -r name values; do
      printf '%s %s, ' "$name" "$(tr ' ' '\n' <<<"$values" | grep -v '^$' | median 3)"
    done | sed 's/, $//'
}
fwall=$(med <<<"${WALL[fcorr]}")
echo
echo "| reader | wall (s), median | CPU user+sys (s), median | parse (s), median | peak RSS (MiB) | wall vs fcorr import |"
echo "|---|---|---|---|---|---|"
for n in "${names[@]}"; do
  w=$(med <<<"${WALL[$n]}"); c=$(med <<<"${CPU[$n]}"); p=$(med <<<"${PARSE[$n]}" 2>/dev/null || echo "—")
  echo "| $n | $w | $c | ${p:-—} | $(( ${PEAK[$n]:-0} / 1024 )) | $(awk -v a="$w" -v b="$fwall" 'BEGIN {printf "%.2f×", a/b}') |"
done
echo
for n in fcorr "fcorr (old)"; do
  [ -n "${FORMATS[$n]:-}" ] || continue
  echo "$n per format, wall (s), median: $(med_formats <<<"${FORMATS[$n]}")"
  echo "$n per format, CPU of its thread (s), median: $(med_formats <<<"${FORMATS_CPU[$n]}")"
done
for n in fcorr "fcorr (old)"; do
  [ -n "${PARSE_CPU[$n]:-}" ] && echo "$n parse CPU (s), median: $(med <<<"${PARSE_CPU[$n]}"); each round: parse ${PARSE[$n]}/ parse CPU ${PARSE_CPU[$n]}"
done
echo
for n in "${names[@]}"; do echo "$n, each round: wall ${WALL[$n]}/ CPU ${CPU[$n]}"; done
