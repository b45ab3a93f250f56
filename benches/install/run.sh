#!/usr/bin/env bash
# Install + test benchmark: wall time of `fcorr run` against the native commands on a Python
# project with 20 real dependencies (benches/install/project: a PEP 735 group, 23 packages with
# what they pull in), with cold and warm caches, pip and uv.
#
# Every run works on a fresh copy of the project at a new path (as a CI checkout is), rows are
# run round-robin N times so drift in machine load hits every row, and the median is printed.
# "cold" = empty installer cache and no virtualenv: packages come from PyPI, so cold rows
# include the network. "warm" = the installer's cache (native) or fcorr's cache dir is kept.
#
#   benches/install/run.sh
#   N=5 FCORR_BIN=path/to/fcorr benches/install/run.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

HERE="$ROOT/benches/install"
PROJECT="$HERE/project"
N="${N:-3}"
UV_VERSION="${UV_VERSION:-0.13.9}"   # the version fcorr installs (src/ecosystems/python/install.rs)

# Both sides use the real interpreter, first on PATH, as actions/setup-python gives a CI job
# (a version-manager shim would add its own start-up to every python run).
REAL_PY="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" || exit 1
export PATH="$(dirname "$REAL_PY"):$PATH"

# uv for the native rows and for fcorr's uv rows (FCORR_UV), installed the way fcorr does it.
UV="$HERE/.tools/uv-$UV_VERSION/bin/uv"
if [ ! -x "$UV" ]; then
  echo "installing uv $UV_VERSION into benches/install/.tools (pip install --target)" >&2
  python3 -m pip install -q --disable-pip-version-check --target "$HERE/.tools/uv-$UV_VERSION" "uv==$UV_VERSION" >&2 || exit 1
fi
export UV_PYTHON_DOWNLOADS=never PIP_DISABLE_PIP_VERSION_CHECK=1

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/warm-pip" "$tmp/warm-uv" "$tmp/fcorr-warm-uv" "$tmp/fcorr-warm-pip"

# A fresh checkout: a copy of the project at a new path.
checkout() { local d; d="$(mktemp -d "$tmp/co.XXXXXX")"; cp -r "$PROJECT/." "$d/"; rm -rf "$d/.venv"; echo "$d"; }

# Native commands, run in a checkout ($1); the caches come from the environment.
native_pip() { cd "$1" && python3 -m venv .venv && .venv/bin/pip install -q -U pip \
  && .venv/bin/pip install -q -e . --group tests && .venv/bin/python -m pytest -q -p no:cacheprovider; }
native_uv() { cd "$1" && "$UV" venv -q && "$UV" pip install -q -e . --group tests \
  && .venv/bin/python -m pytest -q -p no:cacheprovider; }
native_test() { cd "$1" && .venv/bin/python -m pytest -q -p no:cacheprovider; }
fcorr_run() { "$FCORR_BIN" run "$1" --out "$tmp/fcorr-out"; }

# time_row LABEL FUNCTION ARGS... -> seconds; the output goes to $tmp/LABEL.log
time_row() {
  local label="$1"; shift
  local t0 t1 rc=0
  t0=$(now); ( "$@" ) >"$tmp/$label.log" 2>&1 || rc=$?; t1=$(now)
  if [ "$rc" != 0 ]; then echo "$label failed (exit $rc); last lines:" >&2; tail -n 15 "$tmp/$label.log" >&2; return 1; fi
  if ! grep -qE '20 passed' "$tmp/$label.log" && [ "${label#fcorr}" = "$label" ]; then
    echo "$label did not report 20 passed:" >&2; tail -n 5 "$tmp/$label.log" >&2; return 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b-a}'
}

ROWS=(native-pip-cold native-uv-cold fcorr-pip-cold fcorr-uv-cold fcorr-uv-cold-bootstrap
      native-pip-warm native-uv-warm native-test-only fcorr-uv-warm-same fcorr-uv-warm-new fcorr-pip-warm-same)

# one_run ROW -> seconds
one_run() {
  local row="$1" co
  co="$(checkout)"
  case "$row" in
    native-pip-cold) PIP_CACHE_DIR="$(mktemp -d "$tmp/pc.XXXX")" time_row "$row" native_pip "$co" ;;
    native-uv-cold) UV_CACHE_DIR="$(mktemp -d "$tmp/uc.XXXX")" time_row "$row" native_uv "$co" ;;
    native-pip-warm) PIP_CACHE_DIR="$tmp/warm-pip" time_row "$row" native_pip "$co" ;;
    native-uv-warm) UV_CACHE_DIR="$tmp/warm-uv" time_row "$row" native_uv "$co" ;;
    native-test-only) ( UV_CACHE_DIR="$tmp/warm-uv" native_uv "$co" ) >/dev/null 2>&1 || return 1
      time_row "$row" native_test "$co" ;;
    fcorr-pip-cold) FCORR_PYTHON_INSTALLER=pip FCORR_CACHE_DIR="$(mktemp -d "$tmp/fc.XXXX")" \
      PIP_CACHE_DIR="$(mktemp -d "$tmp/pc.XXXX")" time_row "$row" fcorr_run "$co" ;;
    fcorr-uv-cold) FCORR_UV="$UV" FCORR_CACHE_DIR="$(mktemp -d "$tmp/fc.XXXX")" \
      UV_CACHE_DIR="$(mktemp -d "$tmp/uc.XXXX")" time_row "$row" fcorr_run "$co" ;;
    fcorr-uv-cold-bootstrap) FCORR_CACHE_DIR="$(mktemp -d "$tmp/fc.XXXX")" PIP_CACHE_DIR="$(mktemp -d "$tmp/pc.XXXX")" \
      UV_CACHE_DIR="$(mktemp -d "$tmp/uc.XXXX")" time_row "$row" fcorr_run "$co" ;;
    fcorr-uv-warm-same) # the same checkout path every run (a CI runner's workspace), venv cached
      co="$tmp/same-uv"; [ -d "$co" ] || cp -r "$PROJECT" "$co"
      FCORR_UV="$UV" FCORR_CACHE_DIR="$tmp/fcorr-warm-uv" UV_CACHE_DIR="$tmp/warm-uv" time_row "$row" fcorr_run "$co" ;;
    fcorr-uv-warm-new) # a new checkout path, venv cached: only the project is linked in again
      FCORR_UV="$UV" FCORR_CACHE_DIR="$tmp/fcorr-warm-uv" UV_CACHE_DIR="$tmp/warm-uv" time_row "$row" fcorr_run "$co" ;;
    fcorr-pip-warm-same)
      co="$tmp/same-pip"; [ -d "$co" ] || cp -r "$PROJECT" "$co"
      FCORR_PYTHON_INSTALLER=pip FCORR_CACHE_DIR="$tmp/fcorr-warm-pip" PIP_CACHE_DIR="$tmp/warm-pip" \
        time_row "$row" fcorr_run "$co" ;;
  esac
}

echo "$(machine_line)"
echo "python: $("$REAL_PY" --version 2>&1) at $REAL_PY; uv: $("$UV" --version); pip in a new venv: $(python3 -c 'import ensurepip; print(ensurepip.version())')"
echo "N=$N round-robin runs per row after one warm-up of the warm rows; each run on a fresh copy of the project"
have_fcorr || echo "fcorr: skipped (binary not built)"
echo

# Warm-up: fill the warm caches (and fcorr's cached venvs) once.
for row in native-pip-warm native-uv-warm fcorr-uv-warm-same fcorr-uv-warm-new fcorr-pip-warm-same; do
  case "$row" in fcorr*) have_fcorr || continue ;; esac
  one_run "$row" >/dev/null || exit 1
done

for ((i = 1; i <= N; i++)); do
  line="run $i:"
  for row in "${ROWS[@]}"; do
    case "$row" in fcorr*) have_fcorr || continue ;; esac
    t=$(one_run "$row") || exit 1
    echo "$t" >>"$tmp/$row.times"; line="$line $row ${t}s"
  done
  echo "  $line" >&2
done

base=$(median <"$tmp/native-test-only.times")
echo "| row | what runs | runs (s) | median (s) | × native test alone |"
echo "|---|---|---|---|---|"
describe() {
  case "$1" in
    native-pip-cold) echo 'venv + `pip install -U pip` + `pip install -e . --group tests` + pytest, empty pip cache' ;;
    native-uv-cold) echo '`uv venv` + `uv pip install -e . --group tests` + pytest, empty uv cache' ;;
    fcorr-pip-cold) echo '`fcorr run`, `FCORR_PYTHON_INSTALLER=pip`, empty fcorr and pip caches' ;;
    fcorr-uv-cold) echo '`fcorr run` with uv (`FCORR_UV`), empty fcorr and uv caches' ;;
    fcorr-uv-cold-bootstrap) echo '`fcorr run`, no uv anywhere: fcorr installs uv from PyPI first' ;;
    native-pip-warm) echo 'as native-pip-cold, pip cache warm' ;;
    native-uv-warm) echo 'as native-uv-cold, uv cache warm' ;;
    native-test-only) echo '`.venv/bin/python -m pytest -q` alone, everything installed' ;;
    fcorr-uv-warm-same) echo '`fcorr run`, cached venv, same checkout path (CI workspace)' ;;
    fcorr-uv-warm-new) echo '`fcorr run`, cached venv, new checkout path (project re-linked)' ;;
    fcorr-pip-warm-same) echo '`fcorr run`, pip, cached venv, same checkout path' ;;
  esac
}
for row in "${ROWS[@]}"; do
  [ -f "$tmp/$row.times" ] || continue
  med=$(median <"$tmp/$row.times")
  ratio=$(awk -v a="$med" -v b="$base" 'BEGIN {printf "%.2f", a/b}')
  echo "| $row | $(describe "$row") | $(paste -sd' ' "$tmp/$row.times" | sed 's/ / \/ /g') | $med | ${ratio}× |"
done
echo
echo "Target: fcorr-uv-warm-same ≤ 1.2 × native-test-only."
