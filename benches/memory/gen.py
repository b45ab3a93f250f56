"""Writes the memory benchmark's inputs: one huge element each, streamed to disk in 1 MB pieces.

    python3 gen.py OUT_DIR [MB]

junit-system-out.xml  a pytest-shaped report: 3 cases, the passing one with MB MB of <system-out>
junit-cdata.xml       the same output in a CDATA section (the surefire shape)
tap-yaml.tap          a TAP stream whose failing test has a YAML block of 1.5 x MB MB
"""
import os
import sys

out, mb = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
os.makedirs(out, exist_ok=True)
# Plain text, as most captured output is: no `&` or `<`, so nothing splits it into small pieces.
line = "captured output line printed by a test, again and again 0123456789abcdefghij\n"
piece = (line * (1_000_000 // len(line) + 1))[:1_000_000]


def junit(path, cdata):
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
                '<testsuite name="pytest" errors="0" failures="1" skipped="0" tests="3">'
                '<testcase classname="t" name="test_first" time="0.01"/>'
                '<testcase classname="t" name="test_loud" time="1.0"><system-out>')
        f.write("<![CDATA[" if cdata else "")
        for _ in range(mb):
            f.write(piece)
        f.write("]]>" if cdata else "")
        f.write('</system-out></testcase><testcase classname="t" name="test_bad" time="0.01">'
                '<failure message="assert 1 == 2">assert 1 == 2</failure></testcase></testsuite></testsuites>\n')


def tap(path):
    yaml_line = "    at frame (file.js:1:1) " + "x" * 70 + "\n"
    block = yaml_line * (1_000_000 // len(yaml_line))
    with open(path, "w") as f:
        f.write("TAP version 13\n1..3\nok 1 - first\nnot ok 2 - loud\n  ---\n  message: 'boom'\n  stack: |-\n")
        for _ in range(mb * 3 // 2):
            f.write(block)
        f.write("  ...\nok 3 - last\n")


junit(os.path.join(out, "junit-system-out.xml"), cdata=False)
junit(os.path.join(out, "junit-cdata.xml"), cdata=True)
tap(os.path.join(out, "tap-yaml.tap"))
