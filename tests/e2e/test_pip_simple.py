"""Real pip against the real binary: install, download and resolve from /simple/, taking the
PEP 658 metadata instead of the wheels it only needs to resolve."""

from __future__ import annotations

import hashlib
import json
import pathlib
import re
import sys

import pytest

from conftest import ingest
from wheelbuilder import build_wheel

PY = f"cp{sys.version_info.major}{sys.version_info.minor}"  # Debian's python3 runs this and pip
NATIVE_TAGS = f"{PY}-{PY}-linux_x86_64"


@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    """kernels 1.0.0 and 1.1.0 (native; 1.1.0 needs a tiny-dep that does not exist, so pip must
    back off to 1.0.0), 1.2.0 for a Python that does not exist yet, and a pure-Python dependency
    in two versions; ingested with the CLI, then served."""
    farm = tmp_path / "farm"
    wheels = {
        "kernels-1.0.0": build_wheel(farm, "kernels", "1.0.0", NATIVE_TAGS, metadata_extra="Requires-Dist: tiny-dep>=1.0\n",
                                     files={"kernels/__init__.py": "VERSION = '1.0.0'\n", "kernels/_ops.so": b"\x7fELF" + bytes(3000)}),
        "kernels-1.1.0": build_wheel(farm, "kernels", "1.1.0", NATIVE_TAGS, metadata_extra="Requires-Dist: tiny-dep>=3.0\n",
                                     files={"kernels/__init__.py": "VERSION = '1.1.0'\n", "kernels/_ops.so": b"\x7fELF" + bytes(4000)}),
        "kernels-1.2.0": build_wheel(farm, "kernels", "1.2.0", NATIVE_TAGS, requires_python=">=3.99",
                                     files={"kernels/__init__.py": "VERSION = '1.2.0'\n"}),
        "tiny-dep-1.0": build_wheel(farm, "tiny-dep", "1.0", files={"tiny_dep/__init__.py": "VERSION = '1.0'\n"}),
        "tiny-dep-2.0": build_wheel(farm, "tiny-dep", "2.0", files={"tiny_dep/__init__.py": "VERSION = '2.0'\n"}),
    }
    data = tmp_path / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    server = start_server(data)
    return server, wheels


def wheel_downloads(lines: list[str]) -> list[str]:
    return [line for line in lines if re.search(r'"GET /files/[0-9a-f]{64}/[^ ]+\.whl" 200', line)]


def metadata_downloads(lines: list[str]) -> list[str]:
    return [line for line in lines if re.search(r'"GET /files/[0-9a-f]{64}/[^ ]+\.whl\.metadata" 200', line)]


def test_pip_installs_the_newest_installable_build_and_its_dependency(index, pip, tmp_path):
    server, _ = index
    target = tmp_path / "site"
    pip("install", "--index-url", server.url + "simple/", "--target", str(target), "kernels")
    installed = {p.name for p in target.iterdir()}
    # 1.2.0 needs Python >= 3.99; 1.1.0 needs tiny-dep >= 3.0, which no index has
    assert "kernels-1.0.0.dist-info" in installed
    assert "tiny_dep-2.0.dist-info" in installed
    assert (target / "kernels" / "__init__.py").read_text() == "VERSION = '1.0.0'\n"


def test_pip_download_gets_the_exact_bytes(index, pip, tmp_path):
    server, wheels = index
    dest = tmp_path / "downloads"
    pip("download", "--index-url", server.url + "simple/", "--dest", str(dest), "--no-deps", "kernels==1.0.0")
    downloaded = dest / wheels["kernels-1.0.0"].name
    assert hashlib.sha256(downloaded.read_bytes()).digest() == hashlib.sha256(wheels["kernels-1.0.0"].read_bytes()).digest()


def test_pip_resolves_from_core_metadata_without_downloading_wheels(index, pip, tmp_path):
    server, _ = index
    report = tmp_path / "report.json"
    before = len(server.access_lines())
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report), "--index-url", server.url + "simple/", "kernels")
    lines = server.access_lines()[before:]

    resolved = {item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]}
    assert resolved == {"kernels": "1.0.0", "tiny-dep": "2.0"}
    assert any('"GET /simple/kernels/" 200' in line for line in lines), lines
    assert any('"GET /simple/tiny-dep/" 200' in line for line in lines), lines
    # pip judged kernels 1.1.0 by its .metadata alone and never downloaded that wheel; it never
    # looked at 1.2.0 at all (requires-python on the page ruled it out)
    metadata = metadata_downloads(lines)
    wheels = wheel_downloads(lines)
    assert any("/kernels-1.1.0-" in line for line in metadata), lines
    assert not any("/kernels-1.1.0-" in line for line in wheels), lines
    assert not any("kernels-1.2.0-" in line for line in lines), lines
    assert any("/kernels-1.0.0-" in line for line in metadata), lines


def test_pip_sees_a_yanked_file_only_when_pinned(index, pip, tmp_path, wheelhouse_bin):
    server, _ = index
    # Yank through the catalog the server reads; the running server notices within a second.
    import sqlite3
    with sqlite3.connect(server.data_dir / "catalog.db") as db:
        db.execute("UPDATE files SET yanked_reason = 'broken build' WHERE filename LIKE 'kernels-1.1.0-%'")
    report = tmp_path / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--no-deps", "--report", str(report), "--index-url",
        server.url + "simple/", "kernels")
    assert json.loads(report.read_text())["install"][0]["metadata"]["version"] == "1.0.0"
