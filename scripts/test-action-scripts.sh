#!/usr/bin/env bash
# Offline tests of the scripts behind action.yml (scripts/action/install.sh and run.sh):
# checksum-verified install from a fake release (file:// test hook), refusal on a checksum
# mismatch, the PyPI path (wheels built by scripts/release/package.py, served to pip from a
# local directory), fallback to `cargo install --path` on a throwaway crate, and the input ->
# flag mapping of run.sh against a stub fcorr. No network but PyPI for the wheel-packing tool
# (packaging/requirements.txt); needs bash, curl, tar, cargo, python3.
# Prints "N passed, N failed" last; exits 1 if anything failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
install_sh="$root/scripts/action/install.sh"
run_sh="$root/scripts/action/run.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() {
  passed=$((passed + 1))
  echo "ok   - $1"
}
not_ok() {
  failed=$((failed + 1))
  echo "FAIL - $1"
  [[ -z ${2:-} ]] || printf '%s\n' "$2" | sed 's/^/       /'
}
# expect_eq NAME EXPECTED ACTUAL
expect_eq() { if [[ $2 == "$3" ]]; then ok "$1"; else not_ok "$1" "expected: $2"$'\n'"actual:   $3"; fi; }
# expect_true NAME CMD...: passes when CMD succeeds
expect_true() {
  local name=$1
  shift
  if "$@"; then ok "$name"; else not_ok "$name" "${detail:-}"; fi
}
# output NAME FILE -> value of NAME=... in a GITHUB_OUTPUT file (last one wins)
output() { sed -n "s/^$1=//p" "$2" | tail -n 1; }

# Windows (Git Bash): native tools want D:/... paths, and the scripts report D:\... paths.
native() { if command -v cygpath >/dev/null 2>&1; then cygpath -w "$1"; else printf '%s' "$1"; fi; }
file_url() { if command -v cygpath >/dev/null 2>&1; then printf 'file:///%s' "$(cygpath -m "$1")"; else printf 'file://%s' "$1"; fi; }
# Run the scripts without whatever the calling job's environment says about actions or inputs.
isolate=(env -u GITHUB_ACTION_PATH -u GITHUB_ACTION_REPOSITORY -u GITHUB_EVENT_NAME -u GITHUB_REF
  -u GITHUB_TOKEN -u GITHUB_SERVER_URL -u DEFAULT_BRANCH -u FCORR_VERSION -u FCORR_BIN
  -u FCORR_ACTION_PATH -u FCORR_ACTION_REPOSITORY -u FCORR_RELEASE_BASE_URL -u FCORR_ARTIFACT_NAME
  -u IN_CONFIG -u IN_PATHS -u IN_POLICY -u IN_FAIL_ON -u IN_BASELINE -u IN_COMMENT -u IN_COMMENT_WHEN
  -u IN_COMMENT_TAG -u IN_CHECK_RUN -u IN_ANNOTATIONS -u IN_OUT -u IN_UPLOAD_BASELINE -u IN_ARTIFACT_NAME
  -u IN_FILES -u IN_SUITE_NAME -u IN_GROUP_BY -u IN_JOB_SUMMARY -u IN_COMMENT_BODY -u IN_PATH_PREFIX
  -u IN_TEMPLATES -u IN_TOKEN_CAN_WRITE -u GITHUB_STEP_SUMMARY)

sha() { if command -v sha256sum >/dev/null; then sha256sum "$1" | awk '{print $1}'; else shasum -a 256 "$1" | awk '{print $1}'; fi; }

# --- a fake action checkout: Cargo.toml (version 0.4.2), a tiny fcorr crate, dist/ -----------
action="$tmp/action"
mkdir -p "$action/src" "$action/dist" "$action/packaging" "$tmp/pypi"
cp "$root/packaging/targets.tsv" "$action/packaging/"
cat >"$action/Cargo.toml" <<'EOF'
[package]
name = "fcorr"
version = "0.4.2"
edition = "2021"

[dependencies]
EOF
cat >"$action/src/main.rs" <<'EOF'
fn main() {
    println!("fcorr 0.4.2 (built from source)");
}
EOF
: >"$action/dist/checksums.txt"

# --- a fake release of 0.4.2 and 0.5.0 for linux x86_64 --------------------------------------
target=x86_64-unknown-linux-musl
release="$tmp/release"
for v in 0.4.2 0.5.0; do
  mkdir -p "$tmp/pkg/fcorr-$v-$target" "$release/v$v"
  printf '#!/bin/sh\necho "fcorr %s (release)"\n' "$v" >"$tmp/pkg/fcorr-$v-$target/fcorr"
  chmod +x "$tmp/pkg/fcorr-$v-$target/fcorr"
  tar -czf "$release/v$v/fcorr-$v-$target.tar.gz" -C "$tmp/pkg" "fcorr-$v-$target"
done

run_install() {
  # run_install CASE [VAR=VALUE...]: runs install.sh in a clean env; sets $rc, $out (outputs), $log
  local case=$1
  shift
  out="$tmp/$case.out"
  log="$tmp/$case.log"
  : >"$out"
  rc=0
  mkdir -p "$tmp/runner-$case"
  "${isolate[@]}" \
    RUNNER_OS=Linux RUNNER_ARCH=X64 RUNNER_TEMP="$tmp/runner-$case" GITHUB_OUTPUT="$out" GITHUB_PATH="$tmp/$case.path" \
    FCORR_ACTION_PATH="$action" FCORR_ACTION_REPOSITORY=example/fcorr FCORR_RELEASE_BASE_URL="$(file_url "$release")" \
    PIP_NO_INDEX=1 PIP_FIND_LINKS="$tmp/pypi" PIP_CONFIG_FILE=/dev/null \
    "$@" bash "$install_sh" >"$log" 2>&1 || rc=$?
}

# 1. the action's own version, listed in the table -> verified release asset
printf '%s  %s\n' "$(sha "$release/v0.4.2/fcorr-0.4.2-$target.tar.gz")" "fcorr-0.4.2-$target.tar.gz" >"$action/dist/checksums.txt"
printf '%s  %s\n' "$(sha "$release/v0.5.0/fcorr-0.5.0-$target.tar.gz")" "fcorr-0.5.0-$target.tar.gz" >>"$action/dist/checksums.txt"
run_install release
expect_eq "release: exit 0" 0 "$rc"
expect_eq "release: source=release" release "$(output source "$out")"
expect_eq "release: version from Cargo.toml" 0.4.2 "$(output version "$out")"
if [[ -x $(output bin "$out") ]] && "$(output bin "$out")" | grep -q 'fcorr 0.4.2 (release)'; then ok "release: bin runs"; else not_ok "release: bin runs" "$(cat "$log")"; fi
if grep -q . "$tmp/release.path" 2>/dev/null; then ok "release: bin dir added to GITHUB_PATH"; else not_ok "release: bin dir added to GITHUB_PATH"; fi

# 2. explicit versions and latest
run_install explicit FCORR_VERSION=v0.5.0
expect_eq "version v0.5.0: installs 0.5.0" "0.5.0 release" "$(output version "$out") $(output source "$out")"
detail=$(cat "$log") expect_true "version v0.5.0: warns it differs from the source" grep -q '::warning' "$log"
run_install latest FCORR_VERSION=latest
expect_eq "version latest: newest in the table" 0.5.0 "$(output version "$out")"
run_install badver FCORR_VERSION='1.2; rm -rf /'
expect_eq "version garbage: exit 3 with an error" 3 "$rc"

# 3. checksum mismatch -> refuse (exit 3), never fall back silently
cp "$action/dist/checksums.txt" "$tmp/table.bak"
sed -i.orig "s/^[0-9a-f]\\{8\\}/deadbeef/" "$action/dist/checksums.txt"
run_install mismatch
expect_eq "mismatch: exit 3" 3 "$rc"
detail=$(cat "$log") expect_true "mismatch: says so" grep -q 'checksum mismatch' "$log"
cp "$tmp/table.bak" "$action/dist/checksums.txt"

# 3b. a Windows runner -> refused with the reason (no Windows build exists), never a source build
run_install windows RUNNER_OS=Windows
expect_eq "windows runner: exit 3" 3 "$rc"
detail=$(cat "$log") expect_true "windows runner: says Linux and macOS only" grep -q 'Linux and macOS runners only' "$log"
if [[ -s $out ]]; then not_ok "windows runner: no outputs" "$(cat "$out")"; else ok "windows runner: no outputs"; fi

# 4. unknown runner, missing asset, local action, empty table -> cargo install --path
if command -v cargo >/dev/null 2>&1; then
  (cd "$action" && cargo generate-lockfile -q)
  : >"$action/dist/checksums.txt"
  run_install source-empty-table
  expect_eq "empty table: exit 0" 0 "$rc"
  expect_eq "empty table: built from source" cargo "$(output source "$out")"
  if "$(output bin "$out")" | grep -q 'built from source'; then ok "empty table: bin runs"; else not_ok "empty table: bin runs" "$(cat "$log")"; fi
  cp "$tmp/table.bak" "$action/dist/checksums.txt"
  run_install source-local FCORR_ACTION_REPOSITORY= FCORR_RELEASE_BASE_URL=
  expect_eq "local action (uses: ./): built from source" cargo "$(output source "$out")"
  run_install source-forced FCORR_VERSION=source
  expect_eq "version source: built from source" cargo "$(output source "$out")"
  run_install source-arch RUNNER_ARCH=ARM
  expect_eq "unreleased runner arch: built from source" cargo "$(output source "$out")"
  printf '%s  %s\n' 0000000000000000000000000000000000000000000000000000000000000000 "fcorr-0.9.9-$target.tar.gz" >>"$action/dist/checksums.txt"
  run_install source-404 FCORR_VERSION=0.9.9
  expect_eq "asset missing from the release: built from source" cargo "$(output source "$out")"
  cp "$tmp/table.bak" "$action/dist/checksums.txt"
else
  echo "skip - cargo not found: source-fallback cases not run"
fi

# 5. the PyPI path: the wheel for the runner, hash-checked against the table, when the release
#    path is not available; a tampered wheel is refused; offline, one notice and a source build.
if python3 -m venv "$tmp/tools" >/dev/null 2>&1 &&
  "$tmp/tools/bin/python" -m pip install -q --disable-pip-version-check --require-hashes \
    -r "$root/packaging/requirements.txt" >"$tmp/tools.log" 2>&1; then
  for v in 0.4.2 0.5.0-rc.1; do
    mkdir -p "$tmp/pypi-bin-$v"
    printf '#!/bin/sh\necho "fcorr %s (pypi)"\n' "$v" >"$tmp/pypi-bin-$v/fcorr"
    chmod +x "$tmp/pypi-bin-$v/fcorr"
    bash "$root/scripts/release/archive.sh" "$v" "$target" "$tmp/pypi-bin-$v/fcorr" "$tmp/pypi-assets-$v" >/dev/null
    "$tmp/tools/bin/python" "$root/scripts/release/package.py" --formats wheel "$tmp/pypi-assets-$v" "$tmp/pypi" >>"$tmp/package.log" 2>&1
  done
  wheel_042=$(cd "$tmp/pypi" && ls fcorr-0.4.2-py3-none-manylinux*.whl)
  wheel_rc=$(cd "$tmp/pypi" && ls fcorr-0.5.0rc1-py3-none-manylinux*.whl)
  with_wheels() {
    cp "$tmp/table.bak" "$action/dist/checksums.txt"
    (cd "$tmp/pypi" && cat "$wheel_042.sha256" "$wheel_rc.sha256") >>"$action/dist/checksums.txt"
  }
  with_wheels
  run_install pypi-no-asset FCORR_RELEASE_BASE_URL="$(file_url "$tmp/empty-release")"
  expect_eq "pypi: release asset missing -> the wheel, exit 0" "0 pypi" "$rc $(output source "$out")"
  if "$(output bin "$out")" | grep -q 'fcorr 0.4.2 (pypi)'; then ok "pypi: the wheel's binary runs"; else not_ok "pypi: the wheel's binary runs" "$(cat "$log")"; fi
  detail=$(cat "$log") expect_true "pypi: the log names the path and the time it took" \
    grep -Eq 'fcorr install: fcorr 0.4.2 \(pypi\) from the PyPI wheel, sha256 checked against dist/checksums.txt, in [0-9]+(\.[0-9])? s' "$log"
  expect_true "pypi: a seconds output" test -n "$(output seconds "$out")"
  run_install pypi-local FCORR_ACTION_REPOSITORY= FCORR_RELEASE_BASE_URL=
  expect_eq "pypi: local checkout (uses: ./) -> the wheel, not a source build" pypi "$(output source "$out")"
  run_install pypi-rc FCORR_VERSION=v0.5.0-rc.1
  expect_eq "pypi: pre-release 0.5.0-rc.1 -> wheel 0.5.0rc1" "0.5.0-rc.1 pypi" "$(output version "$out") $(output source "$out")"
  run_install release-first
  expect_eq "pypi: a reachable release asset still wins" release "$(output source "$out")"

  # a wheel under the released name with other bytes
  mkdir -p "$tmp/pypi-tampered"
  cp "$tmp/pypi/$wheel_042" "$tmp/pypi-tampered/"
  printf 'x' >>"$tmp/pypi-tampered/$wheel_042"
  run_install pypi-tampered FCORR_RELEASE_BASE_URL="$(file_url "$tmp/empty-release")" PIP_FIND_LINKS="$tmp/pypi-tampered"
  expect_eq "pypi tampered: exit 3" 3 "$rc"
  detail=$(cat "$log") expect_true "pypi tampered: 'checksum mismatch' names the wheel and the table's sum" \
    grep -q "checksum mismatch for $wheel_042 from PyPI: expected $(awk '{print $1}' "$tmp/pypi/$wheel_042.sha256")" "$log"
  expect_eq "pypi tampered: no outputs, nothing installed" "" "$(cat "$out")$(ls "$tmp/runner-pypi-tampered/fcorr-pypi-0.4.2-$target/bin" 2>/dev/null)"

  # no python with pip on the runner
  mkdir -p "$tmp/nopython"
  printf '#!/bin/sh\nexit 1\n' >"$tmp/nopython/python3"
  cp "$tmp/nopython/python3" "$tmp/nopython/python"
  chmod +x "$tmp/nopython/python3" "$tmp/nopython/python"
  if command -v cargo >/dev/null 2>&1; then
    run_install pypi-no-python FCORR_RELEASE_BASE_URL="$(file_url "$tmp/empty-release")" PATH="$tmp/nopython:$PATH"
    expect_eq "no python3 with pip: source build" cargo "$(output source "$out")"
    detail=$(cat "$log") expect_true "no python3 with pip: the notice says so" grep -q 'PyPI: no python3 with pip on this runner' "$log"

    # no sum for the wheel in the table -> never downloaded unverified
    cp "$tmp/table.bak" "$action/dist/checksums.txt"
    run_install pypi-no-sum FCORR_RELEASE_BASE_URL="$(file_url "$tmp/empty-release")"
    expect_eq "no wheel sum in the table: source build" cargo "$(output source "$out")"
    detail=$(cat "$log") expect_true "no wheel sum in the table: the notice says why" grep -q "PyPI: dist/checksums.txt has no sum for $wheel_042" "$log"
    with_wheels

    # offline: neither GitHub nor PyPI answers (a closed loopback port stands in for both)
    run_install offline FCORR_RELEASE_BASE_URL=http://127.0.0.1:9/releases PIP_NO_INDEX=0 PIP_FIND_LINKS= \
      PIP_INDEX_URL=http://127.0.0.1:9/simple
    expect_eq "offline: falls back to a source build" "0 cargo" "$rc $(output source "$out")"
    detail=$(cat "$log") expect_true "offline: one notice names both failed downloads" \
      test "$(grep -c '::notice' "$log")" = 1 -a "$(grep '::notice' "$log" | grep -c 'release: could not download.*PyPI: pip could not download.*Neither GitHub nor PyPI could be reached')" = 1
    detail=$(cat "$log") expect_true "offline: the log says the source build and its time" grep -Eq 'from a source build \(cargo install\), in [0-9.]+ s' "$log"
    grep -e '::notice' -e 'fcorr install:' "$log" | sed 's/^/       /'
  else
    echo "skip - cargo not found: PyPI-to-source fallback cases not run"
  fi
  cp "$tmp/table.bak" "$action/dist/checksums.txt"
else
  not_ok "PyPI path: could not install the wheel-packing tool (packaging/requirements.txt)" "$(cat "$tmp/tools.log" 2>/dev/null)"
fi

# --- run.sh: inputs -> flags, exit code kept, baseline upload decision -----------------------
stub="$tmp/stub-fcorr"
cat >"$stub" <<'EOF'
#!/usr/bin/env bash
# records its argv one per line and exits with $STUB_EXIT, writing outputs like fcorr does
printf '%s\n' "$@" >"$STUB_ARGS"
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  printf 'verdict=%s\n' "$([[ ${STUB_EXIT:-0} == 0 ]] && echo pass || echo fail)" >>"$GITHUB_OUTPUT"
fi
printf 'artifact=%s\n' "${FCORR_ARTIFACT_NAME:-}" >>"$STUB_ARGS.env"
printf 'token=%s\n' "${GITHUB_TOKEN:-}" >>"$STUB_ARGS.env"
mkdir -p "${STUB_OUT:-fcorr-out}" && echo '{}' >"${STUB_OUT:-fcorr-out}/results.json"
exit "${STUB_EXIT:-0}"
EOF
chmod +x "$stub"

run_run() {
  # run_run CASE [VAR=VALUE...]: runs run.sh in $tmp/ws-CASE; sets $rc, $out, $args_file
  local case=$1
  shift
  out="$tmp/run-$case.out"
  args_file="$tmp/run-$case.args"
  : >"$out"
  rm -f "$args_file" "$args_file.env"
  mkdir -p "$tmp/ws-$case"
  rc=0
  (cd "$tmp/ws-$case" && "${isolate[@]}" FCORR_BIN="$stub" STUB_ARGS="$args_file" \
    GITHUB_OUTPUT="$out" GITHUB_EVENT_NAME=pull_request GITHUB_REF=refs/pull/7/merge DEFAULT_BRANCH=main \
    "$@" bash "$run_sh" >"$tmp/run-$case.log" 2>&1) || rc=$?
}
argv() { paste -sd'|' "$args_file" 2>/dev/null || true; }

run_run defaults
expect_eq "run defaults: argv" "ci|--baseline|github|--comment|update|--annotations|--out|fcorr-out" "$(argv)"
expect_eq "run defaults: step exits 0" 0 "$rc"
expect_eq "run defaults: exit-code 0" 0 "$(output exit-code "$out")"
expect_eq "run defaults: fcorr's own outputs kept" pass "$(output verdict "$out")"
expect_eq "run defaults: no upload on a PR" false "$(output upload "$out")"
expect_eq "run defaults: artifact name passed to fcorr" "artifact=fcorr-results" "$(grep artifact= "$args_file.env")"

run_run all IN_CONFIG=ci/fcorr.toml IN_POLICY=weighted IN_FAIL_ON=critical IN_BASELINE=none IN_COMMENT=recreate \
  IN_COMMENT_WHEN=on-change IN_COMMENT_TAG='linux py' IN_CHECK_RUN=TRUE IN_ANNOTATIONS=false IN_OUT=out/x \
  IN_ARTIFACT_NAME=res-linux GITHUB_TOKEN=t0k3n STUB_OUT=out/x \
  IN_PATHS=$'examples/a\n  examples/with space  \n\n# skipped\n-dash\r\n'
expect_eq "run all inputs: argv" \
  "ci|--config|ci/fcorr.toml|--policy|weighted|--fail-on|critical|--baseline|none|--comment|recreate|--comment-when|on-change|--comment-tag|linux py|--check-run|--no-annotations|--out|out/x|--|examples/a|examples/with space|-dash" \
  "$(argv)"
expect_eq "run all inputs: token reaches fcorr" "token=t0k3n" "$(grep token= "$args_file.env")"
expect_eq "run all inputs: upload-path" "$(native "$(cd "$tmp/ws-all" && pwd)/out/x/results.json")" "$(output upload-path "$out")"

run_run gate STUB_EXIT=1
expect_eq "gate failed: step still exits 0 (uploads run first)" 0 "$rc"
expect_eq "gate failed: exit-code 1 for the last step" 1 "$(output exit-code "$out")"

run_run push-main GITHUB_EVENT_NAME=push GITHUB_REF=refs/heads/main
expect_eq "push to default branch: upload" true "$(output upload "$out")"
run_run push-branch GITHUB_EVENT_NAME=push GITHUB_REF=refs/heads/feature
expect_eq "push to another branch: no upload" false "$(output upload "$out")"
run_run upload-forced IN_UPLOAD_BASELINE=true
expect_eq "upload-baseline true: upload" true "$(output upload "$out")"
run_run upload-no-results IN_UPLOAD_BASELINE=true STUB_OUT=elsewhere
expect_eq "no results.json: nothing to upload" false "$(output upload "$out")"

run_run report-inputs IN_FILES=$'reports/**/*.xml\n  !reports/legacy/**  \n\n# note\n-odd.xml\r\n' IN_SUITE_NAME='unit tests' \
  IN_GROUP_BY=directory IN_JOB_SUMMARY=false IN_COMMENT_BODY=failures IN_PATH_PREFIX=svc/ IN_TEMPLATES=tpl \
  IN_TOKEN_CAN_WRITE=true
expect_eq "report inputs: argv" \
  "ci|--baseline|github|--comment|update|--annotations|--no-job-summary|--token-can-write|--comment-body|failures|--path-prefix|svc/|--templates|tpl|--suite-name|unit tests|--group-by|directory|--out|fcorr-out|--files=reports/**/*.xml|--files=!reports/legacy/**|--files=-odd.xml" \
  "$(argv)"

run_run bad-bool IN_CHECK_RUN=maybe GITHUB_STEP_SUMMARY="$tmp/bad-bool-summary.md"
expect_eq "bad boolean: exit-code 2" 2 "$(output exit-code "$out")"
expect_true "bad boolean: fcorr not run" test ! -e "$args_file"
expect_eq "bad boolean: verdict error" error "$(output verdict "$out")"
expect_true "bad boolean: the job summary names the input" grep -q "input 'check-run'" "$tmp/bad-bool-summary.md"

run_run crash STUB_EXIT=139 GITHUB_STEP_SUMMARY="$tmp/crash-summary.md"
expect_eq "killed by a signal: exit-code kept" 139 "$(output exit-code "$out")"
expect_eq "killed by a signal: verdict error" error "$(output verdict "$out")"
expect_true "killed by a signal: the job summary says so" grep -q "killed by SIGSEGV (exit 139)" "$tmp/crash-summary.md"

run_run no-bin FCORR_BIN=/nonexistent/fcorr
expect_eq "missing binary: exit-code 3 (infrastructure)" 3 "$(output exit-code "$out")"

echo
echo "action scripts: $passed passed, $failed failed"
((failed == 0))
