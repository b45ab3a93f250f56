#!/usr/bin/env bash
# Adds what only the release knows to Cargo.toml before `cargo publish`:
#
#   scripts/release/stamp-crate.sh CARGO_TOML REPOSITORY_URL MINISIGN_PUBLIC_KEY
#
#   - `repository` in [package] (https://github.com/<owner>/<repo>): cargo-binstall's
#     `{ repo }` in [package.metadata.binstall] pkg-url. The source names no owner, so the
#     workflow stamps the repository it releases from; a `repository` already in the file must
#     be that same URL.
#   - [package.metadata.binstall.signing] with the release's public key (scripts/release/sign.sh),
#     so `cargo binstall fcorr` refuses an archive not signed by this release run.
# The file in the repository never changes: the release commit stays "source + checksums".
# Exit: 0 stamped; 1 the manifest disagrees or has a signing table already; 2 usage.
set -euo pipefail

[[ $# == 3 ]] || { echo "usage: $0 CARGO_TOML REPOSITORY_URL MINISIGN_PUBLIC_KEY" >&2; exit 2; }
manifest=$1
repo=${2%/}
pubkey=$3
[[ $repo =~ ^https://[A-Za-z0-9.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
  { echo "stamp-crate: '$repo' is not https://<host>/<owner>/<repo>" >&2; exit 2; }
[[ $pubkey =~ ^[A-Za-z0-9+/=]{40,80}$ ]] || { echo "stamp-crate: '$pubkey' is not a minisign public key" >&2; exit 2; }
grep -q '^\[package\.metadata\.binstall\.signing\]' "$manifest" &&
  { echo "stamp-crate: $manifest has a [package.metadata.binstall.signing] table already" >&2; exit 1; }

current=$(awk '/^\[/ { p = ($0 ~ /^\[package\][[:space:]]*$/); next }
  p && /^[[:space:]]*repository[[:space:]]*=/ { v = $0; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v); print v; exit }' "$manifest")
if [[ -n $current && ${current%/} != "$repo" ]]; then
  echo "stamp-crate: $manifest says repository = \"$current\", but the release runs in $repo" >&2
  exit 1
fi
tmp="$manifest.stamp"
awk -v repo="$repo" -v add="$([[ -z $current ]] && echo 1)" '
  { print }
  add && /^\[package\][[:space:]]*$/ { print "repository = \"" repo "\""; add = "" }
' "$manifest" >"$tmp"
printf '\n[package.metadata.binstall.signing]\nalgorithm = "minisign"\npubkey = "%s"\n' "$pubkey" >>"$tmp"
mv "$tmp" "$manifest"
echo "stamp-crate: repository = $repo; binstall signing key $pubkey" >&2
