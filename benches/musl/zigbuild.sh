#!/usr/bin/env bash
# Builds fcorr for a musl target the way release.yml does (cargo-zigbuild 0.24.0 + ziglang 0.17.1
# from PyPI: zig is the C compiler and linker, with its own musl and compiler-rt), so the released
# Linux binary itself can be measured and checked here (docs/benchmarks.md §17).
#
#   benches/musl/zigbuild.sh                              # x86_64 -> /tmp/fcorr-zig-x86_64
#   TARGET=aarch64-unknown-linux-musl benches/musl/zigbuild.sh   # cross-built, run with qemu-user
#
# The one difference from the release: rustup's musl targets cannot be downloaded here, so the
# standard library is built from Debian's rust-web-src with -Zbuild-std (as benches/musl/build.sh
# does). The crates, the C of mimalloc and ring, zig and the link are the release's. It builds in
# its own worktree-independent target directory (~13 min on 2 cores from scratch).
set -euo pipefail
cd "$(dirname "$0")/../.."

TARGET="${TARGET:-x86_64-unknown-linux-musl}"
OUT="${OUT:-/tmp/fcorr-zig-${TARGET%%-*}}"
VENV="${VENV:-/tmp/fcorr-zigbuild-venv}"
# Not the shared target/: -Zbuild-std with zig's flags would rebuild over benches/musl/build.sh's.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/zigbuild}"

need=()
for pkg in rustc-web cargo-web rust-web-src; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]} (Debian)..." >&2
  apt-get update -q >&2 && apt-get install -y -q "${need[@]}" >&2
fi
if [ ! -x "$VENV/bin/cargo-zigbuild" ]; then
  echo "installing cargo-zigbuild + ziglang (PyPI, the release's versions) into $VENV..." >&2
  python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "cargo-zigbuild==0.24.0" "ziglang==0.17.1" >&2
fi

# zig brings the C runtime and libunwind: rustc must not add its own (it has none for musl here).
PATH="$VENV/bin:/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo \
RUSTFLAGS="-C link-self-contained=no" \
  cargo-zigbuild zigbuild --release --locked --target "$TARGET" --bin fcorr -Zbuild-std
cp "$CARGO_TARGET_DIR/$TARGET/release/fcorr" "$OUT"
echo "built $OUT: $(file -b "$OUT" | cut -d, -f1-2,5-6)"
