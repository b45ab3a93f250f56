#!/usr/bin/env python3
"""The script grader of the eval-graders benchmark, one file for both tools: passes when the
answer's words equal the case's `expected` var.

- fcorr (`type = "script"`): reads {"case", "answer", "vars"} as JSON on stdin and prints
  {"pass", "score", "reason"}.
- promptfoo (`type: python`, `value: file://grader.py`): calls get_assert(output, context).
"""
import json
import sys


def grade(answer, expected):
    ok = str(answer).split() == str(expected).split()
    return {"pass": ok, "score": 1.0 if ok else 0.0, "reason": "same command" if ok else f"expected {expected!r}"}


def get_assert(output, context):
    return grade(output, context["vars"]["expected"])


if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(grade(request["answer"], request["vars"]["expected"]), sys.stdout)
