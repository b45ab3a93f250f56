#!/usr/bin/env bash
# Local dry run of release.yml with a real fcorr binary: every step that can run without GitHub
# and the registries, and the trust chain the action relies on afterwards (no network):
#
#   1. pack target/debug/fcorr (or $FCORR_BIN) as the release archive (scripts/release/archive.sh,
#      as the build job), build the wheels and npm packages from it and verify them
#      (scripts/release/package.py, as the packages job), sign the archive with a key made for
#      the run (scripts/release/sign.sh, as the publish job);
#   2. record the archive's and the wheels' sums with scripts/release/record-checksums.sh in a
#      commit on top of the "source" commit and tag that commit, as the publish job does;
#   3. the action checked out at the tag installs the release asset through
#      scripts/action/install.sh, verified by sha256, and runs it; with the asset gone from the
#      release it installs the same bytes from the wheel (pip, from a local directory standing in
#      for PyPI, hash-checked against the tag's table);
#   4. the action at the untagged source commit has no sums: it goes to the cargo fallback;
#   5. a tampered archive and a tampered wheel (one byte changed, same name) are refused with
#      exit 3 and never run; record-checksums refuses a file that does not match its .sha256;
#   6. cargo: the crate's files (cargo package --list), the binstall metadata pointing at the
#      archive the release makes, and stamp-crate.sh adding the repository and the signing key,
#      as the crates job does; a tampered archive fails the signature check binstall makes.
#
# Usage: cargo build --bin fcorr && scripts/test-release-flow.sh
# Needs git, python3 (venv; `wheel` is installed from PyPI into a scratch venv), npm, minisign
# (installed with apt-get when missing and root). Exit: 0 all checks passed; 1 a check failed.
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
sha() { sha256sum "$1" | awk '{print $1}'; }
want_sha=$(sha "$bin")
git_c() { git -C "$action" -c user.name=t -c user.email=t@t "$@"; }

# A throwaway action repository: the files install.sh reads, with an empty trust table.
action="$work/action"
mkdir -p "$action/scripts/action" "$action/dist" "$action/packaging"
cp "$root/Cargo.toml" "$action/"
cp "$root/scripts/action/install.sh" "$action/scripts/action/"
cp "$root/packaging/targets.tsv" "$action/packaging/"
: >"$action/dist/checksums.txt"
git -C "$action" init -q
git_c add -A
git_c commit -qm source
source_sha=$(git -C "$action" rev-parse HEAD)

# --- build job: the archive; packages job: wheels + npm from it --------------------------------
assets="$work/assets"
"$root/scripts/release/archive.sh" "$version" "$target" "$bin" "$assets" >/dev/null
if ! { python3 -m venv "$work/tools" &&
  "$work/tools/bin/python" -m pip install -q --disable-pip-version-check --require-hashes \
    -r "$root/packaging/requirements.txt"; } >"$work/tools.log" 2>&1; then
  cat "$work/tools.log" >&2
  echo "FAIL could not install the wheel-packing tool (packaging/requirements.txt)"
  exit 1
fi
packages="$work/packages"
"$work/tools/bin/python" "$root/scripts/release/package.py" "$assets" "$packages" \
  --repository-url https://github.com/example/fcorr >"$work/package.log" 2>&1
check "package.py: wheels and npm packages built from the archive" test -n "$(cd "$packages" 2>/dev/null && echo ./*.whl)"
"$work/tools/bin/python" "$root/scripts/release/package.py" --verify "$assets" "$packages" >"$work/verify.log" 2>&1
check "package.py --verify: the wheel and the npm package hold the archive's binary, byte for byte" \
  test "$(grep -c "^same bytes: $target: .*(binary $want_sha)" "$work/verify.log")" = 2
pyver=$("$work/tools/bin/python" "$root/scripts/release/package.py" --pep440 "$version")
wheel=$(cd "$packages" && echo fcorr-"$pyver"-py3-none-manylinux*x86_64*.whl)

# --- publish job: sign, record the sums in the release commit, tag -----------------------------
if ! command -v minisign >/dev/null 2>&1 && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "     installing minisign (apt-get) for the signing steps"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq minisign; } >/dev/null 2>&1
fi
pubkey=
if command -v minisign >/dev/null 2>&1; then
  pubkey=$("$root/scripts/release/sign.sh" "$assets" "fcorr $version, test release run:" 2>"$work/sign.log")
  check "sign.sh: the archive is signed, and only the public key is left" \
    bash -c "[[ -f '$assets/$asset.sig' && -n '$pubkey' ]] && minisign -V -q -P '$pubkey' -m '$assets/$asset' -x '$assets/$asset.sig'"
else
  echo "FAIL minisign is not installed (apt-get install minisign): the signing steps were not checked"
  failed=$((failed + 1))
fi

cp "$packages"/*.whl "$packages"/*.whl.sha256 "$assets/"
"$root/scripts/release/record-checksums.sh" "$assets" "$action/dist/checksums.txt" 2>"$work/record.log" ||
  { cat "$work/record.log" >&2; echo "FAIL record-checksums could not record the real asset and wheels"; exit 1; }
git_c commit -qam "Release v$version: record the asset checksums"
git -C "$action" tag "v$version"
check "the release commit differs from the source only in dist/checksums.txt" \
  test "$(git -C "$action" diff --name-only "$source_sha" "v$version")" = dist/checksums.txt
check "the table has the archive's and the wheel's sums" \
  bash -c "grep -q '  $asset\$' '$action/dist/checksums.txt' && grep -q '  $wheel\$' '$action/dist/checksums.txt'"
sed 's/^/     table: /' "$action/dist/checksums.txt"

releases="$work/releases/v$version"
mkdir -p "$releases"
cp "$assets/$asset" "$releases/"
pypi="$work/pypi"
mkdir -p "$pypi"
cp "$packages/$wheel" "$pypi/"

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
    FCORR_RELEASE_BASE_URL="file://$work/releases" PIP_NO_INDEX=1 PIP_FIND_LINKS="$pypi" PIP_CONFIG_FILE=/dev/null \
    "$@" bash "$action/scripts/action/install.sh" >"$log" 2>&1 || rc=$?
}
output() { sed -n "s/^$1=//p" "$out" | tail -n 1; }

# --- the action afterwards -----------------------------------------------------------------------
# Pinned to the tag (or the commit it points at): verified download.
git -C "$action" -c advice.detachedHead=false checkout -q "v$version"
install tag
check "pin of the tag: installed (exit $rc)" test "$rc" = 0
check "pin of the tag: from the release asset, not PyPI or cargo" test "$(output source)" = release
installed=$(output bin)
check "pin of the tag: the installed binary is the built one (sha256) and is fcorr $version" \
  bash -c "[[ \$(sha256sum '$installed' | cut -d' ' -f1) == $want_sha && \$('$installed' --version) == 'fcorr $version' ]]"
check "pin of the tag: the log says the sha256 was checked, and the path and time" \
  bash -c "grep -q 'sha256 ok' '$log' && grep -Eq 'from the GitHub release asset, .* in [0-9.]+ s' '$log'"

# The same pin where the release has no asset for the runner (a mirror, a deleted asset): PyPI.
rm "$releases/$asset"
install tag-pypi
check "no release asset: installed from the PyPI wheel (exit $rc, source $(output source))" \
  test "$rc $(output source)" = "0 pypi"
installed=$(output bin)
check "no release asset: the wheel's binary is the built one (sha256) and is fcorr $version" \
  bash -c "[[ \$(sha256sum '$installed' | cut -d' ' -f1) == $want_sha && \$('$installed' --version) == 'fcorr $version' ]]"
grep 'fcorr install:' "$log" | sed 's/^/     /'

# Pinned to the commit before the release commit: no sum, so the cargo fallback (no cargo on
# this PATH, so it stops there with exit 3 and says why).
# The system's tools without cargo, even where a distribution's cargo sits in /usr/bin (Debian's
# cargo-web, which benches/musl/build.sh installs).
nocargo="$work/nocargo-bin"
mkdir -p "$nocargo"
for tool in /usr/bin/* /bin/*; do
  name=${tool##*/}
  [[ -x $tool && $name != cargo* && ! -e $nocargo/$name ]] && ln -s "$tool" "$nocargo/$name"
done
git -C "$action" checkout -q "$source_sha"
INSTALL_PATH=$nocargo install untagged
check "untagged commit: takes the source fallback, naming both faster paths" \
  bash -c "grep -q 'release: dist/checksums.txt has no checksum for $asset' '$log' && grep -q 'PyPI: dist/checksums.txt has no sum for $wheel' '$log'"
check "untagged commit: without cargo, exit 3 naming the cause" \
  bash -c "[[ $rc == 3 ]] && grep -q 'cargo is not on PATH' '$log'"

# A tampered archive under the released name.
git -C "$action" checkout -q "v$version"
cp "$bin" "$work/fcorr-tampered"
printf '\0' | dd of="$work/fcorr-tampered" bs=1 seek=4096 conv=notrunc status=none
"$root/scripts/release/archive.sh" "$version" "$target" "$work/fcorr-tampered" "$work/tampered" >/dev/null
cp "$work/tampered/$asset" "$releases/$asset"
install tampered
check "tampered asset: refused with exit 3 (got $rc)" test "$rc" = 3
check "tampered asset: 'checksum mismatch' names both sums" \
  grep -q "checksum mismatch for $asset: expected $(awk '{print $1}' "$assets/$asset.sha256")" "$log"
check "tampered asset: nothing installed" test -z "$(output bin)"
if [[ -n $pubkey ]]; then
  check "tampered asset: the release signature (what cargo binstall checks) rejects it" \
    bash -c "! minisign -V -q -P '$pubkey' -m '$work/tampered/$asset' -x '$assets/$asset.sig' 2>/dev/null"
fi

# A tampered wheel under the released name, with no release asset.
rm "$releases/$asset"
"$work/tools/bin/python" "$root/scripts/release/package.py" --formats wheel "$work/tampered" "$work/tampered-pypi" >/dev/null 2>&1
cp "$work/tampered-pypi/$wheel" "$pypi/$wheel"
install tampered-wheel
check "tampered wheel: refused with exit 3 (got $rc), 'checksum mismatch' names the table's sum" \
  bash -c "[[ $rc == 3 ]] && grep -q 'checksum mismatch for $wheel from PyPI: expected $(awk '{print $1}' "$packages/$wheel.sha256")' '$log'"
check "tampered wheel: nothing installed" test -z "$(output bin)"

# record-checksums refuses an archive that does not match its .sha256 line.
cp "$work/tampered/$asset" "$assets/$asset"
rc=0
"$root/scripts/release/record-checksums.sh" "$assets" "$work/table.txt" >"$work/record.log" 2>&1 || rc=$?
check "record-checksums: a corrupted asset is refused (exit $rc)" \
  bash -c "[[ $rc == 1 ]] && grep -q 'but its .sha256 says' '$work/record.log'"

# --- crates job: the crate, its binstall metadata, the stamp --------------------------------
crate_files=$(cd "$root" && cargo package --list --locked --allow-dirty 2>/dev/null)
check "crate: cargo package --list has src/, templates/, Cargo.lock and the licences, no tests/" \
  bash -c "grep -q '^src/main.rs\$' <<<\"\$0\" && grep -q '^templates/comment.md.j2\$' <<<\"\$0\" && grep -q '^Cargo.lock\$' <<<\"\$0\" && grep -q '^LICENSE-MIT\$' <<<\"\$0\" && ! grep -q '^tests/' <<<\"\$0\"" "$crate_files"
# binstall's templates filled in as cargo-binstall does for this host's musl target.
rendered=$(cd "$root" && cargo metadata --format-version 1 --no-deps --locked 2>/dev/null | python3 -c '
import json, sys
pkg = json.load(sys.stdin)["packages"][0]
meta = pkg["metadata"]["binstall"]
values = {"repo": "https://github.com/example/fcorr", "version": pkg["version"], "name": pkg["name"],
          "target": sys.argv[1], "bin": "fcorr", "binary-ext": ""}
def fill(t):
    for k, v in values.items():
        t = t.replace("{ " + k + " }", v)
    return t
print(fill(meta["pkg-url"]), fill(meta["bin-dir"]), meta["pkg-fmt"])' "$target")
check "crate: binstall's pkg-url and bin-dir name the release's archive and its binary" \
  test "$rendered" = "https://github.com/example/fcorr/releases/download/v$version/$asset fcorr-$version-$target/fcorr tgz"
cp "$root/Cargo.toml" "$work/Cargo.toml"
if [[ -n $pubkey ]]; then
  "$root/scripts/release/stamp-crate.sh" "$work/Cargo.toml" https://github.com/example/fcorr "$pubkey" 2>"$work/stamp.log"
  check "stamp-crate: repository and the signing key in the published manifest" \
    python3 -c '
import sys, tomllib
m = tomllib.load(open(sys.argv[1], "rb"))["package"]
assert m["repository"] == "https://github.com/example/fcorr", m.get("repository")
assert m["metadata"]["binstall"]["signing"] == {"algorithm": "minisign", "pubkey": sys.argv[2]}
' "$work/Cargo.toml" "$pubkey"
  check "stamp-crate: refuses to stamp twice, or a repository the manifest disagrees with" \
    bash -c "! '$root/scripts/release/stamp-crate.sh' '$work/Cargo.toml' https://github.com/example/fcorr '$pubkey' 2>/dev/null &&
      sed -i 's|^repository = .*|repository = \"https://github.com/other/fcorr\"|; /binstall.signing/,\$d' '$work/Cargo.toml' &&
      ! '$root/scripts/release/stamp-crate.sh' '$work/Cargo.toml' https://github.com/example/fcorr '$pubkey' 2>/dev/null"
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
