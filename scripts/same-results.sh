#!/usr/bin/env bash
# Do two fcorr binaries give the same results.json? For refactors that must not change results
# (issue #10: "results.json of the bundled examples identical before and after").
#
#   scripts/same-results.sh OLD_FCORR NEW_FCORR [EXAMPLES_DIR]      (needs jq)
#
# Runs each binary on its own fresh copy of EXAMPLES_DIR (default: examples/) with a cold cache of
# its own, then diffs the two results.json files after dropping what differs between two runs of
# the same code: times and durations, resource usage, tool output (it carries timings), the
# slowest-tests list (timing-ordered), the copy's directory and cache keys, and the order in
# which cargo's test threads happened to finish (cases sorted by id). Prints the diff; exit 0
# when there is none, 1 when there is.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2")
examples=$(realpath "${3:-$(dirname "$0")/../examples}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # BIN LABEL
  mkdir -p "$work/$2"
  cp -a "$examples" "$work/$2/examples"
  (cd "$work/$2" && FCORR_CACHE_DIR="$work/$2/cache" "$1" run --config examples/fcorr.toml --out "$work/$2/out" \
     > "$work/$2/stdout.txt" 2> "$work/$2/stderr.txt") && echo 0 > "$work/$2.exit" || echo $? > "$work/$2.exit"
  [ -f "$work/$2/out/results.json" ] || { echo "$2: no results.json; stderr:" >&2; cat "$work/$2/stderr.txt" >&2; exit 2; }
  jq -S '
    def scrub: if type == "string" then gsub("'"$work"'/[a-z]+"; "<run>") | gsub("venvs/[0-9a-f]{16}"; "venvs/<key>") | gsub("finished in [0-9.]+s"; "finished in <t>s") | gsub("and [0-9.]+ s per task"; "and <t> s per task") else . end;
    del(.timing.slowest)
    | walk(if type == "object" then
        del(.duration_ms, .started_at, .finished_at, .usage, .log_tail, .time_ms)
        | (if (.cases | type) == "array" then .cases |= sort_by(.id) else . end)
      else scrub end)' "$work/$2/out/results.json" > "$work/$2.json"
}

run "$old" old
run "$new" new
if [ "$(cat "$work/old.exit")" != "$(cat "$work/new.exit")" ]; then
  echo "exit codes differ: old $(cat "$work/old.exit"), new $(cat "$work/new.exit")"; exit 1
fi
diff "$work/old.json" "$work/new.json" && echo "same results.json ($(jq '[.suites[].cases | length] | add' "$work/new.json") cases in $(jq '.suites | length' "$work/new.json") suites, both exit $(cat "$work/new.exit"))"
