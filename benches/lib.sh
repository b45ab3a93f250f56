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
