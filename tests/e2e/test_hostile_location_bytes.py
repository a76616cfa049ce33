"""Hostile tests of a redirect's Location encoding (app/download_answer.cpp redirect_download,
text::percent_encode_space_and_non_ascii), as a hand-edited catalog row meets them:

* URLs whose encoding triples them (8 KiB, 64 KiB, 1 MiB of 0xFF): the head grows past any
  buffer a serializer might assume; GET and HEAD must agree and the connection stay in step,
  over HTTP and HTTPS;
* URLs of nothing but spaces, the empty URL, every byte from 0x20 to 0xFF at once, and URLs that
  already hold %XX escapes (which must never be escaped a second time);
* conditional and Range headers on a redirect row (a 302 has no validators of its own);
* the differential: pip, requests and curl follow the encoded Location to a local HTTP server
  that records the exact request target it received; that target must be the catalog's bytes,
  each space and byte past ASCII percent-encoded once, and every other byte as it was.
"""

from __future__ import annotations

import http.server
import pathlib
import socket
import ssl
import subprocess
import threading

import pytest

from conftest import ingest
from server_process import ServerProcess
from test_hostile_download_rows import address, exchange, sha256
from test_hostile_page_files import remote_rows, uri_escaped
from wheelbuilder import build_wheel

LEAD = b"302 Found: the file is at "


# ---- helpers ----

def faraway(tmp_path: pathlib.Path, binary: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    data = tmp_path / "data"
    wheel = build_wheel(tmp_path / "farm", "faraway", "1.0")
    assert ingest(binary, data, wheel).returncode == 0
    return data, wheel


def connect(server: ServerProcess) -> socket.socket:
    conn = socket.create_connection(address(server), timeout=20)
    if server.url.startswith("https:"):
        context = ssl.create_default_context(cafile=str(server.ca))
        conn = context.wrap_socket(conn, server_hostname="localhost")
    return conn


def pipelined(server: ServerProcess, requests: list[tuple[str, str, dict]]) -> bytes:
    """Every request in one write on one connection, the last with Connection: close; every byte
    the server sends until it closes."""
    raw = b""
    for index, (method, path, headers) in enumerate(requests):
        fields = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        close = "Connection: close\r\n" if index == len(requests) - 1 else ""
        raw += f"{method} {path} HTTP/1.1\r\nHost: x\r\n{fields}{close}\r\n".encode("latin-1")
    received = b""
    with connect(server) as conn:
        conn.sendall(raw)
        while piece := conn.recv(1 << 16):
            received += piece
    return received


def split(raw: bytes, methods: list[str]) -> list[tuple[bytes, dict[str, bytes], bytes]]:
    """The responses in `raw`, one per method, as (status line, fields as bytes, body); no field
    twice; nothing may be left over."""
    out = []
    for method in methods:
        head, separator, raw = raw.partition(b"\r\n\r\n")
        assert separator, raw[:300]
        lines = head.split(b"\r\n")
        fields: dict[str, bytes] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            assert colon, line[:200]
            key = name.decode("latin-1").strip().lower()
            assert key not in fields, (key, head[:300])
            fields[key] = value.strip()
        length = 0 if method == "HEAD" else int(fields["content-length"])
        assert len(raw) >= length, (len(raw), length)
        out.append((lines[0], fields, raw[:length]))
        raw = raw[length:]
    assert raw == b"", raw[:300]
    return out


def assert_redirect(answer, url: bytes, method: str = "GET") -> None:
    status, fields, body = answer
    want = uri_escaped(url)
    assert status == b"HTTP/1.1 302 Found", status
    assert fields["location"] == want, (fields["location"][:120], want[:120])
    assert int(fields["content-length"]) == len(LEAD) + len(want) + 1
    if method == "GET":
        assert body == LEAD + want + b"\n", body[:200]
        body.decode("utf-8")
    else:
        assert body == b""


class Recorder:
    """A plain HTTP server on loopback that records each request line's target, byte for byte,
    and answers every GET with `payload`."""

    def __init__(self, payload: bytes):
        self.targets: list[bytes] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                # raw_requestline is the bytes the client sent: "GET <target> HTTP/1.1\r\n"
                recorder.targets.append(self.raw_requestline.split(b" ")[1])
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ---- long URLs: the encoded head three times the catalog's URL ----

@pytest.mark.parametrize("scheme", ["http", "https"])
def test_urls_of_8_kib_64_kib_and_1_mib_past_ascii_are_framed_and_keep_the_connection_in_step(
        tmp_path, wheelhouse_bin, start_server, tls_files, scheme):
    """Rows whose URLs hold 8 KiB, 64 KiB and 1 MiB of 0xFF (each written into Location as %FF:
    a head of up to 3 MiB) and 1 MiB of plain 'a' (no encoding, a 1 MiB head as it is). On one
    connection, over HTTP and HTTPS, each is asked by GET then HEAD, then /healthz: each 302 must
    carry the whole encoded URL in Location and body, GET and HEAD the same head, the
    Content-Length true, /healthz answered after them (in step), and the server still running."""
    data, wheel = faraway(tmp_path, wheelhouse_bin)
    urls = [b"https://x.invalid/" + b"\xff" * size for size in (8 * 1024, 64 * 1024, 1 << 20)]
    urls.append(b"https://x.invalid/" + b"a" * (1 << 20))
    rows = remote_rows(data, wheel, urls)
    server = start_server(data, *tls_files.serve_arguments(), ca=tls_files.ca) if scheme == "https" \
        else start_server(data)
    requests = []
    for digest, name in rows:
        requests += [("GET", f"/files/{digest}/{name}", {}), ("HEAD", f"/files/{digest}/{name}", {})]
    requests.append(("GET", "/healthz", {}))
    answers = split(pipelined(server, requests), [method for method, _, _ in requests])
    for index, url in enumerate(urls):
        got, headed = answers[2 * index], answers[2 * index + 1]
        assert_redirect(got, url, "GET")
        assert_redirect(headed, url, "HEAD")
        assert got[1] == headed[1]
    assert answers[-1][0] == b"HTTP/1.1 200 OK", answers[-1]
    assert server.process.poll() is None


# ---- degenerate URLs, and every byte at once ----

def test_a_url_of_spaces_every_byte_from_0x20_to_0xff_and_the_empty_url(tmp_path, wheelhouse_bin, start_server):
    """A URL of one space, of 4096 spaces, one holding every byte from 0x20 to 0xFF but DEL (in
    order, twice), and the empty URL, each asked by GET and HEAD on one pipelined connection.
    The space and byte-past-ASCII URLs must give a 302 whose Location is exactly each space and
    byte past ASCII as uppercase %XX and every other byte (including '%' itself) as it was; the
    empty URL must never give a 302 nor a Location (the server has nowhere to send the client);
    the connection must stay in step (a /healthz last)."""
    data, wheel = faraway(tmp_path, wheelhouse_bin)
    alphabet = bytes(b for b in range(0x20, 0x100) if b != 0x7F) * 2
    urls = [b" ", b" " * 4096, alphabet, b""]
    rows = remote_rows(data, wheel, urls)
    server = start_server(data)
    requests = [(method, f"/files/{digest}/{name}", {}) for digest, name in rows for method in ("GET", "HEAD")]
    requests.append(("GET", "/healthz", {}))
    answers = split(pipelined(server, requests), [method for method, _, _ in requests])
    for index, url in enumerate(urls[:-1]):
        assert_redirect(answers[2 * index], url, "GET")
        assert_redirect(answers[2 * index + 1], url, "HEAD")
    expected_alphabet = (bytes(range(0x21, 0x7F)) + b"".join(b"%%%02X" % b for b in range(0x80, 0x100)))
    assert answers[4][1]["location"] == (b"%20" + expected_alphabet) * 2
    for empty in answers[6:8]:
        assert not empty[0].startswith(b"HTTP/1.1 3"), empty
        assert "location" not in empty[1], empty
    assert answers[-1][0] == b"HTTP/1.1 200 OK"


def test_escapes_already_in_the_url_are_never_escaped_again(tmp_path, wheelhouse_bin, start_server):
    """URLs that already hold escapes: '%C3%A9', '%20', '%25', a lone '%', '%zz', and the same
    URL once with a raw é beside an escaped one. Location must keep every existing '%' sequence
    as it is (no '%25' added) and encode only the raw space and bytes past ASCII; an all-ASCII
    URL with no space must come back byte for byte."""
    data, wheel = faraway(tmp_path, wheelhouse_bin)
    urls = [b"https://x.invalid/caf%C3%A9/a%20b/c%25d/%/e%zz?q=%2F",
            b"https://x.invalid/caf%C3%A9/caf\xc3\xa9/a b%20c",
            b"https://x.invalid/%%%%%FF%ff"]
    rows = remote_rows(data, wheel, urls)
    server = start_server(data)
    answers = exchange(server, *[("GET", f"/files/{digest}/{name}", {}) for digest, name in rows])
    locations = [fields["location"].encode("latin-1") for _, fields, _ in answers]
    assert locations == [urls[0], b"https://x.invalid/caf%C3%A9/caf%C3%A9/a%20b%20c", urls[2]], locations


def test_conditional_and_range_headers_on_a_redirect_row_still_redirect(tmp_path, wheelhouse_bin, start_server):
    """A redirect row asked with If-None-Match (*, and the file's own sha256 as an ETag),
    If-Modified-Since in the future, Range and If-Range, by GET and HEAD, pipelined: a 302 has
    no validators here, so none of these may turn it into a 304, 206, 412 or 416; each answer
    must be the same 302 with the same encoded Location, and the connection stay in step."""
    data, wheel = faraway(tmp_path, wheelhouse_bin)
    url = b"https://x.invalid/caf\xc3\xa9 x/\xff"
    [(digest, name)] = remote_rows(data, wheel, [url])
    server = start_server(data)
    path = f"/files/{digest}/{name}"
    variations = [{}, {"If-None-Match": "*"}, {"If-None-Match": f'"{digest}"'},
                  {"If-Modified-Since": "Sat, 01 Jan 2050 00:00:00 GMT"}, {"Range": "bytes=0-0"},
                  {"Range": "bytes=5-"}, {"If-Range": f'"{digest}"', "Range": "bytes=0-3"},
                  {"If-Match": '"nope"'}, {"If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}]
    requests = [(method, path, headers) for headers in variations for method in ("GET", "HEAD")]
    requests.append(("GET", "/healthz", {}))
    answers = split(pipelined(server, requests), [method for method, _, _ in requests])
    for (method, _, headers), answer in zip(requests[:-1], answers):
        assert answer[0] == b"HTTP/1.1 302 Found", (headers, method, answer[0])
        assert_redirect(answer, url, method)
    assert answers[-1][0] == b"HTTP/1.1 200 OK"


# ---- the differential: what the final server receives ----

DIFFERENTIAL_PATH = b"/caf\xc3\xa9 x/already%C3%A9/%25/\xff\xfe/q?x=\xc2\xa0 y&z=%20"


def expected_target(path: bytes) -> bytes:
    return b"".join(b"%%%02X" % b if b == 0x20 or b > 0x7F else bytes([b]) for b in path)


def test_pip_requests_and_curl_follow_the_location_and_the_final_server_gets_it_encoded_once(
        tmp_path, wheelhouse_bin, start_server, pip):
    """The wheel's own row redirects to a local HTTP server at a path holding a raw é and
    space, an already-escaped %C3%A9 and %25, a lone 0xFF 0xFE, and a query with a raw NBSP,
    space and %20. pip (installing through the index, hash-checked), requests and curl -L each
    follow the 302; the request target the final server records must be, for each, exactly the
    catalog's bytes with each space and byte past ASCII as %XX (never '%25C3' for an existing
    escape, never a raw byte), and pip must get the wheel and accept its sha256."""
    data, wheel = faraway(tmp_path, wheelhouse_bin)
    recorder = Recorder(wheel.read_bytes())
    try:
        import sqlite3
        url = b"http://127.0.0.1:%d" % recorder.port + DIFFERENTIAL_PATH
        with sqlite3.connect(data / "catalog.db") as db:
            db.execute("UPDATE files SET download_mode = 'redirect', remote_url = CAST(? AS TEXT) "
                       "WHERE filename = ?", (url, wheel.name))
        server = start_server(data)
        want = expected_target(DIFFERENTIAL_PATH)
        download = f"{server.url}files/{sha256(wheel)}/{wheel.name}"

        import requests
        answer = requests.get(download, timeout=20)
        assert answer.status_code == 200 and answer.content == wheel.read_bytes()
        assert recorder.targets == [want], recorder.targets

        done = subprocess.run(["curl", "-sS", "-L", "-o", str(tmp_path / "by-curl.whl"), download],
                              capture_output=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "by-curl.whl").read_bytes() == wheel.read_bytes()
        assert recorder.targets[1:] == [want], recorder.targets

        pip("download", "--no-deps", "--index-url", f"{server.url}simple/", "-d", str(tmp_path / "by-pip"),
            "faraway==1.0")
        assert (tmp_path / "by-pip" / wheel.name).read_bytes() == wheel.read_bytes()
        # pip may ask more than once (its own retry or a resume); every ask must be the same target.
        assert len(recorder.targets) >= 3 and set(recorder.targets) == {want}, recorder.targets
    finally:
        recorder.stop()
