"""What an attacker sends to the HTTPS port (and to --redirect-http's plain port) that no client does:
handshakes, records and requests cut, split, repeated or malformed; renegotiation and key updates;
bursts past --max-connections; SIGHUP in the middle of it all; clients that never read. After each,
the server must serve others, hold its memory, and sit at ~0% CPU (a wait re-armed on a ready
socket spins)."""

from __future__ import annotations

import base64
import collections
import hashlib
import os
import pathlib
import re
import signal
import socket
import ssl
import struct
import subprocess
import threading
import time

import pytest

from conftest import ingest
from server_process import ServerProcess
from test_uploads import make_token
from tls_client import TlsConnection, client_context
from wheelbuilder import build_wheel

HEALTH = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
HEALTH_CLOSE = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


# --- helpers -----------------------------------------------------------------------------------

def address(url: str) -> tuple[str, int]:
    return "127.0.0.1", int(url.rstrip("/").rsplit(":", 1)[1])


def redirect_address(server: ServerProcess) -> tuple[str, int]:
    return address(re.search(r"redirecting (http://[^/\s]+/) to https", server.stderr()).group(1))


def cpu_seconds(server: ServerProcess) -> float:
    fields = pathlib.Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assert_idle(server: ServerProcess, what: str, seconds: float = 2.0) -> None:
    """The server, left alone, uses (almost) no CPU: nothing spins on a ready socket."""
    time.sleep(0.5)
    before = cpu_seconds(server)
    time.sleep(seconds)
    used = (cpu_seconds(server) - before) / seconds
    assert used < 0.05, f"after {what}, the idle server uses {used:.0%} of a core: a wait spins"


def rss_kib(server: ServerProcess) -> int:
    return int(re.search(r"VmRSS:\s+(\d+)", pathlib.Path(f"/proc/{server.process.pid}/status").read_text()).group(1))


def read_all(connection, timeout: float) -> bytes:
    connection.settimeout(timeout)
    received = bytearray()
    try:
        while piece := connection.recv(65536):
            received += piece
    except (socket.timeout, ConnectionResetError):
        pass
    return bytes(received)


def healthy(server: ServerProcess) -> None:
    with TlsConnection(address(server.url), server.ca) as connection:
        connection.sendall(HEALTH_CLOSE)
        assert read_all(connection, 10).startswith(b"HTTP/1.1 200 "), "the server no longer serves a new client"


def send_close_notify(connection: TlsConnection) -> None:
    try:
        connection.tls.unwrap()
    except ssl.SSLWantReadError:
        pass
    connection.raw.sendall(connection.outgoing.read())


@pytest.fixture
def https(tmp_path, start_server, tls_files):
    (tmp_path / "data").mkdir()
    return start_server(tmp_path / "data", *tls_files.serve_arguments(), "--redirect-http", "127.0.0.1:0",
                        ca=tls_files.ca)


@pytest.fixture
def big_download(tmp_path, wheelhouse_bin, start_server, tls_files):
    """A server with one 48 MiB wheel over HTTPS; returns (server, its file's path, its bytes' sha256)."""
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "bigkernels", "1.0", files={"bigkernels/kernel.so": os.urandom(48 << 20)})
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    server = start_server(data, *tls_files.serve_arguments(), ca=tls_files.ca)
    with server.get("/simple/bigkernels/") as page:
        link = re.search(r'href="([^"#]+)', page.read().decode()).group(1)
    path = "/" + link.split("/files/", 1)[1] if "/files/" in link else link
    return server, "/files/" + path.lstrip("/"), hashlib.sha256(wheel.read_bytes()).hexdigest()


# --- ClientHellos built by hand ------------------------------------------------------------------

def python_hello(alpn: list[str] | None = None) -> bytes:
    context = ssl.create_default_context()
    if alpn:
        context.set_alpn_protocols(alpn)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def hello_with(replace: dict[int, bytes] | None = None, add: tuple = (), record_size: int = 16384) -> bytes:
    """Python's ClientHello with extensions replaced or added, the lengths fixed, cut into records."""
    body = python_hello(["http/1.1"])[5 + 4:]
    at = 2 + 32
    at += 1 + body[at]                                      # session id
    at += 2 + struct.unpack(">H", body[at:at + 2])[0]       # cipher suites
    at += 1 + body[at]                                      # compression methods
    head, rest, extensions = body[:at], body[at + 2:], []
    while rest:
        kind, length = struct.unpack(">HH", rest[:4])
        extensions.append((kind, (replace or {}).get(kind, rest[4:4 + length])))
        rest = rest[4 + length:]
    joined = b"".join(struct.pack(">HH", kind, len(data)) + data for kind, data in [*extensions, *add])
    message = head + struct.pack(">H", len(joined)) + joined
    handshake = b"\x01" + struct.pack(">I", len(message))[1:] + message
    pieces = [handshake[k:k + record_size] for k in range(0, len(handshake), record_size)]
    return b"".join(b"\x16\x03\x01" + struct.pack(">H", len(piece)) + piece for piece in pieces)


def alpn(names: bytes, list_length: int | None = None) -> bytes:
    return struct.pack(">H", len(names) if list_length is None else list_length) + names


def sni(*names: bytes, kind: int = 0) -> bytes:
    entries = b"".join(struct.pack(">BH", kind, len(name)) + name for name in names)
    return struct.pack(">H", len(entries)) + entries


ALPN, SERVER_NAME, PADDING = 16, 0, 21
ALERT_DECODE_ERROR = bytes.fromhex("15030300020232")

MALFORMED_HELLOS = {
    "an ALPN name of length 0": (hello_with({ALPN: alpn(b"\x00")}), ALERT_DECODE_ERROR),
    "an empty ALPN list": (hello_with({ALPN: alpn(b"")}), ALERT_DECODE_ERROR),
    "an ALPN list longer than its extension": (hello_with({ALPN: alpn(b"\x08http/1.1", 200)}), ALERT_DECODE_ERROR),
    "an ALPN list shorter than its extension": (hello_with({ALPN: alpn(b"\x08http/1.1", 3)}), ALERT_DECODE_ERROR),
    "an ALPN name past its list": (hello_with({ALPN: alpn(b"\x09http/1.1")}), ALERT_DECODE_ERROR),
    "an ALPN name cut short": (hello_with({ALPN: alpn(b"\x07http/1.1")}), ALERT_DECODE_ERROR),
    "an ALPN extension of one byte": (hello_with({ALPN: b"\x00"}), ALERT_DECODE_ERROR),
    "an empty ALPN extension": (hello_with({ALPN: b""}), ALERT_DECODE_ERROR),
    "the ALPN extension twice": (hello_with(add=((ALPN, alpn(b"\x08http/1.1")),)), None),
    "an SNI name with a NUL": (hello_with({SERVER_NAME: sni(b"local\x00host")}), None),
    "two SNI names": (hello_with({SERVER_NAME: sni(b"localhost", b"localhost")}), ALERT_DECODE_ERROR),
    "an SNI name of type 1": (hello_with({SERVER_NAME: sni(b"localhost", kind=1)}), ALERT_DECODE_ERROR),
    "a 60 KB padding extension in four records": (hello_with(add=((PADDING, b"\x00" * 60000),)), None),
    "a 3 KB padding extension in one-byte records": (hello_with(add=((PADDING, b"\x00" * 3000),), record_size=1),
                                                      None),
}


# --- the handshake -------------------------------------------------------------------------------

def test_malformed_alpn_and_sni_and_huge_hellos_get_an_alert_at_once_and_cost_nothing(https):
    before = rss_kib(https)
    for name, (hello, alert) in MALFORMED_HELLOS.items():
        with socket.create_connection(address(https.url)) as connection:
            connection.sendall(hello)
            started = time.monotonic()
            answer = read_all(connection, 5)
            assert time.monotonic() - started < 2, f"{name}: the server waited instead of refusing"
            assert answer[:1] == b"\x15" and len(answer) == 7, f"{name}: not a single alert: {answer[:40]!r}"
            if alert:
                assert answer == alert, f"{name}: {answer.hex()}"
    # Accepted oddities: a long but valid ALPN list, an empty SNI name, a 64 KB unknown extension.
    for hello in (hello_with({ALPN: alpn((b"\xff" + b"x" * 255) * 250 + b"\x08http/1.1")}),
                  hello_with({SERVER_NAME: sni(b"")}), hello_with(add=((0x7777, b"\x00" * 65000),))):
        with socket.create_connection(address(https.url)) as connection:
            connection.sendall(hello)
            connection.settimeout(5)
            assert connection.recv(5)[:1] == b"\x16", "a ServerHello"
    assert rss_kib(https) - before < 4 << 10
    healthy(https)
    assert_idle(https, "malformed ClientHellos")


@pytest.mark.parametrize("name", ["a" * 253, "a..b", "-", "xn--", "127.0.0.1"])
def test_odd_sni_names_are_served_the_one_certificate(https, name):
    with socket.create_connection(address(https.url)) as raw:
        raw.sendall(hello_with({SERVER_NAME: sni(name.encode())}))
        raw.settimeout(5)
        assert raw.recv(5)[:1] == b"\x16", f"SNI {name!r} refused"
    healthy(https)


def openssl_client(server: ServerProcess, *arguments: str, lines: list[bytes], pause: float) -> str:
    """openssl s_client, fed `lines` `pause` seconds apart (it reads its R and K commands one line
    at a time), then a request that closes."""
    process = subprocess.Popen(["openssl", "s_client", "-connect", "%s:%d" % address(server.url), "-CAfile",
                                str(server.ca), "-crlf", *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    time.sleep(0.5)
    try:
        for line in [*lines, b"GET /healthz HTTP/1.1\nHost: x\nConnection: close\n\n"]:
            process.stdin.write(line)
            process.stdin.flush()
            time.sleep(pause)
        time.sleep(1)
    except BrokenPipeError:  # it gave up (the renegotiation was refused)
        pass
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    output = process.stdout.read()
    process.wait(timeout=20)
    return output.decode(errors="replace")


def test_tls12_client_renegotiation_is_refused_and_the_server_serves_on(https):
    output = openssl_client(https, "-tls1_2", lines=[b"R\n"], pause=1)
    assert "RENEGOTIATING" in output
    assert "no renegotiation" in output, output[-600:]
    healthy(https)
    assert_idle(https, "a renegotiation")


def test_a_tls13_key_update_storm_is_answered_and_the_request_after_it_too(https):
    output = openssl_client(https, lines=[b"K\n"] * 150, pause=0.01)
    assert output.count("KEYUPDATE") >= 100
    assert "HTTP/1.1 " in output, output[-600:]
    healthy(https)
    assert_idle(https, "150 key updates")


# --- requests over TLS ---------------------------------------------------------------------------

def test_pipelined_requests_in_one_record_in_one_byte_records_and_in_2001_are_all_answered(https):
    with TlsConnection(address(https.url), https.ca) as connection:
        connection.sendall(HEALTH * 49 + HEALTH_CLOSE)  # one record
        assert read_all(connection, 10).count(b"HTTP/1.1 200 ") == 50
    for separate_segments in (False, True):
        with TlsConnection(address(https.url), https.ca) as connection:
            connection.raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            encrypted = bytearray()
            for byte in HEALTH * 3 + HEALTH_CLOSE:  # a record for each byte
                connection.tls.write(bytes([byte]))
                if separate_segments:
                    connection.raw.sendall(connection.outgoing.read())
                else:
                    encrypted += connection.outgoing.read()
            connection.raw.sendall(bytes(encrypted))
            assert read_all(connection, 10).count(b"HTTP/1.1 200 ") == 4
    with TlsConnection(address(https.url), https.ca) as connection:
        connection.sendall(HEALTH * 2000 + HEALTH_CLOSE)
        assert read_all(connection, 20).count(b"HTTP/1.1 200 ") == 2001
    assert_idle(https, "pipelined requests")


def test_close_notify_mid_header_is_a_400_and_after_a_whole_request_the_answer_still_comes(https):
    with TlsConnection(address(https.url), https.ca) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        send_close_notify(connection)
        assert read_all(connection, 5).startswith(b"HTTP/1.1 400 ")
    with TlsConnection(address(https.url), https.ca) as connection:
        connection.sendall(HEALTH)
        send_close_notify(connection)
        assert read_all(connection, 5).startswith(b"HTTP/1.1 200 ")
    assert_idle(https, "close_notify mid-request")


def test_a_body_at_the_upload_limit_over_tls_is_read_and_one_past_it_refused_at_once(tmp_path, wheelhouse_bin,
                                                                                       start_server, tls_files):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci", "--scope", "upload")
    server = start_server(data, *tls_files.serve_arguments(), "--max-upload-size", str(1 << 20), ca=tls_files.ca)
    authorization = b"Basic " + base64.b64encode(b"__token__:" + token.encode())
    head = (b"POST /legacy/ HTTP/1.1\r\nHost: x\r\nAuthorization: " + authorization +
            b"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n")
    with TlsConnection(address(server.url), tls_files.ca) as connection:
        connection.sendall(head % ((1 << 20) + 1))
        assert read_all(connection, 5).startswith(b"HTTP/1.1 413 ")
    with TlsConnection(address(server.url), tls_files.ca) as connection:
        body = b"--b\r\n" + b"x" * ((1 << 20) - 10) + b"\r\n--b--"
        body = body[:1 << 20].ljust(1 << 20, b"x")
        connection.sendall(head % len(body) + body)
        answer = read_all(connection, 10)
        assert answer.startswith(b"HTTP/1.1 4") and not answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert_idle(server, "uploads at the limit")


# --- downloads -----------------------------------------------------------------------------------

def test_a_download_stopped_by_close_notify_midway_ends_and_costs_nothing(big_download):
    server, path, digest = big_download
    before = rss_kib(server)
    for _ in range(5):
        with TlsConnection(address(server.url), server.ca) as connection:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            send_close_notify(connection)  # before reading a byte of the answer
            connection.raw.close()  # and gone
    healthy(server)
    assert rss_kib(server) - before < 8 << 10
    assert_idle(server, "downloads dropped midway")


def test_a_client_that_never_reads_a_large_download_is_cut_at_the_write_deadline_memory_flat(big_download):
    """The write deadline is 60 s (session_limits::write_timeout); this test takes about that long."""
    server, path, _ = big_download
    before = rss_kib(server)
    stalled = []
    for _ in range(16):
        connection = TlsConnection(address(server.url), server.ca)
        connection.raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        stalled.append(connection)
    time.sleep(2)
    assert rss_kib(server) - before < 16 << 10, "each stalled download holds more than a piece"
    assert_idle(server, "16 downloads nobody reads")
    healthy(server)
    port = address(server.url)[1]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        listing = subprocess.run(["ss", "-tn", "state", "established", f"( sport = :{port} )"], capture_output=True,
                                 text=True).stdout
        if len(listing.strip().splitlines()) <= 1:
            break
        time.sleep(2)
    else:
        pytest.fail("downloads nobody reads outlived the write deadline")
    for connection in stalled:
        connection.close()
    assert_idle(server, "the write deadline")


def test_sighup_while_handshakes_stall_and_downloads_run_breaks_none(big_download):
    server, path, digest = big_download
    results: dict[int, object] = {}

    def download(number: int) -> None:
        try:
            with TlsConnection(address(server.url), server.ca) as connection:
                connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                head, _, body = read_all(connection, 30).partition(b"\r\n\r\n")
                results[number] = (head.split(b"\r\n")[0], hashlib.sha256(body).hexdigest())
        except Exception as failure:  # noqa: BLE001 - reported below
            results[number] = repr(failure)

    downloads = [threading.Thread(target=download, args=(number,)) for number in range(4)]
    for thread in downloads:
        thread.start()
    halves = []
    for _ in range(6):
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = client_context(server.ca).wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
        with pytest.raises(ssl.SSLWantReadError):
            tls.do_handshake()
        hello = outgoing.read()
        raw = socket.create_connection(address(server.url))
        raw.sendall(hello[:100])
        halves.append((raw, tls, incoming, outgoing, hello))
    for _ in range(30):
        server.process.send_signal(signal.SIGHUP)
        time.sleep(0.05)
    for raw, tls, incoming, outgoing, hello in halves:
        raw.sendall(hello[100:])
        raw.settimeout(5)
        while True:
            try:
                tls.do_handshake()
                raw.sendall(outgoing.read())
                break
            except ssl.SSLWantReadError:
                raw.sendall(outgoing.read())
                incoming.write(raw.recv(65536))
        tls.write(HEALTH_CLOSE)
        raw.sendall(outgoing.read())
        answer = b""
        while not answer:
            try:
                answer = tls.read(20)
            except ssl.SSLWantReadError:
                incoming.write(raw.recv(65536))
        assert answer.startswith(b"HTTP/1.1 200 "), "a handshake begun before SIGHUP failed"
        raw.close()
    for thread in downloads:
        thread.join()
    assert all(result == (b"HTTP/1.1 200 OK", digest) for result in results.values()), results
    assert server.stderr().count("SIGHUP: new connections get") == 30
    assert_idle(server, "SIGHUP under load")


# --- the connection cap ----------------------------------------------------------------------------

def test_a_burst_past_the_cap_drops_no_request_that_had_arrived(tmp_path, start_server, tls_files):
    (tmp_path / "data").mkdir()
    # One I/O thread, as on a one-core host: the race below is wide enough to see every time.
    server = start_server(tmp_path / "data", *tls_files.serve_arguments(), "--max-connections", "20",
                          "--threads", "1", ca=tls_files.ca)
    outcomes: collections.Counter = collections.Counter()

    def client() -> None:
        try:
            with TlsConnection(address(server.url), server.ca) as connection:
                connection.sendall(HEALTH_CLOSE)
                answer = read_all(connection, 10)
                outcomes[answer.split(b"\r\n", 1)[0].decode() or "closed after the handshake, no answer"] += 1
        except ConnectionResetError:
            outcomes["reset during the handshake"] += 1
        except BrokenPipeError:
            outcomes["closed while the request was sent"] += 1
        except (ssl.SSLError, OSError) as failure:
            outcomes[type(failure).__name__] += 1

    for _ in range(8):
        burst = [threading.Thread(target=client) for _ in range(150)]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join()
    # A connection that has sent nothing yet is idle and may give way, as over plain HTTP; if its
    # ClientHello lands after give_way looked (give_way peeks the socket first), the client sees a
    # reset before any answer, which clients retry. Once its hello has arrived, nothing may be lost.
    # How many are reset so is how long 150 Python threads take between connect() and sending the
    # hello: none of 1,200 on a quiet box, 0 and 5 beside three busy loops, 62 in a .ci/run whose
    # end-to-end phase ran 40% slower than usual.
    # A tenth still catches a give_way that closes connections wholesale (all but ~20 of a burst).
    before_hello = outcomes.pop("reset during the handshake", 0)
    assert before_hello <= 120, dict(outcomes)
    assert outcomes == {"HTTP/1.1 200 OK": 1200 - before_hello}, (
        "BUG: at --max-connections, give_way closes TLS connections whose ClientHello or first request "
        "has already arrived (unread in the kernel or in OpenSSL's buffer) as if idle: "
        f"{dict(outcomes)}; the same burst over plain HTTP answers all 1200")
    healthy(server)
    assert_idle(server, "a burst past the cap")


# --- --redirect-http -----------------------------------------------------------------------------

def redirect(server: ServerProcess, request: bytes) -> tuple[str, str | None, int]:
    with socket.create_connection(redirect_address(server)) as connection:
        connection.sendall(request)
        answer = read_all(connection, 5)
    location = re.search(rb"\r\nLocation: ([^\r]*)", answer)
    return answer.split(b"\r\n", 1)[0].decode(), location.group(1).decode() if location else None, len(answer)


@pytest.mark.parametrize("host", ["user@evil.com", "evil.com\\@good", "good.com%0d%0aSet-Cookie:x", "a" * 254,
                                  "[fe80::1%25eth0]", "[]", "good/..", "good\tx", "good.com:443@evil.com",
                                  "good.com:99999999", "good.com:"])
def test_the_redirect_refuses_a_host_that_is_no_name_or_address(https, host):
    status, location, _ = redirect(https, b"GET /simple/ HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n")
    assert status == "HTTP/1.1 400 Bad Request" and location is None, (status, location)


@pytest.mark.parametrize("target", [b"http://evil.com/", b"*", b"evil.com:443"])
def test_the_redirect_refuses_absolute_form_asterisk_and_authority_targets(https, target):
    for method in (b"GET", b"OPTIONS", b"CONNECT"):
        status, location, _ = redirect(https, method + b" " + target + b" HTTP/1.1\r\nHost: good\r\n\r\n")
        assert status == "HTTP/1.1 400 Bad Request" and location is None, (method, target, status, location)


def test_the_redirect_keeps_the_host_and_drops_its_port(https):
    port = address(https.url)[1]
    for host, expected in (("good.com:443", "good.com"), ("[::1]:99", "[::1]"),
                           ("[::ffff:127.0.0.1]", "[::ffff:127.0.0.1]")):
        _, location, _ = redirect(https, b"GET /x HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n")
        assert location == f"https://{expected}:{port}/x", (host, location)
    _, location, _ = redirect(https, b"GET //evil.com/x HTTP/1.1\r\nHost: good\r\n\r\n")
    assert location == f"https://good:{port}//evil.com/x"  # the authority stays good's


def test_the_redirect_refuses_a_bracketed_host_that_is_no_ipv6_address(https):
    for host in (b"[" + b":" * 5000 + b"]", b"[.]", b"[::1]evil.com", b"[1:2:3:4:5:6:7:8:9]"):
        status, location, size = redirect(https, b"GET /simple/ HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
        assert status == "HTTP/1.1 400 Bad Request", (
            f"BUG: https_redirect host_of() accepts the bracketed Host {host[:24]!r}... (length {len(host)}) "
            f"as an IPv6 address and redirects to it: {status}, Location {location and location[:60]!r}, "
            f"{size} bytes")


def test_the_redirect_refuses_two_host_fields(https):
    status, location, _ = redirect(https, b"GET / HTTP/1.1\r\nHost: good\r\nHost: evil\r\n\r\n")
    assert status == "HTTP/1.1 400 Bad Request", (
        f"BUG: two Host fields (RFC 9112 §3.2: a server MUST answer 400) are redirected by the first: "
        f"{status} to {location}")


def test_the_redirect_goes_to_the_public_url_not_to_any_host_a_client_names(tmp_path, start_server, tls_files):
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data", *tls_files.serve_arguments(), "--redirect-http", "127.0.0.1:0",
                          "--public-url", "https://pkg.example.com/", ca=tls_files.ca)
    _, location, _ = redirect(server, b"GET /simple/ HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    assert location is not None and location.startswith("https://pkg.example.com/"), (
        "BUG: with --public-url https://pkg.example.com/, --redirect-http still sends clients to the host "
        f"their Host field names (an open redirect): Location {location}")


def test_a_tls_client_hello_and_garbage_to_the_redirect_port_are_refused_and_it_serves_on(https):
    for junk in (python_hello(), os.urandom(4096), b"\x16\x03\x01\xff\xff" + b"\x00" * 100):
        with socket.create_connection(redirect_address(https)) as connection:
            connection.sendall(junk)
            answer = read_all(connection, 5)
        assert answer.startswith(b"HTTP/1.1 400 ") or answer == b"", answer[:80]
    status, _, _ = redirect(https, b"GET /simple/ HTTP/1.1\r\nHost: good\r\n\r\n")
    assert status == "HTTP/1.1 301 Moved Permanently"
    assert_idle(https, "junk at the redirect port")


# --- plain HTTP and trickles at the TLS port -------------------------------------------------------

@pytest.mark.parametrize("method", [b"GET", b"POST", b"PUT", b"DELETE", b"OPTIONS", b"PATCH", b"CONNECT"])
def test_plain_http_of_any_method_to_the_tls_port_hears_to_use_https(https, method):
    target = b"x:443" if method == b"CONNECT" else b"/"
    with socket.create_connection(address(https.url)) as connection:
        connection.sendall(method + b" " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = read_all(connection, 5)
    assert answer.startswith(b"HTTP/1.1 400 ") and b"use https://" in answer, (
        f"BUG: plain HTTP {method.decode()} to the TLS port is closed without a word ({answer[:40]!r}), while GET, "
        "POST, HEAD and PUT hear 400 'use https://': tls_channel::outcome_of knows only OpenSSL's "
        "SSL_R_HTTP_REQUEST, which OpenSSL sets for those four methods alone")


def test_plain_http_head_to_the_tls_port_gets_no_body(https):
    with socket.create_connection(address(https.url)) as connection:
        connection.sendall(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = read_all(connection, 5)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert body == b"", (f"BUG: the 400 to a plain HEAD at the TLS port carries a {len(body)}-byte body "
                         "(http_session::answer_plain_http has one answer, the GET one)")


def test_a_client_hello_trickled_a_byte_at_a_time_ends_at_the_handshake_deadline(tmp_path, start_server, tls_files):
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data", *tls_files.serve_arguments(), "--idle-timeout", "60", ca=tls_files.ca)
    hello = python_hello()
    with socket.create_connection(address(server.url)) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.monotonic()
        closed_after = None
        for byte in hello:
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                closed_after = time.monotonic() - started
                break
            time.sleep(0.25)
            if time.monotonic() - started > 20:
                break
        if closed_after is None:
            read_all(connection, 20)
            closed_after = time.monotonic() - started
    assert closed_after < 15, f"a ClientHello trickled for {closed_after:.0f} s outlived the 10 s handshake deadline"
    healthy(server)
    assert_idle(server, "a trickled ClientHello")


# --- what an idle TLS connection holds ---------------------------------------------------------------

def test_an_idle_tls_connection_holds_a_bounded_few_dozen_kib(https):
    """Measured on a7d3eae: ~35-44 KiB of RSS per idle TLS connection (a plain one: 4-8 KiB). OpenSSL
    3.0's own objects for one server connection are ~14.5 KiB after the handshake with
    SSL_MODE_RELEASE_BUFFERS (measured apart, on socketpairs), so about half is unexplained; this
    pins the bound at 64 KiB, so a connection that keeps a 64 KiB piece or a 16 KiB record buffer
    while idle shows here."""
    connections = []
    before = rss_kib(https)
    for number in range(300):
        connection = TlsConnection(address(https.url), https.ca)
        if number % 2:
            connection.sendall(HEALTH)
            connection.settimeout(5)
            assert connection.recv(1000).startswith(b"HTTP/1.1 200 ")
        connections.append(connection)
    time.sleep(1)
    per_connection = (rss_kib(https) - before) / len(connections)
    assert_idle(https, "300 idle TLS connections")
    for connection in connections:
        connection.close()
    assert per_connection < 64, f"each idle TLS connection holds {per_connection:.0f} KiB"


# --- a proxied download whose client leaves -------------------------------------------------------

@pytest.mark.parametrize("farewell", ["hang-up", "close_notify then hang-up"])
def test_a_tls_client_leaving_stops_a_fetch_waiting_on_a_silent_host(wheelhouse_bin, fake_github, start_server,
                                                                     tls_files, tmp_path, farewell):
    """test_remote_downloads.py's hang-up test over TLS: a real TLS client (curl, pip) says
    close_notify before it closes."""
    from test_remote_downloads import MiB, file_url, native_wheel, run, sha256_of
    stalled = native_wheel(tmp_path / "dist", "remote-silent", "1.0", 19)
    other = native_wheel(tmp_path / "dist", "remote-next", "1.0", 20)
    fake_github.add_release("owner", "kernels", "v1", [stalled, other])
    data = tmp_path / "data"
    for wheel in (stalled, other):
        url = fake_github.download_url("owner", "kernels", "v1", wheel.name)
        registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--mode", "proxy",
                         url)
        assert registered.returncode == 0, registered.stdout + registered.stderr
    server = start_server(data, *fake_github.server_flags(), *tls_files.serve_arguments(),
                          "--remote-proxy-downloads", "1", "--remote-read-timeout", "60", ca=tls_files.ca)
    fake_github.set_fault(stalled.name, stall_after=MiB, stall_seconds=60)
    reader = TlsConnection(address(server.url), tls_files.ca)
    reader.sendall(f"GET {file_url(server, stalled).removeprefix(server.url.rstrip('/'))} HTTP/1.1\r\n"
                   f"Host: x\r\n\r\n".encode())
    reader.settimeout(10)
    assert reader.recv(64 * 1024).startswith(b"HTTP/1.1 200 ")
    time.sleep(0.5)
    if farewell.startswith("close_notify"):
        try:
            reader.tls.unwrap()
        except (ssl.SSLWantReadError, ssl.SSLError):
            pass
        reader.raw.sendall(reader.outgoing.read())
        time.sleep(0.2)
    reader.close()
    started = time.monotonic()
    out = tmp_path / "out"

    def fetched() -> bool:
        done = subprocess.run(["curl", "-s", "--cacert", str(tls_files.ca), "-o", str(out), "-w", "%{http_code}",
                               "--max-time", "3", file_url(server, other)], capture_output=True, text=True)
        return done.stdout == "200"

    deadline = time.monotonic() + 15
    while not fetched() and time.monotonic() < deadline:
        time.sleep(0.1)
    waited = time.monotonic() - started
    assert waited < 5 and sha256_of(out) == sha256_of(other), (
        f"BUG: after a TLS client's {farewell}, its proxied fetch from a silent host held the only proxy slot "
        f"{waited:.0f} s: http_session::watch_for_hang_up peeks the raw socket, takes the close_notify record "
        "for a pipelined request (peer_sent_more_) and stops watching, so the FIN after it goes unnoticed")


# --- resumption and pipelined files ---------------------------------------------------------------

def test_tls12_handshakes_without_tickets_fill_the_session_cache_at_a_bounded_cost(https):
    """OpenSSL's server cache (on by default) keeps each TLS 1.2 session that resumes by id: about
    1.3 KiB each on a7d3eae, up to OpenSSL's default of 20480 sessions (~26 MiB) per certificate
    load. TLS 1.3 tickets are stateless and cost nothing."""
    legacy = client_context(https.ca)
    legacy.maximum_version = ssl.TLSVersion.TLSv1_2
    legacy.options |= ssl.OP_NO_TICKET
    before = rss_kib(https)
    for _ in range(1500):
        with socket.create_connection(address(https.url)) as raw, legacy.wrap_socket(raw, server_hostname="127.0.0.1"):
            pass
    grown = rss_kib(https) - before
    assert grown < 4 << 10, f"1500 TLS 1.2 handshakes kept {grown} KiB"
    with socket.create_connection(address(https.url)) as raw, \
            legacy.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        session = tls.session
    with socket.create_connection(address(https.url)) as raw, legacy.wrap_socket(raw, server_hostname="127.0.0.1",
                                                                                   session=session) as tls:
        assert tls.session_reused  # what the cache is for
    assert_idle(https, "1500 TLS 1.2 handshakes")


def test_pipelined_file_ranges_in_one_record_are_all_answered_whole(big_download):
    server, path, _ = big_download
    ranged = f"GET {path} HTTP/1.1\r\nHost: x\r\nRange: bytes=%d-%d\r\n\r\n"
    requests = "".join(ranged % (start, start + 99999) for start in (0, 1 << 20, 40 << 20)).encode()
    with TlsConnection(address(server.url), server.ca) as connection:
        connection.sendall(requests + HEALTH_CLOSE)
        answer = read_all(connection, 20)
    assert answer.count(b"HTTP/1.1 206 ") == 3 and answer.count(b"HTTP/1.1 200 ") == 1
    assert answer.count(b"Content-Length: 100000\r\n") == 3
    assert_idle(server, "pipelined ranges")
