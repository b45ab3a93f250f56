#!/usr/bin/env python3
"""Bytes the `history` object adds to a results.json, per case per run kept.

Usage: measure.py RESULTS_JSON   Prints one Markdown table row:
| runs kept | cases | results.json bytes | history bytes | history.cases bytes | bytes/case/run (history) | bytes/case/run (cases only) | id-keyed alternative bytes/case/run |

The last column is the design not taken, measured on the same data: `cases` as an object from
case id to letters (`{"0123456789abcdef":"ppf",...}`, compact JSON).
"""
import json
import sys

path = sys.argv[1]
raw = open(path, "rb").read()
run = json.loads(raw)
h = run["history"]
runs = len(h["runs"])
cases = sum(len(s["cases"]) for s in run["suites"])
# Everything from the key to the end of the file: what results.json would lose without history
# (it is the last top-level field serde writes).
start = raw.rindex(b'"history":')
hist_bytes = len(raw) - start
cases_bytes = sum(len(k.encode()) + len(v.encode()) + 6 for k, v in h["cases"].items())
keyed = {}
for s in run["suites"]:
    tokens = h["cases"].get(s["id"], "").split(" ")
    for c, t in zip(s["cases"], tokens):
        keyed[c["id"]] = t
keyed_bytes = len(json.dumps(keyed, separators=(",", ":")).encode())
print(f"| {runs} | {cases:,} | {len(raw):,} | {hist_bytes:,} | {cases_bytes:,} | "
      f"{hist_bytes / cases / runs:.2f} | {cases_bytes / cases / runs:.2f} | {keyed_bytes / cases / runs:.2f} |")
