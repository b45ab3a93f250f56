#!/usr/bin/env bash
# Harness overhead benchmark: the time `fcorr run` adds on top of running the same pytest suite
# directly. The suite (benches/overhead/project) is 20 tests sleeping 0.1 s each, about 2 s.
# Runs (a) `python -m pytest -q` in the project and (b) `fcorr run --no-install <project> --out <tmp>`
# alternately, N times each after one warm-up of each, and prints the medians and
# overhead % = (fcorr - native) / native.
#
#   benches/overhead/run.sh
#   N=9 FCORR_BIN=path/to/fcorr benches/overhead/run.sh
#   INSTALL_HYPERFINE=1 benches/overhead/run.sh   # apt-get install hyperfine if missing
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

HERE="$ROOT/benches/overhead"
PROJECT="$HERE/project"
N="${N:-5}"
PY="${PYTHON:-python}"
command -v "$PY" >/dev/null 2>&1 || PY=python3

if ! "$PY" -m pytest --version >/dev/null 2>&1; then
  echo "no pytest for $PY: installing pytest into benches/overhead/.venv (requirements.txt)" >&2
  [ -x "$HERE/.venv/bin/python" ] || python3 -m venv "$HERE/.venv" || exit 1
  "$HERE/.venv/bin/pip" install -q -r "$HERE/requirements.txt" >&2 || exit 1
  export PATH="$HERE/.venv/bin:$PATH"; PY=python
fi

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
USE_HF=0; have_hyperfine && USE_HF=1

# time_one LABEL CMD... -> prints seconds; runs in $PROJECT
time_one() {
  local label="$1"; shift
  local rc=0 t
  if [ "$USE_HF" = 1 ]; then
    (cd "$PROJECT" && hyperfine -N --runs 1 --style none --output "$tmp/$label.cmdout" --export-json "$tmp/hf.json" -- "$(printf '%q ' "$@")" \
        >"$tmp/$label.log" 2>&1) || rc=$?
    t=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["mean"])' "$tmp/hf.json" 2>/dev/null)
  else
    local t0 t1
    t0=$(now); (cd "$PROJECT" && "$@" >"$tmp/$label.log" 2>&1) || rc=$?; t1=$(now)
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b-a}')
  fi
  if [ "$rc" != 0 ]; then echo "$label failed (exit $rc); last lines:" >&2; tail -n 15 "$tmp/$label.log" >&2; [ -f "$tmp/$label.cmdout" ] && tail -n 15 "$tmp/$label.cmdout" >&2; return 1; fi
  echo "$t"
}

native=( "$PY" -m pytest -q )
fcorr=( "$FCORR_BIN" run --no-install "$PROJECT" --out "$tmp/fcorr-out" )

echo "$(machine_line)"
echo "timer: $([ "$USE_HF" = 1 ] && hyperfine --version || echo 'date +%s.%N loop'), N=$N alternating runs each after one warm-up"
echo "native: $(cd "$PROJECT" && "$PY" --version 2>&1), pytest $("$PY" -m pytest --version 2>&1 | awk '{print $2}'), \`$PY\` is $(command -v "$PY")"
case "$(command -v "$PY")" in
  */shims/*) echo "note: \`$PY\` is a version-manager shim; it adds its own start-up to every run, native and fcorr alike" ;;
esac
echo

have_fcorr || echo "fcorr: skipped (binary not built)"

# warm-up: bytecode caches, page cache
time_one native "${native[@]}" >/dev/null || exit 1
if have_fcorr; then rm -rf "$tmp/fcorr-out"; time_one fcorr "${fcorr[@]}" >/dev/null || exit 1; fi

: >"$tmp/native.times"; : >"$tmp/fcorr.times"
for ((i = 1; i <= N; i++)); do
  t=$(time_one native "${native[@]}") || exit 1; echo "$t" >>"$tmp/native.times"; line="run $i: native ${t}s"
  if have_fcorr; then
    rm -rf "$tmp/fcorr-out"
    t=$(time_one fcorr "${fcorr[@]}") || exit 1; echo "$t" >>"$tmp/fcorr.times"; line="$line, fcorr ${t}s"
  fi
  echo "  $line" >&2
done

nmed=$(median <"$tmp/native.times")
echo "| command | runs (s) | median (s) | overhead |"
echo "|---|---|---|---|"
echo "| \`python -m pytest -q\` (native) | $(paste -sd' ' "$tmp/native.times" | sed 's/ / \/ /g') | $nmed | — |"
if have_fcorr; then
  fmed=$(median <"$tmp/fcorr.times")
  over=$(awk -v f="$fmed" -v n="$nmed" 'BEGIN {printf "%+.1f %% (%+.3f s)", (f-n)/n*100, f-n}')
  echo "| \`fcorr run --no-install\` | $(paste -sd' ' "$tmp/fcorr.times" | sed 's/ / \/ /g') | $fmed | $over |"
else
  echo "| \`fcorr run --no-install\` | pending: fcorr binary not built yet | | |"
fi
echo
echo "overhead = (fcorr median - native median) / native median. Target: ≤ 5 %."
