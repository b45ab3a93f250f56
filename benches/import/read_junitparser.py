#!/usr/bin/env python3
"""Competitor reader: junitparser over lxml, the way EnricoMi/publish-unit-test-result-action
reads a report (python/publish/junit.py): lxml parse with huge_tree, JUnitXml.fromroot, then a
walk that builds one record per <testcase> with its most severe result, message, trace text,
captured output and time.

Usage: read_junitparser.py FILE   (run with benches/import/.venv/bin/python)
Prints: cases=N failures=F skipped=S (and on stderr: phases: parse=..s walk=..s)
"""
import sys
import time

from junitparser import JUnitXml, TestCase, TestSuite
from junitparser.junitparser import etree  # lxml.etree when lxml is installed

SEVERITY = ["error", "failure", "success", "skipped"]


def get_cases(suite):
    # Nested <testsuite>s at any depth, then this suite's own cases (as the action does).
    return [c for s in suite.iterchildren(TestSuite) for c in get_cases(s)] + list(suite.iterchildren(TestCase))


def main(path):
    t0 = time.perf_counter()
    tree = etree.parse(path, parser=etree.XMLParser(huge_tree=True))
    xml = JUnitXml.fromroot(tree.getroot())
    t1 = time.perf_counter()
    suites = xml if xml._tag == "testsuites" else [xml]
    cases = []
    for suite in suites:
        for case in get_cases(suite):
            results = [r for r in case.result if r is not None]
            by_state = {}
            for r in results:
                by_state.setdefault(r._tag, []).append(r)
            state, chosen = "success", []
            for s in SEVERITY:
                if s in by_state:
                    state, chosen = s, by_state[s]
                    break
            messages = [r.message for r in chosen if r.message]
            texts = [r.text for r in chosen if r.text is not None]
            cases.append({
                "file": case._elem.get("file"),
                "line": case._elem.get("line"),
                "classname": case.classname,
                "name": case.name,
                "result": state,
                "message": "\n".join(messages) or None,
                "content": "\n".join(texts) or None,
                "stdout": case.system_out,
                "stderr": case.system_err,
                "time": case.time,
            })
    failures = sum(1 for c in cases if c["result"] in ("failure", "error"))
    skipped = sum(1 for c in cases if c["result"] == "skipped")
    t2 = time.perf_counter()
    print(f"phases: parse={t1 - t0:.2f}s walk={t2 - t1:.2f}s", file=sys.stderr)
    print(f"cases={len(cases)} failures={failures} skipped={skipped}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: read_junitparser.py FILE")
    main(sys.argv[1])
