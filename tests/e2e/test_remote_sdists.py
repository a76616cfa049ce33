"""sdists that live on GitHub Releases (issue 28 item 1): `import-release`, `register` and the API
take a release's sdist beside its wheels, read it once whole (gzip has no end to seek to), check
it as an upload is checked, and serve it by redirect; the attacker's sdists, another project's
and a name of no project bounce off as they do for uploads. Against the fake GitHub."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sqlite3
import subprocess

import pytest

from test_hostile_sdists import ATTACKS
from test_remote_register import native_wheel, post, run, status_of
from test_sdists import sdist_bytes
from test_uploads import make_token
from wheelbuilder import build_wheel

STATIC_PKG_INFO = "Metadata-Version: 2.2\nName: {name}\nVersion: {version}\nSummary: remote sdist\n\n"


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def static_sdist(folder: pathlib.Path, name: str, version: str, payload: bytes = b"") -> pathlib.Path:
    """A PEP 625 sdist whose PKG-INFO is static, so the index serves it as core metadata."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{stem}.tar.gz"
    members = [(f"{stem}/src/blob.bin", payload)] if payload else None
    path.write_bytes(sdist_bytes(name.replace("-", "_"), version, members, root=stem,
                                 pkg_info=STATIC_PKG_INFO.format(name=name, version=version)))
    return path


def rows(data: pathlib.Path) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT filename, download_mode FROM files ORDER BY filename").fetchall()


def downloads_of(fake_github, name: str) -> list[dict]:
    return [entry for entry in fake_github.log() if entry["path"].endswith("/" + name)]


@pytest.fixture
def index(wheelhouse_bin, fake_github, tmp_path, start_server):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags())
    return server, data, token


def test_a_release_sdist_is_imported_beside_its_wheels_and_served_by_redirect(index, fake_github, tmp_path,
                                                                             wheelhouse_bin):
    server, data, token = index
    dist = tmp_path / "dist"
    wheel = build_wheel(dist, "remote-kernels", "1.0+cu128torch2.8")
    sdist = static_sdist(dist, "remote-kernels", "1.0", payload=b"\x01" * 300_000)
    docs = dist / "docs-html.tar.gz"  # another archive of the release: no distribution
    docs.write_bytes(b"\x1f\x8b not an sdist")
    legacy = dist / "remote-kernels-0.9.tar.gz"  # a legacy sdist name (PEP 625 wants remote_kernels)
    legacy.write_bytes(sdist.read_bytes())
    fake_github.add_release("owner", "kernels", "v1", [wheel, sdist, docs, legacy])
    fake_github.clear_log()

    status, body = post(server.url + "api/v1/import/github", token, {"repository": "owner/kernels", "tag": "v1"})
    assert status == 200 and body["added"] == 2 and body["rejected"] == 0, body
    assert sorted(body["skipped"]) == sorted([docs.name, legacy.name]), body
    report = next(entry for entry in body["files"] if entry["filename"] == sdist.name)
    assert report["sha256"] == sha256_of(sdist) and report["sha256_source"] == "github_api", report
    assert report["bytes_transferred"] == sdist.stat().st_size and report["mode"] == "redirect", report
    assert not downloads_of(fake_github, docs.name) and not downloads_of(fake_github, legacy.name)

    page = server.get("/simple/remote-kernels/").read().decode()
    assert f"{sdist.name}#sha256={sha256_of(sdist)}" in page, page
    metadata = server.get(f"/files/{sha256_of(sdist)}/{sdist.name}.metadata").read().decode()
    assert metadata == STATIC_PKG_INFO.format(name="remote-kernels", version="1.0")
    detail = json.loads(server.get(f"/api/v1/files/{sdist.name}").read())
    assert detail["location"]["remote_url"] == fake_github.download_url("owner", "kernels", "v1", sdist.name), detail
    # The download is a redirect to the asset; curl following it gets the asset's bytes.
    fetched = tmp_path / "fetched.tar.gz"
    subprocess.run(["curl", "-sSfL", "--cacert", str(fake_github.ca), "-o", str(fetched),
                    f"{server.url}files/{sha256_of(sdist)}/{sdist.name}"], check=True, timeout=60)
    assert fetched.read_bytes() == sdist.read_bytes()
    # Kept out of the variant index, as an uploaded sdist is: pip would compile it.
    variant_page = server.get("/variants/cu128/simple/remote-kernels/").read().decode()
    assert wheel.name.replace("+", "%2B") in variant_page or wheel.name in variant_page, variant_page
    assert sdist.name not in variant_page

    # Again: GitHub's digest says it is there, so not a byte of it is read.
    fake_github.clear_log()
    status, body = post(server.url + "api/v1/import/github", token, {"repository": "owner/kernels", "tag": "v1"})
    assert status == 200 and body["present"] == 2, body
    assert not downloads_of(fake_github, sdist.name)
    checked = run(wheelhouse_bin, "fsck", "--data", data)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_sdist_is_held_to_its_digest_or_computed_without_one(index, fake_github, tmp_path, wheelhouse_bin):
    server, data, token = index
    dist = tmp_path / "dist"
    lying = static_sdist(dist / "a", "remote-digest", "1.0")
    plain = static_sdist(dist / "b", "remote-digest", "2.0")
    fake_github.call("/_control/setup", {"releases": [{"owner": "o", "repo": "d", "tag": "v1", "assets": [
        {"path": str(lying), "name": lying.name, "digest": "sha256:" + "ab" * 32},
        {"path": str(plain), "name": plain.name, "digest": ""}]}]})

    def url(path: pathlib.Path) -> str:
        return fake_github.download_url("o", "d", "v1", path.name)

    status, body = post(server.url + "api/v1/remote", token, {"url": url(lying)})
    assert status == 400 and "the digest from github_api is " + "ab" * 32 in body["error"], body
    status, body = post(server.url + "api/v1/remote", token, {"url": url(plain), "sha256": "cd" * 32})
    assert status == 400 and "the asset is not what its digest says" in body["error"], body
    assert rows(data) == []
    assert list((data / "tmp").iterdir()) == []
    # No digest anywhere: the one read gives it.
    registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), url(plain))
    assert registered.returncode == 0, registered.stdout + registered.stderr
    assert sha256_of(plain) in registered.stdout and "(computed)" in registered.stdout, registered.stdout
    assert rows(data) == [(plain.name, "redirect")]


@pytest.mark.parametrize("what,make,reason", ATTACKS, ids=[attack[0] for attack in ATTACKS])
def test_the_attackers_sdists_on_a_release_are_refused_as_uploads_are(index, fake_github, tmp_path, what, make,
                                                                      reason):
    server, data, token = index
    path = tmp_path / "demo-1.0.tar.gz"
    path.write_bytes(make())
    fake_github.add_release("evil", "demo", "v1", [path])
    status, body = post(server.url + "api/v1/remote", token, {"url": fake_github.download_url("evil", "demo", "v1", path.name)})
    assert status == 400 and body["error"].startswith(reason), body
    assert rows(data) == []
    assert list((data / "tmp").iterdir()) == []


def test_an_sdist_past_the_upload_limit_stops_at_it(wheelhouse_bin, fake_github, tmp_path, start_server):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    limit = 1 << 20
    server = start_server(data, *fake_github.server_flags(), "--max-upload-size", str(limit))
    big = static_sdist(tmp_path / "dist", "remote-big", "1.0", payload=os.urandom(2 << 20))
    fake_github.add_release("o", "big", "v1", [big])
    status, body = post(server.url + "api/v1/remote", token, {"url": fake_github.download_url("o", "big", "v1", big.name)})
    assert status == 413 and f"max-upload-size: {limit} bytes" in body["error"], body
    assert rows(data) == [] and list((data / "tmp").iterdir()) == []
    assert status_of(server.url + f"api/v1/files/{big.name}") == 404


def test_a_limited_token_registers_no_other_projects_sdist_and_nothing_is_read(wheelhouse_bin, fake_github,
                                                                              tmp_path, start_server):
    data = tmp_path / "data"
    own = make_token(wheelhouse_bin, data, "ci-own", "--scope", "upload", "--project", "remote-own")
    server = start_server(data, *fake_github.server_flags())
    dist = tmp_path / "dist"
    mine = static_sdist(dist / "a", "remote-own", "1.0")
    theirs = static_sdist(dist / "b", "remote-other", "1.0")
    respelled = dist / "Remote.Other-1.1.tar.gz"
    respelled.write_bytes(theirs.read_bytes())
    nameless = dist / "x.tar.gz"
    nameless.write_bytes(theirs.read_bytes())
    fake_github.add_release("o", "mixed", "v1", [mine, theirs, respelled, nameless])
    fake_github.clear_log()
    for refused, why in ((theirs, "may not upload to project 'remote-other'"),
                         (respelled, "names no project"),
                         (nameless, "names no project")):
        status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "mixed", "v1", refused.name)})
        assert status == 403 and why in body["error"], (refused.name, body)
    assert fake_github.log() == []
    status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/mixed", "tag": "v1"})
    assert status == 200 and body["added"] == 1 and body["rejected"] == 1, body
    assert rows(data) == [(mine.name, "redirect")]
    read = {entry["path"].rsplit("/", 1)[-1] for entry in fake_github.log() if "/releases/download/" in entry["path"]}
    assert read <= {mine.name}, read


def test_a_private_release_sdist_is_read_through_the_api_with_the_token(wheelhouse_bin, fake_github, tmp_path,
                                                                       start_server):
    sdist = static_sdist(tmp_path / "dist", "remote-secret", "1.0")
    fake_github.set(token="s3cret")
    [asset] = fake_github.add_release("org", "private", "v1", [sdist], private=True)["assets"]
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags(), "--github-token", "s3cret")
    status, body = post(server.url + "api/v1/remote", token,
                        {"url": fake_github.download_url("org", "private", "v1", sdist.name), "mode": "proxy"})
    assert status == 201 and body["sha256"] == sha256_of(sdist), body
    detail = json.loads(server.get(f"/api/v1/files/{sdist.name}").read())
    assert detail["location"]["fetch_url"] == asset["url"], detail
    assert server.get(f"/files/{sha256_of(sdist)}/{sdist.name}").read() == sdist.read_bytes()
