#!/usr/bin/env bash
# Packs one built fcorr binary as a release archive, the way every channel then receives it.
#
#   scripts/release/archive.sh VERSION TARGET BINARY OUT_DIR
#
# Writes OUT_DIR/fcorr-VERSION-TARGET.tar.gz (one directory fcorr-VERSION-TARGET/ holding the
# binary as `fcorr`, README.md and the licences) and its "<sha256>  <file>" line in
# fcorr-VERSION-TARGET.tar.gz.sha256, and prints that line. release.yml's build job runs it;
# scripts/release/package.py takes the binary out of this archive, unchanged, for PyPI and npm;
# the tests package a local build with it, so they check the file the release makes.
# Runs with GNU or BSD tar and sha256sum or shasum (Linux and macOS runners).
# Exit: 0 written; 1 the binary is missing; 2 usage.
set -euo pipefail

[[ $# == 4 ]] || { echo "usage: $0 VERSION TARGET BINARY OUT_DIR" >&2; exit 2; }
version=$1
target=$2
binary=$3
out=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ -f $binary && -x $binary ]] || { echo "archive: $binary is not an executable file" >&2; exit 1; }

name="fcorr-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
cp "$binary" "$stage/$name/fcorr"
chmod 755 "$stage/$name/fcorr"
for f in README.md LICENSE-MIT LICENSE-APACHE; do
  if [[ -f $root/$f ]]; then cp "$root/$f" "$stage/$name/"; fi
done
asset="$name.tar.gz"
tar -czf "$out/$asset" -C "$stage" "$name"
if command -v sha256sum >/dev/null 2>&1; then
  sum=$(sha256sum "$out/$asset" | awk '{print $1}')
else
  sum=$(shasum -a 256 "$out/$asset" | awk '{print $1}')
fi
# "<sha256>  <file>", as sha256sum prints it: record-checksums.sh and package.py check it.
printf '%s  %s\n' "$sum" "$asset" >"$out/$asset.sha256"
cat "$out/$asset.sha256"
