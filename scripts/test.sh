#!/usr/bin/env bash
# The README's test command: installs what the tests need that a fresh machine may lack, then
# runs every test. `.ci/run` calls it after the format and lint checks.
#
# The tests run the real tools (pytest, npm, go, cargo, mvn, gradle, chromium); fcorr installs each
# fixture's own dependencies itself through the registries. What is installed here is only what
# neither the machine nor fcorr provides: Debian's Gradle (the Gradle tests; a Gradle wrapper
# cannot download its distribution where services.gradle.org is unreachable) and Debian's
# Chromium (report.html is tested in a headless browser), Debian's RSpec (the rspec-json reader is
# checked against a live rspec run) and minisign (the release flow signs its archives); and
# from PyPI, the OpenAI-compatible server programs of tests/integration/llm_server.rs.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh report_html`).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages each test group needs, as "command package [package...]".
needs=(
  "gradle gradle"
  "chromium chromium fonts-noto-color-emoji"
  "minisign minisign"
  "rspec ruby-rspec"
)

missing=()
for need in "${needs[@]}"; do
  read -r command packages <<<"$need"
  if [ "$command" = chromium ] && [ -n "${CHROMIUM:-}" ]; then
    continue
  fi
  if ! command -v "$command" >/dev/null 2>&1; then
    read -r -a packages_of <<<"$packages"
    missing+=("${packages_of[@]}")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing ${missing[*]} (apt-get) for the tests"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing ${missing[*]} (sudo apt-get) for the tests"
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "scripts/test.sh: missing Debian packages ${missing[*]}: install them (apt-get install ${missing[*]}," \
      "or set CHROMIUM to a Chrome binary) and run this again" >&2
    exit 3
  fi
fi

# The real OpenAI-compatible servers the eval tests run on loopback (stubllm and mock-ai-api from
# PyPI, pinned, into target/llm-server/venv; a no-op when already there). Installed here, before
# the tests, so the first test that needs them does not spend its time on pip.
bash scripts/llm-server.sh >/dev/null

exec cargo test --locked "$@"
