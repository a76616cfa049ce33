"""deploy/nginx/wheelhouse.conf as shipped, in front of the real binary: Debian's nginx on
loopback with a certificate made here, pip installing over TLS, uploads streamed through
unbuffered, and simple pages cached and revalidated by wheelhouse's own Cache-Control and ETag.
Only ports and paths are substituted; every substitution must hit, so the test follows the file."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from conftest import clean_pip_environment
from server_process import REPO_ROOT
from test_uploads import curl, make_token
from wheelbuilder import build_wheel

SITE = REPO_ROOT / "deploy" / "nginx" / "wheelhouse.conf"
PIP_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def substitute(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert text.count(old) == 1, f"{SITE} no longer has exactly one {old!r}; update this test with it"
        text = text.replace(old, new)
    return text


def make_certificate(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


class Nginx:
    def __init__(self, prefix: pathlib.Path, backend: str, cert: pathlib.Path, key: pathlib.Path):
        self.prefix = prefix
        self.http_port, self.https_port = free_port(), free_port()
        self.error_log = prefix / "error.log"
        site = substitute(SITE.read_text(), {
            "proxy_cache_path /var/cache/nginx/wheelhouse ": f"proxy_cache_path {prefix / 'cache'} ",
            "server 127.0.0.1:8080;": f"server {backend};",
            "listen 80;": f"listen 127.0.0.1:{self.http_port};",
            "    listen [::]:80;\n": "",
            "listen 443 ssl http2;": f"listen 127.0.0.1:{self.https_port} ssl http2;",
            "    listen [::]:443 ssl http2;\n": "",
            "/etc/ssl/wheelhouse/fullchain.pem": str(cert),
            "/etc/ssl/wheelhouse/privkey.pem": str(key),
        })
        (prefix / "site.conf").write_text(site)
        temp = {name: prefix / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        # Run as whoever runs the test; as root, nginx would hand its workers to `nobody`,
        # who cannot write this temporary prefix.
        user = "user root root;\n" if os.geteuid() == 0 else ""
        (prefix / "nginx.conf").write_text(
            f"{user}daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
            f"error_log {self.error_log} warn;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            f"  access_log {prefix / 'access.log'};\n"
            f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
            f"  fastcgi_temp_path {temp['fastcgi']};\n  uwsgi_temp_path {temp['uwsgi']};\n"
            f"  scgi_temp_path {temp['scgi']};\n"
            "  types { application/octet-stream whl; }\n"
            f"  include {prefix / 'site.conf'};\n"
            "}\n")
        self.command = [shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(prefix), "-c", str(prefix / "nginx.conf")]
        self.process: subprocess.Popen | None = None

    def start(self) -> "Nginx":
        checked = subprocess.run([*self.command, "-t"], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, f"nginx -t refused the site:\n{checked.stderr}"
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.https_port), timeout=1).close()
                return self
            except OSError:
                assert self.process.poll() is None, f"nginx exited:\n{self.error_log.read_text()}"
                time.sleep(0.05)
        raise RuntimeError("nginx did not start listening")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}/"


@pytest.fixture
def front(tmp_path, wheelhouse_bin, start_server):
    nginx_binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx_binary):
        pytest.fail("nginx is missing; run deploy/install-deps.sh (Debian package nginx-light)")
    built = subprocess.run([nginx_binary, "-V"], capture_output=True, text=True).stderr
    assert "--with-http_ssl_module" in built, "this nginx has no TLS (http_ssl_module)"
    assert "--without-http_proxy_module" not in built, "this nginx has no proxy and proxy_cache"

    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    # One second of max-age, so the test sees nginx revalidate an expired page.
    backend = start_server(data, "--page-max-age", "1")
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    cert, key = make_certificate(tmp_path)
    nginx = Nginx(prefix, backend.url.removeprefix("http://").rstrip("/"), cert, key).start()
    yield nginx, backend, token, cert
    nginx.stop()


def pip_over_tls(tmp_path: pathlib.Path, cert: pathlib.Path, *args: str) -> None:
    """Debian's pip trusting only `cert`: --cert, with no *_CA_BUNDLE variable of this machine
    overriding it (requests prefers those to the session's own CA file)."""
    env = {k: v for k, v in clean_pip_environment(tmp_path).items() if not k.endswith("CA_BUNDLE")}
    result = subprocess.run(["/usr/bin/python3", "-m", "pip", *args, "--cert", str(cert)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"pip {' '.join(args)}:\n{result.stdout}\n{result.stderr}"


def fetch(url: str, cert: pathlib.Path, headers: dict | None = None):
    context = ssl.create_default_context(cafile=str(cert))
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=15, context=context) as response:
        return response.status, dict(response.headers), response.read()


def test_uploads_stream_through_and_pip_installs_over_tls(front, tmp_path):
    nginx, backend, token, cert = front
    # Large enough that a buffering proxy would spool it to disk (nginx buffers 16 KiB in memory).
    payload = os.urandom(3 << 20)
    put_wheel = build_wheel(tmp_path / "a", "kernels", "1.0.0", files={"kernels/blob.bin": payload})
    status, body = curl("--cacert", str(cert), "-u", f"__token__:{token}", "-T", str(put_wheel),
                        nginx.url + "api/v1/files/" + put_wheel.name)
    assert status == 201, body
    form_wheel = build_wheel(tmp_path / "b", "kernels", "1.1.0", files={"kernels/blob.bin": payload})
    # requests lets REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE override twine's --cert; a user behind a
    # private CA sets the variable, so do that.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWINE_") and not k.endswith("CA_BUNDLE")}
    env.update(HOME=str(tmp_path), REQUESTS_CA_BUNDLE=str(cert))
    uploaded = subprocess.run(["twine", "upload", "--disable-progress-bar", "--non-interactive", "--repository-url",
                               nginx.url + "legacy/", "--cert", str(cert), "-u", "__token__", "-p", token,
                               str(form_wheel)], capture_output=True, text=True, timeout=120, env=env)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    status, body = curl("--cacert", str(cert), "-u", "__token__:wh_not_a_token", "-T", str(put_wheel),
                        nginx.url + "api/v1/files/" + put_wheel.name)
    assert status == 401, body  # wheelhouse's own refusal, passed through
    error_log = nginx.error_log.read_text()
    assert "buffered to a temporary file" not in error_log, error_log

    target = tmp_path / "site"
    pip_over_tls(tmp_path, cert, "install", "--index-url", nginx.url + "simple/", "--target", str(target),
                 "kernels==1.0.0")
    assert (target / "kernels" / "blob.bin").read_bytes() == payload
    pip_over_tls(tmp_path, cert, "install", "--index-url", nginx.url + "simple/", "--target", str(tmp_path / "site2"),
                 "kernels")
    assert (tmp_path / "site2" / "kernels-1.1.0.dist-info").is_dir()


def test_plain_http_redirects_to_https(front):
    nginx, _, _, _ = front
    result = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}",
                             f"http://127.0.0.1:{nginx.http_port}/simple/"], capture_output=True, text=True, timeout=30)
    assert result.stdout == "301 https://127.0.0.1/simple/", result.stdout + result.stderr


def upload_through(front, wheel) -> None:
    """PUTs `wheel` through the TLS front with the upload token; it must be new (201)."""
    nginx, _, token, cert = front
    status, body = curl("--cacert", str(cert), "-u", f"__token__:{token}", "-T", str(wheel),
                        nginx.url + "api/v1/files/" + wheel.name)
    assert status == 201, body


def test_simple_pages_are_cached_and_revalidated_by_etag(front, tmp_path):
    nginx, backend, token, cert = front
    upload_through(front, build_wheel(tmp_path, "kernels", "2.0.0"))

    page = nginx.url + "simple/kernels/"
    status, first, json_body = fetch(page, cert, {"Accept": PIP_ACCEPT})
    assert status == 200 and first["X-Cache-Status"] == "MISS"
    assert first["Content-Type"] == "application/vnd.pypi.simple.v1+json"
    _, second, again = fetch(page, cert, {"Accept": PIP_ACCEPT})
    assert second["X-Cache-Status"] == "HIT" and again == json_body and second["ETag"] == first["ETag"]
    # The same URL in HTML is another entry, never the JSON one served to a browser.
    _, html, html_body = fetch(page, cert, {"Accept": "text/html"})
    assert html["X-Cache-Status"] == "MISS" and html["Content-Type"].startswith("text/html")
    assert html_body != json_body

    time.sleep(2.2)  # past wheelhouse's max-age of 1 s
    _, expired, _ = fetch(page, cert, {"Accept": PIP_ACCEPT})
    assert expired["X-Cache-Status"] in {"REVALIDATED", "STALE", "UPDATING", "EXPIRED"}
    deadline = time.monotonic() + 5
    lines: list[str] = []
    while time.monotonic() < deadline:
        lines = [line for line in backend.access_lines(settle=0.5) if '"GET /simple/kernels/' in line]
        if any(' 304 ' in line for line in lines):
            break
    # nginx asked with the ETag it held and wheelhouse answered 304, with no body.
    assert any(' 304 0 ' in line for line in lines), "\n".join(lines)
    assert sum(' 200 ' in line for line in lines) == 2  # one JSON, one HTML: the hit never reached it


def test_old_pip_has_its_own_cache_entry_and_other_user_agents_share_one(front, tmp_path):
    nginx, backend, token, cert = front
    upload_through(front, build_wheel(tmp_path, "kernels", "2.1.0"))

    page = nginx.url + "simple/kernels/"
    # Served from the cache, fresh or revalidated (wheelhouse's max-age here is one second).
    from_cache = {"HIT", "REVALIDATED", "STALE", "UPDATING"}

    def ask(user_agent: str):
        _, headers, body = fetch(page, cert, {"Accept": PIP_ACCEPT, "User-Agent": user_agent})
        return headers, body

    modern, json_body = ask("pip/25.1.1 {\"python\": \"3.13.1\"}")
    assert modern["X-Cache-Status"] == "MISS" and modern["Content-Type"] == "application/vnd.pypi.simple.v1+json"
    assert modern["Vary"] == "Accept, User-Agent"  # wheelhouse's answer reaches the client as it is
    # Another User-Agent on the same side of pip 23.2 is the same entry, whatever nginx makes of Vary.
    for user_agent in ("pip/24.0 {\"python\": \"3.11.2\"}", "uv/0.6.0", "pip/23.10.0"):
        shared, body = ask(user_agent)
        assert shared["X-Cache-Status"] in from_cache, user_agent
        assert body == json_body
    # pip before 23.2 reads core metadata only from HTML: its own entry, shared by all such pips.
    old, html_body = ask("pip/23.1.2 {\"python\": \"3.11.2\"}")
    assert old["X-Cache-Status"] == "MISS" and old["Content-Type"] == "application/vnd.pypi.simple.v1+html"
    for user_agent in ("pip/22.3.1 {}", "pip/9.0.1", "pip/23.0"):
        older, body = ask(user_agent)
        assert older["X-Cache-Status"] in from_cache, user_agent
        assert body == html_body
    deadline = time.monotonic() + 5
    lines: list[str] = []
    while time.monotonic() < deadline:  # the access log is flushed once a second
        lines = [line for line in backend.access_lines(settle=0.5) if '"GET /simple/kernels/' in line]
        if sum(' 200 ' in line for line in lines) >= 2:
            break
    assert sum(' 200 ' in line for line in lines) == 2, "\n".join(lines)  # one JSON, one HTML


def test_metrics_are_for_this_host_only_and_files_stream(front, tmp_path):
    nginx, _, token, cert = front
    status, _, body = fetch(nginx.url + "metrics", cert)  # the test runs on the allowed loopback
    assert status == 200 and b"wheelhouse_http_requests_total" in body

    wheel = build_wheel(tmp_path, "kernels", "3.0.0")
    status, answer = curl("--cacert", str(cert), "-H", "Accept: application/json", "-u", f"__token__:{token}", "-T",
                          str(wheel), nginx.url + "api/v1/files/" + wheel.name)
    assert status == 201, answer
    url = json.loads(answer)["url"]
    status, headers, downloaded = fetch(nginx.url + url.lstrip("/"), cert, {"Range": "bytes=0-3"})
    assert status == 206 and downloaded == b"PK\x03\x04"
    assert "immutable" in headers["Cache-Control"]
