"""Issue 24 items 1, 4 and 6: a token limited to some projects acts on exactly those projects'
files, whatever kind of file a name is (wheel, sdist, the .metadata of either, a release's
variants.json), on every route and through every client; a name that names no project is
refused to it (access checks fail closed); a token revoked while its upload arrives stores
nothing; the API answers a bad query in JSON; redirects stay under --public-url."""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from test_sdists import sdist_bytes
from test_uploads import curl, make_token, twine
from wheelbuilder import build_wheel

OWN, OTHER = "gamma-proj", "beta-proj"
STATIC_PKG_INFO = "Metadata-Version: 2.2\nName: {name}\nVersion: {version}\nSummary: demo\n\n"


def sdist(folder, name: str, version: str):
    """A PEP 625 sdist whose PKG-INFO is static (so its .metadata is served)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{stem}.tar.gz"
    path.write_bytes(sdist_bytes(name.replace("-", "_"), version, root=stem,
                                 pkg_info=STATIC_PKG_INFO.format(name=name, version=version)))
    return path


def rows(data) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT filename, yanked_reason IS NOT NULL FROM files ORDER BY filename").fetchall()


def blobs(data) -> list[str]:
    root = data / "blobs"
    return sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []


def request(url: str, token: str | None = None, method: str = "GET", body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, bytes, dict]:
    sent = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    if token:
        sent.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read(), dict(refused.headers)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(params=["public", "private"])
def index(request, tmp_path, wheelhouse_bin, start_server):
    """An index holding a wheel and an sdist of each of two projects, with tokens limited to one."""
    data = tmp_path / "data"
    data.mkdir()
    shelf = tmp_path / "shelf"
    files = {
        "own_wheel": build_wheel(shelf, OWN, "1.0"),
        "own_sdist": sdist(shelf, OWN, "1.0"),
        "other_wheel": build_wheel(shelf, OTHER, "1.0"),
        "other_sdist": sdist(shelf, OTHER, "1.0"),
    }
    ingested = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), *map(str, files.values())],
                              capture_output=True, text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stderr
    tokens = {
        "upload": make_token(wheelhouse_bin, data, "ci-gamma", "--scope", "upload", "--project", OWN),
        "admin": make_token(wheelhouse_bin, data, "admin-gamma", "--scope", "admin", "--project", OWN),
        "read": make_token(wheelhouse_bin, data, "read-gamma", "--scope", "read", "--project", OWN),
        "root": make_token(wheelhouse_bin, data, "root", "--scope", "admin"),
    }
    private = request.param == "private"
    running = start_server(data, *(["--private"] if private else []))
    return running, data, tokens, files, tmp_path, private


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- item 1: sdists of another project, by every client ----

def test_twine_cannot_publish_another_projects_sdist_with_a_limited_token(index):
    running, data, tokens, _, tmp_path, _ = index
    before = rows(data), blobs(data)
    theirs = sdist(tmp_path / "attack", OTHER, "9.9")
    refused = twine(running.url, tokens["upload"], theirs)
    assert refused.returncode != 0 and "403" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert (rows(data), blobs(data)) == before
    ours = sdist(tmp_path / "ours", OWN, "2.0")
    published = twine(running.url, tokens["upload"], ours)
    assert published.returncode == 0, published.stdout + published.stderr
    assert ("gamma_proj-2.0.tar.gz", 0) in rows(data)


@pytest.mark.parametrize("how", ["form", "put"])
def test_curl_cannot_publish_another_projects_sdist_with_a_limited_token(index, how):
    running, data, tokens, _, tmp_path, _ = index
    before = rows(data), blobs(data)
    theirs = sdist(tmp_path / "attack", OTHER, "9.8")
    auth = ("-u", f"__token__:{tokens['upload']}")
    send = (["-F", f"content=@{theirs}", running.url + "legacy/"] if how == "form"
            else ["-T", str(theirs), running.url + "api/v1/files/" + theirs.name])
    status, body = curl(*auth, *send)
    assert status == 403, body
    assert "may not upload to project 'beta-proj'" in body
    assert (rows(data), blobs(data)) == before
    ours = sdist(tmp_path / "ours", OWN, "3.0")
    send = (["-F", f"content=@{ours}", running.url + "legacy/"] if how == "form"
            else ["-T", str(ours), running.url + "api/v1/files/" + ours.name])
    status, body = curl(*auth, *send)
    assert status == 201, body


def test_the_form_name_field_never_chooses_the_project(index):
    """The filename names the project; a form that names another one is refused either way."""
    running, data, tokens, _, tmp_path, _ = index
    before = rows(data), blobs(data)
    auth = ("-u", f"__token__:{tokens['upload']}")
    theirs = sdist(tmp_path / "attack", OTHER, "9.7")
    status, body = curl(*auth, "-F", f"name={OWN}", "-F", f"content=@{theirs}", running.url + "legacy/")
    assert status == 403, body
    ours = sdist(tmp_path / "ours", OWN, "4.0")
    status, body = curl(*auth, "-F", f"name={OTHER}", "-F", f"content=@{ours}", running.url + "legacy/")
    assert status == 400 and "name field must name the file's project" in body, body
    assert (rows(data), blobs(data)) == before


def test_an_attestations_field_is_ignored_as_the_readme_says(index):
    """twine 5.1's --attestations adds a PEP 740 `attestations` field; this index stores the file
    as without it (README, trusted publishing), neither refusing nor keeping the field."""
    running, data, tokens, _, tmp_path, _ = index
    ours = sdist(tmp_path / "attested", OWN, "4.1")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"name={OWN}",
                        "-F", 'attestations=[{"version": 1, "envelope": {}}]', "-F", f"content=@{ours}",
                        running.url + "legacy/")
    assert status == 201, body
    assert (ours.name, 0) in rows(data)


# ---- item 1: every route that names a file, for every kind of file ----

def file_targets(running, files) -> dict[str, list[tuple[str, str, str]]]:
    """(method, url, kind) per project for every route that names a file by its name."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for owner in ("own", "other"):
        targets = []
        for kind in ("wheel", "sdist"):
            path = files[f"{owner}_{kind}"]
            digest = sha256(path)
            targets += [
                ("GET", f"{running.url}files/{digest}/{path.name}", kind),
                ("GET", f"{running.url}files/{digest}/{path.name}.metadata", kind + " metadata"),
                ("GET", f"{running.url}api/v1/files/{path.name}", kind),
                ("POST", f"{running.url}api/v1/files/{path.name}/yank", kind),
                ("POST", f"{running.url}api/v1/files/{path.name}/unyank", kind),
            ]
        out[owner] = targets
    return out


def test_a_limited_token_reaches_its_own_files_of_every_kind_and_no_others(index):
    running, data, tokens, files, _, private = index
    for owner, targets in file_targets(running, files).items():
        for method, url, kind in targets:
            token = tokens["admin"] if method == "POST" else tokens["read"]
            if method == "GET" and not private:
                continue  # a public index is read without tokens
            body = json.dumps({"reason": "test"}).encode() if method == "POST" else None
            status, answer, _ = request(url, token, method, body, {"Content-Type": "application/json"})
            if owner == "own":
                assert status == 200, (method, url, kind, status, answer)
            else:
                assert status == 403, (method, url, kind, status, answer)
    # The limited admin token deletes its own sdist, not the other project's.
    own, other = files["own_sdist"].name, files["other_sdist"].name
    assert request(f"{running.url}api/v1/files/{other}", tokens["admin"], "DELETE")[0] == 403
    assert request(f"{running.url}api/v1/files/{own}", tokens["admin"], "DELETE")[0] == 200
    assert [name for name, _ in rows(data)] == sorted(
        [files["own_wheel"].name, files["other_wheel"].name, other])


NAMES_OF_NOTHING = [
    "x", "gamma_proj", ".whl", ".tar.gz", "-1.0.tar.gz", "gamma_proj-1.0.zip", "gamma_proj-1.0.tgz",
    "gamma_proj-notaversion.tar.gz", "Gamma-Proj-1.0.tar.gz", ".metadata", "x.metadata", "-variants.json",
    "gamma-proj-1.0-variants.json", "gamma_proj-variants.json", "gamma_proj-1.0-py3-none-any.whl.zip",
    "%FF%FE.whl", "gamma_proj-1.0-py3-none-any%00.whl", "..%2F..%2Fetc%2Fpasswd",
    "gamma_proj-1.0-py3-none-any.whl.metadata.metadata", "a" * 300 + ".whl",
]


@pytest.mark.parametrize("name", NAMES_OF_NOTHING)
def test_a_name_that_names_no_project_is_refused_to_a_limited_token_on_every_file_route(index, name):
    running, data, tokens, _, _, private = index
    before = rows(data), blobs(data)
    digest = "0" * 64
    quoted = name if "%" in name else urllib.parse.quote(name)
    routes = [
        ("PUT", f"api/v1/files/{quoted}", tokens["upload"], b"not a wheel"),
        ("DELETE", f"api/v1/files/{quoted}", tokens["admin"], None),
        ("POST", f"api/v1/files/{quoted}/yank", tokens["admin"], b"{}"),
        ("POST", f"api/v1/files/{quoted}/unyank", tokens["admin"], b"{}"),
    ]
    if private:  # a public index's reads ask for no token
        routes += [("GET", f"api/v1/files/{quoted}", tokens["read"], None),
                   ("GET", f"files/{digest}/{quoted}", tokens["read"], None)]
    for method, path, token, body in routes:
        status, answer, _ = request(running.url + path, token, method, body)
        # 400 for a target no route can name (an encoded '/', NUL); never a 2xx, never a 5xx.
        assert status in (400, 403), (method, path, status, answer)
        if status == 403:
            assert b"limited to some projects" in answer, answer
        # The same request from a token for every project is the handler's to answer, not a 403.
        status, answer, _ = request(running.url + path, tokens["root"], method, body)
        assert status in (400, 404, 405), (method, path, status, answer)
    payload = running.data_dir.parent / "payload"
    payload.write_bytes(b"not a wheel")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{payload};filename={name}",
                        running.url + "legacy/")
    assert status in (400, 403), body
    assert (rows(data), blobs(data)) == before


def test_a_limited_token_cannot_register_a_url_that_names_no_project_or_another(index):
    running, data, tokens, _, _, _ = index
    before = rows(data), blobs(data)
    for url, why in (("https://github.com/o/r/releases/download/v1/beta_proj-1.0-py3-none-any.whl", "beta-proj"),
                     ("https://github.com/o/r/releases/download/v1/beta_proj-1.0.tar.gz", "beta-proj"),
                     ("https://github.com/o/r/releases/download/v1/", "names no project"),
                     ("https://github.com/o/r/releases/download/v1/notes.txt", "names no project")):
        body = json.dumps({"url": url}).encode()
        status, answer, _ = request(running.url + "api/v1/remote", tokens["upload"], "POST", body,
                                    {"Content-Type": "application/json"})
        assert status == 403 and why.encode() in answer, (url, status, answer)
    assert (rows(data), blobs(data)) == before


# ---- item 4: a revocation while the body arrives ----

def test_a_token_revoked_while_its_upload_arrives_stores_nothing(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "leaky", "--scope", "upload")
    running = start_server(data)
    wheel = build_wheel(tmp_path / "shelf", OWN, "5.0").read_bytes()
    host, port = running.url.removeprefix("http://").rstrip("/").split(":")
    name = "gamma_proj-5.0-py3-none-any.whl"
    head = (f"PUT /api/v1/files/{name} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Length: {len(wheel)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection((host, int(port)), timeout=30) as client:
        client.sendall(head + wheel[: len(wheel) // 2])
        time.sleep(0.3)  # the headers are checked by now; the body is still on its way
        revoked = subprocess.run([str(wheelhouse_bin), "token", "revoke", "--data", str(data), "leaky"],
                                 capture_output=True, text=True, timeout=30)
        assert revoked.returncode == 0, revoked.stderr
        client.sendall(wheel[len(wheel) // 2:])
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 401"), answer[:300]
    assert b"revoked or expired while the request was on its way" in answer
    assert rows(data) == [] and blobs(data) == []
    # The token is refused from the start now, too.
    status, _ = curl("-u", f"__token__:{token}", "-T", "/dev/null", running.url + "api/v1/files/" + name)
    assert status == 401


# ---- item 6: the API's errors are JSON; redirects stay under --public-url ----

@pytest.mark.parametrize("query", ["%FF", "%0A", "%C3%28"])
def test_the_api_answers_a_bad_query_in_json(tmp_path, start_server, query):
    data = tmp_path / "data"
    data.mkdir()
    running = start_server(data)
    status, body, headers = request(running.url + "api/v1/projects?q=" + query)
    assert status == 400
    assert headers["Content-Type"].startswith("application/json"), headers
    assert "query parameter" in json.loads(body)["error"]


@pytest.mark.parametrize("public_url, expected_root", [
    ("https://pkgs.example.com/wheels/", "https://pkgs.example.com/wheels/"),
    ("/wheels", "/wheels/"),
])
def test_redirects_stay_under_the_public_url(tmp_path, start_server, public_url, expected_root):
    data = tmp_path / "data"
    data.mkdir()
    running = start_server(data, "--public-url", public_url)
    opener = urllib.request.build_opener(NoRedirect)
    for path, location in (("variants/cu128_torch2.8/simple/", "variants/cu128-torch2.8/simple/"),
                           ("variants/cu128-torch2.8", "variants/cu128-torch2.8/simple/"),
                           ("simple/Flash_Attn/", "simple/flash-attn/"),
                           ("simple/flash-attn?format=json", "simple/flash-attn/?format=json")):
        try:
            opener.open(running.url + path, timeout=30)
            raise AssertionError(f"{path} was not redirected")
        except urllib.error.HTTPError as redirect:
            assert redirect.code == 301, (path, redirect.code)
            assert redirect.headers["Location"] == expected_root + location, (path, redirect.headers["Location"])
