# Shared helpers for the benchmark scripts; source it, don't run it.
# Sets ROOT (repository root) and FCORR_BIN (absolute when it exists), and cds to ROOT.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
FCORR_BIN="${FCORR_BIN:-target/release/fcorr}"
case "$FCORR_BIN" in /*) ;; *) FCORR_BIN="$ROOT/$FCORR_BIN" ;; esac

have_fcorr() { [ -x "$FCORR_BIN" ]; }

# The machine line every results table starts with, so numbers can be compared honestly.
machine_line() {
  local cpu
  cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
  echo "machine: $(nproc) cores${cpu:+ ($cpu)}, $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM," \
       "load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
}

# GNU time gives peak RSS; install it from Debian's packages if missing, and say so.
need_gnu_time() {
  if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then return 0; fi
  echo "GNU time (/usr/bin/time) is missing: installing it with 'apt-get update && apt-get install -y time'" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq time >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq time >/dev/null; fi
}

# hyperfine if present (NO_HYPERFINE=1 ignores it); if not, offer the install line and fall back
# to a date loop.
have_hyperfine() {
  if [ "${NO_HYPERFINE:-0}" = 1 ]; then echo "NO_HYPERFINE=1: using a date +%s.%N loop" >&2; return 1; fi
  if command -v hyperfine >/dev/null 2>&1; then return 0; fi
  if [ "${INSTALL_HYPERFINE:-0}" = 1 ]; then
    echo "hyperfine is missing: installing it with 'apt-get update && apt-get install -y hyperfine'" >&2
    { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; } || return 1
    return 0
  fi
  echo "hyperfine not found (INSTALL_HYPERFINE=1 installs it from Debian); using a date +%s.%N loop" >&2
  return 1
}

# median of numbers on stdin; optional argument: decimals (default 3)
median() { sort -g | awk -v d="${1:-3}" '{a[NR]=$1} END {if (NR==0) exit 1; f="%." d "f\n"; if (NR%2) printf f, a[(NR+1)/2]; else printf f, (a[NR/2]+a[NR/2+1])/2}'; }

# seconds since the epoch with nanoseconds
now() { date +%s.%N; }

# timed FILE COMMAND...: runs COMMAND with GNU time (its output in $SCRATCH/last.out and
# last.err) and appends "wall user sys" (seconds) to FILE; a failing command ends the script.
timed() {
  local out="$1"; shift
  /usr/bin/time -f '%e %U %S' -o "$SCRATCH/t" "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || {
    echo "failed: $* (see below)"; tail -5 "$SCRATCH/last.err"; exit 1; }
  tail -n 1 "$SCRATCH/t" >> "$out"
}

# per_item_table N NOUN DECIMALS LOOP_FILE "NAME FILE"...: the medians of `timed` files and each
# row's cost per item over the loop's: (wall − loop wall) / N and (user+sys − loop's) / N, in ms.
per_item_table() {
  local n="$1" noun="$2" decimals="$3" loop="$4"; shift 4
  local col lw lc name file w u s
  col() { awk -v c="$2" '{print $c}' "$1" | median 3; }
  echo "| row | wall median (s) | user median (s) | sys median (s) | wall per $noun over the loop (ms) | user+sys per $noun over the loop (ms) |"
  echo "|---|--:|--:|--:|--:|--:|"
  lw=$(col "$loop" 1); lc=$(echo "$(col "$loop" 2) + $(col "$loop" 3)" | bc -l)
  for row in "$@"; do
    name="${row% *}"; file="${row##* }"
    w=$(col "$file" 1); u=$(col "$file" 2); s=$(col "$file" 3)
    printf "| %s | %s | %s | %s | %+.${decimals}f | %+.${decimals}f |\n" "$name" "$w" "$u" "$s" \
      "$(echo "($w - $lw) * 1000 / $n" | bc -l)" "$(echo "($u + $s - $lc) * 1000 / $n" | bc -l)"
  done
  echo "| bash loop (anchor) | $lw | $(col "$loop" 2) | $(col "$loop" 3) | — | — |"
}

# rotate_and_report RUNS N NOUN DECIMALS: RUNS rounds of `fcorr_once "$FCORR_BIN" <file>`, the
# anchor (`timed <file> bash -c loop`) and, with BASELINE_BIN, `fcorr_once "$BASELINE_BIN" <file>`
# (the script defines fcorr_once and loop), each round's times printed with the load; then
# per_item_table over N items.
rotate_and_report() {
  local runs="$1" n="$2" noun="$3" decimals="$4" r
  : > "$SCRATCH/fcorr"; : > "$SCRATCH/loop"; : > "$SCRATCH/base"
  for ((r = 1; r <= runs; r++)); do
    fcorr_once "$FCORR_BIN" "$SCRATCH/fcorr"
    timed "$SCRATCH/loop" bash -c loop
    if [ -n "${BASELINE_BIN:-}" ]; then fcorr_once "$BASELINE_BIN" "$SCRATCH/base"; fi
    echo "run $r: fcorr $(tail -1 "$SCRATCH/fcorr") | loop $(tail -1 "$SCRATCH/loop")${BASELINE_BIN:+ | baseline $(tail -1 "$SCRATCH/base")}  (wall user sys, s; load $(cut -d' ' -f1 /proc/loadavg))"
  done
  echo
  local rows=("fcorr $SCRATCH/fcorr")
  if [ -n "${BASELINE_BIN:-}" ]; then rows+=("fcorr baseline $SCRATCH/base"); fi
  per_item_table "$n" "$noun" "$decimals" "$SCRATCH/loop" "${rows[@]}"
}

# Writes the seeded report of benches/import/gen_junit.py to FILE unless it is there: CASES cases
# (default 100,000; the defaults of gen_junit.py) with a tenth failing and a fiftieth skipped.
ensure_junit() {
  local file=$1 cases=${2:-100000}
  [ -s "$file" ] && return 0
  echo "generating $file ($cases cases, seeded)..." >&2
  python3 "$ROOT/benches/import/gen_junit.py" "$file" --cases "$cases" --suites $((cases / 500)) \
    --failures $((cases / 10)) --skipped $((cases / 50)) >&2
}
