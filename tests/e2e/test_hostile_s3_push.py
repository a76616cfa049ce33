"""`wheelhouse s3-push` attacked (issue 29): a data folder with things in blobs/ that are not blobs
(symlinks out of the folder, symlink loops, FIFOs, directories, stray names), stores that lie,
refuse, fail or stall mid-run, blobs that vanish while the push runs, many files, and a bucket
that already holds other bytes under a blob's key.

What must hold: only files of the store's layout are read, never through a symlink; nothing in
DATA changes; a refusal of one file is told apart from a store that refuses everything; the
run ends in bounded time with exit 1 and the fix first; the secret is never printed; and a
bucket object that is not the blob is replaced."""

from __future__ import annotations

import hashlib
import os
import re
import pathlib
import shutil
import stat
import subprocess
import time

import pytest

from conftest import ingest
from test_hostile_s3 import SECRET, FakeStore, Run, environment, fake_store, reply  # noqa: F401
from test_s3_check import radosgw, s3cmd  # noqa: F401 - radosgw is a fixture, used by name
from wheelbuilder import build_wheel


# ---------------------------------------------------------------------------------------------
# Helpers.


def push(wheelhouse_bin, endpoint: str, data, *arguments: str, timeout: float = 120, env=None) -> Run:
    command = [str(wheelhouse_bin), "s3-push", "--data", str(data), "--s3-endpoint", endpoint,
               "--s3-bucket", "wheels", *arguments]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, timeout=timeout,
                          env=env if env is not None else environment())
    return Run(done, time.monotonic() - started)


def make_data(wheelhouse_bin, tmp_path: pathlib.Path, name: str = "pushme", versions=("1.0",)) -> pathlib.Path:
    farm = tmp_path / "farm"
    for version in versions:
        build_wheel(farm, name, version)
    data = tmp_path / "data"
    done = ingest(wheelhouse_bin, data, farm)
    assert done.returncode == 0, done.stderr
    return data


def blob_files(data: pathlib.Path) -> list[pathlib.Path]:
    return sorted(path for path in (data / "blobs").rglob("*") if path.is_file() and not path.is_symlink())


LAYOUT = re.compile(r"blobs/sha256/([0-9a-f]{2})/([0-9a-f]{2})/(\1\2[0-9a-f]{60})(\.metadata)?")


def layout_keys(data: pathlib.Path) -> list[str]:
    """The bucket keys of the regular files (not symlinks) of the store's layout."""
    return sorted(key(str(p.relative_to(data))) for p in blob_files(data) if LAYOUT.fullmatch(str(p.relative_to(data))))


def blob_at(data: pathlib.Path, sha: str, metadata: bool = False) -> pathlib.Path:
    path = data / "blobs" / "sha256" / sha[:2] / sha[2:4] / (sha + (".metadata" if metadata else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def tree_state(root: pathlib.Path) -> dict[str, tuple]:
    """Every entry under root: kind, mode, size, mtime and content hash (files), link target."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = pathlib.Path(dirpath) / name
            info = path.lstat()
            entry: tuple = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_mtime_ns)
            if stat.S_ISREG(info.st_mode):
                entry += (info.st_size, hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            state[str(path.relative_to(root))] = entry
    return state


def puts(store: FakeStore) -> list[str]:
    return [request.path for request in store.requests if request.method == "PUT"]


def key(relative: str) -> str:
    return "/wheels/" + relative


# ---------------------------------------------------------------------------------------------
# What is in blobs/ that is not a blob.


@pytest.mark.parametrize("named_as", ["blob", "metadata"])
def test_a_symlink_out_of_the_folder_is_not_followed_nor_uploaded(wheelhouse_bin, fake_store, tmp_path, named_as):
    data = make_data(wheelhouse_bin, tmp_path)
    outside = tmp_path / "outside-secret.txt"
    outside.write_bytes(b"root:x:0:0:root:/root:/bin/bash\nprivate key material\n")
    sha = hashlib.sha256(outside.read_bytes()).hexdigest()
    # Named exactly as the store would name those bytes, so a store that checks the sha256 takes them.
    link = blob_at(data, sha, metadata=named_as == "metadata")
    link.symlink_to(outside)
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    relative = str(link.relative_to(data))
    assert key(relative) not in puts(store), f"{outside} was uploaded through a symlink: {run}"
    assert all(request.body != outside.read_bytes() for request in store.requests), run
    assert run.returncode == 0, run
    assert len(puts(store)) == len(blob_files(data)), run


def test_a_symlink_to_etc_passwd_named_as_metadata_is_not_uploaded(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    sha = hashlib.sha256(b"anything").hexdigest()
    link = blob_at(data, sha, metadata=True)
    link.symlink_to("/etc/passwd")
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert key(str(link.relative_to(data))) not in puts(store), f"/etc/passwd went to the bucket: {run}"
    assert run.returncode == 0, run


def test_a_symlink_loop_named_like_a_blob_does_not_crash_the_push(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    sha = hashlib.sha256(b"loop").hexdigest()
    link = blob_at(data, sha)
    link.symlink_to(link.name)  # points at itself: stat() fails with ELOOP
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    # Not a crash (an uncaught filesystem_error would abort with a signal, or exit with no message).
    assert run.returncode in (0, 1), run
    assert "terminate called" not in run.stderr, run
    # The real blobs still went.
    assert len(puts(store)) == len(blob_files(data)), run


def test_a_dangling_symlink_named_like_a_blob_is_passed_over(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    sha = hashlib.sha256(b"dangling").hexdigest()
    blob_at(data, sha).symlink_to(tmp_path / "no-such-file")
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    assert sorted(puts(store)) == layout_keys(data), run


def test_a_fifo_and_a_directory_named_like_blobs_are_passed_over_without_blocking(wheelhouse_bin, fake_store,
                                                                                  tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    fifo_sha = hashlib.sha256(b"fifo").hexdigest()
    os.mkfifo(blob_at(data, fifo_sha))
    os.mkfifo(blob_at(data, hashlib.sha256(b"fifo-metadata").hexdigest(), metadata=True))
    directory = blob_at(data, hashlib.sha256(b"dir").hexdigest())
    directory.mkdir()
    (directory / "inside").write_bytes(b"x")
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data, timeout=60)
    assert run.returncode == 0, run
    assert run.seconds < 30, run
    assert sorted(puts(store)) == layout_keys(data), run


def test_files_not_of_the_layout_are_ignored(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    real = blob_files(data)
    sha = hashlib.sha256(b"stray").hexdigest()
    strays = [
        blob_at(data, sha).with_name(sha.upper()),                      # upper-case hex
        blob_at(data, sha).with_name(sha + ".tmp"),                     # an editor's backup
        blob_at(data, sha).with_name(sha + ".metadata.metadata"),
        blob_at(data, sha).with_name(sha[:63]),                         # too short
        data / "blobs" / "sha256" / "00" / "00" / sha,                  # in the wrong directory
        data / "blobs" / "sha256" / sha,                                 # not nested
        data / "blobs" / sha,
        data / "blobs" / "sha512" / sha[:2] / sha[2:4] / sha,
        data / "blobs" / "sha256" / sha[:2] / sha[2:4] / "deeper" / sha,
    ]
    for stray in strays:
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_bytes(b"stray")
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    assert sorted(puts(store)) == sorted(key(str(p.relative_to(data))) for p in real), run
    assert run.stdout.startswith(f"copied {len(real)} files ("), run


def test_a_metadata_file_with_no_blob_is_pushed_by_its_computed_sha256(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    orphan = blob_at(data, hashlib.sha256(b"orphan").hexdigest(), metadata=True)
    orphan.write_bytes(b"Metadata-Version: 2.1\nName: orphan\n")
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    sent = [r for r in store.requests if r.method == "PUT" and r.path == key(str(orphan.relative_to(data)))]
    assert len(sent) == 1, run
    assert sent[0].headers["x-amz-content-sha256"] == hashlib.sha256(orphan.read_bytes()).hexdigest()


def test_a_blobs_folder_that_is_a_symlink_to_another_disk_is_pushed(wheelhouse_bin, fake_store, tmp_path):
    # Operators put the blobs on a bigger disk and link DATA/blobs to it: the root of the walk
    # is followed (only what is inside is not).
    data = make_data(wheelhouse_bin, tmp_path)
    elsewhere = tmp_path / "bigdisk-blobs"
    shutil.move(data / "blobs", elsewhere)
    (data / "blobs").symlink_to(elsewhere)
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    assert run.stdout.startswith("copied 2 files ("), run


def test_a_huge_metadata_file_is_hashed_in_bounded_memory(wheelhouse_bin, fake_store, tmp_path):
    # sha256_of reads a .metadata file whole into memory. A corrupt or planted 2 GiB .metadata
    # (sparse here) must not take 2 GiB of RAM, nor abort the process.
    data = make_data(wheelhouse_bin, tmp_path)
    huge = blob_at(data, hashlib.sha256(b"huge").hexdigest(), metadata=True)
    with open(huge, "wb") as out:
        out.truncate(2 * 1024 ** 3)

    def refuse_put(store, request, conn):
        if request.method == "PUT":
            reply(conn, "400 Bad Request", b"<Error><Code>EntityTooLarge</Code></Error>")
            return True
        return False

    store = fake_store(refuse_put, read_bodies=False)
    command = ["prlimit", f"--as={1536 * 1024 ** 2}", "--", str(wheelhouse_bin), "s3-push", "--data", str(data),
               "--s3-endpoint", store.endpoint, "--s3-bucket", "wheels", "--s3-timeout", "10"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, timeout=120, env=environment())
    run = Run(done, time.monotonic() - started)
    assert run.returncode in (0, 1), f"the push died reading a large .metadata into memory: {run}"
    assert "bad_alloc" not in run.stderr and "terminate called" not in run.stderr, run
    assert run.seconds < 60, run


# ---------------------------------------------------------------------------------------------
# --data that is not a data folder.


@pytest.mark.parametrize("what", ["a file", "an empty folder", "a folder with blobs but no catalog", "missing"])
def test_data_that_is_not_a_data_folder_is_refused_before_any_request_and_left_as_found(wheelhouse_bin, fake_store,
                                                                                        tmp_path, what):
    target = tmp_path / "target"
    if what == "a file":
        target.write_bytes(b"not a folder")
    elif what == "an empty folder":
        target.mkdir()
    elif what == "a folder with blobs but no catalog":
        sha = hashlib.sha256(b"x").hexdigest()
        blob_at(target, sha).write_bytes(b"x")
    before = tree_state(tmp_path)
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, target)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-push: no catalog at "), run
    assert "--data (or WHEELHOUSE_DATA) must name a wheelhouse data folder" in run.stderr, run
    assert store.requests == [], run
    assert tree_state(tmp_path) == before


def test_the_push_changes_nothing_in_the_data_folder(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path, versions=("1.0", "2.0"))
    before = tree_state(data)
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    assert run.stdout.startswith("copied 4 files ("), run
    assert tree_state(data) == before, run
    again = push(wheelhouse_bin, store.endpoint, data)
    assert again.stdout.startswith("copied 0 files (0 bytes) to bucket 'wheels'; 4 were there already; 0 refused"), again
    assert tree_state(data) == before


def test_a_push_into_a_data_folder_whose_blobs_are_not_there_creates_nothing(wheelhouse_bin, fake_store, tmp_path):
    # A catalog with no blobs/ folder (a catalog copied on its own): nothing to push, and the
    # push must not make folders in DATA ("it only reads DATA").
    data = make_data(wheelhouse_bin, tmp_path)
    shutil.rmtree(data / "blobs")
    for entry in list(data.iterdir()):
        if entry.is_dir():
            shutil.rmtree(entry)
    before = tree_state(data)
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data)
    assert tree_state(data) == before, f"the push wrote into DATA: {sorted(set(tree_state(data)) - set(before))}"
    assert puts(store) == [], run


# ---------------------------------------------------------------------------------------------
# Stores that lie, refuse, fail or stall.


def test_a_head_refused_with_403_stops_at_once_with_the_credentials_fix(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)

    def forbid(store, request, conn):
        if request.method == "HEAD" and request.path.count("/") > 1:
            reply(conn, "403 Forbidden", b"<Error><Code>AccessDenied</Code></Error>")
            return True
        return False

    store = fake_store(forbid)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-push: check the access key pair"), run
    assert len([r for r in store.requests if r.method == "HEAD" and r.path.count("/") > 1]) == 1, run
    assert puts(store) == [], run
    assert SECRET not in run.stdout + run.stderr


@pytest.mark.parametrize("status", ["500 Internal Server Error", "503 Slow Down"])
def test_a_put_that_fails_on_the_store_side_ends_the_run(wheelhouse_bin, fake_store, tmp_path, status):
    data = make_data(wheelhouse_bin, tmp_path, versions=("1.0", "2.0"))

    def failing(store, request, conn):
        if request.method == "PUT":
            reply(conn, status, b"<Error><Code>InternalError</Code></Error>")
            return True
        return False

    store = fake_store(failing)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-push: the store is failing; try again later"), run
    assert len(puts(store)) == 1, run  # the first failure ends it
    assert "was refused" not in run.stderr, run
    assert SECRET not in run.stdout + run.stderr


@pytest.mark.parametrize("status,code,fix", [
    ("403 Forbidden", "AccessDenied", "check the access key pair"),
    ("404 Not Found", "NoSuchBucket", "create the bucket, or correct s3-bucket"),
])
def test_a_put_refused_for_the_whole_bucket_ends_the_run_with_that_fix_not_fsck(wheelhouse_bin, fake_store, tmp_path,
                                                                               status, code, fix):
    # A key with read but no write rights, or the bucket removed mid-run: every PUT is refused
    # alike. That is not "this local file rotted": it must not send the operator to fsck for
    # each file of the store.
    data = make_data(wheelhouse_bin, tmp_path, versions=("1.0", "2.0", "3.0"))

    def refuse(store, request, conn):
        if request.method == "PUT":
            reply(conn, status, f"<Error><Code>{code}</Code></Error>".encode())
            return True
        return False

    store = fake_store(refuse)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 1, run
    assert "run wheelhouse fsck" not in run.stderr, f"a bucket-wide {code} blamed on the local files: {run}"
    assert run.stderr.startswith("wheelhouse s3-push: " + fix), run
    assert len(puts(store)) == 1, run


@pytest.mark.parametrize("length", ["", "abc", "-1", "99999999999999999999999999", "1, 1"])
def test_a_head_with_no_usable_length_ends_the_run(wheelhouse_bin, fake_store, tmp_path, length):
    data = make_data(wheelhouse_bin, tmp_path)

    def odd(store, request, conn):
        if request.method == "HEAD" and request.path.count("/") > 1:
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n".encode())
            return True
        return False

    store = fake_store(odd)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-push: "), run
    assert puts(store) == [], run


def test_a_head_that_lies_about_the_size_does_not_make_the_push_skip_the_file(wheelhouse_bin, fake_store, tmp_path):
    # The store says every key is there at the local size, and has nothing. A size alone is not
    # believed: only an object put with the file's sha256 (x-amz-meta-sha256) is skipped.
    data = make_data(wheelhouse_bin, tmp_path)
    sizes = {key(str(p.relative_to(data))): p.stat().st_size for p in blob_files(data)}

    def lie(store, request, conn):
        if request.method == "HEAD" and request.path in sizes:
            reply(conn, "200 OK", length=sizes[request.path])
            return True
        return False

    store = fake_store(lie)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 0, run
    assert run.stdout.startswith(f"copied {len(sizes)} files ("), run
    assert sorted(puts(store)) == sorted(sizes)


def test_a_store_that_goes_silent_mid_run_is_cut_at_the_timeout(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path, versions=("1.0", "2.0", "3.0"))
    answered = []

    def stall_after_two_puts(store, request, conn):
        if request.method == "PUT":
            answered.append(request.path)
            if len(answered) > 2:
                store.held.append(conn)  # never answers
                return True
        return False

    store = fake_store(stall_after_two_puts)
    run = push(wheelhouse_bin, store.endpoint, data, "--s3-timeout", "2", timeout=60)
    assert run.returncode == 1, run
    assert "no answer in time (s3-timeout)" in run.stderr, run
    assert run.seconds < 15, run
    assert SECRET not in run.stdout + run.stderr


def test_a_store_that_hangs_up_during_a_put_ends_the_run(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)

    def hang_up(store, request, conn):
        if request.method == "PUT":
            conn.close()
            return True
        return False

    store = fake_store(hang_up, read_bodies=False)
    run = push(wheelhouse_bin, store.endpoint, data, "--s3-timeout", "5", timeout=60)
    assert run.returncode == 1, run
    assert run.stderr.startswith("wheelhouse s3-push: "), run
    assert "copied" not in run.stdout, run
    assert run.seconds < 20, run


def test_the_secret_is_never_printed_even_when_the_store_echoes_the_request(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)

    def reflect(store, request, conn):
        if request.method == "PUT":
            # A store (or proxy) that echoes the whole signed request in its error.
            raw = request.raw_head.replace(b"&", b"&amp;").replace(b"<", b"&lt;")
            body = b"<Error><Code>InvalidRequest</Code><Message>" + raw + b"</Message></Error>"
            reply(conn, "400 Bad Request", body)
            return True
        return False

    store = fake_store(reflect)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert run.returncode == 1, run
    assert SECRET not in run.stdout + run.stderr, run


# ---------------------------------------------------------------------------------------------
# A data folder that changes while the push runs.


def test_a_blob_removed_between_the_look_and_the_put_is_passed_over(wheelhouse_bin, fake_store, tmp_path):
    # The server deletes a file (a yank, a purge) while the push runs: the push must treat the
    # vanished file as gone, as it does when it vanishes before the look.
    data = make_data(wheelhouse_bin, tmp_path, versions=("1.0", "2.0"))
    removed = []

    def remove_on_look(store, request, conn):
        if request.method == "HEAD" and request.path.count("/") > 1 and not removed:
            local = data / request.path.removeprefix("/wheels/")
            local.unlink()
            removed.append(request.path)
        return False

    store = fake_store(remove_on_look)
    run = push(wheelhouse_bin, store.endpoint, data)
    assert removed, run
    assert run.returncode == 0, f"a file removed by the server mid-run ended the push: {run}"
    assert removed[0] not in store.objects
    assert run.stdout.startswith("copied 3 files ("), run


def test_two_thousand_small_blobs_are_pushed_in_bounded_time(wheelhouse_bin, fake_store, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path)
    for index in range(2000):
        content = f"small blob {index}\n".encode()
        blob_at(data, hashlib.sha256(content).hexdigest()).write_bytes(content)
    total = len(blob_files(data))
    store = fake_store()
    run = push(wheelhouse_bin, store.endpoint, data, timeout=180)
    assert run.returncode == 0, run
    assert run.stdout.startswith(f"copied {total} files ("), run
    assert run.seconds < 60, run
    # The second run only looks: one HEAD per file, no PUT.
    before = len(store.requests)
    again = push(wheelhouse_bin, store.endpoint, data, timeout=180)
    assert again.stdout.startswith(f"copied 0 files (0 bytes) to bucket 'wheels'; {total} were there already"), again
    assert len([r for r in store.requests[before:] if r.method == "PUT"]) == 0
    assert again.seconds < 60, again


# ---------------------------------------------------------------------------------------------
# A real Ceph radosgw: what the bucket holds afterwards.


def real_push(wheelhouse_bin, env, data, *arguments) -> Run:
    environment_ = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    environment_.update(AWS_ACCESS_KEY_ID=env["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=env["S3_SECRET_KEY"])
    return push(wheelhouse_bin, env["S3_ENDPOINT"], data, *arguments, env=environment_)


def fetched(env, object_key: str, where: pathlib.Path) -> bytes:
    done = s3cmd(env, "get", "--force", f"s3://wheels/{object_key}", str(where))
    assert done.returncode == 0, done.stderr
    return where.read_bytes()


def test_a_bucket_object_of_the_same_size_but_other_bytes_is_replaced(wheelhouse_bin, radosgw, tmp_path):
    # An earlier, interrupted or foreign upload left other bytes under the blob's key, at the
    # blob's size. The skip looks only at the size: the wrong object stays, and the bucket
    # serves bytes that do not match the sha256 in their own name.
    data = make_data(wheelhouse_bin, tmp_path, name="samesize")
    blob = next(p for p in blob_files(data) if p.suffix != ".metadata")
    relative = str(blob.relative_to(data))
    forged = tmp_path / "forged"
    forged.write_bytes(b"\0" * blob.stat().st_size)
    put = s3cmd(radosgw, "put", str(forged), f"s3://wheels/same/{relative}")
    assert put.returncode == 0, put.stderr
    run = real_push(wheelhouse_bin, radosgw, data, "--s3-prefix", "same/")
    assert run.returncode == 0, run
    assert fetched(radosgw, f"same/{relative}", tmp_path / "got") == blob.read_bytes(), \
        f"the bucket keeps other bytes under {relative}: {run}"


def test_a_bucket_object_of_another_size_is_replaced(wheelhouse_bin, radosgw, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path, name="othersize")
    blob = next(p for p in blob_files(data) if p.suffix != ".metadata")
    relative = str(blob.relative_to(data))
    forged = tmp_path / "forged"
    forged.write_bytes(b"short")
    assert s3cmd(radosgw, "put", str(forged), f"s3://wheels/other/{relative}").returncode == 0
    run = real_push(wheelhouse_bin, radosgw, data, "--s3-prefix", "other/")
    assert run.returncode == 0, run
    assert run.stdout.startswith("copied 2 files ("), run
    assert fetched(radosgw, f"other/{relative}", tmp_path / "got") == blob.read_bytes()
    assert radosgw["S3_SECRET_KEY"] not in run.stdout + run.stderr


def test_a_symlink_to_an_outside_file_does_not_reach_the_real_bucket(wheelhouse_bin, radosgw, tmp_path):
    data = make_data(wheelhouse_bin, tmp_path, name="linked")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"secret outside the data folder\n")
    link = blob_at(data, hashlib.sha256(outside.read_bytes()).hexdigest(), metadata=True)
    link.symlink_to(outside)
    before = tree_state(data)
    run = real_push(wheelhouse_bin, radosgw, data, "--s3-prefix", "link/")
    assert tree_state(data) == before
    listing = s3cmd(radosgw, "ls", "--recursive", "s3://wheels/link/")
    assert listing.returncode == 0, listing.stderr
    assert str(link.relative_to(data)) not in listing.stdout, f"the outside file is in the bucket: {run}"
    assert run.returncode == 0, run
