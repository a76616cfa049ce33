"""An index configured as private: pip reads it with a token in its index URL, and nothing about
its contents leaks without one — not pages, files, metadata, the API, or even which projects exist."""

from __future__ import annotations

import subprocess

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
        "upload": make_token(wheelhouse_bin, data, "ci", "--scope", "upload"),
        "scoped": make_token(wheelhouse_bin, data, "kernels-only", "--scope", "read", "--project", "kernels"),
    }
    running = start_server(data, "--private")
    return running, tokens, kernels


def authed(url: str, token: str) -> str:
    return url.replace("http://", f"http://__token__:{token}@", 1)


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
    status, body = curl(*scoped, running.url + "simple/")
    assert status == 403 and "list of every project" in body, body


def test_private_pages_are_not_kept_by_shared_caches(private):
    running, tokens, _ = private
    status, headers = curl("-I", "-u", f"__token__:{tokens['read']}", running.url + "simple/kernels/")
    assert status == 200
    cache_control = next(line for line in headers.splitlines() if line.lower().startswith("cache-control:"))
    assert "private" in cache_control and "public" not in cache_control, cache_control
