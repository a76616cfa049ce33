"""`wheelhouse serve --s3-endpoint …`: the files the index holds itself kept in an S3 bucket of a
real Ceph radosgw (issue 29). twine and curl upload, pip installs through the presigned
redirect, Range works through the redirect and through the proxy, the bucket down answers 503
with Retry-After and nothing half-stored, a run killed mid-upload leaves no row without its
object and no object without its row, and a data folder never serves without its bucket.
s3cmd, a client of its own, looks at what is in the bucket."""

from __future__ import annotations

import calendar
import hashlib
import os
import pathlib
import re
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from server_process import ServerProcess
from test_durability import TRACED, Trace, WrappedServer
from test_s3_check import RADOSGW, radosgw, s3cmd  # noqa: F401  (the module's radosgw fixture)
from test_uploads import curl, make_token, twine
from wheelbuilder import build_wheel


def bucket_environment(env: dict[str, str], secret: str | None = None) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    environment.update(AWS_ACCESS_KEY_ID=env["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=secret or env["S3_SECRET_KEY"])
    return environment


def bucket_flags(env: dict[str, str], prefix: str, *extra: str) -> list[str]:
    return ["--s3-endpoint", env["S3_ENDPOINT"], "--s3-bucket", "wheels", "--s3-prefix", prefix, *extra]


def blob_key(prefix: str, sha256: str) -> str:
    return f"{prefix}blobs/sha256/{sha256[:2]}/{sha256[2:4]}/{sha256}"


def bucket_keys(env: dict[str, str], prefix: str) -> dict[str, int]:
    done = s3cmd(env, "ls", "--recursive", f"s3://wheels/{prefix}")
    assert done.returncode == 0, done.stderr
    return {line.split()[-1].removeprefix("s3://wheels/"): int(line.split()[2]) for line in done.stdout.splitlines()}


def object_bytes(env: dict[str, str], key: str, tmp_path: pathlib.Path) -> bytes:
    target = tmp_path / "fetched"
    target.unlink(missing_ok=True)
    done = s3cmd(env, "get", f"s3://wheels/{key}", str(target))
    assert done.returncode == 0, done.stderr
    return target.read_bytes()


def bucket_index(tmp_path: pathlib.Path, wheelhouse_bin, bucket_server, *serve_args: str):
    """A data folder with the upload token "ci", and the server on it over the module's bucket."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    return data, token, bucket_server(data, *serve_args)


def catalog_rows(data: pathlib.Path) -> dict[str, str]:
    with sqlite3.connect(data / "catalog.db") as db:
        return dict(db.execute("SELECT filename, sha256 FROM files"))


def answer(url: str, method: str = "GET", headers: dict | None = None) -> tuple[int, dict, bytes]:
    """Status, headers and body, redirects not followed."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read()


@pytest.fixture
def bucket_server(tmp_path, wheelhouse_bin, radosgw, request):  # noqa: F811
    """Starts wheelhouse on a data folder whose files go to s3://wheels/<a prefix of its own>."""
    started: list[ServerProcess] = []
    prefix = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40] + "/"

    def start(data: pathlib.Path, *extra: str, secret: str | None = None) -> ServerProcess:
        server = ServerProcess(data, *bucket_flags(radosgw, prefix, *extra),
                               env=bucket_environment(radosgw, secret)).start()
        started.append(server)
        return server

    start.prefix = prefix
    yield start
    for server in started:
        assert server.stop() == 0, server.stderr()


def test_twine_and_curl_uploads_land_in_the_bucket_byte_for_byte_and_pip_installs_through_the_redirect(
        tmp_path, wheelhouse_bin, radosgw, bucket_server, pip):  # noqa: F811
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    farm = tmp_path / "farm"
    first = build_wheel(farm, "bucketed", "1.0", files={"bucketed/__init__.py": "WHERE = 'bucket'\n",
                                                         "bucketed/blob.bin": os.urandom(200_000).hex()})
    second = build_wheel(farm, "bucketed", "1.1")
    done = twine(running.url, token, first)
    assert done.returncode == 0, done.stdout + done.stderr
    status, body = curl("-T", str(second), "-u", f"__token__:{token}", running.url + "api/v1/files/")
    assert status == 201, body

    rows = catalog_rows(data)
    keys = bucket_keys(radosgw, bucket_server.prefix)
    for wheel in (first, second):
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert rows[wheel.name] == sha256
        assert object_bytes(radosgw, blob_key(bucket_server.prefix, sha256), tmp_path) == wheel.read_bytes()
    assert len(keys) == 2, keys  # the distributions; METADATA stays beside the catalog
    on_disk = [path.name for path in (data / "blobs").rglob("*") if path.is_file()]
    assert sorted(on_disk) == sorted(hashlib.sha256(w.read_bytes()).hexdigest() + ".metadata" for w in (first, second))
    assert (data / "bucket").read_text().startswith(f"s3://wheels/{bucket_server.prefix} at {radosgw['S3_ENDPOINT']}")

    # The page links the immutable /files/ URL; the download is a 302 to the bucket.
    page = running.get("/simple/bucketed/").read().decode()
    sha256 = hashlib.sha256(first.read_bytes()).hexdigest()
    assert f"/files/{sha256}/{first.name}" in page and radosgw["RGW_PORT"] not in page
    status, headers, _ = answer(f"{running.url}files/{sha256}/{first.name}")
    assert status == 302, headers
    assert headers["Location"].startswith(f"{radosgw['S3_ENDPOINT']}/wheels/{blob_key(bucket_server.prefix, sha256)}?")
    assert "X-Amz-Signature=" in headers["Location"] and radosgw["S3_SECRET_KEY"] not in headers["Location"]
    max_age = int(re.search(r"max-age=(\d+)", headers["Cache-Control"]).group(1))
    assert 0 < max_age <= 150  # half the URL's 300 s
    # METADATA is served here (PEP 658), not redirected.
    status, _, metadata = answer(f"{running.url}files/{sha256}/{first.name}.metadata")
    assert status == 200 and b"Name: bucketed" in metadata

    target = tmp_path / "site"
    pip("install", "--index-url", running.url + "simple/", "--target", str(target), "bucketed==1.0")
    assert (target / "bucketed" / "__init__.py").read_text() == "WHERE = 'bucket'\n"
    assert (target / "bucketed" / "blob.bin").exists()


def signed_at(location: str) -> int:
    stamp = re.search(r"X-Amz-Date=(\d{8}T\d{6}Z)", location).group(1)
    return calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))


def test_a_presigned_url_is_signed_once_a_window_for_its_own_file_and_works_all_its_life(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    # A URL is signed at the start of the current tenth of --s3-url-lifetime (6 s here) and reused
    # until its end: every client gets one with 90% or more of its life left, and the redirect
    # costs a lookup. Each file keeps its own URL.
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    wheels = [build_wheel(tmp_path / "farm", "windowed", version, files={"windowed/x.bin": os.urandom(5000).hex()})
              for version in ("1.0", "1.1")]
    running = bucket_server(data, "--s3-url-lifetime", "60")
    for wheel in wheels:
        assert curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201

    def location(wheel: pathlib.Path) -> str:
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        status, headers, _ = answer(f"{running.url}files/{sha256}/{wheel.name}")
        assert status == 302, headers
        assert blob_key(bucket_server.prefix, sha256) in headers["Location"] and "X-Amz-Expires=60&" in headers["Location"]
        return headers["Location"]

    seen: dict[int, dict[str, str]] = {}
    started = time.time()
    while len(seen) < 2 and time.time() - started < 30:
        before = time.time()
        first, again, other = location(wheels[0]), location(wheels[0]), location(wheels[1])
        signed = signed_at(first)
        assert signed % 6 == 0 and before - 6 - 1 <= signed <= time.time(), (signed, before)
        if signed_at(again) == signed:
            assert again == first
        assert other != first
        seen.setdefault(signed, {})
        seen[signed].update({wheels[0].name: first, wheels[1].name: other})
        time.sleep(0.5)
    assert len(seen) == 2, seen  # the window turned, and a new URL was signed
    for urls in seen.values():
        for wheel in wheels:
            with urllib.request.urlopen(urls[wheel.name], timeout=30) as fetched:
                assert fetched.read() == wheel.read_bytes()


def in_progress_uploads(env: dict[str, str], prefix: str) -> list[str]:
    done = s3cmd(env, "multipart", "s3://wheels")
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if prefix in line]


def test_a_large_upload_goes_up_in_parts_and_reads_back_byte_for_byte(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """Above 16 MiB a file goes up as a multipart upload (parts of 8 MiB, several at once), each
    part's sha256 signed and the whole file's checked before the upload is completed."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = build_wheel(tmp_path / "farm", "bigbucketed", "1.0",
                        files={"bigbucketed/blob.bin": os.urandom(37 << 20)})
    assert wheel.stat().st_size > 37 << 20
    status, body = curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")
    assert status == 201, body
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    key = blob_key(bucket_server.prefix, sha256)
    assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()
    info = s3cmd(radosgw, "info", f"s3://wheels/{key}")
    assert info.returncode == 0, info.stderr
    assert re.search(r"MD5 sum:\s+\S+-5\b", info.stdout), info.stdout  # 5 parts: 4 of 8 MiB and the rest
    assert f"x-amz-meta-sha256: {sha256}" in info.stdout, info.stdout
    assert in_progress_uploads(radosgw, bucket_server.prefix) == []

    # A range across a part boundary, through the redirect.
    status, headers, _ = answer(f"{running.url}files/{sha256}/{wheel.name}")
    assert status == 302
    start = (8 << 20) - 100
    status, _, piece = answer(headers["Location"], headers={"Range": f"bytes={start}-{start + 199}"})
    assert status == 206 and piece == wheel.read_bytes()[start:start + 200]


class FormUpload:
    """twine's request (POST /legacy/, sha256_digest before content) over a raw socket, sent in
    pieces the test paces: send(n) sends the next n bytes of the file, finish() the rest and
    reads the answer, close() hangs up."""

    boundary = "wheelhouse-test-boundary"

    def __init__(self, running: ServerProcess, token: str, wheel: pathlib.Path, declared_sha256: str,
                 name: str | None = None):
        import base64
        import socket
        self.content = wheel.read_bytes()
        fields = [(":action", "file_upload"), ("protocol_version", "1"), ("sha256_digest", declared_sha256)]
        head = "".join(f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"{field}\"\r\n\r\n{value}\r\n"
                       for field, value in fields)
        head += (f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"content\"; "
                 f"filename=\"{name or wheel.name}\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        tail = f"\r\n--{self.boundary}--\r\n".encode()
        self.tail = tail
        length = len(head) + len(self.content) + len(tail)
        credentials = base64.b64encode(f"__token__:{token}".encode()).decode()
        host, port = running.url.removeprefix("http://").rstrip("/").split(":")
        self.socket = socket.create_connection((host, int(port)), timeout=120)
        self.socket.sendall((f"POST /legacy/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
                             f"Authorization: Basic {credentials}\r\n"
                             f"Content-Type: multipart/form-data; boundary={self.boundary}\r\n"
                             f"Content-Length: {length}\r\nConnection: close\r\n\r\n{head}").encode())
        self.sent = 0

    def send(self, count: int) -> None:
        self.socket.sendall(self.content[self.sent:self.sent + count])
        self.sent += count

    def finish(self) -> tuple[int, str]:
        self.send(len(self.content) - self.sent)
        self.socket.sendall(self.tail)
        answer_bytes = b""
        while chunk := self.socket.recv(65536):
            answer_bytes += chunk
        self.socket.close()
        status_line, _, rest = answer_bytes.decode(errors="replace").partition("\r\n")
        return int(status_line.split()[1]), rest

    def close(self) -> None:
        self.socket.close()


def uploaded_parts(env: dict[str, str], key: str) -> int:
    """Parts the store holds of the one upload of `key` in progress (0 without one)."""
    listed = s3cmd(env, "multipart", f"s3://wheels/{key}")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()]  # Initiated, Path, Id
    ids = [row[2] for row in rows if len(row) == 3 and row[1] == f"s3://wheels/{key}"]
    if len(ids) != 1:
        return 0
    parts = s3cmd(env, "listmp", f"s3://wheels/{key}", ids[0])
    if "404" in parts.stderr:
        return 0  # the upload ended (completed or aborted) between the listing and this
    assert parts.returncode == 0, parts.stderr
    # LastModified, PartNumber, ETag, Size
    return sum(1 for line in parts.stdout.splitlines() if line.split("\t")[1:2] and line.split("\t")[1].isdigit())


def test_a_large_upload_whose_sha256_comes_first_goes_to_the_bucket_while_it_arrives(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """twine sends sha256_digest before the content: from 16 MiB on, the parts go to the bucket as
    the body arrives, so the store holds them before the client has sent the rest, and the 201
    comes soon after the last byte. twine itself gets the same path."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheel = build_wheel(tmp_path / "farm", "arriving", "1.0", files={"arriving/blob.bin": os.urandom(41 << 20)})
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    key = blob_key(bucket_server.prefix, sha256)

    sending = FormUpload(running, token, wheel, sha256)
    sending.send(30 << 20)  # three whole parts of 8 MiB, and the client pauses
    deadline = time.monotonic() + 30
    while uploaded_parts(radosgw, key) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert uploaded_parts(radosgw, key) == 3, running.stderr()  # in the store before the rest is sent
    assert key not in bucket_keys(radosgw, bucket_server.prefix)  # but no object before it is whole
    status, said = sending.finish()
    assert status == 201, said
    assert object_bytes(radosgw, key, tmp_path) == wheel.read_bytes()
    info = s3cmd(radosgw, "info", f"s3://wheels/{key}")
    assert f"x-amz-meta-sha256: {sha256}" in info.stdout, info.stdout
    assert re.search(r"MD5 sum:\s+\S+-6\b", info.stdout), info.stdout  # 5 parts of 8 MiB and the rest
    assert in_progress_uploads(radosgw, bucket_server.prefix) == []
    assert catalog_rows(data) == {wheel.name: sha256}
    assert [name for name in os.listdir(data / "tmp")] == []

    second = build_wheel(tmp_path / "farm", "arriving", "1.1", files={"arriving/blob.bin": os.urandom(20 << 20)})
    uploaded = twine(running.url, token, second)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    second_sha256 = hashlib.sha256(second.read_bytes()).hexdigest()
    assert object_bytes(radosgw, blob_key(bucket_server.prefix, second_sha256), tmp_path) == second.read_bytes()
    assert in_progress_uploads(radosgw, bucket_server.prefix) == []


def test_range_through_the_redirect_and_through_the_proxy(tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    wheel = build_wheel(tmp_path / "farm", "ranged", "1.0", files={"ranged/x.bin": os.urandom(300_000).hex()})
    content = wheel.read_bytes()
    sha256 = hashlib.sha256(content).hexdigest()
    running = bucket_server(data)
    assert curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201
    url = f"{running.url}files/{sha256}/{wheel.name}"
    # curl follows the 302 and sends its Range to the bucket.
    fetched = subprocess.run(["curl", "-sS", "-L", "-r", "1000-1999", "-o", "-", "-w", "%{http_code}", url],
                             capture_output=True, timeout=60)
    assert fetched.stdout[-3:] == b"206" and fetched.stdout[:-3] == content[1000:2000]
    assert running.stop() == 0

    proxied = bucket_server(data, "--s3-downloads", "proxy")
    url = f"{proxied.url}files/{sha256}/{wheel.name}"
    status, headers, body = answer(url, headers={"Range": "bytes=1000-1999"})
    assert status == 206 and body == content[1000:2000], (status, headers)
    assert headers["Content-Range"] == f"bytes 1000-1999/{len(content)}"
    status, headers, body = answer(url)
    assert status == 200 and body == content and "Location" not in headers
    status, headers, body = answer(url, method="HEAD")
    assert status == 200 and int(headers["Content-Length"]) == len(content) and body == b""


def test_the_bucket_down_uploads_get_503_with_retry_after_pages_are_served_and_it_recovers(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    farm = tmp_path / "farm"
    before = build_wheel(farm, "weather", "1.0")
    during = build_wheel(farm, "weather", "2.0")
    running = bucket_server(data, "--s3-timeout", "2")
    assert curl("-T", str(before), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201
    folder = radosgw["RADOSGW_DIR"]
    subprocess.run(["bash", str(RADOSGW), "stop-gateway", folder], check=True, timeout=60)
    try:
        headers = tmp_path / "headers"
        status, body = curl("-D", str(headers), "-T", str(during), "-u", f"__token__:{token}",
                            running.url + "api/v1/files/")
        assert status == 503, body
        assert body.startswith("503 Service Unavailable: try again shortly"), body
        assert re.search(r"(?im)^retry-after: \d+", headers.read_text())
        assert during.name not in catalog_rows(data)
        # A PUT that may have reached the store leaves its claim (unlocked) for the next start's
        # sweep; no spool file stays.
        during_sha = hashlib.sha256(during.read_bytes()).hexdigest()
        assert [p.name[:70] for p in (data / "tmp").iterdir()] == [f"claim-{during_sha}"]
        # Reads go on: the page, and (redirect mode) the download's 302, need no bucket.
        assert running.get("/simple/weather/").status == 200
        sha256 = hashlib.sha256(before.read_bytes()).hexdigest()
        assert answer(f"{running.url}files/{sha256}/{before.name}")[0] == 302
        metrics = running.get("/metrics").read().decode()
        assert re.search(r'wheelhouse_object_store_errors_total\{operation="put"\} [1-9]', metrics), metrics
    finally:
        subprocess.run(["bash", str(RADOSGW), "start-gateway", folder], check=True, timeout=60)
    deadline = time.monotonic() + 30
    while True:
        status, body = curl("-T", str(during), "-u", f"__token__:{token}", running.url + "api/v1/files/")
        if status == 201 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status == 201, body
    sha256 = hashlib.sha256(during.read_bytes()).hexdigest()
    assert blob_key(bucket_server.prefix, sha256) in bucket_keys(radosgw, bucket_server.prefix)


def test_proxied_downloads_with_the_bucket_down_answer_503_not_500(tmp_path, wheelhouse_bin, radosgw,
                                                                   bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    wheel = build_wheel(tmp_path / "farm", "downed", "1.0")
    running = bucket_server(data, "--s3-downloads", "proxy", "--s3-timeout", "2")
    assert curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    folder = radosgw["RADOSGW_DIR"]
    subprocess.run(["bash", str(RADOSGW), "stop-gateway", folder], check=True, timeout=60)
    try:
        status, headers, body = answer(f"{running.url}files/{sha256}/{wheel.name}")
        assert status == 503, (status, body)
        assert "Retry-After" in headers
    finally:
        subprocess.run(["bash", str(RADOSGW), "start-gateway", folder], check=True, timeout=60)


def test_wrong_credentials_stop_the_start_with_the_fix_first(tmp_path, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(RuntimeError) as refused:
        bucket_server(data, secret="not-the-secret")
    message = str(refused.value)
    assert "cannot use the bucket: check the access key pair" in message, message
    assert "not-the-secret" not in message and radosgw["S3_SECRET_KEY"] not in message
    assert not (data / "bucket").exists()


def test_with_a_bucket_the_201_waits_for_fsyncs_of_its_metadata_never_for_a_syncfs_of_the_spools(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    """A syncfs before the commit would write out the spool of every upload in flight, each a GiB
    of bytes already in the bucket and deleted a moment later (a second of a 1 GiB upload's 14:
    bench/README.md). What must be durable is on the disk: METADATA, its directories, the claims."""
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    trace_path = tmp_path / "trace.txt"
    strace = ["strace", "-f", "-yy", "-qq", "-s", "40", "-o", str(trace_path), "-e", "trace=" + ",".join(TRACED)]
    server = WrappedServer(wheelhouse_bin, data, strace, *bucket_flags(radosgw, bucket_server.prefix),
                           env=bucket_environment(radosgw))
    wheel = build_wheel(tmp_path / "dist", "synced", "1.0")
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    try:
        status, body = curl("-T", str(wheel), "-u", f"__token__:{token}", server.url + "api/v1/files/")
        assert status == 201, body
    finally:
        assert server.stop() == 0, server.stderr()

    trace = Trace(trace_path)
    placed = trace.first("link|linkat", lambda text: f"/{sha256}.metadata\"" in text)
    fan_out = f"{data}/blobs/sha256/{sha256[:2]}"
    synced = [trace.first("fsync|fdatasync", lambda text: f"/{sha256}.metadata>" in text, after=placed),
              trace.first("fsync", lambda text: f"{fan_out}/{sha256[2:4]}>" in text, after=placed),
              trace.first("fsync", lambda text: f"{fan_out}>" in text, after=placed),
              trace.first("fsync", lambda text: f"{data}/tmp>" in text, after=placed)]
    commit_written = trace.first("pwrite64|write", lambda text: "catalog.db-wal>" in text, after=max(synced),
                                 ended=False)
    answered = trace.first("sendmsg|sendto|write|writev", lambda text: "201 Created" in text, ended=False)
    assert max(synced) < commit_written < answered, trace_path.read_text()[-4000:]
    assert trace.find("syncfs", lambda text: True) is None
    assert trace.find("fsync|fdatasync", lambda text: "/tmp/spool-" in text) is None


def test_a_folder_whose_files_are_in_a_bucket_is_never_served_or_checked_without_it(
        tmp_path, wheelhouse_bin, radosgw, bucket_server, start_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    running = bucket_server(data)
    assert running.stop() == 0
    with pytest.raises(RuntimeError) as refused:
        start_server(data)
    assert "serve this data folder with the s3-* settings of s3://wheels/" in str(refused.value)
    # Another bucket (or prefix) than the one its files are in: refused too.
    with pytest.raises(RuntimeError) as elsewhere:
        ServerProcess(data, *bucket_flags(radosgw, "elsewhere/"), env=bucket_environment(radosgw)).start()
    assert f"give the bucket this data folder's files are in, s3://wheels/{bucket_server.prefix}" in str(elsewhere.value)
    # Commands that would read or add its files without the bucket refuse; fsck would report
    # every file missing, ingest would put new ones on the disk.
    for command in (["fsck"], ["export", "--out", str(tmp_path / "site"), "--base-url", "/"], ["ingest", str(tmp_path)]):
        done = subprocess.run([str(wheelhouse_bin), command[0], "--data", str(data), *command[1:]],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and "serve this data folder with the s3-* settings" in done.stderr, (command, done)
    done = subprocess.run([str(wheelhouse_bin), "backup", "--data", str(data), "--blobs", str(tmp_path / "b1")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "give the bucket's --s3-endpoint, --s3-bucket and --s3-prefix with --blobs: " \
        "this data folder's files are in s3://" in done.stderr, done
    # Those that leave its files alone still work: the catalog's backup, the reservations.
    for command in (["backup", str(tmp_path / "b2")], ["reserve", "--list"]):
        done = subprocess.run([str(wheelhouse_bin), command[0], "--data", str(data), *command[1:]],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_a_deleted_file_leaves_the_bucket_and_a_crashed_runs_object_is_swept(tmp_path, wheelhouse_bin, radosgw,
                                                                            bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    admin = make_token(wheelhouse_bin, data, "admin", "--scope", "admin")
    wheel = build_wheel(tmp_path / "farm", "gone", "1.0")
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    running = bucket_server(data)
    assert curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")[0] == 201
    assert blob_key(bucket_server.prefix, sha256) in bucket_keys(radosgw, bucket_server.prefix)
    status, body = curl("-X", "DELETE", "-u", f"__token__:{admin}", f"{running.url}api/v1/files/{wheel.name}")
    assert status == 200, body
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert running.stop() == 0

    # What a run killed between its PUT and its row leaves: the object, and its claim (unlocked:
    # its process is gone). The next start settles the claim: no row names it, so it goes.
    orphan = tmp_path / "orphan.whl"
    orphan.write_bytes(os.urandom(5000))
    orphan_sha = hashlib.sha256(orphan.read_bytes()).hexdigest()
    assert s3cmd(radosgw, "put", str(orphan), f"s3://wheels/{blob_key(bucket_server.prefix, orphan_sha)}").returncode == 0
    (data / "tmp" / f"claim-{orphan_sha}-0123456789abcdef").write_bytes(b"")
    restarted = bucket_server(data)
    assert bucket_keys(radosgw, bucket_server.prefix) == {}
    assert "and 1 blobs it had not listed" in restarted.stderr()


def test_kill_9_during_uploads_leaves_no_row_without_its_object_and_no_object_without_its_row(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    farm = tmp_path / "farm"
    wheels = [build_wheel(farm, "killed", f"1.0.{i}", files={"killed/x.bin": os.urandom(400_000).hex()})
              for i in range(40)]
    running = bucket_server(data)
    stop = threading.Event()

    def upload_all() -> None:
        for wheel in wheels:
            if stop.is_set():
                return
            curl("-T", str(wheel), "-u", f"__token__:{token}", running.url + "api/v1/files/")

    uploader = threading.Thread(target=upload_all)
    uploader.start()
    deadline = time.monotonic() + 30
    while len(catalog_rows(data)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    running.process.send_signal(signal.SIGKILL)
    running.process.wait()
    stop.set()
    uploader.join()
    running.process = None

    restarted = bucket_server(data)
    rows = catalog_rows(data)
    keys = set(bucket_keys(radosgw, bucket_server.prefix))
    assert 3 <= len(rows) < len(wheels)
    assert keys == {blob_key(bucket_server.prefix, sha256) for sha256 in rows.values()}, restarted.stderr()


def run_with_bucket(wheelhouse_bin, env: dict[str, str], prefix: str, command: str, data: pathlib.Path,
                    *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(wheelhouse_bin), command, "--data", str(data), *bucket_flags(env, prefix), *arguments],
                          capture_output=True, text=True, timeout=300, env=bucket_environment(env))


def test_ingest_and_fsck_with_the_bucket_find_what_is_missing_resized_forged_or_orphaned(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    prefix = bucket_server.prefix
    bucket_server(data).stop()  # the folder now names its bucket
    farm = tmp_path / "farm"
    wheels = [build_wheel(farm, "checked", f"1.{i}", files={"checked/x.bin": os.urandom(20_000 + i).hex()})
              for i in range(4)]
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "ingest", data, str(farm))
    assert done.returncode == 0, done.stdout + done.stderr
    shas = [hashlib.sha256(wheel.read_bytes()).hexdigest() for wheel in wheels]
    assert set(bucket_keys(radosgw, prefix)) == {blob_key(prefix, sha) for sha in shas}
    assert not [p for p in (data / "blobs").rglob("*") if p.is_file() and not p.name.endswith(".metadata")]

    clean = run_with_bucket(wheelhouse_bin, radosgw, prefix, "fsck", data)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert f"bucket    4 objects in s3://wheels/{prefix}" in clean.stdout

    # Missing; the wrong size; the right size but put as other bytes; and an object no row names.
    assert s3cmd(radosgw, "del", f"s3://wheels/{blob_key(prefix, shas[0])}").returncode == 0
    shorter = tmp_path / "shorter"
    shorter.write_bytes(wheels[1].read_bytes()[:-10])
    assert s3cmd(radosgw, "put", str(shorter), f"s3://wheels/{blob_key(prefix, shas[1])}").returncode == 0
    forged = tmp_path / "forged"
    forged.write_bytes(bytes(len(wheels[2].read_bytes())))
    assert s3cmd(radosgw, "put", f"--add-header=x-amz-meta-sha256:{hashlib.sha256(forged.read_bytes()).hexdigest()}",
                 str(forged), f"s3://wheels/{blob_key(prefix, shas[2])}").returncode == 0
    orphan = tmp_path / "orphan"
    orphan.write_bytes(b"left by a run that died")
    orphan_sha = hashlib.sha256(orphan.read_bytes()).hexdigest()
    assert s3cmd(radosgw, "put", str(orphan), f"s3://wheels/{blob_key(prefix, orphan_sha)}").returncode == 0

    found = run_with_bucket(wheelhouse_bin, radosgw, prefix, "fsck", data)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"PROBLEM missing blob of {wheels[0].name}" in found.stdout
    assert f"PROBLEM corrupt blob of {wheels[1].name}: {len(shorter.read_bytes())} bytes" in found.stdout
    assert f"PROBLEM corrupt blob of {wheels[2].name}: it was put as bytes that hash to" in found.stdout
    assert f"PROBLEM orphan blob: no catalog row uses it\n  bucket/blobs/sha256/{orphan_sha[:2]}" in found.stdout
    quick = run_with_bucket(wheelhouse_bin, radosgw, prefix, "fsck", data, "--quick")
    assert wheels[2].name not in quick.stdout and wheels[1].name in quick.stdout  # sizes only

    fixed = run_with_bucket(wheelhouse_bin, radosgw, prefix, "fsck", data, "--fix")
    assert "fixed   orphan blob" in fixed.stdout, fixed.stdout
    assert blob_key(prefix, orphan_sha) not in bucket_keys(radosgw, prefix)
    assert blob_key(prefix, shas[3]) in bucket_keys(radosgw, prefix)  # the sound one stays


def bucketed_index(tmp_path, wheelhouse_bin, bucket_server, *names: str):
    """A server on a bucket with one wheel uploaded per name: (data, server, token, {name: wheel})."""
    data, token, running = bucket_index(tmp_path, wheelhouse_bin, bucket_server)
    wheels = {}
    for name in names:
        wheels[name] = build_wheel(tmp_path / "farm", name, "1.0", files={f"{name}/blob.bin": os.urandom(50_000)})
        status, body = curl("-T", str(wheels[name]), "-u", f"__token__:{token}", running.url + "api/v1/files/")
        assert status == 201, body
    return data, running, token, wheels


def test_export_and_backup_read_the_bucket_and_a_restore_serves_without_it(
        tmp_path, wheelhouse_bin, radosgw, bucket_server, start_server):  # noqa: F811
    data, running, _, wheels = bucketed_index(tmp_path, wheelhouse_bin, bucket_server, "exported", "kept")
    prefix = bucket_server.prefix

    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "export", data, "--out", str(tmp_path / "site"),
                           "--base-url", "/")
    assert done.returncode == 0, done.stderr
    assert "2 wheels and 2 METADATA files copied" in done.stdout, done.stdout
    for wheel in wheels.values():
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert (tmp_path / "site" / "files" / sha256 / wheel.name).read_bytes() == wheel.read_bytes()

    # Without --blobs, the catalog and the METADATA (which only DATA holds); with, the wheels too.
    done = subprocess.run([str(wheelhouse_bin), "backup", "--data", str(data), str(tmp_path / "catalog-only")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "2 METADATA files; the wheels stay in the bucket" in done.stdout, done
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "backup", data, "--blobs", str(tmp_path / "whole"))
    assert done.returncode == 0 and "2 wheels, 2 METADATA files" in done.stdout, done
    assert running.stop() == 0

    # The whole backup restores into a folder that serves on its own, byte for byte.
    restored = tmp_path / "restored"
    done = subprocess.run([str(wheelhouse_bin), "restore", "--data", str(restored), str(tmp_path / "whole")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (restored / "bucket").exists()
    alone = start_server(restored)
    for wheel in wheels.values():
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        status, _, body = answer(f"{alone.url}files/{sha256}/{wheel.name}")
        assert status == 200 and body == wheel.read_bytes()
    # The catalog-only one restores into a folder the same bucket serves, METADATA and all.
    again = tmp_path / "again"
    done = subprocess.run([str(wheelhouse_bin), "restore", "--data", str(again), str(tmp_path / "catalog-only")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "start it with that bucket's --s3-* settings" in done.stdout, done
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "fsck", again)
    assert done.returncode == 0, done.stdout + done.stderr
    # A backup given another bucket than the folder's is refused, and so is the bucket for a folder without one.
    done = run_with_bucket(wheelhouse_bin, radosgw, "elsewhere/", "backup", data, "--blobs", str(tmp_path / "b3"))
    assert done.returncode == 1 and f"give the --s3-* settings of s3://wheels/{prefix}" in done.stderr, done
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "backup", restored, str(tmp_path / "b4"))
    assert done.returncode == 1 and "leave out the --s3-* settings" in done.stderr, done


def test_s3_pull_brings_the_files_back_and_leave_bucket_frees_the_folder_once_the_server_is_stopped(
        tmp_path, wheelhouse_bin, radosgw, bucket_server, start_server):  # noqa: F811
    data, running, token, wheels = bucketed_index(tmp_path, wheelhouse_bin, bucket_server, "pulled", "later")
    prefix = bucket_server.prefix
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "s3-pull", data)
    assert done.returncode == 0 and "copied 2 files" in done.stdout, done
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "s3-pull", data)
    assert done.returncode == 0 and "copied 0 files" in done.stdout and "2 were in the folder already" in done.stdout
    # While the server uses the bucket the folder cannot leave it.
    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "s3-pull", data, "--leave-bucket")
    assert done.returncode == 2 and "stop the server" in done.stderr, done
    assert (data / "bucket").exists()
    third = build_wheel(tmp_path / "farm", "arrived", "1.0", files={"arrived/blob.bin": os.urandom(50_000)})
    status, body = curl("-T", str(third), "-u", f"__token__:{token}", running.url + "api/v1/files/")
    assert status == 201, body
    wheels["arrived"] = third
    assert running.stop() == 0

    done = run_with_bucket(wheelhouse_bin, radosgw, prefix, "s3-pull", data, "--leave-bucket")
    assert done.returncode == 0, done.stderr
    assert "copied 1 files" in done.stdout and "2 were in the folder already" in done.stdout, done.stdout
    assert not (data / "bucket").exists()
    alone = start_server(data)
    for wheel in wheels.values():
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        status, _, body = answer(f"{alone.url}files/{sha256}/{wheel.name}")
        assert status == 200 and body == wheel.read_bytes()
    done = subprocess.run([str(wheelhouse_bin), "fsck", "--data", str(data)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout
    # Nothing was removed from the bucket.
    assert len(bucket_keys(radosgw, prefix)) == 3


def test_s3_pull_of_an_object_the_bucket_lacks_keeps_the_folder_on_its_bucket(
        tmp_path, wheelhouse_bin, radosgw, bucket_server):  # noqa: F811
    data, running, _, wheels = bucketed_index(tmp_path, wheelhouse_bin, bucket_server, "lost", "found")
    assert running.stop() == 0
    lost = hashlib.sha256(wheels["lost"].read_bytes()).hexdigest()
    assert s3cmd(radosgw, "del", f"s3://wheels/{blob_key(bucket_server.prefix, lost)}").returncode == 0
    done = run_with_bucket(wheelhouse_bin, radosgw, bucket_server.prefix, "s3-pull", data, "--leave-bucket")
    assert done.returncode == 1, done
    assert f"{lost} is missing from the bucket" in done.stderr and "copied 1 files" in done.stdout, done
    assert (data / "bucket").exists()
    assert not any((data / "tmp").iterdir())
