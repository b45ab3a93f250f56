#!/usr/bin/env bash
# Signs the release archives with a minisign key made for this release alone, for
# `cargo binstall fcorr`: cargo-binstall checks a download only against a minisign signature
# whose public key is in the crate's [package.metadata.binstall.signing].
#
#   scripts/release/sign.sh ASSETS_DIR TRUSTED_COMMENT
#
# Generates a password-less key pair in a private temporary directory, writes
# <archive>.sig beside every fcorr-*.tar.gz, checks each signature with the public key, deletes
# the secret key, and prints the public key (one line) on stdout. The secret key never leaves
# this process's temporary directory, so there is nothing to store as a secret: the release
# workflow puts the public key into the crate it publishes to crates.io (immutable there), and
# that crate version then accepts only archives signed in this release run.
# Needs minisign. Exit: 0 signed; 1 signing or a check failed; 2 usage.
set -euo pipefail

[[ $# == 2 ]] || { echo "usage: $0 ASSETS_DIR TRUSTED_COMMENT" >&2; exit 2; }
assets=$1
comment=$2
command -v minisign >/dev/null 2>&1 || { echo "sign: minisign is not installed" >&2; exit 1; }
shopt -s nullglob
archives=("$assets"/fcorr-*.tar.gz)
((${#archives[@]})) || { echo "sign: $assets holds no fcorr-*.tar.gz" >&2; exit 1; }

keys=$(mktemp -d)
trap 'rm -rf "$keys"' EXIT
chmod 700 "$keys"
minisign -G -W -p "$keys/release.pub" -s "$keys/release.key" >/dev/null
for archive in "${archives[@]}"; do
  minisign -S -s "$keys/release.key" -m "$archive" -x "$archive.sig" -t "$comment $(basename "$archive")" >/dev/null
  minisign -V -q -p "$keys/release.pub" -m "$archive" -x "$archive.sig" >/dev/null ||
    { echo "sign: the signature of $archive does not verify" >&2; exit 1; }
  echo "sign: signed $(basename "$archive")" >&2
done
# The public key file is a comment line and the key.
tail -n 1 "$keys/release.pub"
