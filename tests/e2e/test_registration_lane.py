"""Registrations wait on release hosts; uploads must not wait on them (issue 27 item 1).

A release host that accepts and then goes silent holds every registration sent to it until the
outbound client's read timeout. Those registrations run on the outbound lane, so uploads, which run
on the write pool, keep being answered while they hang."""

from __future__ import annotations

import concurrent.futures
import json
import urllib.error
import urllib.request

from test_remote_register import native_wheel, post, sha256_of
from test_uploads import make_token
from wheelbuilder import build_wheel

STALLED = 6  # registrations held by the silent host: more than the write pool's workers and queue


def put_wheel(url: str, token: str, wheel) -> int:
    request = urllib.request.Request(f"{url}api/v1/files/{wheel.name}", data=wheel.read_bytes(), method="PUT",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        # Far shorter than the stall: an upload queued behind the registrations would miss it.
        with urllib.request.urlopen(request, timeout=8) as response:
            return response.status
    except urllib.error.HTTPError as failure:
        return failure.code


def test_uploads_are_answered_while_registrations_wait_on_a_silent_host(wheelhouse_bin, fake_github, start_server,
                                                                        tmp_path):
    stalled = native_wheel(tmp_path / "dist", "stalled-kernels", "1.0", 7)
    fake_github.add_release("owner", "slow", "v1", [stalled])
    fake_github.set_fault(stalled.name, stall_after=0, stall_seconds=15)
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data, *fake_github.server_flags(), "--ingest-workers", "1", "--ingest-queue", "2",
                          "--remote-read-timeout", "10")
    url = fake_github.download_url("owner", "slow", "v1", stalled.name)
    body = {"url": url, "sha256": sha256_of(stalled), "verify": True}

    with concurrent.futures.ThreadPoolExecutor(STALLED) as pool:
        held = [pool.submit(post, server.url + "api/v1/remote", token, body) for _ in range(STALLED)]
        for number in range(10):
            wheel = build_wheel(tmp_path / "up", "lane-uploads", f"1.{number}")
            assert put_wheel(server.url, token, wheel) == 201, number
        assert not any(registration.done() for registration in held), "the host was meant to stall them"
        answers = [registration.result(timeout=120) for registration in held]

    # The silent host is named in each registration's refusal; nothing of it is listed.
    assert all(status in (502, 504) for status, _ in answers), answers
    assert all("127.0.0.1" in reply["error"] or "timed out" in reply["error"] for _, reply in answers), answers
    projects = json.loads(server.get("/api/v1/projects", headers={"Authorization": f"Bearer {token}"}).read())
    names = {project["name"] for project in projects["projects"]}
    assert "lane-uploads" in names and "stalled-kernels" not in names, names
