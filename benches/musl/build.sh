#!/usr/bin/env bash
# Builds fcorr for x86_64-unknown-linux-musl on a Debian machine without rustup's musl target, so
# the allocator of the released Linux binary (a static musl build: release.yml, cargo-zigbuild)
# can be measured beside the glibc build every other benchmark uses (docs/benchmarks.md §17).
#
#   benches/musl/build.sh            # -> target/x86_64-unknown-linux-musl/release/fcorr
#   FCORR_BIN=target/release/fcorr FCORR_OLD=target/x86_64-unknown-linux-musl/release/fcorr \
#     benches/import/alternate.sh    # glibc vs musl, alternated
#
# How: Debian's rustc-web (a current rustc) with its standard library's source (rust-web-src)
# builds std for musl itself (-Zbuild-std, allowed on a stable compiler by RUSTC_BOOTSTRAP=1),
# and musl-gcc links against Debian's musl (musl-tools) and LLVM's libunwind (libunwind-14-dev).
# That libunwind was built against glibc and calls `__fprintf_chk`; mimalloc's C calls libgcc's
# `__popcountdi2`, which a link with -nodefaultlibs leaves out: a small shim gives both. The
# release's zig toolchain needs none of this; the allocator code and its options are the same.
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
for pkg in rustc-web cargo-web rust-web-src musl-tools libunwind-14-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]} (Debian)..." >&2
  apt-get update -q >&2 && apt-get install -y -q "${need[@]}" >&2
fi

# A fixed place: RUSTFLAGS name it, and other flags would rebuild everything each time.
shim="$PWD/target/musl-shim"; mkdir -p "$shim"
cat > "$shim/shim.c" <<'EOF'
#include <stdarg.h>
#include <stdio.h>
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...) {
  (void)flag; va_list ap; va_start(ap, fmt); int r = vfprintf(f, fmt, ap); va_end(ap); return r;
}
int __popcountdi2(long a) {
  unsigned long x = (unsigned long)a; int n = 0;
  while (x) { x &= x - 1; n++; }
  return n;
}
EOF
musl-gcc -O2 -c "$shim/shim.c" -o "$shim/shim.o"
ar rcs "$shim/libmuslshim.a" "$shim/shim.o"

RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc \
CC_x86_64_unknown_linux_musl=musl-gcc CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER=musl-gcc \
RUSTFLAGS="-C link-self-contained=no -L native=/usr/lib/llvm-14/lib -L native=$shim -C link-arg=-lmuslshim" \
  /usr/bin/cargo build --release --locked -Zbuild-std --target x86_64-unknown-linux-musl
bin=target/x86_64-unknown-linux-musl/release/fcorr
echo "built $bin: $(ldd "$bin" 2>&1 | head -n 1 | xargs)"
