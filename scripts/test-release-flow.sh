#!/usr/bin/env bash
# Local test of the release flow's trust chain with a real fcorr binary (no network, no GitHub):
#
#   1. package target/debug/fcorr (or $FCORR_BIN) as a release asset, as release.yml does;
#   2. record its sum with scripts/release/record-checksums.sh in a commit on top of the "source"
#      commit and tag that commit, as release.yml does;
#   3. the action checked out at the tag installs the asset through scripts/action/install.sh,
#      verified by sha256, and runs it;
#   4. the action at the untagged source commit has no sum: it goes to the cargo fallback;
#   5. a tampered asset (one byte of the binary changed, repacked under the same name) is refused
#      with exit 3 and never run; record-checksums refuses an asset that does not match its
#      .sha256 line.
#
# Usage: cargo build --bin fcorr && scripts/test-release-flow.sh
# Exit: 0 all checks passed; 1 a check failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${FCORR_BIN:-$root/target/debug/fcorr}
[[ -x $bin ]] || { echo "no fcorr binary at $bin: run 'cargo build --bin fcorr' first (or set FCORR_BIN)" >&2; exit 1; }
version=$(awk '/^\[/ { p = ($0 ~ /^\[package\]/); next } p && /^version/ { v = $0; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v); print v; exit }' "$root/Cargo.toml")
target=x86_64-unknown-linux-musl
asset="fcorr-$version-$target.tar.gz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $what"
  else
    failed=$((failed + 1))
    echo "FAIL $what"
  fi
}

# A throwaway action repository: the files install.sh reads, with an empty trust table.
action="$work/action"
mkdir -p "$action/scripts/action" "$action/dist"
cp "$root/Cargo.toml" "$action/"
cp "$root/scripts/action/install.sh" "$action/scripts/action/"
: >"$action/dist/checksums.txt"
git -C "$action" init -q
git -C "$action" -c user.name=t -c user.email=t@t add -A
git -C "$action" -c user.name=t -c user.email=t@t commit -qm source
source_sha=$(git -C "$action" rev-parse HEAD)

package() {
  # package BINARY DEST_DIR: fcorr-<version>-<target>.tar.gz + .sha256, as release.yml's build job
  local stage="$work/stage/fcorr-$version-$target"
  rm -rf "$work/stage"
  mkdir -p "$stage" "$2"
  cp "$1" "$stage/fcorr"
  tar -czf "$2/$asset" -C "$work/stage" "fcorr-$version-$target"
  (cd "$2" && sha256sum "$asset" >"$asset.sha256")
}

assets="$work/assets"
package "$bin" "$assets"
releases="$work/releases/v$version"
mkdir -p "$releases"
cp "$assets/$asset" "$releases/"

# The release commit: the source plus its own sums, tagged.
"$root/scripts/release/record-checksums.sh" "$assets" "$action/dist/checksums.txt" ||
  { echo "FAIL record-checksums could not record the real asset" >&2; exit 1; }
git -C "$action" -c user.name=t -c user.email=t@t commit -qam "Release v$version: record the asset checksums"
git -C "$action" tag "v$version"
check "the release commit differs from the source only in dist/checksums.txt" \
  test "$(git -C "$action" diff --name-only "$source_sha" "v$version")" = dist/checksums.txt
echo "     table: $(cat "$action/dist/checksums.txt")"

install() {
  # install NAME [VAR=VALUE...]: install.sh from the action checkout; sets rc, log, out
  local name=$1
  shift
  log="$work/$name.log"
  out="$work/$name.out"
  : >"$out"
  rc=0
  env -i HOME="$HOME" PATH="${INSTALL_PATH:-$PATH}" RUNNER_OS=Linux RUNNER_ARCH=X64 RUNNER_TEMP="$work/tmp-$name" \
    GITHUB_OUTPUT="$out" FCORR_ACTION_PATH="$action" FCORR_ACTION_REPOSITORY=example/fcorr \
    FCORR_RELEASE_BASE_URL="file://$work/releases" "$@" bash "$action/scripts/action/install.sh" >"$log" 2>&1 || rc=$?
}
output() { sed -n "s/^$1=//p" "$out" | tail -n 1; }

# Pinned to the tag (or the commit it points at): verified download.
git -C "$action" -c advice.detachedHead=false checkout -q "v$version"
install tag
check "pin of the tag: installed (exit $rc)" test "$rc" = 0
check "pin of the tag: from the release asset, not cargo" test "$(output source)" = release
installed=$(output bin)
check "pin of the tag: the installed binary runs and is fcorr $version" \
  bash -c "[[ \$('$installed' --version) == 'fcorr $version' ]]"
check "pin of the tag: the log says the sha256 was checked" grep -q "sha256 ok" "$log"

# Pinned to the commit before the release commit: no sum, so the cargo fallback (no cargo on
# this PATH, so it stops there with exit 3 and says why).
git -C "$action" checkout -q "$source_sha"
INSTALL_PATH=/usr/bin:/bin install untagged
check "untagged commit: takes the source fallback" grep -q "dist/checksums.txt has no checksum for $asset" "$log"
check "untagged commit: without cargo, exit 3 naming the cause" \
  bash -c "[[ $rc == 3 ]] && grep -q 'cargo is not on PATH' '$log'"

# A tampered asset under the released name.
git -C "$action" checkout -q "v$version"
cp "$bin" "$work/fcorr-tampered"
printf '\0' | dd of="$work/fcorr-tampered" bs=1 seek=4096 conv=notrunc status=none
package "$work/fcorr-tampered" "$work/tampered"
cp "$work/tampered/$asset" "$releases/$asset"
install tampered
check "tampered asset: refused with exit 3 (got $rc)" test "$rc" = 3
check "tampered asset: 'checksum mismatch' names both sums" \
  grep -q "checksum mismatch for $asset: expected $(awk '{print $1}' "$assets/$asset.sha256")" "$log"
check "tampered asset: nothing installed" test -z "$(output bin)"

# record-checksums refuses an archive that does not match its .sha256 line.
cp "$work/tampered/$asset" "$assets/$asset"
rc=0
"$root/scripts/release/record-checksums.sh" "$assets" "$work/table.txt" >"$work/record.log" 2>&1 || rc=$?
check "record-checksums: a corrupted asset is refused (exit $rc)" \
  bash -c "[[ $rc == 1 ]] && grep -q 'but its .sha256 says' '$work/record.log'"

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
