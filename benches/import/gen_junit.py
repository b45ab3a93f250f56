#!/usr/bin/env python3
"""Deterministic generator of a large JUnit XML report for the import benchmark.

Default shape (about 45 MB): 100,000 <testcase>s in 200 <testsuite>s under one
<testsuites>; 10,000 failures with multi-line stack traces, 2,000 skipped, and
captured <system-out> on every other case. Test names include XML entities
(&amp;, &lt;) and non-ASCII text so that readers have to decode them.

The same seed always gives the same bytes, so numbers from different machines
and different days are measured on the same input.

Usage: gen_junit.py [OUT] [--cases N] [--suites N] [--seed N]
Standard library only.
"""
import argparse
import os
import random
import sys
from xml.sax.saxutils import escape, quoteattr

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "junit-100k.xml")

WORDS = (
    "parse render fetch merge split encode decode compare resolve retry flush "
    "load store commit rollback index search filter sort group join stream buffer "
    "cache evict schedule cancel timeout connect accept close validate sanitize"
).split()
NOUNS = (
    "user order invoice token session config report matrix vector graph node edge "
    "queue worker packet frame header payload record column schema table widget"
).split()
# Names that need decoding: entities in the XML, non-ASCII once decoded.
ODD_PARAMS = [
    "a&b", "x<y", "a<b&c>d", "café", "naïve", "Ünïcödé", "名前", "данные",
    "ελληνικά", "emoji🚀", "tab\tsep", "quote\"d", "l'apostrophe", "€100",
]
EXC_TYPES = ["AssertionError"]
LIBS = ["requests", "sqlalchemy", "pydantic", "numpy", "httpx", "jinja2"]


def trace(rng, module, func, msg):
    """A Python-style multi-line traceback of 3-11 frames (contains '<' and '>')."""
    lines = ["Traceback (most recent call last):"]
    depth = rng.randint(3, 11)
    for d in range(depth):
        if d == 0:
            path, fn = f"tests/{module}.py", func
        elif rng.random() < 0.5:
            lib = rng.choice(LIBS)
            path = f"/usr/lib/python3.11/site-packages/{lib}/{rng.choice(NOUNS)}.py"
            fn = f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}"
        else:
            path = f"src/app/{rng.choice(NOUNS)}/{rng.choice(WORDS)}.py"
            fn = rng.choice(["<module>", "<lambda>", "<listcomp>", f"{rng.choice(WORDS)}"])
        lines.append(f'  File "{path}", line {rng.randint(1, 2000)}, in {fn}')
        lines.append(f"    result = {rng.choice(WORDS)}({rng.choice(NOUNS)}, limit={rng.randint(1, 99)}) "
                     f"if x < {rng.randint(1, 9)} and y > 0 else None")
    lines.append(f"AssertionError: {msg}")
    return "\n".join(lines)


def stdout_text(rng, name):
    n = rng.randint(1, 4)
    out = []
    for _ in range(n):
        out.append(f"[{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}] INFO {rng.choice(WORDS)} "
                   f"{rng.choice(NOUNS)} id={rng.randint(1, 10**6)} ok ({rng.random():.3f}s)")
    if rng.random() < 0.05:
        out.append(f"DEBUG: {name} -> <done> & flushed")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=DEFAULT_OUT)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--suites", type=int, default=200)
    ap.add_argument("--failures", type=int, default=10_000)
    ap.add_argument("--skipped", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=20261122)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    n = args.cases
    if args.failures + args.skipped > n:
        sys.exit("gen_junit.py: --failures + --skipped must not exceed --cases")
    outcome = ["pass"] * n
    picked = rng.sample(range(n), args.failures + args.skipped)
    for i in picked[: args.failures]:
        outcome[i] = "fail"
    for i in picked[args.failures:]:
        outcome[i] = "skip"

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    per_suite = [n // args.suites + (1 if s < n % args.suites else 0) for s in range(args.suites)]
    total_fail = total_skip = 0
    total_time = 0.0
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        body = []  # whole suites are built first: their attributes need the counts
        idx = 0
        for s, count in enumerate(per_suite):
            pkg = f"pkg{s // 20:02d}"
            module = f"test_{rng.choice(NOUNS)}_{s:03d}"
            classname = f"tests.{pkg}.{module}.Test{rng.choice(NOUNS).capitalize()}{s:03d}"
            parts = []
            fails = skips = 0
            stime = 0.0
            for c in range(count):
                kind = outcome[idx]
                idx += 1
                name = f"test_{rng.choice(WORDS)}_{rng.choice(NOUNS)}_{c:03d}"
                if rng.random() < 0.08:
                    name += f"[{rng.choice(ODD_PARAMS)}]"
                t = round(rng.expovariate(1 / 0.05), 4)
                stime += t
                attrs = (f"classname={quoteattr(classname)} name={quoteattr(name)} time=\"{t}\" "
                         f"file=\"tests/{pkg}/{module}.py\" line=\"{10 + c * 7}\"")
                if kind == "fail":
                    fails += 1
                    msg = (f"assert {rng.randint(0, 999)} == {rng.randint(0, 999)}: "
                           f"{rng.choice(NOUNS)} mismatch for {name}")
                    parts.append(f"    <testcase {attrs}>\n"
                                 f"      <failure message={quoteattr(msg)} type=\"AssertionError\">"
                                 f"{escape(trace(rng, module, name, msg))}</failure>\n"
                                 f"      <system-out>{escape(stdout_text(rng, name))}</system-out>\n"
                                 f"    </testcase>\n")
                elif kind == "skip":
                    skips += 1
                    reason = f"requires {rng.choice(LIBS)} >= {rng.randint(1, 5)}.{rng.randint(0, 20)}"
                    parts.append(f"    <testcase {attrs}>\n"
                                 f"      <skipped message={quoteattr(reason)} type=\"pytest.skip\"/>\n"
                                 f"    </testcase>\n")
                else:
                    parts.append(f"    <testcase {attrs}>\n"
                                 f"      <system-out>{escape(stdout_text(rng, name))}</system-out>\n"
                                 f"    </testcase>\n")
            total_fail += fails
            total_skip += skips
            total_time += stime
            body.append(f"  <testsuite name={quoteattr(module)} tests=\"{count}\" failures=\"{fails}\" "
                        f"errors=\"0\" skipped=\"{skips}\" time=\"{stime:.3f}\" "
                        f"timestamp=\"2026-11-22T00:00:00\" hostname=\"bench\">\n")
            body.append("".join(parts))
            body.append("  </testsuite>\n")
        f.write(f"<testsuites name=\"fcorr-bench\" tests=\"{n}\" failures=\"{total_fail}\" errors=\"0\" "
                f"skipped=\"{total_skip}\" time=\"{total_time:.3f}\">\n")
        f.writelines(body)
        f.write("</testsuites>\n")

    size = os.path.getsize(args.out)
    print(f"wrote {args.out}: {size} bytes ({size / 1e6:.1f} MB), cases={n} "
          f"suites={args.suites} failures={total_fail} skipped={total_skip}")


if __name__ == "__main__":
    main()
