#!/usr/bin/env bash
# What retries cost on the flaky-pytest fixture: `fcorr run --retries 2` against `--retries 0`,
# next to the native pytest commands the two retries run (the rerun tests' own time, each with
# its own process start). Usage: benches/retry/run.sh [FCORR_BINARY] [REPEATS]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
fcorr="${1:-$repo/target/debug/fcorr}"
repeats="${2:-5}"
export FCORR_CACHE_DIR="${FCORR_CACHE_DIR:-$repo/target/fcorr-test-cache}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$repo/tests/fixtures/flaky-pytest" "$work/p"

python3 - "$fcorr" "$repeats" "$work" <<'PY'
import os, shutil, statistics, subprocess, sys, time, json
fcorr, repeats, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
project = os.path.join(work, "p")

def fresh_state():
    state = os.path.join(work, "state")
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    return dict(os.environ, FCORR_FLAKY_STATE=state)

def timed(cmd, env, cwd=None):
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start

def fcorr_run(retries):
    out = os.path.join(work, "out")
    return timed([fcorr, "run", project, "--out", out, "--retries", str(retries)], fresh_state())

# Warm the shared virtualenv once.
fcorr_run(0)
results = json.load(open(os.path.join(work, "out", "results.json")))
test_cmd = next(p["command"] for p in results["suites"][0]["phases"] if p["kind"] == "test")
python = test_cmd.split(" ")[0]
ids = ["tests/test_flaky.py::test_flaky", "tests/test_flaky.py::test_always_fails"]
native = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={work}/n.xml"]

rows = {"fcorr --retries 0": [], "fcorr --retries 2": [], "native reruns (2 pytest runs)": []}
for _ in range(repeats):
    rows["fcorr --retries 0"].append(fcorr_run(0))
    rows["fcorr --retries 2"].append(fcorr_run(2))
    env = fresh_state()
    timed(native, env, project)  # the first run, not counted: it sets the state the reruns see
    rows["native reruns (2 pytest runs)"].append(timed(native + ids, env, project) + timed(native + ids[1:], env, project))
med = {k: statistics.median(v) for k, v in rows.items()}
for k, v in rows.items():
    print(f"{k:32} median {med[k]:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in v)})")
extra = med["fcorr --retries 2"] - med["fcorr --retries 0"]
print(f"retries added {extra:.2f} s; the native reruns take {med['native reruns (2 pytest runs)']:.2f} s; "
      f"fcorr's own share {extra - med['native reruns (2 pytest runs)']:+.2f} s")
PY
