"""What a 201 promises, proven on the real binary: the blob and the commit that lists it are on
disk before the answer is written (traced with strace), a kill -9 in the middle of uploads loses
nothing that was answered and leaves nothing behind after a restart (fsck clean), a crashed run's
spool files are swept even when the new server has the same PID (a PID namespace: the server is
PID 1 in both runs, as in a container), and a full disk at commit answers 503 with Retry-After."""

from __future__ import annotations

import hashlib
import http.client
import os
import pathlib
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import threading
import time

import pytest

from server_process import ServerProcess
from test_uploads import curl, make_token, rows, spool_files
from wheelbuilder import build_wheel


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


class WrappedServer:
    """`wheelhouse serve` started under another program (strace, unshare) that does not pass
    signals on: the server itself is found among the wrapper's descendants and signalled."""

    def __init__(self, binary: pathlib.Path, data: pathlib.Path, wrapper: list[str], *extra: str,
                 env: dict[str, str] | None = None):
        self.stderr_path = data.parent / f"{data.name}-stderr.log"
        self.stderr_file = open(self.stderr_path, "wb")
        command = [*wrapper, str(binary), "serve", "--listen", "127.0.0.1:0", "--data", str(data), "--access-log", "off",
                   *extra]
        self.wrapper = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.stderr_file, env=env)
        deadline = time.monotonic() + 30
        while not (match := re.search(rb"listening on (http://[^/\s]+/)", self.stderr_path.read_bytes())):
            assert self.wrapper.poll() is None, f"the server did not start: {self.stderr()}"
            assert time.monotonic() < deadline, f"the server did not start in time: {self.stderr()}"
            time.sleep(0.02)
        self.url = match.group(1).decode()
        self.pid = self._server_pid(binary)

    def _server_pid(self, binary: pathlib.Path) -> int:
        pending = [self.wrapper.pid]
        while pending:
            pid = pending.pop()
            if os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(binary):
                return pid
            pending += children(pid)
        raise AssertionError("no wheelhouse process under the wrapper")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        os.kill(self.pid, sig)
        code = self.wrapper.wait(timeout=60)
        self.stderr_file.close()
        return code


def upload(url: str, token: str, wheel: pathlib.Path) -> tuple[int, str]:
    return curl("-T", str(wheel), "-u", f"__token__:{token}", url + "api/v1/files/")


def small_wheels(directory: pathlib.Path, count: int, project: str = "kernels") -> list[pathlib.Path]:
    return [build_wheel(directory, project, f"1.0.{i}", files={f"{project}/__init__.py": f"N = {i}\n"})
            for i in range(count)]


# --- 1. the order of syncs before the answer ----------------------------------------------------

TRACED = ["link", "linkat", "fsync", "fdatasync", "syncfs", "write", "pwrite64", "writev", "sendmsg", "sendto"]


class Trace:
    """strace -f output: for each call, the line where it started and the line where it ended."""

    def __init__(self, path: pathlib.Path):
        self.calls: list[tuple[str, str, int, int]] = []  # name, text, started, ended
        unfinished: dict[tuple[str, str], tuple[str, int]] = {}
        for number, line in enumerate(path.read_text(errors="replace").splitlines()):
            match = re.match(r"(\d+)\s+(?:<\.\.\. (\w+) resumed>(.*)|(\w+)\((.*))$", line)
            if not match:
                continue
            pid, resumed_name, resumed_text, name, text = match.groups()
            if resumed_name:
                first_text, started = unfinished.pop((pid, resumed_name), ("", number))
                self.calls.append((resumed_name, first_text + resumed_text, started, number))
            elif text.endswith("<unfinished ...>"):
                unfinished[(pid, name)] = (text, number)
            else:
                self.calls.append((name, text, number, number))

    def find(self, what: str, where, after: int = -1, ended: bool = True) -> int | None:
        """The line where the first call named in `what` that matches `where` and starts after
        line `after` ended (or, with ended=False, started); None when there is none."""
        names = what.split("|")
        for name, text, started, finished in sorted(self.calls, key=lambda call: call[2]):
            if name in names and started > after and where(text):
                return finished if ended else started
        return None

    def first(self, what: str, where, after: int = -1, ended: bool = True) -> int:
        found = self.find(what, where, after, ended)
        assert found is not None, f"no {what} matching after line {after}"
        return found


def test_an_upload_is_answered_only_after_its_blob_and_its_row_are_synced(tmp_path, wheelhouse_bin):
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: run deploy/install-deps.sh")
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    trace_path = tmp_path / "trace.txt"
    strace = ["strace", "-f", "-yy", "-qq", "-s", "40", "-o", str(trace_path), "-e", "trace=" + ",".join(TRACED)]
    server = WrappedServer(wheelhouse_bin, data, strace)
    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0")
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    try:
        status, body = upload(server.url, token, wheel)
        assert status == 201, body
    finally:
        assert server.stop() == 0, server.stderr()

    trace = Trace(trace_path)
    blobs = str(data / "blobs")
    blob = trace.first("link|linkat", lambda text: f"/{sha256}\"" in text)
    metadata = trace.first("link|linkat", lambda text: f"/{sha256}.metadata\"" in text)
    placed = max(blob, metadata)
    # The blob's bytes and the names of blob and METADATA are durable once a sync covering them
    # ended: one syncfs of the store's file system, or fsyncs of the file and its directory.
    whole_store = trace.find("syncfs", lambda text: str(data) in text, after=placed)
    file_bytes = trace.find("fsync|fdatasync", lambda text: "spool-" in text or f"/{sha256}>" in text)
    directory = trace.find("fsync", lambda text: f"{blobs}/sha256/{sha256[:2]}/{sha256[2:4]}>" in text, after=blob)
    per_file = max(file_bytes, directory) if file_bytes is not None and directory is not None else None
    candidates = [line for line in (whole_store, per_file) if line is not None]
    assert candidates, "nothing synced the blob"
    durable = min(candidates)
    commit_written = trace.first("pwrite64|write", lambda text: "catalog.db-wal>" in text, after=durable, ended=False)
    commit_synced = trace.first("fdatasync|fsync", lambda text: "catalog.db-wal>" in text, after=commit_written)
    answered = trace.first("sendmsg|sendto|write|writev", lambda text: "201 Created" in text, ended=False)
    assert placed < durable < commit_written < commit_synced < answered, trace_path.read_text()[-4000:]


# --- 2. kill -9 in the middle of uploads ---------------------------------------------------------

def upload_until_killed(url: str, token: str, wheels: list[pathlib.Path], answered: dict, lock: threading.Lock):
    """PUTs `wheels` one after another on one kept-alive connection until the server dies."""
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        for wheel in wheels:
            connection.request("PUT", f"/api/v1/files/{wheel.name}", wheel.read_bytes(),
                               {"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            with lock:
                answered[wheel.name] = response.status
    except (OSError, http.client.HTTPException):
        pass  # killed under us
    finally:
        connection.close()


def fsck(binary: pathlib.Path, data: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "fsck", "--data", str(data)], capture_output=True, text=True, timeout=120)


def test_kill_9_during_concurrent_uploads_loses_nothing_answered_and_leaves_nothing_after_a_restart(
        tmp_path, wheelhouse_bin):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    wheels = small_wheels(tmp_path / "dist", 400)
    answered: dict[str, int] = {}
    lock = threading.Lock()
    chance = random.Random(15)
    for cycle in range(8):
        server = ServerProcess(data).start()
        remaining = [w for w in wheels if answered.get(w.name) not in (200, 201)]
        clients = [threading.Thread(target=upload_until_killed,
                                    args=(server.url, token, remaining[i::8], answered, lock)) for i in range(8)]
        for client in clients:
            client.start()
        time.sleep(chance.uniform(0.3, 0.8))
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        server._stderr.close()
        for client in clients:
            client.join(timeout=60)

        # The next start sweeps what the killed run left; stopped cleanly, the store agrees with
        # the catalog, and every upload that was answered is listed.
        restarted = ServerProcess(data).start()
        assert spool_files(data) == [], restarted.stderr()
        assert restarted.stop() == 0, restarted.stderr()
        checked = fsck(wheelhouse_bin, data)
        assert checked.returncode == 0, f"after kill {cycle + 1}:\n{checked.stdout}{checked.stderr}"
        listed = {name for name, _, _ in rows(data)}
        lost = [name for name, status in answered.items() if status in (200, 201) and name not in listed]
        assert lost == [], f"answered but not listed after kill {cycle + 1}: {lost}"
    assert sum(status == 201 for status in answered.values()) > 0


# --- 3. a crashed run's spool, the new server having its PID -------------------------------------

def namespace_pid(pid: int) -> int:
    """The PID the process has in its own PID namespace."""
    line = next(l for l in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines() if l.startswith("NSpid:"))
    return int(line.split()[-1])


def test_a_dead_runs_spool_file_is_swept_by_a_server_with_the_same_pid(tmp_path, wheelhouse_bin):
    probe = subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no PID namespaces here (they need root or user namespaces): {probe.stderr.strip()}")
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    in_container = ["unshare", "--pid", "--fork"]

    first = WrappedServer(wheelhouse_bin, data, in_container)
    assert namespace_pid(first.pid) == 1
    host, port = first.url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(f"PUT /api/v1/files/kernels-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n"
                           f"Authorization: Bearer {token}\r\nContent-Length: 1000000\r\n\r\n".encode()
                           + b"PK\x03\x04" + bytes(50000))
        deadline = time.monotonic() + 10
        while not spool_files(data):
            assert time.monotonic() < deadline, "the upload never started spooling"
            time.sleep(0.02)
        first.stop(signal.SIGKILL)  # the crash, mid-upload
    left = spool_files(data)
    assert len(left) == 1

    second = WrappedServer(wheelhouse_bin, data, in_container)
    try:
        assert namespace_pid(second.pid) == 1  # the same PID as the run that left the file
        assert spool_files(data) == [], f"{left} survived the restart: {second.stderr()}"
        assert "removed 1 files left in" in second.stderr()
        wheel = build_wheel(tmp_path / "dist", "kernels", "1.0")
        assert upload(second.url, token, wheel)[0] == 201
    finally:
        assert second.stop() == 0, second.stderr()


# --- 4. a full disk at commit ---------------------------------------------------------------------

@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MiB tmpfs: a disk that fills up. Mounting needs root."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=False)


def free_pages(disk: pathlib.Path) -> int:
    return os.statvfs(disk).f_bavail


def test_a_full_disk_at_commit_answers_503_with_retry_after_and_stores_nothing(tmp_path, wheelhouse_bin, tiny_disk):
    token = make_token(wheelhouse_bin, tiny_disk, "ci")
    server = ServerProcess(tiny_disk).start()  # its logs go beside the disk, not on it
    try:
        dist = tmp_path / "dist"
        assert upload(server.url, token, build_wheel(dist, "kernels", "1.0"))[0] == 201
        wheel = build_wheel(dist, "kernels", "1.1")
        # Room for the upload's own files (its spool, which becomes the blob, and its METADATA)
        # and a page more, but not for the commit's WAL frames.
        page = os.statvfs(tiny_disk).f_frsize
        room = -(-wheel.stat().st_size // page) + 2
        filler = tiny_disk / "filler"
        filler.write_bytes(b"\0" * (free_pages(tiny_disk) - room) * page)
        assert free_pages(tiny_disk) == room

        status, text = curl("-D", "-", "-T", str(wheel), "-u", f"__token__:{token}", server.url + "api/v1/files/")
        assert status == 503, text
        assert re.search(r"(?im)^retry-after: \d+", text), text
        assert "the disk holding the catalog is full; nothing was stored" in text, text
        assert [name for name, _, _ in rows(tiny_disk)] == ["kernels-1.0-py3-none-any.whl"]
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert not (tiny_disk / "blobs" / "sha256" / sha256[:2] / sha256[2:4] / sha256).exists()
        assert spool_files(tiny_disk) == []

        filler.unlink()  # space again: the same upload goes in
        status, text = upload(server.url, token, wheel)
        assert status == 201, text
    finally:
        assert server.stop() == 0, server.stderr()
    checked = fsck(wheelhouse_bin, tiny_disk)
    assert checked.returncode == 0, checked.stdout + checked.stderr
