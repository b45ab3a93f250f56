"""The `fcorr` command of fcorr's fallback wheel (py3-none-any) on PyPI.

pip and uv install it only where none of the wheels that carry the fcorr binary fits the
platform; it explains which platforms have a binary and how else to get fcorr, and exits 3
(fcorr's "infrastructure error"), instead of leaving an `fcorr` that cannot run.
scripts/release/package.py fills in VERSION and PLATFORMS from packaging/targets.tsv.
"""

import platform
import sys

VERSION = "@VERSION@"
# (label, sys.platform, the platform.machine() names of that CPU)
PLATFORMS = "@PLATFORMS@"


def _here():
    machine = platform.machine().lower()
    for label, plat, machines in PLATFORMS:
        if sys.platform == plat and machine in machines:
            return label
    return None


def main():
    listed = ", ".join(label for label, _, _ in PLATFORMS)
    here = _here()
    if here is not None:
        # A binary wheel exists for this platform, yet the installer chose this one: an
        # installer too old for the wheel's tags (manylinux_2_17, musllinux, macosx_11_0).
        message = (
            f"fcorr: this is fcorr {VERSION}'s fallback package, but a wheel with the fcorr "
            f"binary exists for this platform ({here}). The installer did not pick it, "
            "probably because it is too old to recognise the wheel's platform tags. "
            "Upgrade it and reinstall: python -m pip install --upgrade pip && "
            f"python -m pip install --force-reinstall fcorr=={VERSION}"
        )
    else:
        message = (
            f"fcorr: fcorr {VERSION} has no binary for this platform "
            f"({sys.platform}, {platform.machine() or 'unknown CPU'}). "
            f"Binaries exist for: {listed}. "
            "Elsewhere, build it from source with `cargo install fcorr` "
            "(Linux and macOS; Windows has no process backend yet, see the README's Platforms)."
        )
    print(message, file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
