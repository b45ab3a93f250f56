#!/usr/bin/env bash
# Records release asset checksums in the action's trust table (dist/checksums.txt).
#
#   scripts/release/record-checksums.sh ASSETS_DIR [TABLE]
#
# ASSETS_DIR holds fcorr-<version>-<target>.tar.gz files and their "<sha256>  <file>" .sha256
# lines (as the release workflow's build jobs write them), and may hold the PyPI wheels
# fcorr-<version>-py3-none-<platform>.whl with theirs (scripts/release/package.py): the action
# installs either, verified against this table. Every file is hashed again here and must match
# its .sha256 line, so a corrupted download between jobs is caught before it is trusted. The table keeps every earlier line; a file name recorded again takes the new sum.
# Lines are sorted by file name so the commit diff shows exactly what was added.
#
# The release workflow commits the result on top of the released source and tags *that* commit,
# so a pin of the tag (or of the commit it points at) finds its own release in the table and
# install.sh downloads a verified binary instead of building from source.
#
# Exit: 0 recorded; 1 a checksum did not match or an archive has no .sha256; 2 usage.
set -euo pipefail

die() {
  printf 'record-checksums: %s\n' "$1" >&2
  exit "${2:-1}"
}

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 ASSETS_DIR [TABLE]" 2
assets=$1
table=${2:-dist/checksums.txt}
[[ -d $assets ]] || die "$assets: no such directory" 2

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | awk '{print $1}'; else shasum -a 256 "$1" | awk '{print $1}'; fi
}

shopt -s nullglob
archives=("$assets"/fcorr-*.tar.gz "$assets"/fcorr-*.zip)
[[ ${#archives[@]} -gt 0 ]] || die "$assets holds no fcorr-*.tar.gz or fcorr-*.zip release archive"
wheels=("$assets"/fcorr-*.whl)

new_lines=()
for archive in "${archives[@]}" ${wheels[@]+"${wheels[@]}"}; do
  name=$(basename "$archive")
  [[ $name =~ ^fcorr-[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?-[a-z0-9_]+(-[a-z0-9_]+)+\.(tar\.gz|zip)$ ||
    $name =~ ^fcorr-[0-9]+\.[0-9]+\.[0-9]+((a|b|rc)[0-9]+)?-py3-none-[a-z0-9_.]+\.whl$ ]] ||
    die "$name: not a release asset name (fcorr-<version>-<target>.tar.gz or fcorr-<version>-py3-none-<platform>.whl)"
  [[ -f $archive.sha256 ]] || die "$name has no $name.sha256 beside it"
  recorded=$(awk -v n="$name" '{ f = $2; sub(/^\*/, "", f); if (f == n) { print tolower($1); exit } }' "$archive.sha256")
  [[ -n $recorded ]] || die "$name.sha256 has no line for $name"
  actual=$(sha256_of "$archive")
  [[ $actual == "$recorded" ]] || die "$name: sha256 is $actual but its .sha256 says $recorded"
  new_lines+=("$actual  $name")
done

mkdir -p "$(dirname "$table")"
touch "$table"
{
  # grep exits 1 on an empty table; that is not an error here.
  { grep -v '^[[:space:]]*#' "$table" || true; } | awk 'NF >= 2'
  printf '%s\n' "${new_lines[@]}"
} | awk '{ f = $2; sub(/^\*/, "", f); sum[f] = tolower($1) } END { for (f in sum) print sum[f] "  " f }' |
  LC_ALL=C sort -k2,2 >"$table.new"
# Comment lines (the table's header) stay on top.
{ grep '^[[:space:]]*#' "$table" || true; cat "$table.new"; } >"$table.tmp"
rm -f "$table.new"
mv "$table.tmp" "$table"
printf 'recorded %d checksum(s) in %s\n' "${#new_lines[@]}" "$table" >&2
