"""CI publishing with the tools it already has: Debian's twine and curl against the real
binary, then pip installing what was uploaded."""

from __future__ import annotations

import hashlib
import os
import pathlib
import sqlite3
import subprocess

import pytest

from wheelbuilder import build_wheel


def make_token(binary, data: pathlib.Path, name: str, *extra: str) -> str:
    result = subprocess.run([str(binary), "token", "create", "--data", str(data), "--name", name, *extra],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def twine(url: str, token: str, *files: pathlib.Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWINE_")}
    env["HOME"] = str(files[0].parent)
    if "--cert" in extra:  # requests prefers REQUESTS_CA_BUNDLE (this machine sets one) to twine's --cert
        env["REQUESTS_CA_BUNDLE"] = extra[extra.index("--cert") + 1]
    return subprocess.run(["twine", "upload", "--disable-progress-bar", "--non-interactive", "--repository-url",
                           url + "legacy/", "-u", "__token__", "-p", token, *extra, *map(str, files)],
                          capture_output=True, text=True, timeout=120, env=env)


def curl(*args: str) -> tuple[int, str]:
    """Runs curl; returns the HTTP status and the body."""
    result = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args], capture_output=True, text=True,
                            timeout=120)
    body, _, status = result.stdout.rpartition("\n")
    return int(status), body


def rows(data: pathlib.Path) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT filename, sha256, uploaded_by FROM files ORDER BY filename").fetchall()


def spool_files(data: pathlib.Path) -> list[str]:
    return sorted(p.name for p in (data / "tmp").iterdir())


@pytest.fixture
def server(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    upload_token = make_token(wheelhouse_bin, data, "ci-all")
    scoped_token = make_token(wheelhouse_bin, data, "ci-kernels", "--project", "kernels*")
    read_token = make_token(wheelhouse_bin, data, "reader", "--scope", "read")
    running = start_server(data)
    return running, data, {"upload": upload_token, "scoped": scoped_token, "read": read_token}


def test_twine_uploads_and_reuploads_and_pip_installs(server, tmp_path, pip):
    running, data, tokens = server
    dist = tmp_path / "dist"
    first = build_wheel(dist, "kernels", "1.0.0+cu130torch2.10", summary="Fast kernels")
    second = build_wheel(dist, "kernels-helper", "0.3")
    uploaded = twine(running.url, tokens["upload"], first, second)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    assert [r[0] for r in rows(data)] == [first.name, second.name]
    assert {r[2] for r in rows(data)} == {"ci-all"}
    assert rows(data)[0][1] == hashlib.sha256(first.read_bytes()).hexdigest()

    again = twine(running.url, tokens["upload"], first)  # a CI re-run: harmless
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(rows(data)) == 2

    target = tmp_path / "site"
    pip("install", "--index-url", running.url + "simple/", "--target", str(target), "kernels")
    assert (target / "kernels-1.0.0+cu130torch2.10.dist-info").is_dir()
    assert spool_files(data) == []


def test_twine_reports_a_conflict_and_skip_existing_passes(server, tmp_path):
    running, data, tokens = server
    original = build_wheel(tmp_path / "a", "kernels", "1.0.0", files={"kernels/__init__.py": "A = 1\n"})
    assert twine(running.url, tokens["upload"], original).returncode == 0
    other = build_wheel(tmp_path / "b", "kernels", "1.0.0", files={"kernels/__init__.py": "B = 2\n"})
    refused = twine(running.url, tokens["upload"], other)
    assert refused.returncode != 0
    assert "409" in refused.stdout + refused.stderr and "File already exists" in refused.stdout + refused.stderr
    skipped = twine(running.url, tokens["upload"], other, extra=("--skip-existing",))
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert rows(data)[0][1] == hashlib.sha256(original.read_bytes()).hexdigest()


def test_curl_form_and_put_uploads(server, tmp_path):
    running, data, tokens = server
    form_wheel = build_wheel(tmp_path, "kernels", "2.0.0")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{form_wheel}", running.url + "legacy/")
    assert status == 201, body
    assert form_wheel.name in body
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{form_wheel}", running.url + "legacy")
    assert status == 200, body  # no redirect without the slash, and identical bytes are fine

    put_wheel = build_wheel(tmp_path, "kernels", "2.1.0")
    status, body = curl("-T", str(put_wheel), "-H", f"Authorization: Bearer {tokens['upload']}",
                        "-H", "Accept: application/json", running.url + "api/v1/files/")
    assert status == 201, body
    assert f'"filename":"{put_wheel.name}"' in body
    assert len(rows(data)) == 2


def test_credentials_and_scopes_are_enforced(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "other-project", "1.0")
    status, body = curl("-F", f"content=@{wheel}", "-D", "-", running.url + "legacy/")
    assert status == 401 and "WWW-Authenticate: Basic" in body, body
    status, body = curl("-u", "__token__:wh_" + "A" * 43, "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 401, body
    status, body = curl("-u", f"someone:{tokens['upload']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 401 and "__token__" in body, body
    status, body = curl("-u", f"__token__:{tokens['read']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 403 and "scope read" in body, body
    status, body = curl("-u", f"__token__:{tokens['scoped']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 403 and "other-project" in body, body
    status, body = curl("-T", str(wheel), "-u", f"__token__:{tokens['scoped']}", running.url + "api/v1/files/")
    assert status == 403, body
    assert rows(data) == [] and spool_files(data) == []


def test_bad_uploads_are_refused_precisely_and_leave_nothing(server, tmp_path):
    running, data, tokens = server
    auth = ("-u", f"__token__:{tokens['upload']}")
    corrupt = tmp_path / "kernels-1.0.0-py3-none-any.whl"
    corrupt.write_bytes(b"PK\x03\x04 this is not really a zip")
    cases = [
        (("-F", f"content=@{corrupt}"), 400, "zip"),
        (("-F", "name=kernels"), 400, "no 'content' part"),
        (("-F", f"content=@{corrupt};filename=../../evil.whl"), 400, ""),
        (("-H", "Content-Type: multipart/form-data", "--data-binary", "x"), 400, "boundary"),
        (("-H", "Content-Type: application/json", "--data-binary", "{}"), 400, "multipart/form-data"),
        (("-F", f"content=@{build_wheel(tmp_path / 'w', 'kernels', '3.0')}", "-F", "sha256_digest=" + "0" * 64), 400,
         "sha256"),
    ]
    for args, expected, phrase in cases:
        status, body = curl(*auth, *args, running.url + "legacy/")
        assert status == expected, (args, body)
        assert phrase in body, (args, body)
    # a body that ends before its closing boundary
    truncated = tmp_path / "truncated.txt"
    truncated.write_bytes(b"--XYZ\r\nContent-Disposition: form-data; name=\"content\"; filename=\"k-1.0-py3-none-any.whl\"\r\n\r\nPK")
    status, body = curl(*auth, "-H", "Content-Type: multipart/form-data; boundary=XYZ", "--data-binary", f"@{truncated}",
                        running.url + "legacy/")
    assert status == 400 and "closing boundary" in body, body
    assert rows(data) == []
    assert spool_files(data) == []
    assert list((data / "blobs" / "sha256").rglob("*")) == [] or all(p.is_dir() for p in (data / "blobs").rglob("*"))


def test_size_limit_answers_413_before_the_body(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = start_server(data, "--max-upload-size", "1000")
    wheel = build_wheel(tmp_path, "kernels", "1.0", files={"kernels/big.bin": os.urandom(5000)})
    status, body = curl("-u", f"__token__:{token}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 413 and "at most 1000" in body, body
    assert spool_files(data) == []


def test_concurrent_uploads_of_one_name_end_with_one_row(server, tmp_path):
    running, data, tokens = server
    wheels = [build_wheel(tmp_path / f"v{i}", "kernels", "5.0", files={"kernels/__init__.py": f"V = {i % 2}\n"})
              for i in range(8)]
    processes = [subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u",
                                   f"__token__:{tokens['upload']}", "-F", f"content=@{w}", running.url + "legacy/"],
                                  stdout=subprocess.PIPE, text=True) for w in wheels]
    statuses = sorted(int(p.communicate(timeout=60)[0]) for p in processes)
    assert statuses.count(201) == 1, statuses
    assert set(statuses) <= {200, 201, 409}, statuses
    assert len(rows(data)) == 1
    assert spool_files(data) == []


def test_a_client_that_stops_mid_body_leaves_no_spool_file(server, tmp_path):
    import socket
    import time
    running, data, tokens = server
    host, port = running.url.removeprefix("http://").rstrip("/").split(":")
    request = (f"PUT /api/v1/files/kernels-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {tokens['upload']}\r\nContent-Length: 1000000\r\n\r\n").encode()
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(request + b"PK\x03\x04" + bytes(50000))
        time.sleep(0.3)
        assert len(spool_files(data)) == 1  # the upload was spooling
    deadline = time.monotonic() + 5
    while spool_files(data) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spool_files(data) == []
    assert rows(data) == []
    status, _ = curl(running.url + "healthz")
    assert status == 200


def test_wheels_larger_than_a_mebibyte_upload_by_every_route(server, tmp_path, pip):
    running, data, tokens = server
    payload = {"big_kernels/kernel.so": os.urandom(3 << 20)}  # incompressible: the wheel stays > 3 MiB
    put_wheel = build_wheel(tmp_path, "big-kernels", "1.0.0", files=payload)
    form_wheel = build_wheel(tmp_path, "big-kernels", "1.1.0", files=payload)
    twine_wheel = build_wheel(tmp_path, "big-kernels", "1.2.0", files=payload)
    assert put_wheel.stat().st_size > 3 << 20

    status, body = curl("-T", str(put_wheel), "-u", f"__token__:{tokens['upload']}", running.url + "api/v1/files/")
    assert status == 201, body
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{form_wheel}", running.url + "legacy/")
    assert status == 201, body
    uploaded = twine(running.url, tokens["upload"], twine_wheel)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr

    stored = {name: sha for name, sha, _ in rows(data)}
    for wheel in (put_wheel, form_wheel, twine_wheel):
        assert stored[wheel.name] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert spool_files(data) == []
