"""`wheelhouse serve` on a data folder it cannot write (a container volume mounted read-only, a
host folder owned by someone else) refuses to start: one line naming the folder and the
reason, and a non-zero exit, rather than serving reads and failing every upload."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from server_process import ServerProcess, wheelhouse_binary


def serve_unwritable(data: pathlib.Path) -> subprocess.CompletedProcess:
    command = [wheelhouse_binary(), "serve", "--listen", "127.0.0.1:0", "--data", str(data)]
    if os.geteuid() == 0:
        # root writes anywhere: run as nobody, for whom the root-owned folder is read-only.
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    else:
        data.chmod(0o555)
        for sub in data.rglob("*"):
            if sub.is_dir():
                sub.chmod(0o555)
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    result.output = result.stdout + result.stderr  # spdlog's error line goes to stdout
    return result


@pytest.fixture
def data():
    """A folder whose parents everyone may traverse (pytest's own are private to root)."""
    parent = pathlib.Path(tempfile.mkdtemp(prefix="wheelhouse-unwritable-"))
    parent.chmod(0o755)
    folder = parent / "data"
    folder.mkdir(mode=0o755)
    yield folder
    for path in [parent, *parent.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(parent)


def test_an_empty_unwritable_folder_is_refused(data):
    result = serve_unwritable(data)
    assert result.returncode == 1, result.output
    assert f"cannot use data folder {data}" in result.output
    assert "Permission denied" in result.output
    assert "listening" not in result.output


def test_a_populated_unwritable_folder_is_refused(data):
    with ServerProcess(data):  # a first run lays out catalog.db, blobs/ and tmp/
        pass
    assert (data / "blobs").is_dir() and (data / "tmp").is_dir() and (data / "catalog.db").is_file()
    for folder in [data, *[p for p in data.rglob("*") if p.is_dir()]]:
        folder.chmod(0o755)
    result = serve_unwritable(data)
    assert result.returncode == 1, result.output
    assert f"cannot use data folder {data}" in result.output
    assert "not writable" in result.output and "Permission denied" in result.output
    assert "listening" not in result.output
