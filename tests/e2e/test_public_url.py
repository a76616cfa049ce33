"""Issue 16, item 5: clients that resolve no relative URL (micropip) and proxies that serve the
index under another path. `--public-url` makes every file link absolute under the address
clients see; "//" in a path counts as "/" (micropip joins an index URL ending in '/' with
"/<project>/"). Checked with curl against the binary, and with pip through a real nginx that
serves the index under /wheels/."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import ingest
from wheelbuilder import build_wheel

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str, accept: str = SIMPLE_JSON) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as failure:
        return failure.code, failure.read().decode()


@pytest.fixture
def catalog(tmp_path, wheelhouse_bin):
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "kernels", "1.0+cu130torch2.10")
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    return data, wheel


def test_double_slashes_in_a_path_are_one_slash(catalog, start_server):
    data, wheel = catalog
    running = start_server(data)
    status, body = get(running.url + "simple//kernels/")  # what micropip asks for
    assert status == 200, body
    assert [entry["filename"] for entry in json.loads(body)["files"]] == [wheel.name]
    status, body = get(running.url.rstrip("/") + "//variants//cu130//simple//kernels//")
    assert status == 200, body
    assert [entry["filename"] for entry in json.loads(body)["files"]] == [wheel.name]
    url = json.loads(body)["files"][0]["url"]
    status, _ = get(running.url + url.lstrip("/").replace("/", "//", 1), accept="*/*")
    assert status == 200


def test_without_a_public_url_file_links_stay_relative(catalog, start_server):
    data, _ = catalog
    running = start_server(data)
    _, body = get(running.url + "simple/kernels/")
    assert json.loads(body)["files"][0]["url"].startswith("/files/")


def test_a_public_url_makes_every_file_link_absolute(catalog, start_server):
    data, wheel = catalog
    running = start_server(data, "--public-url", "https://pkgs.example.com/wheels/")
    _, body = get(running.url + "simple/kernels/")
    url = json.loads(body)["files"][0]["url"]
    assert url.startswith("https://pkgs.example.com/wheels/files/") and url.endswith("/" + wheel.name.replace("+", "%2B"))
    _, html = get(running.url + "simple/kernels/", accept="text/html")
    assert 'href="https://pkgs.example.com/wheels/files/' in html
    _, variant = get(running.url + "variants/cu130/simple/kernels/")
    assert json.loads(variant)["files"][0]["url"] == url
    _, api = get(running.url + "api/v1/projects/kernels", accept="application/json")
    assert "https://pkgs.example.com/wheels/files/" in api


@pytest.mark.parametrize("given, reason", [
    ("pkgs.example.com", "must start with http://, https:// or /"),
    ("https://user:secret@pkgs.example.com/", "holds credentials"),
    ("https://pkgs.example.com/?x=1", "has a query or fragment"),
])
def test_a_bad_public_url_stops_the_start(catalog, wheelhouse_bin, given, reason):
    data, _ = catalog
    started = subprocess.run([str(wheelhouse_bin), "serve", "--data", str(data), "--listen", "127.0.0.1:0",
                              "--public-url", given], capture_output=True, text=True, timeout=30)
    assert started.returncode != 0
    assert "public-url" in started.stderr and reason in started.stderr, started.stderr


def nginx_under_a_path(prefix, backend: str, port: int) -> subprocess.Popen:
    """Debian's nginx on `port`, serving the index at /wheels/ (the proxy strips the prefix)."""
    user = "user root root;\n" if os.geteuid() == 0 else ""
    temp = "".join(f"  {name}_temp_path {prefix / name};\n" for name in ("proxy", "fastcgi", "uwsgi", "scgi"))
    (prefix / "nginx.conf").write_text(
        f"{user}daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n  access_log {prefix / 'access.log'};\n  client_body_temp_path {prefix / 'body'};\n{temp}"
        f"  server {{\n    listen 127.0.0.1:{port};\n"
        f"    location /wheels/ {{ proxy_pass http://{backend}/; }}\n  }}\n}}\n")
    process = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(prefix), "-c",
                                str(prefix / "nginx.conf")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            assert process.poll() is None, (prefix / "error.log").read_text()
            time.sleep(0.05)
    raise RuntimeError("nginx did not start listening")


def test_pip_installs_through_a_proxy_that_serves_the_index_under_a_path(catalog, start_server, tmp_path, pip):
    data, wheel = catalog
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    port = free_port()  # the proxy's port must be known before the index starts
    public = f"http://127.0.0.1:{port}/wheels/"
    relative = start_server(data)
    absolute = start_server(data, "--public-url", public)
    for backend, should_install in ((relative, False), (absolute, True)):
        process = nginx_under_a_path(prefix, backend.url.removeprefix("http://").rstrip("/"), port)
        try:
            target = tmp_path / f"target-{should_install}"
            installed = pip("install", "--no-deps", "--target", str(target), "--index-url", public + "simple/",
                            "kernels", check=False)
            assert (installed.returncode == 0) == should_install, installed.stdout + installed.stderr
        finally:
            process.terminate()
            process.wait(timeout=15)
    assert (tmp_path / "target-True" / "kernels" / "__init__.py").is_file()

