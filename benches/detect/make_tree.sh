#!/usr/bin/env bash
# Builds the detect benchmark's input: a small JavaScript project (real package.json, src/ with
# code and tests, .gitignore listing node_modules) whose node_modules holds 50,000 small files in
# 2,000 fake packages, some scoped, a few with nested node_modules, and some carrying markers of
# other ecosystems (Cargo.toml, setup.py, binding.gyp, tests) that detection must not be fooled by.
# Deterministic: the same tree every time.
#
#   benches/detect/make_tree.sh DIR     (DIR must not exist or be empty; default benches/data/detect-tree)
#   PACKAGES=2000 FILES=50000 benches/detect/make_tree.sh DIR
set -euo pipefail
DIR="${1:-$(cd "$(dirname "$0")/../.." && pwd)/benches/data/detect-tree}"
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
  echo "make_tree.sh: $DIR exists and is not empty; remove it first" >&2; exit 1
fi
mkdir -p "$DIR"
PACKAGES="${PACKAGES:-2000}" FILES="${FILES:-50000}" python3 - "$DIR" <<'PY'
import json, os, random, sys

root = sys.argv[1]
packages, files = int(os.environ["PACKAGES"]), int(os.environ["FILES"])
rng = random.Random(7)

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)

# The project itself.
write(f"{root}/package.json", json.dumps({
    "name": "detect-bench-app", "version": "1.0.0", "private": True,
    "scripts": {"test": "jest", "build": "node scripts/build.js"},
    "dependencies": {"left-pad": "^1.3.0"},
    "devDependencies": {"jest": "^29.7.0"},
}, indent=2) + "\n")
write(f"{root}/.gitignore", "node_modules/\ncoverage/\ndist/\n")
write(f"{root}/package-lock.json", json.dumps({"name": "detect-bench-app", "lockfileVersion": 3, "packages": {}}, indent=2) + "\n")
write(f"{root}/scripts/build.js", "console.log('build ok')\n")
for mod in ["sum", "format", "parse", "cache"]:
    write(f"{root}/src/{mod}.js", f"function {mod}(a, b) {{ return a + b }}\nmodule.exports = {{ {mod} }}\n")
    write(f"{root}/src/{mod}.test.js",
          f"const {{ {mod} }} = require('./{mod}')\ntest('{mod}', () => {{ expect({mod}(1, 2)).toBe(3) }})\n")
write(f"{root}/README.md", "# detect-bench-app\n")

# node_modules: `packages` packages sharing `files` files (package.json counts as one).
names = []
for i in range(packages):
    base = f"{rng.choice(['fast', 'tiny', 'safe', 'deep', 'micro', 'super'])}-{rng.choice(['glob', 'merge', 'path', 'json', 'util', 'color'])}-{i:04d}"
    names.append(f"@scope{i % 40}/{base}" if i % 10 == 0 else base)
per = [files // packages + (1 if i < files % packages else 0) for i in range(packages)]
made = 0
for i, (name, n) in enumerate(zip(names, per)):
    # every 50th package lives in a nested node_modules of the one before it
    pdir = f"{root}/node_modules/{names[i-1]}/node_modules/{name}" if i % 50 == 49 else f"{root}/node_modules/{name}"
    write(f"{pdir}/package.json", json.dumps({"name": name, "version": f"{i % 9}.{i % 7}.{i % 5}",
                                               "main": "index.js", "scripts": {"test": "mocha"}}) + "\n")
    extras = []
    if i % 100 == 3:  extras.append(("Cargo.toml", '[package]\nname = "native"\nversion = "0.1.0"\n'))
    if i % 100 == 5:  extras.append(("setup.py", "from setuptools import setup\nsetup(name='x')\n"))
    if i % 100 == 7:  extras.append(("binding.gyp", "{ 'targets': [] }\n"))
    if i % 20 == 1:   extras.append(("test/index.test.js", "require('assert').ok(true)\n"))
    if i % 30 == 2:   extras.append(("pyproject.toml", "[project]\nname = 'x'\n"))
    for k in range(1, n):
        if extras:
            rel, text = extras.pop()
        else:
            rel = rng.choice(["index.js", f"lib/{k}.js", f"lib/util/{k}.js", f"dist/{k}.cjs", f"types/{k}.d.ts", f"README{k}.md"])
            if rel == "index.js" and k > 1:
                rel = f"lib/m{k}.js"
            text = f"module.exports = function f{k}() {{ return {k} }}\n"
        write(f"{pdir}/{rel}", text)
    made += n
print(f"made {root}: {packages} packages, {made} files in node_modules")
PY
