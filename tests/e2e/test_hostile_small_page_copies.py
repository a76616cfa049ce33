"""Hostile tests of commit 4d3656f: cached simple pages of 8 KiB or more (64 KiB before) are
sent by sendfile(2) from a read-only copy (an unlinked O_TMPFILE file in DATA/tmp/, or a sealed
memfd), at most storage::most_page_files() copies open at once (a sixteenth of RLIMIT_NOFILE,
8 to 4096; its floor was 64 until the attacker's test below), reserved among the descriptors in
transport::default_max_connections:

* pages of exactly 8191, 8192 and 8193 bytes in both formats: the same bytes, HEAD, 304 and
  Range, pipelined, whether the answer comes from a copy or from memory;
* a descriptor limit of 128 or 200 (where the old floor of 64 copies was half the descriptors
  or more), while an anonymous client names a hundred variant pages just past 8 KiB;
* a reader stalled on a page of 8 to 64 KiB while an upload changes it.
"""

from __future__ import annotations

import pathlib
import re
import resource
import socket
import sqlite3
import time

import pytest

from conftest import ingest
from server_process import ServerProcess
from test_hostile_download_rows import (BIG, JSON_PAGE, SlowReader, address, big_farm, exchange, fetch, open_files,
                                        settle, sha256)
from test_hostile_page_files import copies, upload, visible
from test_uploads import curl, make_token
from wheelbuilder import build_wheel

THRESHOLD = 8 * 1024  # storage::page_file_threshold
FORMATS = (JSON_PAGE, "text/html")


def descriptor_limit(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def patient(server: ServerProcess, path: str, **headers: str) -> tuple[int, dict, bytes]:
    """fetch, asked again while the answer is a 503 with Retry-After: under a limit of 128
    descriptors the server took one connection at a time (fixed, see the test below), and a
    client's last connection may not yet be let go when its next one arrives."""
    for _ in range(200):
        status, fields, body = fetch(server, path, **headers)
        if status != 503 or "retry-after" not in fields:
            return status, fields, body
        time.sleep(0.01)
    return status, fields, body


def set_reason(data: pathlib.Path, filename: str, length: int) -> None:
    with sqlite3.connect(data / "catalog.db") as db:
        db.execute("UPDATE files SET yanked_reason = ? WHERE filename = ?", ("y" * length, filename))


# ---- pages at the threshold, to the byte ----

def test_pages_of_8191_8192_and_8193_bytes_are_the_same_bytes_by_every_way_of_asking(
        tmp_path, wheelhouse_bin, start_server):
    """Six projects of one yanked wheel each, the yank reason sized so that one project's JSON
    page or HTML page is exactly 8191, 8192 or 8193 bytes (one byte of reason is one byte of
    either page). Each page is asked on one connection, pipelined: GET, GET again (from the
    cache, from its copy if it has one), HEAD, GET with its own ETag in If-None-Match, GET with
    Range: bytes=0-0 and bytes=8190-, then /healthz. The size must be exact; both GETs the same
    bytes; HEAD the same head without a body; the conditional a 304 without a body; a Range
    answer either the whole page (200) or exactly the asked slice (206, with a true
    Content-Range); the connection in step. A copy must exist for the 8192- and 8193-byte pages
    only (the threshold is 'at or over'), and none be visible in DATA/tmp/."""
    data = tmp_path / "data"
    cases = [(fmt, size) for fmt in FORMATS for size in (THRESHOLD - 1, THRESHOLD, THRESHOLD + 1)]
    wheels = [build_wheel(tmp_path / "farm", f"edge-p{index}", "1.0") for index in range(len(cases))]
    assert ingest(wheelhouse_bin, data, *wheels).returncode == 0
    base = 7000
    for wheel in wheels:
        set_reason(data, wheel.name, base)
    server = start_server(data)
    measured = [len(fetch(server, f"/simple/edge-p{index}/", Accept=fmt)[2]) for index, (fmt, _) in enumerate(cases)]
    assert server.stop() == 0
    for index, ((_, size), wheel) in enumerate(zip(cases, wheels)):
        set_reason(data, wheel.name, base + size - measured[index])
    server = start_server(data)
    wrong = []
    for index, (fmt, size) in enumerate(cases):
        path = f"/simple/edge-p{index}/"
        before = len(copies(server))
        first = fetch(server, path, Accept=fmt)
        assert first[0] == 200 and len(first[2]) == size, (fmt, size, len(first[2]))
        copied = len(copies(server)) - before
        if copied != (1 if size >= THRESHOLD else 0):
            wrong.append((fmt, size, "copies made", copied))
        etag = first[1]["etag"]
        requests = [("GET", path, {"Accept": fmt}), ("GET", path, {"Accept": fmt}), ("HEAD", path, {"Accept": fmt}),
                    ("GET", path, {"Accept": fmt, "If-None-Match": etag}),
                    ("GET", path, {"Accept": fmt, "Range": "bytes=0-0"}),
                    ("GET", path, {"Accept": fmt, "Range": f"bytes={THRESHOLD - 2}-"}),
                    ("GET", "/healthz", {})]
        answers = exchange(server, *requests)
        page = first[2]
        for number in (0, 1):
            if answers[number][2] != page or answers[number][1]["content-length"] != str(size):
                wrong.append((fmt, size, "GET", number, len(answers[number][2])))
        if answers[2][0] != "HTTP/1.1 200 OK" or answers[2][1]["content-length"] != str(size) \
                or answers[2][1].get("etag") != etag or answers[2][2] != b"":
            wrong.append((fmt, size, "HEAD", answers[2][:2]))
        if not answers[3][0].startswith("HTTP/1.1 304") or answers[3][2] != b"":
            wrong.append((fmt, size, "304", answers[3][:2]))
        for (status, headers, body), (start, end) in zip(answers[4:6], ((0, 0), (THRESHOLD - 2, size - 1))):
            if status.startswith("HTTP/1.1 200"):
                ok = body == page
            else:
                ok = (status.startswith("HTTP/1.1 206") and body == page[start:end + 1]
                      and headers.get("content-range") == f"bytes {start}-{end}/{size}")
            if not ok:
                wrong.append((fmt, size, "Range", start, status, headers.get("content-range"), len(body)))
        if answers[6][0] != "HTTP/1.1 200 OK":
            wrong.append((fmt, size, "healthz", answers[6][0]))
    assert wrong == [], wrong
    assert visible(data / "tmp") == []


# ---- a low descriptor limit: a sixteenth of it for copies, 8 or 12 here ----

@pytest.fixture
def small_big(tmp_path, wheelhouse_bin):
    """A data folder whose BIG project's pages are just past 8 KiB (24 releases: about 10 KiB),
    one more project's wheel to download, and an upload token."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm", releases=24)
    other = build_wheel(tmp_path / "other", "other-project", "1.0")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm", other).returncode == 0
    return data, other, make_token(wheelhouse_bin, data, "ci", "--scope", "upload")


@pytest.mark.parametrize("limit", [128, 200])
def test_under_a_low_descriptor_limit_a_hundred_variant_pages_leave_the_server_serving(
        small_big, start_server, limit):
    """RLIMIT_NOFILE of 128 or 200: the cap of copies is a sixteenth of it (it was a floor of 64,
    half the descriptors or more). An anonymous client names 110 variant pages of about 10 KiB in JSON and 110 in HTML
    (each over the threshold, so each would take a copy): every page must be whole and the same
    bytes as the first; at most a sixteenth of the limit in copies open; then, with those copies held, a download of
    another project's wheel, the plain page, /healthz and an upload must all still work (no
    EMFILE turned into a 500 or a refused connection), and the server must still be running.
    (Under 128 the server took one connection at a time: a 503 with Retry-After is asked again.)"""
    data, other, token = small_big
    newer = build_wheel(data.parent / "new", "other-project", "2.0")
    server = start_server(data, preexec_fn=descriptor_limit(limit))
    reference = {}
    for fmt in FORMATS:
        status, _, page = patient(server, f"/variants/cu100/simple/{BIG}/", Accept=fmt)
        assert status == 200 and THRESHOLD < len(page) < 64 * 1024, (fmt, status, len(page))
        reference[fmt] = page
    wrong = []
    for fmt in FORMATS:
        for selector in range(101, 211):
            status, _, page = patient(server, f"/variants/cu{selector}/simple/{BIG}/", Accept=fmt)
            if status != 200 or page != reference[fmt]:
                wrong.append((fmt, selector, status, len(page)))
    assert wrong == [], wrong[:5]
    held = copies(server)
    assert 0 < len(held) <= limit // 16, len(held)
    status, _, body = patient(server, f"/files/{sha256(other)}/{other.name}")
    assert status == 200 and body == other.read_bytes()
    assert patient(server, f"/simple/{BIG}/", Accept=JSON_PAGE)[0] == 200
    assert patient(server, "/healthz")[0] == 200
    for _ in range(200):  # curl, as upload() runs it, gets the same 503 while the cap is 1
        status, answer = curl("-u", f"__token__:{token}", "-T", str(newer), f"{server.url}api/v1/files/{newer.name}")
        if status != 503:
            break
        time.sleep(0.01)
    assert status == 201, answer
    status, _, page = patient(server, "/simple/other-project/", Accept=JSON_PAGE)
    assert status == 200 and b"other_project-2.0-" in page
    assert server.process.poll() is None
    assert len(open_files(server)) < limit


def test_under_128_descriptors_the_server_still_takes_more_than_one_connection_at_once(small_big, start_server):
    """Found by the attacker, fixed: under RLIMIT_NOFILE 128 the server reserved 64 + 8 per I/O
    thread + most_page_files(), whose floor was 64: 144, more than the limit, so
    default_max_connections gave 1. The copies' budget is now a sixteenth of the limit from 8
    up (8 here), so connections keep their descriptors. Opens three
    connections at once, each asking /healthz, none reading before all have asked (after the
    startup line's "up to N connections" must say N > 1). Each must
    get a 200: a server of 128 descriptors has room for more than one client (the same data
    under a limit of 200 takes 24), and a page copy, an optimization with memory as its fallback,
    should not take a connection's place."""
    data, _, _ = small_big
    server = start_server(data, preexec_fn=descriptor_limit(128))
    # The deterministic part: what the server says it allows (observed: "up to 1 connections";
    # three clients at once then get 200, 503, 503).
    allowed = int(re.search(r"up to (\d+) connections", server.stderr()).group(1))
    assert allowed > 1, server.stderr().splitlines()[0]
    conns = []
    try:
        for _ in range(3):
            conn = socket.create_connection(address(server), timeout=10)
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            conns.append(conn)
        answers = []
        for conn in conns:
            got = b""
            while piece := conn.recv(1 << 16):
                got += piece
            answers.append(got.split(b"\r\n", 1)[0])
    finally:
        for conn in conns:
            conn.close()
    assert answers == [b"HTTP/1.1 200 OK"] * 3, (answers, server.stderr().splitlines()[0])


# ---- a reader stalled on a small page while it changes ----

def test_a_reader_stalled_on_a_10_kib_page_across_an_upload_gets_the_old_page_whole(small_big, start_server,
                                                                                    tmp_path):
    """Three readers with a 4 KiB receive window each ask for a 10 KiB page (JSON, HTML, and a
    variant's JSON) and stop after 1 KiB; an upload changes the project; a fresh GET of each
    shows the new release. Each stalled reader, once it reads on, must get exactly the page it
    asked for (the old one, whole, its Content-Length true), never a mix of generations; then
    the copies go back to one a cached page (at most the three fresh ones)."""
    data, _, token = small_big
    server = start_server(data)
    paths = [(f"/simple/{BIG}/", JSON_PAGE), (f"/simple/{BIG}/", "text/html"),
             (f"/variants/cu77/simple/{BIG}/", JSON_PAGE)]
    old = []
    for path, fmt in paths:
        status, _, page = fetch(server, path, Accept=fmt)
        assert status == 200 and THRESHOLD < len(page) < 64 * 1024
        old.append(page)
    readers = [SlowReader(server, path, accept=fmt) for path, fmt in paths]
    try:
        upload(server, token, build_wheel(tmp_path / "new", BIG, "9.0"))
        for (path, fmt), page in zip(paths, old):
            status, _, fresh = fetch(server, path, Accept=fmt)
            assert status == 200 and fresh != page and b"9.0" in fresh, (path, fmt)
        for reader, page in zip(readers, old):
            headers, body = reader.finish()
            assert body == page and int(headers["content-length"]) == len(page)
    finally:
        for reader in readers:
            reader.close()
    assert settle(lambda: len(copies(server)) <= 3), open_files(server)
    assert visible(data / "tmp") == []
