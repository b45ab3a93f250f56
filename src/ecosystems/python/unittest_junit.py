# Written by fcorr: `python -m unittest` with a JUnit XML report.
#
# Usage: python fcorr_unittest.py REPORT [the arguments of `python -m unittest`]
#
# Tests are loaded by unittest.main exactly as `python -m unittest` loads them (discovery, test
# names, `load_tests`, `-k`) and run by unittest's own text runner, which prints its usual output
# and sets the exit code. Only the result object is fcorr's: it also records each test's outcome,
# written to REPORT when the run ends (or when fcorr stops it with SIGTERM). Standard library only.
#
# One <testcase> per test unittest runs (its "Ran N tests"), plus one per error or skip unittest
# reports outside any test (setUpClass, setUpModule...). Subtests belong to their test: it fails
# when one fails. An expected failure is a skip; an unexpected success is a failure (unittest
# fails the run for it too); a module that cannot be imported is an error named after its file.

import inspect
import os
import re
import signal
import sys
import time
import traceback
import unittest

REPORT = sys.argv[1]
ROOT = os.getcwd()
# As `python -m unittest` does: the project directory first on sys.path, not this file's.
sys.path[0] = ROOT
INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
FRAME = re.compile(r'File "([^"]+)", line (\d+)')
DOCTEST_FAILURE = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n(?:Failed example|Exception raised):')
ERROR_LINE = re.compile(r"^[\w.]*(?:Error|Exception|Exit|Interrupt)\b")
SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
# The message fcorr reads as "this test outlived the timeout".
STOPPED = "still running when fcorr stopped the test run (SIGTERM)"


def xml(text):
    text = INVALID_XML.sub(lambda m: "\\x%02x" % ord(m.group()), str(text))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def relative(path):
    if not path:
        return None
    path = os.path.abspath(path)
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def kind_of(test):
    name = type(test).__name__
    if name in ("_FailedTest", "_ErrorHolder"):
        return name
    return "doctest" if getattr(test, "_dt_test", None) is not None else "test"


def where(test):
    """(classname, name, file, line, function) of a test, `line` its definition."""
    kind = kind_of(test)
    if kind == "_FailedTest":
        # A module unittest could not import, or whose load_tests failed: named after the module.
        module = test._testMethodName
        path = module.replace(".", "/") + ".py"
        return module, module, path if os.path.isfile(path) else None, None, None
    if kind == "_ErrorHolder":
        # "setUpClass (tests.test_x.Cls)": an error (or skip) outside any test.
        match = re.match(r"^(\S+) \((.+)\)$", test.description)
        if not match:
            return "unittest", test.description, None, None, None
        fixture, owner = match.group(1), match.group(2)
        module = owner if owner in sys.modules else owner.rpartition(".")[0]
        file = relative(getattr(sys.modules.get(module), "__file__", None))
        return owner, fixture, file, None, fixture
    if kind == "doctest":
        doctest = test._dt_test
        classname, _, name = doctest.name.rpartition(".")
        line = doctest.lineno + 1 if doctest.lineno is not None else None
        return classname or doctest.name, name, relative(doctest.filename), line, None
    classname, _, name = test.id().rpartition(".")
    method_name = getattr(test, "_testMethodName", "")
    file, line = None, None
    try:
        function = inspect.unwrap(getattr(test, method_name))
        file = relative(inspect.getsourcefile(function))
        line = def_line(function)
    except (AttributeError, TypeError, OSError, ValueError):
        pass
    if file is None:
        file = relative(getattr(sys.modules.get(type(test).__module__), "__file__", None))
    return classname, name, file, line, method_name


def def_line(function):
    """The line of `def` (after any decorators)."""
    lines, start = inspect.getsourcelines(function)
    for offset, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            return start + offset
    return start


def failing_line(err, file, function):
    """The test's own frame in the traceback, else the first frame in its file."""
    if not file:
        return None
    tb = err[2]
    frames = [f for f in (traceback.extract_tb(tb) if tb is not None else []) if relative(f.filename) == file]
    own = [f for f in frames if f.name == function]
    if own or frames:
        return (own or frames)[0].lineno
    # A doctest failure or an import error carries the location in its text: the failing
    # example, else the deepest frame in the file (the import that failed).
    text = str(err[1])
    for match in DOCTEST_FAILURE.finditer(text):
        if relative(match.group(1)) == file:
            return int(match.group(2))
    lines = [int(m.group(2)) for m in FRAME.finditer(text) if relative(m.group(1)) == file]
    return lines[-1] if lines else None


def last_error_line(text):
    """The last `SomeError: ...` line of a traceback's text."""
    lines = [l.strip() for l in text.splitlines() if ERROR_LINE.match(l.strip())]
    return lines[-1] if lines else None


def doctest_summary(text):
    """`line 18: perimeter(1, 1) expected 5, got 4` from doctest's failure report."""
    match = re.search(r"line (\d+), in [^\n]*\nFailed example:\n(.*?)\n(Expected:|Expected nothing|Exception raised:)", text, re.S)
    if not match:
        return None
    example = " ".join(l.strip() for l in match.group(2).splitlines() if l.strip())
    rest = text[match.end(3):]
    if match.group(3) == "Exception raised:":
        return "doctest line %s: %s raised %s" % (match.group(1), example, last_error_line(rest) or "an exception")
    expected, _, got = rest.partition("\nGot")
    squash = lambda block: " ".join(l.strip() for l in block.splitlines() if l.strip()) or "nothing"
    expected = squash(expected) if match.group(3) == "Expected:" else "nothing"
    got = squash(got.split(":", 1)[-1] if got.startswith(":") else "")
    return "doctest line %s: %s expected %s, got %s" % (match.group(1), example, expected, got)


def message_of(test, err):
    kind = kind_of(test)
    text = str(err[1])
    if kind == "_FailedTest":
        why = last_error_line(text) or text.strip().splitlines()[0]
        module = test._testMethodName
        path = module.replace(".", "/") + ".py"
        if text.startswith("Failed to call load_tests"):
            return "load_tests of %s failed: %s" % (module, why)
        return "%s could not be imported: %s" % (path if os.path.isfile(path) else module, why)
    if kind == "doctest":
        summary = doctest_summary(text)
        if summary:
            return summary
    return "".join(traceback.format_exception_only(err[0], err[1])).strip()


class Record:
    def __init__(self, test):
        self.test = test
        self.status = "passed"
        self.kind = None
        self.message = None
        self.details = []
        self.line = None
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.subtests_failed = 0


class Result(unittest.TextTestResult):
    """unittest's text result that also keeps each test's outcome for the report."""

    records = []
    current = None

    def startTest(self, test):
        Result.current = Record(test)
        Result.records.append(Result.current)
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        record = self.record_for(test)
        record.seconds = time.perf_counter() - record.started
        Result.current = None

    def record_for(self, test):
        current = Result.current
        if current is not None and current.test is test:
            return current
        # Reported outside startTest/stopTest: setUpClass, setUpModule, tearDownModule...
        record = Record(test)
        Result.records.append(record)
        return record

    def problem(self, test, err, status, prefix=""):
        record = self.record_for(test)
        record.details.append(prefix + self._exc_info_to_string(err, test))
        if SEVERITY[status] > SEVERITY[record.status]:
            record.status = status
            record.kind = err[0].__name__
            record.message = prefix + message_of(test, err)
            _, _, file, _, function = where(test)
            record.line = failing_line(err, file, function)

    def addError(self, test, err):
        super().addError(test, err)
        self.problem(test, err, "error")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.problem(test, err, "failed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.record_for(test).subtests_failed += 1
            status = "failed" if issubclass(err[0], test.failureException) else "error"
            self.problem(test, err, status, prefix="subtest %s: " % subtest._subDescription())

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        record = self.record_for(test)
        if record.status == "passed":
            record.status, record.kind, record.message = "skipped", "skip", reason

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        record = self.record_for(test)
        record.status, record.kind = "skipped", "expected-failure"
        record.message = "expected failure: " + message_of(test, err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        record = self.record_for(test)
        record.status, record.kind = "failed", "unexpected-success"
        record.message = "unexpected success: the test is marked @expectedFailure but passed"


def write_report(stopped=None):
    records = list(Result.records)
    if stopped is not None:
        stopped.status, stopped.kind, stopped.message = "error", "timeout", STOPPED
        stopped.seconds = time.perf_counter() - stopped.started
    counts = {status: sum(1 for r in records if r.status == status) for status in SEVERITY}
    totals = 'tests="%d" failures="%d" errors="%d" skipped="%d"' % (
        len(records), counts["failed"], counts["error"], counts["skipped"])
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<testsuites name="unittest" %s>' % totals,
           '<testsuite name="unittest" %s>' % totals]
    for record in records:
        classname, name, file, line, _ = where(record.test)
        attrs = 'classname="%s" name="%s"' % (xml(classname), xml(name))
        if file:
            attrs += ' file="%s"' % xml(file)
        line = record.line or line
        if line:
            attrs += ' line="%d"' % line
        attrs += ' time="%.6f"' % record.seconds
        if record.status == "passed":
            out.append("<testcase %s/>" % attrs)
            continue
        element = {"failed": "failure", "error": "error", "skipped": "skipped"}[record.status]
        message = record.message or ""
        if record.subtests_failed > 1:
            message = "%d subtests failed; the first: %s" % (record.subtests_failed, message)
        out.append('<testcase %s><%s type="%s" message="%s">%s</%s></testcase>' % (
            attrs, element, xml(record.kind or ""), xml(message), xml("\n".join(record.details)), element))
    out += ["</testsuite>", "</testsuites>", ""]
    partial = REPORT + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out))
    os.replace(partial, REPORT)


def on_sigterm(signum, frame):
    # fcorr stops a run that outlived its timeout with SIGTERM: keep what finished, and name
    # the test that was running.
    try:
        write_report(stopped=Result.current)
    finally:
        os._exit(128 + signum)


class Runner(unittest.TextTestRunner):
    resultclass = Result

    def run(self, test):
        # Read by fcorr: a run that ends without its report is said to have stopped short of this.
        self.stream.writeln("fcorr: %d tests loaded" % test.countTestCases())
        self.stream.flush()
        try:
            return super().run(test)
        finally:
            write_report()


signal.signal(signal.SIGTERM, on_sigterm)
unittest.main(module=None, testRunner=Runner, argv=["python -m unittest"] + sys.argv[2:])
