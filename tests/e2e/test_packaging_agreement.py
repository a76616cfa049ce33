"""Python's packaging (23.0 on Debian 12) agrees with the expected values in tests/data/.

The same tables drive the C++ unit tests (tests/unit/pep440_version_test.cpp and
pep427_wheel_filename_test.cpp), so an expected value that passes both is what packaging says
and what wheelhouse computes. Where wheelhouse is deliberately stricter, the tables say
`packaging = accepts`; those rows are checked to be still accepted by packaging, so a stale
claim fails here. Each wheel row holds what `wheelhouse inspect` should print for the file
(normalized_name, normalized_version, build number and suffix, python/abi/platform tags), one
filename per row; test_inspect.py compares the binary's output with packaging row by row.
"""

from __future__ import annotations

import itertools

import pytest

packaging = pytest.importorskip("packaging")
from packaging.tags import Tag  # noqa: E402
from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from tables import read_table, row_id  # noqa: E402

WHEELS = read_table("wheel_filenames.tsv")
INVALID_WHEELS = read_table("invalid_wheel_filenames.tsv")
NORMALIZATIONS = read_table("version_normalizations.tsv")
INVALID_VERSIONS = read_table("invalid_versions.tsv")
ORDERING = read_table("version_ordering.tsv")
ORDER = read_table("version_order.tsv")


def test_tables_are_as_large_as_promised() -> None:
    real = [row for row in WHEELS if not row["source"].startswith("constructed")]
    assert len(real) >= 200
    assert len(INVALID_WHEELS) >= 50
    assert len(NORMALIZATIONS) >= 100
    assert len(ORDERING) >= 80
    assert len({row["filename"] for row in WHEELS}) == len(WHEELS), "a filename is listed twice"


@pytest.mark.parametrize("row", WHEELS, ids=lambda row: row_id(row["filename"]))
def test_wheel_filename_fields(row: dict[str, str]) -> None:
    name, version, build, tags = parse_wheel_filename(row["filename"])
    assert name == row["normalized_name"]
    assert str(version) == row["normalized_version"]
    expected_build = (int(row["build_number"]), row["build_suffix"]) if row["build_number"] else ()
    assert build == expected_build
    expected_tags = {
        Tag(python, abi, platform)
        for python, abi, platform in itertools.product(
            row["python_tags"].split("."), row["abi_tags"].split("."), row["platform_tags"].split(".")
        )
    }
    assert tags == frozenset(expected_tags)


@pytest.mark.parametrize("row", INVALID_WHEELS, ids=lambda row: row_id(row["filename"]))
def test_refused_wheel_filename(row: dict[str, str]) -> None:
    assert row["packaging"] in ("refuses", "accepts")
    if row["packaging"] == "refuses":
        with pytest.raises((InvalidWheelFilename, InvalidVersion)):
            parse_wheel_filename(row["filename"])
    else:
        # Documented as deliberately stricter than packaging: packaging must still take it.
        assert row["note"].startswith(("stricter", "real")), "say why wheelhouse refuses what packaging takes"
        parse_wheel_filename(row["filename"])


@pytest.mark.parametrize("row", NORMALIZATIONS, ids=lambda row: row_id(row["input"]))
def test_version_normalization(row: dict[str, str]) -> None:
    version = Version(row["input"])
    assert str(version) == row["normalized"]
    assert version.public == row["public"]
    assert (version.local or "") == row["local"]


@pytest.mark.parametrize("row", INVALID_VERSIONS, ids=lambda row: row_id(row["input"]))
def test_refused_version(row: dict[str, str]) -> None:
    assert row["packaging"] in ("refuses", "accepts")
    if row["packaging"] == "refuses":
        with pytest.raises(InvalidVersion):
            Version(row["input"])
    else:
        assert row["note"].startswith("stricter"), "say why wheelhouse refuses what packaging takes"
        Version(row["input"])


@pytest.mark.parametrize(
    "row", ORDERING, ids=lambda row: row_id(f"{row['left']} {row['relation']} {row['right']}")
)
def test_ordering_fact(row: dict[str, str]) -> None:
    left, right = Version(row["left"]), Version(row["right"])
    relation = {"<": left < right, "==": left == right, ">": left > right}
    assert row["relation"] in relation
    assert relation[row["relation"]], row["note"]


def test_ranked_versions_compare_as_their_ranks() -> None:
    ranked = [(int(row["rank"]), Version(row["version"])) for row in ORDER]
    assert len(ranked) >= 150
    wrong = [
        (str(a), str(b))
        for (rank_a, a), (rank_b, b) in itertools.product(ranked, repeat=2)
        if (rank_a < rank_b) != (a < b) or (rank_a == rank_b) != (a == b)
    ]
    assert not wrong
