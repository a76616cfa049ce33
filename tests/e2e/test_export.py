"""`wheelhouse export`: the static tree served by nginx, pip installing from it, and its pages
compared with the live server's byte for byte."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import ingest
from wheelbuilder import build_wheel

VARIANT = "cu130-torch2.10"


def run(binary, *args: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=300)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Nginx:
    """nginx on a free loopback port serving one folder, with a generated configuration."""

    def __init__(self, root: pathlib.Path, prefix: pathlib.Path):
        self.root, self.prefix = root, prefix
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.access_log = prefix / "access.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> "Nginx":
        self.prefix.mkdir(parents=True, exist_ok=True)
        # As root, nginx's workers would switch to nobody, who cannot read pytest's 0700 folders.
        user = "user root;\n" if os.geteuid() == 0 else ""
        config = self.prefix / "nginx.conf"
        config.write_text(f"""{user}daemon off;
worker_processes 1;
pid {self.prefix}/nginx.pid;
error_log stderr;
events {{ worker_connections 64; }}
http {{
    include /etc/nginx/mime.types;
    types {{ application/vnd.pypi.simple.v1+json json; }}
    access_log {self.access_log};
    client_body_temp_path {self.prefix}/body;
    proxy_temp_path {self.prefix}/proxy;
    fastcgi_temp_path {self.prefix}/fastcgi;
    uwsgi_temp_path {self.prefix}/uwsgi;
    scgi_temp_path {self.prefix}/scgi;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
        index index.html;
    }}
}}
""")
        self.stderr_path = self.prefix / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(["nginx", "-p", str(self.prefix), "-c", str(config), "-e", "stderr"],
                                        stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.stderr_path.read_text()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start: " + self.stderr_path.read_text())

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=10) as response:
            return response.read()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self._stderr.close()
            self.process = None


@pytest.fixture
def start_nginx(tmp_path):
    started: list[Nginx] = []

    def start(root: pathlib.Path) -> Nginx:
        server = Nginx(root, tmp_path / f"nginx-{len(started)}").start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def live(tmp_path, wheelhouse_bin, start_server):
    """A data folder with variant builds, a pure dependency and a '+' in file names, served."""
    dist = tmp_path / "dist"
    build_wheel(dist, "kernels", "1.0.0+cu128torch2.8", tags="py3-none-any", metadata_extra="Requires-Dist: kernel-helper\n")
    build_wheel(dist, "kernels", "1.0.0+cu130torch2.10", tags="py3-none-any", metadata_extra="Requires-Dist: kernel-helper\n")
    build_wheel(dist, "kernel-helper", "0.3", requires_python=">=3.9", summary="Helps")
    data = tmp_path / "data"
    added = ingest(wheelhouse_bin, data, dist)
    assert added.returncode == 0, added.stdout + added.stderr
    return start_server(data), data


def live_page(server, path: str, json: bool) -> bytes:
    with server.get(path + ("?format=json" if json else ""), {"Accept": "text/html"}) as response:
        return response.read()


def export_paths(names: list[str]) -> list[str]:
    return [f"{prefix}{name}" for prefix in ("/simple/", f"/variants/{VARIANT}/simple/") for name in ["", *[n + "/" for n in names]]]


def test_export_matches_the_server_and_pip_installs_from_nginx(live, tmp_path, wheelhouse_bin, start_nginx, pip):
    server, data = live
    out = tmp_path / "site"
    result = run(wheelhouse_bin, "export", "--data", data, "--out", out, "--base-url", "/", "--variant", "torch2.10-cu130")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 wheels and 3 METADATA files copied" in result.stdout

    # With links from the root of the host, every page is the live server's, byte for byte.
    for path in export_paths(["kernels", "kernel-helper"]):
        folder = out / path.lstrip("/")
        assert (folder / "index.html").read_bytes() == live_page(server, path, json=False), path
        assert (folder / "index.json").read_bytes() == live_page(server, path, json=True), path

    nginx = start_nginx(out)
    assert nginx.get("/simple/kernels/") == live_page(server, "/simple/kernels/", json=False)
    target = tmp_path / "installed"
    pip("install", "--index-url", nginx.url + "simple/", "--target", str(target), "kernels==1.0.0+cu128torch2.8")
    assert (target / "kernels-1.0.0+cu128torch2.8.dist-info").is_dir()
    assert (target / "kernel_helper-0.3.dist-info").is_dir()
    # The variant index holds the one build that fits, and its dependency.
    variant_target = tmp_path / "installed-variant"
    pip("install", "--index-url", f"{nginx.url}variants/{VARIANT}/simple/", "--target", str(variant_target), "kernels")
    assert (variant_target / "kernels-1.0.0+cu130torch2.10.dist-info").is_dir()
    # pip read the core metadata (PEP 658) from the export rather than opening the wheels for it.
    log = nginx.access_log.read_text()
    assert ".whl.metadata HTTP/1.1\" 200" in log, log
    assert " 404 " not in log, log


def test_export_with_an_absolute_base_url_differs_only_in_file_links(live, tmp_path, wheelhouse_bin, start_nginx, pip):
    server, data = live
    out = tmp_path / "site"
    port = free_port()
    base = f"http://127.0.0.1:{port}/mirror"
    result = run(wheelhouse_bin, "export", "--data", data, "--out", out, "--base-url", base)
    assert result.returncode == 0, result.stderr
    for path in export_paths(["kernels", "kernel-helper"])[:3]:
        folder = out / path.lstrip("/")
        html = live_page(server, path, json=False).replace(b'href="/files/', f'href="{base}/files/'.encode())
        json = live_page(server, path, json=True).replace(b'"url":"/files/', f'"url":"{base}/files/'.encode())
        assert (folder / "index.html").read_bytes() == html, path
        assert (folder / "index.json").read_bytes() == json, path
    assert not (out / "variants").exists()

    # Served under /mirror/ as the base URL says: a CDN or object-store prefix.
    site = tmp_path / "www"
    (site).mkdir()
    (site / "mirror").symlink_to(out)
    nginx = Nginx(site, tmp_path / "nginx-mirror")
    nginx.port, nginx.url = port, f"http://127.0.0.1:{port}/"
    nginx.start()
    try:
        target = tmp_path / "installed"
        pip("install", "--index-url", f"{base}/simple/", "--target", str(target), "kernel-helper")
        assert (target / "kernel_helper-0.3.dist-info").is_dir()
    finally:
        nginx.stop()


def test_bad_export_input_is_refused_and_nothing_is_written(live, tmp_path, wheelhouse_bin):
    server, data = live
    pages_site = tmp_path / "gh-pages"
    pages_site.mkdir()
    (pages_site / "CNAME").write_text("wheels.example.org\n")
    cases = [
        (["--out", pages_site, "--base-url", "/"], "is not empty"),
        (["--out", tmp_path / "a", "--base-url", "wheels/"], "must start with http://, https:// or /"),
        (["--out", tmp_path / "b", "--base-url", "https://user:pw@example.org/"], "holds credentials"),
        (["--out", tmp_path / "c", "--base-url", "/", "--variant", "cu999x"], "--variant cu999x"),
    ]
    for args, message in cases:
        result = run(wheelhouse_bin, "export", "--data", data, *args)
        assert result.returncode == 1, (args, result.stdout)
        assert message in result.stderr and "nothing was written" in result.stderr, result.stderr
    assert [p.name for p in pages_site.iterdir()] == ["CNAME"]
    missing = run(wheelhouse_bin, "export", "--data", tmp_path / "nowhere", "--out", tmp_path / "d", "--base-url", "/")
    assert missing.returncode == 1 and "no catalog at" in missing.stderr
    assert not (tmp_path / "nowhere").exists()

    # A damaged blob stops the export: corrupt bytes are never published.
    with __import__("sqlite3").connect(data / "catalog.db") as db:
        sha = db.execute("SELECT sha256 FROM files ORDER BY filename LIMIT 1").fetchone()[0]
    blob = data / "blobs" / "sha256" / sha[:2] / sha[2:4] / sha
    blob.chmod(0o644)
    blob.write_bytes(b"not a wheel")
    result = run(wheelhouse_bin, "export", "--data", data, "--out", tmp_path / "e", "--base-url", "/")
    assert result.returncode == 1 and "wheelhouse fsck" in result.stderr, result.stderr
    assert not (tmp_path / "e").exists()
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
