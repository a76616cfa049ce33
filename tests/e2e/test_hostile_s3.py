"""`wheelhouse s3-check` against object stores that lie, stall or attack, and operators who get the
settings wrong (issue 29). A fake "S3" on loopback (raw sockets, so it can send what no real
server would) answers each request as a test tells it to; a real Ceph radosgw, behind a small
proxy that breaks one step, shows whether a failed check leaves its probe behind.

What must hold whatever the store does: exit 1 with a message that leads with the step and the fix,
in bounded time and size, with nothing from the store able to drive the operator's terminal, no
redirect followed, no secret printed, and no probe object left in the bucket."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
RADOSGW = REPO / "deploy" / "radosgw.sh"

ACCESS = "AKIAHOSTILETEST0001"
SECRET = "hostile-secret-Zq8v1Nw4Rk"
PROBE_SIZE = 64 * 1024


# ---------------------------------------------------------------------------------------------
# A fake object store.


class Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], raw_head: bytes):
        self.method = method
        self.target = target
        self.headers = headers
        self.raw_head = raw_head
        self.body = b""

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    @property
    def presigned(self) -> bool:
        return "X-Amz-Signature=" in self.target


def reply(conn: socket.socket, status: str, body: bytes = b"", headers: dict[str, str] | None = None,
          length: int | None = None) -> None:
    head = f"HTTP/1.1 {status}\r\n"
    fields = {"Content-Length": str(len(body) if length is None else length), "Connection": "close"}
    fields.update(headers or {})
    for name, value in fields.items():
        head += f"{name}: {value}\r\n"
    conn.sendall(head.encode("latin-1") + b"\r\n" + body)


class FakeStore:
    """Answers like a well-behaved store unless `behave(store, request, conn)` returns True
    (it answered, or chose not to). Keeps the objects it was given, and every request."""

    def __init__(self, behave=None, read_bodies: bool = True):
        self.behave = behave
        self.read_bodies = read_bodies
        self.objects: dict[str, bytes] = {}
        self.user_metadata: dict[str, dict[str, str]] = {}
        self.requests: list[Request] = []
        self.held: list[socket.socket] = []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    conn.close()
                    return
                data += chunk
            raw_head, rest = data.split(b"\r\n\r\n", 1)
            lines = raw_head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            request = Request(method, target, headers, raw_head)
            self.requests.append(request)
            if self.read_bodies:
                length = int(headers.get("content-length", "0"))
                while len(rest) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                request.body = rest
            if self.behave and self.behave(self, request, conn):
                return
            self.well_behaved(request, conn)
        except OSError:
            pass
        finally:
            if conn not in self.held:
                try:
                    conn.close()
                except OSError:
                    pass

    def well_behaved(self, request: Request, conn: socket.socket) -> None:
        segments = request.path.strip("/").split("/", 1)
        if len(segments) == 1:  # the bucket
            reply(conn, "200 OK", headers={"Content-Length": "0"})
            return
        if request.method == "PUT":
            self.objects[request.path] = request.body
            # As S3 does: user metadata (x-amz-meta-*) is kept and given back on HEAD.
            self.user_metadata[request.path] = {name: value for name, value in request.headers.items()
                                                if name.startswith("x-amz-meta-")}
            reply(conn, "200 OK")
        elif request.method == "HEAD":
            if request.path in self.objects:
                reply(conn, "200 OK", length=len(self.objects[request.path]),
                      headers=self.user_metadata.get(request.path, {}))
            else:
                reply(conn, "404 Not Found")
        elif request.method == "GET":
            if request.path in self.objects:
                reply(conn, "200 OK", self.objects[request.path])
            else:
                reply(conn, "404 Not Found")
        elif request.method == "DELETE":
            self.objects.pop(request.path, None)
            reply(conn, "204 No Content")
        else:
            reply(conn, "405 Method Not Allowed")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.listener.close()
        for conn in self.held:
            try:
                conn.close()
            except OSError:
                pass


@pytest.fixture
def fake_store():
    made: list[FakeStore] = []

    def make(behave=None, read_bodies: bool = True) -> FakeStore:
        store = FakeStore(behave, read_bodies)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=ACCESS, AWS_SECRET_ACCESS_KEY=SECRET)
    env.update(extra)
    return env


class Run:
    def __init__(self, done: subprocess.CompletedProcess, seconds: float):
        self.returncode = done.returncode
        self.stdout_bytes = done.stdout
        self.stderr_bytes = done.stderr
        self.stdout = done.stdout.decode("utf-8", "replace")
        self.stderr = done.stderr.decode("utf-8", "replace")
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"exit {self.returncode} after {self.seconds:.1f}s\nstdout: {self.stdout[:2000]!r}\n" \
               f"stderr: {self.stderr[:2000]!r}"


def check(wheelhouse_bin, endpoint: str, *arguments: str, bucket: str | None = "wheels", env=None,
          timeout: float = 60) -> Run:
    command = [str(wheelhouse_bin), "s3-check", "--s3-endpoint", endpoint]
    if bucket is not None:
        command += ["--s3-bucket", bucket]
    started = time.monotonic()
    done = subprocess.run(command + list(arguments), capture_output=True, timeout=timeout,
                          env=env if env is not None else environment())
    return Run(done, time.monotonic() - started)


def no_secret(run: Run) -> None:
    assert SECRET not in run.stdout + run.stderr, run


def terminal_safe(data: bytes) -> bool:
    """One line of text: valid UTF-8, no control character but the final newline."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    body = text[:-1] if text.endswith("\n") else text
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in body)


def probe_put(request: Request) -> bool:
    return request.method == "PUT" and "/.wheelhouse-check/" in request.path and "mismatch-" not in request.path


# ---------------------------------------------------------------------------------------------
# A store that lies.


def test_a_store_that_takes_any_body_fails_the_integrity_check_and_leaves_nothing(wheelhouse_bin, fake_store):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: the integrity check: "), run
    assert len(run.stdout.splitlines()) == 4, run
    no_secret(run)
    # Both the lying body and the probe itself are removed: a failed check leaves the bucket as found.
    assert store.objects == {}, f"left behind: {sorted(store.objects)}"


def _wrong_size(store, request, conn):
    if request.method == "HEAD" and "/.wheelhouse-check/" in request.path and request.path in store.objects:
        reply(conn, "200 OK", length=PROBE_SIZE - 1)
        return True
    return False


def _presigned_refused(store, request, conn):
    if request.presigned:
        reply(conn, "403 Forbidden", b"<Error><Code>AccessDenied</Code></Error>")
        return True
    return False


def _presigned_other_bytes(store, request, conn):
    if request.presigned:
        reply(conn, "200 OK", b"x" * PROBE_SIZE)
        return True
    return False


def _presigned_huge(store, request, conn):
    if request.presigned:
        reply(conn, "200 OK", b"y" * (4 * PROBE_SIZE))
        return True
    return False


def _presigned_truncated(store, request, conn):
    if request.presigned:
        reply(conn, "200 OK", b"z" * 100, length=PROBE_SIZE)
        return True
    return False


def _mismatch(answer):
    def behave(store, request, conn):
        if request.method == "PUT" and "mismatch-" in request.path:
            if answer == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
                conn.close()
            elif answer == "silence":
                store.held.append(conn)
            else:
                status, code = answer
                reply(conn, status, f"<Error><Code>{code}</Code></Error>".encode())
            return True
        return False
    return behave


@pytest.mark.parametrize("answer", [("400 Bad Request", "XAmzContentSHA256Mismatch"), ("400 Bad Request", "BadDigest")],
                         ids=["XAmzContentSHA256Mismatch", "BadDigest"])
def test_a_store_that_refuses_the_wrong_sha256_passes_and_is_left_as_found(wheelhouse_bin, fake_store, answer):
    store = fake_store(_mismatch(answer))
    run = check(wheelhouse_bin, store.endpoint)
    assert run.returncode == 0, run
    assert len(run.stdout.splitlines()) == 6 and answer[1] in run.stdout, run
    assert store.objects == {}, sorted(store.objects)


@pytest.mark.parametrize("answer", [("500 Internal Server Error", "InternalError"), ("503 Slow Down", "SlowDown"),
                                    ("403 Forbidden", "AccessDenied"), ("404 Not Found", "NoSuchBucket"),
                                    "reset", "silence"],
                         ids=["500", "503", "403", "404", "reset", "silence"])
def test_an_integrity_step_that_fails_for_another_reason_proves_nothing(wheelhouse_bin, fake_store, answer):
    # Only a refusal of the body for its sha256 shows the store checks it; a store that is down,
    # refuses the key or hangs up has shown nothing, and the check must not say "the bucket will do".
    store = fake_store(_mismatch(answer))
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "2")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: the integrity check: "), run
    assert "the bucket will do" not in run.stdout, run
    assert store.objects == {}, sorted(store.objects)


@pytest.mark.parametrize("behave,step", [
    (_wrong_size, "reading the probe's size"),
    (_presigned_refused, "downloading it by a presigned URL"),
    (_presigned_other_bytes, "downloading it by a presigned URL"),
    (_presigned_huge, "downloading it by a presigned URL"),
    (_presigned_truncated, "downloading it by a presigned URL"),
], ids=["wrong-size", "presigned-refused", "presigned-other-bytes", "presigned-huge", "presigned-truncated"])
def test_a_check_that_fails_after_the_probe_is_put_removes_the_probe(wheelhouse_bin, fake_store, behave, step):
    store = fake_store(behave)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "3")
    assert run.returncode == 1, run
    assert run.stderr.startswith(f"wheelhouse s3-check: {step}: "), run
    assert any(probe_put(r) for r in store.requests)
    assert store.objects == {}, f"the probe was left behind: {sorted(store.objects)}\n{run}"


def test_a_huge_body_is_cut_at_the_bound_not_read_whole(wheelhouse_bin, fake_store):
    sent = {"bytes": 0}

    def flood(store, request, conn):
        if not request.presigned:
            return False
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")
        chunk = b"\0" * 65536
        try:
            while sent["bytes"] < 1 << 30:
                conn.sendall(chunk)
                sent["bytes"] += len(chunk)
        except OSError:
            pass
        return True

    store = fake_store(flood)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "5")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: downloading it by a presigned URL: "), run
    assert "more than 65537 bytes" in run.stderr, run
    assert run.seconds < 15, run
    assert sent["bytes"] < 64 << 20, f"{sent['bytes']} bytes were taken of a 1 GiB answer"


@pytest.mark.parametrize("how", ["stalls-after-some-bytes", "trickles-for-ever"])
def test_a_body_that_never_ends_is_cut_by_the_timeout(wheelhouse_bin, fake_store, how):
    def never_ends(store, request, conn):
        if not request.presigned:
            return False
        if how == "stalls-after-some-bytes":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n" + b"a" * 10)
            store.held.append(conn)
            return True
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        deadline = time.monotonic() + 40
        try:
            while time.monotonic() < deadline and not store.stop.is_set():
                conn.sendall(b"1\r\na\r\n")
                time.sleep(0.2)
        except OSError:
            pass
        return True

    store = fake_store(never_ends)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "2")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: downloading it by a presigned URL: "), run
    assert "no answer in time (s3-timeout)" in run.stderr, run
    assert run.seconds < 12, run


def test_a_length_that_says_less_than_was_sent_is_not_taken_as_the_object(wheelhouse_bin, fake_store):
    def short_length(store, request, conn):
        if request.presigned:
            body = store.objects[request.path]
            reply(conn, "200 OK", body + b"EXTRA" * 1000, length=len(body) - 10)
            return True
        return False

    store = fake_store(short_length)
    run = check(wheelhouse_bin, store.endpoint)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: downloading it by a presigned URL: "), run


@pytest.mark.parametrize("length", ["99999999999999999999999999", "-1", "65536, 65536", "0x10000"])
def test_a_size_that_is_not_a_number_is_refused(wheelhouse_bin, fake_store, length):
    def odd_length(store, request, conn):
        if request.method == "HEAD" and request.path in store.objects:
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n".encode())
            return True
        return False

    store = fake_store(odd_length)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "3")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: reading the probe's size: "), run
    assert run.seconds < 10, run


@pytest.mark.parametrize("status_line", [
    b"HTTP/1.1 abc Oops\r\n\r\n",
    b"\x00\xff\x1b[2J garbage\r\n\r\n",
    b"SSH-2.0-OpenSSH_9.2\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n12345",
    b"HTTP/1.1 99999 Big\r\n\r\n",
])
def test_a_garbage_answer_is_a_transport_failure_not_a_pass(wheelhouse_bin, fake_store, status_line):
    def garbage(store, request, conn):
        conn.sendall(status_line)
        return True

    store = fake_store(garbage)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "2")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: the bucket: the object store at "), run
    assert run.stdout == "", run
    assert terminal_safe(run.stderr_bytes), run
    assert run.seconds < 10, run


# ---------------------------------------------------------------------------------------------
# XML answers that attack.

BILLION_LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
                  + b"".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode()
                             for i in range(1, 10))
                  + b"]>\n<Error><Code>&lol9;</Code><Message>&lol9;</Message></Error>")
EXTERNAL_ENTITY = (b'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                   b"<Error><Code>&x;</Code></Error>")


@pytest.mark.parametrize("body", [
    BILLION_LAUGHS,
    EXTERNAL_ENTITY,
    b"<Error>" + b"<a>" * 200000 + b"</a>" * 200000 + b"</Error>",
    b"<Error><Code>" + b"&amp;" * 200000 + b"</Code></Error>",
    b"<Error><Message>" + b"<" * 500000 + b"</Message></Error>",
    b"<Error>" + b"x" * (10 << 20) + b"</Error>",
], ids=["billion-laughs", "external-entity", "deep-nesting", "many-entities", "many-lt", "ten-megabytes"])
def test_a_hostile_xml_error_is_refused_quickly_and_briefly(wheelhouse_bin, fake_store, body):
    def hostile(store, request, conn):
        if probe_put(request):
            try:
                reply(conn, "403 Forbidden", body, headers={"Content-Type": "application/xml"})
            except OSError:
                pass
            return True
        return False

    store = fake_store(hostile)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "5")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: uploading a probe: "), run
    assert run.seconds < 10, run
    assert len(run.stderr_bytes) < 1000, run
    assert b"root:" not in run.stderr_bytes and b"lollol" not in run.stderr_bytes, run
    assert terminal_safe(run.stderr_bytes), run


@pytest.mark.parametrize("code,message", [
    (b"SignatureDoesNotMatch", b"fine\x1b]0;pwned\x07\x1b[2J\rok  the bucket will do"),
    (b"Bad&#x1b;[31mCode", b"&#x1b;]52;c;Y3VybCBldmlsfHNo&#x7;"),
    (b"AccessDenied", b"invalid \xff\xfe utf-8 \xc0\xaf and a\nsecond line"),
    (b"Code\x9b2J", b"C1 control &#x9b;31m and &#x85; next line"),
])
def test_what_the_store_says_cannot_drive_the_terminal(wheelhouse_bin, fake_store, code, message):
    def says(store, request, conn):
        if probe_put(request):
            reply(conn, "400 Bad Request", b"<Error><Code>" + code + b"</Code><Message>" + message +
                  b"</Message></Error>")
            return True
        return False

    store = fake_store(says)
    run = check(wheelhouse_bin, store.endpoint)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: uploading a probe: "), run
    assert terminal_safe(run.stderr_bytes), run


def test_a_huge_error_code_is_not_printed_whole(wheelhouse_bin, fake_store):
    def says(store, request, conn):
        if probe_put(request):
            reply(conn, "400 Bad Request", b"<Error><Code>" + b"C" * 500000 + b"</Code></Error>")
            return True
        return False

    store = fake_store(says)
    run = check(wheelhouse_bin, store.endpoint)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: uploading a probe: "), run
    assert len(run.stderr_bytes) < 1000, f"{len(run.stderr_bytes)} bytes of stderr"


# ---------------------------------------------------------------------------------------------
# Redirects are not followed.


@pytest.mark.parametrize("where", ["bucket", "put", "presigned"])
@pytest.mark.parametrize("status", ["301 Moved Permanently", "307 Temporary Redirect"])
def test_a_redirect_is_never_followed(wheelhouse_bin, fake_store, where, status):
    elsewhere = fake_store()

    def redirect(store, request, conn):
        hit = {"bucket": request.method == "HEAD" and request.path.strip("/") == "wheels",
               "put": probe_put(request),
               "presigned": request.presigned}[where]
        if hit:
            reply(conn, status, headers={"Location": f"{elsewhere.endpoint}{request.target}"})
            return True
        return False

    store = fake_store(redirect)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "3")
    assert run.returncode == 1, run
    assert elsewhere.requests == [], "the redirect was followed"
    assert f"HTTP {status.split()[0]}" in run.stderr, run
    no_secret(run)


# ---------------------------------------------------------------------------------------------
# Stores that stop in the middle.


def test_a_store_that_closes_while_reading_the_upload_fails_the_upload(wheelhouse_bin, fake_store):
    def hang_up(store, request, conn):
        if probe_put(request):
            conn.recv(100)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # RST
            conn.close()
            return True
        return False

    store = fake_store(hang_up, read_bodies=False)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "3")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: uploading a probe: the object store at 127.0.0.1:"), run
    assert run.seconds < 10, run


def test_a_store_that_never_reads_the_upload_is_cut_by_the_timeout(wheelhouse_bin, fake_store):
    def never_reads(store, request, conn):
        if probe_put(request):
            store.held.append(conn)
            return True
        if request.method == "PUT":
            return True
        return False

    def probe_size(store, request, conn):
        return never_reads(store, request, conn)

    store = fake_store(probe_size, read_bodies=False)
    # A big receive window would swallow the probe: make it small before connections are accepted.
    store.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "2")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: uploading a probe: "), run
    assert "no answer in time (s3-timeout)" in run.stderr, run
    assert run.seconds < 12, run


# ---------------------------------------------------------------------------------------------
# Operator mistakes: secrets.


@pytest.mark.parametrize("endpoint", [
    "http://AKIA:s3cr3tPW@127.0.0.1:notaport",
    "http://AKIA:s3cr3t PW@127.0.0.1:1",
    "http://AKIA:s3cr3t%zzPW@127.0.0.1:1",
    "http://AKIA:s3cr3tPW@127.0.0.1:1/wheels",
    "ftp://AKIA:s3cr3tPW@127.0.0.1:1",
    "http://127.0.0.1:1/?aws_secret_access_key=s3cr3tPW",
    "http://127.0.0.1:1/#s3cr3tPW",
    "http://s3cr3tPW@127.0.0.1:1",
])
def test_a_secret_in_the_endpoint_is_never_printed(wheelhouse_bin, endpoint):
    run = check(wheelhouse_bin, endpoint, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: give s3-endpoint as the store's base URL"), run
    assert "s3cr3t" not in run.stdout + run.stderr, run


@pytest.mark.parametrize("variable", ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"])
def test_a_credential_cannot_smuggle_headers(wheelhouse_bin, fake_store, variable):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, env=environment(**{variable: "AKIAX\r\nX-Injected: yes"}),
                timeout=30)
    assert run.returncode == 1, run
    assert all("x-injected" not in r.headers for r in store.requests), "a header was injected"
    assert run.stderr.startswith("wheelhouse s3-check: credentials: "), run


def test_the_secret_is_never_printed_when_the_store_refuses_it(wheelhouse_bin, fake_store):
    def reflect(store, request, conn):
        # A store that echoes the whole request in its error, as some proxies do.
        reply(conn, "403 Forbidden", b"<Error><Code>SignatureDoesNotMatch</Code><Message>" +
              request.raw_head.replace(b"&", b"&amp;").replace(b"<", b"&lt;") + b"</Message></Error>")
        return True

    store = fake_store(reflect)
    run = check(wheelhouse_bin, store.endpoint, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: the bucket: check the access key pair"), run
    no_secret(run)


# ---------------------------------------------------------------------------------------------
# Operator mistakes: credentials files.


def no_aws_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}


@pytest.mark.parametrize("case", ["missing", "directory", "binary", "only-an-empty-first-profile",
                                  "secret-without-key-id", "utf16"])
def test_a_credentials_file_that_will_not_do_is_refused_before_any_request(wheelhouse_bin, fake_store, tmp_path,
                                                                            case):
    path = tmp_path / "credentials"
    if case == "directory":
        path.mkdir()
    elif case == "binary":
        path.write_bytes(os.urandom(4096) + b"\0aws_access_key_id\0=\xff")
    elif case == "only-an-empty-first-profile":
        path.write_text(f"[default]\n\n[prod]\naws_access_key_id = {ACCESS}\naws_secret_access_key = {SECRET}\n")
    elif case == "secret-without-key-id":
        path.write_text(f"[default]\naws_secret_access_key = {SECRET}\n")
    elif case == "utf16":
        path.write_bytes(f"[default]\naws_access_key_id = {ACCESS}\naws_secret_access_key = {SECRET}\n"
                         .encode("utf-16"))
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-credentials-file", str(path), env=no_aws_env(), timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: credentials: "), run
    assert str(path) in run.stderr, run
    assert store.requests == [], "a request was made without credentials"
    no_secret(run)


def test_a_credentials_file_with_windows_line_ends_and_comments_works(wheelhouse_bin, fake_store, tmp_path):
    path = tmp_path / "credentials"
    path.write_bytes(f"# made on Windows\r\n[default]\r\naws_access_key_id = {ACCESS}\r\n"
                     f"aws_secret_access_key={SECRET}\r\n".encode())
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-credentials-file", str(path), env=no_aws_env(), timeout=30)
    # The store takes any body, so the check stops at the integrity step: the credentials were read.
    assert run.stderr.startswith("wheelhouse s3-check: the integrity check: "), run
    authorization = store.requests[0].headers.get("authorization", "")
    assert f"Credential={ACCESS}/" in authorization, authorization


# ---------------------------------------------------------------------------------------------
# Operator mistakes: names.


@pytest.mark.parametrize("bucket", ["..", ".", "a b", "50%", "%2e%2e", "bücket", "a\r\nX-Injected: yes", "a?b#c",
                                    "x" * 300, "-"])
def test_a_bucket_name_that_is_not_one_is_refused_before_any_request(wheelhouse_bin, fake_store, bucket):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, bucket=bucket, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: s3-bucket "), run
    assert store.requests == [], [r.target for r in store.requests]
    assert terminal_safe(run.stderr_bytes), run


@pytest.mark.parametrize("prefix", ["../victim/", "a/../../victim/", "/absolute/", "./", "team/\r\nX: y/",
                                    "team//wheels/"])
def test_a_prefix_that_walks_out_of_the_bucket_is_refused_before_any_request(wheelhouse_bin, fake_store, prefix):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-prefix", prefix, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: s3-prefix "), run
    assert store.requests == [], [r.target for r in store.requests]


@pytest.mark.parametrize("region,why", [
    ("", "s3-region must not be empty"),
    ("us-east-1\r\nX-Injected: yes", "s3-region"),
    ("us east/1", "s3-region"),
])
def test_a_region_that_is_not_one_is_refused_before_any_request(wheelhouse_bin, fake_store, region, why):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-region", region, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: " + why), run
    assert store.requests == [], [r.raw_head for r in store.requests]


@pytest.mark.parametrize("seconds", ["0", "3601", "99999999999999999999", "-1", "1.5", "ten"])
def test_a_timeout_out_of_range_is_refused_before_any_request(wheelhouse_bin, fake_store, seconds):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", seconds, timeout=30)
    assert run.returncode != 0, run
    assert "s3-timeout" in run.stderr, run
    assert store.requests == []


@pytest.mark.parametrize("bundle", ["/nonexistent/ca.pem", "/etc/hostname", "/tmp"])
def test_a_ca_bundle_that_will_not_do_names_the_option_given(wheelhouse_bin, bundle):
    run = check(wheelhouse_bin, "https://127.0.0.1:1", "--s3-ca-bundle", bundle, timeout=30)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: "), run
    assert "s3-ca-bundle" in run.stderr and bundle in run.stderr, run


def test_the_largest_timeout_is_taken(wheelhouse_bin, fake_store):
    store = fake_store()
    run = check(wheelhouse_bin, store.endpoint, "--s3-timeout", "3600", timeout=30)
    assert run.stderr.startswith("wheelhouse s3-check: the integrity check: "), run


# ---------------------------------------------------------------------------------------------
# A real radosgw: nothing is left behind, nothing walks into another bucket.


def read_env(path: pathlib.Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def s3cmd(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    host = f"127.0.0.1:{env['RGW_PORT']}"
    return subprocess.run(["s3cmd", "--no-ssl", f"--host={host}", f"--host-bucket={host}",
                           f"--access_key={env['S3_ACCESS_KEY']}", f"--secret_key={env['S3_SECRET_KEY']}",
                           "--config=/dev/null", *arguments], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def radosgw():
    for tool in ("ceph-mon", "ceph-osd", "radosgw", "s3cmd"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed; run deploy/install-deps.sh")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rgw-", dir="/tmp"))
    started = subprocess.run(["bash", str(RADOSGW), "start", str(folder)], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    env = read_env(folder / "env")
    for bucket in ("wheels", "victim"):
        made = s3cmd(env, "mb", f"s3://{bucket}")
        assert made.returncode == 0, made.stderr
    yield env
    subprocess.run(["bash", str(RADOSGW), "stop", str(folder)], capture_output=True, timeout=60)
    shutil.rmtree(folder, ignore_errors=True)


def rgw_env(env: dict[str, str]) -> dict[str, str]:
    return environment(AWS_ACCESS_KEY_ID=env["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=env["S3_SECRET_KEY"])


def listing(env: dict[str, str], bucket: str) -> str:
    listed = s3cmd(env, "ls", "--recursive", f"s3://{bucket}/")
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.strip()


class BreakingProxy:
    """Forwards each request to radosgw byte for byte (the signed Host is the proxy's, which is
    what radosgw checks against), except the ones `breaks(request)` picks, which get a 500."""

    def __init__(self, upstream_port: int, breaks):
        self.upstream_port = upstream_port
        self.store = FakeStore(self._forward)
        self.breaks = breaks
        self.endpoint = self.store.endpoint

    def _forward(self, store, request: Request, conn: socket.socket) -> bool:
        if self.breaks(request):
            reply(conn, "500 Internal Server Error", b"<Error><Code>InternalError</Code></Error>")
            return True
        with socket.create_connection(("127.0.0.1", self.upstream_port), timeout=30) as upstream:
            head = request.raw_head.replace(b"\r\nConnection: keep-alive", b"")
            upstream.sendall(head + b"\r\nConnection: close\r\n\r\n" + request.body)
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                conn.sendall(chunk)
        return True

    def close(self) -> None:
        self.store.close()


@pytest.mark.parametrize("broken", ["presigned-get", "size", "integrity"])
def test_radosgw_keeps_nothing_when_a_later_step_fails(wheelhouse_bin, radosgw, broken):
    def breaks(request: Request) -> bool:
        if broken == "presigned-get":
            return request.presigned
        if broken == "size":
            return request.method == "HEAD" and "/.wheelhouse-check/" in request.path
        return request.method == "PUT" and "mismatch-" in request.path

    proxy = BreakingProxy(int(radosgw["RGW_PORT"]), breaks)
    try:
        run = check(wheelhouse_bin, proxy.endpoint, "--s3-prefix", f"{broken}/", env=rgw_env(radosgw), timeout=60)
    finally:
        proxy.close()
    assert run.returncode == 1, run
    assert SECRET not in run.stderr and radosgw["S3_SECRET_KEY"] not in run.stdout + run.stderr, run
    assert listing(radosgw, "wheels") == "", f"left behind after a failed check:\n{listing(radosgw, 'wheels')}"


def test_radosgw_a_prefix_with_dot_dot_is_refused_and_never_reaches_another_bucket(wheelhouse_bin, radosgw):
    run = check(wheelhouse_bin, radosgw["S3_ENDPOINT"], "--s3-prefix", "../victim/", env=rgw_env(radosgw),
                timeout=60)
    victim = listing(radosgw, "victim")
    wheels = listing(radosgw, "wheels")
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-check: settings: s3-prefix "), run
    assert victim == "" and wheels == "", f"victim: {victim!r}\nwheels: {wheels!r}\n{run}"
