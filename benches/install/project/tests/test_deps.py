"""One test per dependency: each imports it and uses it once, so a missing install fails."""

import datetime

from benchapp import greet


def test_benchapp():
    assert greet("x") == "hello x"


def test_attrs():
    import attrs

    @attrs.define
    class P:
        x: int

    assert P(1).x == 1


def test_click():
    import click

    assert click.style("x", bold=True).endswith("\x1b[0m")


def test_colorama():
    import colorama

    assert colorama.Fore.RED


def test_freezegun():
    import freezegun

    with freezegun.freeze_time("2020-01-02"):
        assert datetime.date.today() == datetime.date(2020, 1, 2)


def test_humanize():
    import humanize

    assert humanize.intcomma(1000000) == "1,000,000"


def test_idna():
    import idna

    assert idna.encode("example.com") == b"example.com"


def test_itsdangerous():
    import itsdangerous

    s = itsdangerous.Signer("k")
    assert s.unsign(s.sign(b"v")) == b"v"


def test_more_itertools():
    import more_itertools

    assert list(more_itertools.chunked([1, 2, 3], 2)) == [[1, 2], [3]]


def test_packaging():
    from packaging.version import Version

    assert Version("1.10") > Version("1.9")


def test_pyparsing():
    import pyparsing

    assert pyparsing.Word(pyparsing.nums).parse_string("42")[0] == "42"


def test_dateutil():
    from dateutil import parser

    assert parser.parse("2020-01-02").year == 2020


def test_six():
    import six

    assert six.PY3


def test_sortedcontainers():
    import sortedcontainers

    assert list(sortedcontainers.SortedList([3, 1, 2])) == [1, 2, 3]


def test_tabulate():
    import tabulate

    assert "a" in tabulate.tabulate([["a", 1]])


def test_toolz():
    import toolz

    assert toolz.frequencies("aab") == {"a": 2, "b": 1}


def test_tomli_w():
    import tomli_w

    assert tomli_w.dumps({"a": 1}) == "a = 1\n"


def test_typing_extensions():
    import typing_extensions

    assert typing_extensions.Literal


def test_wcwidth():
    import wcwidth

    assert wcwidth.wcswidth("abc") == 3


def test_iniconfig_and_pluggy():
    import iniconfig
    import pluggy

    assert iniconfig and pluggy.HookspecMarker("x")
