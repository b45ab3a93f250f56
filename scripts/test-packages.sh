#!/usr/bin/env bash
# End-to-end test of fcorr's PyPI and npm packages, with no registry contacted for fcorr itself:
#
#   1. pack a fcorr binary as the release archive (scripts/release/archive.sh) for
#      x86_64-unknown-linux-musl, plus stand-in archives (a shell script) for the other targets
#      of packaging/targets.tsv, and build every wheel and npm package from them with
#      scripts/release/package.py --require-all, as release.yml does;
#   2. pip, uvx / uv tool, pipx: install `fcorr` by name from a local index holding all the
#      wheels (pip --no-index --find-links); the one for this platform must be chosen, its
#      binary must have the built binary's sha256, and run `--version` and the examples
#      (exit 1: one example fails on purpose);
#   3. npm: the tarballs installed with --offline into a fresh project as devDependencies, and
#      `npm install -D fcorr` / `npx fcorr` by name from a loopback stand-in of the registry
#      that serves all five packages (npm must pick the platform package by os/cpu); same
#      checks, plus exit codes and signals through the launcher;
#   4. bad input: the fallback wheel on a platform without a binary, the npm package with its
#      optional dependencies omitted or on an unknown platform: each says which platforms exist
#      and exits 3.
#
# Usage: scripts/test-packages.sh     (FCORR_BIN=path/to/fcorr; default target/debug/fcorr)
# Needs python3 (venv, pip), node and npm; the build tools (wheel, uv, pipx) are installed from
# PyPI into a scratch virtualenv. Prints "N passed, N failed" last; exit 1 if anything failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${FCORR_BIN:-$root/target/debug/fcorr}
[[ -x $bin ]] || { echo "no fcorr binary at $bin: run 'cargo build --bin fcorr' first (or set FCORR_BIN)" >&2; exit 1; }
version=$(awk '/^\[/ { p = ($0 ~ /^\[package\]/); next } p && /^version/ { v = $0; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v); print v; exit }' "$root/Cargo.toml")
work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
ok() {
  passed=$((passed + 1))
  echo "ok   $1"
}
not_ok() {
  failed=$((failed + 1))
  echo "FAIL $1"
  [[ -z ${2:-} ]] || printf '%s\n' "$2" | tail -n 15 | sed 's/^/       /'
}
# check NAME CMD...: passes when CMD succeeds
check() {
  local name=$1
  shift
  if "$@"; then ok "$name"; else not_ok "$name" "${detail:-}"; fi
}
sha() { if command -v sha256sum >/dev/null; then sha256sum "$1" | awk '{print $1}'; else shasum -a 256 "$1" | awk '{print $1}'; fi; }
want_sha=$(sha "$bin")
echo "binary: $bin ($(wc -c <"$bin" | tr -d ' ') bytes, sha256 $want_sha, $("$bin" --version))"

# Nothing below may reach a real registry for fcorr: pip and uv only see the local directory.
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export UV_CACHE_DIR="$work/uv-cache" UV_PYTHON_DOWNLOADS=never UV_NO_PROGRESS=1
export npm_config_cache="$work/npm-cache" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

# --- 1. the release archives and every package built from them ------------------------------
tools="$work/tools"
if ! { python3 -m venv "$tools" &&
  "$tools/bin/python" -m pip install -q --require-hashes -r "$root/packaging/requirements.txt" &&
  "$tools/bin/python" -m pip install -q "uv==0.13.8" "pipx==1.18.4"; } >"$work/tools.log" 2>&1; then
  not_ok "build tools (wheel, uv, pipx) install from PyPI into a scratch venv" "$(cat "$work/tools.log")"
  echo "$passed passed, $failed failed"
  exit 1
fi

assets="$work/assets"
"$root/scripts/release/archive.sh" "$version" x86_64-unknown-linux-musl "$bin" "$assets" >/dev/null
printf '#!/bin/sh\necho "stand-in for another platform"\n' >"$work/other-fcorr"
chmod +x "$work/other-fcorr"
awk -F'\t' '!/^#/ && NF == 4 && $2 != "x86_64-unknown-linux-musl" { print $2 }' "$root/packaging/targets.tsv" |
  while read -r target; do
    "$root/scripts/release/archive.sh" "$version" "$target" "$work/other-fcorr" "$assets" >/dev/null
  done
pkgs="$work/packages"
detail=$("$tools/bin/python" "$root/scripts/release/package.py" "$assets" "$pkgs" --require-all 2>&1)
check "package.py --require-all builds the wheels and npm packages from the archives" test -n "$(ls "$pkgs"/*.whl 2>/dev/null)"
printf '%s\n' "$detail" | sed 's/^/     /'
pyver=$("$tools/bin/python" "$root/scripts/release/package.py" --pep440 "$version")
shopt -s nullglob
wheels=("$pkgs"/*.whl)
tarballs=("$pkgs"/*.tgz)
shopt -u nullglob
check "one wheel per target and the fallback wheel (5 wheels)" test "${#wheels[@]}" = 5
check "one npm package per target and fcorr (5 tarballs)" test "${#tarballs[@]}" = 5
check "every package has its .sha256 line" bash -c "cd '$pkgs' && for f in *.whl *.tgz; do grep -q \"  \$f\$\" \"\$f.sha256\" || exit 1; done"

# A copy of the examples per run, so the repository stays clean.
run_examples() {
  # run_examples NAME FCORR...: fcorr run --config fcorr.toml in a fresh copy; sets $rc, $log
  local name=$1
  shift
  rm -rf "$work/ex-$name"
  cp -R "$root/examples" "$work/ex-$name"
  log="$work/ex-$name.log"
  rc=0
  (cd "$work/ex-$name" && "$@" run --config fcorr.toml) >"$log" 2>&1 || rc=$?
}
check_installed() {
  # check_installed CHANNEL PATH: the installed file is the built binary and runs
  local channel=$1 path=$2
  check "$channel: the installed fcorr has the built binary's sha256" test "$(sha "$path" 2>/dev/null)" = "$want_sha"
  detail=$("$path" --version 2>&1) check "$channel: fcorr --version says fcorr $version" test "$("$path" --version 2>&1)" = "fcorr $version"
}
check_examples() {
  # check_examples CHANNEL FCORR...: the examples through that command exit 1 (one fails by design)
  local channel=$1
  shift
  run_examples "$channel" "$@"
  detail=$(tail -n 20 "$log") check "$channel: fcorr run --config examples/fcorr.toml exits 1 (python-broken fails by design; got $rc)" \
    bash -c "[[ $rc == 1 ]] && grep -q 'python-broken' '$log' && test -f '$work/ex-$channel/fcorr-out/results.json'"
}

# --- 2. PyPI: pip, uv, pipx --------------------------------------------------------------------
venv="$work/venv"
python3 -m venv "$venv"
detail=$("$venv/bin/python" -m pip install --no-index --find-links "$pkgs" fcorr 2>&1)
check "pip: pip install --no-index --find-links <all wheels> fcorr" test -x "$venv/bin/fcorr"
# lacks TEXT STRING: STRING does not contain TEXT
lacks() { [[ $2 != *"$1"* ]]; }
detail=$("$venv/bin/python" -m pip show -f fcorr 2>&1)
check "pip: chose the platform wheel, not the fallback" lacks _fcorr_platforms "$detail"
check_installed pip "$venv/bin/fcorr"
check_examples pip "$venv/bin/fcorr"

export UV_TOOL_DIR="$work/uv-tools" UV_TOOL_BIN_DIR="$work/uv-bin"
detail=$("$tools/bin/uvx" --offline --no-index --find-links "$pkgs" fcorr --version 2>/dev/null)
check "uvx: uvx fcorr --version says fcorr $version" test "$detail" = "fcorr $version"
detail=$("$tools/bin/uv" tool install --offline --no-index --find-links "$pkgs" fcorr 2>&1)
check_installed "uv tool install" "$UV_TOOL_BIN_DIR/fcorr"

export PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/pipx-bin" PIPX_MAN_DIR="$work/pipx-man"
detail=$("$tools/bin/pipx" install --pip-args="--no-index --find-links $pkgs" fcorr 2>&1)
check_installed "pipx install" "$PIPX_BIN_DIR/fcorr"

# The fallback wheel alone: what pip installs where no binary wheel fits.
fallback="$work/fallback"
python3 -m venv "$fallback"
"$fallback/bin/python" -m pip install -q --no-index "$pkgs/fcorr-$pyver-py3-none-any.whl" >/dev/null 2>&1
rc=0
out=$("$fallback/bin/fcorr" --version 2>&1) || rc=$?
detail=$out check "fallback wheel on a platform that has a binary: exit 3, says to upgrade the installer" \
  bash -c "[[ $rc == 3 ]] && grep -q 'a wheel with the fcorr binary exists for this platform' <<<\"\$detail\" && grep -q 'upgrade pip' <<<\"\$detail\""
rc=0
out=$("$fallback/bin/python" -c 'import platform, sys; platform.machine = lambda: "riscv64"; import _fcorr_platforms as m; sys.exit(m.main())' 2>&1) || rc=$?
detail=$out check "fallback wheel on a platform with no binary: exit 3, names the platforms that have one" \
  bash -c "[[ $rc == 3 ]] && grep -q 'no binary for this platform (linux, riscv64)' <<<\"\$detail\" && grep -q 'Binaries exist for: Linux x86_64 (linux-x64), Linux aarch64 (linux-arm64), macOS Intel (darwin-x64), macOS Apple silicon (darwin-arm64)' <<<\"\$detail\""
echo "     $out"

# --- 3. npm ------------------------------------------------------------------------------------
main_tgz="$pkgs/fcorr-$version.tgz"
plat_tgz="$pkgs/fcorr-linux-x64-$version.tgz"
new_project() {
  rm -rf "$1"
  mkdir -p "$1"
  printf '{ "name": "app", "version": "1.0.0", "private": true, "scripts": { "fcorr-version": "fcorr --version" } }\n' >"$1/package.json"
}

proj="$work/npm-offline"
new_project "$proj"
detail=$(cd "$proj" && npm install --offline --save-dev "$plat_tgz" "$main_tgz" 2>&1)
check "npm --offline: the tarballs install as devDependencies" test -x "$proj/node_modules/.bin/fcorr"
check_installed "npm --offline" "$proj/node_modules/@fcorr/linux-x64/bin/fcorr"
detail=$(cd "$proj" && npx --offline fcorr --version 2>&1)
check "npm --offline: npx fcorr --version says fcorr $version" test "$detail" = "fcorr $version"
detail=$(cd "$proj" && npm run -s fcorr-version 2>&1)
check "npm --offline: an npm script runs the devDependency's fcorr" test "$detail" = "fcorr $version"
check_examples npx-offline "$proj/node_modules/.bin/fcorr"
rc=0
(cd "$proj" && npx --offline fcorr --no-such-flag) >/dev/null 2>&1 || rc=$?
check "npm launcher: fcorr's usage error exit code 2 comes through (got $rc)" test "$rc" = 2

# A loopback stand-in of the registry: packuments for the five tarballs, nothing else.
cat >"$work/registry.py" <<'PY'
import base64, hashlib, http.server, json, sys, tarfile, urllib.parse
from pathlib import Path

pkgs, portfile = Path(sys.argv[1]), Path(sys.argv[2])
docs = {}
for tgz in sorted(pkgs.glob("*.tgz")):
    with tarfile.open(tgz) as t:
        manifest = json.load(t.extractfile("package/package.json"))
    data = tgz.read_bytes()
    manifest["dist"] = {
        "tarball": f"TARBALLS/{tgz.name}",
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        "shasum": hashlib.sha1(data).hexdigest(),
    }
    docs[manifest["name"]] = {"name": manifest["name"], "dist-tags": {"latest": manifest["version"]},
                              "versions": {manifest["version"]: manifest}}

class Registry(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = urllib.parse.unquote(self.path.split("?")[0]).lstrip("/")
        base = f"http://127.0.0.1:{self.server.server_port}/-/"
        if path.startswith("-/") and (pkgs / path[2:]).is_file() and "/" not in path[2:]:
            body, kind = (pkgs / path[2:]).read_bytes(), "application/octet-stream"
        elif path in docs:
            body, kind = json.dumps(docs[path]).replace("TARBALLS/", base).encode(), "application/json"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
portfile.write_text(str(server.server_port))
server.serve_forever()
PY
python3 "$work/registry.py" "$pkgs" "$work/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s $work/port ]] && break; sleep 0.1; done
registry="http://127.0.0.1:$(cat "$work/port")/"

proj="$work/npm-registry"
new_project "$proj"
detail=$(cd "$proj" && npm install --registry "$registry" --save-dev fcorr 2>&1)
check "npm registry: npm install -D fcorr by name" test -x "$proj/node_modules/.bin/fcorr"
check "npm registry: os/cpu chose @fcorr/linux-x64 and only it" \
  test "$(cd "$proj/node_modules/@fcorr" 2>/dev/null && printf '%s ' *)" = "linux-x64 "
check "npm registry: package.json has fcorr ^$version in devDependencies" \
  test "$(node -p "require('$proj/package.json').devDependencies.fcorr" 2>&1)" = "^$version"
check_installed "npm registry" "$proj/node_modules/@fcorr/linux-x64/bin/fcorr"
detail=$(cd "$work" && npx --registry "$registry" --yes fcorr --version 2>&1)
check "npx fcorr --version (not installed: npx fetches it) says fcorr $version" test "$detail" = "fcorr $version"

proj="$work/npm-omit"
new_project "$proj"
(cd "$proj" && npm install --registry "$registry" --omit=optional --save-dev fcorr) >/dev/null 2>&1
rc=0
out=$(cd "$proj" && npx fcorr --version 2>&1) || rc=$?
detail=$out check "npm --omit=optional: exit 3, names the missing package and why" \
  bash -c "[[ $rc == 3 ]] && grep -q 'the package @fcorr/linux-x64, which holds the fcorr binary for linux-x64, is not installed' <<<\"\$detail\" && grep -q 'omit=optional' <<<\"\$detail\""
echo "     $out"

printf 'Object.defineProperty(process, "platform", { value: "win32" });\n' >"$work/as-windows.js"
rc=0
out=$(cd "$work/npm-registry" && node -r "$work/as-windows.js" node_modules/fcorr/bin/fcorr.js --version 2>&1) || rc=$?
detail=$out check "npm on a platform with no binary: exit 3, names the platforms that have one" \
  bash -c "[[ $rc == 3 ]] && grep -q 'has no binary for this platform (win32-x64). Binaries exist for: linux-x64, linux-arm64, darwin-x64, darwin-arm64' <<<\"\$detail\""
echo "     $out"

# Signals through the launcher, with a stand-in binary that reports what it got.
proj="$work/npm-registry"
stand_in="$proj/node_modules/@fcorr/linux-x64/bin/fcorr"
cat >"$stand_in" <<EOF
#!/usr/bin/env bash
trap 'echo got-TERM >"$work/signal"; exit 143' TERM
echo started >"$work/signal"
sleep 30 &
wait
EOF
node "$proj/node_modules/fcorr/bin/fcorr.js" &
launcher=$!
for _ in $(seq 100); do [[ -s $work/signal ]] && break; sleep 0.1; done
kill -TERM "$launcher"
rc=0
wait "$launcher" || rc=$?
check "npm launcher: SIGTERM reaches fcorr, and its exit code 143 comes back (got $rc)" \
  bash -c "[[ $rc == 143 ]] && grep -q got-TERM '$work/signal'"
# exit_status CMD...: CMD's exit status, without this shell's "Killed" line for a signal death
exit_status() { bash -c '"$@"; echo $?' _ "$@" 2>/dev/null; }
printf '#!/bin/sh\nkill -KILL $$\n' >"$stand_in"
rc=$(exit_status node "$proj/node_modules/fcorr/bin/fcorr.js")
check "npm launcher: fcorr killed by SIGKILL ends the launcher the same way (137; got $rc)" test "$rc" = 137
printf '#!/bin/sh\nkill -PIPE $$\n' >"$stand_in"
rc=$(exit_status node "$proj/node_modules/fcorr/bin/fcorr.js")
check "npm launcher: a signal Node ignores (SIGPIPE) still ends it as a failure (141; got $rc)" test "$rc" = 141

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
