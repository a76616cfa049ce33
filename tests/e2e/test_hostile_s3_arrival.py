"""Hostile tests of uploads that go to the bucket while they arrive (issue 29): a form whose
sha256_digest comes before the content starts a multipart upload under the key that sha256
names before one byte of it is checked. What no friendly client sends: a sha256 that names
another file's object, bytes that are no wheel, a client that stops halfway, a token for another
project, a digest in capitals or that is no digest, more such uploads at once than the server runs
in the background. None may leave an object, a part or a claim behind, nor touch another file's
object. Against the module's real radosgw (test_s3_check.radosgw)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import pathlib
import time
import urllib.parse

import pytest

from test_s3_check import RADOSGW, radosgw, s3cmd  # noqa: F401  (the module's radosgw fixture)
from test_s3_store import (FormUpload, blob_key, bucket_keys, bucket_server, catalog_rows,  # noqa: F401
                           in_progress_uploads, object_bytes, bucket_index, uploaded_parts)
from test_uploads import make_token
from wheelbuilder import build_wheel

MiB = 1 << 20


def settled(data: pathlib.Path, env: dict[str, str], prefix: str, seconds: float = 20.0) -> bool:
    """No upload in progress under `prefix` and nothing left in DATA/tmp/, within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not in_progress_uploads(env, prefix) and not os.listdir(data / "tmp"):
            return True
        time.sleep(0.2)
    return False


def big_wheel(tmp_path: pathlib.Path, name: str, version: str, size: int = 26 * MiB) -> pathlib.Path:
    return build_wheel(tmp_path / f"farm-{name}-{version}", name, version,
                       files={f"{name}/blob.bin": os.urandom(size)})


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sha256_naming_another_files_object_never_touches_it(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    victim = big_wheel(tmp_path, "victim", "1.0")
    status, said = FormUpload(running, token, victim, sha256_of(victim)).finish()
    assert status == 201, said
    victim_key = blob_key(bucket_server.prefix, sha256_of(victim))

    forged = big_wheel(tmp_path, "forger", "1.0")
    sending = FormUpload(running, token, forged, sha256_of(victim))
    sending.send(20 * MiB)
    deadline = time.monotonic() + 20
    while uploaded_parts(radosgw, victim_key) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    status, said = sending.finish()
    assert status == 400 and "sha256_digest" in said, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert object_bytes(radosgw, victim_key, tmp_path) == victim.read_bytes()
    assert catalog_rows(data) == {victim.name: sha256_of(victim)}
    assert list(bucket_keys(radosgw, bucket_server.prefix)) == [victim_key]


def test_bytes_that_are_no_wheel_leave_no_object_and_no_parts(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    junk = tmp_path / "junk-1.0-py3-none-any.whl"
    junk.write_bytes(os.urandom(30 * MiB))
    status, said = FormUpload(running, token, junk, sha256_of(junk)).finish()
    assert status == 400, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}


def test_a_client_that_stops_halfway_leaves_nothing_in_the_bucket_or_the_folder(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "halfway", "1.0", 40 * MiB)
    key = blob_key(bucket_server.prefix, sha256_of(wheel))
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(25 * MiB)
    deadline = time.monotonic() + 20
    while uploaded_parts(radosgw, key) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert uploaded_parts(radosgw, key) == 3
    sending.close()
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    # The server goes on: the same file, whole, is taken.
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()


def test_a_token_for_another_project_stores_nothing(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    limited = make_token(wheelhouse_bin, data, "ci-other", "--project", "other")
    running = bucket_server(data)
    wheel = big_wheel(tmp_path, "mine", "1.0")
    status, said = FormUpload(running, limited, wheel, sha256_of(wheel)).finish()
    assert status == 403, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}


def test_digests_in_capitals_or_that_are_none_go_the_way_they_went_before(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    capitals = big_wheel(tmp_path, "capitals", "1.0")
    status, said = FormUpload(running, token, capitals, sha256_of(capitals).upper()).finish()
    assert status == 201, said  # compared without case, as before; put once whole
    odd = big_wheel(tmp_path, "odd", "1.0", 17 * MiB)
    for declared in ("not-a-digest", "0" * 63, "g" * 64, "a" * 65, "../" * 30, sha256_of(odd) + " "):
        status, said = FormUpload(running, token, odd, declared).finish()
        assert status == 400 and "sha256_digest" in said, (declared, said)
    status, said = FormUpload(running, token, odd, "").finish()  # twine's "not sent"
    assert status == 201, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, sha256_of(capitals)),
                                                              blob_key(bucket_server.prefix, sha256_of(odd))}


def test_more_uploads_at_once_than_run_in_the_background_all_land(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheels = [big_wheel(tmp_path, "many", f"1.{n}", 18 * MiB) for n in range(5)]
    with concurrent.futures.ThreadPoolExecutor(len(wheels)) as pool:
        answers = list(pool.map(lambda wheel: FormUpload(running, token, wheel, sha256_of(wheel)).finish(), wheels))
    assert [status for status, _ in answers] == [201] * len(wheels), answers
    for wheel in wheels:
        assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256_of(wheel)), tmp_path) == wheel.read_bytes()
    assert settled(data, radosgw, bucket_server.prefix)


# ---- attacks beyond the first set -------------------------------------------------------------

import base64  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402


class RawForm:
    """Any multipart form, over a raw socket: `parts` is a list of (name, filename or None, bytes),
    sent with Content-Length or chunked, in pieces the test paces (send(n) counts body bytes)."""

    boundary = "hostile-boundary"

    def __init__(self, running, token: str, parts: list, chunked: bool = False, edit=None):
        body = b""
        for name, filename, value in parts:
            disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
            body += f"--{self.boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
            if filename:
                body += b"Content-Type: application/octet-stream\r\n"
            body += b"\r\n" + value + b"\r\n"
        body += f"--{self.boundary}--\r\n".encode()
        body = edit(body) if edit else body
        self.body, self.chunked, self.sent = body, chunked, 0
        credentials = base64.b64encode(f"__token__:{token}".encode()).decode()
        host, port = running.url.removeprefix("http://").rstrip("/").split(":")
        self.socket = socket.create_connection((host, int(port)), timeout=120)
        length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(body)}"
        self.socket.sendall((f"POST /legacy/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
                             f"Authorization: Basic {credentials}\r\n"
                             f"Content-Type: multipart/form-data; boundary={self.boundary}\r\n"
                             f"{length}\r\nConnection: close\r\n\r\n").encode())

    def send(self, count: int) -> None:
        piece = self.body[self.sent:self.sent + count]
        self.sent += len(piece)
        try:
            if self.chunked:
                for at in range(0, len(piece), 1 << 20):
                    chunk = piece[at:at + (1 << 20)]
                    self.socket.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            else:
                self.socket.sendall(piece)
        except OSError:
            pass  # the server answered early and closed: the answer is read by finish()

    def finish(self) -> tuple[int, str]:
        self.send(len(self.body) - self.sent)
        try:
            if self.chunked:
                self.socket.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        answer_bytes = b""
        try:
            while chunk := self.socket.recv(65536):
                answer_bytes += chunk
        except OSError:
            pass
        self.socket.close()
        status_line, _, rest = answer_bytes.decode(errors="replace").partition("\r\n")
        return (int(status_line.split()[1]) if status_line else 0), rest

    def close(self) -> None:
        self.socket.close()


def twine_parts(wheel: pathlib.Path, *fields: tuple[str, str], name: str | None = None) -> list:
    parts = [(":action", None, b"file_upload"), ("protocol_version", None, b"1")]
    parts += [(field, None, value.encode()) for field, value in fields]
    parts.append(("content", name or wheel.name, wheel.read_bytes()))
    return parts


def wait_parts(key: str, count: int, seconds: float = 20.0) -> int:
    deadline = time.monotonic() + seconds
    while uploaded_parts(RADOSGW_ENV[0], key) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    return uploaded_parts(RADOSGW_ENV[0], key)


RADOSGW_ENV: list = []


def remember(env) -> None:
    RADOSGW_ENV[:] = [env]


def threads_of(running) -> int:
    return len(os.listdir(f"/proc/{running.process.pid}/task"))


def test_two_uploads_of_the_same_bytes_at_once_both_answer_and_one_object_lands(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "twice", "1.0", 30 * MiB)
    sha = sha256_of(wheel)
    first, second = FormUpload(running, token, wheel, sha), FormUpload(running, token, wheel, sha)
    first.send(25 * MiB)
    second.send(25 * MiB)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda sending: sending.finish(), [first, second]))
    assert sorted(status for status, _ in answers)[0] in (200, 201) and all(s in (200, 201) for s, _ in answers), answers
    assert settled(data, radosgw, bucket_server.prefix)
    assert catalog_rows(data) == {wheel.name: sha}
    assert list(bucket_keys(radosgw, bucket_server.prefix)) == [blob_key(bucket_server.prefix, sha)]
    assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha), tmp_path) == wheel.read_bytes()


def test_a_forger_racing_the_victim_for_its_key_never_spoils_the_victims_object(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """Both in flight at once, both declaring the victim's sha256; the forger ends first, then
    after the victim (twice): the victim's object is its own bytes, and stays."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    victim = big_wheel(tmp_path, "victim", "1.0", 30 * MiB)
    (tmp_path / "forger").mkdir()
    forged = big_wheel(tmp_path / "forger", "victim", "1.0", 30 * MiB)  # same name, other bytes
    assert forged.read_bytes() != victim.read_bytes()
    sha = sha256_of(victim)
    key = blob_key(bucket_server.prefix, sha)
    honest, forger = FormUpload(running, token, victim, sha), FormUpload(running, token, forged, sha)
    forger.send(25 * MiB)
    honest.send(25 * MiB)
    status, said = forger.finish()
    assert status == 400 and "sha256_digest" in said, said
    status, said = honest.finish()
    assert status == 201, said
    late = FormUpload(running, token, forged, sha)
    late.send(25 * MiB)
    status, said = late.finish()
    assert status in (400, 409), said
    assert settled(data, radosgw, bucket_server.prefix)
    assert catalog_rows(data) == {victim.name: sha}
    assert list(bucket_keys(radosgw, bucket_server.prefix)) == [key]
    assert object_bytes(radosgw, key, tmp_path) == victim.read_bytes()


def test_a_sha256_digest_given_twice_or_after_the_content_or_with_a_filename(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """The first sha256_digest is the one checked, whatever comes later; one that names the
    victim's object never touches it; one after the content or in a part with a filename goes
    the old way. Nothing is left behind by any."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    victim = big_wheel(tmp_path, "victim", "1.0", 18 * MiB)
    status, said = FormUpload(running, token, victim, sha256_of(victim)).finish()
    assert status == 201, said
    victim_key = blob_key(bucket_server.prefix, sha256_of(victim))
    odd = big_wheel(tmp_path, "odd", "1.0", 18 * MiB)
    right, wrong = sha256_of(odd), sha256_of(victim)
    # first names the victim, then the right one: refused, the victim untouched
    status, said = RawForm(running, token, twine_parts(odd, ("sha256_digest", wrong),
                                                       ("sha256_digest", right))).finish()
    assert status == 400 and "sha256_digest" in said, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert object_bytes(radosgw, victim_key, tmp_path) == victim.read_bytes()
    # after the content: the digest is still checked
    parts = twine_parts(odd)
    parts.append(("sha256_digest", None, wrong.encode()))
    status, said = RawForm(running, token, parts).finish()
    assert status == 400 and "sha256_digest" in said, said
    # in a part with a filename
    status, said = RawForm(running, token, [(":action", None, b"file_upload"), ("protocol_version", None, b"1"),
                                            ("sha256_digest", "digest.txt", wrong.encode()),
                                            ("content", odd.name, odd.read_bytes())]).finish()
    assert status == 400, said
    # right first, wrong second: the right one is taken
    status, said = RawForm(running, token, twine_parts(odd, ("sha256_digest", right),
                                                       ("sha256_digest", wrong))).finish()
    assert status in (201, 400), said
    assert settled(data, radosgw, bucket_server.prefix)
    rows = catalog_rows(data)
    assert rows.get(victim.name) == wrong
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, sha) for sha in rows.values()}
    assert object_bytes(radosgw, victim_key, tmp_path) == victim.read_bytes()


def test_a_chunked_body_that_grows_past_the_upload_limit_is_refused_and_leaves_nothing(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--max-upload-size", str(20 * MiB))
    wheel = big_wheel(tmp_path, "toolarge", "1.0", 30 * MiB)
    sending = RawForm(running, token, twine_parts(wheel, ("sha256_digest", sha256_of(wheel))), chunked=True)
    status, said = sending.finish()
    assert status == 413, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}
    # and chunked, within the limit, lands
    fits = big_wheel(tmp_path, "fits", "1.0", 19 * MiB)
    status, said = RawForm(running, token, twine_parts(fits, ("sha256_digest", sha256_of(fits))), chunked=True).finish()
    assert status == 201, said
    assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256_of(fits)), tmp_path) == fits.read_bytes()
    assert settled(data, radosgw, bucket_server.prefix)


def test_clients_that_stop_at_16_mib_at_a_part_boundary_or_inside_the_last_part(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "stops", "1.0", 28 * MiB)
    size = wheel.stat().st_size
    for stop_at in (16 * MiB, 16 * MiB + 1, 24 * MiB, 24 * MiB + 1, size - 1000, size):
        sending = FormUpload(running, token, wheel, sha256_of(wheel))
        sending.send(stop_at)
        time.sleep(1.5)
        sending.close()  # never the closing boundary
        assert settled(data, radosgw, bucket_server.prefix), stop_at
        assert bucket_keys(radosgw, bucket_server.prefix) == {}, stop_at
    assert catalog_rows(data) == {}
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert settled(data, radosgw, bucket_server.prefix)


def test_an_empty_content_or_one_of_exactly_16_mib_with_its_sha256(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    empty = tmp_path / "empty-1.0-py3-none-any.whl"
    empty.write_bytes(b"")
    status, said = FormUpload(running, token, empty, sha256_of(empty)).finish()
    assert status == 400, said
    exact = tmp_path / "exact-1.0-py3-none-any.whl"
    exact.write_bytes(os.urandom(16 * MiB))
    status, said = FormUpload(running, token, exact, sha256_of(exact)).finish()
    assert status == 400, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}


def test_a_reupload_and_a_clash_of_a_large_file_leave_the_first_object_alone(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "again", "1.0", 20 * MiB)
    sha = sha256_of(wheel)
    key = blob_key(bucket_server.prefix, sha)
    assert FormUpload(running, token, wheel, sha).finish()[0] == 201
    status, said = FormUpload(running, token, wheel, sha).finish()
    assert status in (200, 201), said
    (tmp_path / "other").mkdir()
    other = big_wheel(tmp_path / "other", "again", "1.0", 20 * MiB)
    status, said = FormUpload(running, token, other, sha256_of(other)).finish()
    assert status in (400, 409) and "already exists" in said, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert list(bucket_keys(radosgw, bucket_server.prefix)) == [key]
    assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()
    assert catalog_rows(data) == {wheel.name: sha}


def test_a_form_name_of_another_project_takes_the_completed_object_back_out(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """check_form_project refuses after the early upload was completed: the object must go."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "named", "1.0", 20 * MiB)
    status, said = RawForm(running, token, twine_parts(wheel, ("name", "other"),
                                                       ("sha256_digest", sha256_of(wheel)))).finish()
    assert status == 400 and "name" in said, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}
    assert not os.listdir(data / "tmp")


def test_a_limited_token_halfway_through_a_large_upload_of_another_project_sends_no_part(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """The bucket hears nothing of a file the token may not upload, nor of a name that parses as
    nothing: the early upload is gated on the content part's filename, and fails closed. The same
    bytes from a token that may upload them do go up while they arrive (the control)."""
    data = tmp_path / "data"
    data.mkdir()
    limited = make_token(wheelhouse_bin, data, "ci-other", "--project", "other")
    everyone = make_token(wheelhouse_bin, data, "ci-all")
    allowed = make_token(wheelhouse_bin, data, "ci-mine", "--project", "mine")
    running = bucket_server(data)
    wheel = big_wheel(tmp_path, "mine", "1.0", 30 * MiB)
    key = blob_key(bucket_server.prefix, sha256_of(wheel))
    remember(radosgw)
    for token, name in ((limited, None), (everyone, "mine-1.0.whl"), (everyone, "mine-1.0-py3-none-any.whl\x01")):
        sending = FormUpload(running, token, wheel, sha256_of(wheel), name=name)
        sending.send(26 * MiB)
        assert wait_parts(key, 1, 6) == 0, name
        sending.close()
        assert settled(data, radosgw, bucket_server.prefix)
    sending = FormUpload(running, allowed, wheel, sha256_of(wheel))
    sending.send(26 * MiB)
    assert wait_parts(key, 3) == 3
    sending.close()
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}


def test_sigterm_mid_upload_exits_and_the_restart_leaves_no_upload_or_claim(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--drain-timeout", "3")
    wheel = big_wheel(tmp_path, "stopped", "1.0", 40 * MiB)
    key = blob_key(bucket_server.prefix, sha256_of(wheel))
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(25 * MiB)
    remember(radosgw)
    assert wait_parts(key, 3) == 3
    started = time.monotonic()
    code = running.stop(timeout=20)  # raises should it hang
    assert time.monotonic() - started < 15
    assert code == 0, code
    sending.close()
    again = bucket_server(data)
    assert settled(data, radosgw, bucket_server.prefix, 30), (in_progress_uploads(radosgw, bucket_server.prefix),
                                                              os.listdir(data / "tmp"))
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    status, said = FormUpload(again, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said


def test_many_large_uploads_that_hang_up_leave_no_threads_and_others_still_land(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    small = big_wheel(tmp_path, "warm", "1.0", 1 * MiB)
    assert FormUpload(running, token, small, sha256_of(small)).finish()[0] == 201
    time.sleep(1)
    before = threads_of(running)
    wheel = big_wheel(tmp_path, "hangs", "1.0", 20 * MiB)
    for _ in range(3):
        sendings = [FormUpload(running, token, wheel, sha256_of(wheel)) for _ in range(6)]
        for sending in sendings:
            sending.send(18 * MiB)
        time.sleep(2)
        for sending in sendings:
            sending.close()
        assert settled(data, radosgw, bucket_server.prefix, 30)
    time.sleep(2)
    after = threads_of(running)
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert after <= before + 2, (before, after)
    assert settled(data, radosgw, bucket_server.prefix)


# ---- a scripted store (test_hostile_s3_move.MultipartStore) ------------------------------------

from test_hostile_s3 import fake_store, reply  # noqa: E402,F401
from test_hostile_s3_move import MultipartStore, fake_server, wait_until  # noqa: E402


def fake_upload(tmp_path, wheelhouse_bin, store, size: int = 20 * MiB, *extra: str):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = fake_server(data, store, *extra)
    wheel = big_wheel(tmp_path, "scripted", "1.0", size)
    return data, token, running, wheel


def test_a_store_slow_to_create_the_upload_still_takes_the_file(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """CreateMultipartUpload answered 2 s late (within --s3-timeout 3): the body is all in by
    then; the parts go after it and the file lands."""
    def initiate(store, request, conn):
        time.sleep(2)
        reply(conn, "200 OK", b"<InitiateMultipartUploadResult><UploadId>upload-1</UploadId>"
                              b"</InitiateMultipartUploadResult>")
        return True

    store = MultipartStore(fake_store, script={"initiate": initiate})
    data, token, running, wheel = fake_upload(tmp_path, wheelhouse_bin, store)
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert len(store.completions) == 1 and store.aborts == []
    assert b"".join(store.parts[n] for n in sorted(store.parts)) == wheel.read_bytes()
    assert wait_until(lambda: os.listdir(data / "tmp") == [])
    assert running.stop() == 0


@pytest.mark.parametrize("how", ["silent", "refused"])
def test_a_store_that_never_creates_the_upload_answers_and_leaves_nothing(
        tmp_path, wheelhouse_bin, fake_store, how):  # noqa: F811
    def initiate(store, request, conn):
        if how == "silent":
            time.sleep(8)
        else:
            reply(conn, "500 Internal Server Error", b"<Error><Code>InternalError</Code></Error>")
        return True

    store = MultipartStore(fake_store, script={"initiate": initiate})
    data, token, running, wheel = fake_upload(tmp_path, wheelhouse_bin, store)
    started = time.monotonic()
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status in (201, 503), said
    assert time.monotonic() - started < 20
    assert store.completions == [] or status == 201
    assert wait_until(lambda: os.listdir(data / "tmp") == []), os.listdir(data / "tmp")
    if status == 503:
        assert "Retry-After" in said, said
        assert catalog_rows(data) == {}
    # the server goes on, once the store has rested (Retry-After)
    small = big_wheel(tmp_path, "small", "1.0", 1 * MiB)
    store.script.pop("initiate")
    time.sleep(6)
    status, said = FormUpload(running, token, small, sha256_of(small)).finish()
    assert status == 201, said
    assert running.stop() == 0


def test_sigterm_while_the_store_holds_the_create_exits_in_time(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    def initiate(store, request, conn):
        time.sleep(30)
        return True

    store = MultipartStore(fake_store, script={"initiate": initiate})
    data, token, running, wheel = fake_upload(tmp_path, wheelhouse_bin, store, 20 * MiB, "--drain-timeout", "2")
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(18 * MiB)
    assert wait_until(lambda: len(store.initiations) == 1, 10)
    started = time.monotonic()
    assert running.stop(timeout=12) == 0
    assert time.monotonic() - started < 10
    sending.close()


def test_a_last_part_answered_after_the_body_ended_still_lands(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    def part(store, request, conn):
        number = int(urllib.parse.parse_qs(urllib.parse.urlsplit(request.target).query)["partNumber"][0])
        if number == 3:
            time.sleep(2)
        with store.lock:
            store.parts[number] = request.body
        reply(conn, "200 OK", headers={"ETag": f'"etag-{number}"'})
        return True

    store = MultipartStore(fake_store, script={"part": part})
    data, token, running, wheel = fake_upload(tmp_path, wheelhouse_bin, store)
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert b"".join(store.parts[n] for n in sorted(store.parts)) == wheel.read_bytes()
    assert len(store.completions) == 1
    assert wait_until(lambda: os.listdir(data / "tmp") == [])
    assert running.stop() == 0


def test_kill_9_during_an_upload_declaring_a_listed_files_sha256_leaves_no_upload_in_progress(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """Found by the attacker, fixed: the claim left by a killed run names a sha256 a row references
    (a forger's declared digest, or an honest re-upload of the same file). The start-up sweep's
    release_blob kept the object and stopped there, so the parts stayed in progress for good; the
    sweep now throws away unfinished uploads of a claimed key whatever keeps its object."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    victim = big_wheel(tmp_path, "victim", "1.0", 18 * MiB)
    sha = sha256_of(victim)
    key = blob_key(bucket_server.prefix, sha)
    assert FormUpload(running, token, victim, sha).finish()[0] == 201
    forged = big_wheel(tmp_path, "forger", "1.0", 30 * MiB)
    sending = FormUpload(running, token, forged, sha)
    sending.send(25 * MiB)
    remember(radosgw)
    assert wait_parts(key, 3) == 3
    running.process.kill()
    running.process.wait()
    running.process = None  # killed: the fixture's stop has nothing to stop
    sending.close()
    bucket_server(data)
    assert settled(data, radosgw, bucket_server.prefix, 30), (in_progress_uploads(radosgw, bucket_server.prefix),
                                                              os.listdir(data / "tmp"))
    assert object_bytes(radosgw, key, tmp_path) == victim.read_bytes()
    assert catalog_rows(data) == {victim.name: sha}


def test_an_abort_the_store_refuses_once_is_tried_again_by_the_next_start(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """Found by the attacker, fixed: the early upload's claim was removed before its abort was even
    sent, and the abort's answer was ignored, so a store that failed the one abort kept the parts
    for good. The claim now waits for the abort, and stays for the next start's sweep when it fails."""
    failing = {"abort": True}
    open_uploads: dict[str, str] = {}

    def initiate(store, request, conn):
        open_uploads[request.path.strip("/").split("/", 1)[1]] = "upload-1"
        reply(conn, "200 OK", b"<InitiateMultipartUploadResult><UploadId>upload-1</UploadId>"
                              b"</InitiateMultipartUploadResult>")
        return True

    def list_uploads(store, request, conn):
        uploads = "".join(f"<Upload><Key>{key}</Key><UploadId>{upload}</UploadId></Upload>"
                          for key, upload in open_uploads.items())
        reply(conn, "200 OK", (f"<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>{uploads}"
                               "</ListMultipartUploadsResult>").encode(), {"Content-Type": "application/xml"})
        return True

    store = MultipartStore(fake_store, script={"initiate": initiate, "list_uploads": list_uploads})
    original = store.behave

    def behave(fake, request, conn):
        if request.method == "DELETE" and "uploadId" in request.target:
            store.aborts.append(request.target)
            if failing["abort"]:
                reply(conn, "500 Internal Server Error", b"<Error><Code>InternalError</Code></Error>")
                return True
            open_uploads.clear()
            reply(conn, "204 No Content")
            return True
        return original(fake, request, conn)

    store.store.behave = behave
    data, token, running, _ = fake_upload(tmp_path, wheelhouse_bin, store)
    junk = tmp_path / "junk-1.0-py3-none-any.whl"
    junk.write_bytes(os.urandom(20 * MiB))
    status, said = FormUpload(running, token, junk, sha256_of(junk)).finish()
    assert status == 400, said
    assert wait_until(lambda: len(store.aborts) == 1), store.aborts
    assert open_uploads  # the store still holds the parts
    assert running.stop() == 0
    failing["abort"] = False
    again = fake_server(data, store)
    try:
        assert wait_until(lambda: not open_uploads, 10), (store.aborts, os.listdir(data / "tmp"))
    finally:
        again.stop()


def test_a_body_without_its_closing_boundary_or_with_bytes_after_it(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """The content's last bytes reach the spool only when the parser is told the body ended
    (after the part upload heard `ended`): refused or taken whole, never half."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "unclosed", "1.0", 20 * MiB)
    sha = sha256_of(wheel)
    for cut in (len(f"--{RawForm.boundary}--\r\n"), len(f"\r\n--{RawForm.boundary}--\r\n")):
        sending = RawForm(running, token, twine_parts(wheel, ("sha256_digest", sha)), edit=lambda b: b[:-cut])
        status, said = sending.finish()
        assert status == 400, said
        assert settled(data, radosgw, bucket_server.prefix, 40)
        assert bucket_keys(radosgw, bucket_server.prefix) == {}
    sending = RawForm(running, token, twine_parts(wheel, ("sha256_digest", sha)),
                      edit=lambda b: b + b"epilogue that no client sends")
    status, said = sending.finish()
    assert status in (201, 400), said
    assert settled(data, radosgw, bucket_server.prefix)
    rows = catalog_rows(data)
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, v) for v in rows.values()}
    if rows:
        assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha), tmp_path) == wheel.read_bytes()


import subprocess  # noqa: E402

from test_uploads import curl  # noqa: E402


def test_a_token_revoked_while_its_large_upload_arrives_leaves_no_object(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """The early upload is completed once the wheel is valid; the commit then finds the token
    revoked: the completed object must go again."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "revoked", "1.0", 26 * MiB)
    key = blob_key(bucket_server.prefix, sha256_of(wheel))
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(20 * MiB)
    remember(radosgw)
    assert wait_parts(key, 2) == 2
    revoked = subprocess.run([str(wheelhouse_bin), "token", "revoke", "--data", str(data), "ci"],
                             capture_output=True, text=True, timeout=30)
    assert revoked.returncode == 0, revoked.stderr
    status, said = sending.finish()
    assert status in (401, 403), said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}


def test_a_delete_while_the_same_file_is_uploaded_again_keeps_row_and_object_together(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """Found by the attacker, fixed: an admin deletes a file while CI uploads the very same file
    again (twine, sha256 first). The delete's release aborted every upload in progress of the key,
    the re-upload's own included, which then failed with a 503 blaming the store. abort_uploads now
    spares the uploads its client is running; row and object stay together and the re-upload lands."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    admin = make_token(wheelhouse_bin, data, "admin", "--scope", "admin")
    running = bucket_server(data)
    wheel = big_wheel(tmp_path, "redo", "1.0", 30 * MiB)
    sha = sha256_of(wheel)
    key = blob_key(bucket_server.prefix, sha)
    assert FormUpload(running, token, wheel, sha).finish()[0] == 201
    sending = FormUpload(running, token, wheel, sha)
    sending.send(20 * MiB)
    remember(radosgw)
    assert wait_parts(key, 2) == 2
    status, said = curl("-X", "DELETE", "-u", f"__token__:{admin}", f"{running.url}api/v1/files/{wheel.name}")
    assert status == 200, said
    status, said = sending.finish()
    assert settled(data, radosgw, bucket_server.prefix)
    rows = catalog_rows(data)
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, v) for v in rows.values()}
    if rows:
        assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()
    assert status == 201, said


def test_a_slowloris_past_16_mib_gets_408_and_leaves_nothing(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server, "--read-timeout", "2", "--min-body-rate", "2000000")
    wheel = big_wheel(tmp_path, "slow", "1.0", 26 * MiB)
    key = blob_key(bucket_server.prefix, sha256_of(wheel))
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(17 * MiB)
    remember(radosgw)
    wait_parts(key, 2, 5)
    try:
        for _ in range(30):
            sending.send(1000)
            time.sleep(0.5)
    except OSError:
        pass
    answer_bytes = b""
    try:
        while chunk := sending.socket.recv(65536):
            answer_bytes += chunk
    except OSError:
        pass
    sending.close()
    assert answer_bytes.startswith(b"HTTP/1.1 408"), answer_bytes[:200]
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 201, said


def test_two_different_files_of_one_name_at_once_one_lands_the_other_leaves_nothing(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    (tmp_path / "b").mkdir()
    first, second = big_wheel(tmp_path, "clash", "1.0", 24 * MiB), big_wheel(tmp_path / "b", "clash", "1.0", 24 * MiB)
    sendings = [FormUpload(running, token, wheel, sha256_of(wheel)) for wheel in (first, second)]
    for sending in sendings:
        sending.send(22 * MiB)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda sending: sending.finish(), sendings))
    assert sorted(status for status, _ in answers) in ([201, 400], [201, 409]), answers
    assert settled(data, radosgw, bucket_server.prefix)
    rows = catalog_rows(data)
    assert len(rows) == 1
    landed = first if rows[first.name] == sha256_of(first) else second
    assert list(bucket_keys(radosgw, bucket_server.prefix)) == [blob_key(bucket_server.prefix, sha256_of(landed))]
    assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256_of(landed)), tmp_path) == landed.read_bytes()


def test_a_client_that_hangs_up_right_after_its_last_byte_gets_row_and_object_or_neither(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = big_wheel(tmp_path, "gone", "1.0", 26 * MiB)
    sending = FormUpload(running, token, wheel, sha256_of(wheel))
    sending.send(len(sending.content))
    sending.socket.sendall(sending.tail)
    sending.close()
    assert settled(data, radosgw, bucket_server.prefix)
    time.sleep(2)
    rows = catalog_rows(data)
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, v) for v in rows.values()}
    assert FormUpload(running, token, wheel, sha256_of(wheel)).finish()[0] in (200, 201)
    assert settled(data, radosgw, bucket_server.prefix)
    assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256_of(wheel)), tmp_path) == wheel.read_bytes()


def test_a_completion_the_store_makes_but_never_answers_leaves_no_object(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """The store completes the upload (the object exists) but its answer never comes (s3-timeout
    3 s): the client hears 503, and the object, which no row names, is taken back out."""
    def complete(store, request, conn):
        store.store.objects[request.path] = b"".join(store.parts[n] for n in sorted(store.parts))
        time.sleep(6)
        return True

    store = MultipartStore(fake_store, script={"complete": complete})
    data, token, running, wheel = fake_upload(tmp_path, wheelhouse_bin, store)
    status, said = FormUpload(running, token, wheel, sha256_of(wheel)).finish()
    assert status == 503, said
    assert [len(store.parts[n]) for n in sorted(store.parts)][:-1] == [8 * MiB] * (len(store.parts) - 1)
    gone = lambda: not any(sha256_of(wheel) in path for path in store.store.objects)  # noqa: E731
    # Taken back out now, or (the store resting after the timeout) at the next start, from the
    # claim left for it.
    if not wait_until(gone, 10):
        claims = [name for name in os.listdir(data / "tmp") if name.startswith("claim-")]
        assert claims, ("an object no row names, and no claim left to sweep it", os.listdir(data / "tmp"))
        assert running.stop() == 0
        running = fake_server(data, store)
        assert wait_until(gone, 10), list(store.store.objects)
    assert wait_until(lambda: os.listdir(data / "tmp") == [])
    assert catalog_rows(data) == {}
    assert running.stop() == 0


from test_hostile_s3_move import wheel_of_exactly  # noqa: E402


def checking_parts(store, request, conn) -> bool:
    """UploadPart as S3 and radosgw answer it: a body that does not hash to its signed sha256 is
    refused (XAmzContentSHA256Mismatch), and stored otherwise."""
    number = int(urllib.parse.parse_qs(urllib.parse.urlsplit(request.target).query)["partNumber"][0])
    if request.headers["x-amz-content-sha256"] != hashlib.sha256(request.body).hexdigest():
        reply(conn, "400 Bad Request", b"<Error><Code>XAmzContentSHA256Mismatch</Code></Error>")
        return True
    with store.lock:
        store.parts[number] = request.body
    reply(conn, "200 OK", headers={"ETag": f'"etag-{number}"'})
    return True


@pytest.mark.parametrize("way", ["form", "raw"])
def test_a_spool_changed_on_disk_after_it_arrived_never_reaches_the_store(tmp_path, wheelhouse_bin, fake_store, way):  # noqa: F811
    """Each part is signed with the sha256 of its bytes as they arrived, never as they are read
    back: a part changed in the spool since (here while the store creates the upload) is refused
    by a store that checks the signature, and nothing is stored. twine's form goes while it
    arrives (a byte of part 1 changes); curl -T goes once whole (the zip comment's last byte)."""
    wheel = wheel_of_exactly(tmp_path / "farm", "changed", 20 << 20)
    arrived = wheel.read_bytes()
    data = tmp_path / "data"
    changed_at = (1 << 20) if way == "form" else len(arrived) - 1

    def initiate(store, request, conn):
        spool = max((entry for entry in (data / "tmp").iterdir() if entry.is_file()), key=lambda f: f.stat().st_size)
        with open(spool, "r+b") as file:
            file.seek(changed_at)
            file.write(bytes([arrived[changed_at] ^ 1]))
        reply(conn, "200 OK", b"<InitiateMultipartUploadResult><UploadId>upload-1</UploadId>"
                              b"</InitiateMultipartUploadResult>")
        return True

    store = MultipartStore(fake_store, script={"initiate": initiate, "part": checking_parts})
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = fake_server(data, store)
    if way == "form":  # the changed part is sent before the body ends and the wheel's checks refuse it
        sending = FormUpload(running, token, wheel, sha256_of(wheel))
        sending.send(18 << 20)
        assert wait_until(lambda: len(store.part_requests) >= 2)
        status, said = sending.finish()
    else:
        status, said = curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")
    assert status != 201, said
    assert store.part_requests, "no part was sent"
    for query, request in store.part_requests:
        number = int(query["partNumber"][0])
        piece = arrived[(number - 1) * (8 << 20):number * (8 << 20)]
        assert request.headers["x-amz-content-sha256"] == hashlib.sha256(piece).hexdigest(), number
    assert store.completions == []
    assert store.store.objects == {}
    assert catalog_rows(data) == {}
    assert wait_until(lambda: os.listdir(data / "tmp") == []), os.listdir(data / "tmp")
