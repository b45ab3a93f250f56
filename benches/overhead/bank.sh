#!/usr/bin/env bash
# fcorr's own cost per bank test (`kind = "bank"`) over the system under test it asks: the same N
# semantic tests asked of the same command SUT (`sh sut.sh <id>`: one `sh` start that prints a
# JSON list of ids) by
#   (a) fcorr (`fcorr run`, rate-limit 0, --no-cache, results.json only), and
#   (b) a bash loop running the same command line N times (the anchor),
# alternated a, b, a, b, … RUNS times (BASELINE_BIN, when set, is a third row in the same
# rotation). GNU time gives wall, user and system time, children included. Overhead per test =
# (fcorr − loop) / N, for wall and for CPU. Each fcorr run is checked: N tests, 4 in 5 passed.
#
#   benches/overhead/bank.sh
#   TESTS=1000 RUNS=7 BASELINE_BIN=/path/to/older/fcorr benches/overhead/bank.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

TESTS="${TESTS:-500}"
RUNS="${RUNS:-5}"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-bank.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
need_gnu_time

DATA="$SCRATCH/data"
mkdir -p "$DATA"
# The SUT: ids for test $1; every fifth test misses its primary id.
cat >"$DATA/sut.sh" <<'SH'
case "$1" in
  *[05]) echo '["other", "b"]' ;;
  *) echo '["a", "b"]' ;;
esac
SH
python3 - "$DATA/bank.json" "$TESTS" <<'PY'
import json, sys
tests = [{"test_id": f"V2-{i:05d}", "prompt": f"question {i}", "expected_primary": ["a"], "expected_secondary": ["b"]}
         for i in range(1, int(sys.argv[2]) + 1)]
json.dump({"bank_type": "SEMANTIC", "version": "1", "tests": tests}, open(sys.argv[1], "w"))
PY
cat >"$DATA/fcorr.toml" <<'TOML'
[[suite]]
name = "bank"
kind = "bank"
mechanism = "semantic"
bank = "bank.json"
rate-limit = 0
sut = { type = "command", command = "sh sut.sh {id}", stdin = "none" }
TOML

machine_line
echo "tests: $TESTS, rate-limit 0, runs: $RUNS (alternating), fcorr: $FCORR_BIN${BASELINE_BIN:+, baseline: $BASELINE_BIN}"
have_fcorr || { echo "fcorr: skipped (binary not built)"; exit 0; }

python3 -c 'import json,sys; print("\n".join(t["test_id"] for t in json.load(open(sys.argv[1]))["tests"]))' \
  "$DATA/bank.json" >"$SCRATCH/ids"
loop() {
  local id
  cd "$DATA"
  while IFS= read -r id; do sh sut.sh "$id" >/dev/null </dev/null; done < "$SCRATCH/ids"
}
export -f loop
export SCRATCH DATA

fcorr_once() {
  local bin="$1" out="$2"
  rm -rf "$SCRATCH/out"
  timed "$out" "$bin" run --config "$DATA/fcorr.toml" --out "$SCRATCH/out" --fail-on none --format json --no-cache
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['suites'][0]['cases']; n=int(sys.argv[2]); \
assert len(c)==n and sum(x['status']=='passed' for x in c)==n-n//5, 'counts'" \
    "$SCRATCH/out/results.json" "$TESTS"
}

rotate_and_report "$RUNS" "$TESTS" test 2
machine_line
