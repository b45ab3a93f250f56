#!/usr/bin/env python3
"""Script grader: the answer's `capital` equals the case's `capital` variable, ignoring case and
accents. fcorr sends {"case", "answer", "vars"} as JSON on stdin and reads
{"pass", "score", "reason"} from stdout."""
import json
import sys
import unicodedata


def fold(text):
    return "".join(c for c in unicodedata.normalize("NFKD", str(text)) if not unicodedata.combining(c)).casefold()


request = json.load(sys.stdin)
answer = request["answer"]
want = request["vars"]["capital"]
got = answer.get("capital") if isinstance(answer, dict) else None
if got is None:
    result = {"pass": False, "score": 0.0, "reason": "the answer has no `capital` field"}
elif fold(got) == fold(want):
    result = {"pass": True, "score": 1.0, "reason": f"{got} is {want}"}
else:
    result = {"pass": False, "score": 0.0, "reason": f"{got} is not {want}"}
json.dump(result, sys.stdout)
