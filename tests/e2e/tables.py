"""Reads the test tables in tests/data/ (format in tests/data/README.md) for the Python tests.

The C++ unit tests read the same tables (tests/unit/tsv_table.hpp), so one row drives the
parser's unit test, the agreement with packaging and the check of the `wheelhouse` binary.
"""

from __future__ import annotations

import csv
import pathlib

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
ESCAPES = {ord("t"): b"\t", ord("n"): b"\n", ord("r"): b"\r", ord("\\"): b"\\"}


def unescape(field: str) -> str:
    """The escapes of tests/data/README.md: \\t \\n \\r \\\\ and \\xHH, one byte of UTF-8."""
    raw = field.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == ord("\\") and i + 1 < len(raw):
            kind = raw[i + 1]
            if kind == ord("x"):
                out.append(int(raw[i + 2 : i + 4], 16))
                i += 4
                continue
            if kind not in ESCAPES:
                raise ValueError(f"unknown escape in a test table: {field!r}")
            out += ESCAPES[kind]
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return out.decode("utf-8")


def read_table(name: str) -> list[dict[str, str]]:
    """Every row of tests/data/<name> as {column: unescaped field}."""
    with open(DATA / name, encoding="utf-8", newline="") as table:
        lines = (line for line in table if line.strip() and not line.startswith("#"))
        reader = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows = []
        for row in reader:
            assert None not in row and None not in row.values(), f"{name}: wrong field count in {row}"
            rows.append({column: unescape(value) for column, value in row.items()})
        return rows


def row_id(text: str) -> str:
    """A test id for a row: printable, short, never empty."""
    return text.encode("unicode_escape").decode("ascii")[:80] or "(empty)"
