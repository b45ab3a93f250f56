#!/usr/bin/env bash
# Regenerates docs/img/report-*.png: report.html of the bundled examples in headless Chromium,
# light and dark, desktop (1280 px, whole page) and a 400-px phone (first screen).
#
#   scripts/screenshots.sh     # FCORR_BIN (default target/debug/fcorr; `cargo build` first)
#
# Runs `fcorr run --config examples/fcorr.toml` (python-broken fails on purpose), so the tools
# the examples need (uv or pip, npm, go, cargo) must be installed. Needs Debian's `chromium`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
FCORR_BIN="${FCORR_BIN:-target/debug/fcorr}"
[ -x "$FCORR_BIN" ] || { echo "no fcorr binary at $FCORR_BIN: run cargo build first" >&2; exit 2; }
command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "chromium is missing: apt-get install -y chromium fonts-noto-color-emoji" >&2; exit 3; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
# Exit 1 is the example that fails on purpose; anything else is a real problem.
"$FCORR_BIN" run --config examples/fcorr.toml --out "$OUT" --color never >"$OUT/run.log" 2>&1 || [ $? -eq 1 ] ||
  { cat "$OUT/run.log" >&2; exit 3; }
# The first failing case, selected, so the detail pane shows a failure.
CASE="$(python3 -c 'import json,sys
run = json.load(open(sys.argv[1]))
print(next((c["id"] for s in run["suites"] for c in s["cases"] if c["status"] == "failed"), ""))' "$OUT/results.json")"
PAGE="$OUT/report.html${CASE:+#case=$CASE}"
mkdir -p docs/img
for theme in light dark; do
  node scripts/browser/drive.mjs shot "$PAGE" "docs/img/report-desktop-$theme.png" 1280 900 "$theme" full
  node scripts/browser/drive.mjs shot "$OUT/report.html" "docs/img/report-phone-$theme.png" 400 860 "$theme"
done
ls -l docs/img/report-*.png
