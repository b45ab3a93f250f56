#!/usr/bin/env bash
# Eval benchmark: the same 500-case dataset against the same command SUT (sut.sh, a few ms per
# answer), run by fcorr and by promptfoo (its `exec:` provider), both at concurrency 4, in one
# run: wall time and peak RSS side by side. Then fcorr's own overhead per case: fcorr at
# concurrency 1 minus a shell loop calling the SUT the same 500 times, divided by 500.
#
# promptfoo is installed into a scratch directory (PROMPTFOO_DIR, default a new temporary
# directory, deleted at the end) unless PROMPTFOO points at a promptfoo executable.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CASES="${CASES:-500}"
RUNS="${RUNS:-3}"
PROMPTFOO_VERSION="${PROMPTFOO_VERSION:-0.120.0}"
DATA="$ROOT/benches/data/eval"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-eval.XXXXXX)"
CREATED_PF_DIR=""
cleanup() {
  rm -rf "$SCRATCH"
  if [ -n "$CREATED_PF_DIR" ]; then rm -rf "$CREATED_PF_DIR"; fi
}
trap cleanup EXIT

need_gnu_time
CASES="$CASES" CONCURRENCY=4 python3 benches/eval/gen.py "$DATA" >/dev/null
mkdir -p "$DATA/c1"
sed 's/^concurrency = 4$/concurrency = 1/' "$DATA/fcorr.toml" > "$DATA/c1/fcorr.toml"
cp "$DATA/cases.toml" "$DATA/c1/cases.toml"

if [ -z "${PROMPTFOO:-}" ]; then
  if [ -z "${PROMPTFOO_DIR:-}" ]; then
    PROMPTFOO_DIR="$(mktemp -d /tmp/fcorr-bench-promptfoo.XXXXXX)"
    CREATED_PF_DIR="$PROMPTFOO_DIR"
  fi
  if [ ! -x "$PROMPTFOO_DIR/node_modules/.bin/promptfoo" ]; then
    echo "installing promptfoo@$PROMPTFOO_VERSION into $PROMPTFOO_DIR (npm)" >&2
    (cd "$PROMPTFOO_DIR" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "promptfoo@$PROMPTFOO_VERSION" >/dev/null)
  fi
  PROMPTFOO="$PROMPTFOO_DIR/node_modules/.bin/promptfoo"
  # promptfoo 0.120.0's npm package looks for its database migrations in <package>/drizzle but
  # ships them in <package>/dist/drizzle, so every command fails with "Can't find
  # meta/_journal.json"; point the one at the other.
  pkg="$PROMPTFOO_DIR/node_modules/promptfoo"
  if [ ! -e "$pkg/drizzle" ] && [ -d "$pkg/dist/drizzle" ]; then ln -s dist/drizzle "$pkg/drizzle"; fi
fi
# No telemetry, update checks, sharing or cache: every case calls the SUT, as fcorr does.
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1 \
  PROMPTFOO_CACHE_ENABLED=false PROMPTFOO_CONFIG_DIR="$SCRATCH/promptfoo-home" NO_COLOR=1

machine_line
echo "cases: $CASES, concurrency 4, runs: $RUNS (alternating), promptfoo $("$PROMPTFOO" --version 2>/dev/null | tail -1)"
have_fcorr || { echo "fcorr: skipped (binary not built)"; }

# Times one command with GNU time: writes "wall_s peak_kib" to the file $1.
timed() {
  local out="$1"; shift
  /usr/bin/time -f '%e %M' -o "$out" "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || true
}

# The SUT alone: one sh start per case, serially.
sut_loop() {
  local i
  for ((i = 0; i < CASES; i++)); do sh benches/eval/sut.sh "task #$i: list files" >/dev/null; done
}

declare -a F4_T F4_M P4_T P4_M F1_T SUT_T SUT_IN_F1
for ((r = 1; r <= RUNS; r++)); do
  if have_fcorr; then
    rm -rf "$SCRATCH/f4"
    timed "$SCRATCH/t" "$FCORR_BIN" run --config "$DATA/fcorr.toml" --out "$SCRATCH/f4" --fail-on none --format json
    read -r t m < <(tail -n 1 "$SCRATCH/t"); F4_T+=("$t"); F4_M+=("$m")
    passed=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(c['status']=='passed' for c in r['suites'][0]['cases']), len(r['suites'][0]['cases']))" "$SCRATCH/f4/results.json")
    echo "run $r fcorr c=4: ${t}s, ${m} KiB, passed/cases: $passed"
  fi
  timed "$SCRATCH/t" "$PROMPTFOO" eval -c "$DATA/promptfooconfig.yaml" -j 4 --no-cache --no-table --no-progress-bar -o "$SCRATCH/pf.json"
  # promptfoo exits 100 when a test fails; GNU time then writes a note above its numbers.
  read -r t m < <(tail -n 1 "$SCRATCH/t"); P4_T+=("$t"); P4_M+=("$m")
  passed=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['results']['stats']; print(s['successes'], s['successes']+s['failures']+s.get('errors',0))" "$SCRATCH/pf.json" 2>/dev/null || echo "? (see $SCRATCH/last.err)")
  echo "run $r promptfoo c=4: ${t}s, ${m} KiB, passed/cases: $passed"
  if have_fcorr; then
    rm -rf "$SCRATCH/f1"
    timed "$SCRATCH/t" "$FCORR_BIN" run --config "$DATA/c1/fcorr.toml" --out "$SCRATCH/f1" --fail-on none --format json
    read -r t m < <(tail -n 1 "$SCRATCH/t"); F1_T+=("$t")
    # The SUT's own time as fcorr measured it: each case's call, spawn to exit.
    SUT_IN_F1+=("$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(c['duration_ms'] for c in r['suites'][0]['cases'])/1000)" "$SCRATCH/f1/results.json")")
  fi
  s0=$(now); sut_loop; s1=$(now)
  SUT_T+=("$(echo "$s1 - $s0" | bc -l)")
done

echo
echo "| tool (concurrency 4, $CASES cases) | wall median (s) | peak RSS median (MiB) |"
echo "|---|--:|--:|"
if have_fcorr; then
  echo "| fcorr | $(printf '%s\n' "${F4_T[@]}" | median 2) | $(printf '%s\n' "${F4_M[@]}" | awk '{print $1/1024}' | median 1) |"
fi
echo "| promptfoo | $(printf '%s\n' "${P4_T[@]}" | median 2) | $(printf '%s\n' "${P4_M[@]}" | awk '{print $1/1024}' | median 1) |"
if have_fcorr; then
  f4=$(printf '%s\n' "${F4_T[@]}" | median 3); p4=$(printf '%s\n' "${P4_T[@]}" | median 3)
  echo
  echo "fcorr / promptfoo wall time: $(echo "$f4 / $p4" | bc -l | xargs printf '%.3f') (target <= 0.333)"
  f1=$(printf '%s\n' "${F1_T[@]}" | median 3); sl=$(printf '%s\n' "${SUT_T[@]}" | median 3)
  si=$(printf '%s\n' "${SUT_IN_F1[@]}" | median 3)
  echo "concurrency 1: fcorr wall ${f1}s; the SUT calls inside it ${si}s (sum of case durations);" \
       "the same $CASES calls from a bash loop ${sl}s"
  echo "fcorr overhead per case beyond the SUT's process time: $(echo "($f1 - $si) * 1000 / $CASES" | bc -l | xargs printf '%.2f') ms (target <= 5 ms)"
fi
