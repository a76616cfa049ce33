"""A flood of uploads without credentials that go on sending their bodies after the server's 401,
so the server lingers on each to drop the body (issue 24 item 5), and a normal client beside it.
Used by tests/e2e/test_hostile_connections.py and bench/lingering_flood.py."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

# No Authorization: refused 401 at its headers, the 100 MB body unread.
UPLOAD_HEAD = (b"PUT /api/v1/files/flood-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n"
               b"Content-Length: 104857600\r\n\r\n")


class LingeringFlood:
    """`clients` connections from one thread, each sending UPLOAD_HEAD and then `piece` bytes of
    body every `every` seconds: fast enough that the server's linger (2 s of silence, the minimum
    body rate, 30 s in all) goes on. A connection the server closes is opened again at its next
    turn, as a flood's client would. `connections` counts the connections opened."""

    def __init__(self, address: tuple[str, int], clients: int = 160, piece: int = 2048, every: float = 0.25):
        self.address, self.clients, self.piece, self.every = address, clients, b"w" * piece, every
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LingeringFlood":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(10)

    def _open(self) -> socket.socket | None:
        try:
            connection = socket.create_connection(self.address, timeout=2)
            connection.setblocking(False)
            connection.send(UPLOAD_HEAD)
            self.connections += 1
            return connection
        except OSError:
            return None

    def _run(self) -> None:
        sockets: list[socket.socket | None] = [None] * self.clients
        next_turn = [time.monotonic() + self.every * i / self.clients for i in range(self.clients)]
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                for i in range(self.clients):
                    if next_turn[i] > now:
                        continue
                    next_turn[i] = now + self.every
                    sockets[i] = self._turn(sockets[i])
                self._stop.wait(0.01)
        finally:
            for connection in sockets:
                if connection is not None:
                    connection.close()

    def _turn(self, connection: socket.socket | None) -> socket.socket | None:
        if connection is None:
            return self._open()
        try:
            while connection.recv(65536):  # the 401, dropped; b"" once the server ended its half
                pass
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            connection.close()
            return self._open()
        try:
            connection.send(self.piece)
            return connection
        except (BlockingIOError, InterruptedError):
            return connection
        except OSError:  # closed by the server: a reset came back
            connection.close()
            return self._open()


@dataclass
class NormalClient:
    """Requests `target` once every `every` seconds, each on a new connection, as a pip or curl
    that opens one; records each answer's status (0: none) and its time in seconds."""

    address: tuple[str, int]
    target: str = "/simple/"
    statuses: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def run(self, requests: int, every: float) -> None:
        for _ in range(requests):
            started = time.monotonic()
            self.statuses.append(self.request())
            self.seconds.append(time.monotonic() - started)
            time.sleep(max(0.0, every - (time.monotonic() - started)))

    def request(self) -> int:
        request = f"GET {self.target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        answer = b""
        try:
            with socket.create_connection(self.address, timeout=10) as connection:
                connection.sendall(request)
                while piece := connection.recv(65536):
                    answer += piece
        except OSError:  # a reset after the answer still leaves the answer
            pass
        parts = answer.split(b" ", 2)
        return int(parts[1]) if len(parts) > 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit() else 0

    def served(self) -> list[float]:
        """The times of the requests answered 200."""
        return [took for status, took in zip(self.statuses, self.seconds) if status == 200]
