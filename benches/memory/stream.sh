#!/usr/bin/env bash
# Memory benchmark of the streaming mode (issue 27): peak RSS of `fcorr merge --stream` over CELLS
# copies (hard links) of one results.json of CASES cases, e.g. 32 x 100k = 3.2M and 64 x 100k, and
# of `fcorr import --stream` of the same cases as CELLS JUnit files; with IN_MEMORY_CELLS, the
# merge without --stream over that many cells beside it (the in-memory merge grows with the run:
# keep it small). With ONE_FILE, `fcorr import --stream` of that one JUnit file too (a JUnit file
# goes to the spill in batches as it is read), and with ONE_FILE_IN_MEMORY=1 the same import
# without --stream beside it. CELLS=0 leaves the merge out. Peak RSS and wall from GNU time; the
# counts each command printed are checked.
#
#   benches/memory/stream.sh
#   FCORR_BIN=target/debug/fcorr CELLS=64 CASES=100000 FORMATS=json IMPORT=0 benches/memory/stream.sh
#   ONE_FILE=/tmp/j1m.xml ONE_FILE_IN_MEMORY=1 CELLS=0 IMPORT=0 benches/memory/stream.sh
#
# FORMATS is passed to --format (default: every report). Inputs are generated once under
# benches/data/ (one JUnit file and its results.json; the cells are hard links, so they cost no
# disk); outputs go to a temporary directory on the same disk and are removed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CELLS="${CELLS:-32}"
CASES="${CASES:-100000}"
FORMATS="${FORMATS:-all}"
IN_MEMORY_CELLS="${IN_MEMORY_CELLS:-}"
IMPORT="${IMPORT:-1}"
ONE_FILE="${ONE_FILE:-}"
ONE_FILE_IN_MEMORY="${ONE_FILE_IN_MEMORY:-0}"
LIMIT_MB="${LIMIT_MB:-300}"
DATA="${DATA:-benches/data/stream-$CASES}"

need_gnu_time || { echo "cannot install GNU time; giving up" >&2; exit 1; }
have_fcorr || { echo "no fcorr at $FCORR_BIN: cargo build --release (or set FCORR_BIN)" >&2; exit 1; }
mkdir -p "$DATA"
if [ ! -s "$DATA/junit.xml" ]; then
  python3 benches/import/gen_junit.py "$DATA/junit.xml" --cases "$CASES" >&2 || exit 1
fi
if [ ! -s "$DATA/cell/results.json" ]; then
  "$FCORR_BIN" import "$DATA/junit.xml" --out "$DATA/cell" --format json --fail-on none >/dev/null 2>&1
fi
mkdir -p "$ROOT/benches/data"
tmp="$(mktemp -d "$ROOT/benches/data/stream-run.XXXXXX")"; trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= CELLS; i++)); do
  mkdir -p "$tmp/cells/c$i" "$tmp/files"
  ln "$DATA/cell/results.json" "$tmp/cells/c$i/results.json"
  ln "$DATA/junit.xml" "$tmp/files/f$i.xml"
done

# measure NAME COMMAND...: one row of the table.
status=0
measure() {
  local name="$1"; shift
  rm -rf "$tmp/out"
  # The verdict line fcorr prints (`… 2816000 passed, 320000 failed, 64000 skipped …`), not the
  # --json document: a multi-GB JSON document is more than a checker should parse.
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" --out "$tmp/out" --format "$FORMATS" --fail-on none \
    >"$tmp/stdout" 2>"$tmp/err"
  local wall kb said
  read -r wall kb < <(tail -n 1 "$tmp/time")
  said="$(grep -Eo '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$tmp/stdout" | tail -n 1)"
  [ -n "$said" ] || said="no summary: $(tail -n 1 "$tmp/err")"
  local note="$said"
  case "$name" in *--stream*)
    if [ "$kb" -gt $((LIMIT_MB * 1024)) ]; then note="$note, OVER the $LIMIT_MB MiB target"; status=1; fi ;;
  esac
  echo "| $name | $(awk -v k="$kb" 'BEGIN {printf "%.1f MiB", k/1024}') | $wall s | $note |"
}

machine_line
echo "binary: $FCORR_BIN; $CELLS x $CASES cases; --format $FORMATS"
echo
echo "| command | peak RSS | wall | totals |"
echo "|---|--:|--:|---|"
if [ "$CELLS" -gt 0 ]; then
  measure "fcorr merge --stream ($CELLS cells)" "$FCORR_BIN" merge "$tmp/cells/*" --stream
fi
if [ -n "$ONE_FILE" ]; then
  measure "fcorr import --stream (one file, $(basename "$ONE_FILE"))" "$FCORR_BIN" import "$ONE_FILE" --stream
  if [ "$ONE_FILE_IN_MEMORY" = 1 ]; then
    measure "fcorr import (one file, $(basename "$ONE_FILE"), in memory)" "$FCORR_BIN" import "$ONE_FILE"
  fi
fi
if [ "$IMPORT" = 1 ] && [ "$CELLS" -gt 0 ]; then
  measure "fcorr import --stream ($CELLS files)" "$FCORR_BIN" import "$tmp/files/*.xml" --stream
fi
if [ -n "$IN_MEMORY_CELLS" ]; then
  measure "fcorr merge ($IN_MEMORY_CELLS cells, in memory)" "$FCORR_BIN" merge $(for ((i = 1; i <= IN_MEMORY_CELLS; i++)); do echo "$tmp/cells/c$i"; done)
fi
exit $status
