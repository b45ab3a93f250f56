#!/usr/bin/env python3
"""JUnit report of N cases for run R of the history benchmark.

Same case names in every run, outcomes that change from run to run (deterministic in the case
index and the run number): about 2% fail, 1% skip, 0.5% pass on a retry (<flakyFailure>), the
rest pass. Names are the shape of real ones (`tests/pkg_12/test_mod_3.py::test_parse_user_417`),
so case ids and the rest of results.json are of a realistic size.

Usage: gen.py OUT --cases N --run R     (standard library only)
"""
import argparse

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--run", type=int, default=1)
    a = ap.parse_args()
    with open(a.out, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        per_suite = 500
        for s in range(0, a.cases, per_suite):
            f.write(f'<testsuite name="pkg_{s // per_suite}" tests="{min(per_suite, a.cases - s)}">\n')
            for i in range(s, min(s + per_suite, a.cases)):
                cls = f"tests.pkg_{i // per_suite}.test_mod_{i % 7}"
                name = f"test_parse_user_{i}"
                # A cheap hash of (case, run) picks the outcome.
                h = (i * 2654435761 + a.run * 40503) % 1000
                head = f'<testcase classname="{cls}" name="{name}" time="0.00{i % 10}"'
                if h < 20:
                    f.write(f'{head}><failure message="assert {h} == 0">AssertionError</failure></testcase>\n')
                elif h < 30:
                    f.write(f'{head}><skipped/></testcase>\n')
                elif h < 35:
                    f.write(f'{head}><flakyFailure message="timed out"/></testcase>\n')
                else:
                    f.write(f'{head}/>\n')
            f.write('</testsuite>\n')
        f.write('</testsuites>\n')

if __name__ == "__main__":
    main()
