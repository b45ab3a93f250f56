#!/usr/bin/env bash
# Warm-run overhead per ecosystem: `fcorr run` of a tiny project against the project's native
# test command, once everything is warm (dependencies installed, build caches full), as a CI job
# with its caches restored sees it. The projects are the bundled examples, copied to a scratch
# directory first (their build output stays out of the repository):
#
#   pytest  examples/python-calculator   native: <the venv fcorr made>/bin/python -m pytest -q
#   go      examples/go-stack            native: go test -count=1 ./...
#   rust    examples/rust-wordcount      native: cargo test
#
# Each project gets one untimed run of each command first (the venv, the Go build cache, cargo's
# target/). Then the rows run round-robin N times (native, fcorr[, baseline]) so drift in machine
# load hits every row; GNU time gives wall, user and system time (children included). The medians
# and fcorr − native are printed per project, and the test counts fcorr reported are checked
# against what the native tool itself reports (the script fails on a mismatch).
#
#   benches/overhead/warm.sh
#   N=9 ECOSYSTEMS="go rust" benches/overhead/warm.sh
#   BASELINE_BIN=/path/to/older/fcorr benches/overhead/warm.sh     # a third row, same rotation
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

N="${N:-7}"
ECOSYSTEMS="${ECOSYSTEMS:-pytest go rust}"
BASELINE_BIN="${BASELINE_BIN:-}"
need_gnu_time
tmp="$(mktemp -d /tmp/fcorr-bench-warm.XXXXXX)"; trap 'rm -rf "$tmp"' EXIT

machine_line
echo "N=$N alternating runs per row after one warm-up of each; fcorr: $FCORR_BIN${BASELINE_BIN:+; baseline: $BASELINE_BIN}"
have_fcorr || { echo "fcorr: skipped (binary not built)"; exit 0; }

example_of() {
  case "$1" in pytest) echo python-calculator ;; go) echo go-stack ;; rust) echo rust-wordcount ;; esac
}

# timed_in FILE DIR COMMAND... : appends "wall user sys" to FILE; the command must succeed.
timed_in() {
  local out="$1" dir="$2"; shift 2
  if ! (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" >"$tmp/last.out" 2>"$tmp/last.err"); then
    echo "failed in $dir: $*" >&2; tail -n 20 "$tmp/last.out" "$tmp/last.err" >&2; exit 1
  fi
  tail -n 1 "$tmp/t" >>"$out"
}

# fcorr's counts from results.json: "passed failed skipped" over every suite.
fcorr_counts() {
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); c=[s["counts"] for s in r["suites"]]
print(sum(x["passed"] for x in c), sum(x["failed"] for x in c), sum(x["skipped"] for x in c))' "$1"
}

# The native tool's own counts: "passed failed skipped".
native_counts() {
  local eco="$1" dir="$2"
  case "$eco" in
    pytest) (cd "$dir" && "${native[@]}" 2>&1) | python3 -c 'import re,sys
t=sys.stdin.read(); n=lambda w: sum(int(x) for x in re.findall(r"(\d+) "+w, t.splitlines()[-1]))
print(n("passed"), n("failed"), n("skipped"))' ;;
    go) (cd "$dir" && go test -json -count=1 ./... 2>&1) | python3 -c 'import json,sys
c={"pass":0,"fail":0,"skip":0}
for l in sys.stdin:
    e=json.loads(l) if l.startswith("{") else {}
    if e.get("Test") and e.get("Action") in c: c[e["Action"]]+=1
print(c["pass"], c["fail"], c["skip"])' ;;
    rust) (cd "$dir" && cargo test --workspace 2>&1) | python3 -c 'import re,sys
p=f=s=0
for m in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", sys.stdin.read()):
    p+=int(m[1]); f+=int(m[2]); s+=int(m[3])
print(p, f, s)' ;;
  esac
}

col() { awk -v c="$2" '{print $c}' "$1" | median 3; }

summary=()
for eco in $ECOSYSTEMS; do
  example="$(example_of "$eco")"
  [ -n "$example" ] || { echo "unknown ecosystem $eco (pytest, go, rust)" >&2; exit 2; }
  dir="$tmp/$eco"
  cp -r "$ROOT/examples/$example" "$dir"
  # Warm-up: fcorr installs (the venv), builds (caches) and tests once.
  "$FCORR_BIN" run "$dir" --out "$tmp/warm-$eco" >"$tmp/warm.log" 2>&1 || { cat "$tmp/warm.log" >&2; exit 1; }
  case "$eco" in
    pytest)
      # The interpreter of fcorr's test command: the venv it made, with pytest in it.
      py="$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print([p for p in r["suites"][0]["phases"] if p["kind"]=="test"][0]["command"].split()[0])' "$tmp/warm-$eco/results.json")"
      native=("$py" -m pytest -q) ;;
    # -count=1: fcorr runs the tests every time; a cached `ok` is not a run.
    go) native=(go test -count=1 ./...) ;;
    rust) native=(cargo test) ;;
  esac
  (cd "$dir" && "${native[@]}" >/dev/null 2>&1)
  echo
  echo "## $eco ($example): native \`${native[*]}\`"
  : >"$tmp/$eco.native"; : >"$tmp/$eco.fcorr"; : >"$tmp/$eco.base"
  for ((i = 1; i <= N; i++)); do
    timed_in "$tmp/$eco.native" "$dir" "${native[@]}"
    rm -rf "$tmp/out"; timed_in "$tmp/$eco.fcorr" "$dir" "$FCORR_BIN" run . --out "$tmp/out"
    if [ -n "$BASELINE_BIN" ]; then rm -rf "$tmp/out-base"; timed_in "$tmp/$eco.base" "$dir" "$BASELINE_BIN" run . --out "$tmp/out-base"; fi
    echo "  run $i: native $(tail -1 "$tmp/$eco.native") | fcorr $(tail -1 "$tmp/$eco.fcorr")${BASELINE_BIN:+ | baseline $(tail -1 "$tmp/$eco.base")}  (wall user sys, s; load $(cut -d' ' -f1 /proc/loadavg))"
  done
  got="$(fcorr_counts "$tmp/out/results.json")"; want="$(native_counts "$eco" "$dir")"
  echo "  counts (passed failed skipped): fcorr $got, native $want"
  [ "$got" = "$want" ] || { echo "count mismatch for $eco" >&2; exit 1; }
  python3 - "$tmp/out/results.json" <<'PY'
import json, sys
for suite in json.load(open(sys.argv[1]))["suites"]:
    for p in suite["phases"]:
        print(f"  fcorr {p['kind']}: {p['status']} {p.get('duration_ms', 0) / 1000:.2f}s {(p.get('command') or p.get('note') or '')[:110]}")
PY
  nw=$(col "$tmp/$eco.native" 1); nc=$(echo "$(col "$tmp/$eco.native" 2) + $(col "$tmp/$eco.native" 3)" | bc -l)
  row() {
    local name="$1" file="$2" w c
    w=$(col "$file" 1); c=$(echo "$(col "$file" 2) + $(col "$file" 3)" | bc -l)
    summary+=("$(printf '| %s | %s | %s | %.3f | %+.3f s (%.2f×) | %+.3f s |' "$eco" "$name" "$w" "$c" \
      "$(echo "$w - $nw" | bc -l)" "$(echo "$w / $nw" | bc -l)" "$(echo "$c - $nc" | bc -l)")")
  }
  summary+=("$(printf '| %s | native `%s` | %s | %.3f | — | — |' "$eco" "${native[*]##*/}" "$nw" "$nc")")
  row "fcorr run" "$tmp/$eco.fcorr"
  [ -n "$BASELINE_BIN" ] && row "fcorr run (baseline)" "$tmp/$eco.base"
done

echo
echo "| project | row | wall median (s) | user+sys median (s) | wall over native | CPU over native |"
echo "|---|---|--:|--:|--:|--:|"
printf '%s\n' "${summary[@]}"
machine_line
