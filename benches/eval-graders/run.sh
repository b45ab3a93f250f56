#!/usr/bin/env bash
# Eval-graders benchmark (#23): 500 cases x 2 SUTs (small.sh, large.sh) x 2 prompt templates, each
# answer judged by a Python script grader (grader.py), run by fcorr (`[[suite.sut]]`, `prompts`,
# `type = "script"`) and by promptfoo (two `exec:` providers, two prompts, a `python`
# assertion), both at concurrency 4, alternating in one run: wall time and peak RSS, medians.
# Then fcorr's own overhead per (case, prompt, SUT): fcorr at concurrency 1 minus a bash loop
# running the same 2,000 SUT calls and 2,000 grader calls, divided by 2,000.
#
# promptfoo is installed into PROMPTFOO_DIR (default benches/data/promptfoo, kept between runs)
# unless PROMPTFOO points at a promptfoo executable.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CASES="${CASES:-500}"
RUNS="${RUNS:-3}"
# OVERHEAD_ONLY=1: only fcorr at concurrency 1 and the bash loop, alternated (the overhead row;
# promptfoo's 5-8 minutes per run are skipped, so RUNS can be larger on a shared machine).
OVERHEAD_ONLY="${OVERHEAD_ONLY:-0}"
PROMPTFOO_VERSION="${PROMPTFOO_VERSION:-0.120.0}"
DATA="$ROOT/benches/data/eval-graders"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-eval-graders.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT

need_gnu_time
# The grader runs in a virtualenv of the base interpreter, for both tools. A virtualenv skips the
# base interpreter's site-packages and their .pth files: on this machine one of them (the
# sandbox's CA hook) imports certifi, pathlib and importlib.resources at every start, ~70 ms of
# CPU a CI runner's Python does not spend. BASE_PYTHON=/usr/bin/python3 etc. picks another
# interpreter; GRADER_PYTHON=<python> skips the virtualenv (the grader needs only the stdlib).
if [ -z "${GRADER_PYTHON:-}" ]; then
  BASE_PYTHON="${BASE_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
  [ -x "$DATA/venv/bin/python" ] || "$BASE_PYTHON" -m venv "$DATA/venv"
  GRADER_PYTHON="$DATA/venv/bin/python"
fi
CASES="$CASES" CONCURRENCY=4 "$GRADER_PYTHON" benches/eval-graders/gen.py "$DATA" >/dev/null
mkdir -p "$DATA/c1"
sed 's/^concurrency = 4$/concurrency = 1/' "$DATA/fcorr.toml" > "$DATA/c1/fcorr.toml"
cp "$DATA/cases.toml" "$DATA/c1/cases.toml"
CALLS=$(wc -l < "$DATA/calls.tsv")
PYTHON_BIN=$(cat "$DATA/python")

if [ -z "${PROMPTFOO:-}" ]; then
  PROMPTFOO_DIR="${PROMPTFOO_DIR:-$ROOT/benches/data/promptfoo}"
  if [ ! -x "$PROMPTFOO_DIR/node_modules/.bin/promptfoo" ]; then
    echo "installing promptfoo@$PROMPTFOO_VERSION into $PROMPTFOO_DIR (npm; ~25 min the first time here)" >&2
    mkdir -p "$PROMPTFOO_DIR"
    (cd "$PROMPTFOO_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      npm install --no-audit --no-fund --silent "promptfoo@$PROMPTFOO_VERSION" >/dev/null)
  fi
  PROMPTFOO="$PROMPTFOO_DIR/node_modules/.bin/promptfoo"
  # promptfoo 0.120.0 looks for its migrations in <package>/drizzle but ships <package>/dist/drizzle.
  pkg="$PROMPTFOO_DIR/node_modules/promptfoo"
  if [ ! -e "$pkg/drizzle" ] && [ -d "$pkg/dist/drizzle" ]; then ln -s dist/drizzle "$pkg/drizzle"; fi
fi
# No telemetry, update checks, sharing or cache: every case calls the SUT, as fcorr does.
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1 \
  PROMPTFOO_CACHE_ENABLED=false PROMPTFOO_CONFIG_DIR="$SCRATCH/promptfoo-home" NO_COLOR=1 \
  PROMPTFOO_PYTHON="$PYTHON_BIN"

machine_line
echo "cases: $CASES x 2 SUTs x 2 prompts = $CALLS answers and $CALLS grader runs, concurrency 4," \
     "runs: $RUNS (alternating), promptfoo $("$PROMPTFOO" --version 2>/dev/null | tail -1), $("$PYTHON_BIN" --version) ($PYTHON_BIN)"
have_fcorr && echo "fcorr: $("$FCORR_BIN" --version)" || echo "fcorr: skipped (binary not built)"

# Times one command with GNU time: writes "wall_s peak_kib" to the file $1.
timed() {
  local out="$1"; shift
  /usr/bin/time -f '%e %M' -o "$out" "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || true
}

# The SUT and grader processes alone: the same calls, serially, from bash.
anchor_loop() {
  local sut prompt before after answer
  while IFS=$'\t' read -r sut prompt before after; do
    answer=$(sh "$sut" "$prompt")
    printf '%s%s%s' "$before" "$answer" "$after" | "$PYTHON_BIN" benches/eval-graders/grader.py >/dev/null
  done < "$DATA/calls.tsv"
}

fcorr_passed() {
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); c=[c for s in r['suites'] for c in s['cases']]; print(sum(x['status']=='passed' for x in c), len(c))" "$1/results.json" 2>/dev/null ||
    echo "? (see $SCRATCH/last.err: $(tail -n 3 "$SCRATCH/last.err" | tr '\n' ' '))"
}

declare -a F4_T F4_M P4_T P4_M F1_T LOOP_T
for ((r = 1; r <= RUNS; r++)); do
  if have_fcorr && [ "$OVERHEAD_ONLY" != 1 ]; then
    rm -rf "$SCRATCH/f4"
    timed "$SCRATCH/t" "$FCORR_BIN" run --config "$DATA/fcorr.toml" --out "$SCRATCH/f4" --fail-on none --format json --no-cache
    read -r t m < <(tail -n 1 "$SCRATCH/t"); F4_T+=("$t"); F4_M+=("$m")
    echo "run $r fcorr c=4: ${t}s, ${m} KiB, passed/answers: $(fcorr_passed "$SCRATCH/f4")"
  fi
  if [ "$OVERHEAD_ONLY" != 1 ]; then
  rm -f "$SCRATCH/pf.json"
  timed "$SCRATCH/t" "$PROMPTFOO" eval -c "$DATA/promptfooconfig.yaml" -j 4 --no-cache --no-table --no-progress-bar -o "$SCRATCH/pf.json"
  # promptfoo exits 100 when a test fails; GNU time then writes a note above its numbers.
  read -r t m < <(tail -n 1 "$SCRATCH/t"); P4_T+=("$t"); P4_M+=("$m")
  passed=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['results']['stats']; print(s['successes'], s['successes']+s['failures']+s.get('errors',0))" "$SCRATCH/pf.json" 2>/dev/null || echo "? (see $SCRATCH/last.err)")
  echo "run $r promptfoo c=4: ${t}s, ${m} KiB, passed/answers: $passed"
  fi
  if have_fcorr; then
    rm -rf "$SCRATCH/f1"
    timed "$SCRATCH/t" "$FCORR_BIN" run --config "$DATA/c1/fcorr.toml" --out "$SCRATCH/f1" --fail-on none --format json --no-cache
    read -r t m < <(tail -n 1 "$SCRATCH/t"); F1_T+=("$t")
    echo "run $r fcorr c=1: ${t}s, passed/answers: $(fcorr_passed "$SCRATCH/f1")"
  fi
  s0=$(now); anchor_loop; s1=$(now)
  LOOP_T+=("$(echo "$s1 - $s0" | bc -l)")
  echo "run $r bash loop (SUT + grader processes only): ${LOOP_T[-1]}s"
done

echo
if [ "$OVERHEAD_ONLY" = 1 ]; then
  sl=$(printf '%s\n' "${LOOP_T[@]}" | median 3); f1=$(printf '%s\n' "${F1_T[@]}" | median 3)
  echo "concurrency 1: fcorr wall ${f1}s (runs: ${F1_T[*]}) vs the loop ${sl}s (runs: ${LOOP_T[*]}):" \
       "fcorr overhead per answer $(echo "($f1 - $sl) * 1000 / $CALLS" | bc -l | xargs printf '%.2f') ms (target <= 2 ms)"
  exit 0
fi
echo "| tool (concurrency 4, $CALLS answers) | runs (s) | wall median (s) | peak RSS median (MiB) |"
echo "|---|---|--:|--:|"
if have_fcorr; then
  echo "| fcorr | $(printf '%s / ' "${F4_T[@]}" | sed 's| / $||') | $(printf '%s\n' "${F4_T[@]}" | median 2) | $(printf '%s\n' "${F4_M[@]}" | awk '{print $1/1024}' | median 1) |"
fi
echo "| promptfoo | $(printf '%s / ' "${P4_T[@]}" | sed 's| / $||') | $(printf '%s\n' "${P4_T[@]}" | median 2) | $(printf '%s\n' "${P4_M[@]}" | awk '{print $1/1024}' | median 1) |"
echo
sl=$(printf '%s\n' "${LOOP_T[@]}" | median 3)
echo "bash loop, the $CALLS SUT + $CALLS grader processes alone, serially: median ${sl}s"
if have_fcorr; then
  f4=$(printf '%s\n' "${F4_T[@]}" | median 3); p4=$(printf '%s\n' "${P4_T[@]}" | median 3)
  echo "fcorr / promptfoo wall time: $(echo "$f4 / $p4" | bc -l | xargs printf '%.3f') (target <= 0.200)"
  f1=$(printf '%s\n' "${F1_T[@]}" | median 3)
  echo "concurrency 1: fcorr wall ${f1}s vs the loop ${sl}s:" \
       "fcorr overhead per answer $(echo "($f1 - $sl) * 1000 / $CALLS" | bc -l | xargs printf '%.2f') ms (target <= 2 ms)"
fi
