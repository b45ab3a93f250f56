#!/usr/bin/env bash
# Detect benchmark: how long `fcorr detect DIR` takes on a JavaScript project whose node_modules
# holds 50,000 files (benches/detect/make_tree.sh). 10 runs after 2 warm-ups, median, warm page
# cache. Two `find` walks are timed alongside as yardsticks: the whole tree, and the tree with
# node_modules pruned — detection within 100 ms needs to stay near the second.
#
#   benches/detect/run.sh [DIR]       (default benches/data/detect-tree, built if missing)
#   RUNS=20 FCORR_BIN=path/to/fcorr benches/detect/run.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

DIR="${1:-benches/data/detect-tree}"
RUNS="${RUNS:-10}"
if [ ! -f "$DIR/package.json" ]; then
  echo "building $DIR with make_tree.sh (about 20 s)..." >&2
  "$ROOT/benches/detect/make_tree.sh" "$DIR" >&2 || exit 1
fi
DIR="$(cd "$DIR" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
USE_HF=0; have_hyperfine && USE_HF=1

# bench LABEL CMD...  -> "median min max" in ms, on stdout; all runs on stderr.
# IGNORE_FAIL=1 times the command even when it exits non-zero.
bench() {
  local label="$1"; shift
  if [ "$USE_HF" = 1 ]; then
    hyperfine -N --warmup 2 --runs "$RUNS" --style none --output "$tmp/$label.cmdout" ${IGNORE_FAIL:+-i} \
      --export-json "$tmp/hf.json" -- "$(printf '%q ' "$@")" \
      >"$tmp/$label.log" 2>&1 || { echo "$label failed:" >&2; tail -n 5 "$tmp/$label.log" "$tmp/$label.cmdout" >&2 2>/dev/null; return 1; }
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; label=sys.argv[2]; t=sorted(x*1000 for x in r["times"]); print("%.1f %.1f %.1f" % (r["median"]*1000, t[0], t[-1])); print(label + " runs (ms): " + " ".join("%.1f" % (x*1000) for x in r["times"]), file=sys.stderr)' "$tmp/hf.json" "$label"
  else
    local i t0 t1
    for i in 1 2; do "$@" >/dev/null 2>&1 || [ -n "${IGNORE_FAIL:-}" ] || { echo "$label failed" >&2; return 1; }; done
    : >"$tmp/times"
    for ((i = 1; i <= RUNS; i++)); do
      t0=$(now); "$@" >"$tmp/$label.log" 2>&1 || [ -n "${IGNORE_FAIL:-}" ] || { echo "$label failed:" >&2; tail -n 5 "$tmp/$label.log" >&2; return 1; }; t1=$(now)
      awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", (b-a)*1000}' >>"$tmp/times"
    done
    echo "$label runs (ms): $(paste -sd' ' "$tmp/times")" >&2
    echo "$(median 1 <"$tmp/times") $(sort -g "$tmp/times" | head -1) $(sort -g "$tmp/times" | tail -1)"
  fi
}

echo "$(machine_line)"
echo "tree: $DIR — $(find "$DIR/node_modules" -type f | wc -l) files in node_modules, $(find "$DIR" -path "$DIR/node_modules" -prune -o -type f -print | wc -l) outside"
echo "timer: $([ "$USE_HF" = 1 ] && hyperfine --version || echo 'date +%s.%N loop (includes ~1 ms of fork/exec per run)'), $RUNS runs after 2 warm-ups, warm cache"
echo

rows=()
if have_fcorr; then
  "$FCORR_BIN" detect "$DIR" >"$tmp/detect.out" 2>&1; rc=$?
  echo "fcorr detect said (exit $rc):"; sed 's/^/  /' "$tmp/detect.out" | head -20; echo
  # still timed when it exits non-zero (e.g. nothing detected), but the row says so
  note=""; [ "$rc" = 0 ] || note=" (exit $rc — check what it said above)"
  r=$(IGNORE_FAIL=1 bench fcorr "$FCORR_BIN" detect "$DIR") || exit 1; rows+=("| \`fcorr detect\`$note | ${r// / | } |")
else
  echo "fcorr: skipped (binary not built)"
  rows+=("| \`fcorr detect\` | pending: fcorr binary not built yet | | |")
fi
r=$(bench find-all find "$DIR" -type f) || exit 1; rows+=("| yardstick: \`find DIR -type f\` (whole tree) | ${r// / | } |")
r=$(bench find-pruned find "$DIR" -path "$DIR/node_modules" -prune -o -type f -print) || exit 1
rows+=("| yardstick: \`find\` with node_modules pruned | ${r// / | } |")

echo
echo "| command | median (ms) | min (ms) | max (ms) |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Target for fcorr detect: ≤ 100 ms median."
