"""Python's packaging (23.0 on Debian 12) agrees with the specifier and requirement tables in
tests/data/, which drive the C++ unit tests (tests/unit/pep440_specifier_test.cpp and
pep508_requirement_test.cpp): a table row that passes both is what packaging reads and what
wheelhouse reads.

The canonical forms in the tables are wheelhouse's (lib/wheelhouse/pep440/specifier.hpp,
pep508/requirement.hpp, pep508/marker.hpp); here they are rebuilt from packaging's parse, so a
row checks that both parsers found the same name, extras, clauses, URL and marker tree (with
`and` binding tighter than `or`). Where wheelhouse deliberately answers otherwise the rows say
so, and the claim is checked: `accepts` rows must still be accepted by packaging, `unevaluable`
rows must parse and then fail to evaluate, `differs` and `raises` rows must still differ.
"""

from __future__ import annotations

import pytest

packaging = pytest.importorskip("packaging")
from packaging.markers import UndefinedComparison, Variable  # noqa: E402
from packaging.requirements import InvalidRequirement, Requirement  # noqa: E402
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from tables import read_table, row_id  # noqa: E402

SETS = read_table("specifier_sets.tsv")
INVALID_SETS = read_table("invalid_specifier_sets.tsv")
CONTAINS = read_table("specifier_contains.tsv")
REQUIREMENTS = read_table("requirements.tsv")
INVALID_REQUIREMENTS = read_table("invalid_requirements.tsv")


# --- wheelhouse's canonical forms, from packaging's objects -----------------------------------

def canonical_clause(clause: Specifier) -> str:
    if clause.operator == "===":
        return clause.operator + clause.version
    if clause.version.endswith(".*"):
        return clause.operator + str(Version(clause.version[:-2])) + ".*"
    return clause.operator + str(Version(clause.version))


def canonical_set(specifiers: SpecifierSet) -> str:
    return ",".join(sorted({canonical_clause(clause) for clause in specifiers}))


def operand(side, other) -> str:
    if isinstance(side, Variable):
        return side.value
    value = side.value
    if isinstance(other, Variable) and other.value == "extra":
        value = canonicalize_name(value)
    quote = '"' if '"' not in value else "'"
    return quote + value + quote


def marker_tree(markers):
    """packaging's flat list ([item, 'and', item, 'or', [group]]) as ('leaf', item) or
    ('and' | 'or', [children]), `and` binding tighter, runs of one kind flattened."""
    if isinstance(markers, tuple):
        return ("leaf", markers)
    alternatives = [[]]
    for item in markers:
        if item == "or":
            alternatives.append([])
        elif item != "and":
            alternatives[-1].append(marker_tree(item))

    def joined(kind, children):
        flat = []
        for child in children:
            flat.extend(child[1] if child[0] == kind else [child])
        return flat[0] if len(flat) == 1 else (kind, flat)

    return joined("or", [joined("and", conjuncts) for conjuncts in alternatives])


def show_marker(node) -> str:
    kind, body = node
    if kind == "leaf":
        left, op, right = body
        return f"{operand(left, right)} {op.value} {operand(right, left)}"
    joiner = " and " if kind == "and" else " or "
    return joiner.join(f"({show_marker(child)})" if kind == "and" and child[0] == "or" else show_marker(child)
                       for child in body)


def canonical_requirement(requirement: Requirement) -> str:
    out = canonicalize_name(requirement.name)
    extras = sorted({canonicalize_name(extra) for extra in requirement.extras})
    if extras:
        out += "[" + ",".join(extras) + "]"
    if requirement.url:
        out += " @ " + requirement.url
        return out + (" ; " + show_marker(marker_tree(requirement.marker._markers)) if requirement.marker else "")
    out += canonical_set(requirement.specifier)
    return out + ("; " + show_marker(marker_tree(requirement.marker._markers)) if requirement.marker else "")


# --- the tables -------------------------------------------------------------------------------

def test_tables_are_as_large_as_promised() -> None:
    assert len(SETS) >= 50
    assert len(INVALID_SETS) >= 40
    assert len(CONTAINS) >= 100
    assert len([row for row in REQUIREMENTS if row["source"].startswith("Requires-Dist of")]) >= 100
    assert len(INVALID_REQUIREMENTS) >= 50


@pytest.mark.parametrize("row", SETS, ids=lambda row: row_id(row["input"]))
def test_specifier_set(row: dict[str, str]) -> None:
    assert canonical_set(SpecifierSet(row["input"])) == row["canonical"]


@pytest.mark.parametrize("row", INVALID_SETS, ids=lambda row: row_id(row["input"]))
def test_refused_specifier_set(row: dict[str, str]) -> None:
    assert row["packaging"] in ("refuses", "accepts")
    if row["packaging"] == "refuses":
        with pytest.raises(InvalidSpecifier):
            SpecifierSet(row["input"])
    else:
        assert row["note"].startswith("stricter"), "say why wheelhouse refuses what packaging takes"
        SpecifierSet(row["input"])


@pytest.mark.parametrize("row", CONTAINS,
                         ids=lambda row: row_id(f"{row['specifier']} {row['version']} {row['prereleases']}"))
def test_contains(row: dict[str, str]) -> None:
    prereleases = {"": None, "true": True, "false": False}[row["prereleases"]]
    expected = {"yes": True, "no": False}[row["contained"]]
    specifiers = SpecifierSet(row["specifier"])
    if row["packaging"] == "raises":
        with pytest.raises(InvalidVersion):
            specifiers.contains(row["version"], prereleases=prereleases)
        return
    answer = specifiers.contains(row["version"], prereleases=prereleases)
    assert row["packaging"] in ("same", "differs")
    assert answer == (expected if row["packaging"] == "same" else not expected), row["note"]


@pytest.mark.parametrize("row", REQUIREMENTS, ids=lambda row: row_id(row["input"]))
def test_requirement(row: dict[str, str]) -> None:
    assert canonical_requirement(Requirement(row["input"])) == row["canonical"]


@pytest.mark.parametrize("row", INVALID_REQUIREMENTS, ids=lambda row: row_id(row["input"]))
def test_refused_requirement(row: dict[str, str]) -> None:
    assert row["packaging"] in ("refuses", "accepts", "unevaluable")
    if row["packaging"] == "refuses":
        with pytest.raises(InvalidRequirement):
            Requirement(row["input"])
        return
    assert row["note"].startswith("stricter"), "say why wheelhouse refuses what packaging takes"
    parsed = Requirement(row["input"])
    if row["packaging"] == "unevaluable":
        with pytest.raises(UndefinedComparison):
            parsed.marker.evaluate()
