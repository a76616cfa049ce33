"""Uploads the index must refuse, each refusal checked three ways against the real binary: the
status code, a message that says what was wrong, and that nothing was stored (the /simple/ JSON
page, the catalog rows, the spool folder).

The full-queue test makes the ingest workers busy deterministically: the test holds SQLite's write
lock on catalog.db (as a concurrent `wheelhouse ingest` or a long admin write would), so the one
worker waits inside its catalog write while the test fills the queue behind it."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from test_uploads import curl, make_token, rows, spool_files, twine
from wheelbuilder import build_wheel

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


# --- helpers ---------------------------------------------------------------------------------

def simple_filenames(url: str, project: str) -> list[str] | None:
    """The filenames /simple/<project>/ lists as PEP 691 JSON; None when the project is unknown."""
    request = urllib.request.Request(url + f"simple/{project}/", headers={"Accept": SIMPLE_JSON})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return sorted(entry["filename"] for entry in json.load(response)["files"])
    except urllib.error.HTTPError as failure:
        if failure.code == 404:
            return None
        raise


def simple_project(url: str, project: str) -> dict:
    request = urllib.request.Request(url + f"simple/{project}/", headers={"Accept": SIMPLE_JSON})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def project_status(url: str, project: str) -> str:
    with urllib.request.urlopen(url + f"api/v1/projects/{project}", timeout=10) as response:
        return json.load(response)["status"]


def blob_exists(data: pathlib.Path, sha256: str) -> bool:
    return (data / "blobs" / "sha256" / sha256[:2] / sha256[2:4] / sha256).is_file()


def headers_of(text: str) -> dict[str, str]:
    """The headers of the last response in curl's -D - output (lower-cased names)."""
    block = text.replace("\r\n", "\n").split("\n\n")
    heads = [part for part in block if part.startswith("HTTP/")]
    fields = {}
    for line in heads[-1].splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    return host, int(port)


class RawResponse:
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


def read_response(stream) -> RawResponse | None:
    """One HTTP/1.1 response from a socket file; None when the server closed the connection."""
    status_line = stream.readline()
    if not status_line:
        return None
    match = re.match(rb"HTTP/1\.[01] (\d{3})", status_line)
    assert match, status_line
    headers: dict[str, str] = {}
    while True:
        line = stream.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = stream.read(length) if length else b""
    return RawResponse(int(match.group(1)), headers, body)


def put_request(filename: str, token: str, length: int, extra: str = "") -> bytes:
    return (f"PUT /api/v1/files/{filename} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


def metric(url: str, series: str) -> float:
    with urllib.request.urlopen(url + "metrics", timeout=10) as response:
        page = response.read().decode()
    match = re.search(r"^" + re.escape(series) + r" (\S+)$", page, re.MULTILINE)
    assert match, f"no sample {series} in /metrics"
    return float(match.group(1))


def wait_for(condition, what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def curl_background(*args: str) -> subprocess.Popen:
    return subprocess.Popen(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen) -> tuple[int, str]:
    out, err = process.communicate(timeout=60)
    body, _, status = out.rpartition("\n")
    assert status.isdigit(), err
    return int(status), body


@pytest.fixture
def server(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    tokens = {
        "upload": make_token(wheelhouse_bin, data, "ci"),
        "admin": make_token(wheelhouse_bin, data, "root", "--scope", "admin"),
    }
    return start_server(data), data, tokens


# --- a full ingest queue ---------------------------------------------------------------------

def test_a_full_ingest_queue_answers_503_with_retry_after(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    admin = make_token(wheelhouse_bin, data, "root", "--scope", "admin")
    running = start_server(data, "--ingest-workers", "1", "--ingest-queue", "1")
    auth = ("-u", f"__token__:{token}")
    dist = tmp_path / "dist"
    waiting = [build_wheel(dist, "kernels", f"1.0.{i}") for i in range(8)]
    refused_put, refused_form = (build_wheel(dist, "kernels", version) for version in ("1.2", "1.3"))
    refused_late = build_wheel(dist, "kernels", "1.4", files={"kernels/blob.bin": os.urandom(100_000)})
    assert curl(*auth, "-T", str(build_wheel(dist, "other", "1.0")), running.url + "api/v1/files/")[0] == 201
    depth = "wheelhouse_ingest_queue_depth"
    assert metric(running.url, "wheelhouse_ingest_queue_capacity") == 1

    # An upload whose headers are accepted while the queue is empty, its body held back.
    late = socket.create_connection(address(running.url), timeout=30)
    late_body = refused_late.read_bytes()
    held_back = len(late_body) - 1000
    late.sendall(put_request(refused_late.name, token, len(late_body)) + late_body[:held_back])
    wait_for(lambda: len(spool_files(data)) == 1, "the held-back upload to start spooling")

    writer = sqlite3.connect(data / "catalog.db", isolation_level=None, timeout=0)
    writer.execute("BEGIN IMMEDIATE")  # the catalog's write lock: the commits will wait for it
    started = []
    try:
        # Each upload is validated and its blob put in place, then its row waits for the write
        # lock. Once as many rows wait as the queue and the workers hold, the worker waits to hand
        # its row over, and the next upload waits in the queue.
        for wheel in waiting:
            started.append(curl_background(*auth, "-T", str(wheel), running.url + "api/v1/files/"))
            wait_for(lambda: blob_exists(data, hashlib.sha256(wheel.read_bytes()).hexdigest())
                     or metric(running.url, depth) == 1, f"{wheel.name} to reach a worker or the queue")
            if metric(running.url, depth) == 1:
                break
        assert metric(running.url, depth) == 1, "the queue never filled"
        waiting = waiting[:len(started)]

        # A new upload is refused at its headers, before the body: PUT and the form alike.
        status, text = curl(*auth, "-D", "-", "-T", str(refused_put), running.url + "api/v1/files/")
        assert status == 503, text
        assert headers_of(text)["retry-after"] == "5", text
        assert "the index is busy ingesting other uploads; retry shortly" in text
        status, text = curl(*auth, "-D", "-", "-F", f"content=@{refused_form}", running.url + "legacy/")
        assert status == 503, text
        assert headers_of(text)["retry-after"] == "5", text
        assert "busy ingesting other uploads" in text

        # One whose body completes now finds no room either.
        late.sendall(late_body[held_back:])
        answer = read_response(late.makefile("rb"))
        assert answer is not None and answer.status == 503, answer and answer.text
        assert answer.headers["retry-after"] == "5"
        assert "busy ingesting other uploads" in answer.text

        # Admin writes share the workers and say so the same way.
        status, text = curl("-D", "-", "-X", "PUT", "-H", f"Authorization: Bearer {admin}", "--data",
                            '{"status": "archived"}', running.url + "api/v1/projects/other/status")
        assert status == 503, text
        assert headers_of(text)["retry-after"] == "2", text
        assert "busy" in text
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        late.close()

    assert [finished(upload)[0] for upload in started] == [201] * len(started)
    assert metric(running.url, 'wheelhouse_ingests_total{outcome="busy"}') == 3
    assert simple_filenames(running.url, "kernels") == sorted(wheel.name for wheel in waiting)
    assert project_status(running.url, "other") == "active"  # the refused admin write did not happen
    assert sorted(r[0] for r in rows(data)) == sorted([*(w.name for w in waiting), "other-1.0-py3-none-any.whl"])
    wait_for(lambda: spool_files(data) == [], "the refused uploads' spool files to go")


# --- archived projects -----------------------------------------------------------------------

def set_status(url: str, admin: str, project: str, status: str, reason: str | None = None) -> tuple[int, str]:
    body = {"status": status} if reason is None else {"status": status, "reason": reason}
    return curl("-X", "PUT", "-H", f"Authorization: Bearer {admin}", "-H", "Content-Type: application/json",
                "--data", json.dumps(body), url + f"api/v1/projects/{project}/status")


@pytest.mark.parametrize("status", ["archived", "quarantined"])
def test_uploads_to_an_archived_or_quarantined_project_are_refused(server, tmp_path, status):
    running, data, tokens = server
    auth = ("-u", f"__token__:{tokens['upload']}")
    kept = build_wheel(tmp_path / "a", "kernels", "1.0")
    assert curl(*auth, "-F", f"content=@{kept}", running.url + "legacy/")[0] == 201

    code, body = set_status(running.url, tokens["admin"], "kernels", status, "superseded by kernels2")
    assert code == 200, body
    assert json.loads(body) == {"name": "kernels", "status": status, "status_reason": "superseded by kernels2"}

    new = build_wheel(tmp_path / "b", "kernels", "1.1")
    expected = f"ask an admin to set project 'kernels' active: it is {status} and takes no new files"
    code, body = curl(*auth, "-F", f"content=@{new}", running.url + "legacy/")
    assert code == 403 and expected in body, body
    code, body = curl(*auth, "-T", str(new), running.url + "api/v1/files/")
    assert code == 403 and expected in body, body
    uploaded = twine(running.url, tokens["upload"], new)
    assert uploaded.returncode != 0 and "403" in uploaded.stdout + uploaded.stderr, uploaded.stdout + uploaded.stderr
    said = " ".join((uploaded.stdout + uploaded.stderr).split())  # twine wraps the reason across lines
    assert expected in said, said
    # The same name spelled another way is the same project.
    other_spelling = build_wheel(tmp_path / "c", "Kernels", "1.2")
    code, body = curl(*auth, "-T", str(other_spelling), running.url + "api/v1/files/")
    assert code == 403 and expected in body, body

    # A CI re-run of a file already there is not a new file.
    assert curl(*auth, "-F", f"content=@{kept}", running.url + "legacy/")[0] == 200
    # PEP 792: a quarantined project's page lists no files at all; an archived one keeps its files.
    assert simple_filenames(running.url, "kernels") == ([kept.name] if status == "archived" else [])
    assert simple_project(running.url, "kernels")["project-status"]["status"] == status
    assert [r[0] for r in rows(data)] == [kept.name]
    assert not blob_exists(data, hashlib.sha256(new.read_bytes()).hexdigest())
    assert spool_files(data) == []

    # Set active again, the same upload goes through: the status was the only obstacle.
    assert set_status(running.url, tokens["admin"], "kernels", "active")[0] == 200
    assert curl(*auth, "-T", str(new), running.url + "api/v1/files/")[0] == 201
    assert simple_filenames(running.url, "kernels") == sorted([kept.name, new.name])


def test_only_an_admin_token_sets_a_project_status(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")
    assert curl("-u", f"__token__:{tokens['upload']}", "-T", str(wheel), running.url + "api/v1/files/")[0] == 201
    code, body = set_status(running.url, tokens["upload"], "kernels", "archived")
    assert code == 403 and "has scope upload" in body, body
    code, body = set_status(running.url, tokens["admin"], "kernels", "retired")
    assert code == 400 and "'retired' is not one of active, archived, quarantined, deprecated" in body, body
    code, body = set_status(running.url, tokens["admin"], "no-such-project", "archived")
    assert code == 404 and "no project named 'no-such-project'" in body, body
    assert curl("-u", f"__token__:{tokens['upload']}", "-T", str(build_wheel(tmp_path, "kernels", "1.1")),
                running.url + "api/v1/files/")[0] == 201


# --- a path where a filename belongs -----------------------------------------------------------

def test_a_path_in_the_put_url_is_refused(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")  # valid: only the name it is sent under is wrong
    auth = ("-H", f"Authorization: Bearer {tokens['upload']}")
    encoded = "400 Bad Request: the path holds an encoded '/' or '\\' inside a segment"
    cases = [
        ("api/v1/files/..%2Fevil.whl", encoded),
        ("api/v1/files/%2E%2E%2Fevil.whl", encoded),
        ("api/v1/files/..%2F..%2Fkernels-1.0-py3-none-any.whl", encoded),
        ("api/v1/files/..%5Ckernels-1.0-py3-none-any.whl", encoded),
        ("api/v1/files/../files/kernels-1.0-py3-none-any.whl", "the path has a '..' segment"),
        ("api/v1/files/kernels-1.0-py3-none-any.whl%00.whl", "the path holds a control character"),
    ]
    for path, phrase in cases:
        status, body = curl("--path-as-is", *auth, "-T", str(wheel), running.url + path)
        assert status == 400, (path, body)
        assert phrase in body, (path, body)
    assert rows(data) == [] and spool_files(data) == []
    assert simple_filenames(running.url, "kernels") is None
    assert simple_filenames(running.url, "evil") is None


@pytest.mark.parametrize("given", ["../../evil.whl", "../kernels-1.0-py3-none-any.whl",
                                   "dist/kernels-1.0-py3-none-any.whl", "/tmp/kernels-1.0-py3-none-any.whl",
                                   "..\\kernels-1.0-py3-none-any.whl"])
def test_a_path_in_the_form_filename_is_refused(server, tmp_path, given):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")
    # A hand-written form: curl would quote or strip some of these names.
    boundary = "wheelhouse-test-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\":action\"\r\n\r\nfile_upload\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"content\"; filename=\"{given}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + wheel.read_bytes() + \
        f"\r\n--{boundary}--\r\n".encode()
    form = tmp_path / "form.bin"
    form.write_bytes(body)
    status, text = curl("-u", f"__token__:{tokens['upload']}", "-H", f"Content-Type: multipart/form-data; boundary={boundary}",
                        "--data-binary", f"@{form}", running.url + "legacy/")
    assert status == 400, text
    position = min(i for i, c in enumerate(given) if c in "/\\") + 1
    separator = "'/'" if given[position - 1] == "/" else "'\\'"
    assert f"path separator {separator} at position {position}; give a file name, not a path" in text, text
    assert given.replace("\\", "\\\\") in text or given in text, text
    assert rows(data) == [] and spool_files(data) == []
    assert simple_filenames(running.url, "kernels") is None


def test_curl_sending_a_valid_wheel_under_a_path_is_refused(server, tmp_path):
    """The case test_uploads.py leaves loose: curl -F 'content=@x.whl;filename=../../evil.whl', a valid wheel."""
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{wheel};filename=../../evil.whl",
                        running.url + "legacy/")
    assert status == 400, body
    assert ("wheel filename: path separator '/' at position 3; give a file name, not a path\n"
            "the filename is '../../evil.whl'" in body), body
    assert rows(data) == [] and spool_files(data) == []
    assert simple_filenames(running.url, "evil") is None and simple_filenames(running.url, "kernels") is None


# --- bodies that do not match their framing ----------------------------------------------------

def test_bytes_past_the_content_length_are_not_stored(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")
    payload = wheel.read_bytes()
    with socket.create_connection(address(running.url), timeout=30) as connection:
        stream = connection.makefile("rb")
        connection.sendall(put_request(wheel.name, tokens["upload"], len(payload)) + payload +
                           b"TRAILING BYTES THAT ARE NOT PART OF THE WHEEL\r\n\r\n")
        first = read_response(stream)
        assert first is not None and first.status == 201, first and first.text
        # The rest is read as the next request, which it is not: refused, and the connection closed.
        second = read_response(stream)
        assert second is not None and second.status == 400, second and second.text
        assert "malformed HTTP request" in second.text, second.text
        assert stream.read() == b""
    stored = {name: sha for name, sha, _ in rows(data)}
    assert stored == {wheel.name: hashlib.sha256(payload).hexdigest()}
    download = running.get(f"/files/{stored[wheel.name]}/{wheel.name}").read()
    assert download == payload
    assert spool_files(data) == []


def test_a_content_length_shorter_than_the_wheel_is_refused(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0", files={"kernels/__init__.py": "X = 1\n" * 200})
    payload = wheel.read_bytes()
    with socket.create_connection(address(running.url), timeout=30) as connection:
        stream = connection.makefile("rb")
        connection.sendall(put_request(wheel.name, tokens["upload"], len(payload) - 300) + payload)
        first = read_response(stream)
    assert first is not None and first.status == 400, first and first.text
    assert "zip" in first.text.lower(), first.text
    assert wheel.name in first.text, first.text
    assert rows(data) == [] and spool_files(data) == []
    assert simple_filenames(running.url, "kernels") is None


def test_a_form_cut_short_by_its_content_length_is_refused(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path, "kernels", "1.0")
    boundary = "XYZ"
    form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"content\"; filename=\"{wheel.name}\"\r\n\r\n"
            ).encode() + wheel.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    header = (f"POST /legacy/ HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {tokens['upload']}\r\n"
              f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(form) - 20}\r\n\r\n")
    with socket.create_connection(address(running.url), timeout=30) as connection:
        connection.sendall(header.encode() + form)
        answer = read_response(connection.makefile("rb"))
    assert answer is not None and answer.status == 400, answer and answer.text
    assert "closing boundary" in answer.text, answer.text
    assert rows(data) == [] and spool_files(data) == []


def test_two_content_parts_in_one_form_are_refused(server, tmp_path):
    running, data, tokens = server
    first = build_wheel(tmp_path / "a", "kernels", "1.0")
    second = build_wheel(tmp_path / "b", "kernels", "1.1")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{first}", "-F", f"content=@{second}",
                        running.url + "legacy/")
    assert status == 400, body
    assert "two 'content' parts: upload one file (wheel or sdist) per request" in body, body
    # The same with the same wheel twice: still one wheel per request.
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{first}", "-F", f"content=@{first}",
                        running.url + "legacy/")
    assert status == 400 and "two 'content' parts" in body, body
    assert rows(data) == [] and spool_files(data) == []
    assert simple_filenames(running.url, "kernels") is None


# --- the token command ---------------------------------------------------------------------------

def token_command(binary, data: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "token", *args, "--data", str(data)], capture_output=True, text=True,
                          timeout=30)


def parse_columns(binary, data):
    listed = token_command(binary, data, "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    header = lines[0]
    columns = ["NAME", "SCOPE", "PROJECTS", "CREATED", "EXPIRES", "LAST USED", "STATE"]
    starts = [header.index(column) for column in columns]
    table = {}
    for line in lines[1:]:
        cells = [line[start:end].strip() for start, end in zip(starts, starts[1:] + [len(line)])]
        table[cells[0]] = dict(zip(columns, cells))
    return table


def test_token_create_list_and_revoke(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    created = token_command(wheelhouse_bin, data, "create", "--name", "ci-kernels", "--project", "kernels*",
                            "--expires", "90d")
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    assert re.fullmatch(r"wh_\S{20,}", secret), created.stdout  # the secret alone on stdout
    expiry = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 90 * 86400))
    assert "token 'ci-kernels' (upload kernels*, expires " + expiry in created.stderr, created.stderr
    assert "shown only this once" in created.stderr
    reader = make_token(wheelhouse_bin, data, "team", "--scope", "read")
    assert reader.startswith("wh_")

    table = parse_columns(wheelhouse_bin, data)
    assert set(table) == {"ci-kernels", "team"}
    assert table["ci-kernels"]["SCOPE"] == "upload" and table["ci-kernels"]["PROJECTS"] == "kernels*"
    assert table["ci-kernels"]["EXPIRES"].startswith(expiry) and table["ci-kernels"]["EXPIRES"].endswith("Z")
    assert table["ci-kernels"]["LAST USED"] == "-" and table["ci-kernels"]["STATE"] == "active"
    assert table["team"]["SCOPE"] == "read" and table["team"]["PROJECTS"] == "*"
    assert table["team"]["EXPIRES"] == "-"
    assert secret not in token_command(wheelhouse_bin, data, "list").stdout  # only hashes are stored

    running = start_server(data)
    first = build_wheel(tmp_path / "a", "kernels", "1.0")
    status, body = curl("-u", f"__token__:{secret}", "-F", f"content=@{first}", running.url + "legacy/")
    assert status == 201, body
    used = parse_columns(wheelhouse_bin, data)["ci-kernels"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", used["LAST USED"]), used
    assert used["LAST USED"].startswith(time.strftime("%Y-%m-%d", time.gmtime()))
    assert parse_columns(wheelhouse_bin, data)["team"]["LAST USED"] == "-"

    revoked = token_command(wheelhouse_bin, data, "revoke", "ci-kernels")
    assert revoked.returncode == 0, revoked.stderr
    assert "token 'ci-kernels' revoked" in revoked.stderr
    assert parse_columns(wheelhouse_bin, data)["ci-kernels"]["STATE"] == "revoked"

    # The running server honours it at once, on every upload route.
    second = build_wheel(tmp_path / "b", "kernels", "1.1")
    for args in (("-F", f"content=@{second}", running.url + "legacy/"),
                 ("-T", str(second), running.url + "api/v1/files/")):
        status, body = curl("-u", f"__token__:{secret}", *args)
        assert status == 401, body
        assert "not valid here (unknown, expired or revoked)" in body, body
    uploaded = twine(running.url, secret, second)
    assert uploaded.returncode != 0
    said = " ".join((uploaded.stdout + uploaded.stderr).split())
    assert "401 Unauthorized" in said and "(unknown, expired or revoked)" in said, said
    assert simple_filenames(running.url, "kernels") == [first.name]
    assert [r[0] for r in rows(data)] == [first.name]
    assert spool_files(data) == []


def test_token_revoke_and_create_refuse_mistakes(tmp_path, wheelhouse_bin):
    data = tmp_path / "data"
    data.mkdir()
    make_token(wheelhouse_bin, data, "ci")
    again = token_command(wheelhouse_bin, data, "create", "--name", "ci")
    assert again.returncode == 1 and again.stdout == ""
    assert "a token named 'ci' exists already" in again.stderr, again.stderr
    missing = token_command(wheelhouse_bin, data, "revoke", "nobody")
    assert missing.returncode == 1 and "no token named 'nobody'" in missing.stderr, missing.stderr
    for expires, phrase in (("90", "has no unit after 90"), ("0d", "is zero"), ("90x", "unknown unit 'x'"),
                            ("101y", "too long"), ("d", "needs a number")):
        refused = token_command(wheelhouse_bin, data, "create", "--name", "later", "--expires", expires)
        assert refused.returncode == 1, (expires, refused.stderr)
        assert phrase in refused.stderr and refused.stdout == "", (expires, refused.stderr)
    scope = token_command(wheelhouse_bin, data, "create", "--name", "later", "--scope", "owner")
    assert scope.returncode == 1 and "owner" in scope.stderr, scope.stderr
    assert set(parse_columns(wheelhouse_bin, data)) == {"ci"}  # nothing half-made


def test_an_expired_token_is_refused(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    created = token_command(wheelhouse_bin, data, "create", "--name", "short", "--expires", "5s")
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    made = time.monotonic()
    running = start_server(data)
    first = build_wheel(tmp_path / "a", "kernels", "1.0")
    status, body = curl("-u", f"__token__:{secret}", "-T", str(first), running.url + "api/v1/files/")
    assert status == 201, body
    assert time.monotonic() - made < 5, "the machine was too slow to upload within the token's lifetime"
    assert parse_columns(wheelhouse_bin, data)["short"]["STATE"] == "active"

    time.sleep(max(0.0, made + 5.5 - time.monotonic()))
    second = build_wheel(tmp_path / "b", "kernels", "1.1")
    status, body = curl("-u", f"__token__:{secret}", "-T", str(second), running.url + "api/v1/files/")
    assert status == 401, body
    assert "not valid here (unknown, expired or revoked)" in body, body
    assert parse_columns(wheelhouse_bin, data)["short"]["STATE"] == "expired"
    assert simple_filenames(running.url, "kernels") == [first.name]
    assert spool_files(data) == []
