"""An upstream index that lies (issue 26): pages that are not what they claim, files whose bytes
differ from their hash, redirects elsewhere. Each is refused with a 502 naming the upstream, never
kept (the next request asks again), and the index keeps serving everyone else."""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request

import pytest

from upstream_standins import HostileUpstream, wheelhouse_flags
from wheelbuilder import build_wheel

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def get(url: str, accept: str = JSON_TYPE) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as failure:
        return failure.code, failure.read()


def json_page(project: str, files: list[dict]) -> str:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "versions": [], "files": files})


def file_entry(filename: str, data: bytes, sha256: str | None = None) -> dict:
    return {"filename": filename, "url": f"/packages/{filename}", "hashes": {"sha256": sha256 or
            hashlib.sha256(data).hexdigest()}, "size": len(data)}


@pytest.fixture
def hostile(tmp_path, start_server):
    upstream = HostileUpstream(tmp_path / "tls")
    healthy = json_page("healthy", [])
    upstream.page("healthy", healthy)
    server = start_server(tmp_path / "data", *wheelhouse_flags(upstream.ca, {"evil": upstream.url}),
                          "--upstream-max-page-size", "100000", "--upstream-timeout", "3")
    yield server, upstream
    upstream.stop()


def assert_refused_and_not_kept(server, upstream, project: str) -> None:
    for attempt in (1, 2):
        status, body = get(server.url + f"simple/{project}/")
        assert status in (502, 504), (status, body)
        assert b"evil" in body, body  # the upstream is named
        assert upstream.requests_for(f"/simple/{project}/") == attempt  # nothing kept: asked again
    assert get(server.url + "simple/healthy/")[0] == 200  # everyone else still served


@pytest.mark.parametrize("body", [
    b'{"meta": {"api-version": "1.0"}, "name": "bad", "files": [], "files": []}',  # a key twice
    b'{"meta": {"api-version": "1.0"}, "name": "bad\xff", "files": []}',  # not UTF-8
    b'{"meta": {"api-version": "1.0"}, "name": "bad", "files": ' + b"[" * 5000 + b"]" * 5000 + b"}",  # nesting
    b'{"meta": {"api-version": "2.0"}, "name": "bad", "files": []}',  # a major version we do not speak
    b'{"meta": {"api-version": "1.0"}, "name": "other-project", "files": []}',  # another project's page
    b'{"meta": {"api-version": "1.0"}, "name": "bad", "files": [' + b'{"filename": "x"},' * 10000 + b'{}]}',  # size
], ids=["duplicate-key", "not-utf8", "deep-nesting", "other-major", "other-project", "huge"])
def test_a_page_that_does_not_parse_is_refused_and_not_kept(hostile, body):
    server, upstream = hostile
    upstream.page("bad", body)
    assert_refused_and_not_kept(server, upstream, "bad")


def test_an_html_page_that_is_not_utf8_is_refused(hostile):
    server, upstream = hostile
    upstream.page("bad", b'<a href="/packages/bad-1.0.tar.gz#sha256=' + b"0" * 64 + b'">bad\xff-1.0</a>', "text/html")
    assert_refused_and_not_kept(server, upstream, "bad")


def test_a_redirect_to_elsewhere_is_not_followed(hostile):
    server, upstream = hostile
    upstream.answers["/simple/moved/"] = lambda handler: handler.send_plain(
        302, b"", headers={"Location": "https://attacker.invalid/simple/moved/"})
    assert_refused_and_not_kept(server, upstream, "moved")


def test_a_page_listing_another_projects_files_lists_only_its_own(hostile, tmp_path):
    server, upstream = hostile
    own = build_wheel(tmp_path / "farm", "mine", "1.0").read_bytes()
    other = build_wheel(tmp_path / "farm", "torch", "9.9").read_bytes()
    upstream.page("mine", json_page("mine", [file_entry("mine-1.0-py3-none-any.whl", own),
                                             file_entry("torch-9.9-py3-none-any.whl", other),
                                             file_entry("mine_evil-1.0-py3-none-any.whl", other)]))
    status, body = get(server.url + "simple/mine/")
    assert status == 200
    names = [f["filename"] for f in json.loads(body)["files"]]
    assert names == ["mine-1.0-py3-none-any.whl"]


def test_a_file_whose_bytes_differ_from_its_hash_is_refused_and_not_kept(hostile, tmp_path):
    server, upstream = hostile
    honest = build_wheel(tmp_path / "farm", "liar", "1.0").read_bytes()
    name = "liar-1.0-py3-none-any.whl"
    upstream.page("liar", json_page("liar", [file_entry(name, honest)]))
    upstream.file(name, honest[:-1] + bytes([honest[-1] ^ 1]))  # same size, other bytes
    page = json.loads(get(server.url + "simple/liar/")[1])
    url = server.url + page["files"][0]["url"].lstrip("/")
    for attempt in (1, 2):
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                received = response.read()
        except (urllib.error.HTTPError, urllib.error.URLError, ConnectionError) as failure:
            received = failure
        except Exception as failure:  # http.client.IncompleteRead: the transfer ended short
            received = failure
        assert not (isinstance(received, bytes) and hashlib.sha256(received).hexdigest() ==
                    hashlib.sha256(honest).hexdigest())
        assert not isinstance(received, bytes) or len(received) < len(honest), "the lying bytes went out whole"
        assert upstream.requests_for(f"/packages/{name}") == attempt  # never kept: fetched again


def test_a_page_that_drips_is_cut_at_the_timeout_and_not_kept(hostile):
    """Headers at once, then a byte a second: the whole fetch is bounded (--upstream-timeout 3),
    so the client gets a 504 naming the upstream within seconds, not when the upstream pleases."""
    server, upstream = hostile
    body = json_page("slow", []).encode()

    def drip(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", JSON_TYPE)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(1)

    upstream.answers["/simple/slow/"] = drip
    started = time.monotonic()
    status, answer = get(server.url + "simple/slow/")
    assert status in (502, 504), (status, answer)
    assert b"evil" in answer
    assert time.monotonic() - started < 15
    assert get(server.url + "simple/healthy/")[0] == 200


def test_a_page_larger_than_the_limit_is_refused_before_it_is_read_whole(hostile):
    """A page past --upstream-max-page-size (100000 here) is refused, whatever length it claims."""
    server, upstream = hostile
    huge = b'{"meta": {"api-version": "1.0"}, "name": "huge", "files": [], "x": "' + b"a" * 200000 + b'"}'
    upstream.page("huge", huge)
    assert_refused_and_not_kept(server, upstream, "huge")


def test_a_file_on_another_host_is_left_out_of_the_page(hostile, tmp_path):
    """A file whose URL is on neither the upstream's host nor --upstream-file-hosts is not listed:
    a page never links a file this index would refuse to fetch."""
    server, upstream = hostile
    own = build_wheel(tmp_path / "farm", "mine", "1.0").read_bytes()
    elsewhere = file_entry("mine-2.0-py3-none-any.whl", own)
    elsewhere["url"] = "https://attacker.invalid/packages/mine-2.0-py3-none-any.whl"
    upstream.page("mine", json_page("mine", [file_entry("mine-1.0-py3-none-any.whl", own), elsewhere]))
    status, body = get(server.url + "simple/mine/")
    assert status == 200
    assert [f["filename"] for f in json.loads(body)["files"]] == ["mine-1.0-py3-none-any.whl"]
