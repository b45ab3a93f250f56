#!/usr/bin/env bash
# report.html past its cap (#27): a CASES-case JUnit import (default 1,000,000; 10 % failing,
# 2 % skipped) with `--timings`, then the page in headless Chromium (Debian's `chromium`):
# first paint, list shown, a passed case from the last sibling file opened by a #case= link,
# and every sibling file loaded by the "passed" chip.
#
#   benches/html/paged.sh                       # FCORR_BIN (default target/release/fcorr)
#   CASES=200000 RUNS=3 benches/html/paged.sh   # a smaller run; RUNS browser loads (default 3)
#   PREVIOUS_FCORR_BIN=/path/to/old/fcorr ...   # also time an older binary's import, alternated
#
# Prints the machine line, each import's --timings (html and whole), the page's size and its
# files, and one JSON line per browser load (the medians are read from them).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
CASES="${CASES:-1000000}"
RUNS="${RUNS:-3}"
DATA="$ROOT/benches/data"
XML="$DATA/junit-$CASES.xml"
OUT="$DATA/html-paged"
mkdir -p "$DATA"
[ -f "$XML" ] || python3 benches/import/gen_junit.py "$XML" --cases "$CASES" --suites $((CASES / 500)) \
  --failures $((CASES / 10)) --skipped $((CASES / 50)) >&2
command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "chromium is missing: apt-get install -y chromium" >&2; exit 3; }
if ! have_fcorr; then echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; fi
machine_line
echo "chromium: $("${CHROMIUM:-chromium}" --version 2>/dev/null | head -1); input: $XML ($(stat -c %s "$XML") bytes)"

# Imports, alternated with the older binary when given: every report, and html alone.
for round in $(seq "${IMPORTS:-1}"); do
  for bin in "$FCORR_BIN" ${PREVIOUS_FCORR_BIN:+"$PREVIOUS_FCORR_BIN"}; do
    for formats in "--format all" "--format html"; do
      rm -rf "$OUT"
      echo "== round $round: $bin import $formats"
      "$bin" import "$XML" --out "$OUT" $formats --timings 2>&1 >/dev/null | grep -E '^(phases|formats):' || true
    done
  done
done
rm -rf "$OUT"
"$FCORR_BIN" import "$XML" --out "$OUT" --format html >/dev/null 2>&1 || true
echo "report.html: $(stat -c %s "$OUT/report.html") bytes; report-files/: $(ls "$OUT/report-files" 2>/dev/null | wc -l) files, $(du -sb "$OUT/report-files" 2>/dev/null | cut -f1) bytes"
# A passed case from the last sibling file: its list block is base64(zlib(JSON)).
last=$(ls "$OUT/report-files" | sort -t- -k2 -n | tail -1)
id=$(python3 - "$OUT/report-files/$last" <<'PY'
import base64, json, sys, zlib
text = open(sys.argv[1]).read()
part = json.loads(zlib.decompress(base64.b64decode(text.split('"')[3])))
print(next(part["id"][i] for i in reversed(range(part["n"])) if part["status"][i] == 5))
PY
)
sed "s/__CASE__/$id/" benches/html/measure-paged.js >"$DATA/measure-paged.js"
for _ in $(seq "$RUNS"); do
  node scripts/browser/drive.mjs eval "$OUT/report.html" "$DATA/measure-paged.js" || echo '{"failed":true}'
done
rm -rf "$OUT" "$DATA/measure-paged.js"
