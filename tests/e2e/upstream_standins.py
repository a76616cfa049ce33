"""Stand-in upstream indexes on loopback, over HTTPS from a test CA (no internet):

  IndexTree       a static index on disk with real wheels: PEP 691 JSON pages (as PyPI writes
                  them) or PEP 503 HTML pages (as PyTorch's per-CUDA indexes write them), each
                  file beside its .metadata (PEP 658);
  NginxUpstreams  Debian's nginx serving such trees, one HTTPS port each, with ETags and 304s as
                  nginx makes them, and an access log to count what wheelhouse asked for;
  HostileUpstream a Python HTTPS server that answers each path as a test tells it to: wrong bytes,
                  huge or dripping pages, redirects elsewhere, pages that are not what they claim.

wheelhouse_flags() points `wheelhouse serve` at them and at nothing else.
"""

from __future__ import annotations

import hashlib
import html
import http.server
import json
import os
import pathlib
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

from fake_github import make_certificates
from wheelbuilder import read_metadata


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalize(name: str) -> str:
    return "-".join(part for part in name.lower().replace("_", "-").replace(".", "-").split("-") if part) or name


class IndexTree:
    """One static upstream index: <root>/<prefix>/<project>/index.json|index.html, files under
    <root>/packages/ with <file>.metadata beside wheels."""

    def __init__(self, root: pathlib.Path, form: str, prefix: str = "simple"):
        assert form in ("json", "html")
        self.root = pathlib.Path(root)
        self.form = form
        self.prefix = prefix.strip("/")
        self.projects: dict[str, list[dict]] = {}
        (self.root / "packages").mkdir(parents=True, exist_ok=True)

    def add(self, path: pathlib.Path, project: str | None = None, *, requires_python: str | None = None,
            yanked: str | bool | None = None, metadata: bool = True, listed_sha256: str | None = None) -> dict:
        """Copies a wheel or sdist into the tree and lists it on its project's page. `listed_sha256`
        makes the page lie about its hash."""
        path = pathlib.Path(path)
        data = path.read_bytes()
        target = self.root / "packages" / path.name
        target.write_bytes(data)
        entry = {"filename": path.name, "url": f"/packages/{urllib.parse.quote(path.name)}",
                 "sha256": listed_sha256 or sha256_of(data), "size": len(data),
                 "requires_python": requires_python, "yanked": yanked, "metadata_sha256": None,
                 "provenance": f"/integrity/{urllib.parse.quote(path.name)}/provenance"}
        if metadata and path.name.endswith(".whl"):
            meta = read_metadata(path)
            (self.root / "packages" / (path.name + ".metadata")).write_bytes(meta)
            entry["metadata_sha256"] = sha256_of(meta)
        name = normalize(project or path.name.split("-")[0])
        self.projects.setdefault(name, []).append(entry)
        return entry

    def replace_bytes(self, filename: str, data: bytes) -> None:
        """The file the page lists, with other bytes behind the same URL (an upstream that lies)."""
        (self.root / "packages" / filename).write_bytes(data)

    def write(self) -> None:
        for project, files in self.projects.items():
            folder = self.root / self.prefix / project
            folder.mkdir(parents=True, exist_ok=True)
            if self.form == "json":
                (folder / "index.json").write_text(self.json_page(project, files))
            else:
                (folder / "index.html").write_text(self.html_page(project, files))

    @staticmethod
    def json_page(project: str, files: list[dict]) -> str:
        entries = []
        for f in files:
            entry = {"filename": f["filename"], "url": f["url"], "hashes": {"sha256": f["sha256"]},
                     "requires-python": f["requires_python"], "size": f["size"],
                     "upload-time": "2025-07-01T12:00:00.123456Z", "provenance": f["provenance"],
                     "yanked": f["yanked"] if f["yanked"] is not None else False,
                     "core-metadata": {"sha256": f["metadata_sha256"]} if f["metadata_sha256"] else False,
                     "data-dist-info-metadata": {"sha256": f["metadata_sha256"]} if f["metadata_sha256"] else False}
            if f["requires_python"] is None:
                del entry["requires-python"]
            entries.append(entry)
        versions = sorted({f["filename"].split("-")[1].removesuffix(".tar.gz") for f in files})
        return json.dumps({"meta": {"api-version": "1.1", "_last-serial": 1}, "name": project,
                           "versions": versions, "files": entries})

    @staticmethod
    def html_page(project: str, files: list[dict]) -> str:
        lines = ["<!DOCTYPE html>", "<html>", "  <body>", f"    <h1>Links for {project}</h1>"]
        for f in files:
            attributes = ""
            if f["requires_python"]:
                attributes += f' data-requires-python="{html.escape(f["requires_python"])}"'
            if f["yanked"] is not None and f["yanked"] is not False:
                attributes += f' data-yanked="{html.escape("" if f["yanked"] is True else f["yanked"])}"'
            attributes += f' data-provenance="{html.escape(f["provenance"])}"'
            if f["metadata_sha256"]:
                attributes += (f' data-dist-info-metadata="sha256={f["metadata_sha256"]}"'
                               f' data-core-metadata="sha256={f["metadata_sha256"]}"')
            lines.append(f'    <a href="{f["url"]}#sha256={f["sha256"]}"{attributes}>{html.escape(f["filename"])}</a><br/>')
        lines += ["  </body>", "</html>", ""]
        return "\n".join(lines)


class NginxUpstreams:
    """Debian's nginx serving IndexTrees over HTTPS on loopback, one port each."""

    def __init__(self, directory: pathlib.Path, trees: dict[str, IndexTree]):
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "tls").mkdir(exist_ok=True)
        self.ca, self.certificate, self.key = make_certificates(self.directory / "tls")
        self.trees = trees
        self.ports = {name: free_port() for name in trees}
        self.process: subprocess.Popen | None = None

    def url(self, name: str) -> str:
        return f"https://127.0.0.1:{self.ports[name]}/{self.trees[name].prefix}/"

    def log_path(self, name: str) -> pathlib.Path:
        return self.directory / f"{name}-access.log"

    def configuration(self) -> str:
        servers = []
        for name, tree in self.trees.items():
            servers.append(f"""
  server {{
    listen 127.0.0.1:{self.ports[name]} ssl;
    ssl_certificate {self.certificate};
    ssl_certificate_key {self.key};
    root {tree.root};
    access_log {self.log_path(name)} upstream;
    location / {{
      index index.json index.html;
      types {{ application/vnd.pypi.simple.v1+json json; text/html html;
              application/octet-stream whl gz zip metadata; }}
    }}
  }}""")
        temp = self.directory / "temp"
        user = "user root root;\n" if os.geteuid() == 0 else ""
        return (f"{user}daemon off;\nworker_processes 1;\npid {self.directory / 'nginx.pid'};\n"
                f"error_log {self.directory / 'error.log'} warn;\n"
                "events { worker_connections 1024; }\n"
                "http {\n"
                "  log_format upstream '$request_method $request_uri $status \"$http_if_none_match\"';\n"
                f"  client_body_temp_path {temp}/body;\n  proxy_temp_path {temp}/proxy;\n"
                f"  fastcgi_temp_path {temp}/fastcgi;\n  uwsgi_temp_path {temp}/uwsgi;\n"
                f"  scgi_temp_path {temp}/scgi;\n"
                + "".join(servers) + "\n}\n")

    def start(self) -> "NginxUpstreams":
        for tree in self.trees.values():
            tree.write()
        (self.directory / "temp").mkdir(exist_ok=True)
        config = self.directory / "nginx.conf"
        config.write_text(self.configuration())
        # A session of its own, so kill() can take the workers with the master.
        self.process = subprocess.Popen(["nginx", "-c", str(config), "-p", str(self.directory)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        for port in self.ports.values():
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if self.process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"nginx did not start: {self.process.stderr.read().decode(errors='replace')}"
                                           if self.process.poll() is not None else "nginx did not listen")
                    time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        """Gone at once, as a host that dies: the master and its workers (a worker outlives a
        killed master and goes on answering)."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def requests(self, name: str) -> list[str]:
        """Every request the upstream `name` answered so far: 'GET /simple/x/ 200 "<If-None-Match>"'."""
        path = self.log_path(name)
        time.sleep(0.2)  # nginx writes each line when its request ends
        return path.read_text().splitlines() if path.exists() else []

    def flags(self, **routes) -> list[str]:
        return wheelhouse_flags(self.ca, {name: self.url(name) for name in self.trees})


def wheelhouse_flags(ca: pathlib.Path, upstreams: dict[str, str]) -> list[str]:
    """Points wheelhouse at these upstreams (in order: the first is the default) and their CA."""
    flags = ["--ca-bundle", str(ca), "--remote-allow-private-addresses"]
    for name, url in upstreams.items():
        flags += ["--upstream", f"{name}={url}"]
    return flags


class HostileUpstream:
    """An HTTPS upstream in this process whose answers the test writes: `answers[path]` is a
    function (handler) -> None that sends whatever it likes. Paths without one get 404."""

    def __init__(self, directory: pathlib.Path):
        pathlib.Path(directory).mkdir(parents=True, exist_ok=True)
        self.ca, certificate, key = make_certificates(pathlib.Path(directory))
        self.answers: dict[str, object] = {}
        self.log: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the base class's name
                path = urllib.parse.urlsplit(self.path).path
                outer.log.append(f"GET {path}")
                answer = outer.answers.get(path)
                try:
                    if answer is None:
                        self.send_plain(404, b"no such page")
                    else:
                        answer(self)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass

            def send_plain(self, status: int, body: bytes, content_type: str = "text/plain",
                           headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/simple/"

    def page(self, project: str, body: bytes | str, content_type: str = "application/vnd.pypi.simple.v1+json") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.answers[f"/simple/{project}/"] = lambda handler: handler.send_plain(200, data, content_type)

    def file(self, name: str, data: bytes) -> None:
        self.answers[f"/packages/{name}"] = lambda handler: handler.send_plain(200, data, "application/octet-stream")

    def requests_for(self, path: str) -> int:
        return sum(1 for line in self.log if line == f"GET {path}")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
