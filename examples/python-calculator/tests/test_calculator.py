import pytest

from calculator import add, divide, percent, subtract


def test_add():
    assert add(2, 3) == 5


def test_subtract_negative_result():
    assert subtract(2, 5) == -3


def test_divide():
    assert divide(7, 2) == 3.5


def test_divide_by_zero_raises():
    with pytest.raises(ZeroDivisionError, match="cannot divide by zero"):
        divide(1, 0)


@pytest.mark.parametrize("part,whole,expected", [(1, 4, 25.0), (1, 3, 33.33)])
def test_percent(part, whole, expected):
    assert percent(part, whole) == expected
