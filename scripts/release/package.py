#!/usr/bin/env python3
"""Builds fcorr's PyPI wheels and npm packages from the release archives, byte for byte.

    python3 scripts/release/package.py ASSETS_DIR OUT_DIR [--repository-url URL]
                                       [--npm-scope @fcorr] [--require-all] [--formats wheel,npm]
    python3 scripts/release/package.py --verify ASSETS_DIR OUT_DIR [--require-all]
    python3 scripts/release/package.py --pep440 VERSION

ASSETS_DIR holds the release archives fcorr-<version>-<target>.tar.gz with their "<sha256>
<file>" .sha256 lines, as release.yml's build jobs write them. Nothing is compiled here: each
archive is checked against its .sha256 line, and the fcorr binary inside it is copied, unchanged,
into
  - a wheel per target, fcorr-<pep440 version>-py3-none-<platform tag>.whl, with the binary as
    the script `fcorr` (pip, pipx and uv put it on PATH as is), packed by pypa/wheel's
    `wheel pack`;
  - a fallback wheel, fcorr-<version>-py3-none-any.whl, which installers pick only where no
    binary wheel fits: its `fcorr` names the platforms that have a binary and exits 3;
  - an npm package per target, <scope>/<platform>-<arch> (`os` and `cpu` set, so npm installs
    only the matching one), holding bin/fcorr, and the package `fcorr` that lists them all as
    optional dependencies and runs the installed one (packaging/npm/fcorr.js), packed by
    `npm pack`.
Every output is reopened and its binary compared with the archive's (sha256), and gets a
"<sha256>  <file>" .sha256 line beside it, for scripts/release/record-checksums.sh.
Targets, wheel tags and npm platforms come from packaging/targets.tsv.

--formats wheel|npm|wheel,npm (default both): what to build.
--require-all: every target of targets.tsv must have an archive (the release); without it the
targets present are packaged (local tests), and the fallback wheel and the `fcorr` npm package
still list every target.
--pep440 VERSION: print the PyPI spelling of a release version (1.2.3-rc.1 -> 1.2.3rc1), or
exit 2 when it has none.
--verify: build nothing; check that every wheel and npm package in OUT_DIR holds its target's
binary from the archives in ASSETS_DIR, byte for byte, and that every .sha256 line in OUT_DIR
holds (the publishing jobs run it just before they upload).

Needs: python3 >= 3.9 with `wheel` (packaging/requirements.txt), npm. Exit: 0 built; 1 an
archive or an output is wrong; 2 usage.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ROOT / "packaging" / "targets.tsv"
SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")
SUMMARY = "Functional-correctness harness for CI: detect, build, test and score projects; one sticky PR comment"
LICENSE = "MIT OR Apache-2.0"
LICENSE_FILES = ("LICENSE-MIT", "LICENSE-APACHE")
# platform.machine() names of each Node.js CPU name (the npm column of targets.tsv).
MACHINES = {"x64": ["x86_64", "amd64"], "arm64": ["aarch64", "arm64"]}
# Node's process.platform -> Python's sys.platform, and how the messages name it.
SYSTEMS = {"linux": ("linux", "Linux"), "darwin": ("darwin", "macOS")}


class Failure(Exception):
    """A check failed: the message says which file and why."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pep440(version: str) -> str:
    """The PyPI version of a release version: 1.2.3 stays, 1.2.3-rc.1 becomes 1.2.3rc1."""
    m = SEMVER.match(version)
    if not m:
        raise Failure(f"version {version!r} is not X.Y.Z or X.Y.Z-pre")
    base = ".".join(m.group(i) for i in (1, 2, 3))
    pre = m.group(4)
    if pre is None:
        return base
    pm = re.fullmatch(r"(alpha|a|beta|b|rc)\.?(\d+)", pre)
    if not pm:
        raise Failure(
            f"pre-release {pre!r} of {version} has no PyPI spelling: use -alpha.N, -beta.N or -rc.N"
        )
    return base + {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}[pm.group(1)] + pm.group(2)


def read_targets() -> list[dict[str, str]]:
    rows = []
    for n, line in enumerate(TARGETS.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 4:
            raise Failure(f"{TARGETS}:{n}: expected 4 tab-separated columns, got {len(cols)}")
        runner, target, wheel, npm = cols
        system, _, cpu = npm.partition("-")
        if system not in SYSTEMS or cpu not in MACHINES:
            raise Failure(f"{TARGETS}:{n}: npm platform {npm!r} is not one of linux|darwin-x64|arm64")
        rows.append({"runner": runner, "target": target, "wheel": wheel, "npm": npm})
    if not rows:
        raise Failure(f"{TARGETS} lists no target")
    return rows


LABELS = {"x64": "x86_64", "arm64": "aarch64"}
MAC_LABELS = {"x64": "Intel", "arm64": "Apple silicon"}


def label(npm: str) -> str:
    """How messages name a platform: "Linux x86_64 (linux-x64)", "macOS Apple silicon (darwin-arm64)"."""
    system, _, cpu = npm.partition("-")
    cpu_name = (MAC_LABELS if system == "darwin" else LABELS).get(cpu, cpu)
    return f"{SYSTEMS[system][1]} {cpu_name} ({npm})"


def read_archives(assets: Path, targets: list[dict[str, str]], require_all: bool):
    """(version, {target: binary bytes}) from the release archives, each checked against its .sha256."""
    known = {t["target"] for t in targets}
    found: dict[str, bytes] = {}
    versions = set()
    for archive in sorted(assets.glob("fcorr-*.tar.gz")):
        name = archive.name
        target = next((t for t in known if name.endswith(f"-{t}.tar.gz")), None)
        if target is None:
            raise Failure(f"{name}: not a release archive of a target in {TARGETS.name}")
        version = name[len("fcorr-") : -len(f"-{target}.tar.gz")]
        if not SEMVER.match(version):
            raise Failure(f"{name}: {version!r} is not a release version")
        versions.add(version)
        sidecar = archive.with_name(name + ".sha256")
        if not sidecar.is_file():
            raise Failure(f"{name} has no {sidecar.name} beside it")
        recorded = {
            parts[1].lstrip("*"): parts[0].lower()
            for parts in (line.split() for line in sidecar.read_text(encoding="utf-8").splitlines())
            if len(parts) >= 2
        }.get(name)
        data = archive.read_bytes()
        if recorded != sha256(data):
            raise Failure(f"{name}: sha256 is {sha256(data)} but {sidecar.name} says {recorded}")
        member = f"fcorr-{version}-{target}/fcorr"
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            try:
                info = tar.getmember(member)
            except KeyError:
                raise Failure(f"{name} has no {member}") from None
            if not info.isfile():
                raise Failure(f"{name}: {member} is not a regular file")
            extracted = tar.extractfile(info)
            assert extracted is not None  # a regular member always has a file object
            found[target] = extracted.read()
    if not found:
        raise Failure(f"{assets} holds no fcorr-<version>-<target>.tar.gz release archive")
    if len(versions) != 1:
        raise Failure(f"the archives are of several versions: {', '.join(sorted(versions))}")
    missing = [t["target"] for t in targets if t["target"] not in found]
    if require_all and missing:
        raise Failure(f"no release archive for {', '.join(missing)} (--require-all)")
    return versions.pop(), found


def write_sidecar(path: Path) -> str:
    digest = sha256(path.read_bytes())
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    return digest


def metadata(version: str, repository: str | None) -> str:
    lines = [
        "Metadata-Version: 2.4",
        "Name: fcorr",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        f"License-Expression: {LICENSE}",
        *(f"License-File: {f}" for f in LICENSE_FILES),
        "Keywords: ci,testing,junit,ctrf,github-actions,f-corr",
        "Classifier: Environment :: Console",
        "Classifier: Topic :: Software Development :: Testing",
        "Classifier: Programming Language :: Rust",
    ]
    if repository:
        lines += [f"Project-URL: Source, {repository}", f"Project-URL: Releases, {repository}/releases"]
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / "packaging" / "package-readme.md").read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def pack_wheel(stage: Path, out: Path, expected: str) -> Path:
    """`wheel pack` of a staged tree; the file name must be the one targets.tsv promises."""
    run([sys.executable, "-m", "wheel", "pack", str(stage), "--dest-dir", str(out)])
    wheel = out / expected
    if not wheel.is_file():
        made = sorted(p.name for p in out.glob("*.whl"))
        raise Failure(f"wheel pack did not write {expected} (the directory has {made})")
    return wheel


def stage_wheel(tmp: Path, pyver: str, repository: str | None, tags: list[str]) -> Path:
    stage = tmp / f"wheel-{len(list(tmp.iterdir()))}"
    info = stage / f"fcorr-{pyver}.dist-info"
    (info / "licenses").mkdir(parents=True)
    (info / "METADATA").write_text(metadata(pyver, repository), encoding="utf-8")
    wheel = ["Wheel-Version: 1.0", "Generator: fcorr scripts/release/package.py (wheel pack)"]
    wheel += ["Root-Is-Purelib: false" if tags[0].split("-")[2] != "any" else "Root-Is-Purelib: true"]
    wheel += [f"Tag: {t}" for t in tags]
    (info / "WHEEL").write_text("\n".join(wheel) + "\n", encoding="utf-8")
    for f in LICENSE_FILES:
        shutil.copyfile(ROOT / f, info / "licenses" / f)
    return stage


def wheel_binary(wheel: Path, pyver: str) -> bytes:
    """The fcorr binary inside a wheel; fails unless it is an executable script entry."""
    member = f"fcorr-{pyver}.data/scripts/fcorr"
    with zipfile.ZipFile(wheel) as z:
        try:
            info = z.getinfo(member)
        except KeyError:
            raise Failure(f"{wheel.name} has no {member}") from None
        if not (info.external_attr >> 16) & stat.S_IXUSR:
            raise Failure(f"{wheel.name}: {member} is not executable")
        return z.read(member)


def npm_binary(tarball: Path) -> bytes:
    """The fcorr binary inside a per-platform npm tarball; fails unless it is executable."""
    with tarfile.open(tarball, "r:gz") as tar:
        try:
            info = tar.getmember("package/bin/fcorr")
        except KeyError:
            raise Failure(f"{tarball.name} has no package/bin/fcorr") from None
        extracted = tar.extractfile(info) if info.isfile() else None
        if extracted is None:
            raise Failure(f"{tarball.name}: bin/fcorr is not a regular file")
        if not info.mode & stat.S_IXUSR:
            raise Failure(f"{tarball.name}: bin/fcorr is not executable")
        return extracted.read()


def npm_tarball_name(scope: str, npm: str, version: str) -> str:
    # npm pack names a scoped package's tarball scope-name-version.tgz, without the "@".
    return f"{scope.lstrip('@')}-{npm}-{version}.tgz"


def binary_wheel(tmp, out, pyver, repository, row, binary: bytes) -> Path:
    platforms = row["wheel"].split(".")
    stage = stage_wheel(tmp, pyver, repository, [f"py3-none-{p}" for p in platforms])
    script = stage / f"fcorr-{pyver}.data" / "scripts" / "fcorr"
    script.parent.mkdir(parents=True)
    script.write_bytes(binary)
    script.chmod(0o755)
    wheel = pack_wheel(stage, out, f"fcorr-{pyver}-py3-none-{row['wheel']}.whl")
    if sha256(wheel_binary(wheel, pyver)) != sha256(binary):
        raise Failure(f"{wheel.name}: its fcorr is not the release binary")
    return wheel


def fallback_wheel(tmp, out, version, pyver, repository, targets) -> Path:
    stage = stage_wheel(tmp, pyver, repository, ["py3-none-any"])
    platforms = [
        (label(t["npm"]), SYSTEMS[t["npm"].split("-")[0]][0], MACHINES[t["npm"].split("-")[1]])
        for t in targets
    ]
    source = (ROOT / "packaging" / "pypi" / "_fcorr_platforms.py").read_text(encoding="utf-8")
    source = source.replace('"@VERSION@"', repr(version)).replace('"@PLATFORMS@"', repr(platforms))
    (stage / "_fcorr_platforms.py").write_text(source, encoding="utf-8")
    (stage / f"fcorr-{pyver}.dist-info" / "entry_points.txt").write_text(
        "[console_scripts]\nfcorr = _fcorr_platforms:main\n", encoding="utf-8"
    )
    return pack_wheel(stage, out, f"fcorr-{pyver}-py3-none-any.whl")


def npm_pack(directory: Path, out: Path) -> Path:
    result = run(["npm", "pack", "--json", "--pack-destination", str(out)], cwd=directory)
    try:
        name = json.loads(result)[0]["filename"]
    except (ValueError, LookupError, TypeError):
        raise Failure(f"npm pack in {directory} printed no file name: {result[:300]}") from None
    # npm reports a scoped package's tarball as @scope/name-version.tgz and writes it as
    # scope-name-version.tgz.
    return out / name.lstrip("@").replace("/", "-")


def npm_common(version: str, repository: str | None) -> dict:
    common = {
        "version": version,
        "license": LICENSE,
        "homepage": f"{repository}#readme" if repository else None,
        "repository": {"type": "git", "url": f"git+{repository}.git"} if repository else None,
    }
    return {k: v for k, v in common.items() if v is not None}


def npm_stage(tmp: Path, manifest: dict) -> Path:
    directory = tmp / f"npm-{len(list(tmp.iterdir()))}"
    (directory / "bin").mkdir(parents=True)
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    shutil.copyfile(ROOT / "packaging" / "package-readme.md", directory / "README.md")
    for f in LICENSE_FILES:
        shutil.copyfile(ROOT / f, directory / f)
    return directory


def platform_package(tmp, out, version, repository, scope, row, binary: bytes) -> Path:
    system, _, cpu = row["npm"].partition("-")
    manifest = {
        "name": f"{scope}/{row['npm']}",
        "description": f"The fcorr binary for {label(row['npm'])}; install the package fcorr, which picks it",
        **npm_common(version, repository),
        "os": [system],
        "cpu": [cpu],
        "files": ["bin/fcorr"],
        # Yarn PnP: the binary must be a real file on disk to be executed.
        "preferUnplugged": True,
    }
    directory = npm_stage(tmp, manifest)
    (directory / "bin" / "fcorr").write_bytes(binary)
    (directory / "bin" / "fcorr").chmod(0o755)
    tarball = npm_pack(directory, out)
    if tarball.name != npm_tarball_name(scope, row["npm"], version):
        raise Failure(f"npm pack wrote {tarball.name}, not {npm_tarball_name(scope, row['npm'], version)}")
    if sha256(npm_binary(tarball)) != sha256(binary):
        raise Failure(f"{tarball.name}: bin/fcorr is not the release binary")
    return tarball


def main_package(tmp, out, version, repository, scope, targets) -> Path:
    manifest = {
        "name": "fcorr",
        "description": SUMMARY,
        **npm_common(version, repository),
        "keywords": ["ci", "testing", "junit", "ctrf", "github-actions", "f-corr"],
        "bin": {"fcorr": "bin/fcorr.js"},
        "files": ["bin/fcorr.js"],
        "engines": {"node": ">=16"},
        "optionalDependencies": {f"{scope}/{t['npm']}": version for t in targets},
    }
    directory = npm_stage(tmp, manifest)
    shutil.copyfile(ROOT / "packaging" / "npm" / "fcorr.js", directory / "bin" / "fcorr.js")
    (directory / "bin" / "fcorr.js").chmod(0o755)
    return npm_pack(directory, out)


def run(argv: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise Failure(f"could not run {argv[0]}: {e}") from None
    if done.returncode != 0:
        raise Failure(f"{' '.join(argv[:3])} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-800:]}")
    return done.stdout


def build(args) -> int:
    targets = read_targets()
    version, binaries = read_archives(Path(args.assets), targets, args.require_all)
    pyver = pep440(version)
    if not re.fullmatch(r"@[a-z0-9][a-z0-9._-]*", args.npm_scope):
        raise Failure(f"--npm-scope {args.npm_scope!r} is not an npm scope like @fcorr")
    formats = set(args.formats.split(","))
    if not formats or not formats <= {"wheel", "npm"}:
        raise Failure(f"--formats {args.formats!r}: expected wheel, npm or wheel,npm")
    repository = args.repository_url.rstrip("/") if args.repository_url else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Reproducible files: wheel pack stamps zip entries with SOURCE_DATE_EPOCH when it is set.
    os.environ.setdefault("SOURCE_DATE_EPOCH", "315532800")
    made: list[tuple[Path, str]] = []
    with tempfile.TemporaryDirectory(prefix="fcorr-package-") as tmp_name:
        tmp = Path(tmp_name)
        for row in targets:
            binary = binaries.get(row["target"])
            if binary is None:
                print(f"package: no archive for {row['target']}: skipped", file=sys.stderr)
                continue
            if "wheel" in formats:
                made.append((binary_wheel(tmp, out, pyver, repository, row, binary), sha256(binary)))
            if "npm" in formats:
                made.append((platform_package(tmp, out, version, repository, args.npm_scope, row, binary), sha256(binary)))
        if "wheel" in formats:
            made.append((fallback_wheel(tmp, out, version, pyver, repository, targets), "-"))
        if "npm" in formats:
            made.append((main_package(tmp, out, version, repository, args.npm_scope, targets), "-"))
    for path, binary_sum in made:
        print(f"{write_sidecar(path)}  {path.name}  (binary {binary_sum})")
    return 0


def verify(args) -> int:
    """Every package's binary is its target's release binary, and every .sha256 line holds."""
    targets = read_targets()
    version, binaries = read_archives(Path(args.assets), targets, args.require_all)
    pyver = pep440(version)
    packages = Path(args.out)
    for row in targets:
        binary = binaries.get(row["target"])
        if binary is None:
            continue
        wheel = packages / f"fcorr-{pyver}-py3-none-{row['wheel']}.whl"
        tarball = packages / npm_tarball_name(args.npm_scope, row["npm"], version)
        for path, read in ((wheel, lambda p: wheel_binary(p, pyver)), (tarball, npm_binary)):
            if not path.is_file():
                raise Failure(f"{packages} has no {path.name}")
            if sha256(read(path)) != sha256(binary):
                raise Failure(f"{path.name}: its fcorr is not the binary of fcorr-{version}-{row['target']}.tar.gz")
            print(f"same bytes: {row['target']}: {path.name}  (binary {sha256(binary)})")
    for sidecar in sorted(packages.glob("*.sha256")):
        for line in sidecar.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            if not (packages / name).is_file() or sha256((packages / name).read_bytes()) != digest:
                raise Failure(f"{sidecar.name}: {name} does not have sha256 {digest}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assets", nargs="?", help="directory of fcorr-<version>-<target>.tar.gz + .sha256")
    parser.add_argument("out", nargs="?", help="directory for the wheels and npm tarballs")
    parser.add_argument("--repository-url", help="https://github.com/<owner>/<repo>, for the package metadata")
    parser.add_argument("--npm-scope", default="@fcorr", help="scope of the per-platform npm packages")
    parser.add_argument("--require-all", action="store_true", help="every target must have an archive")
    parser.add_argument("--formats", default="wheel,npm", help="what to build: wheel, npm or both (default)")
    parser.add_argument("--pep440", metavar="VERSION", help="print the PyPI spelling of VERSION and exit")
    parser.add_argument("--verify", action="store_true", help="check the packages in OUT against the archives")
    args = parser.parse_args()
    try:
        if args.pep440 is not None:
            try:
                print(pep440(args.pep440))
            except Failure as e:
                print(f"package: {e}", file=sys.stderr)
                return 2
            return 0
        if not args.assets or not args.out:
            parser.print_usage(sys.stderr)
            return 2
        return verify(args) if args.verify else build(args)
    except Failure as e:
        print(f"package: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
