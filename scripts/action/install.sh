#!/usr/bin/env bash
# Installs the fcorr binary for the composite action (action.yml, step "install").
#
# Order of preference:
#   1. the release asset for this runner, verified against dist/checksums.txt committed next to
#      action.yml (the trust anchor: a release asset is only used when its sha256 is in the table);
#   2. `cargo install --locked --path <action source>` when there is no asset for this runner,
#      no checksum for it, the download fails, or the action runs from a local checkout (uses: ./).
# A checksum mismatch is an error, never a silent fallback: it means the asset is not the one
# that was released.
#
# Environment (set by action.yml from inputs / the github context, never interpolated):
#   FCORR_ACTION_PATH        action source dir (default: $GITHUB_ACTION_PATH, else the repo root)
#   FCORR_ACTION_REPOSITORY  owner/name of the action ("" for a local action -> build from source)
#   FCORR_VERSION            "" (the action source's own version) | latest | source | X.Y.Z | vX.Y.Z
#   FCORR_RELEASE_BASE_URL   test hook: replaces <server>/<repo>/releases/download; the checksum
#                            table is still enforced, so this cannot bypass verification
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_SERVER_URL, GITHUB_OUTPUT, GITHUB_PATH
# Outputs (to $GITHUB_OUTPUT): bin, version, source (release|cargo).
# Exit codes: 0 installed; 3 could not install (infrastructure error, as fcorr's own code 3).
set -euo pipefail

log() { printf '%s\n' "$*" >&2; }
notice() { printf '::notice title=fcorr install::%s\n' "$*"; }
warn() { printf '::warning title=fcorr install::%s\n' "$*"; }
die() {
  printf '::error title=fcorr install::%s\n' "$*"
  exit 3
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_path=${FCORR_ACTION_PATH:-${GITHUB_ACTION_PATH:-$(cd "$script_dir/../.." && pwd)}}
action_repo=${FCORR_ACTION_REPOSITORY:-}
want=${FCORR_VERSION:-}
table="$action_path/dist/checksums.txt"
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

# Release target triple for this runner, or "" when fcorr publishes none.
runner_target() {
  local os=${RUNNER_OS:-} arch=${RUNNER_ARCH:-}
  if [[ -z $os ]]; then
    case "$(uname -s)" in Linux) os=Linux ;; Darwin) os=macOS ;; MINGW* | MSYS* | CYGWIN*) os=Windows ;; esac
  fi
  if [[ -z $arch ]]; then
    case "$(uname -m)" in x86_64 | amd64) arch=X64 ;; aarch64 | arm64) arch=ARM64 ;; esac
  fi
  case "$os/$arch" in
    Linux/X64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64) echo aarch64-unknown-linux-musl ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    *) echo "" ;;
  esac
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
  local reason=$1
  notice "building fcorr from source: $reason"
  command -v cargo >/dev/null 2>&1 ||
    die "cannot install fcorr: $reason, and cargo is not on PATH. Install a Rust toolchain before this step (e.g. rustup), or use a runner with a released fcorr target."
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
  local bin=$1 version=$2 source=$3 reported
  if ! reported=$("$bin" --version 2>&1); then
    die "installed $bin but '$bin --version' failed: $reported"
  fi
  log "installed: $reported ($source)"
  emit bin "$(to_native "$bin")"
  emit version "$version"
  emit source "$source"
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
[[ -n $action_repo || -n ${FCORR_RELEASE_BASE_URL:-} ]] ||
  install_from_source "the action runs from a local checkout (no action repository to download from)"

ext=tar.gz
[[ $target == *windows* ]] && ext=zip
asset="fcorr-${version}-${target}.${ext}"
expected=$(table_sha "$asset")
[[ -n $expected ]] || install_from_source "dist/checksums.txt has no checksum for $asset"

base=${FCORR_RELEASE_BASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${action_repo}/releases/download}
url="$base/v${version}/$asset"
work="$tmp_root/fcorr-dl-$version-$target"
rm -rf "$work"
mkdir -p "$work"
log "downloading $url"
if ! download "$url" "$work/$asset"; then
  install_from_source "could not download $url"
fi
actual=$(sha256_of "$work/$asset")
if [[ $actual != "$expected" ]]; then
  die "checksum mismatch for $asset: expected $expected (dist/checksums.txt), got $actual. Refusing to run it; pin 'version' to another release or use 'version: source'."
fi
log "sha256 ok: $actual  $asset"

extract "$work/$asset" "$work/x" || install_from_source "could not unpack $asset (no unzip/7z/pwsh)"
exe=fcorr
[[ $target == *windows* ]] && exe=fcorr.exe
bin=$(find "$work/x" -type f -name "$exe" | head -n 1)
[[ -n $bin ]] || die "$asset contains no $exe"
chmod +x "$bin" 2>/dev/null || true
finish "$bin" "$version" release
