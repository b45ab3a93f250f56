#!/usr/bin/env python3
"""Writes the eval-graders benchmark's inputs to OUT (default benches/data/eval-graders): N cases
(CASES, default 500) x 2 SUTs (small.sh, large.sh) x 2 prompt templates with a script grader
(grader.py), as an fcorr suite (fcorr.toml + cases.toml, #23's syntax), as a promptfoo config
(promptfooconfig.yaml: `exec:` providers, a `python` assertion), and as calls.tsv, the same
SUT and grader calls for a bash loop (the anchor for fcorr's own overhead)."""
import json
import os
import sys

TASKS = [
    ("list files", "ls -la"),
    ("current directory", "pwd"),
    ("count lines", "wc -l notes.txt"),
    ("make directories", "mkdir -p a/b/c"),
    ("find logs", "find . -name '*.log'"),
]
# The same two templates in minijinja (fcorr) and nunjucks (promptfoo): identical text.
PROMPTS = [
    ("terse", "Answer with one shell command: {{ task }}"),
    ("ticket", "Ticket {{ id }}. {{ task }}. Reply with the command only."),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "benches/data/eval-graders"
    n = int(os.environ.get("CASES", "500"))
    concurrency = int(os.environ.get("CONCURRENCY", "4"))
    here = os.path.abspath(os.path.dirname(__file__))
    suts = [("small", os.path.join(here, "small.sh")), ("large", os.path.join(here, "large.sh"))]
    grader = os.path.join(here, "grader.py")
    # The interpreter itself, not a version manager's shim (pyenv's adds ~100 ms per start);
    # run.sh hands the same one to promptfoo (PROMPTFOO_PYTHON) and to the bash loop.
    python = sys.executable
    os.makedirs(out, exist_ok=True)
    cases = []
    for i in range(n):
        task, command = TASKS[i % len(TASKS)]
        cases.append({"id": f"case-{i:04d}", "task": task, "expected": command})

    q = json.dumps  # JSON strings are valid TOML and YAML strings for these ASCII texts
    with open(os.path.join(out, "cases.toml"), "w") as f:
        f.write('version = "1.0"\n')
        for c in cases:
            f.write(
                f"\n[[test_cases]]\nid = {q(c['id'])}\n"
                f"vars = {{ task = {q(c['task'])}, expected = {q(c['expected'])} }}\n"
                f"assert = [{{ type = \"script\", command = {q(python + ' ' + grader)} }}]\n"
            )
    with open(os.path.join(out, "fcorr.toml"), "w") as f:
        f.write('[[suite]]\nname = "bench"\nkind = "eval"\ndataset = "cases.toml"\npolicy = "pass-rate"\n')
        f.write(f"concurrency = {concurrency}\nprompts = [\n")
        for name, template in PROMPTS:
            f.write(f"  {{ name = {q(name)}, template = {q(template)} }},\n")
        f.write("]\n")
        for name, path in suts:
            f.write(
                f'\n[[suite.sut]]\nname = "{name}"\ntype = "command"\n'
                f'command = ["sh", {q(path)}, "{{prompt}}"]\nstdin = "none"\nretries = 0\n'
            )
    with open(os.path.join(out, "promptfooconfig.yaml"), "w") as f:
        f.write("description: fcorr eval-graders benchmark\nprompts:\n")
        for name, template in PROMPTS:
            f.write(f"  - label: {name}\n    raw: {q(template)}\n")
        f.write("providers:\n")
        for name, path in suts:
            f.write(f"  - id: {q('exec: sh ' + path)}\n    label: {name}\n")
        f.write(f"defaultTest:\n  assert:\n    - type: python\n      value: {q('file://' + grader)}\n")
        f.write("tests:\n")
        for c in cases:
            f.write(f"  - vars: {{id: {q(c['id'])}, task: {q(c['task'])}, expected: {q(c['expected'])}}}\n")
    # calls.tsv: sut path, rendered prompt, grader stdin before the answer, after it.
    with open(os.path.join(out, "calls.tsv"), "w") as f:
        for c in cases:
            for _, template in PROMPTS:
                prompt = template.replace("{{ task }}", c["task"]).replace("{{ id }}", c["id"])
                vars_ = {"id": c["id"], "task": c["task"], "expected": c["expected"], "prompt": prompt}
                before = '{"case": {"id": %s}, "vars": %s, "answer": "' % (q(c["id"]), q(vars_))
                for _, path in suts:
                    f.write(f"{path}\t{prompt}\t{before}\t\"}}\n")
    with open(os.path.join(out, "python"), "w") as f:
        f.write(python + "\n")
    print(f"wrote {n} cases x {len(suts)} SUTs x {len(PROMPTS)} prompts to {out}")


if __name__ == "__main__":
    main()
