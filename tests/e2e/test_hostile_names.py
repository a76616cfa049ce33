"""An attacker's second pass over issue 24 items 1, 4 and 6 (test_hostile_access.py has the
first): a leaked token kept alive past its revocation by a request it holds open, names that
are not UTF-8 in the JSON API's answers, targets the API refuses, a HEAD refused for its
headers, a variant redirect read from the raw target; and, as held, the spellings and globs a
limited token meets, form parts that name two files, imports and registrations by a limited or
a revoked token, and a token that expires while its form upload arrives.

Tests marked xfail(strict=True) reproduce a finding: each fails until the server is fixed, and
the suite then says so (XPASS), so the mark comes off with the fix."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from test_hostile_access import NoRedirect, blobs, request, sdist
from test_uploads import curl, make_token
from wheelbuilder import build_wheel

OWN, OTHER = "gamma-proj", "beta-proj"


def address(running) -> tuple[str, int]:
    host, port = running.url.removeprefix("http://").rstrip("/").split(":")
    return host, int(port)


def read_answer(client: socket.socket) -> bytes:
    answer = b""
    while chunk := client.recv(65536):
        answer += chunk
    return answer


def send_holding_the_body(running, method: str, path: str, token: str, body: bytes, meanwhile) -> bytes:
    """Sends the headers and the body's first byte, runs `meanwhile` while the rest of the body is
    still on its way (the headers have been checked by then), then the rest; returns the answer."""
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection(address(running), timeout=30) as client:
        client.sendall(head + body[:1])
        time.sleep(0.5)
        meanwhile()
        client.sendall(body[1:])
        return read_answer(client)


def revoke(wheelhouse_bin, data, name: str) -> None:
    revoked = subprocess.run([str(wheelhouse_bin), "token", "revoke", "--data", str(data), name],
                             capture_output=True, text=True, timeout=30)
    assert revoked.returncode == 0, revoked.stderr


def catalog(data, query: str, *parameters) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute(query, parameters).fetchall()


def form_part(disposition: str, content: bytes, boundary: str = "b0undary") -> bytes:
    return (f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: application/octet-stream\r\n\r\n"
            .encode() + content + b"\r\n")


@pytest.fixture
def curated(tmp_path, wheelhouse_bin, start_server):
    """A public index holding a wheel and an sdist of each of two projects."""
    data = tmp_path / "data"
    data.mkdir()
    shelf = tmp_path / "shelf"
    files = [build_wheel(shelf, OWN, "1.0"), sdist(shelf, OWN, "1.0"), build_wheel(shelf, OTHER, "1.0"),
             sdist(shelf, OTHER, "1.0")]
    ingested = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), *map(str, files)],
                              capture_output=True, text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stderr
    return data, start_server(data)


# ---- item 4, beyond uploads and registrations: every change a token makes ----

# what: (the leaked token's --project, method, path, JSON body, a query of the state it would change)
CHANGES = {
    "mint an admin token": (None, "POST", "/api/v1/tokens", {"name": "backdoor", "scope": "admin"},
                            "SELECT name FROM tokens WHERE name = 'backdoor'"),
    "revoke another token": (None, "DELETE", "/api/v1/tokens/operator", {},
                             "SELECT revoked_ms IS NOT NULL FROM tokens WHERE name = 'operator'"),
    "yank a file": (OWN, "POST", "/api/v1/files/gamma_proj-1.0-py3-none-any.whl/yank", {"reason": "leaked"},
                    "SELECT yanked_reason FROM files WHERE filename = 'gamma_proj-1.0-py3-none-any.whl'"),
    "delete a file": (OWN, "DELETE", "/api/v1/files/gamma_proj-1.0.tar.gz", {},
                      "SELECT filename FROM files WHERE filename = 'gamma_proj-1.0.tar.gz'"),
    "quarantine a project": (OWN, "PUT", "/api/v1/projects/gamma-proj/status", {"status": "quarantined"},
                             "SELECT status FROM projects WHERE name = 'gamma-proj'"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_token_revoked_while_its_admin_request_arrives_changes_nothing(curated, wheelhouse_bin, change):
    """Revoking a leaked admin token must end what it can do. A request whose headers were checked
    before the revocation is held open by trickling its body (routes that take none read one all
    the same), so a thief keeps one in flight and completes it once the revocation is seen."""
    data, running = curated
    projects, method, path, body, state = CHANGES[change]
    limits = ["--project", projects] if projects else []
    token = make_token(wheelhouse_bin, data, "leaked", "--scope", "admin", *limits)
    make_token(wheelhouse_bin, data, "operator", "--scope", "admin")
    before = catalog(data, state)
    answer = send_holding_the_body(running, method, path, token, json.dumps(body).encode(),
                                   lambda: revoke(wheelhouse_bin, data, "leaked"))
    status = int(answer.split(b" ", 2)[1])
    assert 400 <= status < 500, answer[:300]
    assert catalog(data, state) == before, answer[:300]


def test_a_token_that_expires_while_its_admin_request_arrives_mints_nothing(curated, wheelhouse_bin):
    data, running = curated
    token = make_token(wheelhouse_bin, data, "short-lived", "--scope", "admin", "--expires", "2s")
    answer = send_holding_the_body(running, "POST", "/api/v1/tokens", token,
                                   json.dumps({"name": "backdoor", "scope": "admin"}).encode(),
                                   lambda: time.sleep(2.5))
    status = int(answer.split(b" ", 2)[1])
    assert 400 <= status < 500, answer[:300]
    assert catalog(data, "SELECT name FROM tokens WHERE name = 'backdoor'") == []


def test_a_token_that_expires_while_its_form_upload_arrives_stores_nothing(tmp_path, wheelhouse_bin, start_server):
    """The upload check again in the commit, through twine's route and by expiry (the revocation
    by PUT is test_hostile_access's)."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "short-lived", "--scope", "upload", "--project", OWN, "--expires", "2s")
    running = start_server(data)
    wheel = build_wheel(tmp_path / "shelf", OWN, "5.0")
    boundary = "b0undary"
    form = form_part(f"form-data; name=\"content\"; filename=\"{wheel.name}\"", wheel.read_bytes(), boundary)
    form += f"--{boundary}--\r\n".encode()
    head = (f"POST /legacy/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(form)}\r\n"
            f"Connection: close\r\n\r\n").encode()
    with socket.create_connection(address(running), timeout=30) as client:
        client.sendall(head + form[:200])
        time.sleep(2.5)  # the token expires while the body is on its way
        client.sendall(form[200:])
        answer = read_answer(client)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:300]
    assert b"revoked or expired while the request was on its way" in answer
    assert catalog(data, "SELECT filename FROM files") == [] and blobs(data) == []


# ---- item 4: registrations and imports by a token revoked meanwhile, or limited ----

def slow_asset(fake_github, tmp_path, version: str):
    """A wheel of OWN on a release of the fake GitHub, served at 100 kB/s (about 6 s whole)."""
    module = OWN.replace("-", "_")
    wheel = build_wheel(tmp_path / "dist", OWN, version,
                        files={f"{module}/__init__.py": "", f"{module}/blob.bin": random.Random(7).randbytes(600_000)})
    fake_github.add_release("owner", "repo", "v" + version, [wheel])
    fake_github.set_fault(wheel.name, slow_bps=100_000)
    return wheel


@pytest.mark.parametrize("route", ["remote", "import/github"])
def test_a_token_revoked_while_its_registration_fetches_stores_nothing(route, fake_github, tmp_path, wheelhouse_bin,
                                                                     start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci-gamma", "--scope", "upload", "--project", OWN)
    running = start_server(data, *fake_github.server_flags())
    wheel = slow_asset(fake_github, tmp_path, "7.0")
    body = ({"url": fake_github.download_url("owner", "repo", "v7.0", wheel.name), "verify": True} if route == "remote"
            else {"repository": "owner/repo", "tag": "v7.0", "verify": True})
    revoker = threading.Timer(1.5, revoke, (wheelhouse_bin, data, "ci-gamma"))
    revoker.start()
    try:
        status, answer, _ = request(running.url + "api/v1/" + route, token, "POST", json.dumps(body).encode(),
                                    {"Content-Type": "application/json"})
    finally:
        revoker.join()
    report = json.loads(answer)
    if route == "import/github":  # the import answers for each asset
        assert status == 200 and report["added"] == 0 and report["rejected"] == 1, report
        report = report["files"][0]
    else:
        assert status == 401, report
    assert report["outcome"] == "rejected", report
    assert "revoked or expired while the request was on its way" in report["error"], report
    assert catalog(data, "SELECT filename FROM files") == []


def test_a_limited_token_imports_only_its_own_projects_assets(fake_github, tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci-gamma", "--scope", "upload", "--project", OWN)
    running = start_server(data, *fake_github.server_flags())
    dist = tmp_path / "dist"
    own = build_wheel(dist, OWN, "7.0")
    other = build_wheel(dist, OTHER, "7.0")
    # The other project under another spelling of its name, and a wheel name of no project.
    respelled = dist / "Beta.Proj-7.1-py3-none-any.whl"
    shutil.copy(build_wheel(tmp_path / "respelled", OTHER, "7.1"), respelled)
    nameless = dist / "x.whl"
    nameless.write_bytes(b"not a wheel")
    fake_github.add_release("owner", "repo", "v7", [own, other, respelled, nameless, sdist(dist, OTHER, "7.0")])
    fake_github.clear_log()
    status, answer, _ = request(running.url + "api/v1/import/github", token, "POST",
                                json.dumps({"repository": "owner/repo", "tag": "v7"}).encode(),
                                {"Content-Type": "application/json"})
    report = json.loads(answer)
    assert status == 200 and report["added"] == 1 and report["rejected"] == 4, report
    outcomes = {entry["filename"]: entry for entry in report["files"]}
    assert outcomes[own.name]["outcome"] == "added"
    for refused, why in ((other.name, "may not upload to project 'beta-proj'"),
                         (respelled.name, "may not upload to project 'beta-proj'"),
                         (nameless.name, "names no project"),
                         ("beta_proj-7.0.tar.gz", "may not upload to project 'beta-proj'")):
        assert outcomes[refused]["outcome"] == "rejected" and why in outcomes[refused]["error"], outcomes[refused]
    assert report["skipped"] == []
    assert catalog(data, "SELECT filename FROM files") == [(own.name,)]
    # Nothing of a refused asset was read from the host.
    read = {entry["path"].rsplit("/", 1)[-1] for entry in fake_github.log() if "/releases/download/" in entry["path"]}
    assert read <= {own.name}, read


# ---- item 1: the spellings a glob meets, and form parts that name two files ----

@pytest.mark.parametrize("pattern, covered", [
    ("beta*", {"beta-proj", "betamax"}),
    ("*-proj", {"beta-proj", "gamma-proj"}),
    ("Beta_*", {"beta-proj"}),
])
def test_a_glob_token_uploads_by_the_normalised_name_whatever_the_spelling(pattern, covered, tmp_path, wheelhouse_bin,
                                                                          start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci-glob", "--scope", "upload", "--project", pattern)
    running = start_server(data)
    stored = set()
    for project in ("beta-proj", "betamax", "gamma-proj"):
        stem = project.replace("-", "_")
        # Each spelling of the name a wheel filename may have, by the route twine or curl -T takes.
        for version, spelled, how in (("1.0", stem.upper(), "form"), ("1.1", stem.replace("_", "."), "put"),
                                      ("1.2", stem.title(), "form")):
            respelled = tmp_path / "respelled" / f"{spelled}-{version}-py3-none-any.whl"
            respelled.parent.mkdir(exist_ok=True)
            shutil.copy(build_wheel(tmp_path / project, project, version), respelled)
            send = (["-F", f"content=@{respelled}", running.url + "legacy/"] if how == "form"
                    else ["-T", str(respelled), running.url + "api/v1/files/" + respelled.name])
            status, body = curl("-u", f"__token__:{token}", *send)
            assert status == (201 if project in covered else 403), (pattern, respelled.name, status, body)
            if status == 201:
                stored.add(respelled.name)
        theirs = sdist(tmp_path / "sdists", project, "2.0")
        status, body = curl("-u", f"__token__:{token}", "-T", str(theirs), running.url + "api/v1/files/" + theirs.name)
        assert status == (201 if project in covered else 403), (pattern, theirs.name, status, body)
        if status == 201:
            stored.add(theirs.name)
    assert {name for (name,) in catalog(data, "SELECT filename FROM files")} == stored


def test_a_form_that_names_two_files_never_lands_the_other_projects(tmp_path, wheelhouse_bin, start_server):
    """The file part's `filename` names the project the check and the ingester both read;
    filename* (RFC 5987, which RFC 7578 forbids in forms), a second filename, a second file part
    or a part named 'Content' never put the other project's bytes in the index."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci-gamma", "--scope", "upload", "--project", OWN)
    running = start_server(data)
    theirs = build_wheel(tmp_path / "theirs", OTHER, "8.0")
    ours = build_wheel(tmp_path / "ours", OWN, "8.0")
    other, own = theirs.read_bytes(), ours.read_bytes()
    content = "form-data; name=\"content\"; "
    forms = {
        "filename* names the other": form_part(content + f"filename=\"{ours.name}\"; filename*=UTF-8''{theirs.name}",
                                               other),
        "filename* alone": form_part(content + f"filename*=UTF-8''{theirs.name}", other),
        "two filenames": form_part(content + f"filename=\"{ours.name}\"; filename=\"{theirs.name}\"", other),
        "the other's part first": form_part(content + f"filename=\"{theirs.name}\"", other)
        + form_part(content + f"filename=\"{ours.name}\"", own),
        "a part named Content": form_part(f"form-data; name=\"Content\"; filename=\"{theirs.name}\"", other)
        + form_part(content + f"filename=\"{ours.name}\"", other),
        "unquoted": form_part(f"form-data; name=content; filename={theirs.name}", other),
    }
    for what, parts in forms.items():
        body = parts + b"--b0undary--\r\n"
        sent = urllib.request.Request(running.url + "legacy/", data=body, method="POST", headers={
            "Authorization": f"Bearer {token}", "Content-Type": "multipart/form-data; boundary=b0undary"})
        try:
            with urllib.request.urlopen(sent, timeout=30) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as refused:
            status, text = refused.code, refused.read()
        assert status in (400, 403), (what, status, text)
    assert catalog(data, "SELECT filename FROM files") == [] and blobs(data) == []
    assert list((data / "tmp").iterdir()) == []


# ---- item 6: JSON answers, HEAD, redirects ----

def test_the_api_answers_names_that_are_not_utf8_in_valid_json(curated, wheelhouse_bin):
    data, running = curated
    admin = make_token(wheelhouse_bin, data, "admin-gamma", "--scope", "admin", "--project", OWN)
    root = make_token(wheelhouse_bin, data, "root", "--scope", "admin")
    for method, path, token in (("GET", "api/v1/projects/%FF", None),
                                ("GET", "api/v1/files/%FF.whl", None),
                                ("DELETE", "api/v1/files/%FF.whl", root),
                                ("DELETE", "api/v1/tokens/%FF", root),
                                ("PUT", "api/v1/projects/be%FFta/status", admin)):
        body = b'{"status": "archived"}' if method == "PUT" else None
        status, body, headers = request(running.url + path, token, method, body, {"Content-Type": "application/json"})
        assert 400 <= status < 500 and headers["Content-Type"].startswith("application/json"), (path, status)
        assert "error" in json.loads(body.decode("utf-8")), (method, path, body)


@pytest.mark.parametrize("method, path", [("DELETE", "api/v1/files/gamma_proj-1.0.tar.gz%00"),
                                          ("GET", "api/v1/files/a%2Fgamma_proj-1.0.tar.gz"),
                                          ("POST", "api/v1/files/gamma_proj-1.0.tar.gz/%2E%2E/yank")])
def test_the_api_refuses_a_bad_path_in_json(curated, method, path):
    _, running = curated
    status, body, headers = request(running.url + path, None, method, b"{}")
    assert status == 400
    assert headers["Content-Type"].startswith("application/json"), (headers, body)
    assert "error" in json.loads(body)


def test_a_head_refused_for_its_headers_has_no_body(curated):
    _, running = curated
    with socket.create_connection(address(running), timeout=30) as client:
        big = b"X-Big: " + b"a" * 20_000 + b"\r\n"  # past the 16 KiB header limit
        client.sendall(b"HEAD /simple/ HTTP/1.1\r\nHost: x\r\n" + big + b"Connection: close\r\n\r\n")
        answer = read_answer(client)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431"), head
    assert body == b"", body


def test_heads_are_refused_and_answered_as_gets_for_every_kind_of_file_under_private(tmp_path, wheelhouse_bin,
                                                                                   start_server):
    data = tmp_path / "data"
    data.mkdir()
    shelf = tmp_path / "shelf"
    files = {OWN: [build_wheel(shelf, OWN, "1.0"), sdist(shelf, OWN, "1.0")],
             OTHER: [build_wheel(shelf, OTHER, "1.0"), sdist(shelf, OTHER, "1.0")]}
    ingested = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), *map(str, sum(files.values(), []))],
                              capture_output=True, text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stderr
    token = make_token(wheelhouse_bin, data, "read-gamma", "--scope", "read", "--project", OWN)
    running = start_server(data, "--private")
    for project, paths in files.items():
        for path in paths:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            for target in (f"files/{digest}/{path.name}", f"files/{digest}/{path.name}.metadata",
                           f"api/v1/files/{path.name}"):
                got = request(running.url + target, token, "GET")
                head = request(running.url + target, token, "HEAD")
                assert head[0] == got[0] == (200 if project == OWN else 403), (target, head[0], got[0])
                assert head[1] == b"", (target, head[1])


@pytest.mark.parametrize("path", ["//variants/cu128_torch2.8/simple/x/", "/variants//cu128_torch2.8/simple/x/"])
def test_a_variant_redirect_of_a_path_with_an_empty_segment_names_the_page(curated, path):
    _, running = curated
    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(running.url.rstrip("/") + path, timeout=30)
    assert redirect.value.code == 301
    assert redirect.value.headers["Location"] == "/variants/cu128-torch2.8/simple/x/"
