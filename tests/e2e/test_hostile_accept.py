"""Attacks on accepting: every I/O thread has its own listener on a dup() of the one listening
socket (4a0cbb9) and admits for itself under session_registry::hold_admission (00d9619). Bursts of
simultaneous connects against the caps, a drain while connections arrive on every thread, running
out of descriptors with two listeners, certificate reloads during a burst of handshakes, TLS
resumption across threads, and slow clients that must not hold back new connections."""

from __future__ import annotations

import base64
import os
import resource
import signal
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


from server_process import ServerProcess
from test_hostile_clients import address, read_until_closed
from test_uploads import make_token

PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\na"
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


# --- helpers ---------------------------------------------------------------------------------

def burst(server_address: tuple[str, int], count: int, workers: int, payload: bytes,
          source: str | None = None) -> list[socket.socket]:
    """`count` connections opened at once from `workers` threads, each sending `payload` at once."""
    start = threading.Barrier(workers)

    def open_some(share: int) -> list[socket.socket]:
        start.wait()
        opened = []
        for _ in range(share):
            connection = socket.create_connection(server_address, timeout=5,
                                                  source_address=(source, 0) if source else None)
            try:
                connection.sendall(payload)
            except OSError:  # refused and closed already
                pass
            opened.append(connection)
        return opened

    with ThreadPoolExecutor(workers) as pool:
        shares = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
        return [c for opened in pool.map(open_some, shares) for c in opened]


def answered_or_held(connection: socket.socket, wait: float) -> bytes | None:
    """What the server sent until it closed within `wait` seconds; None when it holds the connection."""
    connection.settimeout(wait)
    received = b""
    try:
        while True:
            piece = connection.recv(65536)
            if not piece:
                return received
            received += piece
    except socket.timeout:
        return None if not received else received
    except ConnectionResetError:
        return received


def outcomes_of(connections: list[socket.socket], wait: float) -> list[bytes | None]:
    """answered_or_held for every connection at once."""
    if not connections:
        return []
    with ThreadPoolExecutor(min(64, len(connections))) as pool:
        return list(pool.map(lambda c: answered_or_held(c, wait), connections))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_runtimes(pid: int) -> dict[int, int]:
    """Nanoseconds each thread of `pid` has run (schedstat)."""
    runtimes = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            runtimes[int(task.name)] = int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return runtimes


def busiest_thread(before: dict[int, int], after: dict[int, int]) -> int:
    return max(after, key=lambda tid: after[tid] - before.get(tid, 0))


def healthz_status(server_address: tuple[str, int], timeout: float = 5) -> bytes:
    with socket.create_connection(server_address, timeout=timeout) as connection:
        connection.sendall(HEALTHZ)
        return read_until_closed(connection, timeout)


# --- the caps under a burst ------------------------------------------------------------------

def full_cap_then_burst(server) -> tuple[list[socket.socket], list[socket.socket]]:
    """The cap's 8 places busy with requests that still owe a body (none can be closed to make
    room), then 64 connections at once from 16 client threads: (the 8, the 64)."""
    admitted = burst(address(server), 8, 8, PARTIAL)
    time.sleep(0.3)
    return admitted, burst(address(server), 64, 16, PARTIAL)


def test_a_burst_against_a_full_cap_gets_503_on_every_thread_and_those_admitted_are_served(tmp_path, start_server):
    # Against 4 accepting threads.
    server = start_server(tmp_path / "data", "--threads", "4", "--max-connections", "8", "--read-timeout", "30")
    admitted, connections = full_cap_then_burst(server)
    try:
        assert outcomes_of(admitted, 0.3) == [None] * 8
        for answer in outcomes_of(connections, 2.0):
            assert answer is not None, "a connection past the cap was let in"
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
            assert b"Retry-After: 1\r\n" in answer
            assert b"this server has its limit of 8 connections open (--max-connections)" in answer
        for connection in admitted:  # those admitted are served
            connection.sendall(b"bc")
            assert read_until_closed(connection, 5).startswith(b"HTTP/1.1 200 ")
    finally:
        for connection in admitted + connections:
            connection.close()
    assert healthz_status(address(server)).startswith(b"HTTP/1.1 200 ")


def test_a_burst_from_many_threads_holds_at_most_the_cap_and_those_giving_way(tmp_path, start_server):
    # Found by the attacker, fixed: 9 to 11 connections held open under --max-connections 8 (with
    # --threads 1 too). Once the cap is full, admit() makes room (session_registry::make_room) by
    # un-counting the longest-idle session and asking it to give way; a session admitted a moment
    # ago is "idle" until its thread reads its first request, and give_way finds that request
    # arriving and serves it (here a body owed for --read-timeout 30 s), uncounted. Every new
    # connection of the burst did so again. Now at most most_giving_way(8) = 2 sessions give way
    # at once; past them the burst gets 503.
    server = start_server(tmp_path / "data", "--threads", "4", "--max-connections", "8", "--read-timeout", "30")
    for _ in range(4):
        connections = burst(address(server), 100, 20, PARTIAL)
        try:
            outcomes = outcomes_of(connections, 1.0)
        finally:
            for connection in connections:
                connection.close()
        held = sum(outcome is None for outcome in outcomes)
        assert held <= 8 + 2, f"{held} sessions open under a cap of 8 with 2 giving way at most"
        for answer in (o for o in outcomes if o):
            assert b"this server has its limit of 8 connections open (--max-connections)" in answer
        time.sleep(0.3)  # the closed ones gone


def test_a_burst_from_one_address_gets_exactly_its_share_on_every_thread(tmp_path, start_server):
    server = start_server(tmp_path / "data", "--threads", "4", "--max-connections-per-address", "4",
                          "--read-timeout", "30")
    connections = burst(address(server), 40, 10, PARTIAL)
    try:
        outcomes = outcomes_of(connections, 1.0)
        held = [c for c, outcome in zip(connections, outcomes) if outcome is None]
        assert len(held) == 4, f"{len(held)} connections held from one address with a share of 4"
        for answer in (o for o in outcomes if o is not None):
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
            assert b"your address has its limit of 4 connections open (--max-connections-per-address)" in answer
        # Another address is another client, while this one's share is full.
        with socket.create_connection(address(server), source_address=("127.0.0.2", 0)) as elsewhere:
            elsewhere.sendall(HEALTHZ)
            assert read_until_closed(elsewhere, 5).startswith(b"HTTP/1.1 200 ")
        for connection in held:
            connection.sendall(b"bc")
            assert read_until_closed(connection, 5).startswith(b"HTTP/1.1 200 ")
    finally:
        for connection in connections:
            connection.close()
    # Their places are given back on whichever thread held them.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        again = burst(address(server), 4, 4, PARTIAL)
        outcomes = outcomes_of(again, 0.5)
        for c in again:
            c.close()
        if outcomes == [None] * 4:
            break
        time.sleep(0.1)
    assert outcomes == [None] * 4, outcomes


def test_refusals_on_every_thread_are_warned_of_once_a_period_with_their_total(tmp_path, start_server):
    # Found by the attacker, fixed: four "1 connections refused with 503 since the last warning"
    # lines at once with --threads 4, where one thread accepting logged one line per 10 s: each
    # listener kept its own refusal counters and last-warning time. They are the registry's now
    # (session_registry::tally), shared under hold_admission().
    server = start_server(tmp_path / "data", "--threads", "4", "--max-connections", "8", "--read-timeout", "30")
    admitted, connections = full_cap_then_burst(server)
    try:
        assert all(o and o.startswith(b"HTTP/1.1 503 ") for o in outcomes_of(connections, 2.0))
    finally:
        for connection in admitted + connections:
            connection.close()
    warnings = [line for line in server.stderr().splitlines() if "connections refused with 503" in line]
    assert len(warnings) == 1, warnings


def test_https_past_a_full_cap_closes_a_burst_of_new_connections_on_every_thread(tmp_path, start_server, tls_files):
    # Over TLS a refusal is a close before the handshake: none of a burst is held, and those
    # admitted are served.
    from tls_client import TlsConnection
    server = start_server(tmp_path / "data", "--threads", "3", "--max-connections", "6", "--read-timeout", "30",
                          *tls_files.serve_arguments(), ca=tls_files.ca)
    admitted = [TlsConnection(address(server), tls_files.ca) for _ in range(6)]
    for connection in admitted:
        connection.sendall(PARTIAL)
    time.sleep(0.3)
    connections = burst(address(server), 48, 12, b"\x16\x03\x01")
    try:
        assert outcomes_of(connections, 2.0) == [b""] * 48
        for connection in admitted:
            connection.sendall(b"bc")
            assert read_until_closed(connection, 5).startswith(b"HTTP/1.1 200 ")
    finally:
        for connection in admitted + connections:
            connection.close()


# --- drain -----------------------------------------------------------------------------------

def test_sigterm_while_connections_arrive_on_every_thread_finishes_those_in_flight_and_exits(tmp_path):
    server = ServerProcess(tmp_path / "data", "--threads", "3", "--read-timeout", "30").start()
    try:
        in_flight = [socket.create_connection(address(server), timeout=5) for _ in range(6)]
        for connection in in_flight:
            connection.sendall(PARTIAL)
        time.sleep(0.2)
        stop = threading.Event()
        hung: list[str] = []
        unexpected: list[bytes] = []

        def arrive():
            while not stop.is_set():
                try:
                    with socket.create_connection(address(server), timeout=3) as connection:
                        connection.sendall(HEALTHZ)
                        connection.settimeout(4)
                        answer = b""
                        while True:
                            piece = connection.recv(65536)
                            if not piece:
                                break
                            answer += piece
                        if answer and not answer.startswith(b"HTTP/1.1 200 "):
                            unexpected.append(answer[:200])
                except socket.timeout:
                    hung.append("a new connection was neither answered nor closed within 4 s of the drain")
                except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError):
                    pass

        arrivals = [threading.Thread(target=arrive, daemon=True) for _ in range(8)]
        for each in arrivals:
            each.start()
        time.sleep(0.5)
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        for connection in in_flight:  # requests in flight at the signal are answered
            connection.sendall(b"bc")
            answer = read_until_closed(connection, 5)
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
            connection.close()
        server.process.wait(timeout=5)
        stop.set()
        for each in arrivals:
            each.join(6)
        assert not hung, hung
        assert not unexpected, unexpected
        assert server.process.returncode == 0, server.stderr()
        assert "drain deadline passed" not in server.stderr()
    finally:
        server.stop()


# --- out of descriptors ----------------------------------------------------------------------

DESCRIPTORS = 96  # the servers' RLIMIT_NOFILE below


def out_of_descriptors(tmp_path, limit: int = DESCRIPTORS) -> tuple[ServerProcess, list[socket.socket]]:
    """A server of two listeners under RLIMIT_NOFILE `limit` (with a cap the limit cannot hold),
    and limit + 16 connections to it, each with a request that owes its body; returned once both
    listeners have found accept(2) failing, or after 3 s."""
    server = ServerProcess(tmp_path / "data", "--threads", "2", "--max-connections", "1000", "--read-timeout", "30",
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))).start()
    held: list[socket.socket] = []
    try:
        for _ in range(limit + 16):
            connection = socket.create_connection(address(server), timeout=5)
            connection.sendall(PARTIAL)
            held.append(connection)
        deadline = time.monotonic() + 3
        while server.stderr().count("accept failed") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    except BaseException:
        for connection in held:
            connection.close()
        server.stop()
        raise
    return server, held


def test_out_of_descriptors_both_listeners_back_off_without_spinning_and_recover(tmp_path):
    server, held = out_of_descriptors(tmp_path)
    try:
        time.sleep(0.3)
        assert server.stderr().count("accept failed: Too many open files") == 2, server.stderr()  # each listener
        # Exhausted, with connections waiting in the kernel's queue: both listeners wait 100 ms
        # between tries rather than spin.
        before = cpu_seconds(server.process.pid)
        time.sleep(2)
        spent = cpu_seconds(server.process.pid) - before
        assert spent < 0.2, f"{spent:.2f} s of CPU in 2 s while out of descriptors"
        # Descriptors free: the queued ones are taken, and every new connection is served, on both threads.
        for connection in held:
            connection.close()
        held.clear()
        time.sleep(0.5)  # the server's sides closed, and each listener's 100 ms retry come round
        statuses = []
        served_by = set()
        # Which thread takes a new connection is the kernel's race: ask until both have taken
        # one (a listener that never recovered never would), 24 at least and 200 at most.
        while len(statuses) < 24 or (len(served_by) < 2 and len(statuses) < 200):
            before_runtimes = thread_runtimes(server.process.pid)
            answer = healthz_status(address(server), timeout=3)
            served_by.add(busiest_thread(before_runtimes, thread_runtimes(server.process.pid)))
            statuses.append(answer[:12])
        assert statuses == [b"HTTP/1.1 200"] * len(statuses), statuses
        assert len(served_by) >= 2, (served_by, server.stderr())  # both listeners took connections again
        assert "accepting connections again" in server.stderr()
    finally:
        for connection in held:
            connection.close()
        assert server.stop() == 0, server.stderr()


def test_sigterm_while_both_listeners_wait_out_descriptor_exhaustion_exits_clean(tmp_path):
    # The retry timers of both listeners are stopped with them; the requests accepted are
    # finished; those still in the kernel's queue are reset, not left hanging.
    server, held = out_of_descriptors(tmp_path)
    try:
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        answers = []
        for connection in held:
            try:
                connection.sendall(b"bc")
            except OSError:
                pass
            answers.append(read_until_closed(connection, 3))
        server.process.wait(timeout=5)
        assert server.process.returncode == 0, server.stderr()
        assert "drain deadline passed" not in server.stderr()
        served = sum(answer.startswith(b"HTTP/1.1 200 ") for answer in answers)
        assert served >= DESCRIPTORS // 2, served  # most of the descriptors were connections, each answered
        assert all(answer == b"" or answer.startswith(b"HTTP/1.1 200 ") for answer in answers)
    finally:
        for connection in held:
            connection.close()
        server.stop()


# --- HTTPS -----------------------------------------------------------------------------------

def tls_healthz(server_address, context: ssl.SSLContext, session=None) -> tuple[bytes, ssl.SSLSocket]:
    raw = socket.create_connection(server_address, timeout=5)
    tls = context.wrap_socket(raw, server_hostname="127.0.0.1", session=session)
    tls.sendall(HEALTHZ)
    answer = b""
    while True:
        try:
            piece = tls.recv(65536)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
        if not piece:
            break
        answer += piece
    return answer, tls


def test_sighup_during_a_burst_of_handshakes_on_both_threads_fails_none(tmp_path, start_server, tls_files):
    server = start_server(tmp_path / "data", "--threads", "2", *tls_files.serve_arguments(), ca=tls_files.ca)
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    stop = threading.Event()
    failures: list[str] = []
    served = [0]

    def connect_again_and_again():
        while not stop.is_set():
            try:
                answer, tls = tls_healthz(address(server), context)
                tls.close()
                if not answer.startswith(b"HTTP/1.1 200 "):
                    failures.append(repr(answer[:100]))
                served[0] += 1
            except (OSError, ssl.SSLError) as failure:
                failures.append(repr(failure))

    clients = [threading.Thread(target=connect_again_and_again) for _ in range(8)]
    for each in clients:
        each.start()
    for _ in range(30):
        server.process.send_signal(signal.SIGHUP)
        time.sleep(0.05)
    stop.set()
    for each in clients:
        each.join(10)
    assert not failures, failures[:5]
    assert served[0] > 30


def resumed_across_threads(server: ServerProcess, context: ssl.SSLContext, connections: int) -> tuple[list, set]:
    """Each connection resumes the session the one before it was given; which thread served each."""
    answer, first = tls_healthz(address(server), context)
    assert answer.startswith(b"HTTP/1.1 200 ")
    session = first.session
    first.close()
    reused, served_by = [], set()
    for _ in range(connections):
        before = thread_runtimes(server.process.pid)
        answer, tls = tls_healthz(address(server), context, session)
        served_by.add(busiest_thread(before, thread_runtimes(server.process.pid)))
        assert answer.startswith(b"HTTP/1.1 200 ")
        reused.append(tls.session_reused)
        session = tls.session
        tls.close()
    return reused, served_by


def test_tls12_session_ids_and_tls13_tickets_resume_on_whichever_thread_accepts(tmp_path, start_server, tls_files):
    server = start_server(tmp_path / "data", "--threads", "2", *tls_files.serve_arguments(), ca=tls_files.ca)
    by_id = ssl.create_default_context(cafile=str(tls_files.ca))
    by_id.maximum_version = ssl.TLSVersion.TLSv1_2
    by_id.options |= ssl.OP_NO_TICKET  # the server's session cache, by session id
    reused, threads_12 = resumed_across_threads(server, by_id, 16)
    assert all(reused), reused
    by_ticket = ssl.create_default_context(cafile=str(tls_files.ca))
    by_ticket.minimum_version = ssl.TLSVersion.TLSv1_3
    reused, threads_13 = resumed_across_threads(server, by_ticket, 16)
    assert all(reused), reused
    # Consecutive connections were taken by more than one thread (else this proves nothing).
    assert len(threads_12 | threads_13) >= 2, (threads_12, threads_13)


# --- slow clients ----------------------------------------------------------------------------

def test_slow_handshakes_and_a_slow_huge_upload_hold_back_no_new_connection(tmp_path, wheelhouse_bin, start_server,
                                                                            tls_files):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "uploader")
    server = start_server(data, "--threads", "2", *tls_files.serve_arguments(), ca=tls_files.ca)
    host, port = address(server)
    # Client hellos a byte every 50 ms on six connections (both threads have some), and an upload
    # of 1 GB whose body comes a KiB at a time: each thread has clients that hold it in a read.
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    probe = ssl.create_default_context(cafile=str(tls_files.ca)).wrap_bio(incoming, outgoing,
                                                                          server_hostname="127.0.0.1")
    try:
        probe.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outgoing.read()
    slow = [socket.create_connection((host, port)) for _ in range(6)]
    stop = threading.Event()

    def trickle():
        for offset in range(len(hello) - 1):
            if stop.is_set():
                return
            for connection in slow:
                try:
                    connection.send(hello[offset:offset + 1])
                except OSError:
                    pass
            time.sleep(0.05)

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    upload = context.wrap_socket(socket.create_connection((host, port)), server_hostname="127.0.0.1")
    credentials = base64.b64encode(f"__token__:{token}".encode())
    upload.sendall(b"POST /legacy/ HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " + credentials +
                   b"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000\r\n\r\n"
                   b"--b\r\nContent-Disposition: form-data; name=\"content\"; filename=\"a-1-py3-none-any.whl\""
                   b"\r\n\r\n")
    try:
        latencies = []
        for _ in range(20):
            started = time.monotonic()
            answer, tls = tls_healthz((host, port), context)
            latencies.append(time.monotonic() - started)
            tls.close()
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
            upload.sendall(b"x" * 1024)
        assert max(latencies) < 0.5, latencies
        upload.settimeout(0.2)  # the upload is still being read: nothing answered yet
        try:
            early = upload.recv(1024)
        except socket.timeout:
            early = None
        assert early is None, early
    finally:
        stop.set()
        trickler.join(5)
        for connection in slow:
            connection.close()
        upload.close()
