#!/usr/bin/env python3
"""A deterministic stand-in for the grader model behind `llm-rubric`, so the example runs
offline. It reads fcorr's grading prompt (rubric + answer) on stdin and answers as a grader model
is asked to: {"pass": bool, "score": 0..1, "reason": "..."}. Its one rule: an answer "names the
capital only" when it is a JSON object whose only keys are `country` and `capital`."""
import json
import re
import sys

prompt = sys.stdin.read()
# The answer is the first JSON object in the prompt that has a "capital" key, if any.
answer = None
for match in re.finditer(r"\{[^{}]*\}", prompt):
    try:
        candidate = json.loads(match.group(0))
    except ValueError:
        continue
    if isinstance(candidate, dict) and "capital" in candidate:
        answer = candidate
        break
if answer is None:
    verdict = {"pass": False, "score": 0.0, "reason": "the answer is not a JSON object naming a capital"}
elif set(answer) == {"country", "capital"}:
    verdict = {"pass": True, "score": 1.0, "reason": f"names {answer['capital']} and nothing else"}
else:
    extra = sorted(set(answer) - {"country", "capital"})
    verdict = {"pass": False, "score": 0.3, "reason": f"adds commentary: {', '.join(extra)}"}
print(json.dumps(verdict))
