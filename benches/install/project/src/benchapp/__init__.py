"""A tiny package so the benchmark exercises the editable install of the project itself."""


def greet(name: str) -> str:
    return f"hello {name}"
