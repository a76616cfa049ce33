"""An index configured as private: pip reads it with a token in its index URL, and nothing about
its contents leaks without one — not pages, files, metadata, the API, or even which projects exist."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import ingest
from test_uploads import curl, make_token
from wheelbuilder import build_wheel


@pytest.fixture
def private(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    wheels = tmp_path / "wheels"
    kernels = build_wheel(wheels, "kernels", "1.0.0+cu130torch2.10")
    build_wheel(wheels, "other", "2.0")
    assert ingest(wheelhouse_bin, data, wheels).returncode == 0
    tokens = {
        "read": make_token(wheelhouse_bin, data, "team", "--scope", "read"),
        "admin": make_token(wheelhouse_bin, data, "root", "--scope", "admin"),
        "upload": make_token(wheelhouse_bin, data, "ci", "--scope", "upload"),
        "scoped": make_token(wheelhouse_bin, data, "kernels-only", "--scope", "read", "--project", "kernels"),
    }
    running = start_server(data, "--private")
    return running, tokens, kernels


def authed(url: str, token: str) -> str:
    return url.replace("http://", f"http://__token__:{token}@", 1)


def test_serve_says_at_start_up_whether_the_index_is_private(private, tmp_path, start_server):
    """Issue 16, item 7: an admin sees on the first line whether anyone may read."""
    running, _, _ = private
    line = next(line for line in running.stderr().splitlines() if "listening on" in line)
    assert "private: every read needs a token of scope read or above" in line, line
    public_data = tmp_path / "public"
    public_data.mkdir()
    public = start_server(public_data)
    line = next(line for line in public.stderr().splitlines() if "listening on" in line)
    assert "public: anyone may read, uploads need a token" in line and "private" not in line, line


def test_pip_installs_with_a_token_in_the_index_url(private, tmp_path, pip):
    running, tokens, kernels = private
    target = tmp_path / "site"
    pip("install", "--index-url", authed(running.url, tokens["read"]) + "simple/", "--target", str(target), "kernels")
    assert (target / "kernels-1.0.0+cu130torch2.10.dist-info").is_dir()
    # An upload token reads too: CI can install what it just published.
    pip("download", "--no-deps", "--index-url", authed(running.url, tokens["upload"]) + "simple/",
        "--dest", str(tmp_path / "dl"), "other")
    assert (tmp_path / "dl" / "other-2.0-py3-none-any.whl").is_file()


def test_without_a_token_pip_is_refused_and_nothing_is_revealed(private, tmp_path, pip):
    running, tokens, kernels = private
    refused = pip("install", "--no-input", "--index-url", running.url + "simple/", "--target", str(tmp_path / "s"),
                  "kernels", check=False)
    assert refused.returncode != 0
    assert "No matching distribution found for kernels" in refused.stderr, refused.stderr

    sha = subprocess.run(["sha256sum", str(kernels)], capture_output=True, text=True).stdout.split()[0]
    for path in ("simple/", "simple/kernels/", "simple/no-such-project/", "variants/cu130/simple/kernels/",
                 f"files/{sha}/{kernels.name}", f"files/{sha}/{kernels.name}.metadata",
                 "api/v1/projects/kernels/variants"):
        status, body = curl("-D", "-", running.url + path)
        assert status == 401, (path, body)
        assert "WWW-Authenticate: Basic" in body, path
        assert "kernels-1.0.0" not in body and "reads of this private index need an API token" in body, path
    status, body = curl("-u", "__token__:not-a-token", running.url + "simple/kernels/")
    assert status == 401, body
    assert curl(running.url + "healthz")[0] == 200  # liveness stays open for load balancers


def test_project_limited_tokens_read_only_their_projects(private):
    running, tokens, _ = private
    scoped = ("-u", f"__token__:{tokens['scoped']}")
    status, body = curl(*scoped, running.url + "simple/kernels/")
    assert status == 200 and "kernels-1.0.0" in body, body
    status, body = curl(*scoped, running.url + "simple/other/")
    assert status == 403 and "may not read project 'other'" in body, body
    # The list of projects shows such a token its own projects only.
    status, body = curl(*scoped, running.url + "simple/")
    assert status == 200 and 'href="kernels/"' in body and "other" not in body, body


def test_private_pages_are_not_kept_by_shared_caches(private):
    running, tokens, _ = private
    status, headers = curl("-I", "-u", f"__token__:{tokens['read']}", running.url + "simple/kernels/")
    assert status == 200
    cache_control = next(line for line in headers.splitlines() if line.lower().startswith("cache-control:"))
    assert "private" in cache_control and "public" not in cache_control, cache_control


def get(url: str, token: str | None = None) -> tuple[int, dict, str]:
    """A GET as scripts and the admin page send it: the status, headers and body."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read().decode()


def test_the_json_api_reads_need_a_token_too(private):
    """Issue 14, item 2: the admin catalog's JSON answered a tokenless client of a private index
    with names, versions, hashes, METADATA and history, and a token limited to one project read
    every other one the same way."""
    running, tokens, kernels = private
    sha = subprocess.run(["sha256sum", str(kernels)], capture_output=True, text=True).stdout.split()[0]
    reads = ("api/v1/projects", "api/v1/projects?q=kern", "api/v1/projects/kernels", "api/v1/projects/other",
             f"api/v1/files/{kernels.name}", "api/v1/files/other-2.0-py3-none-any.whl")
    for path in reads:
        status, headers, body = get(running.url + path)
        assert status == 401, (path, body)
        # Bearer, not Basic: a Basic challenge would open the browser's own password dialog.
        assert headers["WWW-Authenticate"].startswith("Bearer"), (path, headers)
        assert json.loads(body)["error"].startswith("reads of this private index need an API token"), (path, body)
        for secret in ("kernels", "other", "1.0.0", sha, "team"):
            assert secret not in body, (path, secret, body)
        status, _, body = get(running.url + path, tokens["read"])
        assert status == 200, (path, body)

    # A token limited to kernels reads kernels, and of the rest not even the names.
    scoped = tokens["scoped"]
    for path in ("api/v1/projects/other", "api/v1/files/other-2.0-py3-none-any.whl"):
        status, _, body = get(running.url + path, scoped)
        assert status == 403 and json.loads(body)["error"] == "token 'kernels-only' may not read project 'other'", body
    assert get(running.url + "api/v1/projects/kernels", scoped)[0] == 200
    for path in ("api/v1/projects", "api/v1/projects?q=e", "api/v1/projects?sort=recent"):
        status, _, body = get(running.url + path, scoped)
        listed = json.loads(body)
        assert status == 200 and [p["name"] for p in listed["projects"]] == ["kernels"], (path, body)
        assert listed["total"] == 1
    status, _, body = get(running.url + "api/v1/projects?q=oth", scoped)  # "other" is there, but not for this token
    assert status == 200 and json.loads(body)["total"] == 0, body
    # Unlimited tokens see every project.
    _, _, body = get(running.url + "api/v1/projects", tokens["read"])
    assert [p["name"] for p in json.loads(body)["projects"]] == ["kernels", "other"]
    # The audit log and tokens stay an admin's.
    assert get(running.url + "api/v1/audit", tokens["read"])[0] == 403
    assert get(running.url + "api/v1/audit", tokens["admin"])[0] == 200


def test_metrics_need_a_token_and_healthz_and_the_page_do_not(private):
    running, tokens, _ = private
    status, headers = curl("-D", "-", running.url + "metrics")
    assert status == 401 and "WWW-Authenticate: Basic" in headers, headers
    # Prometheus sends one as basic_auth (username __token__) or as a bearer token.
    status, body = curl("-u", f"__token__:{tokens['read']}", running.url + "metrics")
    assert status == 200 and "wheelhouse_http_requests_total" in body
    assert curl("-H", f"Authorization: Bearer {tokens['read']}", running.url + "metrics")[0] == 200
    # A token for some projects reads no figures about the whole index.
    assert curl("-u", f"__token__:{tokens['scoped']}", running.url + "metrics")[0] == 403
    # The admin page holds no data: it loads, and asks for a token for what it shows.
    for path in ("", "static/js/app.mjs", "static/app.css", "healthz"):
        assert curl(running.url + path)[0] == 200, path


def test_a_cli_revoke_is_honoured_by_the_running_server_at_once(private, tmp_path, wheelhouse_bin, pip):
    """Issue 15, item 4: tokens are checked from memory, yet `wheelhouse token revoke` in another
    process counts for the very next request, with no wait and no restart."""
    running, tokens, kernels = private
    data = tmp_path / "data"
    index = authed(running.url, tokens["read"]) + "simple/"
    for path in ("simple/kernels/", "simple/", "simple/kernels/"):
        assert curl("-u", f"__token__:{tokens['read']}", running.url + path)[0] == 200, path
    _, metrics = curl("-u", f"__token__:{tokens['admin']}", running.url + "metrics")
    from_memory = re.search(r'^wheelhouse_token_checks_total\{answered="memory"\} (\d+)', metrics, re.MULTILINE)
    assert from_memory and int(from_memory.group(1)) >= 2, metrics  # the repeated checks came from memory

    revoked = subprocess.run([str(wheelhouse_bin), "token", "revoke", "team", "--data", str(data)],
                             capture_output=True, text=True, timeout=30)
    assert revoked.returncode == 0, revoked.stderr
    status, body = curl("-u", f"__token__:{tokens['read']}", running.url + "simple/kernels/")
    assert status == 401 and "(unknown, expired or revoked)" in body, body
    refused = pip("download", "--no-deps", "--no-input", "--index-url", index, "--dest", str(tmp_path / "dl"),
                  "kernels", check=False)
    assert refused.returncode != 0 and not (tmp_path / "dl" / kernels.name).exists()
    # The other tokens are untouched, and one made now works at once.
    assert curl("-u", f"__token__:{tokens['upload']}", running.url + "simple/kernels/")[0] == 200
    fresh = make_token(wheelhouse_bin, data, "team-2", "--scope", "read")
    assert curl("-u", f"__token__:{fresh}", running.url + "simple/kernels/")[0] == 200
