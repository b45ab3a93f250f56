"""Turns drive.mjs results (one JSON line per browser load, on stdin) into one Markdown row:
median (min-max) of each timing. Usage: table.py NAME SIZE_BYTES < results.jsonl"""
import json
import statistics
import sys

name, size = sys.argv[1], int(sys.argv[2])
runs = [json.loads(line) for line in sys.stdin if line.strip()]


def value(run, *path):
    v = run
    for key in path:
        v = (v or {}).get(key) if isinstance(v, dict) else None
    return v


def col(*path):
    xs = [x for x in (value(r, *path) for r in runs) if isinstance(x, (int, float))]
    if not xs:
        return "-"
    return "%.0f ms (%.0f-%.0f)" % (statistics.median(xs), min(xs), max(xs))


shown = value(runs[0], "value", "filter_failed", "shown") if runs else None
failed = sum(1 for r in runs if r.get("failed"))
if failed:
    name += " (%d of %d loads did not finish in 120 s)" % (failed, len(runs))
print("| %s | %.2f MB | %s | %s | %s | %s | %s | %s | %s |" % (
    name, size / 1e6,
    col("value", "first_contentful_paint_ms"), col("value", "ready_ms"), col("wall_ms"),
    col("value", "filter_failed", "answered_ms"), col("value", "filter_failed_again", "answered_ms"),
    col("value", "search", "answered_ms"),
    "-" if shown is None else shown))
