#!/usr/bin/env bash
# Builds a static (static-pie) Linux fcorr binary on this machine and checks that it is one.
#
#   RUSTFLAGS="-C target-feature=+crt-static" \
#     cargo build --release --locked --target x86_64-unknown-linux-gnu
#
# glibc with +crt-static links statically and, with PIE on by default, `file` reports
# "static-pie linked". The script fails unless `file` says the result is statically linked and
# readelf finds no NEEDED shared libraries and no program interpreter, then runs `--version`
# and prints the size in bytes and the path.
#
# Env:
#   FCORR_SRC_DIR   crate to build (default: the repository this script lives in)
#   FCORR_BIN_NAME  binary name (default: fcorr)
#   FCORR_TARGET    target triple (default: x86_64-unknown-linux-gnu)
#   RUSTFLAGS       kept; +crt-static is appended
# Exit: 0 ok; 1 build failed or the binary is not static or does not run; 2 usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${FCORR_SRC_DIR:-$(cd "$here/.." && pwd)}
name=${FCORR_BIN_NAME:-fcorr}
target=${FCORR_TARGET:-x86_64-unknown-linux-gnu}

die() {
  printf 'build-static: %s\n' "$*" >&2
  exit "${2:-1}"
}

[[ -f $src/Cargo.toml ]] || die "no Cargo.toml in $src (set FCORR_SRC_DIR to the crate to build)" 2
command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH" 2
command -v file >/dev/null 2>&1 || die "'file' is not installed (apt-get install file)" 2

cd "$src"
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static"
echo "build-static: RUSTFLAGS=\"$RUSTFLAGS\" cargo build --release --locked --target $target  (in $src)"
cargo build --release --locked --target "$target" --bin "$name"

# Where cargo put it: honour CARGO_TARGET_DIR / build.target-dir via cargo metadata.
target_dir=$(cargo metadata --format-version 1 --no-deps --locked 2>/dev/null |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[[ -n $target_dir ]] || target_dir=${CARGO_TARGET_DIR:-$src/target}
bin="$target_dir/$target/release/$name"
[[ -x $bin ]] || die "expected a binary at $bin"

info=$(file -b "$bin")
echo "build-static: file: $info"
case "$info" in
  *"statically linked"* | *"static-pie linked"*) ;;
  *) die "$bin is not statically linked (file: $info)" ;;
esac

if command -v readelf >/dev/null 2>&1; then
  if needed=$(readelf -d "$bin" 2>/dev/null | grep '(NEEDED)'); then
    die "$bin needs shared libraries: $needed"
  fi
  if readelf -l "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'; then
    die "$bin requests a program interpreter (dynamic loader)"
  fi
fi

if ! version=$("$bin" --version 2>&1); then
  die "'$bin --version' failed: $version"
fi
echo "build-static: --version: $version"

size=$(wc -c <"$bin" | tr -d '[:space:]')
echo "build-static: size: $size bytes"
echo "build-static: path: $bin"
