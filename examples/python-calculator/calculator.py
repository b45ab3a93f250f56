"""A tiny calculator."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("cannot divide by zero")
    return a / b


def percent(part, whole):
    return round(part / whole * 100, 2)
