#!/usr/bin/env bash
# An HTTP system under test that writes its response headers and body in two writes (Python's
# http.server, HTTP/1.1 keep-alive: benches/http/server.py), asked N cases one at a time by
#   (a) fcorr (`kind = "eval"`, `[suite.sut] type = "http"`, concurrency 1, --no-cache), and
#   (b) Python's http.client over one kept-alive connection (client.py, the anchor),
# alternated RUNS times (BASELINE_BIN, when set, is a third row in the same rotation). Prints
# wall time per request: a delayed-ACK stall shows as ~40 ms per request. The control row is fcorr
# against the same server with TCP_NODELAY on the server's side (`--nodelay`): what no stall costs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CASES="${CASES:-200}"
RUNS="${RUNS:-3}"
SCRATCH="$(mktemp -d /tmp/fcorr-bench-http.XXXXXX)"
SERVER_PID=""
CONTROL_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ -n "$CONTROL_PID" ]; then kill "$CONTROL_PID" 2>/dev/null || true; fi
  rm -rf "$SCRATCH"
}
trap cleanup EXIT

python3 benches/http/server.py "$SCRATCH/port" & SERVER_PID=$!
python3 benches/http/server.py "$SCRATCH/control-port" --nodelay & CONTROL_PID=$!
for _ in $(seq 50); do [ -s "$SCRATCH/port" ] && [ -s "$SCRATCH/control-port" ] && break; sleep 0.1; done
PORT="$(cat "$SCRATCH/port")"
CASES="$CASES" CONCURRENCY=1 python3 benches/eval/gen.py "$SCRATCH/data" >/dev/null
mkdir -p "$SCRATCH/control"
cp "$SCRATCH/data/cases.toml" "$SCRATCH/control/"
sut_config() {
  cat <<TOML
[[suite]]
name = "bench"
kind = "eval"
dataset = "cases.toml"
policy = "pass-rate"
concurrency = 1

[suite.sut]
type = "http"
url = "http://127.0.0.1:$1/"
retries = 0
TOML
}
sut_config "$PORT" > "$SCRATCH/data/fcorr.toml"
sut_config "$(cat "$SCRATCH/control-port")" > "$SCRATCH/control/fcorr.toml"

machine_line
echo "cases: $CASES, concurrency 1, runs: $RUNS (alternating), server: benches/http/server.py on port $PORT"
have_fcorr || { echo "fcorr: skipped (binary not built)"; exit 0; }

# Wall seconds of one command, appended to the file $1.
timed() {
  local out="$1" t0 t1; shift
  t0=$(now); "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || { echo "failed: $*"; tail -5 "$SCRATCH/last.err"; exit 1; }
  t1=$(now); echo "$t1 - $t0" | bc -l >> "$out"
}
fcorr_once() {
  rm -rf "$SCRATCH/out"
  timed "$2" "$1" run --config "$SCRATCH/${3:-data}/fcorr.toml" --out "$SCRATCH/out" --fail-on none --format json --no-cache
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['suites'][0]['cases']; \
assert len(c)==int(sys.argv[2]) and sum(x['status']=='passed' for x in c)==int(sys.argv[2])*4//5, 'counts'" \
    "$SCRATCH/out/results.json" "$CASES"
}

for ((r = 1; r <= RUNS; r++)); do
  fcorr_once "$FCORR_BIN" "$SCRATCH/fcorr"
  timed "$SCRATCH/python" python3 benches/http/client.py "$PORT" "$CASES"
  if [ -n "${BASELINE_BIN:-}" ]; then fcorr_once "$BASELINE_BIN" "$SCRATCH/base"; fi
  fcorr_once "$FCORR_BIN" "$SCRATCH/control-times" control
  echo "run $r: fcorr $(tail -1 "$SCRATCH/fcorr") s | python $(tail -1 "$SCRATCH/python") s${BASELINE_BIN:+ | baseline $(tail -1 "$SCRATCH/base") s} | control $(tail -1 "$SCRATCH/control-times") s  (load $(cut -d' ' -f1 /proc/loadavg))"
done

echo
echo "| client | wall median (s) | per request (ms) |"
echo "|---|--:|--:|"
row() { local m; m=$(median 3 < "$2"); printf '| %s | %s | %.2f |\n' "$1" "$m" "$(echo "$m * 1000 / $CASES" | bc -l)"; }
row "fcorr" "$SCRATCH/fcorr"
if [ -n "${BASELINE_BIN:-}" ]; then row "fcorr baseline" "$SCRATCH/base"; fi
row "python http.client (anchor)" "$SCRATCH/python"
row "control: fcorr, server with TCP_NODELAY" "$SCRATCH/control-times"
machine_line
