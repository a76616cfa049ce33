"""Hostile tests of 17ba0b0: each multipart UploadPart is signed with the sha256 the spool took of
its bytes as they arrived (app/upload_sinks.cpp spool_target::hash_parts/close_part/ended), not
read back and hashed (s3/part_upload.cpp, object_client::try_put_file); and a form's content goes
to the bucket while it arrives only when the token may upload the file its part names
(app/route_access.cpp may_store_early).

Most run against a scripted store (PartStore below) that keeps every upload apart by UploadId,
refuses a part or a PUT whose body does not hash to its signed x-amz-content-sha256 (as S3 and
radosgw do), and records every request, so each test checks byte for byte: the status, the parts
(number, size, signed digest, bytes), the object assembled, the catalog row, that no upload stays
in progress and that DATA/tmp/ ends empty. One runs against the module's real radosgw.

The attacker found one bug, fixed since: a content part named as a .metadata file or a release's
variants.json (served names no upload takes) began an upload in the bucket before its refusal
(test_a_name_of_a_file_no_upload_can_be_begins_no_upload)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import itertools
import math
import os
import pathlib
import re
import sqlite3
import subprocess
import threading
import time
import urllib.parse

import pytest

from conftest import ingest
from test_hostile_s3 import environment, fake_store, reply  # noqa: F401  (fake_store is a fixture)
from test_hostile_s3_arrival import RawForm, big_wheel, settled, sha256_of, twine_parts
from test_hostile_s3_move import MultipartStore, fake_server, wait_until, wheel_of_exactly
from test_s3_check import radosgw, s3cmd  # noqa: F401  (the module's radosgw fixture)
from test_s3_store import (FormUpload, blob_key, bucket_index, bucket_keys, bucket_server,  # noqa: F401
                           catalog_rows, in_progress_uploads, object_bytes)
from test_uploads import curl, make_token

MiB = 1 << 20
PREFIX = "mp/"  # fake_server's --s3-prefix


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key_path(sha256: str) -> str:
    return f"/wheels/{blob_key(PREFIX, sha256)}"


# ---- a store that keeps uploads apart and checks every signature -----------------------------


class PartStore:
    """A multipart store (on test_hostile_s3_move.MultipartStore) that gives each upload its own
    UploadId and keeps its parts apart, refuses any part or PUT whose body does not hash to its
    signed x-amz-content-sha256 (XAmzContentSHA256Mismatch, as S3 and radosgw do), assembles an
    object from the parts its completion names, and records it all."""

    def __init__(self, make):
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.uploads: dict[str, str] = {}           # UploadId -> key path
        self.declared: dict[str, str] = {}          # UploadId -> x-amz-meta-sha256
        self.parts: dict[str, dict[int, bytes]] = {}  # UploadId -> number -> body
        self.completed: dict[str, str] = {}         # UploadId -> key path
        self.refused: list[tuple] = []              # (what, signed, actual)
        self.puts: list[tuple[str, str]] = []       # (path, signed) of plain PUTs taken
        self.multipart = MultipartStore(make, script={"initiate": self._initiate, "part": self._part,
                                                      "complete": self._complete})
        passing = self.multipart.store.behave
        self.multipart.store.behave = lambda store, request, conn: self._plain_put(request, conn) or passing(
            store, request, conn)

    @property
    def endpoint(self) -> str:
        return self.multipart.endpoint

    @property
    def objects(self) -> dict[str, bytes]:
        return self.multipart.store.objects

    @property
    def initiations(self) -> list:
        return self.multipart.initiations

    @property
    def part_requests(self) -> list:
        return self.multipart.part_requests

    @property
    def aborts(self) -> list[str]:
        return self.multipart.aborts

    def in_progress(self) -> set[str]:
        with self.lock:
            return set(self.uploads) - set(self.completed) - set(self.aborts)

    def _plain_put(self, request, conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.target).query, keep_blank_values=True)
        if request.method != "PUT" or "partNumber" in query or "uploadId" in query:
            return False
        signed = request.headers.get("x-amz-content-sha256", "")
        if re.fullmatch(r"[0-9a-f]{64}", signed) and signed != sha(request.body):
            with self.lock:
                self.refused.append(("put " + request.path, signed, sha(request.body)))
            reply(conn, "400 Bad Request", b"<Error><Code>XAmzContentSHA256Mismatch</Code></Error>")
            return True
        with self.lock:
            self.puts.append((request.path, signed))
        return False  # the FakeStore keeps it

    def _initiate(self, multipart, request, conn) -> bool:
        with self.lock:
            upload = f"upload-{next(self.ids)}"
            self.uploads[upload] = request.path
            self.declared[upload] = request.headers.get("x-amz-meta-sha256", "")
            self.parts[upload] = {}
        reply(conn, "200 OK", (f"<InitiateMultipartUploadResult><Bucket>wheels</Bucket><Key>k</Key><UploadId>"
                               f"{upload}</UploadId></InitiateMultipartUploadResult>").encode())
        return True

    def _part(self, multipart, request, conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.target).query)
        upload, number = query["uploadId"][0], int(query["partNumber"][0])
        signed = request.headers.get("x-amz-content-sha256", "")
        if signed != sha(request.body):
            with self.lock:
                self.refused.append((f"part {number} of {upload}", signed, sha(request.body)))
            reply(conn, "400 Bad Request", b"<Error><Code>XAmzContentSHA256Mismatch</Code></Error>")
            return True
        with self.lock:
            self.parts.setdefault(upload, {})[number] = request.body
        reply(conn, "200 OK", headers={"ETag": f'"{upload}-{number}"'})
        return True

    def _complete(self, multipart, request, conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.target).query)
        upload = query["uploadId"][0]
        numbers = [int(n) for n in re.findall(r"<PartNumber>(\d+)</PartNumber>", request.body.decode())]
        with self.lock:
            held = self.parts.get(upload, {})
            if not numbers or any(n not in held for n in numbers):
                reply(conn, "400 Bad Request", b"<Error><Code>InvalidPart</Code></Error>")
                return True
            self.objects[request.path] = b"".join(held[n] for n in numbers)
            self.completed[upload] = request.path
        reply(conn, "200 OK", b"<CompleteMultipartUploadResult><ETag>\"x-1\"</ETag></CompleteMultipartUploadResult>")
        return True


@pytest.fixture
def scripted(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """start(*serve_args, tokens=...) -> (data, {token name: secret}, server, PartStore); every
    server started is stopped at the end, and must exit 0."""
    started = []

    def start(*extra: str, tokens: dict[str, tuple] | None = None, data: pathlib.Path | None = None):
        data = data or tmp_path / "data"
        data.mkdir(exist_ok=True)
        made = {name: make_token(wheelhouse_bin, data, name, *arguments)
                for name, arguments in (tokens or {"ci": ()}).items()}
        store = PartStore(fake_store)
        running = fake_server(data, store, *extra)
        started.append(running)
        return data, made, running, store

    yield start
    for running in started:
        assert running.stop() == 0, running.stderr()


def assert_landed(store: PartStore, data: pathlib.Path, content: bytes, filename: str, part_size: int = 8 * MiB):
    """The object is `content` byte for byte: from one completed upload whose parts are `part_size`
    bytes cut from its start (the last one shorter), each signed with its own bytes' sha256 and
    none refused (always past 16 MiB; at 16 MiB when it went while arriving), or else from one PUT
    signed with its sha256; the row names it; no upload stays in progress; DATA/tmp/ is empty."""
    digest = sha(content)
    path = key_path(digest)
    assert len(store.objects.get(path, b"")) == len(content), (len(store.objects.get(path, b"")), len(content))
    assert store.objects[path] == content
    assert store.refused == [], store.refused
    uploads = [upload for upload, key in store.completed.items() if key == path]
    if len(content) > 16 * MiB or uploads:
        assert len(uploads) == 1, store.completed
        held = store.parts[uploads[0]]
        count = math.ceil(len(content) / part_size)
        assert sorted(held) == list(range(1, count + 1)), (sorted(held), count)
        for number, body in held.items():
            assert body == content[(number - 1) * part_size:number * part_size], number
        assert store.declared[uploads[0]] == digest
    else:
        assert (path, digest) in store.puts, store.puts
    assert wait_until(lambda: not store.in_progress(), 10), store.in_progress()
    assert catalog_rows(data).get(filename) == digest
    assert wait_until(lambda: os.listdir(data / "tmp") == [], 10), os.listdir(data / "tmp")


def assert_nothing_stored(store: PartStore, data: pathlib.Path):
    """No object, no completed upload, none left in progress, no row, DATA/tmp/ empty."""
    assert wait_until(lambda: not store.in_progress(), 15), (store.in_progress(), store.aborts)
    assert store.completed == {}, store.completed
    assert [path for path in store.objects if "/blobs/" in path] == [], list(store.objects)
    assert catalog_rows(data) == {}
    assert wait_until(lambda: os.listdir(data / "tmp") == [], 10), os.listdir(data / "tmp")


def wheel_exactly(tmp_path: pathlib.Path, name: str, size: int) -> pathlib.Path:
    return wheel_of_exactly(tmp_path / f"farm-{name}-{size}", name, size)


SIZES = [16 * MiB, 16 * MiB + 1, 24 * MiB, 24 * MiB + 1, 32 * MiB]
SIZE_IDS = ["16MiB", "16MiB+1", "24MiB", "24MiB+1", "32MiB"]


# ---- sizes at and around the part boundaries -------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_a_form_with_its_sha256_first_lands_byte_for_byte_at_every_part_boundary(tmp_path, scripted, size):
    """twine's form (sha256_digest before content) of exactly `size` bytes, which goes to the bucket
    while it arrives: 201, and the parts are the file cut every 8 MiB (a last part of 1 byte at
    16 MiB+1 and 24 MiB+1; none empty at 16, 24, 32 MiB), each signed with its own bytes."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "edge", size)
    status, said = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


@pytest.mark.parametrize("size", [16 * MiB, 16 * MiB + 1, 24 * MiB + 1, 32 * MiB], ids=["16MiB", "16MiB+1",
                                                                                       "24MiB+1", "32MiB"])
def test_a_raw_upload_is_put_once_whole_with_the_digests_it_arrived_with(tmp_path, scripted, size):
    """curl -T of exactly `size` bytes (no declared sha256: put once whole, from 16 MiB beside the
    validation): 16 MiB is one PUT signed with the file's sha256; past it, parts of 8 MiB each
    signed with its own bytes; the object is the file."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "raw", size)
    status, said = curl("-T", str(wheel), "-u", f"__token__:{tokens['ci']}", running.url + "api/v1/files/")
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


def test_the_parts_go_while_the_body_arrives_and_each_is_signed_with_what_arrived(tmp_path, scripted):
    """A form of 30 MiB, sha256 first, sent up to 18 MiB: the store has begun the upload and holds
    parts 1 and 2 (each signed with exactly the 8 MiB that arrived) before the rest is sent; then
    201 and the object is the file."""
    data, tokens, running, store = scripted()
    wheel = big_wheel(tmp_path, "arriving", "1.0", 30 * MiB)
    content = wheel.read_bytes()
    sending = FormUpload(running, tokens["ci"], wheel, sha(content))
    sending.send(18 * MiB)
    assert wait_until(lambda: len(store.part_requests) >= 2, 15), store.part_requests
    early = {int(query["partNumber"][0]): request.headers["x-amz-content-sha256"]
             for query, request in list(store.part_requests)}
    assert early.get(1) == sha(content[:8 * MiB]) and early.get(2) == sha(content[8 * MiB:16 * MiB]), early
    status, said = sending.finish()
    assert status == 201, said
    assert_landed(store, data, content, wheel.name)


def test_a_chunked_form_whose_last_part_is_one_byte_lands(tmp_path, scripted):
    """The form (sha256 first) sent chunked, in 1 MiB chunks, of a file of 24 MiB + 1: 201 and four
    parts, the last of one byte, each signed with its own bytes."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "chunked", 24 * MiB + 1)
    status, said = RawForm(running, tokens["ci"], twine_parts(wheel, ("sha256_digest", sha256_of(wheel))),
                           chunked=True).finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


def test_fields_after_the_content_part_do_not_reach_the_file(tmp_path, scripted):
    """The content part (sha256 first) is followed by name, version, a 2 MiB description and
    md5_digest: 201, and the object is the file alone, cut in parts of 8 MiB."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "trailing", 20 * MiB + 3)
    content = wheel.read_bytes()
    parts = twine_parts(wheel, ("sha256_digest", sha(content)))
    parts += [("name", None, b"trailing"), ("version", None, b"1.0"), ("description", None, b"d" * (2 * MiB)),
              ("md5_digest", None, hashlib.md5(content).hexdigest().encode())]
    status, said = RawForm(running, tokens["ci"], parts).finish()
    assert status == 201, said
    assert_landed(store, data, content, wheel.name)


def test_a_form_whose_sha256_comes_after_the_content_is_put_once_whole_with_its_digests(tmp_path, scripted):
    """sha256_digest after the content (nothing to begin the upload by while it arrives): 201 and
    the file is put once whole, its parts signed with the digests taken as it arrived."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "after", 24 * MiB + 1)
    parts = twine_parts(wheel)
    parts.append(("sha256_digest", None, sha256_of(wheel).encode()))
    status, said = RawForm(running, tokens["ci"], parts).finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


# ---- forms that must store nothing -----------------------------------------------------------


def test_a_form_with_two_content_parts_stores_nothing(tmp_path, scripted):
    """Two content parts, sha256 first, the first of 20 MiB (its upload begins while it arrives):
    400, and the upload begun is aborted; no object, no row, nothing in tmp/."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "twice", 20 * MiB)
    parts = twine_parts(wheel, ("sha256_digest", sha256_of(wheel)))
    parts.append(("content", wheel.name, wheel.read_bytes()))
    status, said = RawForm(running, tokens["ci"], parts).finish()
    assert status == 400 and "two 'content' parts" in said, said
    assert_nothing_stored(store, data)


def test_a_declared_sha256_that_lies_stores_nothing(tmp_path, scripted):
    """A form whose sha256_digest (first) is of other bytes: the parts may go while it arrives,
    each signed with the bytes that arrived, but the upload is never completed: 400 naming
    sha256_digest, the upload aborted, no object, no row."""
    data, tokens, running, store = scripted()
    wheel = wheel_exactly(tmp_path, "liar", 26 * MiB)
    lie = sha(os.urandom(64))
    status, said = FormUpload(running, tokens["ci"], wheel, lie).finish()
    assert status == 400 and "sha256_digest" in said, said
    assert store.refused == [], store.refused
    assert all(store.uploads[upload] == key_path(lie) for upload in store.uploads), store.uploads
    assert_nothing_stored(store, data)


@pytest.mark.parametrize("stop_at", [16 * MiB, 24 * MiB, 24 * MiB + 1], ids=["16MiB", "24MiB", "24MiB+1"])
def test_a_client_that_stops_at_a_part_boundary_leaves_no_upload(tmp_path, scripted, stop_at):
    """The form (sha256 first) of a 30 MiB wheel, sent to `stop_at` bytes of content and hung up:
    the parts already sent are thrown away (the upload aborted), no completion, no row, tmp/
    empty; then the same file, whole, lands."""
    data, tokens, running, store = scripted()
    wheel = big_wheel(tmp_path, "stops", "1.0", 30 * MiB)
    sending = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel))
    sending.send(stop_at)
    assert wait_until(lambda: len(store.part_requests) >= stop_at // (8 * MiB), 15), store.part_requests
    sending.close()
    assert_nothing_stored(store, data)
    status, said = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


def test_an_unlimited_token_naming_another_projects_file_stores_nothing(tmp_path, scripted):
    """An unlimited token sends a wheel of project 'mine' under the name other-1.0-py3-none-any.whl
    (sha256 first, 20 MiB): refused (the METADATA names another project), and any upload begun
    while it arrived is aborted; nothing stored."""
    data, tokens, running, store = scripted()
    wheel = big_wheel(tmp_path, "mine", "1.0", 20 * MiB)
    status, said = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel), name="other-1.0-py3-none-any.whl").finish()
    assert status in (400, 403), said
    assert_nothing_stored(store, data)


# ---- the gate on the content part's filename ---------------------------------------------------


LONG_NAME = "mine-1.0-" + "x" * 4000 + "-py3-none-any.whl"


@pytest.mark.parametrize("token, name, refused", [
    ("other", None, 403),                              # a project-limited token, another project
    ("mine", "other-1.0-py3-none-any.whl", 403),       # the right token, another project's name
    ("mine", "mine-1.0.whl", 403),                     # a name that parses as nothing, limited token
    ("ci", "mine-1.0.whl", 400),                       # a name that parses as nothing, any token
    ("ci", "mine-1.0-py3-none-any.whl\x01", 400),      # a control byte
    ("ci", "../mine-1.0-py3-none-any.whl", 400),       # a path
    ("ci", LONG_NAME, 400),                            # 4 KiB of name
], ids=["other-project-token", "other-project-name", "nothing-limited", "nothing", "control-byte", "path", "long"])
def test_no_upload_begins_for_a_file_the_token_may_not_upload_or_no_file(tmp_path, scripted, token, name, refused):
    """A large form (sha256 first, 26 MiB, sent up to 20 MiB first) whose content part names a file
    the token may not upload, or no file at all: the store hears nothing of it (no upload begun, no
    part), the answer refuses it, nothing is stored."""
    data, tokens, running, store = scripted(tokens={"ci": (), "mine": ("--project", "mine"),
                                                    "other": ("--project", "other")})
    wheel = big_wheel(tmp_path, "mine", "1.0", 26 * MiB)
    sending = FormUpload(running, tokens[token], wheel, sha256_of(wheel), name=name)
    sending.send(20 * MiB)
    time.sleep(1.5)
    assert store.initiations == [] and store.part_requests == [], name
    status, said = sending.finish()
    assert status == refused, said
    assert store.initiations == [] and store.part_requests == [], name
    assert_nothing_stored(store, data)


def test_a_name_that_is_not_utf8_begins_no_upload(tmp_path, scripted):
    """The content part's filename holds bytes that are not UTF-8 (0xff 0xfe): no upload begun, 400,
    nothing stored."""
    data, tokens, running, store = scripted()
    wheel = big_wheel(tmp_path, "mine", "1.0", 20 * MiB)
    parts = twine_parts(wheel, ("sha256_digest", sha256_of(wheel)), name="mine-1.0-py3-none-any.whl")
    edit = lambda body: body.replace(b'filename="mine-1.0-py3-none-any.whl"',  # noqa: E731
                                     b'filename="mine-1.0\xff\xfe-py3-none-any.whl"', 1)
    status, said = RawForm(running, tokens["ci"], parts, edit=edit).finish()
    assert status == 400, said
    assert store.initiations == [] and store.part_requests == []
    assert_nothing_stored(store, data)


def test_a_token_limited_to_its_project_does_send_its_own_file_while_it_arrives(tmp_path, scripted):
    """The control of the gate: a token limited to 'mine' (given as 'Mine' to check normalization)
    uploading mine-1.0 (sha256 first, 26 MiB): the upload begins and parts go before the body ends;
    201 and the object is the file."""
    data, tokens, running, store = scripted(tokens={"mine": ("--project", "Mine")})
    wheel = big_wheel(tmp_path, "mine", "1.0", 26 * MiB)
    sending = FormUpload(running, tokens["mine"], wheel, sha256_of(wheel))
    sending.send(20 * MiB)
    assert wait_until(lambda: len(store.part_requests) >= 2, 15), store.part_requests
    status, said = sending.finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


def label_limited(data: pathlib.Path, name: str, builds: str) -> None:
    """Limits token `name` to builds as a trusted publisher's minted token is (the tokens row's
    `builds`), before the server reads it."""
    with sqlite3.connect(data / "catalog.db") as db:
        db.execute("UPDATE tokens SET builds = ? WHERE name = ?", (builds, name))


def test_a_label_limited_token_sends_only_the_builds_it_may_publish(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """A token that may publish only builds of 'mine' labelled cu130*: a 24 MiB wheel
    mine-1.0+cu128 (sha256 first) begins no upload and is refused 403; mine-1.0+cu130 goes while it
    arrives and lands byte for byte."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "runner")
    label_limited(data, "runner", '[{"project": "mine", "labels": "cu130*"}]')
    store = PartStore(fake_store)
    running = fake_server(data, store)
    try:
        wrong = big_wheel(tmp_path, "mine", "1.0+cu128", 24 * MiB)
        sending = FormUpload(running, token, wrong, sha256_of(wrong))
        sending.send(20 * MiB)
        time.sleep(1.5)
        assert store.initiations == [] and store.part_requests == []
        status, said = sending.finish()
        assert status == 403, said
        assert store.initiations == []
        assert_nothing_stored(store, data)
        right = big_wheel(tmp_path, "mine", "1.0+cu130", 24 * MiB)
        sending = FormUpload(running, token, right, sha256_of(right))
        sending.send(20 * MiB)
        assert wait_until(lambda: len(store.part_requests) >= 2, 15), store.part_requests
        status, said = sending.finish()
        assert status == 201, said
        assert_landed(store, data, right.read_bytes(), right.name)
    finally:
        assert running.stop() == 0


@pytest.mark.parametrize("name", ["mine-1.0-py3-none-any.whl.metadata", "mine-1.0-variants.json"],
                         ids=["metadata", "variants-json"])
def test_a_name_of_a_file_no_upload_can_be_begins_no_upload(tmp_path, scripted, name):
    """The content part names a .metadata file or a release's variants.json (names the index serves,
    but no upload can be): the store must hear nothing of the body (no upload begun); the answer
    refuses it (400) and nothing is stored."""
    data, tokens, running, store = scripted()
    wheel = big_wheel(tmp_path, "mine", "1.0", 26 * MiB)
    sending = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel), name=name)
    sending.send(20 * MiB)
    time.sleep(1.5)
    began = list(store.initiations)
    status, said = sending.finish()
    assert status == 400, said
    assert_nothing_stored(store, data)
    assert began == [] and store.initiations == [], [request.path for request in store.initiations]


# ---- the part size as --max-upload-size sets it ----------------------------------------------


@pytest.mark.parametrize("limit, part_size", [
    (83886080000, 8 * MiB),        # 78.125 GiB: 10000 parts of 8 MiB
    (83886080001, 9 * MiB),        # one byte more: parts of 9 MiB
    (100 << 30, 11 * MiB),         # 100 GiB
    (10000 * (5 << 30) + 1, 8 * MiB),  # past S3's 10000 parts of 5 GiB: cut by the file's own size
], ids=["78.125GiB", "78.125GiB+1", "100GiB", "past-S3"])
def test_large_upload_limits_make_larger_parts_and_both_paths_cut_them_alike(tmp_path, scripted, limit, part_size):
    """With --max-upload-size `limit`, the part size is the least whole MiB (at least 8) that fits
    the limit in 10000 parts: a form (sha256 first, put while it arrives) and a curl -T (put once
    whole with its digests) of ~30 MiB both land in parts of `part_size`, each signed with its
    own bytes."""
    data, tokens, running, store = scripted("--max-upload-size", str(limit))
    form = wheel_exactly(tmp_path, "limitform", 30 * MiB + 7)
    status, said = FormUpload(running, tokens["ci"], form, sha256_of(form)).finish()
    assert status == 201, said
    assert_landed(store, data, form.read_bytes(), form.name, part_size)
    raw = wheel_exactly(tmp_path, "limitraw", 30 * MiB + 7)
    status, said = curl("-T", str(raw), "-u", f"__token__:{tokens['ci']}", running.url + "api/v1/files/")
    assert status == 201, said
    assert_landed(store, data, raw.read_bytes(), raw.name, part_size)


def test_a_small_upload_limit_still_cuts_parts_of_8_mib(tmp_path, scripted):
    """--max-upload-size 17 MiB, a form (sha256 first) of a 16 MiB + 1 wheel: parts 8, 8 and 1
    byte, each signed with its own bytes; 201."""
    data, tokens, running, store = scripted("--max-upload-size", str(17 * MiB))
    wheel = wheel_exactly(tmp_path, "small", 16 * MiB + 1)
    status, said = FormUpload(running, tokens["ci"], wheel, sha256_of(wheel)).finish()
    assert status == 201, said
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


# ---- many at once ------------------------------------------------------------------------------


def test_many_large_uploads_at_once_each_land_with_their_own_parts(tmp_path, scripted):
    """Six forms (sha256 first) of 17-22 MiB at once, more than the two the server sends while they
    arrive, and two curl -T beside them: all 201, each object its own file byte for byte, every
    part signed with its own bytes, none left in progress."""
    data, tokens, running, store = scripted()
    forms = [big_wheel(tmp_path, f"many{n}", "1.0", (17 + n) * MiB) for n in range(6)]
    raws = [big_wheel(tmp_path, f"rawmany{n}", "1.0", (17 + n) * MiB) for n in range(2)]

    def form(wheel):
        return FormUpload(running, tokens["ci"], wheel, sha256_of(wheel)).finish()

    def raw(wheel):
        return curl("-T", str(wheel), "-u", f"__token__:{tokens['ci']}", running.url + "api/v1/files/")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(form, forms)) + list(pool.map(raw, raws))
    assert [status for status, _ in answers] == [201] * 8, answers
    for wheel in forms + raws:
        assert_landed(store, data, wheel.read_bytes(), wheel.name)


# ---- the paths that read and hash themselves ---------------------------------------------------


def test_wheelhouse_ingest_into_the_bucket_reads_and_signs_each_part(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """`wheelhouse ingest` of a 24 MiB + 1 wheel into a data folder with the bucket (no spool
    digests: it reads the file): exit 0, the object is the file, parts of 8 MiB each signed with
    its own bytes."""
    data = tmp_path / "data"
    data.mkdir()
    store = PartStore(fake_store)
    assert fake_server(data, store).stop() == 0  # the folder now names its bucket
    wheel = wheel_exactly(tmp_path, "ingested", 24 * MiB + 1)
    done = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), "--s3-endpoint", store.endpoint,
                           "--s3-bucket", "wheels", "--s3-prefix", PREFIX, "--s3-timeout", "10", str(wheel)],
                          capture_output=True, text=True, timeout=300, env=environment())
    assert done.returncode == 0, done.stdout + done.stderr
    assert_landed(store, data, wheel.read_bytes(), wheel.name)


def push_to(wheelhouse_bin, store: PartStore, data: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(wheelhouse_bin), "s3-push", "--data", str(data), "--s3-endpoint", store.endpoint,
                           "--s3-bucket", "wheels", "--s3-prefix", PREFIX, "--s3-timeout", "10"],
                          capture_output=True, text=True, timeout=300, env=environment())


def test_s3_push_reads_and_signs_each_part_and_refuses_a_blob_changed_on_disk(tmp_path, wheelhouse_bin, fake_store):  # noqa: F811
    """s3-push of two 20 MiB + 1 blobs under blobs/, one of them with a byte changed on disk since it
    was stored: the good one lands byte for byte in parts of 8 MiB each signed with its own bytes;
    the changed one (its parts signed as read, its whole sha256 checked before completion) is
    refused, its upload aborted, no object under its name."""
    farm = tmp_path / "farm"
    good = wheel_of_exactly(farm / "good", "pushgood", 20 * MiB + 1)
    bad = wheel_of_exactly(farm / "bad", "pushbad", 20 * MiB + 1)
    data = tmp_path / "data"
    done = ingest(wheelhouse_bin, data, good, bad)
    assert done.returncode == 0, done.stderr
    bad_blob = next(path for path in (data / "blobs").rglob(sha256_of(bad)))
    changed = bytearray(bad_blob.read_bytes())
    changed[9 * MiB] ^= 1
    bad_blob.chmod(0o644)
    bad_blob.write_bytes(bytes(changed))
    store = PartStore(fake_store)
    pushed = push_to(wheelhouse_bin, store, data)
    assert "1 refused" in pushed.stdout + pushed.stderr, pushed.stdout + pushed.stderr
    content = good.read_bytes()
    assert store.objects.get(key_path(sha(content))) == content
    assert key_path(sha256_of(bad)) not in store.objects
    [good_upload] = [upload for upload, key in store.completed.items() if key == key_path(sha(content))]
    held = store.parts[good_upload]
    assert [len(held[n]) for n in sorted(held)] == [8 * MiB, 8 * MiB, 4 * MiB + 1]
    assert store.refused == [], store.refused
    assert not store.in_progress(), store.in_progress()


# ---- against the real store --------------------------------------------------------------------


def multipart_count(env, key: str) -> int:
    info = s3cmd(env, "info", f"s3://wheels/{key}")
    assert info.returncode == 0, info.stderr
    found = re.search(r"MD5 sum:\s+\S+-(\d+)\b", info.stdout)
    return int(found.group(1)) if found else 1


def test_radosgw_takes_parts_signed_as_they_arrived_at_every_boundary(tmp_path, wheelhouse_bin, radosgw,
                                                                       bucket_server):  # noqa: F811
    """Against radosgw, which checks every part's signed sha256: forms (sha256 first) of 16 MiB + 1
    and 24 MiB, a chunked form of 24 MiB + 1 and a curl -T of 16 MiB + 1 all answer 201 and read
    back byte for byte, in 3, 3, 4 and 3 parts; no upload stays in progress, tmp/ is empty."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    sent = []
    wheel = wheel_exactly(tmp_path, "rgwa", 16 * MiB + 1)
    assert FormUpload(running, token, wheel, sha256_of(wheel)).finish()[0] == 201
    sent.append((wheel, 3))
    wheel = wheel_exactly(tmp_path, "rgwb", 24 * MiB)
    assert FormUpload(running, token, wheel, sha256_of(wheel)).finish()[0] == 201
    sent.append((wheel, 3))
    wheel = wheel_exactly(tmp_path, "rgwc", 24 * MiB + 1)
    status, said = RawForm(running, token, twine_parts(wheel, ("sha256_digest", sha256_of(wheel))),
                           chunked=True).finish()
    assert status == 201, said
    sent.append((wheel, 4))
    wheel = wheel_exactly(tmp_path, "rgwd", 16 * MiB + 1)
    status, said = curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")
    assert status == 201, said
    sent.append((wheel, 3))
    assert settled(data, radosgw, bucket_server.prefix)
    rows = catalog_rows(data)
    for wheel, parts in sent:
        key = blob_key(bucket_server.prefix, sha256_of(wheel))
        assert rows[wheel.name] == sha256_of(wheel)
        assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()
        assert multipart_count(radosgw, key) == parts, wheel.name
    assert set(bucket_keys(radosgw, bucket_server.prefix)) == {blob_key(bucket_server.prefix, v) for v in rows.values()}
