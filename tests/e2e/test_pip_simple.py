"""Real pip against the real binary: install, download and resolve from /simple/, taking the
PEP 658 metadata instead of the wheels it only needs to resolve."""

from __future__ import annotations

import hashlib
import json
import pathlib
import re
import socket
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


def test_a_page_past_64_kib_leaves_by_sendfile_whole_kept_alive_and_pipelined(tmp_path, wheelhouse_bin, start_server, pip):
    """A large page is sent from a sealed memory-file copy of its body (sendfile): what arrives must
    be the page, whole, in both formats, on a kept-alive connection and two pipelined in one write,
    with HEAD and a 304 still bodiless, and pip must install from it."""
    farm = tmp_path / "farm"
    for minor in range(160):
        build_wheel(farm, "big-project", f"1.{minor}", NATIVE_TAGS, files={"big_project/__init__.py": f"V = {minor}\n"})
    data = tmp_path / "data"
    assert ingest(wheelhouse_bin, data, farm).returncode == 0
    server = start_server(data)
    host, port = server.url.split("//")[1].rstrip("/").split(":")
    path = "/simple/big-project/"
    json_accept = "application/vnd.pypi.simple.v1+json"

    def exchange(raw: bytes, responses: int) -> list[tuple[bytes, bytes]]:
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(raw)
            got, out = b"", []
            while len(out) < responses:
                head_end = got.find(b"\r\n\r\n")
                if head_end >= 0:
                    head = got[:head_end]
                    length = re.search(rb"Content-Length: (\d+)", head)
                    bodiless = raw.startswith(b"HEAD") or length is None
                    end = head_end + 4 + (0 if bodiless else int(length.group(1)))
                    if len(got) >= end:
                        out.append((head, got[head_end + 4:end]))
                        got = got[end:]
                        continue
                piece = conn.recv(1 << 16)
                assert piece, f"the server closed after {len(out)} responses"
                got += piece
            assert got == b""
            return out

    json_get = f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {json_accept}\r\n\r\n".encode()
    html_get = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    (json_head, json_body), (html_head, html_body) = exchange(json_get + html_get, 2)
    assert len(json_body) > 64 * 1024 and len(html_body) > 64 * 1024
    page = json.loads(json_body)
    assert len(page["files"]) == 160
    assert html_body.count(b"<a ") == 160
    again = exchange(json_get * 3, 3)
    assert [body for _, body in again] == [json_body] * 3
    head_only = exchange(json_get.replace(b"GET", b"HEAD", 1), 1)
    assert head_only[0][1] == b"" and f"Content-Length: {len(json_body)}".encode() in head_only[0][0]
    etag = re.search(rb"ETag: (\S+)", json_head).group(1)
    (not_modified_head, _), = exchange(json_get.replace(b"\r\n\r\n", b"\r\nIf-None-Match: " + etag + b"\r\n\r\n"), 1)
    assert not_modified_head.startswith(b"HTTP/1.1 304")

    target = tmp_path / "site"
    pip("install", "--index-url", server.url + "simple/", "--target", str(target), "big-project")
    assert (target / "big_project" / "__init__.py").read_text() == "V = 159\n"
