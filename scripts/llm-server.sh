#!/usr/bin/env bash
# Installs the real OpenAI-compatible server programs that fcorr's tests run on loopback
# (#23 pt 10) and prints the directory holding their commands:
#   stubllm      chat completions from YAML fixtures (tests/fixtures/llm-server/*.yaml)
#   mock-ai-api  /v1/embeddings and error scenarios
# Both come from PyPI, pinned in tests/fixtures/llm-server/requirements.txt, into a virtualenv
# under target/ (FCORR_LLM_SERVER_DIR overrides), reinstalled only when that file changes, so a
# warm run costs nothing. No model weights are downloaded. scripts/test.sh calls it before the
# tests, and the tests call it again (a no-op then), so `cargo test` alone works too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/tests/fixtures/llm-server/requirements.txt"
dir="${FCORR_LLM_SERVER_DIR:-$root/target/llm-server}"
venv="$dir/venv"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"

mkdir -p "$dir"
# Tests run in parallel: one installs, the others wait for it.
exec 9>"$dir/.lock"
flock 9
if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  python="${PYTHON:-python3}"
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "scripts/llm-server.sh: needs Python 3.11+ as $python (mock-ai-api requires it)" >&2
    exit 3
  fi
  echo "scripts/llm-server.sh: installing stubllm and mock-ai-api into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # --no-deps: the pinned list is the whole environment; nothing is resolved at install time.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps -r "$requirements" >&2
  echo "$want" >"$venv/.requirements.sha256"
fi
echo "$venv/bin"
