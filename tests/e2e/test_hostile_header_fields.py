"""Request header fields read by one walk in arrival order (transport/net.hpp field_value, 99f26e4),
and a response written inline on the session's own thread: fields sent twice, in odd case, not
UTF-8, thousands of them up to the header limit; pipelined requests answered inline one after the
other. Access checks fail closed whatever order the credentials come in."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time

import pytest

from test_hostile_clients import address, read_until_closed
from test_uploads import make_token
from tls_client import connect
from wheelbuilder import build_wheel


@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    """A private index with demo-proj and other-proj, a read token limited to demo-proj, an admin one."""
    data = tmp_path / "data"
    data.mkdir()
    wheels = [build_wheel(tmp_path / "shelf", name, "1.0") for name in ("demo-proj", "other-proj")]
    ingested = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), *map(str, wheels)],
                              capture_output=True, text=True, timeout=60)
    assert ingested.returncode == 0, ingested.stderr
    tokens = {"limited": make_token(wheelhouse_bin, data, "read-demo", "--scope", "read", "--project", "demo-proj"),
              "upload": make_token(wheelhouse_bin, data, "up-demo", "--scope", "upload", "--project", "demo-proj"),
              "root": make_token(wheelhouse_bin, data, "root", "--scope", "admin")}
    return start_server(data, "--private"), tokens


def ask(server, target: str, *fields: str | bytes, method: str = "GET") -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    lines = b"".join((f if isinstance(f, bytes) else f.encode()) + b"\r\n" for f in fields)
    with socket.create_connection(address(server)) as connection:
        connection.sendall(head + lines + b"\r\n")
        return read_until_closed(connection, 10)


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_a_second_authorization_field_never_widens_the_first(index):
    server, tokens = index
    root, limited = f"Authorization: Bearer {tokens['root']}", f"Authorization: Bearer {tokens['limited']}"
    assert status(ask(server, "/api/v1/tokens", limited, root)) == 403
    assert status(ask(server, "/simple/other-proj/", limited, root)) == 403
    assert status(ask(server, "/api/v1/tokens", "Authorization: Bearer wh_nope", root)) == 401
    assert status(ask(server, "/api/v1/tokens", "Authorization:", root)) == 401  # an empty first is no token
    assert status(ask(server, "/api/v1/tokens", b"Authorization: Bearer \xff\xfe\x80", root)) == 401
    # Only the first field is read, whatever the case of its name (both binaries alike).
    assert status(ask(server, "/api/v1/tokens", root.replace("Authorization", "aUtHoRiZaTiOn"), limited)) == 200
    assert status(ask(server, "/api/v1/tokens", b"AUTHORIZATION: Bearer " + tokens["root"].encode())) == 200


def test_conditional_and_negotiation_fields_sent_twice_or_in_odd_case(index):
    server, tokens = index
    root = f"Authorization: Bearer {tokens['root']}"
    page = ask(server, "/simple/demo-proj/", root)
    etag = re.search(rb"ETag: ([^\r]*)", page).group(1).decode()
    assert status(ask(server, "/simple/demo-proj/", root, f"iF-nOnE-mAtCh: {etag}")) == 304
    assert status(ask(server, "/simple/demo-proj/", root, f"If-None-Match: {etag}", 'If-None-Match: "x"')) == 304
    # A second field could only add a match; 200 is always a correct answer to a conditional GET.
    assert status(ask(server, "/simple/demo-proj/", root, 'If-None-Match: "x"', f"If-None-Match: {etag}")) in (200, 304)
    assert status(ask(server, "/simple/demo-proj/", root, b'If-None-Match: "\xff\xfe"')) == 200
    assert status(ask(server, "/simple/demo-proj/", root, b"If-Modified-Since: \xff\xfe")) == 200
    json_page = ask(server, "/simple/demo-proj/", root, "aCcEpT: application/vnd.pypi.simple.v1+json")
    assert b"Content-Type: application/vnd.pypi.simple.v1+json" in json_page, json_page[:300]
    odd = ask(server, "/simple/demo-proj/", root, b"Accept: \xff\xfe;q=1, text/html", b"User-Agent: \xc3\x28 pip/\xff")
    assert status(odd) == 200
    # Range twice, or in odd case: a 206 whose body is what its Content-Range says, or the whole file.
    href = re.search(rb'href="(/files/[^"#]*)', page).group(1).decode()
    whole = ask(server, href, root).split(b"\r\n\r\n", 1)[1]
    for fields in (["Range: bytes=0-9", "Range: bytes=5-9"], ["rAnGe: bytes=3-7"],
                   ["Range: bytes=0-9", 'If-Range: "x"', f"If-Range: {etag}"]):
        answer = ask(server, href, root, *fields)
        head, body = answer.split(b"\r\n\r\n", 1)
        if status(answer) == 206:
            first, last = map(int, re.search(rb"Content-Range: bytes (\d+)-(\d+)/", head).groups())
            assert body == whole[first:last + 1]
        else:
            assert status(answer) == 200 and body == whole


def test_close_in_a_second_connection_field_closes(index):
    server, _ = index
    with socket.create_connection(address(server)) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")
        started = time.monotonic()
        answer = read_until_closed(connection, 3)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert b"Connection: close" in answer and time.monotonic() - started < 2


def test_two_host_fields_are_refused(index):
    server, _ = index
    answer = ask(server, "/.well-known/pytp?discover=/legacy/", "Host: b.example")  # ask() sends Host: x first
    assert status(answer) == 400, answer[:300]


def test_expect_100_continue_in_odd_case_or_sent_twice_gets_its_continue(index):
    server, tokens = index
    for expects in ([b"eXpEcT: 100-CONTINUE"], [b"Expect: 100-continue", b"Expect: 100-continue"],
                    [b"Expect: something-else", b"Expect: 100-continue"]):
        with socket.create_connection(address(server), timeout=5) as connection:
            connection.sendall(b"PUT /api/v1/files/demo_proj-2.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n"
                               b"Authorization: Bearer " + tokens["upload"].encode() + b"\r\nContent-Length: 10\r\n"
                               + b"".join(e + b"\r\n" for e in expects) + b"\r\n")
            assert connection.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
            connection.sendall(b"0123456789")
            assert Reader(connection)(False)[0].startswith(b"HTTP/1.1 400 ")  # not a wheel: refused after its body


def test_a_header_block_of_thousands_of_fields_costs_linear_time(index):
    server, tokens = index
    auth = f"Authorization: Bearer {tokens['root']}\r\n".encode()
    page = ask(server, "/simple/demo-proj/", auth.strip())
    href = re.search(rb'href="(/files/[^"#]*)', page).group(1)

    def rounds(fields: int, count: int = 60) -> float:
        # The fields before every real one: each walk for an absent field (Range, If-None-Match...) visits all.
        request = b"GET " + href + b" HTTP/1.1\r\nHost: x\r\n" + b"a:\r\n" * fields + auth + b"\r\n"
        with socket.create_connection(address(server), timeout=10) as connection:
            started = time.monotonic()
            for _ in range(count):
                connection.sendall(request)
                answer = b""
                while b"\r\n\r\n" not in answer:
                    answer += connection.recv(65536)
                head, body = answer.split(b"\r\n\r\n", 1)
                assert head.startswith(b"HTTP/1.1 200 "), head
                length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
                while len(body) < length:
                    body += connection.recv(65536)
            return time.monotonic() - started

    small = min(rounds(960) for _ in range(3))
    large = min(rounds(3840) for _ in range(3))  # 16 KiB: the header limit
    assert large < 10 * small + 0.05, (small, large)  # 4x the fields: 4x the work, not 16x
    assert status(ask(server, "/healthz", *[b"a:"] * 4200)) == 431


@pytest.fixture(params=["http", "https"])
def scheme(request):
    return request.param


def test_pipelined_requests_answered_inline_are_whole_in_order_and_the_connection_stays(tmp_path, wheelhouse_bin,
                                                                                        start_server, tls_files, scheme):
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "shelf", "demo-proj", "1.0")
    assert subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), str(wheel)],
                          capture_output=True, timeout=60).returncode == 0
    https = scheme == "https"
    server = start_server(data, "--threads", "1", *(tls_files.serve_arguments() if https else []),
                          ca=tls_files.ca if https else None)
    with connect(server.url, server.ca) as connection:
        connection.sendall(b"GET /simple/demo-proj/ HTTP/1.1\r\nHost: x\r\n\r\n")
        first = Reader(connection)(False)
    etag = re.search(rb"ETag: ([^\r]*)", first[0]).group(1)
    kinds = [(b"GET /simple/demo-proj/ HTTP/1.1\r\nHost: x\r\n\r\n", False, b"200", first[1]),
             (b"GET /simple/demo-proj/ HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag + b"\r\n\r\n", True, b"304", b""),
             (b"HEAD /simple/demo-proj/ HTTP/1.1\r\nHost: x\r\n\r\n", True, b"200", b""),
             (b"GET /simple/demo-proj/ HTTP/1.1\r\nAccept: application/vnd.pypi.simple.v1+json\r\n\r\n", False, b"200",
              None),
             (b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", False, b"404", None)]
    for count in (50, 1500):
        sequence = [kinds[i % len(kinds)] for i in range(count)]
        with connect(server.url, server.ca) as connection:
            sender = threading.Thread(target=connection.sendall, args=(b"".join(k[0] for k in sequence),))
            read_response = Reader(connection)
            sender.start()  # one write: the next request is in the buffer when the last is answered inline
            for sent, head_only, code, expected_body in sequence:
                head, body = read_response(head_only)
                assert head.split(b" ")[1] == code, (sent, head)
                if expected_body is not None:
                    assert body == expected_body, (sent, head)
                if sent.startswith(b"HEAD"):
                    assert int(re.search(rb"Content-Length: (\d+)", head).group(1)) == len(first[1])
            sender.join(10)
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert read_response(False)[0].startswith(b"HTTP/1.1 200 ")
    # A client that leaves at once (a reset) after a pipelined burst harms no one.
    for _ in range(10):
        leaving = socket.create_connection(address(server))
        leaving.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        leaving.sendall(kinds[0][0] * 400)
        leaving.close()
    assert server.process.poll() is None
    with connect(server.url, server.ca) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert Reader(connection)(False)[0].startswith(b"HTTP/1.1 200 ")


class Reader:
    """Responses off one connection, one at a time (what follows one kept for the next)."""

    def __init__(self, connection):
        self.connection, self.buffer = connection, b""
        connection.settimeout(10)

    def __call__(self, head_only: bool) -> tuple[bytes, bytes]:
        while b"\r\n\r\n" not in self.buffer:
            piece = self.connection.recv(65536)
            assert piece, f"closed mid-response after {self.buffer[:200]!r}"
            self.buffer += piece
        head, rest = self.buffer.split(b"\r\n\r\n", 1)
        length = 0 if head_only else int(re.search(rb"Content-Length: (\d+)", head).group(1))
        while len(rest) < length:
            piece = self.connection.recv(65536)
            assert piece, "closed mid-body"
            rest += piece
        self.buffer = rest[length:]
        return head, rest[:length]
