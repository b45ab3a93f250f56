#!/usr/bin/env bash
# Regenerates the screenshots in docs/img:
#   - report-*.png: report.html of the bundled examples in headless Chromium, light and dark,
#     desktop (1280 px, whole page) and a 390-px phone (first screen);
#   - comment-*.png, summary-*.png: the PR comment and the job summary of the five-suite run
#     issue #24 was reviewed on (python-broken, node-strings, go-stack, the shell-commands eval and
#     the retrieval bank), rendered as GitHub renders Markdown (scripts/markdown_preview.rs, a
#     GitHub-like stylesheet) in a 1000-px column and on a 390-px phone.
#
#   scripts/screenshots.sh     # FCORR_BIN (default target/debug/fcorr; `cargo build` first)
#
# Runs the examples (python-broken and the eval fail on purpose), so the tools they need (uv or
# pip, npm, go, cargo) must be installed. Needs Debian's `chromium` and fonts-noto-color-emoji.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
FCORR_BIN="${FCORR_BIN:-target/debug/fcorr}"
[ -x "$FCORR_BIN" ] || { echo "no fcorr binary at $FCORR_BIN: run cargo build first" >&2; exit 2; }
command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "chromium is missing: apt-get install -y chromium fonts-noto-color-emoji" >&2; exit 3; }
cargo build --quiet --locked --example markdown-preview
PREVIEW="$ROOT/target/debug/examples/markdown-preview"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
mkdir -p docs/img

# --- report.html of every bundled example ---------------------------------------------------
# Exit 1 is the example that fails on purpose; anything else is a real problem.
"$FCORR_BIN" run --config examples/fcorr.toml --out "$OUT/all" --color never >"$OUT/run.log" 2>&1 || [ $? -eq 1 ] ||
  { cat "$OUT/run.log" >&2; exit 3; }
# The first failing case, selected, so the detail pane shows a failure.
CASE="$(python3 -c 'import json,sys
run = json.load(open(sys.argv[1]))
print(next((c["id"] for s in run["suites"] for c in s["cases"] if c["status"] == "failed"), ""))' "$OUT/all/results.json")"
PAGE="$OUT/all/report.html${CASE:+#case=$CASE}"
for theme in light dark; do
  node scripts/browser/drive.mjs shot "$PAGE" "docs/img/report-desktop-$theme.png" 1280 900 "$theme" full
  node scripts/browser/drive.mjs shot "$OUT/all/report.html" "docs/img/report-phone-$theme.png" 390 844 "$theme"
done

# --- the PR comment and the job summary of the five-suite run ------------------------------
FIVE="$OUT/five"
mkdir -p "$FIVE"
for dir in python-broken node-strings go-stack evals banks; do ln -s "$ROOT/examples/$dir" "$FIVE/$dir"; done
cat >"$FIVE/fcorr.toml" <<'TOML'
[[suite]]
name = "python-broken"
path = "python-broken"

[[suite]]
name = "node-strings"
path = "node-strings"

[[suite]]
name = "go-stack"
path = "go-stack"

[[suite]]
name = "shell-commands"
kind = "eval"
dataset = "evals/cases.toml"
policy = "pass-rate"
min-score = 50
concurrency = 4
sut = { type = "command", command = "sh evals/sut.sh {id}", stdin = "none", timeout = 2, retries = 0 }

[[suite]]
name = "retrieval"
kind = "bank"
mechanism = "semantic"
bank = "banks/semantic/semantic_bank.json"
top-k = 6
rate-limit = 0.05
sut = { type = "command", command = ["python3", "banks/sut.py"] }
TOML
"$FCORR_BIN" run --config "$FIVE/fcorr.toml" --out "$FIVE/out" --color never >"$OUT/five.log" 2>&1 || [ $? -eq 1 ] ||
  { cat "$OUT/five.log" >&2; exit 3; }
"$PREVIEW" "$FIVE/out/comment.md" "$FIVE/comment.html" "github-actions bot commented (comment.md)"
"$PREVIEW" "$FIVE/out/summary.md" "$FIVE/summary.html" "fcorr job summary (summary.md)"
# The comment whole in a PR's 1000-px column; its first screens on a phone; the summary's top.
node scripts/browser/drive.mjs shot "$FIVE/comment.html" docs/img/comment-1000.png 1000 900 light full
node scripts/browser/drive.mjs shot "$FIVE/comment.html" docs/img/comment-390.png 390 1600 light
node scripts/browser/drive.mjs shot "$FIVE/summary.html" docs/img/summary-1000.png 1000 1500 light
node scripts/browser/drive.mjs shot "$FIVE/summary.html" docs/img/summary-390.png 390 1600 light
ls -l docs/img/*.png
