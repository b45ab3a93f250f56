#!/usr/bin/env python3
"""Writes the eval benchmark's inputs to OUT (default benches/data/eval): the same N cases
(default 500) as an fcorr dataset (cases.toml + fcorr.toml) and as a promptfoo config
(promptfooconfig.yaml), both asking sut.sh through a command / `exec:` provider."""
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


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "benches/data/eval"
    n = int(os.environ.get("CASES", "500"))
    concurrency = int(os.environ.get("CONCURRENCY", "4"))
    sut = os.path.abspath(os.path.join(os.path.dirname(__file__), "sut.sh"))
    os.makedirs(out, exist_ok=True)
    cases = []
    for i in range(n):
        task, command = TASKS[i % len(TASKS)]
        cases.append((f"case-{i:04d}", f"task #{i}: {task}", command))

    # TOML and YAML strings: JSON string syntax is valid in both for these ASCII texts.
    q = json.dumps
    with open(os.path.join(out, "cases.toml"), "w") as f:
        f.write('version = "1.0"\n')
        for id_, prompt, command in cases:
            f.write(f"\n[[test_cases]]\nid = {q(id_)}\nprompt = {q(prompt)}\nexpected_command = {q(command)}\n")
    with open(os.path.join(out, "fcorr.toml"), "w") as f:
        f.write(
            "[[suite]]\n"
            'name = "bench"\n'
            'kind = "eval"\n'
            'dataset = "cases.toml"\n'
            'policy = "pass-rate"\n'
            f"concurrency = {concurrency}\n\n"
            "[suite.sut]\n"
            'type = "command"\n'
            f"command = [\"sh\", {q(sut)}, \"{{prompt}}\"]\n"
            'stdin = "none"\n'
            "retries = 0\n"
        )
    with open(os.path.join(out, "promptfooconfig.yaml"), "w") as f:
        f.write("description: fcorr eval benchmark\n")
        f.write("prompts:\n  - '{{prompt}}'\n")
        f.write(f"providers:\n  - id: {q('exec: sh ' + sut)}\n")
        f.write("tests:\n")
        for id_, prompt, command in cases:
            f.write(f"  - description: {q(id_)}\n    vars:\n      prompt: {q(prompt)}\n")
            f.write(f"    assert:\n      - type: equals\n        value: {q(command)}\n")
    print(f"wrote {n} cases to {out}")


if __name__ == "__main__":
    main()
