"""Clients an attacker would write, against the real binary with raw sockets (issue 14 items 1, 3,
4 and 5): nothing one of them sends stops the server, grows its memory without bound, or keeps
everyone else from being served. Each refusal is a precise status with Connection: close.
The framing, limit and slow-client tests run over plain HTTP and over HTTPS (issue 25 item 1):
the same bytes inside TLS meet the same rules."""

from __future__ import annotations

import os
import resource
import socket
import struct
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from server_process import ServerProcess
from tls_client import connect
from test_uploads import make_token, twine
from wheelbuilder import build_wheel

CHUNKED_GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"


# --- helpers ---------------------------------------------------------------------------------

def address(server: ServerProcess) -> tuple[str, int]:
    host, port = server.url.split("://", 1)[1].rstrip("/").split(":")
    return host, int(port)


def read_until_closed(connection: socket.socket, timeout: float) -> bytes:
    """What the server sends until it closes the connection (a reset after its answer counts as a close)."""
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        connection.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            piece = connection.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            break
        if not piece:
            break
        received += piece
    return received


def exchange(server: ServerProcess, data: bytes, timeout: float = 10) -> bytes:
    """Sends `data` from a thread (the server may stop reading it) and returns what comes back."""
    with connect(server.url, server.ca) as connection:
        def send():
            try:
                connection.sendall(data)
            except OSError:  # the server answered, stopped reading and closed: expected
                pass
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        answer = read_until_closed(connection, timeout)
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:  # reset by the server already
            pass
        sender.join(timeout)
        return answer


def healthz(server: ServerProcess) -> int:
    with server.get("/healthz") as response:
        return response.status


def rss_bytes(server: ServerProcess) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def refused(answer: bytes, status: int, phrase: str) -> bool:
    return (answer.startswith(f"HTTP/1.1 {status} ".encode()) and phrase.encode() in answer
            and b"Connection: close" in answer)


def responses_in(answer: bytes) -> int:
    return answer.count(b"HTTP/1.1 ")


class Trickler:
    """A client that sends its request's body a byte every `pause` seconds, from its own thread,
    until the server answers or closes, or `give_up` seconds pass."""

    def __init__(self, server: ServerProcess, head: bytes, pause: float, give_up: float = 20):
        self.connection = connect(server.url, server.ca)
        self.connection.sendall(head)
        self.pause, self.give_up = pause, give_up
        self.answer = b""
        self.ended_after: float | None = None  # None: still trickling when it gave up
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.monotonic()
        self.thread.start()

    def _run(self):
        self.connection.settimeout(self.pause)
        while time.monotonic() - self.started < self.give_up:
            try:
                self.connection.send(b"a")
                piece = self.connection.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            self.answer += piece
            break
        else:
            self.connection.close()
            return
        self.answer += read_until_closed(self.connection, 5)
        self.ended_after = time.monotonic() - self.started
        self.connection.close()


class SlowLink:
    """A relay between a client and the server that carries the client's bytes at `rate` bytes a
    second through small socket buffers, and passes a reset on as a reset: a slow uplink. `ends`
    records how each direction ended: "eof", or the error that ended it."""

    def __init__(self, server: ServerProcess, rate: int):
        self.server_address, self.rate = address(server), rate
        self.ends: dict[str, str] = {}
        self.listener = socket.create_server(("127.0.0.1", 0))
        scheme = server.url.split("://", 1)[0]  # TLS passes through the relay as it is
        self.url = f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}/"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            client, _ = self.listener.accept()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            upstream = socket.socket()
            upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 10)
            upstream.connect(self.server_address)
            for source, sink, name in ((client, upstream, "to server"), (upstream, client, "to client")):
                threading.Thread(target=self._pump, args=(source, sink, name, (client, upstream)), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, name: str, both: tuple):
        try:
            while data := source.recv(16 << 10):
                sink.sendall(data)
                if name == "to server":
                    time.sleep(len(data) / self.rate)
            sink.shutdown(socket.SHUT_WR)
            self.ends[name] = "eof"
        except OSError as error:
            self.ends[name] = error.strerror
            for end in both:  # a reset from one side reaches the other as a reset
                try:
                    end.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    end.close()
                except OSError:
                    pass


def join_all(clients: list[Trickler], timeout: float):
    deadline = time.monotonic() + timeout
    for client in clients:
        client.thread.join(max(0.0, deadline - time.monotonic()))


# --- item 1: one request must not kill the process ---------------------------------------------

def test_a_trailer_field_of_64_kib_ends_its_connection_not_the_server(tmp_path, start_over):
    server = start_over(tmp_path / "data")
    # The reproducer of issue 14: Beast threw std::length_error, and the process aborted.
    for _ in range(5):
        answer = exchange(server, CHUNKED_GET + b"0\r\nX: " + b"a" * 65534 + b"\r\n\r\n")
        assert refused(answer, 431, "trailer fields"), answer[:300]
    assert server.process.poll() is None
    assert healthz(server) == 200


# --- item 3: nothing buffered without bound ----------------------------------------------------

def test_chunk_extensions_are_refused_before_they_cost_memory(tmp_path, start_over):
    server = start_over(tmp_path / "data")
    before = rss_bytes(server)
    endless = CHUNKED_GET + b"5;x=" + b"a" * (256 << 20)
    answer = exchange(server, endless, timeout=20)
    assert refused(answer, 400, "without chunk extensions"), answer[:300]
    assert rss_bytes(server) - before < 32 << 20
    many = CHUNKED_GET + b"1;name=value\r\na\r\n" * 1000 + b"0\r\n\r\n"
    assert refused(exchange(server, many), 400, "pass 4096 bytes")
    assert healthz(server) == 200


def test_trailers_have_a_total_limit(tmp_path, start_over):
    server = start_over(tmp_path / "data")
    before = rss_bytes(server)
    fields = b"".join(b"X-Trailer-%d: 0123456789\r\n" % i for i in range(1_000_000))  # 28 MB
    answer = exchange(server, CHUNKED_GET + b"0\r\n" + fields + b"\r\n", timeout=20)
    assert refused(answer, 431, "headers and trailers together pass 16384 bytes"), answer[:300]
    assert rss_bytes(server) - before < 32 << 20
    small = exchange(server, CHUNKED_GET + b"0\r\nX-Checksum: abc\r\n\r\n", timeout=2)
    assert small.startswith(b"HTTP/1.1 200 ")
    assert healthz(server) == 200


# --- item 4: a trickle cannot hold a connection, and connections are capped --------------------

def test_trickled_bodies_end_at_the_rate_deadline_with_408(tmp_path, start_over):
    server = start_over(tmp_path / "data", "--read-timeout", "1", "--min-body-rate", "1024")
    # 40 clients, a byte every 0.2 s each: never silent for the read timeout, far below the rate.
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n"
    clients = [Trickler(server, head, 0.2, give_up=10) for _ in range(40)]
    assert healthz(server) == 200  # served meanwhile
    join_all(clients, 15)
    for client in clients:
        assert refused(client.answer, 408, "below this server's minimum of 1024"), client.answer[:300]
        assert client.ended_after is not None and client.ended_after < 6  # issue 14: still there after 6x
    assert healthz(server) == 200


def test_a_body_that_stops_is_answered_408(tmp_path, start_over):
    server = start_over(tmp_path / "data", "--read-timeout", "1")
    with connect(server.url, server.ca) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf")
        answer = read_until_closed(connection, 5)
    assert refused(answer, 408, "nothing of its body arrived for 1 s"), answer


def test_past_the_connection_cap_clients_get_503_and_those_connected_are_served(tmp_path, start_server):
    server = start_server(tmp_path / "data", "--max-connections", "8", "--read-timeout", "30")
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\n"
    holding = [socket.create_connection(address(server)) for _ in range(8)]
    for connection in holding:
        connection.sendall(head + b"a")
    time.sleep(0.3)
    for _ in range(4):
        answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
        assert refused(answer, 503, "limit of 8 connections open (--max-connections)"), answer[:300]
        assert b"Retry-After: 1\r\n" in answer
    for connection in holding:  # the clients it has are still answered
        connection.sendall(b"bc")
        assert read_until_closed(connection, 5).startswith(b"HTTP/1.1 200 ")
        connection.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=5)
        if answer.startswith(b"HTTP/1.1 200 "):
            break
        time.sleep(0.05)
    assert answer.startswith(b"HTTP/1.1 200 ")


def limited_descriptors(count: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


@pytest.mark.parametrize("cap", [[], ["--max-connections", "1000"]], ids=["default-cap", "cap-past-the-limit"])
def test_with_128_descriptors_160_tricklers_leave_a_normal_client_served(tmp_path, cap):
    # Issue 14: with 128 file descriptors, 160 trickling clients left a normal client 0 of 4
    # answers. With the default cap (from the limit) the excess gets 503 at once; with a cap the
    # limit cannot hold, accept fails with EMFILE and backs off. Either way the normal client's
    # four requests are answered, each 200 or a clean 503, and the process lives.
    server = ServerProcess(tmp_path / "data", "--threads", "2", "--read-timeout", "2", *cap,
                           preexec_fn=limited_descriptors(128)).start()
    try:
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n"
        tricklers = []
        for _ in range(160):
            try:
                tricklers.append(Trickler(server, head, 0.5, give_up=20))
            except OSError:
                break
        answers = []
        for _ in range(4):
            answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=15)
            answers.append(answer)
            if answer.startswith(b"HTTP/1.1 503 "):
                assert b"Retry-After: 1\r\n" in answer
            time.sleep(1)
        join_all(tricklers, 25)
        assert all(a.startswith(b"HTTP/1.1 200 ") or a.startswith(b"HTTP/1.1 503 ") for a in answers), answers
        assert server.process.poll() is None
        assert healthz(server) == 200  # the tricklers were cut at the rate deadline
    finally:
        assert server.stop() == 0, server.stderr()


# --- item 5: strict framing (RFC 9112 §6) --------------------------------------------------------

SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.parametrize("fields, body, status, phrase", [
    (b"Transfer-Encoding: chunked, identity\r\n", b"%x\r\n%s\r\n0\r\n\r\n" % (len(SMUGGLED), SMUGGLED), 400,
     "end Transfer-Encoding with chunked"),
    (b"Transfer-Encoding: xchunked\r\n", SMUGGLED, 400, "end Transfer-Encoding with chunked"),
    (b"Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n" + SMUGGLED, 501, "'gzip' transfer coding"),
    (b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", b"0\r\n\r\n" + SMUGGLED, 400, "Content-Length"),
    (b"Transfer-Encoding: chunked\r\n", b"zz\r\nhello\r\n0\r\n\r\n" + SMUGGLED, 400, "chunked body is malformed"),
    (b"Transfer-Encoding: chunked\r\n", b"-1\r\nhello\r\n0\r\n\r\n" + SMUGGLED, 400, "chunked body is malformed"),
    (b"Transfer-Encoding: chunked\r\n", b"1000000000000000000\r\nhello\r\n0\r\n\r\n" + SMUGGLED, 400,
     "chunked body is malformed"),
], ids=["chunked-identity", "xchunked", "gzip-chunked", "te-and-cl", "zz", "minus-one", "2^72"])
def test_framing_the_server_cannot_trust_is_refused_and_closed(tmp_path, start_over, fields, body, status, phrase):
    server = start_over(tmp_path / "data")
    answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n" + body, timeout=5)
    assert refused(answer, status, phrase), answer
    assert responses_in(answer) == 1  # the body was never taken for a request


# --- a lingering close: a refused upload's client still hears why ---------------------------------

def test_twine_on_a_slow_link_reads_the_401_of_a_bad_token_without_a_reset(tmp_path, wheelhouse_bin, start_over):
    data = tmp_path / "data"
    data.mkdir()
    make_token(wheelhouse_bin, data, "ci")
    server = start_over(data)
    wheel = build_wheel(tmp_path, "big-kernels", "1.0.0", files={"big_kernels/kernel.so": os.urandom(6 << 20)})
    # About 5 s to send: twine sends it all before reading the 401 that came after the headers.
    link = SlowLink(server, 1 << 20)
    uploaded = twine(link.url, "wh_" + "A" * 43, wheel, extra=("--cert", str(server.ca)) if server.ca else ())
    said = " ".join((uploaded.stdout + uploaded.stderr).split())
    assert uploaded.returncode != 0 and "401 Unauthorized" in said and "token is not valid here" in said, said
    # The server read and dropped the whole body, so nothing reset the connection under its answer
    # (a close with unread bytes does; RFC 9112 §9.6).
    deadline = time.monotonic() + 5
    while len(link.ends) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert link.ends.get("to client") == "eof", link.ends
    # Over TLS the server's close_notify is a record twine never reads: its own close then resets,
    # after it has the answer (asserted above). Over plain HTTP nothing is left unread.
    if server.ca is None:
        assert link.ends == {"to client": "eof", "to server": "eof"}, link.ends
    assert healthz(server) == 200
