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

from test_s3_check import RADOSGW, radosgw, s3cmd  # noqa: F401  (the module's radosgw fixture)
from test_s3_store import (FormUpload, blob_key, bucket_keys, bucket_server, catalog_rows,  # noqa: F401
                           in_progress_uploads, object_bytes, uploaded_parts)
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
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data)
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
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data)
    junk = tmp_path / "junk-1.0-py3-none-any.whl"
    junk.write_bytes(os.urandom(30 * MiB))
    status, said = FormUpload(running, token, junk, sha256_of(junk)).finish()
    assert status == 400, said
    assert settled(data, radosgw, bucket_server.prefix)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert catalog_rows(data) == {}


def test_a_client_that_stops_halfway_leaves_nothing_in_the_bucket_or_the_folder(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data)
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
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data)
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
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    running = bucket_server(data)
    wheels = [big_wheel(tmp_path, "many", f"1.{n}", 18 * MiB) for n in range(5)]
    with concurrent.futures.ThreadPoolExecutor(len(wheels)) as pool:
        answers = list(pool.map(lambda wheel: FormUpload(running, token, wheel, sha256_of(wheel)).finish(), wheels))
    assert [status for status, _ in answers] == [201] * len(wheels), answers
    for wheel in wheels:
        assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256_of(wheel)), tmp_path) == wheel.read_bytes()
    assert settled(data, radosgw, bucket_server.prefix)
