"""A TLS client for raw-socket tests: what the hostile clients send, sent over TLS exactly as over a
plain socket. OpenSSL runs on memory buffers (ssl.MemoryBIO) so one thread may send while another
receives, as the plain tests do, without two threads inside one SSL object: encryption and
decryption take a lock, the socket's own send and receive do not."""

from __future__ import annotations

import pathlib
import socket
import ssl
import threading


def client_context(ca: pathlib.Path, alpn: list[str] | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if alpn:
        context.set_alpn_protocols(alpn)
    return context


class TlsConnection:
    """The socket methods the raw-socket tests use (sendall, send, recv, settimeout, shutdown,
    setsockopt, close), over TLS to 127.0.0.1."""

    def __init__(self, address: tuple[str, int], ca: pathlib.Path, alpn: list[str] | None = None):
        self.raw = socket.create_connection(address)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = client_context(ca, alpn).wrap_bio(self.incoming, self.outgoing, server_hostname=address[0])
        self.lock = threading.Lock()
        while True:
            try:
                self.tls.do_handshake()
                self.raw.sendall(self.outgoing.read())
                return
            except ssl.SSLWantReadError:
                self.raw.sendall(self.outgoing.read())
                data = self.raw.recv(65536)
                if not data:
                    raise ConnectionResetError("the server closed the connection during the handshake")
                self.incoming.write(data)

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        for offset in range(0, len(view), 1 << 16):
            with self.lock:
                self.tls.write(view[offset:offset + (1 << 16)])
                encrypted = self.outgoing.read()
            self.raw.sendall(encrypted)

    def send(self, data: bytes) -> int:
        self.sendall(data)
        return len(data)

    def recv(self, size: int) -> bytes:
        while True:
            with self.lock:
                try:
                    return self.tls.read(size)
                except ssl.SSLWantReadError:
                    pass
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    return b""
            data = self.raw.recv(65536)  # socket.timeout as settimeout says
            if not data:
                return b""
            with self.lock:
                self.incoming.write(data)

    def settimeout(self, timeout: float | None) -> None:
        self.raw.settimeout(timeout)

    def setsockopt(self, *args) -> None:
        self.raw.setsockopt(*args)

    def shutdown(self, how: int) -> None:
        self.raw.shutdown(how)

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "TlsConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(url: str, ca: pathlib.Path | None = None):
    """A connection to the server at `url`: a plain socket for http://, a TlsConnection for https://."""
    scheme, _, rest = url.partition("://")
    host, port = rest.rstrip("/").rsplit(":", 1)
    address = (host.strip("[]"), int(port))
    if scheme == "https":
        assert ca is not None, "an https:// server needs the test CA"
        return TlsConnection(address, ca)
    return socket.create_connection(address)
