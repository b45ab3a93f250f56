#!/usr/bin/env bash
# fcorr's own cost per benchmark task (`kind = "benchmark"`) over the work a task needs anyway:
# the same N tasks, each a copy of a small shell repository (examples/benchmark/repos/calc), an
# executor that fixes it (one `sed`) and the task's test command (`sh test.sh > report.tap`), run
#   (a) by fcorr (`fcorr run`, jobs = 1, results.json only), and
#   (b) by a bash loop doing the same per task: copy the repository, run the executor in the copy
#       with the task on stdin, run the test command (the anchor),
# alternated a, b, a, b, … RUNS times (BASELINE_BIN, when set, is a third row in the same
# rotation). GNU time gives wall, user and system time, children included. Overhead per task =
# (fcorr − loop) / N, for wall and for CPU. Each fcorr run is checked: N tasks, all passed.
#
#   benches/overhead/tasks.sh
#   TASKS=50 RUNS=7 BASELINE_BIN=/path/to/older/fcorr benches/overhead/tasks.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

TASKS="${TASKS:-40}"
RUNS="${RUNS:-5}"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-tasks.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
need_gnu_time

DATA="$SCRATCH/data"
mkdir -p "$DATA/repos"
cp -r "$ROOT/examples/benchmark/repos/calc" "$DATA/repos/calc"
# The executor fixes all three bugs, so every task passes.
cat >"$DATA/agent.sh" <<'SH'
#!/bin/sh
cat >/dev/null
sed -i -e 's/^add() { echo \$((\$1 - \$2)); }/add() { echo $(($1 + $2)); }/' \
       -e 's/^mul() { echo \$((\$1 + \$2)); }/mul() { echo $(($1 * $2)); }/' \
       -e 's/^div() { echo \$((\$1 % \$2)); }/div() { echo $(($1 \/ $2)); }/' calc.sh
SH
chmod +x "$DATA/agent.sh"
for ((i = 1; i <= TASKS; i++)); do
  printf '{"id": "task-%03d", "repo": "repos/calc", "test_commands": ["sh test.sh > report.tap"], "reports": ["report.tap"], "FAIL_TO_PASS": ["test_add", "test_mul", "test_div"], "PASS_TO_PASS": ["test_sub"]}\n' "$i"
done >"$DATA/tasks.jsonl"
cat >"$DATA/fcorr.toml" <<'TOML'
[[suite]]
name = "tasks"
kind = "benchmark"
path = "tasks.jsonl"
policy = "pass-rate"
executor = "./agent.sh"
jobs = 1
TOML

machine_line
echo "tasks: $TASKS, one at a time, runs: $RUNS (alternating), fcorr: $FCORR_BIN${BASELINE_BIN:+, baseline: $BASELINE_BIN}"
have_fcorr || { echo "fcorr: skipped (binary not built)"; exit 0; }

loop() {
  local line id
  while IFS= read -r line; do
    id="$(echo "$line" | sed 's/.*"id": "\([^"]*\)".*/\1/')"
    rm -rf "$SCRATCH/work"
    cp -r "$DATA/repos/calc" "$SCRATCH/work"
    (cd "$SCRATCH/work" && echo "$line" | FCORR_TASK_ID="$id" "$DATA/agent.sh" >/dev/null && sh test.sh > report.tap) || exit 1
  done < "$DATA/tasks.jsonl"
}
export -f loop
export SCRATCH DATA

fcorr_once() {
  local bin="$1" out="$2"
  rm -rf "$SCRATCH/out"
  timed "$out" "$bin" run --config "$DATA/fcorr.toml" --out "$SCRATCH/out" --fail-on none --format json
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['suites'][0]['cases']; \
assert len(c)==int(sys.argv[2]) and all(x['status']=='passed' for x in c), [x['status'] for x in c]" \
    "$SCRATCH/out/results.json" "$TASKS"
}

rotate_and_report "$RUNS" "$TASKS" task 1
machine_line
