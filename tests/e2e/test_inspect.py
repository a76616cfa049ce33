"""`wheelhouse inspect` agrees with Python's packaging (23.0 on Debian 12) on every filename in
tests/data/, valid and refused, and behaves as its --help says.

One `inspect -` run reads every table row; each row's test then compares that row's JSON with
packaging.utils.parse_wheel_filename. Where wheelhouse is deliberately stricter the invalid
table says `packaging = accepts` (test_packaging_agreement.py checks packaging still does).
"""

from __future__ import annotations

import itertools
import json
import pathlib
import posixpath
import subprocess

import pytest

from tables import read_table, row_id

packaging = pytest.importorskip("packaging")
from packaging.tags import Tag  # noqa: E402
from packaging.utils import (InvalidSdistFilename, InvalidWheelFilename, canonicalize_name,  # noqa: E402
                             parse_sdist_filename, parse_wheel_filename)
from packaging.version import InvalidVersion, Version  # noqa: E402

WHEELS = read_table("wheel_filenames.tsv")
INVALID_WHEELS = read_table("invalid_wheel_filenames.tsv")
STRICTER = {row["filename"] for row in INVALID_WHEELS if row["packaging"] == "accepts"}
NAMES = [row["filename"] for row in WHEELS] + [row["filename"] for row in INVALID_WHEELS]


def survives_a_line(name: str) -> bool:
    """Whether `inspect -` reads the name back from a line unchanged (it splits on newlines,
    drops a trailing CR and skips blank lines); the other names are given as arguments."""
    return "\n" not in name and not name.endswith("\r") and name.strip(" \t\f\v") != ""


LINE_NAMES = [name for name in NAMES if survives_a_line(name)]
ARGUMENT_NAMES = [name for name in NAMES if not survives_a_line(name)]


def run(binary: pathlib.Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], input=stdin, capture_output=True, timeout=60)


def objects(stdout: bytes) -> list[dict]:
    return [json.loads(line) for line in stdout.decode("utf-8").splitlines()]


@pytest.fixture(scope="module")
def table_run(wheelhouse_bin) -> subprocess.CompletedProcess:
    """Every table name in one call: those a line can carry on stdin, the rest (a newline in the
    name, an empty name) as arguments. '--' goes first: CLI11 2.1 ends a subcommand at a '--'
    that follows its first positional argument."""
    stdin = "".join(name + "\n" for name in LINE_NAMES).encode("utf-8")
    return run(wheelhouse_bin, "inspect", "--", "-", *ARGUMENT_NAMES, stdin=stdin)


@pytest.fixture(scope="module")
def inspected(table_run) -> dict[str, dict]:
    reports = objects(table_run.stdout)
    assert len(reports) == len(NAMES), table_run.stderr.decode()
    return dict(zip(LINE_NAMES + ARGUMENT_NAMES, reports))


def packaging_verdict(filename: str):
    try:
        return parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None


def looks_like_sdist(filename: str) -> bool:
    """The names inspect judges by the sdist rules (PEP 625), as the index does on upload."""
    return filename.lower().endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar"))


def assert_sdist_agrees_with_packaging(report: dict) -> None:
    """What inspect takes as an sdist, packaging takes too, as the same project and version;
    inspect refuses the legacy spellings packaging takes (tests/e2e/test_sdists.py)."""
    try:
        name, version = parse_sdist_filename(report["filename"])
    except (InvalidSdistFilename, InvalidVersion):
        name = version = None
    if "error" in report:
        return
    assert name is not None, "wheelhouse takes an sdist name packaging refuses"
    assert report["packagetype"] == "sdist"
    assert report["normalized_name"] == name
    assert report["normalized_version"] == str(version)


def assert_agrees_with_packaging(report: dict) -> None:
    """The report of one inspected filename says what packaging says of it."""
    filename = report["filename"]
    if looks_like_sdist(filename):
        return assert_sdist_agrees_with_packaging(report)
    parsed = packaging_verdict(filename)
    if "error" in report:
        assert parsed is None or filename in STRICTER, (
            f"wheelhouse refuses what packaging takes, and the table does not say why: {report['error']}")
        return
    assert parsed is not None, "wheelhouse takes what packaging refuses"
    name, version, build, tags = parsed
    assert report["normalized_name"] == name == canonicalize_name(report["name"])
    assert report["normalized_version"] == str(version)
    assert Version(report["version"]) == version
    assert report["public_version"] == version.public
    assert report["local"] == version.local
    ours = (report["build"]["number"], report["build"]["suffix"]) if report["build"] is not None else ()
    assert ours == build
    if report["build"] is not None:
        assert report["build"]["text"] == f"{build[0]}{build[1]}"
    triples = itertools.product(report["python_tags"], report["abi_tags"], report["platform_tags"])
    assert frozenset(Tag(*triple) for triple in triples) == tags
    assert isinstance(report["variant"], dict)


def test_one_call_reads_every_table_name(table_run) -> None:
    assert ARGUMENT_NAMES, "the tables hold names a line cannot carry; they go as arguments"
    assert table_run.returncode == 1, "some names were refused"
    assert table_run.stderr == b""


@pytest.mark.parametrize("row", WHEELS, ids=lambda row: row_id(row["filename"]))
def test_valid_filename_agrees_with_packaging(row: dict[str, str], inspected: dict[str, dict]) -> None:
    report = inspected[row["filename"]]
    assert "error" not in report, report["error"]
    assert report["filename"] == row["filename"]
    assert "path" not in report
    assert_agrees_with_packaging(report)


@pytest.mark.parametrize("row", INVALID_WHEELS, ids=lambda row: row_id(row["filename"]))
def test_refused_filename_agrees_with_packaging(row: dict[str, str], inspected: dict[str, dict]) -> None:
    given = row["filename"]
    report = inspected[given]
    if "/" in given:
        # A path as `dist/*.whl` gives it: the last part is the filename inspected.
        assert report["path"] == given
        assert report["filename"] == posixpath.basename(given)
    elif looks_like_sdist(given):
        assert "path" not in report
        assert report["filename"] == given
    else:
        assert "path" not in report
        assert report["filename"] == given
        assert set(report) == {"filename", "error"}
        assert row["reason"] in report["error"]
    assert_agrees_with_packaging(report)


def test_names_as_arguments_print_what_stdin_prints(wheelhouse_bin, table_run) -> None:
    as_arguments = run(wheelhouse_bin, "inspect", "--", *LINE_NAMES, *ARGUMENT_NAMES)
    assert as_arguments.returncode == table_run.returncode == 1
    assert as_arguments.stdout == table_run.stdout


def test_exit_status_is_0_only_when_every_name_is_valid(wheelhouse_bin) -> None:
    valid = [row["filename"] for row in WHEELS]
    assert run(wheelhouse_bin, "inspect", *valid).returncode == 0
    assert run(wheelhouse_bin, "inspect", "-", stdin="\n".join(valid).encode()).returncode == 0
    one_bad = run(wheelhouse_bin, "inspect", *valid[:3], "flash_attn-2.8.3.whl", *valid[3:6])
    assert one_bad.returncode == 1
    reports = objects(one_bad.stdout)
    assert len(reports) == 7
    assert ["error" in report for report in reports] == [False] * 3 + [True] + [False] * 3


def test_dist_paths_are_inspected_by_name_without_opening_them(wheelhouse_bin, tmp_path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    names = ["flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
             "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl"]
    for name in names:
        (dist / name).write_bytes(b"not a zip: inspect reads names, not files")
    paths = [str(path) for path in sorted(dist.glob("*.whl"))] + ["dist/missing-1.0-py3-none-any.whl"]
    result = run(wheelhouse_bin, "inspect", *paths)
    assert result.returncode == 0, result.stdout
    reports = objects(result.stdout)
    assert [report["path"] for report in reports] == paths
    assert [report["filename"] for report in reports] == sorted(names) + ["missing-1.0-py3-none-any.whl"]
    assert list(reports[0])[:2] == ["filename", "path"]
    flash_attn = next(report for report in reports if report["normalized_name"] == "flash-attn")
    assert flash_attn["variant"] == {"cuda": "12.8", "torch": "2.8"}
    sage = next(report for report in reports if report["normalized_name"] == "sageattention")
    assert sage["build"] == {"number": 280, "suffix": ".129", "text": "280.129"}
    assert sage["variant"] == {"cuda": "12.9", "torch": "2.8.0"}

    directory = run(wheelhouse_bin, "inspect", "dist/")
    assert directory.returncode == 1
    assert "not a directory" in objects(directory.stdout)[0]["error"]


def test_stdin_skips_blank_lines_and_carriage_returns(wheelhouse_bin) -> None:
    result = run(wheelhouse_bin, "inspect", "-",
                 stdin=b"six-1.16.0-py2.py3-none-any.whl\r\n\r\n  \n\ndemo-1.0-py3-none-any.whl")
    assert result.returncode == 0
    assert [report["filename"] for report in objects(result.stdout)] == [
        "six-1.16.0-py2.py3-none-any.whl", "demo-1.0-py3-none-any.whl"]


def test_names_around_stdin_keep_their_order(wheelhouse_bin) -> None:
    result = run(wheelhouse_bin, "inspect", "a-1-py3-none-any.whl", "-", "c-3-py3-none-any.whl",
                 stdin=b"b-2-py3-none-any.whl\n")
    assert [report["normalized_name"] for report in objects(result.stdout)] == ["a", "b", "c"]


def test_empty_stdin_prints_nothing_and_says_so(wheelhouse_bin) -> None:
    result = run(wheelhouse_bin, "inspect", "-")
    assert result.returncode == 0
    assert result.stdout == b""
    assert b"no names on standard input" in result.stderr


def test_names_that_are_not_utf8_give_valid_json(wheelhouse_bin) -> None:
    raw = [b"d\xe9mo-1.0-py3-none-any.whl", b"\xe2\x82-1.0-py3-none-any.whl", b"dist\xff/x-1.0-py3-none-any.whl"]
    result = run(wheelhouse_bin, "inspect", "-", stdin=b"\n".join(raw))
    assert result.returncode == 1
    reports = objects(result.stdout)  # decoding as UTF-8 fails on a stray byte
    # U+FFFD per bad sequence, exactly as Python replaces them.
    assert reports[0]["filename"] == raw[0].decode("utf-8", "replace")
    assert reports[1]["filename"] == raw[1].decode("utf-8", "replace")
    assert "error" in reports[0] and "error" in reports[1]
    assert reports[2]["path"] == raw[2].decode("utf-8", "replace")
    assert "error" not in reports[2]


def test_pretty_prints_the_same_objects_indented(wheelhouse_bin) -> None:
    names = [row["filename"] for row in WHEELS[:40]] + [row["filename"] for row in INVALID_WHEELS[:20]]
    compact = run(wheelhouse_bin, "inspect", "--", *names)
    pretty = run(wheelhouse_bin, "inspect", "--pretty", "--", *names)
    assert pretty.returncode == compact.returncode == 1
    expected = "".join(json.dumps(report, indent=2, ensure_ascii=False) + "\n" for report in objects(compact.stdout))
    assert pretty.stdout.decode("utf-8") == expected


def test_usage_errors_exit_2(wheelhouse_bin) -> None:
    for args in (["inspect"], ["inspect", "-", "-"], ["inspect", "--no-such-flag", "x.whl"], ["no-such-command"]):
        result = run(wheelhouse_bin, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stdout == b""
        assert result.stderr != b""


def test_help_explains_the_command(wheelhouse_bin) -> None:
    result = run(wheelhouse_bin, "inspect", "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "standard input" in text
    assert "wheelhouse inspect dist/*.whl" in text
    assert "ls dist | wheelhouse inspect -" in text
    assert "Exit status" in text

    overview = run(wheelhouse_bin, "--help")
    assert overview.returncode == 0
    assert "inspect" in overview.stdout.decode()
    assert "wheelhouse COMMAND --help" in overview.stdout.decode()
