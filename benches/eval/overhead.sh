#!/usr/bin/env bash
# fcorr's own cost per eval case over the command it runs: the same N cases asked of the same
# command SUT (benches/eval/sut.sh: one `sh` start and a `case` statement) by
#   (a) fcorr at concurrency 1 (`fcorr run`, --no-cache, results.json only), and
#   (b) a bash loop running the same command line N times (the anchor),
# alternated a, b, a, b, … RUNS times (BASELINE_BIN, when set, is run as a third row in the same
# rotation). Prints wall, user and system time per run (GNU time) and the medians, and the
# overhead per case: (median wall of fcorr − median wall of the loop) / N; the same for CPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CASES="${CASES:-500}"
RUNS="${RUNS:-5}"
DATA="$ROOT/benches/data/eval-overhead"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-eval-overhead.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
need_gnu_time
CASES="$CASES" CONCURRENCY=1 python3 benches/eval/gen.py "$DATA" >/dev/null

machine_line
echo "cases: $CASES, concurrency 1, runs: $RUNS (alternating), fcorr: $FCORR_BIN${BASELINE_BIN:+, baseline: $BASELINE_BIN}"
have_fcorr || { echo "fcorr: skipped (binary not built)"; exit 0; }

# The prompts, in dataset order, as the loop passes them.
python3 - "$DATA/cases.toml" > "$SCRATCH/prompts" <<'PY'
import sys, tomllib
for case in tomllib.load(open(sys.argv[1], "rb"))["test_cases"]:
    print(case["prompt"])
PY

loop() {
  local prompt
  while IFS= read -r prompt; do sh "$ROOT/benches/eval/sut.sh" "$prompt" >/dev/null </dev/null; done < "$SCRATCH/prompts"
}
export -f loop
export ROOT SCRATCH

fcorr_once() {
  local bin="$1" out="$2"
  rm -rf "$SCRATCH/out"
  timed "$out" "$bin" run --config "$DATA/fcorr.toml" --out "$SCRATCH/out" --fail-on none --format json --no-cache
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['suites'][0]['cases']; \
assert len(c)==int(sys.argv[2]) and sum(x['status']=='passed' for x in c)==int(sys.argv[2])*4//5, 'counts'" \
    "$SCRATCH/out/results.json" "$CASES"
}

rotate_and_report "$RUNS" "$CASES" case 2
machine_line
