"""A fake GitHub on loopback for the release-asset tests: no internet, real HTTPS.

Run as a process (`python3 fake_github.py --dir WORKDIR [--setup setup.json]`), it makes a CA
and a server certificate (SANs localhost, 127.0.0.1, ::1) with the openssl command, and serves
two HTTPS hosts:

  "github"  https://127.0.0.1:PORT   the REST API (releases by tag, paginated asset lists with
                                     Link and X-RateLimit-* headers, private repositories behind a
                                     token) and release downloads, which answer 302 to the storage
                                     host with a signed-looking query, as GitHub does;
  "storage" https://localhost:PORT   the bytes: Content-Length, Range (206, suffix ranges), HEAD.

It prints one JSON line on stdout when both listen: {"github": URL, "storage": URL, "ca": PATH}.

Control, on the github host, under /_control/ (JSON in and out):
  POST /_control/setup      {"releases": [{"owner", "repo", "tag", "private"?, "assets": [
                              {"name", "path", "digest"?, "fault"?}]}]}; adds them
  POST /_control/fault      {"name": ASSET NAME, "fault": {...}} (an empty fault clears it)
  POST /_control/settings   {"token"?, "rate_limit"?, "rate_remaining"?, "per_page_default"?,
                             "embedded_assets"?}
  POST /_control/reset      forgets releases, faults, the log and settings
  GET  /_control/log        [{"host", "method", "path", "range", "authorization", "accept", "status",
                              "body_bytes"}] every request but the control ones, in order
  POST /_control/log/clear

Faults, per asset, applied where its bytes or its redirect are served:
  {"slow_bps": N}          throttle the body to N bytes a second
  {"stall_after": N}       send N body bytes, then go silent (for "stall_seconds", default 60)
  {"reset_after": N}       send N body bytes, then reset the connection (TCP RST), as a host that dies
  {"lie_length": N}        claim N bytes more than sent in Content-Length, then close
  {"status": 500|503}      answer the download with that status
  {"redirect_loop": true}  storage redirects back to the github download URL, forever
  {"redirect_to": URL}     the github download redirects there instead of to storage
  {"wrong_bytes": true}    serve the file's bytes with the first byte flipped
  {"ignore_range": true}   answer every request with the whole file (200), as hosts without Range do
  {"no_length": true}      send no Content-Length: the body ends when the connection closes
  {"extra_bytes": N}       a whole-file answer (200) holds N zero bytes more than the file, as if it grew

Python's standard library only (Debian's /usr/bin/python3); tests/e2e/conftest.py starts it.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import pathlib
import secrets
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

CHUNK = 256 * 1024


def make_certificates(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """A throwaway CA and a server certificate for localhost, 127.0.0.1 and ::1, made by openssl."""
    ca_key, ca_pem = directory / "ca.key", directory / "ca.pem"
    key, csr, pem = directory / "server.key", directory / "server.csr", directory / "server.pem"
    if ca_pem.exists() and pem.exists() and key.exists():
        return ca_pem, pem, key
    extensions = directory / "server.ext"
    extensions.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\n"
                          "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", str(ca_key), "-out", str(ca_pem), "-days", "3", "-subj", "/CN=wheelhouse fake GitHub CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
            "-out", str(csr), "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_pem), "-CAkey", str(ca_key), "-CAcreateserial",
            "-out", str(pem), "-days", "3", "-extfile", str(extensions))
    return ca_pem, pem, key


def sha256_file(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class State:
    """Releases, faults, settings and the request log; shared by both hosts' threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # A client can read its answer before the handler logs it, so reading the log first waits
        # for the requests begun since the last clear to be logged. A request begun before a clear
        # (a stalled download of an earlier test) is never logged after it.
        self.epoch = 0
        self.in_flight = 0
        self.settled = threading.Condition(self.lock)
        self.github_url = ""
        self.storage_url = ""
        self.reset()

    def clear_log(self) -> None:
        """Starts a new log; the caller holds the lock."""
        self.log: list[dict] = []
        self.epoch += 1
        self.in_flight = 0

    def reset(self) -> None:
        with self.lock:
            self.releases: list[dict] = []  # each: owner, repo, tag, id, private, assets (list of dict)
            self.next_id = 1000
            self.clear_log()
            self.token = ""                 # the token private repositories need
            self.rate_limit = 5000
            self.rate_remaining = 5000
            self.rate_reset = int(time.time()) + 3600
            self.per_page_default = 30
            self.embedded_assets = -1       # assets listed inside the release JSON; -1: all

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add_release(self, spec: dict) -> dict:
        with self.lock:
            release = self.find_release(spec["owner"], spec["repo"], spec["tag"])
            if release is None:
                release = {"owner": spec["owner"], "repo": spec["repo"], "tag": spec["tag"],
                           "private": bool(spec.get("private", False)), "id": self.new_id(), "assets": []}
                self.releases.append(release)
            elif "private" in spec:
                release["private"] = bool(spec["private"])
        for asset_spec in spec.get("assets", []):
            path = pathlib.Path(asset_spec["path"])
            size = path.stat().st_size
            digest = asset_spec["digest"] if "digest" in asset_spec else "sha256:" + sha256_file(path)
            with self.lock:
                release["assets"] = [a for a in release["assets"] if a["name"] != asset_spec.get("name", path.name)]
                release["assets"].append({"id": self.new_id(), "name": asset_spec.get("name", path.name),
                                          "path": str(path), "size": size, "digest": digest,
                                          "fault": dict(asset_spec.get("fault", {}))})
        return self.release_json(release)

    def find_release(self, owner: str, repo: str, tag: str) -> dict | None:
        for release in self.releases:
            if release["owner"] == owner and release["repo"] == repo and release["tag"] == tag:
                return release
        return None

    def find_asset(self, asset_id: int) -> tuple[dict, dict] | None:
        for release in self.releases:
            for asset in release["assets"]:
                if asset["id"] == asset_id:
                    return release, asset
        return None

    def asset_json(self, release: dict, asset: dict) -> dict:
        owner, repo, tag = release["owner"], release["repo"], release["tag"]
        quoted = urllib.parse.quote(asset["name"])
        return {
            "id": asset["id"], "name": asset["name"], "label": "", "state": "uploaded",
            "content_type": "application/octet-stream", "size": asset["size"],
            "digest": asset["digest"], "download_count": 0,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "url": f"{self.github_url}/repos/{owner}/{repo}/releases/assets/{asset['id']}",
            "browser_download_url": f"{self.github_url}/{owner}/{repo}/releases/download/{tag}/{quoted}",
        }

    def release_json(self, release: dict) -> dict:
        owner, repo = release["owner"], release["repo"]
        assets = release["assets"] if self.embedded_assets < 0 else release["assets"][: self.embedded_assets]
        return {
            "id": release["id"], "tag_name": release["tag"], "name": release["tag"], "draft": False,
            "prerelease": False, "html_url": f"{self.github_url}/{owner}/{repo}/releases/tag/{release['tag']}",
            "url": f"{self.github_url}/repos/{owner}/{repo}/releases/{release['id']}",
            "assets_url": f"{self.github_url}/repos/{owner}/{repo}/releases/{release['id']}/assets",
            "assets": [self.asset_json(release, asset) for asset in assets],
        }


STATE = State()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    host_name = "?"  # "github" or "storage", set per server class

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        pass

    # Every answer goes through here, so the log has what each request got.
    def begin(self) -> None:
        self.status_sent = 0
        self.body_bytes = 0
        if not self.path.startswith("/_control/"):
            with STATE.lock:
                self.epoch = STATE.epoch
                STATE.in_flight += 1

    def record(self) -> None:
        if self.path.startswith("/_control/"):
            return
        with STATE.lock:
            if self.epoch != STATE.epoch:
                return
            STATE.in_flight -= 1
            STATE.settled.notify_all()
            STATE.log.append({"host": self.host_name, "method": self.command, "path": self.path,
                              "range": self.headers.get("Range"), "authorization": self.headers.get("Authorization"),
                              "accept": self.headers.get("Accept"), "status": self.status_sent,
                              "body_bytes": self.body_bytes})

    def answer(self, status: int, body: bytes = b"", content_type: str = "application/json",
               headers: dict | None = None) -> None:
        self.status_sent = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
            self.body_bytes += len(body)

    def answer_json(self, status: int, value, headers: dict | None = None) -> None:
        self.answer(status, json.dumps(value).encode(), headers=headers)

    def redirect(self, location: str) -> None:
        self.answer(302, b"", "text/html", {"Location": location})

    def handle_one(self) -> None:
        self.begin()
        try:
            self.route()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError):
            self.close_connection = True
        finally:
            self.record()

    do_GET = do_HEAD = do_POST = handle_one

    def route(self) -> None:
        raise NotImplementedError

    def read_json(self) -> dict:
        length = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(length) or b"{}")


class GitHubHandler(Handler):
    host_name = "github"

    def route(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
        query = dict(urllib.parse.parse_qsl(url.query))
        if parts[:1] == ["_control"]:
            return self.control(parts[1:])
        if parts[:1] == ["repos"]:
            return self.api(parts[1:], query)
        # /{owner}/{repo}/releases/download/{tag}/{name}
        if len(parts) == 6 and parts[2:4] == ["releases", "download"]:
            with STATE.lock:
                release = STATE.find_release(parts[0], parts[1], parts[4])
                asset = next((a for a in release["assets"] if a["name"] == parts[5]), None) if release else None
            if asset is None or (release["private"] and not self.authorized()):
                return self.answer(404, b"Not Found", "text/plain")
            return self.to_storage(asset)
        return self.answer_json(404, {"message": "Not Found"})

    def to_storage(self, asset: dict) -> None:
        fault = asset["fault"]
        if "redirect_to" in fault:
            return self.redirect(fault["redirect_to"])
        signature = secrets.token_hex(16)
        self.redirect(f"{STATE.storage_url}/github-production-release-asset/{asset['id']}"
                      f"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=300&X-Amz-Signature={signature}"
                      f"&response-content-disposition=attachment%3B%20filename%3D{urllib.parse.quote(asset['name'])}")

    def authorized(self) -> bool:
        given = self.headers.get("Authorization", "")
        return bool(STATE.token) and given in (f"Bearer {STATE.token}", f"token {STATE.token}")

    def rate_headers(self) -> dict:
        return {"X-RateLimit-Limit": str(STATE.rate_limit), "X-RateLimit-Remaining": str(STATE.rate_remaining),
                "X-RateLimit-Reset": str(STATE.rate_reset), "X-RateLimit-Used": str(STATE.rate_limit - STATE.rate_remaining),
                "X-RateLimit-Resource": "core"}

    def api(self, parts: list[str], query: dict) -> None:
        given = self.headers.get("Authorization")
        if given and not self.authorized():
            return self.answer_json(401, {"message": "Bad credentials"})
        with STATE.lock:
            if STATE.rate_remaining <= 0:
                headers = self.rate_headers()
                limited = True
            else:
                STATE.rate_remaining -= 1
                headers = self.rate_headers()
                limited = False
        if limited:
            return self.answer_json(403, {"message": "API rate limit exceeded for 127.0.0.1."}, headers)
        if len(parts) < 3 or parts[2] != "releases":
            return self.answer_json(404, {"message": "Not Found"}, headers)
        owner, repo, rest = parts[0], parts[1], parts[3:]

        def visible(release: dict | None) -> bool:
            return release is not None and (not release["private"] or self.authorized())

        with STATE.lock:
            if len(rest) == 2 and rest[0] == "tags":  # releases/tags/{tag}
                release = STATE.find_release(owner, repo, rest[1])
                if not visible(release):
                    return self.answer_json(404, {"message": "Not Found"}, headers)
                return self.answer_json(200, STATE.release_json(release), headers)
            if len(rest) == 2 and rest[0] == "assets" and rest[1].isdigit():  # releases/assets/{id}
                found = STATE.find_asset(int(rest[1]))
                if found is None or not visible(found[0]) or found[0]["owner"] != owner or found[0]["repo"] != repo:
                    return self.answer_json(404, {"message": "Not Found"}, headers)
                release, asset = found
                if "application/octet-stream" in self.headers.get("Accept", ""):
                    return self.to_storage(asset)
                return self.answer_json(200, STATE.asset_json(release, asset), headers)
            if len(rest) == 2 and rest[0].isdigit() and rest[1] == "assets":  # releases/{id}/assets
                release = next((r for r in STATE.releases if r["id"] == int(rest[0]) and r["owner"] == owner
                                and r["repo"] == repo), None)
                if not visible(release):
                    return self.answer_json(404, {"message": "Not Found"}, headers)
                try:
                    per_page = max(1, min(100, int(query.get("per_page", STATE.per_page_default))))
                    page = max(1, int(query.get("page", "1")))
                except ValueError:
                    return self.answer_json(400, {"message": "per_page and page must be numbers"}, headers)
                assets = release["assets"]
                last = max(1, (len(assets) + per_page - 1) // per_page)
                chosen = assets[(page - 1) * per_page: page * per_page]
                base = f"{STATE.github_url}/repos/{owner}/{repo}/releases/{release['id']}/assets?per_page={per_page}"
                links = []
                if page < last:
                    links.append(f'<{base}&page={page + 1}>; rel="next"')
                    links.append(f'<{base}&page={last}>; rel="last"')
                if page > 1:
                    links.append(f'<{base}&page={page - 1}>; rel="prev"')
                    links.append(f'<{base}&page=1>; rel="first"')
                if links:
                    headers["Link"] = ", ".join(links)
                return self.answer_json(200, [STATE.asset_json(release, a) for a in chosen], headers)
        return self.answer_json(404, {"message": "Not Found"}, headers)

    @staticmethod
    def settle() -> None:
        """Waits, holding STATE.lock, for answered requests to be logged; a stalled download
        (a fault) stays in flight, so the wait is bounded."""
        STATE.settled.wait_for(lambda: STATE.in_flight == 0, timeout=2)

    def control(self, parts: list[str]) -> None:
        if parts == ["log"] and self.command == "GET":
            with STATE.lock:
                self.settle()
                return self.answer_json(200, list(STATE.log))
        if self.command != "POST":
            return self.answer_json(405, {"message": "control endpoints take POST"})
        body = self.read_json()
        if parts == ["log", "clear"]:
            with STATE.lock:
                STATE.clear_log()
            return self.answer_json(200, {})
        if parts == ["reset"]:
            STATE.reset()
            return self.answer_json(200, {})
        if parts == ["setup"]:
            return self.answer_json(200, {"releases": [STATE.add_release(spec) for spec in body.get("releases", [])]})
        if parts == ["fault"]:
            with STATE.lock:
                hits = [a for r in STATE.releases for a in r["assets"] if a["name"] == body["name"]]
                for asset in hits:
                    asset["fault"] = dict(body.get("fault", {}))
            return self.answer_json(200 if hits else 404, {"assets": len(hits)})
        if parts == ["settings"]:
            with STATE.lock:
                for key in ("token", "rate_limit", "rate_remaining", "per_page_default", "embedded_assets"):
                    if key in body:
                        setattr(STATE, key, body[key])
            return self.answer_json(200, {})
        return self.answer_json(404, {"message": "no such control endpoint"})


class StorageHandler(Handler):
    host_name = "storage"

    def route(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        found = None
        if len(parts) == 2 and parts[0] == "github-production-release-asset" and parts[1].isdigit():
            with STATE.lock:
                found = STATE.find_asset(int(parts[1]))
        if found is None or "X-Amz-Signature" not in url.query:
            return self.answer(403, b"<Error><Code>AccessDenied</Code></Error>", "application/xml")
        release, asset = found
        fault = asset["fault"]
        if fault.get("redirect_loop"):
            return self.redirect(STATE.asset_json(release, asset)["browser_download_url"])
        if fault.get("status"):
            return self.answer(int(fault["status"]), b"upstream trouble\n", "text/plain")
        self.send_bytes(asset, fault)

    def send_bytes(self, asset: dict, fault: dict) -> None:
        size = asset["size"]
        start, end = 0, size - 1
        status = 200
        headers = {"Accept-Ranges": "bytes", "ETag": f'"{asset["digest"][-16:]}"',
                   "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"}
        wanted = None if fault.get("ignore_range") else self.headers.get("Range")
        if wanted and wanted.startswith("bytes=") and "," not in wanted:
            first, _, last = wanted[len("bytes="):].strip().partition("-")
            try:
                if first == "":  # bytes=-N, the last N bytes
                    count = int(last)
                    start, end = max(0, size - count), size - 1
                    satisfiable = count > 0 and size > 0
                else:
                    start = int(first)
                    end = min(size - 1, int(last)) if last else size - 1
                    satisfiable = start < size and start <= end
            except ValueError:
                satisfiable, start, end = True, 0, size - 1  # a malformed Range is ignored
                wanted = None
            if wanted and not satisfiable:
                return self.answer(416, b"", "text/plain", {"Content-Range": f"bytes */{size}"})
            if wanted:
                status = 206
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = max(0, end - start + 1)
        extra = int(fault.get("extra_bytes", 0)) if status == 200 else 0
        claimed = length + extra + int(fault.get("lie_length", 0))
        self.status_sent = status
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if not fault.get("no_length"):
            self.send_header("Content-Length", str(claimed))
        for name, value in headers.items():
            self.send_header(name, value)
        if fault.get("lie_length") or fault.get("no_length"):
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        slow = int(fault.get("slow_bps", 0))
        stall_after = fault.get("stall_after")
        with open(asset["path"], "rb") as stream:
            stream.seek(start)
            remaining = length
            position = start
            while remaining > 0:
                step = min(CHUNK, remaining, max(1, slow // 10) if slow else CHUNK)
                if stall_after is not None and self.body_bytes >= int(stall_after):
                    time.sleep(float(fault.get("stall_seconds", 60)))
                    self.close_connection = True
                    return
                if "reset_after" in fault and self.body_bytes >= int(fault["reset_after"]):
                    return self.reset()
                if stall_after is not None:
                    step = min(step, int(stall_after) - self.body_bytes)
                if "reset_after" in fault:
                    step = min(step, int(fault["reset_after"]) - self.body_bytes)
                block = stream.read(step)
                if not block:
                    break
                if fault.get("wrong_bytes") and position == 0:
                    block = bytes([block[0] ^ 0xFF]) + block[1:]
                self.wfile.write(block)
                self.body_bytes += len(block)
                remaining -= len(block)
                position += len(block)
                if slow:
                    time.sleep(len(block) / slow)
        if extra:
            self.wfile.write(bytes(extra))
            self.body_bytes += extra
        if fault.get("lie_length") or fault.get("no_length"):
            self.close_connection = True


    def reset(self) -> None:
        """Ends the connection with a TCP reset, no TLS close_notify: a host that died mid-body."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        os.close(self.connection.detach())
        self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:
        pass  # clients that refuse our certificate or hang up are part of the tests


def serve(handler: type, context: ssl.SSLContext) -> Server:
    server = Server(("127.0.0.1", 0), handler)
    # The handshake happens on the handler's thread, so a client that never finishes it blocks no one.
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake GitHub (API, downloads, storage) over HTTPS on loopback")
    parser.add_argument("--dir", required=True, help="where the certificates go")
    parser.add_argument("--setup", help="a JSON file as POST /_control/setup takes")
    arguments = parser.parse_args()
    directory = pathlib.Path(arguments.dir)
    directory.mkdir(parents=True, exist_ok=True)
    ca, certificate, key = make_certificates(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certificate, key)
    github = serve(GitHubHandler, context)
    storage = serve(StorageHandler, context)
    STATE.github_url = f"https://127.0.0.1:{github.server_address[1]}"
    STATE.storage_url = f"https://localhost:{storage.server_address[1]}"
    if arguments.setup:
        for spec in json.loads(pathlib.Path(arguments.setup).read_text()).get("releases", []):
            STATE.add_release(spec)
    print(json.dumps({"github": STATE.github_url, "storage": STATE.storage_url, "ca": str(ca)}), flush=True)
    try:
        while sys.stdin.read(1):  # runs until its parent closes stdin or kills it
            pass
    except KeyboardInterrupt:
        pass


class FakeGitHub:
    """The tests' handle on a running fake: its URLs, CA, control calls and the flags that point
    wheelhouse at it."""

    def __init__(self, directory: pathlib.Path):
        self.directory = pathlib.Path(directory)
        here = pathlib.Path(__file__).resolve()
        self.process = subprocess.Popen([sys.executable, str(here), "--dir", str(self.directory)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"fake GitHub did not start (exit {self.process.wait()})")
        started = json.loads(line)
        self.github_url: str = started["github"]
        self.storage_url: str = started["storage"]
        self.ca = pathlib.Path(started["ca"])
        self.api_url = self.github_url
        self._context = ssl.create_default_context(cafile=str(self.ca))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def call(self, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.github_url + path, data=data, method="GET" if body is None else "POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=self._context, timeout=30) as response:
            return json.loads(response.read() or b"null")

    def reset(self) -> None:
        self.call("/_control/reset", {})

    def add_release(self, owner: str, repo: str, tag: str, files=(), private: bool = False, **asset_extra) -> dict:
        """Adds a release (or to it) with assets from files on disk; returns the release JSON."""
        assets = [{"path": str(path), "name": pathlib.Path(path).name, **asset_extra} for path in files]
        spec = {"owner": owner, "repo": repo, "tag": tag, "private": private, "assets": assets}
        return self.call("/_control/setup", {"releases": [spec]})["releases"][0]

    def set_fault(self, name: str, **fault) -> None:
        self.call("/_control/fault", {"name": name, "fault": fault})

    def set(self, **settings) -> None:
        """token=, rate_limit=, rate_remaining=, per_page_default=, embedded_assets="""
        self.call("/_control/settings", settings)

    def log(self) -> list[dict]:
        return self.call("/_control/log")

    def clear_log(self) -> None:
        self.call("/_control/log/clear", {})

    def download_url(self, owner: str, repo: str, tag: str, name: str) -> str:
        return f"{self.github_url}/{owner}/{repo}/releases/download/{tag}/{urllib.parse.quote(name)}"

    def server_flags(self) -> list[str]:
        """wheelhouse flags that let it fetch from this fake and nothing else."""
        return ["--github-api-url", self.api_url, "--ca-bundle", str(self.ca),
                "--remote-allowed-hosts", "127.0.0.1,localhost", "--remote-allow-private-addresses"]


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
