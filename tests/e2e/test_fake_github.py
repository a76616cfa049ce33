"""The fake GitHub itself, checked with curl, so the release-asset tests stand on something
that behaves as GitHub does: TLS from its own CA, API pagination and rate-limit headers, private
repositories behind a token, downloads that redirect to a storage host with Range support, and
the faults the tests switch on."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess

import pytest


def curl(fake, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["curl", "-sS", "--cacert", str(fake.ca), "--max-time", "30", *args],
                            capture_output=True, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"curl {args} failed ({result.returncode}): {result.stderr.decode()}")
    return result


def headers_of(raw: bytes) -> dict[str, str]:
    """The last response's headers of `curl -D -` output, names in lower case."""
    blocks = [b for b in raw.decode("latin-1").split("\r\n\r\n") if b.startswith("HTTP/")]
    lines = blocks[-1].split("\r\n")
    out = {"status": lines[0].split()[1]}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        out[name.strip().lower()] = value.strip()
    return out


@pytest.fixture
def wheel_file(tmp_path) -> pathlib.Path:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_bytes(os.urandom(200_000))
    return path


def test_a_release_lists_its_assets_with_digests(fake_github, wheel_file):
    fake_github.add_release("owner", "repo", "v1", [wheel_file])
    release = json.loads(curl(fake_github, f"{fake_github.api_url}/repos/owner/repo/releases/tags/v1").stdout)
    assert release["tag_name"] == "v1"
    [asset] = release["assets"]
    assert asset["name"] == wheel_file.name and asset["size"] == 200_000
    assert asset["digest"] == "sha256:" + hashlib.sha256(wheel_file.read_bytes()).hexdigest()
    assert asset["browser_download_url"] == fake_github.download_url("owner", "repo", "v1", wheel_file.name)
    missing = curl(fake_github, "-o", "/dev/null", "-w", "%{http_code}",
                   f"{fake_github.api_url}/repos/owner/repo/releases/tags/v2")
    assert missing.stdout == b"404"


def test_downloads_redirect_to_storage_which_serves_ranges(fake_github, wheel_file, tmp_path):
    fake_github.add_release("owner", "repo", "v1", [wheel_file])
    url = fake_github.download_url("owner", "repo", "v1", wheel_file.name)
    first = headers_of(curl(fake_github, "-D", "-", "-o", "/dev/null", url).stdout)
    assert first["status"] == "302"
    assert first["location"].startswith(fake_github.storage_url + "/") and "X-Amz-Signature=" in first["location"]

    whole = curl(fake_github, "-L", url).stdout
    assert whole == wheel_file.read_bytes()
    header_file = tmp_path / "headers"
    tail = curl(fake_github, "-L", "-D", str(header_file), "-r", "-1000", url).stdout
    assert tail == wheel_file.read_bytes()[-1000:]
    tail_headers = headers_of(header_file.read_bytes())
    assert tail_headers["status"] == "206" and tail_headers["content-range"] == "bytes 199000-199999/200000"
    middle = curl(fake_github, "-L", "-r", "100-199", url).stdout
    assert middle == wheel_file.read_bytes()[100:200]
    unsatisfiable = curl(fake_github, "-L", "-o", "/dev/null", "-w", "%{http_code}", "-r", "300000-", url).stdout
    assert unsatisfiable == b"416"
    headed = headers_of(curl(fake_github, "-L", "-I", url).stdout)
    assert headed["status"] == "200" and headed["content-length"] == "200000"

    log = [entry for entry in fake_github.log() if entry["host"] == "storage"]
    assert [entry["body_bytes"] for entry in log] == [200_000, 1000, 100, 0, 0]
    assert log[1]["range"] == "bytes=-1000" and log[1]["status"] == 206


def test_asset_lists_paginate_with_link_headers(fake_github, tmp_path):
    files = []
    for index in range(5):
        path = tmp_path / f"pkg{index}-1.0-py3-none-any.whl"
        path.write_bytes(os.urandom(100 + index))
        files.append(path)
    release = fake_github.add_release("owner", "repo", "v1", files)
    url = f"{fake_github.api_url}/repos/owner/repo/releases/{release['id']}/assets?per_page=2"
    names = []
    pages = 0
    while url:
        answer = curl(fake_github, "-D", "-", url).stdout
        head, _, body = answer.partition(b"\r\n\r\n")
        headers = headers_of(head + b"\r\n\r\n")
        assert int(headers["x-ratelimit-remaining"]) < int(headers["x-ratelimit-limit"])
        names += [asset["name"] for asset in json.loads(body)]
        pages += 1
        url = ""
        for part in headers.get("link", "").split(","):
            if 'rel="next"' in part:
                url = part.split(";")[0].strip().strip("<>")
    assert pages == 3
    assert names == [path.name for path in files]


def test_rate_limits_answer_403_with_the_reset_time(fake_github, wheel_file):
    fake_github.add_release("owner", "repo", "v1", [wheel_file])
    fake_github.set(rate_remaining=1)
    url = f"{fake_github.api_url}/repos/owner/repo/releases/tags/v1"
    assert headers_of(curl(fake_github, "-D", "-", "-o", "/dev/null", url).stdout)["x-ratelimit-remaining"] == "0"
    limited = curl(fake_github, "-D", "-", url).stdout
    headers = headers_of(limited.partition(b"\r\n\r\n")[0] + b"\r\n\r\n")
    assert headers["status"] == "403" and headers["x-ratelimit-remaining"] == "0" and int(headers["x-ratelimit-reset"]) > 0
    assert b"rate limit exceeded" in limited


def test_private_repositories_need_the_token(fake_github, wheel_file):
    fake_github.add_release("owner", "secret", "v1", [wheel_file], private=True)
    fake_github.set(token="s3cret")
    url = f"{fake_github.api_url}/repos/owner/secret/releases/tags/v1"
    code = ["-o", "/dev/null", "-w", "%{http_code}"]
    assert curl(fake_github, *code, url).stdout == b"404"
    assert curl(fake_github, *code, "-H", "Authorization: Bearer wrong", url).stdout == b"401"
    assert curl(fake_github, *code, "-H", "Authorization: Bearer s3cret", url).stdout == b"200"
    assert curl(fake_github, *code, "-H", "Authorization: token s3cret", url).stdout == b"200"
    asset = json.loads(curl(fake_github, "-H", "Authorization: Bearer s3cret", url).stdout)["assets"][0]
    octets = curl(fake_github, "-L", "-H", "Authorization: Bearer s3cret", "-H", "Accept: application/octet-stream",
                  asset["url"]).stdout
    assert octets == wheel_file.read_bytes()


def test_faults_break_downloads_as_asked(fake_github, wheel_file):
    fake_github.add_release("owner", "repo", "v1", [wheel_file])
    url = fake_github.download_url("owner", "repo", "v1", wheel_file.name)
    code = ["-o", "/dev/null", "-w", "%{http_code}"]

    fake_github.set_fault(wheel_file.name, lie_length=5000)
    lied = curl(fake_github, "-L", "-o", "/dev/null", url, check=False)
    assert lied.returncode == 18, lied  # curl: partial file

    fake_github.set_fault(wheel_file.name, status=503)
    assert curl(fake_github, "-L", *code, url).stdout == b"503"

    fake_github.set_fault(wheel_file.name, redirect_loop=True)
    looped = curl(fake_github, "-L", "--max-redirs", "6", "-o", "/dev/null", url, check=False)
    assert looped.returncode == 47, looped  # curl: too many redirects

    fake_github.set_fault(wheel_file.name, redirect_to="https://evil.example/x.whl")
    assert b"evil.example" in curl(fake_github, "-o", "/dev/null", "-w", "%{redirect_url}", url).stdout

    fake_github.set_fault(wheel_file.name, stall_after=1000, stall_seconds=10)
    stalled = curl(fake_github, "-L", "--max-time", "2", "-o", "/dev/null", url, check=False)
    assert stalled.returncode == 28, stalled  # curl: timed out

    fake_github.set_fault(wheel_file.name, slow_bps=100_000)
    timing = curl(fake_github, "-L", "-o", "/dev/null", "-w", "%{time_total}", url).stdout
    assert float(timing) >= 1.5  # 200 kB at 100 kB/s

    fake_github.set_fault(wheel_file.name, ignore_range=True)
    whole = headers_of(curl(fake_github, "-L", "-D", "-", "-o", "/dev/null", "-r", "0-99", url).stdout)
    assert whole["status"] == "200" and whole["content-length"] == "200000"

    fake_github.set_fault(wheel_file.name, no_length=True)
    unmeasured = curl(fake_github, "-L", "-D", "-", url).stdout
    assert "content-length" not in headers_of(unmeasured)
    assert unmeasured.endswith(wheel_file.read_bytes())

    fake_github.set_fault(wheel_file.name, extra_bytes=1000)
    assert curl(fake_github, "-L", url).stdout == wheel_file.read_bytes() + bytes(1000)
    assert curl(fake_github, "-L", "-r", "0-99", url).stdout == wheel_file.read_bytes()[:100]  # ranges as they were

    fake_github.set_fault(wheel_file.name)
    assert curl(fake_github, "-L", url).stdout == wheel_file.read_bytes()
