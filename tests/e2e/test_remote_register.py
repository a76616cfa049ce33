"""Registering GitHub release assets without downloading them: `wheelhouse import-release` and
`register`, POST /api/v1/import/github and /api/v1/remote, against the fake GitHub
(tests/e2e/fake_github.py). The fake's request log shows what registration read of each wheel."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import pathlib
import random
import ssl
import struct
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

from test_uploads import make_token
from wheelbuilder import build_wheel

PAYLOAD = 2 << 20  # incompressible bytes per wheel, so "a small fraction" means something


def payload(seed: int, size: int = PAYLOAD) -> bytes:
    return random.Random(seed).randbytes(size)


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def native_wheel(directory: pathlib.Path, name: str, version: str, seed: int) -> pathlib.Path:
    module = name.replace("-", "_")
    return build_wheel(directory, name, version, "py3-none-any",
                       files={f"{module}/__init__.py": f"VERSION = {version!r}\n", f"{module}/_native.so": payload(seed)},
                       summary=f"{name} for the remote tests")


def run(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=120)


def post(url: str, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as failure:
        return failure.code, json.loads(failure.read())


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as failure:
        return failure.code


def storage_bytes(log: list[dict]) -> int:
    return sum(entry["body_bytes"] for entry in log if entry["host"] == "storage")


@pytest.fixture
def release(fake_github, tmp_path):
    """owner/kernels v1: two native wheels of 2 MiB and a file that is not a wheel."""
    wheels = [native_wheel(tmp_path / "dist", "remote-kernels", "1.0", 1),
              native_wheel(tmp_path / "dist", "remote-extras", "2.0", 2)]
    notes = tmp_path / "dist" / "NOTES.txt"
    notes.write_text("release notes\n")
    fake_github.add_release("owner", "kernels", "v1", [*wheels, notes])
    return wheels


def test_import_release_reads_a_small_fraction_of_each_wheel(wheelhouse_bin, fake_github, release, tmp_path,
                                                             start_server):
    data = tmp_path / "data"
    fake_github.clear_log()
    imported = run(wheelhouse_bin, "import-release", "--data", data, *fake_github.server_flags(), "owner/kernels", "v1")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    lines = imported.stdout.splitlines()
    for wheel in release:
        line = next(line for line in lines if wheel.name in line)
        assert line.startswith("added"), line
        assert sha256_of(wheel) in line and "(github_api)" in line, line
    assert any(line.startswith("skipped") and "NOTES.txt" in line for line in lines), imported.stdout

    log = fake_github.log()
    storage = [entry for entry in log if entry["host"] == "storage"]
    assert storage and all(entry["range"] for entry in storage), "every read of an asset is a Range request"
    for wheel in release:
        size = wheel.stat().st_size
        read = sum(entry["body_bytes"] for entry in storage if entry["path"] == storage_path_of(fake_github, wheel, log))
        assert 0 < read < size * 0.10, f"{wheel.name}: read {read} of {size} bytes"
    assert storage_bytes(log) < sum(w.stat().st_size for w in release) * 0.10

    # Again: GitHub's digests say the files are there already, so no asset byte is read.
    fake_github.clear_log()
    again = run(wheelhouse_bin, "import-release", "--data", data, *fake_github.server_flags(), "owner/kernels", "v1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert sum(line.startswith("present") for line in again.stdout.splitlines()) == 2, again.stdout
    assert storage_bytes(fake_github.log()) == 0

    # fsck finds the data folder sound: METADATA stored, no blob wanted for a remote file.
    checked = run(wheelhouse_bin, "fsck", "--data", data)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # The index lists them with the sha256 of the bytes GitHub holds, METADATA from our store.
    server = start_server(data, *fake_github.server_flags())
    for wheel in release:
        project = wheel.name.split("-")[0].replace("_", "-")
        page = server.get(f"/simple/{project}/").read().decode()
        assert f"{wheel.name}#sha256={sha256_of(wheel)}" in page, page
        metadata = server.get(f"/files/{sha256_of(wheel)}/{wheel.name}.metadata").read()
        assert b"Name: " in metadata
        detail = json.loads(server.get(f"/api/v1/files/{wheel.name}").read())
        assert detail["location"]["mode"] == "redirect", detail
        assert detail["location"]["remote_url"] == fake_github.download_url("owner", "kernels", "v1", wheel.name)


def test_pip_installs_a_registered_wheel_through_redirect_mode(api_server, fake_github, release, tmp_path, pip):
    server, token = api_server
    status, body = post(server.url + "api/v1/import/github", token,
                        {"repository": "owner/kernels", "tag": "v1", "mode": "redirect"})
    assert status == 200 and body["added"] == 2, body
    # pip follows the 302 to the fake's storage host, over HTTPS with the fake's CA, and checks
    # the bytes against the sha256 the index lists.
    target = tmp_path / "target"
    pip("install", "--index-url", server.url + "simple/", "--cert", str(fake_github.ca), "--no-deps",
        "--target", str(target), "remote-kernels==1.0")
    assert (target / "remote_kernels" / "_native.so").read_bytes() == payload(1)


def storage_path_of(fake_github, wheel: pathlib.Path, log: list[dict]) -> str:
    """The storage path the github host redirected `wheel`'s download to (one asset id per name)."""
    assets = fake_github.call("/repos/owner/kernels/releases/tags/v1")["assets"]
    asset_id = next(asset["id"] for asset in assets if asset["name"] == wheel.name)
    return next(entry["path"] for entry in log
                if entry["host"] == "storage" and entry["path"].split("?")[0].endswith(f"/{asset_id}"))


@pytest.fixture
def api_server(wheelhouse_bin, fake_github, tmp_path, start_server):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags())
    return server, token


def test_the_api_registers_one_asset_and_imports_a_release(api_server, fake_github, release):
    server, token = api_server
    first, second = release
    url = fake_github.download_url("owner", "kernels", "v1", first.name)
    status, body = post(server.url + "api/v1/remote", token, {"url": url})
    assert status == 201, body
    assert body["outcome"] == "added" and body["sha256"] == sha256_of(first) and body["sha256_source"] == "github_api"
    assert body["mode"] == "redirect" and 0 < body["bytes_transferred"] < first.stat().st_size * 0.10, body

    status, body = post(server.url + "api/v1/remote", token, {"url": url, "sha256": sha256_of(first)})
    assert (status, body["outcome"], body["bytes_transferred"]) == (200, "present", 0), body
    status, body = post(server.url + "api/v1/remote", token, {"url": url, "sha256": "ab" * 32})
    assert status == 409 and "File already exists" in body["error"], body

    status, body = post(server.url + "api/v1/import/github", token, {"repository": "owner/kernels", "tag": "v1"})
    assert status == 200, body
    outcomes = {item["filename"]: item["outcome"] for item in body["files"]}
    assert outcomes == {first.name: "present", second.name: "added"}, body
    assert body["skipped"] == ["NOTES.txt"]
    page = server.get("/simple/remote-extras/").read().decode()
    assert f"{second.name}#sha256={sha256_of(second)}" in page

    status, body = post(server.url + "api/v1/import/github", token, {"repository": "owner/kernels", "tag": "v9"})
    assert status == 404 and "release v9 of owner/kernels" in body["error"], body
    status, body = post(server.url + "api/v1/import/github", token, {"repository": "not a repo", "tag": "v1"})
    assert status == 400 and "OWNER/REPO" in body["error"], body
    status, body = post(server.url + "api/v1/remote", "wrong-token", {"url": url})
    assert status == 401, body


def truncated_directory(wheel: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The wheel with half of its central directory cut out; the end record left as it was."""
    data = wheel.read_bytes()
    end = data.rfind(b"PK\x05\x06")
    size, offset = struct.unpack_from("<II", data, end + 12)
    out.write_bytes(data[: offset + size // 2] + data[end:])
    return out


def oversized_directory(wheel: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The wheel's end record claiming a 100 MiB central directory."""
    data = bytearray(wheel.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<II", data, end + 12, 100 << 20, 0)
    out.write_bytes(bytes(data))
    return out


def test_bad_assets_are_refused_precisely_and_leave_no_row(api_server, fake_github, tmp_path):
    server, token = api_server
    dist = tmp_path / "bad"
    good = native_wheel(dist, "remote-bad", "1.0", 3)
    cases = {
        "remote_bad-1.1-py3-none-any.whl": (None, truncated_directory(native_wheel(dist / "t", "remote-bad", "1.1", 4),
                                                                     dist / "remote_bad-1.1-py3-none-any.whl")),
        "remote_bad-1.2-py3-none-any.whl": (None, oversized_directory(native_wheel(dist / "o", "remote-bad", "1.2", 5),
                                                                     dist / "remote_bad-1.2-py3-none-any.whl")),
    }
    fake_github.add_release("owner", "bad", "v1", [good, *(path for _, path in cases.values())])
    notes = dist / "notes.txt"
    notes.write_text("not a wheel")
    fake_github.add_release("owner", "bad", "v1", [notes])

    def register(name: str, **extra) -> tuple[int, dict]:
        return post(server.url + "api/v1/remote", token,
                    {"url": fake_github.download_url("owner", "bad", "v1", name), **extra})

    def assert_no_row(name: str) -> None:
        assert status_of(server.url + f"api/v1/files/{name}") == 404

    status, body = register("remote_bad-1.1-py3-none-any.whl")
    assert status == 400 and "the zip central directory is truncated" in body["error"], body
    assert_no_row("remote_bad-1.1-py3-none-any.whl")

    status, body = register("remote_bad-1.2-py3-none-any.whl")
    assert status == 413 and "central directory is 104857600 bytes, past the limit" in body["error"], body
    assert_no_row("remote_bad-1.2-py3-none-any.whl")

    status, body = register("notes.txt")
    assert status == 400 and "must end in a wheel's or an sdist's filename" in body["error"], body

    status, body = post(server.url + "api/v1/remote", token,
                        {"url": "https://example.com/releases/download/v1/remote_bad-1.0-py3-none-any.whl"})
    assert status == 400 and "example.com" in body["error"], body
    assert_no_row("remote_bad-1.0-py3-none-any.whl")

    # The bytes served disagree with GitHub's digest: only a verifying registration can tell.
    fake_github.set_fault(good.name, wrong_bytes=True)
    status, body = register(good.name, verify=True)
    assert status == 400 and "the asset is not what its digest says" in body["error"], body
    assert f"the digest from github_api is {sha256_of(good)}" in body["error"], body
    assert_no_row(good.name)

    fake_github.set_fault(good.name, redirect_loop=True)
    status, body = register(good.name)
    assert status == 502 and "redirect" in body["error"], body
    assert_no_row(good.name)

    fake_github.set_fault(good.name, status=500)
    status, body = register(good.name)
    assert status == 502 and "answered 500" in body["error"], body
    assert_no_row(good.name)

    fake_github.set_fault(good.name, lie_length=1000)  # Content-Length claims more than is sent
    status, body = register(good.name, verify=True)
    assert status == 502, body
    assert_no_row(good.name)

    fake_github.set_fault(good.name)  # cleared: now it registers
    status, body = register(good.name, verify=True)
    assert status == 201 and body["sha256"] == sha256_of(good), body
    assert body["bytes_transferred"] > good.stat().st_size, "verify streams the whole asset once"


def test_cli_register_computes_the_digest_when_github_has_none(wheelhouse_bin, fake_github, tmp_path):
    dist = tmp_path / "dist"
    wheel = native_wheel(dist, "remote-plain", "1.0", 6)
    fake_github.call("/_control/setup", {"releases": [{"owner": "o", "repo": "plain", "tag": "v1", "assets": [
        {"path": str(wheel), "name": wheel.name, "digest": ""}]}]})  # as old assets: no usable digest
    data = tmp_path / "data"
    url = fake_github.download_url("o", "plain", "v1", wheel.name)
    registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--mode", "proxy", url)
    assert registered.returncode == 0, registered.stdout + registered.stderr
    assert registered.stdout.startswith("added") and f"sha256 {sha256_of(wheel)} (computed)" in registered.stdout
    assert " proxy " in registered.stdout

    # Other bytes claimed under the taken name: refused before anything is fetched.
    fake_github.clear_log()
    refused = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--sha256", "00" * 32, url)
    assert refused.returncode == 1
    assert refused.stdout.startswith("rejected") and "File already exists" in refused.stdout, refused.stdout
    assert storage_bytes(fake_github.log()) == 0
    # Asked to verify, the asset is read whole and held to the digest given.
    refused = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--sha256", "00" * 32,
                  "--verify", url)
    assert refused.returncode == 1
    assert f"the asset's bytes hash to sha256 {sha256_of(wheel)}, but the digest from request is {'00' * 32}" \
        in refused.stdout, refused.stdout


def test_import_lists_every_asset_honours_the_rate_limit_and_uses_the_token(wheelhouse_bin, fake_github, tmp_path):
    dist = tmp_path / "dist"
    wheel = native_wheel(dist, "remote-private", "1.0", 7)
    fake_github.set(token="s3cret", embedded_assets=0)  # the release JSON lists none: the assets endpoint must be read
    fake_github.add_release("org", "private", "v1", [wheel], private=True)
    data = tmp_path / "data"

    hidden = run(wheelhouse_bin, "import-release", "--data", data, *fake_github.server_flags(), "org/private", "v1")
    assert hidden.returncode == 1
    assert "no release v1 of org/private" in hidden.stderr and "needs a token" in hidden.stderr, hidden.stderr

    fake_github.clear_log()
    imported = run(wheelhouse_bin, "import-release", "--data", data, *fake_github.server_flags(),
                   "--github-token", "s3cret", "org/private", "v1")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert imported.stdout.startswith("added") and wheel.name in imported.stdout
    api = [entry for entry in fake_github.log() if entry["path"].startswith("/repos/")]
    assert api and all(entry["authorization"] == "Bearer s3cret" for entry in api)
    assert any("/assets?per_page=100" in entry["path"] for entry in api)
    # The token goes to the API only, never to the storage host.
    assert all(entry["authorization"] is None for entry in fake_github.log() if entry["host"] == "storage")

    fake_github.set(rate_remaining=0)
    limited = run(wheelhouse_bin, "import-release", "--data", data, *fake_github.server_flags(),
                  "--github-token", "s3cret", "org/private", "v1")
    assert limited.returncode == 1
    assert "GitHub's API rate limit is used up until 20" in limited.stderr and "UTC" in limited.stderr, limited.stderr


def test_reading_a_whole_asset_stops_at_the_upload_limit_or_the_probed_size(wheelhouse_bin, fake_github,
                                                                           start_server, tmp_path):
    """With no digest, registration reads the whole asset: from a host that ignores Range into a
    spool file bounded by --max-upload-size, else only for its hash, bounded by the size its
    Range answers gave. Past either it stops, leaving neither a spool file nor a row."""
    dist = tmp_path / "dist"
    whole = native_wheel(dist, "remote-whole", "1.0", 10)
    grown = native_wheel(dist, "remote-grown", "1.0", 11)
    fake_github.call("/_control/setup", {"releases": [{"owner": "o", "repo": "big", "tag": "v1", "assets": [
        {"path": str(wheel), "name": wheel.name, "digest": ""} for wheel in (whole, grown)]}]})
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    limit = 1 << 20
    server = start_server(data, *fake_github.server_flags(), "--max-upload-size", str(limit))

    def register(wheel: pathlib.Path) -> tuple[int, dict]:
        return post(server.url + "api/v1/remote", token, {"url": fake_github.download_url("o", "big", "v1", wheel.name)})

    def assert_nothing_left(wheel: pathlib.Path) -> None:
        assert status_of(server.url + f"api/v1/files/{wheel.name}") == 404
        assert list((data / "tmp").iterdir()) == []

    past_limit = f": more than this index takes for a file (max-upload-size: {limit} bytes, as for uploads)"
    fake_github.set_fault(whole.name, ignore_range=True)
    status, body = register(whole)
    assert status == 413 and f"announces {whole.stat().st_size} bytes{past_limit}" in body["error"], body
    assert_nothing_left(whole)
    # Without a Content-Length the size shows only while reading: the read stops at the limit.
    fake_github.set_fault(whole.name, ignore_range=True, no_length=True)
    status, body = register(whole)
    assert status == 413 and f"sent more than {limit} bytes{past_limit}" in body["error"], body
    assert limit <= body["bytes_transferred"] < whole.stat().st_size, body
    assert_nothing_left(whole)

    size = grown.stat().st_size
    fake_github.set_fault(grown.name, extra_bytes=1000)
    status, body = register(grown)
    assert status == 502 and f"announces {size + 1000} bytes, but its Range answers said {size};" in body["error"], body
    assert_nothing_left(grown)
    fake_github.set_fault(grown.name, extra_bytes=1000, no_length=True)
    status, body = register(grown)
    assert status == 502 and f"sent more than {size} bytes, but its Range answers said {size};" in body["error"], body
    assert_nothing_left(grown)


def test_one_private_asset_registers_through_the_api_with_the_token(wheelhouse_bin, fake_github, start_server,
                                                                    tmp_path):
    wheel = native_wheel(tmp_path / "dist", "remote-secret", "1.0", 12)
    fake_github.set(token="s3cret")
    [asset] = fake_github.add_release("org", "private", "v1", [wheel], private=True)["assets"]
    url = fake_github.download_url("org", "private", "v1", wheel.name)
    data = tmp_path / "data"

    hidden = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), url)
    assert hidden.returncode == 1
    assert "answered 404" in hidden.stdout and "private repository's" in hidden.stdout, hidden.stdout
    assert "--github-token" in hidden.stdout, hidden.stdout

    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags(), "--github-token", "s3cret")
    fake_github.clear_log()
    status, body = post(server.url + "api/v1/remote", token, {"url": url, "mode": "proxy"})
    assert status == 201 and body["sha256"] == sha256_of(wheel) and body["sha256_source"] == "github_api", body
    assert 0 < body["bytes_transferred"] < wheel.stat().st_size * 0.10, body
    detail = json.loads(server.get(f"/api/v1/files/{wheel.name}").read())
    assert detail["location"]["remote_url"] == url and detail["location"]["fetch_url"] == asset["url"], detail

    # The asset's own URL was tried once, without credentials, and refused; the bytes then came
    # through the asset's API URL with the token, which stayed off storage.
    log = fake_github.log()
    reads = [entry for entry in log if entry["path"] == urllib.parse.urlsplit(asset["url"]).path]
    assert reads and all(entry["authorization"] == "Bearer s3cret" and entry["accept"] == "application/octet-stream"
                         for entry in reads), log
    public = [entry for entry in log if "/releases/download/" in entry["path"]]
    assert [(entry["status"], entry["authorization"]) for entry in public] == [(404, None)], log
    assert all(entry["authorization"] is None for entry in log if entry["host"] == "storage")


class NoRangeHandler(http.server.SimpleHTTPRequestHandler):
    """Python's file server: it ignores Range and always sends the whole file (200)."""

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def no_range_host(fake_github, tmp_path):
    """An HTTPS host (the fake's certificate) that serves tmp_path/plain without Range support."""
    root = tmp_path / "plain"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(NoRangeHandler, directory=str(root)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(fake_github.directory / "server.pem", fake_github.directory / "server.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_host_without_range_support_is_read_whole_only_when_the_digest_needs_it(wheelhouse_bin, fake_github,
                                                                                 no_range_host, tmp_path):
    root, base = no_range_host
    wheel = native_wheel(root, "remote-norange", "1.0", 8)
    data = tmp_path / "data"
    url = f"{base}/{wheel.name}"

    given = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--sha256", sha256_of(wheel), url)
    assert given.returncode == 1
    assert "ignored the Range request and began sending the whole file (200, not 206)" in given.stdout, given.stdout

    whole = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), url)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert whole.stdout.startswith("added") and f"sha256 {sha256_of(wheel)} (computed)" in whole.stdout, whole.stdout

    # Read whole, it is checked as an upload is: RECORD's hashes too.
    lying = build_wheel(root, "remote-norange", "1.1", files={"remote_norange/_native.so": payload(9)},
                        record_overrides={"remote_norange/_native.so": ("sha256=" + "A" * 43, str(PAYLOAD))})
    refused = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), f"{base}/{lying.name}")
    assert refused.returncode == 1
    assert "RECORD says remote_norange/_native.so has sha256=" in refused.stdout, refused.stdout
