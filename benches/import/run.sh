#!/usr/bin/env bash
# JUnit import benchmark: how long and how much memory it takes to read a 46 MB JUnit report
# with 100,000 cases into a list of cases, for the readers that GitHub test-report actions use
# and for `fcorr import`. Each reader runs RUNS times (default 2); whole process, wall time and
# peak RSS from GNU time. Prints a Markdown table.
#
#   benches/import/run.sh                 # from anywhere
#   FCORR_BIN=path/to/fcorr RUNS=3 benches/import/run.sh
#   JUNIT_FILE=other.xml benches/import/run.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

HERE="$ROOT/benches/import"
RUNS="${RUNS:-2}"
JUNIT_FILE="${JUNIT_FILE:-benches/data/junit-100k.xml}"
EXPECT="${EXPECT:-cases=100000 failures=10000 skipped=2000}"

need_gnu_time || { echo "cannot install GNU time; giving up" >&2; exit 1; }

if [ ! -s "$JUNIT_FILE" ]; then
  echo "generating $JUNIT_FILE (seeded, about 10 s)..." >&2
  python3 "$HERE/gen_junit.py" "$JUNIT_FILE" >&2 || exit 1
fi

# Competitors: install only what is missing.
if [ ! -x "$HERE/.venv/bin/python" ] || ! "$HERE/.venv/bin/python" -c 'import junitparser, lxml' 2>/dev/null; then
  echo "installing junitparser + lxml into benches/import/.venv (requirements.txt)..." >&2
  python3 -m venv "$HERE/.venv" && "$HERE/.venv/bin/pip" install -q -r "$HERE/requirements.txt" >&2 || exit 1
fi
if [ ! -d "$HERE/node/node_modules/xml2js" ] || [ ! -d "$HERE/node/node_modules/xml-js" ]; then
  echo "installing xml2js + xml-js into benches/import/node (npm ci)..." >&2
  (cd "$HERE/node" && npm ci --no-audit --no-fund --loglevel=error >&2) || exit 1
fi

size=$(stat -c %s "$JUNIT_FILE")
size_mb=$(awk -v s="$size" 'BEGIN {printf "%.1f", s/1e6}')
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

names=(); walls=(); cpus=(); parses=(); peaks=(); notes=()

# measure NAME CMD...   -> RUNS runs; fills the arrays above
measure() {
  local name="$1"; shift
  local w=() c=() p=() peak=0 note="" i
  for ((i = 1; i <= RUNS; i++)); do
    local out="$tmp/out.$i"
    rm -rf "$tmp/fcorr-out"; mkdir -p "$tmp/fcorr-out"
    if ! /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >"$out" 2>"$tmp/err"; then
      note="FAILED (exit $?): $(tail -n 3 "$tmp/err" | tr '\n' ' ')"
    fi
    read -r e u s m < <(tail -n 1 "$tmp/time") || true
    w+=("${e:-?}"); c+=("$(awk -v u="${u:-0}" -v s="${s:-0}" 'BEGIN {printf "%.2f", u+s}')"); [ "${m:-0}" -gt "$peak" ] && peak=$m
    local said ph; said="$(tail -n 1 "$out")"
    # readers report their own parse time on stderr as "phases: parse=1.23s walk=0.45s"
    ph="$(grep -ho 'parse=[0-9.]*' "$tmp/err" "$out" | tail -n 1 | cut -d= -f2 | tr -d s)"; p+=("${ph:-?}")
    if [ "$name" != fcorr ] && [ -z "$note" ] && [ "$said" != "$EXPECT" ]; then
      note="unexpected output: $said (want $EXPECT)"
    fi
    if [ "$name" = fcorr ] && [ -z "$note" ] && ! grep -qF "$EXPECT" "$tmp/err"; then
      note="unexpected counts: $(grep -o 'cases=.*' "$tmp/err" | tail -n 1) (want $EXPECT)"
    fi
    echo "  $name run $i: ${e}s wall, ${c[-1]}s CPU, parse ${p[-1]}s, peak $((m / 1024)) MB${said:+ -> $said}" >&2
  done
  names+=("$name"); walls+=("${w[*]}"); cpus+=("${c[*]}"); parses+=("${p[*]}"); peaks+=("$peak"); notes+=("$note")
}

echo "$(machine_line)"
echo "file: $JUNIT_FILE, $size bytes ($size_mb MB)"
echo "versions: $(python3 --version 2>&1), $("$HERE/.venv/bin/pip" freeze 2>/dev/null | grep -Ei '^(junitparser|lxml)==' | tr '\n' ' ')node $(node --version), xml2js $(node -p "require('$HERE/node/node_modules/xml2js/package.json').version"), xml-js $(node -p "require('$HERE/node/node_modules/xml-js/package.json').version")"
echo

if have_fcorr; then
  # --fail-on none: the file has failures, and a failing gate is not a failed measurement.
  # --timings (hidden) prints "phases: parse=…s report=…s total=…s cases=… failures=… skipped=…".
  measure fcorr "$FCORR_BIN" import "$JUNIT_FILE" --name bench --out "$tmp/fcorr-out" --fail-on none --timings
else
  echo "fcorr: skipped (binary not built)"
fi
measure "junitparser 4.0.2 + lxml (EnricoMi)" "$HERE/.venv/bin/python" "$HERE/read_junitparser.py" "$JUNIT_FILE"
measure "xml2js (dorny/test-reporter)" node "$HERE/node/read_xml2js.js" "$JUNIT_FILE"
measure "xml-js (mikepenz/action-junit-report)" node "$HERE/node/read_xml-js.js" "$JUNIT_FILE"

# fcorr's faster run, for the ratio column
fbest=""
for i in "${!names[@]}"; do
  if [ "${names[$i]}" = fcorr ]; then fbest=$(tr ' ' '\n' <<<"${walls[$i]}" | sort -g | head -1); fi
done

echo
echo "| reader | wall (s), per run | CPU user+sys (s), per run | parse in-process (s), per run | peak RSS (MB) | peak / file size | wall vs fcorr |"
echo "|---|---|---|---|---|---|---|"
for i in "${!names[@]}"; do
  best=$(tr ' ' '\n' <<<"${walls[$i]}" | sort -g | head -1)
  if [ -n "$fbest" ]; then ratio=$(awk -v a="$best" -v b="$fbest" 'BEGIN {printf "%.1f×", a/b}'); else ratio="(fcorr not built)"; fi
  peak_mb=$(awk -v k="${peaks[$i]}" 'BEGIN {printf "%.0f", k/1024}')
  pf=$(awk -v k="${peaks[$i]}" -v s="$size" 'BEGIN {printf "%.1f×", k*1024/s}')
  echo "| ${names[$i]}${notes[$i]:+ — ${notes[$i]}} | ${walls[$i]// / / } | ${cpus[$i]// / / } | ${parses[$i]// / / } | $peak_mb | $pf | $ratio |"
done
have_fcorr || echo "| fcorr | pending: fcorr binary not built yet | | | | | |"
echo
echo "ratio = reader's faster run / fcorr's faster run. CPU time is less disturbed than wall time when the machine is busy."
echo "parse in-process = read + parse to a document, as the reader times itself (fcorr: if it prints parse=<secs>s); the rest is start-up and the walk."
echo "Targets for fcorr: parse ≤ 0.2 s, whole import ≤ 1 s, peak ≤ 3× file size."
