"""The attacker's view of sdists registered from GitHub Releases (issue 28 item 1): a hostile CI
job with a token limited to one project, and a hostile or lying release host. Each attack must
end in a precise 4xx (or 5xx for the host's fault) with the fix first, no row in `files`,
nothing left in DATA/tmp, and other clients still served."""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from test_hostile_sdists import upload
from test_remote_downloads import curl
from test_remote_register import native_wheel, post, run, status_of
from test_remote_sdists import STATIC_PKG_INFO, rows, sha256_of, static_sdist
from test_sdists import BAD_SDISTS, sdist_bytes
from test_uploads import make_token
from trusted_publishing import fresh_issuer, issuer  # noqa: F401

MiB = 1 << 20


def tmp_left(data: pathlib.Path) -> list[pathlib.Path]:
    return list((data / "tmp").iterdir()) if (data / "tmp").exists() else []


def downloads(fake_github) -> list[str]:
    return [entry["path"] for entry in fake_github.log()
            if "/releases/download/" in entry["path"] or entry["host"] == "storage"]


@pytest.fixture
def limited(wheelhouse_bin, fake_github, tmp_path, start_server):
    """A server and a token limited to project remote-own (and an unlimited one)."""
    data = tmp_path / "data"
    own = make_token(wheelhouse_bin, data, "ci-own", "--scope", "upload", "--project", "remote-own")
    admin = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags(), "--remote-read-timeout", "3")
    return server, data, own, admin


# --- a hostile CI job with a token for remote-own ------------------------------------------------

def test_url_tricks_do_not_let_a_limited_token_register_another_project(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    dist = tmp_path / "dist"
    mine = static_sdist(dist / "a", "remote-own", "1.0")
    theirs = static_sdist(dist / "b", "remote-other", "1.0")
    fake_github.add_release("o", "mixed", "v1", [mine, theirs])
    base = fake_github.download_url("o", "mixed", "v1", "")
    fake_github.clear_log()
    tricks = [
        base + theirs.name + "?as=" + mine.name,
        base + theirs.name + "#" + mine.name,
        base + theirs.name + "%2F..%2F" + mine.name,
        base + mine.name + "%2F..%2F" + theirs.name,
        base + theirs.name + "/" + "%2E%2E/" + mine.name.replace("_", "%5F"),
        base + "remote_own-1.0.tar.gz.tar.gz",
        base + "remote_other-1.0.TAR.GZ",
        base + "REMOTE_OTHER-1.0.tar.gz",
        base + "remote_own-1.0.tar.gz%00.whl",
        base + "..",
        base,
    ]
    for url in tricks:
        status, body = post(server.url + "api/v1/remote", own, {"url": url})
        assert status in (400, 403, 404), (url, status, body)
        assert rows(data) == [], (url, body)
    # None of the tricks led to reading the other project's bytes (a 404 for an odd path is no harm).
    served = [entry for entry in fake_github.log() if entry["status"] in (200, 206, 302)
              and theirs.name in entry["path"]]
    assert served == [], served
    assert tmp_left(data) == []
    status, body = post(server.url + "api/v1/remote", own, {"url": base + mine.name})
    assert status == 201, body
    assert rows(data) == [(mine.name, "redirect")]


def test_an_sdist_named_for_the_tokens_project_holding_another_is_refused(limited, fake_github, tmp_path):
    """The URL says remote_own-1.0.tar.gz; the bytes are remote-other's (PKG-INFO, root folder)."""
    server, data, own, _ = limited
    dist = tmp_path / "dist"
    theirs = static_sdist(dist / "b", "remote-other", "1.0")
    disguised = dist / "remote_own-1.0.tar.gz"
    disguised.write_bytes(theirs.read_bytes())
    other_version = dist / "c" / "remote_own-2.0.tar.gz"
    other_version.parent.mkdir(parents=True)
    other_version.write_bytes(static_sdist(dist / "d", "remote-own", "1.0").read_bytes())
    wrong_root = dist / "e" / "remote_own-3.0.tar.gz"
    wrong_root.parent.mkdir(parents=True)
    wrong_root.write_bytes(sdist_bytes("remote_own", "3.0", root="remote_other-3.0",
                                       pkg_info=STATIC_PKG_INFO.format(name="remote-own", version="3.0")))
    fake_github.add_release("o", "d1", "v1", [disguised])
    fake_github.add_release("o", "d2", "v1", [other_version])
    fake_github.add_release("o", "d3", "v1", [wrong_root])
    for repo, path, why in (("d1", disguised, "another project"),
                            ("d2", other_version, "another project or version"),
                            ("d3", wrong_root, "")):
        status, body = post(server.url + "api/v1/remote", own,
                            {"url": fake_github.download_url("o", repo, "v1", path.name)})
        assert status == 400 and why in body["error"], (path.name, body)
        assert body["error"][:1].islower() or body["error"].startswith(("rename", "rebuild")), body
    assert rows(data) == [] and tmp_left(data) == []


def test_import_with_a_limited_token_takes_only_its_projects_sdist_and_wheel(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    dist = tmp_path / "dist"
    their_wheel = native_wheel(dist / "w", "remote-other", "1.0", 31)
    my_sdist = static_sdist(dist / "a", "remote-own", "1.0")
    their_sdist = static_sdist(dist / "b", "remote-other", "1.0")
    nameless = dist / "remote-own.tar.gz"  # parses as no PEP 625 name: skipped, not registered
    nameless.write_bytes(my_sdist.read_bytes())
    fake_github.add_release("o", "mixed", "v1", [their_wheel, my_sdist, their_sdist, nameless])
    fake_github.clear_log()
    status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/mixed", "tag": "v1"})
    assert status == 200 and body["added"] == 1 and body["rejected"] == 2, body
    assert nameless.name in body["skipped"], body
    refused = {entry["filename"]: entry for entry in body["files"] if entry["outcome"] == "rejected"}
    assert set(refused) == {their_wheel.name, their_sdist.name}, body
    assert rows(data) == [(my_sdist.name, "redirect")]
    read = [path for path in downloads(fake_github) if their_wheel.name in path or their_sdist.name in path]
    assert read == [], read
    assert tmp_left(data) == []


# --- a lying or failing release host --------------------------------------------------------------

HOST_FAULTS = [
    ("extra bytes past the listed size", {"extra_bytes": 4096}),
    ("a flipped first byte", {"wrong_bytes": True}),
    ("a reset halfway", {"reset_after": 150_000}),
    ("a Content-Length that lies", {"lie_length": 10_000}),
    ("a stall past the read timeout", {"stall_after": 100_000, "stall_seconds": 8}),
    ("a 500", {"status": 500}),
]


@pytest.mark.parametrize("what,fault", HOST_FAULTS, ids=[fault[0] for fault in HOST_FAULTS])
def test_a_lying_host_registers_nothing_and_leaves_no_spool(limited, fake_github, tmp_path, what, fault):
    server, data, own, admin = limited
    sdist = static_sdist(tmp_path / "dist", "remote-own", "1.0", payload=os.urandom(300_000))
    fine = static_sdist(tmp_path / "dist2", "remote-own", "2.0")
    fake_github.add_release("o", "lying", "v1", [sdist, fine])
    fake_github.set_fault(sdist.name, **fault)
    url = fake_github.download_url("o", "lying", "v1", sdist.name)
    results: dict = {}

    def register() -> None:
        results["answer"] = post(server.url + "api/v1/remote", own, {"url": url})

    worker = threading.Thread(target=register)
    started = time.monotonic()
    worker.start()
    time.sleep(0.3)
    # Other clients are served meanwhile.
    assert status_of(server.url + "simple/") == 200
    worker.join(timeout=60)
    assert not worker.is_alive(), "the registration hangs"
    status, body = results["answer"]
    assert 400 <= status < 600 and status not in (500,), (status, body)
    assert time.monotonic() - started < 30
    assert rows(data) == [], body
    assert tmp_left(data) == [], body
    assert status_of(server.url + f"api/v1/files/{sdist.name}") == 404
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "lying", "v1", fine.name)})
    assert status == 201, body


@pytest.mark.parametrize("fault", [{"no_length": True}, {"extra_bytes": 3 * MiB}, {"lie_length": 1}],
                         ids=["no length", "more than the limit", "lying length"])
def test_a_host_sending_past_the_upload_limit_is_stopped_at_it(wheelhouse_bin, fake_github, tmp_path, start_server,
                                                              fault):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    limit = 1 * MiB
    server = start_server(data, *fake_github.server_flags(), "--max-upload-size", str(limit))
    # Just under the limit as listed; the host then sends more (or no length at all).
    sdist = static_sdist(tmp_path / "dist", "remote-edge", "1.0", payload=os.urandom(limit - 8192))
    assert sdist.stat().st_size <= limit
    fake_github.add_release("o", "edge", "v1", [sdist], digest="")
    fake_github.set_fault(sdist.name, **fault)
    status, body = post(server.url + "api/v1/remote", token, {"url": fake_github.download_url("o", "edge", "v1", sdist.name)})
    if fault.get("no_length"):
        assert status == 201, body  # the whole file within the limit is fine without a length
    else:
        assert 400 <= status < 600 and status != 500, body
        assert rows(data) == []
    assert tmp_left(data) == []


def test_a_gzip_bomb_and_the_bad_sdists_of_uploads_are_refused_from_a_release(limited, fake_github, tmp_path):
    server, data, _, admin = limited
    cases = [case for case in BAD_SDISTS if case[0] == "demo-1.0.tar.gz"]
    for number, (filename, make, reason) in enumerate(cases):
        path = tmp_path / f"case{number}" / filename
        path.parent.mkdir()
        path.write_bytes(make())
        fake_github.add_release("evil", f"demo{number}", "v1", [path])
        status, body = post(server.url + "api/v1/remote", admin,
                            {"url": fake_github.download_url("evil", f"demo{number}", "v1", filename)})
        assert status == 400 and body["error"].startswith(reason), (reason, body)
    assert rows(data) == [] and tmp_left(data) == []


def test_odd_filenames_are_refused_before_any_request(limited, fake_github, tmp_path):
    server, data, _, admin = limited
    sdist = static_sdist(tmp_path / "dist", "demo", "1.0")
    fake_github.add_release("o", "odd", "v1", [sdist])
    fake_github.clear_log()
    base = fake_github.download_url("o", "odd", "v1", "")
    for name in ("demo-1.0.TAR.GZ", "demo-1.0.tar.gz.tar.gz", "Demo-1.0.tar.gz", "demo-1.0.tgz",
                 "demo-1.0.tar.bz2", "demo.tar.gz", "demo-1.0-1.tar.gz", "demo-1.0.tar.gz%20",
                 "demo-1.0.tar.gz%00", "demo%2F1.0.tar.gz", "..%2Fdemo-1.0.tar.gz"):
        status, body = post(server.url + "api/v1/remote", admin, {"url": base + name})
        assert status == 400 and "filename" in body["error"], (name, body)
    assert downloads(fake_github) == []
    assert rows(data) == [] and tmp_left(data) == []


# --- what is listed afterwards -------------------------------------------------------------------

@pytest.mark.parametrize("pkg_info", [
    "Metadata-Version: 2.1\nName: remote-dyn\nVersion: 1.0\n\n",
    "Metadata-Version: 2.2\nName: remote-dyn\nVersion: 1.0\nDynamic: Requires-Dist\n\n",
], ids=["2.1", "2.2 dynamic"])
def test_metadata_of_a_remote_sdist_with_unreliable_pkg_info_is_404(limited, fake_github, tmp_path, pkg_info):
    server, data, _, admin = limited
    path = tmp_path / "remote_dyn-1.0.tar.gz"
    path.write_bytes(sdist_bytes("remote_dyn", "1.0", root="remote_dyn-1.0", pkg_info=pkg_info))
    fake_github.add_release("o", "dyn", "v1", [path])
    status, body = post(server.url + "api/v1/remote", admin, {"url": fake_github.download_url("o", "dyn", "v1", path.name)})
    assert status == 201, body
    assert status_of(server.url + f"files/{sha256_of(path)}/{path.name}.metadata") == 404
    page = server.get("/simple/remote-dyn/").read().decode()
    assert "data-core-metadata" not in page and "data-dist-info-metadata" not in page, page


def test_the_same_sdist_registered_twice_at_once_is_one_row(limited, fake_github, tmp_path, wheelhouse_bin):
    server, data, _, admin = limited
    sdist = static_sdist(tmp_path / "dist", "remote-twice", "1.0", payload=b"\x02" * 400_000)
    fake_github.add_release("o", "twice", "v1", [sdist])
    url = fake_github.download_url("o", "twice", "v1", sdist.name)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: post(server.url + "api/v1/remote", admin, {"url": url}), range(4)))
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200, 200, 200, 201], answers
    assert rows(data) == [(sdist.name, "redirect")]
    assert tmp_left(data) == []
    checked = run(wheelhouse_bin, "fsck", "--data", data)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_upload_over_a_remote_sdist_with_other_bytes_is_409(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    sdist = static_sdist(tmp_path / "dist", "remote-own", "1.0")
    fake_github.add_release("o", "up", "v1", [sdist])
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "up", "v1", sdist.name)})
    assert status == 201, body
    other = sdist_bytes("remote_own", "1.0", [("remote_own-1.0/other.py", b"x = 1\n")], root="remote_own-1.0",
                        pkg_info=STATIC_PKG_INFO.format(name="remote-own", version="1.0"))
    assert upload(server, own, sdist.name, other)[0] == 409
    assert rows(data) == [(sdist.name, "redirect")]
    assert upload(server, own, sdist.name, sdist.read_bytes())[0] in (200, 201, 409)
    assert tmp_left(data) == []


def test_a_remote_sdist_whose_bytes_change_is_not_served_by_proxy_or_cache(wheelhouse_bin, fake_github, tmp_path,
                                                                          start_server):
    dist = tmp_path / "dist"
    proxied = static_sdist(dist / "a", "remote-proxied", "1.0", payload=bytes(range(256)) * 2000)
    cached = static_sdist(dist / "b", "remote-cached", "1.0", payload=bytes(range(256)) * 2000)
    fake_github.add_release("o", "swap", "v1", [proxied, cached])
    data = tmp_path / "data"
    for path, mode in ((proxied, "proxy"), (cached, "cache")):
        registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--mode", mode,
                         fake_github.download_url("o", "swap", "v1", path.name))
        assert registered.returncode == 0, registered.stdout + registered.stderr
    server = start_server(data, *fake_github.server_flags())
    fake_github.set_fault(proxied.name, wrong_bytes=True)
    fake_github.set_fault(cached.name, wrong_bytes=True)
    out = tmp_path / "out"
    for path in (proxied, cached):
        code, status, received = curl(f"{server.url}files/{sha256_of(path)}/{path.name}", out)
        assert not (code == 0 and status == 200 and received == path.stat().st_size), (path.name, code, status, received)
    assert not any((data / "blobs").rglob(sha256_of(cached))) if (data / "blobs").exists() else True
    # Fixed upstream: served again, in full, and cached.
    fake_github.set_fault(cached.name)
    assert curl(f"{server.url}files/{sha256_of(cached)}/{cached.name}", out) == (0, 200, cached.stat().st_size)
    assert out.read_bytes() == cached.read_bytes()


def test_import_holds_the_token_to_the_file_it_registers_not_to_the_listed_name(wheelhouse_bin, fake_github, tmp_path,
                                                                              start_server):
    """A lying release listing (a hostile GitHub Enterprise, or a proxy in front of the API):
    the asset is *named* remote_own-1.0.tar.gz, its download URL is remote_other's. The token for
    remote-own is checked against the name; the registrar registers what the URL names."""
    import http.server
    import ssl

    dist = tmp_path / "dist"
    theirs = static_sdist(dist / "b", "remote-other", "1.0")
    release = fake_github.add_release("o", "lie", "v1", [theirs])
    for asset in release["assets"]:
        asset["name"] = "remote_own-1.0.tar.gz"
    listing = json.dumps(release).encode()
    assets_listing = json.dumps(release["assets"]).encode()

    class Lying(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002
            pass

        def do_GET(self):  # noqa: N802
            body = b'{"message": "Not Found"}'
            if self.path.startswith("/repos/o/lie/releases/tags/v1"):
                body = listing
            elif self.path.startswith(f"/repos/o/lie/releases/{release['id']}/assets"):
                body = assets_listing
            self.send_response(404 if body.startswith(b'{"message"') else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    lying_api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Lying)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(fake_github.ca.parent / "server.pem", fake_github.ca.parent / "server.key")
    lying_api.socket = context.wrap_socket(lying_api.socket, server_side=True)
    threading.Thread(target=lying_api.serve_forever, daemon=True).start()
    try:
        data = tmp_path / "data"
        own = make_token(wheelhouse_bin, data, "ci-own", "--scope", "upload", "--project", "remote-own")
        flags = fake_github.server_flags()
        flags[flags.index("--github-api-url") + 1] = f"https://127.0.0.1:{lying_api.server_address[1]}"
        server = start_server(data, *flags)
        status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/lie", "tag": "v1"})
        assert status in (200, 502), body
        assert rows(data) == [], (rows(data), body)
    finally:
        lying_api.shutdown()
        lying_api.server_close()


def test_a_build_limited_token_registers_no_sdist_outside_its_patterns(wheelhouse_bin, fake_github, tmp_path,
                                                                       start_server, fresh_issuer):
    from publishing_clients import pypa_action
    from trusted_publishing import Index, index_arguments

    bundle = tmp_path / "bundle.pem"
    bundle.write_text(fake_github.ca.read_text() + fresh_issuer.ca.read_text())
    data = tmp_path / "data"
    data.mkdir()
    flags = fake_github.server_flags()
    flags[flags.index("--ca-bundle") + 1] = str(bundle)
    args = [a for a in index_arguments("http", fresh_issuer)
            if a not in ("--ca-bundle", str(fresh_issuer.ca), "--remote-allow-private-addresses")]
    server = start_server(data, *flags, *args)
    index = Index(server, data, "http", fresh_issuer, wheelhouse_bin)
    index.publisher("remote-built", "--labels", "cu130*")
    exchanged = pypa_action(server.url + "legacy/", fresh_issuer.ci_environment(), fresh_issuer.ca, scheme="http")
    assert exchanged.status == 200, exchanged.refusal
    sdist = static_sdist(tmp_path / "dist", "remote-built", "1.0")
    upper = tmp_path / "dist" / "u" / "remote_built-1.0.TAR.GZ"
    upper.parent.mkdir()
    upper.write_bytes(sdist.read_bytes())
    fake_github.add_release("o", "built", "v1", [sdist, upper])
    fake_github.clear_log()
    status, body = post(server.url + "api/v1/remote", exchanged.token,
                        {"url": fake_github.download_url("o", "built", "v1", sdist.name)})
    assert status == 403 and "may publish only builds labelled 'cu130*'" in body["error"], body
    status, body = post(server.url + "api/v1/remote", exchanged.token,
                        {"url": fake_github.download_url("o", "built", "v1", upper.name)})
    assert status in (400, 403), body
    status, body = post(server.url + "api/v1/import/github", exchanged.token, {"repository": "o/built", "tag": "v1"})
    assert status == 403, body
    assert rows(data) == [] and downloads(fake_github) == []


def test_a_replaced_release_sdist_is_refused_on_reimport_and_the_row_kept(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    first = static_sdist(tmp_path / "a", "remote-own", "1.0", payload=b"first")
    fake_github.add_release("o", "re", "v1", [first])
    status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/re", "tag": "v1"})
    assert status == 200 and body["added"] == 1, body
    second = static_sdist(tmp_path / "b", "remote-own", "1.0", payload=b"second, other bytes")
    fake_github.add_release("o", "re", "v1", [second])  # the same name, new bytes and digest
    status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/re", "tag": "v1"})
    assert status == 200 and body["rejected"] == 1, body
    [report] = body["files"]
    assert "409" in json.dumps(report) or "already" in report.get("error", ""), report
    status, body = post(server.url + "api/v1/remote", own,
                        {"url": fake_github.download_url("o", "re", "v1", second.name), "verify": True})
    assert status == 409, body
    assert rows(data) == [(first.name, "redirect")]
    assert tmp_left(data) == []
    assert server.get(f"/api/v1/files/{first.name}").status == 200
    detail = json.loads(server.get(f"/api/v1/files/{first.name}").read())
    assert detail["sha256"] == sha256_of(first), detail


def test_two_releases_racing_one_sdist_name_with_other_bytes_store_one(limited, fake_github, tmp_path,
                                                                        wheelhouse_bin):
    server, data, own, admin = limited
    first = static_sdist(tmp_path / "a", "remote-own", "1.0", payload=os.urandom(200_000))
    second = static_sdist(tmp_path / "b", "remote-own", "1.0", payload=os.urandom(200_000))
    fake_github.add_release("o", "r1", "v1", [first])
    fake_github.add_release("o", "r2", "v1", [second])
    urls = [fake_github.download_url("o", repo, "v1", first.name) for repo in ("r1", "r2", "r1", "r2")]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda url: post(server.url + "api/v1/remote", own, {"url": url}), urls))
    statuses = sorted(status for status, _ in answers)
    assert statuses.count(201) == 1 and statuses.count(409) >= 1, answers
    assert set(statuses) <= {200, 201, 409}, answers
    for status, body in answers:
        if status == 409:
            assert body["error"][:1].isalpha(), body
    assert len(rows(data)) == 1 and tmp_left(data) == []
    checked = run(wheelhouse_bin, "fsck", "--data", data)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("fault,read_timeout", [
    ({"stall_after": 100_000, "stall_seconds": 20}, "20"),
    ({"slow_bps": 20_000}, "3"),  # never silent for long: only the end of the file ends it (~20 s)
], ids=["stalled", "trickling"])
def test_sigterm_during_a_slow_sdist_registration_exits_within_drain_timeout(wheelhouse_bin, fake_github, tmp_path,
                                                                     start_server, fault, read_timeout):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags(), "--drain-timeout", "1", "--remote-read-timeout",
                          read_timeout)
    sdist = static_sdist(tmp_path / "dist", "remote-stop", "1.0", payload=os.urandom(400_000))
    fake_github.add_release("o", "stop", "v1", [sdist])
    fake_github.set_fault(sdist.name, **fault)
    def register() -> None:
        # The server may close this request's connection as it stops: that is an answer too.
        try:
            post(server.url + "api/v1/remote", token, {"url": fake_github.download_url("o", "stop", "v1", sdist.name)})
        except (ConnectionError, OSError):
            pass

    worker = threading.Thread(target=register, daemon=True)
    worker.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not tmp_left(data):
        time.sleep(0.05)
    assert tmp_left(data), "the spool was never made"
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=30)  # the stall (20 s) ends by itself before this
    except subprocess.TimeoutExpired:
        pass
    took = time.monotonic() - started
    code = server.stop()
    assert code == 0, server.stderr()
    assert len(rows(data)) <= 1  # a trickle that ended may have registered: the file is sound
    assert tmp_left(data) == [], tmp_left(data)
    # --drain-timeout 1: serve must not wait out a release host that went silent mid-sdist.
    assert took < 8, f"serve exited {took:.1f} s after SIGTERM, past --drain-timeout 1"


@pytest.mark.parametrize("fault", [
    {"redirect_to": "https://evil.example.invalid/remote_own-1.0.tar.gz"},
    {"redirect_to": "http://127.0.0.1:9/remote_own-1.0.tar.gz"},
    {"redirect_to": "file:///etc/passwd"},
    {"redirect_loop": True},
], ids=["another host", "plain http", "file scheme", "a loop"])
def test_a_release_download_redirecting_elsewhere_registers_nothing(limited, fake_github, tmp_path, fault):
    server, data, own, _ = limited
    sdist = static_sdist(tmp_path / "dist", "remote-own", "1.0")
    fake_github.add_release("o", "redir", "v1", [sdist])
    fake_github.set_fault(sdist.name, **fault)
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "redir", "v1", sdist.name)})
    assert 400 <= status < 600 and status != 500, body
    assert rows(data) == [] and tmp_left(data) == []


@pytest.mark.parametrize("fault", [{"extra_bytes": 1000}, {"no_length": True, "extra_bytes": 10},
                                   {"lie_length": 5000}, {"reset_after": 50_000}],
                         ids=["extra bytes", "no length and extra", "lying length", "reset"])
@pytest.mark.parametrize("mode", ["proxy", "cache"])
def test_a_proxied_or_cached_sdist_never_serves_other_bytes_as_whole(wheelhouse_bin, fake_github, tmp_path,
                                                                     start_server, mode, fault):
    sdist = static_sdist(tmp_path / "dist", "remote-served", "1.0", payload=os.urandom(200_000))
    fake_github.add_release("o", "served", "v1", [sdist])
    data = tmp_path / "data"
    registered = run(wheelhouse_bin, "register", "--data", data, *fake_github.server_flags(), "--mode", mode,
                     fake_github.download_url("o", "served", "v1", sdist.name))
    assert registered.returncode == 0, registered.stdout + registered.stderr
    server = start_server(data, *fake_github.server_flags(), "--remote-read-timeout", "3")
    fake_github.set_fault(sdist.name, **fault)
    out = tmp_path / "out"
    code, status, received = curl(f"{server.url}files/{sha256_of(sdist)}/{sdist.name}", out)
    if code == 0 and status == 200:
        assert out.read_bytes() == sdist.read_bytes(), (code, status, received)
    kept = [path for path in data.rglob(sha256_of(sdist)) if path.is_file()]
    assert all(sha256_of(path) == sha256_of(sdist) for path in kept), kept
    assert tmp_left(data) == []
    assert status_of(server.url + "simple/") == 200


def test_a_digest_of_another_file_does_not_pass_for_present(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    one = static_sdist(tmp_path / "a", "remote-own", "1.0")
    two = static_sdist(tmp_path / "b", "remote-own", "2.0")
    fake_github.add_release("o", "pair", "v1", [one, two], digest="")
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "pair", "v1", one.name)})
    assert status == 201, body
    status, body = post(server.url + "api/v1/remote", own,
                        {"url": fake_github.download_url("o", "pair", "v1", two.name), "sha256": sha256_of(one)})
    assert status == 400 and "not what its digest says" in body["error"], body
    assert rows(data) == [(one.name, "redirect")] and tmp_left(data) == []


def test_registering_an_uploaded_sdists_url_keeps_the_local_copy(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    sdist = static_sdist(tmp_path / "a", "remote-own", "1.0")
    assert upload(server, own, sdist.name, sdist.read_bytes())[0] in (200, 201)
    fake_github.add_release("o", "local", "v1", [sdist])
    status, body = post(server.url + "api/v1/remote", own,
                        {"url": fake_github.download_url("o", "local", "v1", sdist.name), "mode": "redirect"})
    assert status == 200 and body["outcome"] == "present", body
    assert rows(data) == [(sdist.name, "local")]
    other = static_sdist(tmp_path / "b", "remote-own", "1.0", payload=b"other")
    fake_github.add_release("o", "local2", "v1", [other])
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "local2", "v1", other.name)})
    assert status == 409, body
    assert rows(data) == [(sdist.name, "local")] and tmp_left(data) == []
    assert server.get(f"/files/{sha256_of(sdist)}/{sdist.name}").read() == sdist.read_bytes()


@pytest.mark.parametrize("field", ["Name", "Version"])
def test_an_sdist_declaring_its_name_or_version_dynamic_is_refused_as_an_upload_is(limited, fake_github, tmp_path,
                                                                                    field):
    """PEP 643: Name and Version must never be listed in Dynamic."""
    server, data, _, admin = limited
    pkg_info = f"Metadata-Version: 2.2\nName: remote-dynname\nVersion: 1.0\nDynamic: {field}\n\n"
    path = tmp_path / "remote_dynname-1.0.tar.gz"
    path.write_bytes(sdist_bytes("remote_dynname", "1.0", root="remote_dynname-1.0", pkg_info=pkg_info))
    uploaded = upload(server, admin, path.name, path.read_bytes())
    fake_github.add_release("o", "dn", "v1", [path])
    status, body = post(server.url + "api/v1/remote", admin, {"url": fake_github.download_url("o", "dn", "v1", path.name)})
    # The remote path judges as the upload path does; both must refuse.
    assert uploaded[0] == 400, uploaded
    assert status == 400, body


def test_a_second_pkg_info_member_cannot_make_the_served_metadata_lie(limited, fake_github, tmp_path):
    """Two root/PKG-INFO members: Python's tarfile (and so pip, which unpacks it) keeps the last;
    the index must serve that one as .metadata, or refuse the sdist, never the first."""
    import gzip
    import io
    import tarfile

    server, data, own, _ = limited
    first = STATIC_PKG_INFO.format(name="remote-own", version="1.0") .replace("\n\n", "\nRequires-Dist: harmless\n\n")
    last = STATIC_PKG_INFO.format(name="remote-own", version="1.0").replace("\n\n", "\nRequires-Dist: evil-dep\n\n")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, body in (("remote_own-1.0/PKG-INFO", first.encode()),
                           ("remote_own-1.0/setup.py", b"from setuptools import setup\nsetup()\n"),
                           ("remote_own-1.0/PKG-INFO", last.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    path = tmp_path / "remote_own-1.0.tar.gz"
    path.write_bytes(gzip.compress(out.getvalue()))
    with tarfile.open(path) as archive:
        extracted = archive.extractfile("remote_own-1.0/PKG-INFO").read().decode()
    assert "evil-dep" in extracted
    fake_github.add_release("o", "twopkg", "v1", [path])
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "twopkg", "v1", path.name)})
    if status == 400:
        assert tmp_left(data) == [] and rows(data) == []
        return
    assert status == 201, body
    metadata_url = server.url + f"files/{sha256_of(path)}/{path.name}.metadata"
    if status_of(metadata_url) == 200:
        with urllib.request.urlopen(metadata_url, timeout=10) as answer:
            served = answer.read().decode()
        assert served == extracted, served


@pytest.mark.parametrize("link_type", ["symlink", "hardlink"])
def test_a_linked_pkg_info_cannot_make_the_served_metadata_lie(limited, fake_github, tmp_path, link_type):
    import gzip
    import io
    import tarfile

    server, data, own, _ = limited
    real = STATIC_PKG_INFO.format(name="remote-own", version="1.0").replace("\n\n", "\nRequires-Dist: evil-dep\n\n")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        body = real.encode()
        info = tarfile.TarInfo("remote_own-1.0/meta.txt")
        info.size = len(body)
        archive.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("remote_own-1.0/PKG-INFO")
        if link_type == "symlink":
            link.type, link.linkname = tarfile.SYMTYPE, "meta.txt"
        else:
            link.type, link.linkname = tarfile.LNKTYPE, "remote_own-1.0/meta.txt"
        archive.addfile(link)
        setup = b"from setuptools import setup\nsetup()\n"
        info = tarfile.TarInfo("remote_own-1.0/setup.py")
        info.size = len(setup)
        archive.addfile(info, io.BytesIO(setup))
    path = tmp_path / "remote_own-1.0.tar.gz"
    path.write_bytes(gzip.compress(out.getvalue()))
    fake_github.add_release("o", "linkpkg", "v1", [path])
    status, body = post(server.url + "api/v1/remote", own, {"url": fake_github.download_url("o", "linkpkg", "v1", path.name)})
    if status == 400:
        assert body["error"][:1].isalpha() and rows(data) == [] and tmp_left(data) == [], body
        return
    assert status == 201, body
    metadata_url = server.url + f"files/{sha256_of(path)}/{path.name}.metadata"
    if status_of(metadata_url) == 200:
        with urllib.request.urlopen(metadata_url, timeout=10) as answer:
            assert answer.read().decode() == real


def test_import_with_a_limited_token_fails_closed_on_names_of_no_project(limited, fake_github, tmp_path):
    server, data, own, _ = limited
    dist = tmp_path / "dist"
    mine = static_sdist(dist / "a", "remote-own", "1.0")
    odd = []
    for name in ("evil.whl", "remote_own.whl", "remote_own-1.0.tar.gz.whl", "remote_other-1.0-py3-none-any.whl.tar.gz"):
        path = dist / "odd" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(mine.read_bytes())
        odd.append(path)
    fake_github.add_release("o", "odd", "v1", [mine, *odd])
    fake_github.clear_log()
    status, body = post(server.url + "api/v1/import/github", own, {"repository": "o/odd", "tag": "v1"})
    assert status == 200 and body["added"] == 1, body
    for entry in body["files"]:
        if entry["filename"] != mine.name:
            assert entry["outcome"] == "rejected" and entry["filename"].endswith(".whl"), entry
    assert rows(data) == [(mine.name, "redirect")] and tmp_left(data) == []
    read = {path.rsplit("/", 1)[-1] for path in downloads(fake_github) if "/releases/download/" in path}
    assert read <= {mine.name}, read
