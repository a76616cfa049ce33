"""`wheelhouse ingest` end to end: the real binary on a tree of real wheels, the way a build
farm leaves them (wheelhouse/fa2.8.3/torch2.8/cu128/*.whl), then again, then bad ones.

What is stored is read back with Python's sqlite3 on DATA/catalog.db and from DATA/blobs/.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sqlite3
import subprocess
import zipfile

import pytest

from wheelbuilder import build_wheel, read_metadata, record_hash

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = pathlib.Path(os.environ.get("WHEELHOUSE_BIN", REPO / "build" / "release" / "server" / "wheelhouse"))


@pytest.fixture(scope="module")
def wheelhouse() -> pathlib.Path:
    if not BINARY.is_file():
        pytest.fail(f"{BINARY} does not exist: build it (cmake --build --preset release) or set WHEELHOUSE_BIN")
    return BINARY


def run_ingest(binary: pathlib.Path, data: pathlib.Path, *paths: object, extra: tuple[str, ...] = (), env=None):
    command = [str(binary), "ingest", "--data", str(data), *extra, *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def catalog_rows(data: pathlib.Path) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute(
            "SELECT p.name, f.filename, f.version, f.normalized_version, f.local_label, f.python_tag, f.abi_tag,"
            " f.platform_tag, f.build_tag, f.cuda, f.torch, f.cxx11abi, f.sha256, f.size, f.requires_python,"
            " f.summary, f.upload_time_ms, f.metadata_sha256, f.metadata_size, f.uploaded_by"
            " FROM files f JOIN projects p ON p.id = f.project_id ORDER BY f.filename"
        ).fetchall()


def stored_files(data: pathlib.Path) -> dict[str, float]:
    """Every file under blobs/ and tmp/ with its modification time."""
    found = {}
    for folder in ("blobs", "tmp"):
        for path in (data / folder).rglob("*"):
            if path.is_file():
                found[str(path.relative_to(data))] = path.stat().st_mtime
    return found


def summary_count(output: str, word: str) -> int:
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[0] == word:
            return int(parts[1])
    raise AssertionError(f"no '{word}' line in the summary:\n{output}")


@pytest.fixture
def farm(tmp_path: pathlib.Path) -> tuple[pathlib.Path, list[pathlib.Path]]:
    """A build farm's output: flash-attn per CUDA and torch, SageAttention by build tag, a pure wheel."""
    root = tmp_path / "wheelhouse"
    wheels = []
    for torch in ("2.7", "2.8"):
        for cuda in ("126", "128"):
            for python in ("cp311", "cp312"):
                version = f"2.8.3+cu{cuda}torch{torch}cxx11abiFALSE"
                wheels.append(
                    build_wheel(
                        root / "fa2.8.3" / f"torch{torch}" / f"cu{cuda}",
                        "flash_attn",
                        version,
                        tags=(python, python, "linux_x86_64"),
                        files={"flash_attn/__init__.py": "", "flash_attn_2_cuda.so": os.urandom(30000)},
                        summary="Flash Attention: Fast and Memory-Efficient Exact Attention",
                        requires_python=">=3.9",
                    )
                )
    wheels.append(
        build_wheel(root / "sage", "sageattention", "2.2.0", tags="cp312-cp312-linux_x86_64", build="280.129",
                    metadata_extra="Requires-Dist: torch>=2.8\n")
    )
    wheels.append(build_wheel(root / "pure", "Demo.Pkg", "1.0.post1", tags="py2.py3-none-any"))
    (root / "README.txt").write_text("build logs are not wheels\n")
    return root, wheels


def test_a_tree_is_ingested_then_rerunning_changes_nothing(wheelhouse, farm, tmp_path):
    root, wheels = farm
    data = tmp_path / "var"

    first = run_ingest(wheelhouse, data, root)
    assert first.returncode == 0, first.stdout + first.stderr
    assert summary_count(first.stdout, "added") == len(wheels)
    assert summary_count(first.stdout, "identical") == 0
    assert summary_count(first.stdout, "rejected") == 0
    assert "1 file without the .whl or .tar.gz extension ignored" in first.stdout

    rows = catalog_rows(data)
    assert [row[1] for row in rows] == sorted(wheel.name for wheel in wheels)
    by_name = {row[1]: row for row in rows}
    for wheel in wheels:
        row = by_name[wheel.name]
        content = wheel.read_bytes()
        sha256 = hashlib.sha256(content).hexdigest()
        assert row[12] == sha256 and row[13] == len(content)
        blob = data / "blobs" / "sha256" / sha256[:2] / sha256[2:4] / sha256
        assert blob.read_bytes() == content
        metadata = read_metadata(wheel)
        assert pathlib.Path(str(blob) + ".metadata").read_bytes() == metadata
        assert row[17] == hashlib.sha256(metadata).hexdigest() and row[18] == len(metadata)
        assert row[19] == "cli"
    assert not list((data / "tmp").iterdir())

    flash = by_name["flash_attn-2.8.3+cu128torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"]
    assert flash[:12] == (
        "flash-attn", flash[1], "2.8.3+cu128torch2.8cxx11abiFALSE", "2.8.3+cu128torch2.8cxx11abifalse",
        "cu128torch2.8cxx11abifalse", "cp312", "cp312", "linux_x86_64", None, "12.8", "2.8", 0,
    )
    assert flash[14:16] == (">=3.9", "Flash Attention: Fast and Memory-Efficient Exact Attention")
    sage = by_name["sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl"]
    assert (sage[8], sage[9], sage[10]) == ("280.129", "12.9", "2.8.0")
    pure = by_name["Demo_Pkg-1.0.post1-py2.py3-none-any.whl"]
    assert (pure[0], pure[5], pure[9], pure[10]) == ("demo-pkg", "py2.py3", None, None)

    before_rows, before_files = catalog_rows(data), stored_files(data)
    again = run_ingest(wheelhouse, data, root, extra=("--jobs", "3"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert summary_count(again.stdout, "added") == 0
    assert summary_count(again.stdout, "identical") == len(wheels)
    assert catalog_rows(data) == before_rows  # upload times included: nothing was rewritten
    assert stored_files(data) == before_files


def test_bad_wheels_are_rejected_with_reasons_and_nothing_is_stored(wheelhouse, farm, tmp_path):
    root, wheels = farm
    data = tmp_path / "var"
    assert run_ingest(wheelhouse, data, root).returncode == 0
    good_rows, good_files = catalog_rows(data), stored_files(data)

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "garbage-1.0-py3-none-any.whl").write_bytes(b"this is not a zip archive")
    whole = build_wheel(tmp_path / "scratch", "truncated", "1.0").read_bytes()
    (bad / "truncated-1.0-py3-none-any.whl").write_bytes(whole[: len(whole) // 2])
    build_wheel(bad, "mismatch", "1.0", metadata_version="1.1")
    build_wheel(bad, "flash_attn", "2.8.3+cu128torch2.8cxx11abiTRUE", tags="cp312-cp312-linux_x86_64",
                metadata_version="2.8.3")
    build_wheel(bad, "othername", "1.0", metadata_name="something-else")
    build_wheel(bad, "tampered", "1.0", record_overrides={"tampered/__init__.py": ("sha256=AAAA", "20")})
    build_wheel(bad, "traversal", "1.0", unlisted={"../evil.py": "import os\n"})
    build_wheel(bad, "absolute", "1.0", unlisted={"/etc/evil.conf": "x\n"})
    build_wheel(bad, "unlisted", "1.0", unlisted={"unlisted/extra.py": "x = 1\n"})
    build_wheel(bad, "nometadata", "1.0", omit=("METADATA",))
    build_wheel(bad, "nodistinfo", "1.0", omit=("METADATA", "WHEEL", "RECORD"))
    build_wheel(bad, "wheel2", "1.0", wheel_version="2.0")
    two = build_wheel(bad, "twodist", "1.0", unlisted={"other-1.0.dist-info/METADATA": "Name: other\n"})
    bomb = bad / "bomb-1.0-py3-none-any.whl"
    build_wheel(bad, "bomb", "1.0", files={"bomb/zeros.bin": bytes(20 << 20)})
    (bad / "not-even-a-wheel-name.whl").write_bytes(whole)
    # The same filename as a good wheel, with other bytes.
    clash = build_wheel(bad / "rebuilt", "sageattention", "2.2.0", tags="cp312-cp312-linux_x86_64", build="280.129",
                        metadata_extra="Requires-Dist: torch>=2.9\n")

    result = run_ingest(wheelhouse, data, bad, tmp_path / "does-not-exist")
    assert result.returncode == 1, result.stdout + result.stderr
    output = result.stdout
    expected_reasons = {
        "garbage-1.0-py3-none-any.whl": "not a zip archive",
        "truncated-1.0-py3-none-any.whl": "was the file truncated?",
        "mismatch-1.0-py3-none-any.whl": "METADATA says Version: 1.1, but the filename says 1.0",
        "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl":
            "rebuild with +cu128torch2.8cxx11abitrue in the version, or rename the file to drop it",
        "othername-1.0-py3-none-any.whl": "METADATA says Name: something-else, but the filename is for project othername",
        "tampered-1.0-py3-none-any.whl": "RECORD says tampered/__init__.py has sha256=AAAA but the archive entry hashes to sha256=",
        "traversal-1.0-py3-none-any.whl": "entry \"../evil.py\" contains '..'",
        "absolute-1.0-py3-none-any.whl": "entry \"/etc/evil.conf\" has an absolute path",
        "unlisted-1.0-py3-none-any.whl": "archive entry unlisted/extra.py is not listed in RECORD",
        "nometadata-1.0-py3-none-any.whl": "nometadata-1.0.dist-info/METADATA is missing",
        "nodistinfo-1.0-py3-none-any.whl": "the wheel has no top-level *.dist-info directory",
        "wheel2-1.0-py3-none-any.whl": "WHEEL says Wheel-Version: 2.0",
        two.name: "the wheel has 2 .dist-info directories",
        bomb.name: "entry bomb/zeros.bin would inflate from",
        "not-even-a-wheel-name.whl": "not-even-a-wheel-name.whl",
        clash.name: "File already exists with other bytes: give the build a new version or build tag, or delete the "
                    "old file first (sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl is in the index",
        "does-not-exist": "no such file or directory",
    }
    rejected_lines = output.split("rejected:\n", 1)[1].splitlines()
    for filename, reason in expected_reasons.items():
        matching = [line for line in rejected_lines if line.split(": ", 1)[0].endswith("/" + filename)]
        assert len(matching) == 1, f"{filename} not listed once among the rejected:\n{output}"
        assert reason in matching[0], f"{filename}: expected '{reason}' in\n{matching[0]}"
    assert summary_count(output, "added") == 0
    assert summary_count(output, "rejected") == len(expected_reasons)

    # Nothing of the bad ones reached the catalog or the blob store, and no spool file is left.
    assert catalog_rows(data) == good_rows
    assert stored_files(data) == good_files
    assert not list((data / "tmp").iterdir())


def test_a_record_size_mismatch_is_rejected(wheelhouse, tmp_path):
    data = tmp_path / "var"
    content = b"x = 1\n"
    wheel = build_wheel(tmp_path / "in", "sized", "1.0", files={"sized/__init__.py": content},
                        record_overrides={"sized/__init__.py": (record_hash(content), "7")})
    result = run_ingest(wheelhouse, data, wheel)
    assert result.returncode == 1
    assert "RECORD says sized/__init__.py is 7 bytes but the archive entry is 6 bytes" in result.stdout
    assert catalog_rows(data) == []
    assert [p for p in (data / "blobs").rglob("*") if p.is_file()] == []


def test_the_data_directory_comes_from_the_environment(wheelhouse, tmp_path):
    wheel = build_wheel(tmp_path / "in", "envdemo", "0.1")
    data = tmp_path / "from-env"
    env = dict(os.environ, WHEELHOUSE_DATA=str(data))
    result = subprocess.run([str(wheelhouse), "ingest", str(wheel)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [row[1] for row in catalog_rows(data)] == [wheel.name]


def test_an_unusable_data_directory_exits_2(wheelhouse, tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    wheel = build_wheel(tmp_path / "in", "demo", "1.0")
    result = run_ingest(wheelhouse, blocker, wheel)
    assert result.returncode == 2
    assert "file-not-dir" in result.stderr


def test_the_stored_wheel_is_still_a_valid_zip(wheelhouse, tmp_path):
    wheel = build_wheel(tmp_path / "in", "roundtrip", "3.0", files={"roundtrip/data.bin": os.urandom(5000)})
    data = tmp_path / "var"
    assert run_ingest(wheelhouse, data, wheel).returncode == 0
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with zipfile.ZipFile(data / "blobs" / "sha256" / sha256[:2] / sha256[2:4] / sha256) as archive:
        assert archive.testzip() is None
