"""Hostile tests of the bucket 302 (commit e05cb52): presigned URLs signed once per tenth of
--s3-url-lifetime and cached per sha256, the SigV4 day key cached, and the redirect written as a
pre-built head. Each file must get its own URL, every URL handed out must work at radosgw for
the rest of its life with the right bytes, and the head must be right for HEAD, HTTP/1.0,
keep-alive and Connection: close. The same pre-built 302 serves remote (GitHub-style) files in
redirect mode, whose catalog URL must never break the head."""

from __future__ import annotations

import calendar
import hashlib
import os
import pathlib
import re
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from test_s3_check import radosgw  # noqa: F401  (the module's radosgw fixture)
from test_s3_store import answer, blob_key, bucket_index, bucket_server  # noqa: F401
from test_uploads import curl, make_token
from wheelbuilder import build_wheel


def signed_at(location: str) -> int:
    stamp = re.search(r"X-Amz-Date=(\d{8}T\d{6}Z)", location).group(1)
    return calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))


def expires_of(location: str) -> int:
    return int(re.search(r"X-Amz-Expires=(\d+)", location).group(1))


def signature_is_right(location: str, secret: str) -> bool:
    """Recomputes a presigned URL's SigV4 signature (host signed alone, UNSIGNED-PAYLOAD)."""
    import hmac
    parts = urllib.parse.urlsplit(location)
    pairs = [pair.split("=", 1) for pair in parts.query.split("&")]
    given = dict(pairs)["X-Amz-Signature"]
    canonical_query = "&".join(f"{k}={v}" for k, v in sorted(p for p in pairs if p[0] != "X-Amz-Signature"))
    canonical = "\n".join(["GET", parts.path, canonical_query, f"host:{parts.netloc}", "", "host",
                           "UNSIGNED-PAYLOAD"])
    date = dict(pairs)["X-Amz-Date"]
    scope = urllib.parse.unquote(dict(pairs)["X-Amz-Credential"]).split("/", 1)[1]
    to_sign = "\n".join(["AWS4-HMAC-SHA256", date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for piece in scope.split("/"):
        key = hmac.new(key, piece.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest() == given


def upload_wheels(tmp_path: pathlib.Path, running, token: str, name: str, count: int) -> list[pathlib.Path]:
    wheels = [build_wheel(tmp_path / "farm", name, f"1.{i}", files={f"{name}/x.bin": os.urandom(700).hex()})
              for i in range(count)]
    for wheel in wheels:
        assert curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201
    return wheels


def sha(wheel: pathlib.Path) -> str:
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as fetched:
        return fetched.read()


def raw_exchange(url: str, payload: bytes, wait_close: bool = True, timeout: float = 5.0) -> bytes:
    """Sends `payload` on one connection; reads until the server closes (or `timeout`)."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as conn:
        conn.sendall(payload)
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = conn.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                return received + b"<closed>"
            received += chunk
        return received


def split_responses(raw: bytes, head_only: tuple[bool, ...]) -> list[tuple[str, dict[str, str], bytes]]:
    """Splits concatenated responses, using Content-Length (a HEAD's body is empty)."""
    out = []
    rest = raw
    for is_head in head_only:
        head, sep, rest = rest.partition(b"\r\n\r\n")
        assert sep, raw
        lines = head.decode("latin-1").split("\r\n")
        fields: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            assert name.lower() not in fields, (name, head)  # no field twice
            fields[name.lower()] = value.strip()
        length = 0 if is_head else int(fields.get("content-length", "0"))
        out.append((lines[0], fields, rest[:length]))
        rest = rest[length:]
    out.append(("<rest>", {}, rest))
    return out


# ---------------------------------------------------------------------------------------------
# Each file its own URL, from many threads over several windows; every URL works with its bytes.


def test_many_files_from_many_threads_each_get_their_own_working_url_across_window_turns(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data, "--s3-url-lifetime", "60")  # window 6 s
    wheels = upload_wheels(tmp_path, running, token, "crowded", 12)
    by_sha = {sha(w): w for w in wheels}
    problems: list[str] = []
    handed: dict[tuple[str, str], float] = {}  # (sha256, url) -> when handed out
    lock = threading.Lock()
    stop_at = time.time() + 14  # crosses two window turns at least

    def worker(offset: int) -> None:
        i = offset
        while time.time() < stop_at and not problems:
            digest = list(by_sha)[i % len(by_sha)]
            i += 1
            before = time.time()
            status, headers, body = answer(f"{running.url}files/{digest}/{by_sha[digest].name}")
            after = time.time()
            location = headers.get("Location", "")
            if status != 302 or blob_key(bucket_server.prefix, digest) + "?" not in location:
                problems.append(f"{digest}: {status} {location}")
                return
            signed = signed_at(location)
            if signed % 6 != 0 or signed > after or signed < before - 6 - 1:
                problems.append(f"signed at {signed}, asked {before}..{after}: {location}")
            if expires_of(location) != 60:
                problems.append(f"expires: {location}")
            # remaining life at hand-out: at least 90% (54 s), and never more than 60 s
            if not (54 - 1 <= signed + 60 - after and signed + 60 - before <= 60 + 1):
                problems.append(f"remaining life {signed + 60 - after:.1f}: {location}")
            if len(body) != int(headers["Content-Length"]) or location.encode() not in body:
                problems.append(f"body {body!r} vs {headers}")
            with lock:
                handed.setdefault((digest, location), after)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:5]
    windows = {signed_at(url) for _, url in handed}
    assert len(windows) >= 2, windows
    # One URL per (file, window): the cache never hands out two for one file in a window, and
    # never one file's URL for another.
    per_window: dict[tuple[str, int], set[str]] = {}
    for digest, url in handed:
        per_window.setdefault((digest, signed_at(url)), set()).add(url)
    assert all(len(urls) == 1 for urls in per_window.values()), per_window
    urls = [url for _, url in handed]
    assert len(set(urls)) == len(urls)
    assert all(signature_is_right(url, radosgw["S3_SECRET_KEY"]) for _, url in handed)
    # Every URL handed out serves its own file's bytes at radosgw.
    for digest, url in handed:
        assert fetch(url) == by_sha[digest].read_bytes(), url


def test_a_url_handed_out_late_in_its_window_still_works_50_s_after_signing(tmp_path, wheelhouse_bin, radosgw,
                                                                  bucket_server):  # noqa: F811
    # Lifetime 60: a URL handed out just before its window turns is the oldest a client can get;
    # it must still work close to signed_at + 60.
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--s3-url-lifetime", "60")
    [wheel] = upload_wheels(tmp_path, running, token, "aging", 1)
    url = f"{running.url}files/{sha(wheel)}/{wheel.name}"
    # Wait for the last second of a window, then take the URL.
    deadline = time.time() + 15
    while time.time() < deadline and int(time.time()) % 6 != 5:
        time.sleep(0.05)
    status, headers, _ = answer(url)
    assert status == 302
    location = headers["Location"]
    signed = signed_at(location)
    assert time.time() - signed <= 6.5, (time.time(), signed)
    # Still good 50 s after signing (over 80% of its life after the hand-out).
    while time.time() < signed + 50:
        time.sleep(0.5)
    assert fetch(location) == wheel.read_bytes()


@pytest.mark.parametrize("lifetime", ["60", "61", "69", "604800"])
def test_lifetime_at_its_limits_gives_urls_with_90_percent_life_that_work(tmp_path, wheelhouse_bin, radosgw,
                                                                          bucket_server, lifetime):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--s3-url-lifetime", lifetime)
    wheels = upload_wheels(tmp_path, running, token, "limited", 2)
    life = int(lifetime)
    window = max(1, life // 10)
    seen = []
    for wheel in wheels:
        status, headers, body = answer(f"{running.url}files/{sha(wheel)}/{wheel.name}")
        after = time.time()
        assert status == 302, (status, headers, body)
        location = headers["Location"]
        assert blob_key(bucket_server.prefix, sha(wheel)) + "?" in location
        assert expires_of(location) == life
        signed = signed_at(location)
        assert signed % window == 0 and signed <= after, (signed, after)  # never in the future
        assert signed + life - after >= 0.9 * life - 1, (signed, after, life)
        max_age = int(re.search(r"max-age=(\d+)", headers["Cache-Control"]).group(1))
        assert max_age == life // 2 and "public" in headers["Cache-Control"]
        assert fetch(location) == wheel.read_bytes()
        seen.append(location)
    assert seen[0] != seen[1]


# ---------------------------------------------------------------------------------------------
# The pre-built head: HEAD, Range, conditionals, HTTP/1.0, keep-alive, Connection: close.


@pytest.fixture
def one_bucket_file(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    [wheel] = upload_wheels(tmp_path, running, token, "headed", 1)
    return running, wheel, f"/files/{sha(wheel)}/{wheel.name}"


def test_keep_alive_pipelined_302s_are_framed_by_their_content_length(one_bucket_file):
    running, wheel, path = one_bucket_file
    host = urllib.parse.urlsplit(running.url).netloc
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    head = f"HEAD {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    last = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    raw = raw_exchange(running.url, request + request + head + last)
    assert raw.endswith(b"<closed>"), raw[-300:]
    first, second, headed, closing, rest = split_responses(raw[:-len(b"<closed>")], (False, False, True, False))
    for status_line, fields, body in (first, second, closing):
        assert status_line == "HTTP/1.1 302 Found", status_line
        assert int(fields["content-length"]) == len(body) and fields["location"].encode() in body
        assert fields["content-type"].startswith("text/plain")
        assert blob_key("", sha(wheel)) in fields["location"]
    assert "connection" not in first[1] and "connection" not in second[1]
    assert closing[1]["connection"] == "close"
    # HEAD of a bucket file: answered from the catalog, no body, the file's own length.
    assert headed[0].startswith("HTTP/1.1 200"), headed
    assert int(headed[1]["content-length"]) == wheel.stat().st_size
    assert rest[2] == b"", rest


def test_http_1_0_gets_a_1_0_302_and_the_connection_closes_unless_kept(one_bucket_file):
    running, wheel, path = one_bucket_file
    raw = raw_exchange(running.url, f"GET {path} HTTP/1.0\r\n\r\n".encode())
    assert raw.endswith(b"<closed>"), raw
    [(status_line, fields, body), rest] = split_responses(raw[:-len(b"<closed>")], (False,))
    assert status_line == "HTTP/1.0 302 Found" and "connection" not in fields
    assert int(fields["content-length"]) == len(body) and rest[2] == b""
    # keep-alive asked: two answers on one connection, the second closing it.
    raw = raw_exchange(running.url, f"GET {path} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                                    f"GET {path} HTTP/1.0\r\n\r\n".encode())
    assert raw.endswith(b"<closed>"), raw
    kept, closed, rest = split_responses(raw[:-len(b"<closed>")], (False, False))
    assert kept[0] == "HTTP/1.0 302 Found" and kept[1]["connection"] == "keep-alive"
    assert closed[0] == "HTTP/1.0 302 Found" and "connection" not in closed[1]
    assert kept[1]["location"] == closed[1]["location"] or signed_at(kept[1]["location"]) != signed_at(
        closed[1]["location"])
    assert rest[2] == b""


def test_range_and_conditionals_on_a_bucket_file(one_bucket_file):
    running, wheel, path = one_bucket_file
    url = running.url.rstrip("/") + path
    etag = f'"{sha(wheel)}"'
    status, headers, _ = answer(url, headers={"If-None-Match": etag})
    assert status == 304 and "Location" not in headers
    status, headers, _ = answer(url, headers={"If-None-Match": '"0000"'})
    assert status == 302
    status, headers, _ = answer(url, headers={"Range": "bytes=5-14"})
    assert status == 302
    request = urllib.request.Request(headers["Location"], headers={"Range": "bytes=5-14"})
    with urllib.request.urlopen(request, timeout=30) as part:
        assert part.status == 206 and part.read() == wheel.read_bytes()[5:15]
    status, headers, _ = answer(url, headers={"Range": f"bytes={wheel.stat().st_size + 10}-"})
    assert status == 416 and "Location" not in headers


def test_a_private_index_302_needs_the_token_and_is_private(tmp_path, wheelhouse_bin, radosgw,
                                                            bucket_server):  # noqa: F811
    import base64
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--private")
    [wheel] = upload_wheels(tmp_path, running, token, "hushed", 1)
    url = f"{running.url}files/{sha(wheel)}/{wheel.name}"
    basic = "Basic " + base64.b64encode(f"__token__:{token}".encode()).decode()
    status, headers, _ = answer(url, headers={"Authorization": basic})
    assert status == 302 and headers["Cache-Control"] == "max-age=150, private", headers
    # The URL is cached now; a request without the token still gets no URL.
    for method, extra in (("GET", {}), ("GET", {"Connection": "close"}), ("GET", {"Range": "bytes=0-1"}),
                          ("GET", {"If-None-Match": f'"{sha(wheel)}"'}), ("HEAD", {})):
        status, headers, body = answer(url, method=method, headers=extra)
        assert status == 401 and "Location" not in headers and b"X-Amz" not in body, (status, headers)


# ---------------------------------------------------------------------------------------------
# Remote (GitHub-style) files in redirect mode: the catalog's URL goes into the head as it is.


@pytest.fixture
def remote_with_url(tmp_path, wheelhouse_bin, start_server):
    """A wheel ingested locally, then its row turned into a redirect to `url`."""

    def make(url: str):
        data = tmp_path / "remote-data"
        wheel = build_wheel(tmp_path / "rfarm", "faraway", "1.0")
        done = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), str(wheel)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        with sqlite3.connect(data / "catalog.db") as db:
            raw = url if isinstance(url, bytes) else url.encode("utf-8")
            db.execute("UPDATE files SET download_mode = 'redirect', remote_url = CAST(? AS TEXT) "
                       "WHERE filename = ?", (raw, wheel.name))
        return start_server(data), wheel

    return make


@pytest.mark.parametrize("odd", [
    "https://example.invalid/a\r\nSet-Cookie: owned=1",
    "https://example.invalid/a\nSet-Cookie: owned=1",
    "https://example.invalid/a\rb",
    "https://example.invalid/a\x00b",
    "https://example.invalid/a\x7fb",
    "https://example.invalid/a\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
])
def test_a_remote_url_with_control_characters_never_reaches_the_head(remote_with_url, odd):
    running, wheel = remote_with_url(odd)
    path = f"/files/{sha(wheel)}/{wheel.name}"
    host = urllib.parse.urlsplit(running.url).netloc
    for method in ("GET", "HEAD"):
        raw = raw_exchange(running.url, f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                           .encode())
        assert raw.endswith(b"<closed>"), raw
        [(status_line, fields, body), rest] = split_responses(raw[:-len(b"<closed>")], (method == "HEAD",))
        assert status_line.startswith("HTTP/1.1 500"), raw
        assert "set-cookie" not in fields and "location" not in fields and rest[2] == b"", raw


def test_a_remote_url_with_non_utf8_bytes_is_sent_and_framed_right(remote_with_url, tmp_path):
    odd = "https://example.invalid/caf\u00e9/".encode() + b"\xff?x=\xc2\xa0"  # é, a lone 0xFF byte, NBSP
    running, wheel = remote_with_url(odd)
    path = f"/files/{sha(wheel)}/{wheel.name}"
    host = urllib.parse.urlsplit(running.url).netloc
    raw = raw_exchange(running.url, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"
                                    f"HEAD {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    assert raw.endswith(b"<closed>"), raw
    got, headed, rest = split_responses(raw[:-len(b"<closed>")], (False, True))
    assert got[0] == "HTTP/1.1 302 Found" and headed[0] == "HTTP/1.1 302 Found", raw
    assert int(got[1]["content-length"]) == len(got[2])
    assert got[1]["content-length"] == headed[1]["content-length"] and headed[2] == b""
    got[2].decode("utf-8")  # the body, labelled UTF-8, is UTF-8
    assert "max-age=86400" in got[1]["cache-control"]
    assert rest[2] == b""
    # Each byte past ASCII as %XX, which requests (pip's HTTP library) follows as it is; the raw
    # bytes it would decode as UTF-8 and fail on the lone 0xFF.
    assert got[1]["location"] == "https://example.invalid/caf%C3%A9/%FF?x=%C2%A0", got[1]
    assert headed[1]["location"] == got[1]["location"]
    import requests
    answer = requests.models.Response()
    answer.status_code, answer.headers["Location"] = 302, got[1]["location"]
    assert requests.Session().get_redirect_target(answer) == got[1]["location"]


# ---------------------------------------------------------------------------------------------
# Past the cache's 4096 URLs: each file still gets its own URL, the same one all window.


def test_past_4096_cached_urls_each_file_still_gets_its_own_url(tmp_path, wheelhouse_bin, radosgw,
                                                                bucket_server):  # noqa: F811
    import http.client
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data, "--s3-url-lifetime", "604800")  # a window of 16.8 h: no turn here
    [wheel] = upload_wheels(tmp_path, running, token, "overflow", 1)
    assert running.stop() == 0
    # 4300 more rows, each its own sha256 (no object behind them: a 302 needs none).
    files = [(sha(wheel), wheel.name)] + clone_rows(data, wheel, 4300)
    running = bucket_server(data, "--s3-url-lifetime", "604800")
    parts = urllib.parse.urlsplit(running.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    first: dict[str, str] = {}

    def location_of(digest: str, name: str) -> str:
        conn.request("GET", f"/files/{digest}/{name}")
        response = conn.getresponse()
        body = response.read()
        assert response.status == 302, (digest, response.status, body)
        return response.getheader("Location")

    for round_ in range(2):
        for digest, name in files:
            location = location_of(digest, name)
            assert blob_key(bucket_server.prefix, digest) + "?" in location, (digest, location)
            if signed_at(location) == signed_at(first.setdefault(digest, location)):
                assert location == first[digest], (digest, location, first[digest])
    conn.close()
    assert fetch(location_of_fresh(running, wheel)) == wheel.read_bytes()


def location_of_fresh(running, wheel: pathlib.Path) -> str:
    status, headers, _ = answer(f"{running.url}files/{sha(wheel)}/{wheel.name}")
    assert status == 302
    return headers["Location"]


def test_a_quarantined_projects_bucket_file_gets_no_url(tmp_path, wheelhouse_bin, radosgw,
                                                        bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    [wheel] = upload_wheels(tmp_path, running, token, "shunned", 1)
    url = f"{running.url}files/{sha(wheel)}/{wheel.name}"
    assert answer(url)[0] == 302
    assert running.stop() == 0
    with sqlite3.connect(data / "catalog.db") as db:
        db.execute("UPDATE projects SET status = 'quarantined' WHERE name = 'shunned'")
    running = bucket_server(data)
    url = f"{running.url}files/{sha(wheel)}/{wheel.name}"
    for method in ("GET", "HEAD"):
        for extra in ({}, {"Range": "bytes=0-3"}, {"If-None-Match": '"x"'}):
            status, headers, body = answer(url, method=method, headers=extra)
            assert status == 404 and "Location" not in headers and b"X-Amz" not in body, (method, extra, status)


def clone_rows(data: pathlib.Path, wheel: pathlib.Path, count: int) -> list[tuple[str, str]]:
    """`count` more rows like `wheel`'s, each its own sha256 and filename (no object behind them)."""
    made = []
    with sqlite3.connect(data / "catalog.db") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(files)") if row[1] != "id"]
        source = ", ".join("?" if c in ("sha256", "filename") else c for c in columns)
        for i in range(count):
            given = {"sha256": hashlib.sha256(b"clone %d" % i).hexdigest(),
                     "filename": f"{wheel.name.split('-')[0]}-9.{i}-py3-none-any.whl"}
            db.execute(f"INSERT INTO files ({', '.join(columns)}) SELECT {source} FROM files WHERE filename = ?",
                       (*[given[c] for c in columns if c in given], wheel.name))
            made.append((given["sha256"], given["filename"]))
    return made


def test_thousands_of_files_from_threads_past_the_cap_get_their_own_rightly_signed_urls(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    # Lifetime 60 (a 6 s window) and 4400 files: the cache is cleared at the cap and at window
    # turns while 6 threads sign at once; every URL must be its own file's and rightly signed.
    import http.client
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--s3-url-lifetime", "60")
    [wheel] = upload_wheels(tmp_path, running, token, "thronged", 1)
    assert running.stop() == 0
    files = [(sha(wheel), wheel.name)] + clone_rows(data, wheel, 4400)
    running = bucket_server(data, "--s3-url-lifetime", "60")
    parts = urllib.parse.urlsplit(running.url)
    handed: list[tuple[str, str, float]] = []
    problems: list[str] = []
    stop_at = time.time() + 20

    def worker(k: int) -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        i = k * 733
        while time.time() < stop_at and not problems:
            digest, name = files[i % len(files)]
            i += 1
            conn.request("GET", f"/files/{digest}/{name}")
            response = conn.getresponse()
            body = response.read()
            location = response.getheader("Location") or ""
            if response.status != 302 or blob_key(bucket_server.prefix, digest) + "?" not in location:
                problems.append(f"{digest}: {response.status} {location} {body!r}")
            handed.append((digest, location, time.time()))
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:5]
    assert len(handed) > 4400, len(handed)
    per_window: dict[tuple[str, int], set[str]] = {}
    for digest, url, after in handed:
        signed = signed_at(url)
        assert signed % 6 == 0 and signed <= after and signed + 60 - after >= 53, (url, after)
        per_window.setdefault((digest, signed), set()).add(url)
    assert all(len(urls) == 1 for urls in per_window.values())
    wrong = [url for urls in per_window.values() for url in urls
             if not signature_is_right(url, radosgw["S3_SECRET_KEY"])]
    assert not wrong, (len(wrong), wrong[:3])
    # radosgw agrees: its own file's bytes for the real one, 404 (not 403) for a clone's.
    real = [url for (digest, _), urls in per_window.items() if digest == sha(wheel) for url in urls]
    assert real and all(fetch(url) == wheel.read_bytes() for url in real)
    clone_url = next(url for (digest, _), urls in per_window.items() if digest != sha(wheel) for url in urls)
    with pytest.raises(urllib.error.HTTPError) as refused:
        fetch(clone_url)
    assert refused.value.code == 404, refused.value.read()
