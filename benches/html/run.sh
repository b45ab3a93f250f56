#!/usr/bin/env bash
# report.html on a 100,000-case run: page size, first paint, time until the list is shown, and
# how long a status filter and a search take, in headless Chromium (Debian's `chromium`).
#
#   benches/html/run.sh            # FCORR_BIN (default target/release/fcorr) writes the page
#   PREVIOUS_FCORR_BIN=/path/to/old/fcorr benches/html/run.sh   # also measure an older page
#   ALLURE=node_modules/.bin/allure benches/html/run.sh   # and Allure 2 (npm allure-commandline + Java)
#   RUNS=5 (default) browser loads per page; the median is printed with the spread.
#
# The input is benches/import/gen_junit.py's fixed-seed 46 MB JUnit report (made when missing).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
RUNS="${RUNS:-5}"
DATA="$ROOT/benches/data"
XML="$DATA/junit-100k.xml"
mkdir -p "$DATA"
[ -f "$XML" ] || python3 benches/import/gen_junit.py "$XML"
command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "chromium is missing: apt-get install -y chromium" >&2; exit 3; }
if ! have_fcorr; then echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; fi

machine_line
echo "chromium: $("${CHROMIUM:-chromium}" --version 2>/dev/null | head -1); node $(node --version)"

# Loads PAGE RUNS times with SCRIPT and prints one table row.
measure_page() { # name page script
  local name="$1" page="$2" script="$3" size results=()
  size=$(stat -c %s "$page")
  for _ in $(seq "$RUNS"); do
    # A page that does not load within drive.mjs's 120 s still gets its row, marked.
    results+=("$(node scripts/browser/drive.mjs eval "$page" "$script" || echo '{"value":null,"wall_ms":null,"failed":true}')")
  done
  printf '%s\n' "${results[@]}" | tee -a "$DATA/html-bench.jsonl" | python3 benches/html/table.py "$name" "$size"
}

# report.html written by an fcorr binary from the 100k report.
measure_fcorr() { # name binary script
  local out="$DATA/html-$1"
  rm -rf "$out"
  "$2" import "$XML" --out "$out" --format html >/dev/null 2>&1 || true
  if [ -f "$out/report.html" ]; then measure_page "$1" "$out/report.html" "$3"; else echo "$1: no report.html written" >&2; fi
  rm -rf "$out"
}

echo
echo "| page | size | first contentful paint | list shown (ready) | load wall (driver) | filter \"failed\" (first) | filter \"failed\" (again) | search | failed shown |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
: >"$DATA/html-bench.jsonl"
measure_fcorr fcorr "$FCORR_BIN" benches/html/measure.js
# The page fcorr wrote before (the Markdown summary rendered to HTML), from an older binary.
if [ -n "${PREVIOUS_FCORR_BIN:-}" ]; then measure_fcorr previous "$PREVIOUS_FCORR_BIN" benches/html/measure-static.js; fi
# Allure Report 2 (npm allure-commandline, needs Java) from the same JUnit file, as one file.
if [ -n "${ALLURE:-}" ]; then
  rm -rf "$DATA/allure-results" "$DATA/allure-report" && mkdir -p "$DATA/allure-results"
  cp "$XML" "$DATA/allure-results/"
  start=$(now)
  "$ALLURE" generate "$DATA/allure-results" --single-file --clean -o "$DATA/allure-report" >/dev/null 2>&1 || echo "allure generate failed" >&2
  echo "allure generate: $(echo "$(now) - $start" | bc) s" >&2
  if [ -f "$DATA/allure-report/index.html" ]; then measure_page allure "$DATA/allure-report/index.html" benches/html/measure-static.js; fi
  rm -rf "$DATA/allure-results" "$DATA/allure-report"
fi
