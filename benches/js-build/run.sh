#!/usr/bin/env bash
# JS/TS build benchmark: a warm `fcorr run` against the project's native test command on real
# JavaScript/TypeScript checkouts (ufo, defu, ms in docs/benchmarks.md), with the fcorr from
# before the build change (PREVIOUS_FCORR_BIN: runs the `build` script before every test run) and
# after it (FCORR_BIN: `tsc --noEmit` unless the tests need the build).
#
# "Warm" is a CI run with its dependency cache restored: each checkout is installed once before
# timing (fcorr's install phase then says "dependencies up to date"), and every row runs in that
# checkout. Rows run round-robin N times, so drift in machine load hits every row; medians print.
#
#   PROJECTS_DIR=/path/to/checkouts benches/js-build/run.sh        # one directory per project
#   N=5 PREVIOUS_FCORR_BIN=/path/to/old/fcorr PROJECTS_DIR=... benches/js-build/run.sh
#
# Two native rows: `native`, the framework run(s) the project's `test` script makes (the base of
# every ratio), and `script`, every step of that script (lint, type check, tests) run one after
# the other whatever each exits with. NATIVE_<name> and SCRIPT_<name> (e.g. NATIVE_defu="npx
# vitest run") change them. Test failures do not stop a row: the same tests fail on every side.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

N="${N:-3}"
PROJECTS_DIR="${PROJECTS_DIR:?set PROJECTS_DIR to a directory holding the checkouts (ufo, defu, ms)}"
PREVIOUS_FCORR_BIN="${PREVIOUS_FCORR_BIN:-}"
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0

# project_command native|script NAME -> the command (NATIVE_<name> / SCRIPT_<name> override it)
project_command() {
  local row="$1" name="$2" var
  var="$(echo "$1" | tr '[:lower:]' '[:upper:]')_$2"
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  case "$row:$name" in
    native:ufo) echo "npx --no-install vitest run --typecheck" ;;
    native:defu) echo "npx --no-install vitest run" ;;
    native:ms) echo "npx --no-install jest --env node; npx --no-install jest --env @edge-runtime/jest-environment --coverage=false" ;;
    native:*) echo "npm test" ;;
    script:ufo) echo "npx --no-install eslint .; npx --no-install prettier -c src test; npx --no-install vitest run --typecheck" ;;
    script:defu) echo "npx --no-install oxlint src; npx --no-install oxfmt --check src test; npx --no-install tsgo --noEmit; npx --no-install vitest run" ;;
    script:*) project_command native "$name" ;;
  esac
}

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# time_row LABEL DIR COMMAND... -> seconds (the command's own exit code is not a failure here)
time_row() {
  local label="$1" dir="$2"; shift 2
  local t0 t1
  t0=$(now); ( cd "$dir" && "$@" ) >"$tmp/$label.log" 2>&1; t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b-a}'
}

machine_line
have_fcorr || { echo "fcorr: skipped (binary not built: $FCORR_BIN)"; exit 0; }
printf '\n%-8s %-14s %10s %10s %8s   %s\n' project row median_s runs ratio command
for project in "$PROJECTS_DIR"/*/; do
  project="${project%/}"; name="$(basename "$project")"
  [ -f "$project/package.json" ] || continue
  native="$(project_command native "$name")"
  script="$(project_command script "$name")"
  # Warm: installed once, untimed, by the fcorr being measured (it picks the package manager).
  "$FCORR_BIN" run "$project" --out "$tmp/warmup-$name" >/dev/null 2>&1
  rows=(native after)
  [ "$script" != "$native" ] && rows+=(script)
  [ -n "$PREVIOUS_FCORR_BIN" ] && [ -x "$PREVIOUS_FCORR_BIN" ] && rows+=(before)
  for row in "${rows[@]}"; do : >"$tmp/$name-$row.times"; done
  for ((i = 1; i <= N; i++)); do
    for row in "${rows[@]}"; do
      case "$row" in
        native) time_row "$name-native" "$project" sh -c "$native" >>"$tmp/$name-$row.times" ;;
        script) time_row "$name-script" "$project" sh -c "$script" >>"$tmp/$name-$row.times" ;;
        after) time_row "$name-after" "$project" "$FCORR_BIN" run . --out "$tmp/out-$name-after-$i" >>"$tmp/$name-$row.times" ;;
        before) time_row "$name-before" "$project" "$PREVIOUS_FCORR_BIN" run . --out "$tmp/out-$name-before-$i" >>"$tmp/$name-$row.times" ;;
      esac
      echo >>"$tmp/$name-$row.times"
    done
  done
  base="$(median <"$tmp/$name-native.times")"
  for row in "${rows[@]}"; do
    m="$(median <"$tmp/$name-$row.times")"
    runs="$(tr '\n' ' ' <"$tmp/$name-$row.times")"
    ratio="$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f", a/b}')"
    case "$row" in native) what="$native" ;; script) what="$script" ;; after) what="fcorr run (FCORR_BIN)" ;; before) what="fcorr run (PREVIOUS_FCORR_BIN)" ;; esac
    printf '%-8s %-14s %10s %10s %8s   %s\n' "$name" "$row" "$m" "$(echo $runs | wc -w)" "${ratio}x" "$what"
    echo "    runs: $runs"
  done
  # What the build phase did in the last run of each fcorr.
  for row in after before; do
    [ -f "$tmp/out-$name-$row-$N/results.json" ] || continue
    python3 - "$tmp/out-$name-$row-$N/results.json" "$name" "$row" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for suite in run["suites"]:
    for phase in suite["phases"]:
        if phase["kind"] in ("build", "test"):
            print(f"    {sys.argv[2]} {sys.argv[3]}: {phase['kind']} {phase['status']} {phase['duration_ms'] / 1000:.1f}s: {phase['command'][:90]}")
    c = suite["counts"]
    print(f"    {sys.argv[2]} {sys.argv[3]}: {c['passed']} passed, {c['failed']} failed, {c['error']} errors")
PY
  done
done
