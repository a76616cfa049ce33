"""Downloads of GitHub Release assets registered with `wheelhouse register`: redirect, proxy and
cache modes against the fake GitHub (tests/e2e/fake_github.py), and the upstream's failures
(stall, lying length, 500, wrong bytes) ending the client's connection or answering 502 rather
than handing over wrong bytes as a success."""

from __future__ import annotations

import hashlib
import pathlib
import random
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from wheelbuilder import build_wheel

MiB = 1 << 20


def native_wheel(directory: pathlib.Path, name: str, version: str, seed: int, size: int = 2 * MiB) -> pathlib.Path:
    """A wheel holding `size` incompressible bytes, so its length means something on the wire."""
    module = name.replace("-", "_")
    return build_wheel(directory, name, version, "py3-none-any",
                       files={f"{module}/__init__.py": f"VERSION = {version!r}\n",
                              f"{module}/_native.so": random.Random(seed).randbytes(size)},
                       summary=f"{name} for the download tests")


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=120)


def curl(url: str, out: pathlib.Path, *extra: str, timeout: float = 60) -> tuple[int, int, int]:
    """(curl's exit status, HTTP status, bytes received)."""
    done = subprocess.run(["curl", "-s", "-o", str(out), "-w", "%{http_code} %{size_download}", *extra, url],
                          capture_output=True, text=True, timeout=timeout)
    status, size = done.stdout.split()
    return done.returncode, int(status), int(size)


def storage_gets(log: list[dict]) -> list[dict]:
    return [entry for entry in log if entry["host"] == "storage" and entry["method"] == "GET"]


def wait_for(condition, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


@pytest.fixture
def remote_index(wheelhouse_bin, fake_github, start_server, tmp_path):
    """Puts wheels on the fake GitHub as release owner/kernels v1, registers each with
    `wheelhouse register --mode MODE`, and starts a server that may fetch from the fake."""

    def make(wheels: dict[pathlib.Path, str], *server_args: str, local: tuple[pathlib.Path, ...] = ()):
        fake_github.add_release("owner", "kernels", "v1", list(wheels))
        data = tmp_path / "data"
        if local:  # wheels stored on the index's own disk, beside the remote ones
            ingested = run(wheelhouse_bin, "ingest", "--data", data, *local)
            assert ingested.returncode == 0, ingested.stdout + ingested.stderr
        for wheel, mode in wheels.items():
            url = fake_github.download_url("owner", "kernels", "v1", wheel.name)
            registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--mode", mode,
                             url)
            assert registered.returncode == 0, registered.stdout + registered.stderr
        fake_github.clear_log()
        return start_server(data, *fake_github.server_flags(), *server_args)

    return make


def file_url(server, wheel: pathlib.Path) -> str:
    return f"{server.url}files/{sha256_of(wheel)}/{wheel.name}"


def test_pip_installs_through_redirect_and_proxy(remote_index, fake_github, pip, tmp_path):
    dist = tmp_path / "dist"
    redirected = native_wheel(dist, "remote-redirected", "1.0", 1)
    proxied = native_wheel(dist, "remote-proxied", "1.0", 2)
    server = remote_index({redirected: "redirect", proxied: "proxy"})

    # redirect: a 302 to the URL registered, nothing else; pip follows it to the fake (so it
    # needs the fake's CA) and fetches the bytes there.
    request = urllib.request.Request(file_url(server, redirected), method="GET")
    opener = urllib.request.build_opener(NoRedirect())
    with pytest.raises(urllib.error.HTTPError) as answer:
        opener.open(request, timeout=10)
    assert answer.value.code == 302
    assert answer.value.headers["Location"] == fake_github.download_url("owner", "kernels", "v1", redirected.name)
    assert "public" in answer.value.headers["Cache-Control"]

    target = tmp_path / "site"
    pip("install", "--no-deps", "--target", str(target / "a"), "--cert", str(fake_github.ca),
        "--index-url", f"{server.url}simple/", "remote-redirected==1.0")
    assert (target / "a" / "remote_redirected" / "_native.so").stat().st_size == 2 * MiB
    # pip fetched the bytes from the storage host itself (pip 23.0 fetches the wheel twice; the
    # fake logs a request once it has ended).
    assert wait_for(lambda: storage_gets(fake_github.log()))[0]["body_bytes"] == redirected.stat().st_size
    time.sleep(1)
    fake_github.clear_log()

    # proxy: pip knows nothing of the fake's CA, so the bytes can only have come through us.
    pip("install", "--no-deps", "--target", str(target / "b"), "--index-url", f"{server.url}simple/",
        "remote-proxied==1.0")
    assert (target / "b" / "remote_proxied" / "_native.so").read_bytes() == random.Random(2).randbytes(2 * MiB)
    time.sleep(1)
    # The proxied file's storage GETs (a late-logged one of the redirect above is not one): whole,
    # never by Range. pip 23.0 fetches twice, and on a loaded machine may drop a duplicate before a
    # byte of it is relayed, so one whole transfer is what proves the bytes came through us.
    gets = [get for get in storage_gets(fake_github.log()) if urllib.parse.quote(proxied.name) in get["path"]]
    assert all(get["range"] is None for get in gets), gets
    assert any(get["body_bytes"] == proxied.stat().st_size for get in gets), gets
    assert all(get["body_bytes"] in (0, proxied.stat().st_size) for get in gets), gets

    # .metadata comes from our store in every mode: the fake sees no request for it.
    fake_github.clear_log()
    for wheel in (redirected, proxied):
        with urllib.request.urlopen(file_url(server, wheel) + ".metadata", timeout=10) as response:
            assert b"Name: remote-" in response.read()
    assert fake_github.log() == []


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_range_passes_through_the_proxy(remote_index, fake_github, tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-ranged", "1.0", 3)
    server = remote_index({wheel: "proxy"})
    whole = wheel.read_bytes()

    out = tmp_path / "part"
    code, status, size = curl(file_url(server, wheel), out, "-r", "1000-65535", "-D", str(tmp_path / "headers"))
    assert (code, status, size) == (0, 206, 64536)
    assert out.read_bytes() == whole[1000:65536]
    headers = (tmp_path / "headers").read_text().lower()
    assert f"content-range: bytes 1000-65535/{len(whole)}" in headers
    assert [entry["range"] for entry in storage_gets(fake_github.log())] == ["bytes=1000-65535"]

    # A range outside the file is refused here, without asking the remote host.
    fake_github.clear_log()
    code, status, _ = curl(file_url(server, wheel), out, "-r", f"{len(whole) + 10}-")
    assert status == 416
    assert storage_gets(fake_github.log()) == []

    # HEAD is answered from the catalog.
    head = subprocess.run(["curl", "-sI", file_url(server, wheel)], capture_output=True, text=True, timeout=30)
    assert f"content-length: {len(whole)}" in head.stdout.lower()
    assert fake_github.log() == []


def test_cache_mode_keeps_a_verified_copy(remote_index, fake_github, wheelhouse_bin, tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-cached", "1.0", 4)
    server = remote_index({wheel: "cache"})
    blob = server.data_dir / "blobs" / "sha256" / sha256_of(wheel)[:2] / sha256_of(wheel)[2:4] / sha256_of(wheel)

    # A partial download keeps nothing.
    out = tmp_path / "out"
    assert curl(file_url(server, wheel), out, "-r", "0-99")[:2] == (0, 206)
    assert not blob.exists()

    assert curl(file_url(server, wheel), out) == (0, 200, wheel.stat().st_size)
    assert out.read_bytes() == wheel.read_bytes()
    wait_for(blob.exists)
    assert sha256_of(blob) == sha256_of(wheel)

    # The remote host now fails; the copy answers, and the fake is not asked.
    fake_github.set_fault(wheel.name, status=500)
    fake_github.clear_log()
    for _ in range(2):
        assert curl(file_url(server, wheel), out) == (0, 200, wheel.stat().st_size)
        assert out.read_bytes() == wheel.read_bytes()
    assert curl(file_url(server, wheel), out, "-r", "10-19")[:3] == (0, 206, 10)
    assert fake_github.log() == []
    # The kept copy is a sound part of the store.
    checked = run(wheelhouse_bin, "fsck", "--data", server.data_dir)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_slow_client_slows_the_remote_host(remote_index, fake_github, tmp_path):
    size = 64 * MiB
    wheel = native_wheel(tmp_path / "dist", "remote-large", "1.0", 5, size=size)
    server = remote_index({wheel: "proxy"})
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    path = file_url(server, wheel).removeprefix(server.url.rstrip("/"))

    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    reader.connect((host, int(port)))
    reader.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    first = reader.recv(64 * 1024)
    assert first.startswith(b"HTTP/1.1 200 ")
    time.sleep(3)  # paused: the server must not read the rest of the file on our behalf
    assert storage_gets(fake_github.log()) == []  # the storage is still sending, held back
    reader.close()

    # Our close cancels the upstream fetch; the storage then logs how much it ever sent.
    sent = wait_for(lambda: storage_gets(fake_github.log()))[0]["body_bytes"]
    print(f"storage sent {sent / MiB:.1f} MiB of {wheel.stat().st_size / MiB:.1f} MiB to a paused reader")
    assert sent < wheel.stat().st_size // 2

    # and the server serves the next client in full.
    out = tmp_path / "out"
    assert curl(file_url(server, wheel), out) == (0, 200, wheel.stat().st_size)
    assert sha256_of(out) == sha256_of(wheel)


def answer_headers(url: str, *extra: str, method: str = "GET") -> tuple[int, dict[str, str]]:
    """(status, headers by lower-case name) of one request, body dropped."""
    done = subprocess.run(["curl", "-s", "-o", "/dev/null", "-D", "-", "-X", method, *extra, url]
                          + (["-I"] if method == "HEAD" else []), capture_output=True, text=True, timeout=30)
    lines = done.stdout.splitlines()
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


def test_local_and_proxied_downloads_answer_with_one_header_set(remote_index, fake_github, tmp_path):
    proxied = native_wheel(tmp_path / "dist", "remote-answers", "1.0", 21)
    local = native_wheel(tmp_path / "local", "local-answers", "1.0", 22)
    server = remote_index({proxied: "proxy"}, local=(local,))
    every = {"server", "etag", "cache-control", "accept-ranges"}
    kinds = {
        200: ((), "GET"),
        206: (("-r", "0-99"), "GET"),
        304: (("-H", "If-None-Match: \"{sha256}\""), "GET"),
        416: (("-r", "999999999-"), "GET"),
        "HEAD": ((), "HEAD"),
        "HEAD 206": (("-r", "0-99"), "HEAD"),
    }
    for kind, (extra, method) in kinds.items():
        seen = {}
        for name, wheel in (("local", local), ("proxied", proxied)):
            arguments = [part.format(sha256=sha256_of(wheel)) for part in extra]
            status, headers = answer_headers(file_url(server, wheel), *arguments, method=method)
            assert status == (kind if isinstance(kind, int) else 206 if "206" in kind else 200), (name, kind)
            assert every <= set(headers), (name, kind, headers)
            assert headers["etag"] == f'"{sha256_of(wheel)}"'
            # The same names; the same values but where the two files' digests, sizes and storing
            # times differ.
            seen[name] = {key: None if key in ("etag", "content-length", "content-range", "last-modified") else value
                          for key, value in headers.items()}
        assert seen["local"] == seen["proxied"], kind


def server_rss_mib(server) -> float:
    for line in pathlib.Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_proxied_bytes_are_identical_whole_and_in_ranges(remote_index, tmp_path):
    size = 24 * MiB  # many of the relay's batches and the client's reads
    wheel = native_wheel(tmp_path / "dist", "remote-identical", "1.0", 16, size=size)
    server = remote_index({wheel: "proxy"})
    whole = wheel.read_bytes()
    out = tmp_path / "out"
    assert curl(file_url(server, wheel), out) == (0, 200, len(whole))
    assert out.read_bytes() == whole
    # Ranges that start and end inside and across 256 KiB batches, the last byte, a suffix.
    for first, last in ((0, 0), (1, 262_143), (262_143, 262_144), (3_000_001, 9_999_999),
                        (len(whole) - 1, len(whole) - 1), (len(whole) - 700_000, None)):
        spec = f"{first}-{'' if last is None else last}"
        end = len(whole) - 1 if last is None else last
        assert curl(file_url(server, wheel), out, "-r", spec) == (0, 206, end - first + 1), spec
        assert out.read_bytes() == whole[first:end + 1], spec
    assert curl(file_url(server, wheel), out, "-r", "-1000") == (0, 206, 1000)
    assert out.read_bytes() == whole[-1000:]


def test_a_paused_client_keeps_the_server_memory_flat(remote_index, fake_github, tmp_path):
    size = 96 * MiB
    wheel = native_wheel(tmp_path / "dist", "remote-paused", "1.0", 17, size=size)
    server = remote_index({wheel: "proxy"})
    out = tmp_path / "out"
    assert curl(file_url(server, wheel), out, "-r", "0-99")[:2] == (0, 206)  # the relay has run once
    before = server_rss_mib(server)
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    reader = socket.create_connection((host, int(port)))
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    reader.sendall(f"GET {file_url(server, wheel).removeprefix(server.url.rstrip('/'))} HTTP/1.1\r\n"
                   f"Host: {host}\r\n\r\n".encode())
    assert reader.recv(64 * 1024).startswith(b"HTTP/1.1 200 ")
    peak = before
    for _ in range(30):  # 3 s paused: a server that buffered the asset would hold most of it now
        time.sleep(0.1)
        peak = max(peak, server_rss_mib(server))
    reader.close()
    print(f"server RSS {before:.1f} MiB before, {peak:.1f} MiB at most while a {size // MiB} MiB download paused")
    assert peak - before < 24, (before, peak)


def test_a_remote_host_that_dies_mid_body_breaks_the_client_transfer(remote_index, fake_github, tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-dying", "1.0", 18, size=8 * MiB)
    server = remote_index({wheel: "proxy"})
    fake_github.set_fault(wheel.name, reset_after=3 * MiB)
    out = tmp_path / "out"
    code, status, received = curl(file_url(server, wheel), out)
    # Either the head had gone out and the connection ends short of its Content-Length (curl's
    # 18), or the reset came first and the answer is a 502: never a complete-looking 200.
    assert (status == 200 and code == 18 and received < wheel.stat().st_size) or status == 502, (code, status)
    fake_github.set_fault(wheel.name)
    assert curl(file_url(server, wheel), out) == (0, 200, wheel.stat().st_size)
    assert sha256_of(out) == sha256_of(wheel)


def test_a_client_hang_up_stops_a_fetch_waiting_on_a_silent_host(remote_index, fake_github, tmp_path):
    stalled = native_wheel(tmp_path / "dist", "remote-silent", "1.0", 19)
    other = native_wheel(tmp_path / "dist", "remote-next", "1.0", 20)
    # One proxied download at a time, and a read deadline far beyond the test: only the hang-up
    # can free the slot for the next download.
    server = remote_index({stalled: "proxy", other: "proxy"}, "--remote-proxy-downloads", "1",
                          "--remote-read-timeout", "60")
    fake_github.set_fault(stalled.name, stall_after=MiB, stall_seconds=60)
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    reader = socket.create_connection((host, int(port)))
    reader.sendall(f"GET {file_url(server, stalled).removeprefix(server.url.rstrip('/'))} HTTP/1.1\r\n"
                   f"Host: {host}\r\n\r\n".encode())
    assert reader.recv(64 * 1024).startswith(b"HTTP/1.1 200 ")
    time.sleep(0.5)
    reader.close()
    started = time.monotonic()
    out = tmp_path / "out"
    assert wait_for(lambda: curl(file_url(server, other), out)[1] == 200, timeout=10)
    assert time.monotonic() - started < 5
    assert sha256_of(out) == sha256_of(other)


def test_a_stalled_remote_host_ends_the_connection_and_others_are_served(remote_index, fake_github, tmp_path):
    stalled = native_wheel(tmp_path / "dist", "remote-stalled", "1.0", 6)
    fine = native_wheel(tmp_path / "dist", "remote-fine", "1.0", 7)
    server = remote_index({stalled: "proxy", fine: "proxy"}, "--remote-read-timeout", "2")
    fake_github.set_fault(stalled.name, stall_after=MiB, stall_seconds=30)

    process = subprocess.Popen(["curl", "-s", "-o", str(tmp_path / "stalled"), "-w", "%{http_code} %{size_download}",
                                file_url(server, stalled)], stdout=subprocess.PIPE, text=True)
    # While that one waits, others are served.
    out = tmp_path / "out"
    assert curl(file_url(server, fine), out) == (0, 200, fine.stat().st_size)
    with urllib.request.urlopen(server.url + "healthz", timeout=5) as response:
        assert response.status == 200

    started = time.monotonic()
    stdout, _ = process.communicate(timeout=30)
    status, received = stdout.split()
    assert process.returncode == 18  # "partial file": the connection ended short of Content-Length
    assert status == "200" and int(received) < stalled.stat().st_size
    assert time.monotonic() - started < 15


def test_a_remote_host_that_lies_about_its_length_is_not_relayed(remote_index, fake_github, tmp_path):
    liar = native_wheel(tmp_path / "dist", "remote-liar", "1.0", 8)
    short = native_wheel(tmp_path / "dist", "remote-short", "1.0", 9)
    server = remote_index({liar: "proxy", short: "proxy"})
    out = tmp_path / "out"

    # A length other than the catalog's: refused before any byte goes out.
    fake_github.set_fault(liar.name, lie_length=1000)
    body = urllib_error_body(file_url(server, liar))
    assert body[0] == 502 and f"has {liar.stat().st_size} bytes in the index" in body[1]

    # The catalog's length announced, fewer bytes sent: the client's connection ends short.
    cut = tmp_path / "cut" / short.name
    cut.parent.mkdir()
    cut.write_bytes(short.read_bytes()[: short.stat().st_size - 300_000])
    fake_github.add_release("owner", "kernels", "v1", [cut])
    fake_github.set_fault(short.name, lie_length=300_000)
    code, status, received = curl(file_url(server, short), out)
    assert code == 18 and status == 200 and received < short.stat().st_size


def urllib_error_body(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as failure:
        return failure.code, failure.read().decode()


def test_upstream_failures_are_502(remote_index, fake_github, tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-failing", "1.0", 10)
    server = remote_index({wheel: "cache"})
    fake_github.set_fault(wheel.name, status=500)
    status, message = urllib_error_body(file_url(server, wheel))
    assert status == 502 and "HTTP 500" in message
    fake_github.set_fault(wheel.name, status=503)
    assert urllib_error_body(file_url(server, wheel))[0] == 502
    assert not any((server.data_dir / "blobs").rglob(sha256_of(wheel)))
    # Operators see the remote host failing on /metrics, one count per failed transfer.
    metrics = urllib.request.urlopen(f"{server.url}metrics", timeout=10).read().decode()
    assert "\nwheelhouse_proxy_upstream_errors_total 2\n" in metrics


def test_bytes_that_disagree_with_the_digest_end_the_connection(remote_index, fake_github, tmp_path):
    proxied = native_wheel(tmp_path / "dist", "remote-tampered", "1.0", 11)
    cached = native_wheel(tmp_path / "dist", "remote-tampered-cache", "1.0", 12)
    server = remote_index({proxied: "proxy", cached: "cache"})
    fake_github.set_fault(proxied.name, wrong_bytes=True)
    fake_github.set_fault(cached.name, wrong_bytes=True)
    out = tmp_path / "out"
    for wheel in (proxied, cached):
        code, status, received = curl(file_url(server, wheel), out)
        assert code == 18 and status == 200 and received < wheel.stat().st_size
    assert not any((server.data_dir / "blobs").rglob(sha256_of(cached)))
    assert "sha256" in server.stderr() and "the client's connection was ended" in server.stderr()


def test_shutdown_does_not_wait_for_a_slow_proxied_download(remote_index, fake_github, tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-slow", "1.0", 13)
    server = remote_index({wheel: "proxy"}, "--drain-timeout", "1")
    fake_github.set_fault(wheel.name, slow_bps=100_000)  # about 20 s for the whole file
    process = subprocess.Popen(["curl", "-s", "-o", str(tmp_path / "slow"), file_url(server, wheel)])
    time.sleep(1.5)
    started = time.monotonic()
    assert server.stop() == 0
    assert time.monotonic() - started < 6
    assert process.wait(timeout=10) != 0  # the client saw its download cut short, not a success
    # and the fetch from the storage host ended with it, not seconds later.
    sent = wait_for(lambda: storage_gets(fake_github.log()), timeout=1.5)[0]["body_bytes"]
    assert sent < wheel.stat().st_size // 4


def test_proxied_downloads_beyond_the_limit_get_503(remote_index, fake_github, tmp_path):
    slow = native_wheel(tmp_path / "dist", "remote-busy", "1.0", 14)
    other = native_wheel(tmp_path / "dist", "remote-other", "1.0", 15)
    server = remote_index({slow: "proxy", other: "proxy"}, "--remote-proxy-downloads", "1")
    fake_github.set_fault(slow.name, slow_bps=100_000)
    first = subprocess.Popen(["curl", "-s", "-o", str(tmp_path / "slow"), file_url(server, slow)])
    time.sleep(1)
    try:
        urllib.request.urlopen(file_url(server, other), timeout=10)
        raise AssertionError("a second proxied download was accepted past --remote-proxy-downloads 1")
    except urllib.error.HTTPError as refused:
        assert refused.code == 503 and refused.headers["Retry-After"]
        assert "proxied downloads are in progress" in refused.read().decode()
    first.kill()
    first.wait()
    # The client's departure frees the slot.
    out = tmp_path / "out"
    assert wait_for(lambda: curl(file_url(server, other), out)[1] == 200, timeout=5)
    assert sha256_of(out) == sha256_of(other)


def import_and_register(wheelhouse_bin, fake_github, data: pathlib.Path, release: tuple[str, str, str],
                        import_mode: str, one: tuple[str, str, pathlib.Path], register_mode: str) -> dict:
    """`import-release OWNER/REPO TAG` of `release` and `register` of the asset `one` (repository,
    tag, wheel), both with the server's GitHub token; returns each file's fetch_url by filename."""
    with_token = [*fake_github.server_flags(), "--github-token", "s3cret"]
    owner_repo, tag = f"{release[0]}/{release[1]}", release[2]
    imported = run(wheelhouse_bin, "import-release", "--data", data, *with_token, "--mode", import_mode, owner_repo, tag)
    assert imported.returncode == 0 and imported.stdout.startswith("added"), imported.stdout + imported.stderr
    repository, asset_tag, wheel = one
    registered = run(wheelhouse_bin, "register", "--data", data, *with_token, "--mode", register_mode,
                     fake_github.download_url(*repository.split("/"), asset_tag, wheel.name))
    assert registered.returncode == 0 and registered.stdout.startswith("added"), registered.stdout + registered.stderr
    with sqlite3.connect(f"file:{data / 'catalog.db'}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT filename, fetch_url FROM files").fetchall())


def test_a_private_release_downloads_through_proxy_and_cache(wheelhouse_bin, fake_github, start_server, pip,
                                                             tmp_path):
    """A private repository's assets can be read only through GitHub's API with a token: the row
    keeps the asset's API URL (never the token), and proxy and cache modes fetch from it with the
    server's own token."""
    dist = tmp_path / "dist"
    proxied = native_wheel(dist, "private-proxied", "1.0", 20)
    cached = native_wheel(dist, "private-cached", "1.0", 21)
    fake_github.set(token="s3cret")
    api_urls = {}
    for tag, wheel in (("v1", proxied), ("v2", cached)):
        [asset] = fake_github.add_release("org", "private", tag, [wheel], private=True)["assets"]
        api_urls[wheel.name] = asset["url"]
    data = tmp_path / "data"
    with_token = [*fake_github.server_flags(), "--github-token", "s3cret"]
    # The one asset registered alone: the registrar asks the API for its id, and reads it there.
    rows = import_and_register(wheelhouse_bin, fake_github, data, ("org", "private", "v1"), "proxy",
                               ("org/private", "v2", cached), "cache")
    assert rows == api_urls
    assert not any(b"s3cret" in path.read_bytes() for path in data.rglob("*") if path.is_file())

    fake_github.clear_log()
    server = start_server(data, *with_token)
    target = tmp_path / "site"
    # pip checks each download against the sha256 the index lists.
    for wheel, seed in ((proxied, 20), (cached, 21)):
        module = wheel.name.split("-")[0]
        pip("install", "--no-deps", "--target", str(target / module), "--index-url", f"{server.url}simple/",
            f"{module.replace('_', '-')}==1.0")
        assert (target / module / module / "_native.so").read_bytes() == random.Random(seed).randbytes(2 * MiB)
    out = tmp_path / "out"
    assert curl(file_url(server, proxied), out) == (0, 200, proxied.stat().st_size)
    assert sha256_of(out) == sha256_of(proxied)
    blob = server.data_dir / "blobs" / "sha256" / sha256_of(cached)[:2] / sha256_of(cached)[2:4] / sha256_of(cached)
    wait_for(blob.exists)
    assert sha256_of(blob) == sha256_of(cached)

    # Every download went to the asset's API URL with the token; the token stayed off the storage
    # host, and the public download URLs (which answer 404 to everyone) were never asked.
    time.sleep(1)
    log = fake_github.log()
    for wheel in (proxied, cached):
        path = urllib.parse.urlsplit(api_urls[wheel.name]).path
        reads = [entry for entry in log if entry["host"] == "github" and entry["path"] == path]
        assert reads, log
        assert all(entry["authorization"] == "Bearer s3cret" and entry["accept"] == "application/octet-stream"
                   and entry["status"] == 302 for entry in reads), reads
    assert storage_gets(log) and all(entry["authorization"] is None for entry in log if entry["host"] == "storage")
    assert not any("/releases/download/" in entry["path"] for entry in log), log


def test_a_public_release_stays_off_the_api_when_a_token_is_configured(wheelhouse_bin, fake_github, start_server,
                                                                       tmp_path):
    """A token is for the private repositories; a public asset downloads without it, so its row keeps
    no API URL and a proxied download never costs an API request (each counts against the token's
    rate limit)."""
    dist = tmp_path / "dist"
    imported_wheel = native_wheel(dist, "public-imported", "1.0", 30)
    registered_wheel = native_wheel(dist, "public-registered", "1.0", 31)
    fake_github.set(token="s3cret")
    fake_github.add_release("org", "open", "v1", [imported_wheel])
    fake_github.add_release("org", "open", "v2", [registered_wheel])
    data = tmp_path / "data"
    with_token = [*fake_github.server_flags(), "--github-token", "s3cret"]
    rows = import_and_register(wheelhouse_bin, fake_github, data, ("org", "open", "v1"), "proxy",
                               ("org/open", "v2", registered_wheel), "proxy")
    assert rows == {imported_wheel.name: None, registered_wheel.name: None}

    fake_github.clear_log()
    server = start_server(data, *with_token)
    for wheel in (imported_wheel, registered_wheel):
        out = tmp_path / wheel.name
        assert curl(file_url(server, wheel), out) == (0, 200, wheel.stat().st_size)
        assert sha256_of(out) == sha256_of(wheel)
    log = fake_github.log()
    assert [entry for entry in log if "/releases/download/" in entry["path"]], log
    assert not any("/releases/assets/" in entry["path"] for entry in log), log
    assert all(entry["authorization"] is None for entry in log), log
