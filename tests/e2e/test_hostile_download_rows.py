"""The download surfaces of the last commits, as an attacker sends them:

* the route row /files/{sha256}/{filename}.metadata (PEP 658, on the read pool) and the router's
  {name}.suffix capture: doubled suffixes, a bare ".metadata", encoded dots, a trailing slash,
  uppercase hex, a sha256 of another file, HEAD, Range and conditionals;
* distribution::row_requested: a download whose name a catalog row holds is served without
  parsing the name again, so the access check (which still parses) and the row the handler serves
  must agree: a token limited to one project on a private index reaches its own files only, a
  name that parses as nothing is refused to it (fails closed), names that differ only in case
  are no row, and yanks, quarantines and deletions are seen at once despite the lookup cache;
* pages of 64 KiB or more (the copy's threshold is 8 KiB since 2026-11-30) sent by sendfile(2)
  from a sealed memory file: a client that stops
  reading halfway, many slow readers at once, HEAD and pipelining, a page that changes while a
  slow reader is mid-page, Range, TLS; and the descriptors those memory files hold.
"""

from __future__ import annotations

import hashlib
import json
import contextlib
import os
import pathlib
import re
import resource
import socket
import ssl
import time

import pytest

from conftest import ingest
from server_process import ServerProcess
from test_hostile_access import sdist as static_sdist
from test_pep825_variants import VARIANTS, build_variant
from test_sdists import sdist_bytes
from test_uploads import curl, make_token
from wheelbuilder import build_wheel

OWN, OTHER = "gamma-proj", "beta-proj"
BIG = "big-project"
JSON_PAGE = "application/vnd.pypi.simple.v1+json"
LARGE = 64 * 1024  # past storage::page_file_threshold (8 KiB; 64 KiB when these tests were written)


# ---- helpers ----

def sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def address(server: ServerProcess) -> tuple[str, int]:
    host, port = server.url.split("//")[1].rstrip("/").rsplit(":", 1)
    return host, int(port)


def read_responses(conn: socket.socket, count: int, methods: list[str]) -> list[tuple[str, dict, bytes]]:
    """`count` HTTP/1.1 responses from `conn` as (status line, headers, body); a HEAD's has no body."""
    got, out = b"", []
    while len(out) < count:
        head_end = got.find(b"\r\n\r\n")
        if head_end >= 0:
            lines = got[:head_end].decode("latin-1").split("\r\n")
            headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
            length = 0 if methods[len(out)] == "HEAD" else int(headers.get("content-length", "0"))
            end = head_end + 4 + length
            if len(got) >= end:
                out.append((lines[0], headers, got[head_end + 4:end]))
                got = got[end:]
                continue
        piece = conn.recv(1 << 16)
        assert piece, f"the server closed after {len(out)} responses"
        got += piece
    assert got == b"", got[:200]
    return out


def exchange(server: ServerProcess, *requests: tuple[str, str, dict]) -> list[tuple[str, dict, bytes]]:
    """Sends every (method, path, headers) in one write on one connection; reads the answers."""
    raw = b""
    for method, path, headers in requests:
        fields = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        raw += f"{method} {path} HTTP/1.1\r\nHost: x\r\n{fields}\r\n".encode("latin-1")
    with socket.create_connection(address(server), timeout=10) as conn:
        conn.sendall(raw)
        return read_responses(conn, len(requests), [method for method, _, _ in requests])


def fetch(server: ServerProcess, path: str, token: str | None = None, method: str = "GET",
          **headers: str) -> tuple[int, dict, bytes]:
    """One request on its own connection: (status code, headers, body)."""
    if token:
        headers["Authorization"] = f"Bearer {token}"
    headers = {name.replace("_", "-"): value for name, value in headers.items()}
    (status, fields, body), = exchange(server, (method, path, headers))
    return int(status.split()[1]), fields, body


def descriptors(server: ServerProcess) -> tuple[int, int]:
    """(open descriptors, of which large pages' copies) of the server process."""
    folder = pathlib.Path(f"/proc/{server.process.pid}/fd")
    links = []
    for entry in folder.iterdir():
        try:
            links.append(os.readlink(entry))
        except FileNotFoundError:  # closed while listed
            pass
    # A page's copy is an unlinked file of the data folder's tmp/ (or upstream/), or a memfd.
    return len(links), sum(1 for link in links if link.startswith("/memfd:") or link.endswith(" (deleted)"))


def open_files(server: ServerProcess) -> list[str]:
    """What the server's descriptors point at, for a failure's message."""
    folder = pathlib.Path(f"/proc/{server.process.pid}/fd")
    found = []
    for entry in folder.iterdir():
        with contextlib.suppress(FileNotFoundError):
            found.append(f"{entry.name}->{os.readlink(entry)}")
    return sorted(found)


def serving(server: ServerProcess, client_port: int) -> bool:
    """Whether one of the server's descriptors is its end of the connection from `client_port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in pathlib.Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].rsplit(":", 1)[1], 16) == client_port:
                inodes.add(f"socket:[{fields[9]}]")
    return any(entry.split("->", 1)[1] in inodes for entry in open_files(server))


def resident_kib(server: ServerProcess) -> int:
    status = pathlib.Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))


def settle(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


class SlowReader:
    """A connection with a 4 KiB receive window that asks for `path` and reads `first` bytes of
    the answer, then nothing until told to."""

    def __init__(self, server: ServerProcess, path: str, accept: str = JSON_PAGE, first: int = 1024):
        self.conn = socket.socket()
        self.conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.conn.settimeout(10)
        self.conn.connect(address(server))
        self.conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n".encode())
        self.got = b""
        while len(self.got) < first:
            self.got += self.conn.recv(first - len(self.got))

    def finish(self) -> tuple[dict, bytes]:
        """The rest of the single response: its headers and whole body."""
        while b"\r\n\r\n" not in self.got:
            self.got += self.conn.recv(1 << 16)
        head, _, body = self.got.partition(b"\r\n\r\n")
        headers = {name.lower(): value.strip() for name, _, value in
                   (line.partition(":") for line in head.decode("latin-1").split("\r\n")[1:])}
        length = int(headers["content-length"])
        while len(body) < length:
            piece = self.conn.recv(1 << 16)
            assert piece, f"the server closed {length - len(body)} bytes short of the page"
            body += piece
        assert len(body) == length
        return headers, body

    def close(self) -> None:
        self.conn.close()


def big_farm(farm: pathlib.Path, name: str = BIG, releases: int = 160) -> None:
    """Enough wheels of `name` that its pages pass 64 KiB in both formats."""
    module = name.replace("-", "_")
    for minor in range(releases):
        build_wheel(farm, name, f"1.{minor}", files={f"{module}/__init__.py": f"V = {minor}\n"})


@pytest.fixture
def shelf(tmp_path, wheelhouse_bin, start_server):
    """A private index holding OWN's wheel, a static sdist and a dynamic one (no served PKG-INFO),
    OTHER's wheel, and a variant release's variants.json; a read token limited to OWN, one for every
    project, and an admin token."""
    data, files = tmp_path / "data", tmp_path / "files"
    made = {
        "own_wheel": build_wheel(files, OWN, "1.0"),
        "own_sdist": static_sdist(files, OWN, "1.0"),
        "other_wheel": build_wheel(files, OTHER, "1.0"),
        "variant_wheel": build_variant(files, "cu128_sm90", VARIANTS["cu128_sm90"]),
    }
    dynamic = files / "gamma_proj-2.0.tar.gz"  # Metadata-Version 2.1: its PKG-INFO is not static
    dynamic.write_bytes(sdist_bytes("gamma_proj", "2.0", root="gamma_proj-2.0"))
    made["own_dynamic_sdist"] = dynamic
    assert ingest(wheelhouse_bin, data, files).returncode == 0
    tokens = {
        "limited": make_token(wheelhouse_bin, data, "gamma-reader", "--scope", "read", "--project", OWN),
        "reader": make_token(wheelhouse_bin, data, "reader", "--scope", "read"),
        "admin": make_token(wheelhouse_bin, data, "root", "--scope", "admin"),
    }
    server = start_server(data, "--private")
    return server, tokens, made


def url_of(path: pathlib.Path, suffix: str = "") -> str:
    return f"/files/{sha256(path)}/{path.name}{suffix}"


def variants_json_url(server: ServerProcess, token: str) -> str:
    status, _, body = fetch(server, "/simple/flash-attn/", token, Accept=JSON_PAGE)
    assert status == 200, body
    entry = next(entry for entry in json.loads(body)["files"] if entry["filename"].endswith("-variants.json"))
    return entry["url"][entry["url"].index("/files/"):]


def assert_limited_refused_as_naming_nothing(status: int, body: bytes) -> None:
    assert status == 403, body
    assert b"names no project" in body and b"limited to some projects" in body, body


# ---- item 1: the .metadata row and the {name}.suffix capture ----

def test_metadata_answers_get_and_head_alike_with_no_body_on_head(shelf):
    server, tokens, made = shelf
    path = url_of(made["own_wheel"], ".metadata")
    status, got, body = fetch(server, path, tokens["limited"])
    assert status == 200 and body.startswith(b"Metadata-Version: 2.1\nName: gamma-proj\n"), body
    status, head, empty = fetch(server, path, tokens["limited"], "HEAD")
    assert status == 200 and empty == b""
    assert head["content-length"] == str(len(body)) and head["etag"] == got["etag"]


def test_metadata_answers_range_and_if_none_match_as_a_download(shelf):
    server, tokens, made = shelf
    path = url_of(made["own_wheel"], ".metadata")
    _, whole_head, whole = fetch(server, path, tokens["limited"])
    status, head, part = fetch(server, path, tokens["limited"], Range="bytes=0-9")
    assert status == 206 and part == whole[:10], (status, part)
    assert head["content-range"] == f"bytes 0-9/{len(whole)}"
    status, _, empty = fetch(server, path, tokens["limited"], If_None_Match=whole_head["etag"])
    assert status == 304 and empty == b""
    status, _, again = fetch(server, path, tokens["limited"], If_None_Match='"not-the-tag"')
    assert status == 200 and again == whole


@pytest.mark.parametrize("encoded", ["%2Emetadata", "%2emetadata"])
def test_an_encoded_dot_reaches_the_same_metadata_row(shelf, encoded):
    """The router matches decoded segments: an encoded '.' is the metadata row, for the access
    check and the handler alike (no second reading of the raw target)."""
    server, tokens, made = shelf
    plain = fetch(server, url_of(made["own_wheel"], ".metadata"), tokens["limited"])
    assert fetch(server, url_of(made["own_wheel"], encoded), tokens["limited"])[2] == plain[2]
    status, _, body = fetch(server, url_of(made["other_wheel"], encoded), tokens["limited"])
    assert status == 403 and b"may not read project 'beta-proj'" in body, body


def test_metadata_of_metadata_is_no_file_and_names_nothing_to_a_limited_token(shelf):
    server, tokens, made = shelf
    path = url_of(made["own_wheel"], ".metadata.metadata")
    assert_limited_refused_as_naming_nothing(*fetch(server, path, tokens["limited"])[::2])
    status, _, body = fetch(server, path, tokens["reader"])
    assert status == 404 and b"no file" in body and b"Metadata-Version" not in body, body


def test_a_bare_metadata_name_is_no_file_and_names_nothing_to_a_limited_token(shelf):
    """'.metadata' alone is too short for {filename}.metadata: the plain file row takes it."""
    server, tokens, made = shelf
    path = f"/files/{sha256(made['own_wheel'])}/.metadata"
    assert_limited_refused_as_naming_nothing(*fetch(server, path, tokens["limited"])[::2])
    status, _, body = fetch(server, path, tokens["reader"])
    assert status == 404 and b"no file '.metadata' in this index" in body, body


def test_metadata_of_a_dynamic_sdist_is_404_with_the_reason(shelf):
    server, tokens, made = shelf
    status, _, body = fetch(server, url_of(made["own_dynamic_sdist"], ".metadata"), tokens["limited"])
    assert status == 404 and b"its PKG-INFO does not promise what a built wheel will say" in body, body
    status, _, body = fetch(server, url_of(made["own_sdist"], ".metadata"), tokens["limited"])
    assert status == 200 and body.startswith(b"Metadata-Version: 2.2"), body


def test_metadata_of_a_release_variants_json_is_no_file(shelf):
    """A release's variants.json has no .metadata: row_requested gives no row, the parse none."""
    server, tokens, _ = shelf
    path = variants_json_url(server, tokens["admin"])
    status, _, body = fetch(server, path, tokens["reader"])
    assert status == 200 and json.loads(body)["variants"], body
    status, _, body = fetch(server, path + ".metadata", tokens["reader"])
    assert status == 404 and b"no file" in body, body
    assert_limited_refused_as_naming_nothing(*fetch(server, path + ".metadata", tokens["limited"])[::2])


def test_a_trailing_slash_or_uppercase_hex_is_no_file(shelf):
    server, tokens, made = shelf
    digest, name = sha256(made["own_wheel"]), made["own_wheel"].name
    for path in (f"/files/{digest}/{name}.metadata/", f"/files/{digest}/{name}/",
                 f"/files/{digest.upper()}/{name}.metadata", f"/files/{digest.upper()}/{name}"):
        status, _, body = fetch(server, path, tokens["reader"])
        assert status == 404 and b"file URLs have the form /files/<sha256>/<filename>" in body, (path, body)


def test_the_page_promises_metadata_exactly_where_the_row_serves_it_with_that_hash(shelf):
    """pip fetches <url>.metadata only where the page says core-metadata, and checks its hash: a
    promise the row does not keep (or a hash that differs) breaks every install of the project."""
    server, tokens, made = shelf
    status, _, body = fetch(server, f"/simple/{OWN}/", tokens["limited"], Accept=JSON_PAGE)
    assert status == 200, body
    entries = {entry["filename"]: entry for entry in json.loads(body)["files"]}
    assert set(entries) == {made[key].name for key in ("own_wheel", "own_sdist", "own_dynamic_sdist")}
    for name, entry in entries.items():
        path = entry["url"][entry["url"].index("/files/"):] + ".metadata"
        status, _, metadata = fetch(server, path, tokens["limited"])
        promised = entry.get("core-metadata") or entry.get("data-dist-info-metadata")
        if name == made["own_dynamic_sdist"].name:
            assert not promised and status == 404, (name, entry)
        else:
            assert status == 200 and promised == {"sha256": hashlib.sha256(metadata).hexdigest()}, (name, entry)


def test_pip_resolves_from_metadata_with_a_token_limited_to_the_project(shelf, pip, tmp_path):
    server, tokens, _ = shelf
    report = tmp_path / "report.json"
    index = server.url.replace("http://", f"http://__token__:{tokens['limited']}@", 1) + "simple/"
    pip("install", "--dry-run", "--ignore-installed", "--no-deps", "--only-binary", ":all:", "--report",
        str(report), "--index-url", index, f"{OWN}==1.0")
    assert json.loads(report.read_text())["install"][0]["metadata"]["name"] == OWN


# ---- item 2: row_requested and the access check ----

def test_a_limited_token_reads_its_own_rows_and_is_refused_another_projects_file_and_metadata(shelf):
    server, tokens, made = shelf
    for suffix in ("", ".metadata"):
        assert fetch(server, url_of(made["own_wheel"], suffix), tokens["limited"])[0] == 200
        status, _, body = fetch(server, url_of(made["other_wheel"], suffix), tokens["limited"])
        assert status == 403 and b"may not read project 'beta-proj'" in body, (suffix, body)
        assert fetch(server, url_of(made["other_wheel"], suffix), tokens["reader"])[0] == 200


def test_a_sha256_of_another_file_serves_neither_file(shelf):
    """The row is found by name and sha256 together: another project's sha256 under our name is
    no row (404, not their bytes), and our sha256 under their name is refused by the name."""
    server, tokens, made = shelf
    own, other = made["own_wheel"], made["other_wheel"]
    other_bytes = other.read_bytes()
    for suffix in ("", ".metadata"):
        status, _, body = fetch(server, f"/files/{sha256(other)}/{own.name}{suffix}", tokens["limited"])
        assert status == 404 and b"beta" not in body and body != other_bytes, (suffix, body)
        status, _, body = fetch(server, f"/files/{sha256(own)}/{other.name}{suffix}", tokens["limited"])
        assert status == 403 and b"may not read project 'beta-proj'" in body, (suffix, body)
        status, _, body = fetch(server, f"/files/{sha256(own)}/{other.name}{suffix}", tokens["reader"])
        assert status == 404, (suffix, body)


@pytest.mark.parametrize("name", [
    "x.whl.metadata", "%FF%FE.whl.metadata", "gamma_proj-1.0-py3-none-any.whl%FF.metadata",
    "gamma_proj-1.0-variants.json.metadata", "a" * 9000 + ".whl.metadata", ".metadata.metadata",
])
def test_a_metadata_name_that_parses_as_nothing_is_refused_to_a_limited_token(shelf, name):
    server, tokens, made = shelf
    path = f"/files/{sha256(made['own_wheel'])}/{name}"
    assert_limited_refused_as_naming_nothing(*fetch(server, path, tokens["limited"])[::2])
    status, _, body = fetch(server, path, tokens["reader"])
    assert status == 404, body


@pytest.mark.parametrize("suffix", ["", ".metadata"])
def test_a_name_differing_only_in_case_or_spelling_is_no_row(shelf, suffix):
    """Only the name the row holds is the row: another spelling of our project is a 404 (it parses,
    so a limited token is not refused), another spelling of theirs a 403."""
    server, tokens, made = shelf
    own, other = sha256(made["own_wheel"]), sha256(made["other_wheel"])
    for name in ("Gamma_Proj-1.0-py3-none-any.whl", "gamma_proj-1.0.0-py3-none-any.whl",
                 "GAMMA_PROJ-1.0-PY3-NONE-ANY.WHL"):
        status, _, body = fetch(server, f"/files/{own}/{name}{suffix}", tokens["reader"])
        assert status == 404, (name, body)
    for name in ("Beta_Proj-1.0-py3-none-any.whl", "beta_proj-1.0.0-py3-none-any.whl"):
        status, _, body = fetch(server, f"/files/{other}/{name}{suffix}", tokens["limited"])
        assert status == 403 and b"beta-proj" in body, (name, body)


def test_yanked_files_are_still_served_and_deleted_ones_go_at_once(shelf):
    """PEP 592: a yanked file still downloads. A deletion is seen by the next download even though
    the lookup cache held the row (it is dropped on every catalog change)."""
    server, tokens, made = shelf
    wheel = made["own_wheel"]
    for suffix in ("", ".metadata"):
        assert fetch(server, url_of(wheel, suffix), tokens["reader"])[0] == 200  # cached now
    api = f"{server.url}api/v1/files/{wheel.name}"
    status, body = curl("-X", "POST", "-H", f"Authorization: Bearer {tokens['admin']}", "-H",
                        "Content-Type: application/json", "-d", '{"reason": "broken"}', api + "/yank")
    assert status == 200, body
    status, _, body = fetch(server, url_of(wheel), tokens["reader"])
    assert status == 200 and body == wheel.read_bytes()
    status, body = curl("-X", "DELETE", "-H", f"Authorization: Bearer {tokens['admin']}", api)
    assert status == 200, body
    for suffix in ("", ".metadata"):
        status, _, body = fetch(server, url_of(wheel, suffix), tokens["reader"])
        assert status == 404, (suffix, body)


def test_a_quarantined_projects_files_and_metadata_go_and_come_back_at_once(shelf):
    server, tokens, made = shelf
    wheel = made["own_wheel"]
    for suffix in ("", ".metadata"):
        assert fetch(server, url_of(wheel, suffix), tokens["limited"])[0] == 200  # cached now

    def set_status(value: str) -> None:
        status, body = curl("-X", "PUT", "-H", f"Authorization: Bearer {tokens['admin']}", "-H",
                            "Content-Type: application/json", "-d", json.dumps({"status": value}),
                            f"{server.url}api/v1/projects/{OWN}/status")
        assert status == 200, body

    set_status("quarantined")
    for suffix in ("", ".metadata"):
        status, _, body = fetch(server, url_of(wheel, suffix), tokens["limited"])
        assert status == 404 and b"quarantined" in body, (suffix, body)
    set_status("active")
    for suffix in ("", ".metadata"):
        assert fetch(server, url_of(wheel, suffix), tokens["limited"])[0] == 200, suffix


# ---- item 3: large pages by sendfile from a sealed memory file ----

@pytest.fixture
def big_index(tmp_path, wheelhouse_bin, start_server):
    """A public index whose BIG project's pages pass 64 KiB; an upload token for more files."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    token = make_token(wheelhouse_bin, data, "ci", "--scope", "upload")
    server = start_server(data)
    status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and len(page) > LARGE
    return server, token, page


def test_a_client_that_stops_reading_halfway_costs_nothing_after_it_closes(big_index):
    server, _, page = big_index
    quitter = SlowReader(server, f"/simple/{BIG}/", first=8 * 1024)
    client_port = quitter.conn.getsockname()[1]
    assert serving(server, client_port), "the server holds no socket of the quitter's connection"
    quitter.close()  # unread bytes in its buffer: the kernel resets the connection
    # Its own socket, not the count of all: the fixture's fetch leaves a connection that closes at
    # its own pace, before or after this one.
    assert settle(lambda: not serving(server, client_port)), open_files(server)
    status, _, again = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and again == page


def test_many_slow_readers_share_one_memory_file_and_leave_nothing_behind(big_index):
    """Forty readers of a large page, each stalled after 1 KiB: one descriptor each (its socket),
    never a memory file or a copy of the page per reader; all gone once they close."""
    server, _, page = big_index
    readers = 40
    files_before, memory_files = descriptors(server)
    resident_before = resident_kib(server)
    stalled = [SlowReader(server, f"/simple/{BIG}/") for _ in range(readers)]
    try:
        files_during, memory_files_during = descriptors(server)
        assert memory_files_during == memory_files, (memory_files, memory_files_during)
        assert files_during <= files_before + readers, (files_before, files_during)
        # A copy of the page per reader would be readers * 66 KiB (2.6 MiB) more.
        assert resident_kib(server) - resident_before < readers * len(page) // 1024 // 2
        # Half of them read to the end: each gets the page whole.
        for conn in stalled[::2]:
            assert conn.finish()[1] == page
    finally:
        for conn in stalled:
            conn.close()
    assert settle(lambda: descriptors(server)[0] <= files_before), (descriptors(server), files_before)


def test_head_of_a_large_page_has_no_body_and_pipelined_requests_after_it_stay_in_step(big_index):
    server, _, page = big_index
    path, accept = f"/simple/{BIG}/", {"Accept": JSON_PAGE}
    answers = exchange(server, ("HEAD", path, accept), ("GET", path, accept), ("HEAD", path, accept),
                       ("GET", "/healthz", {}), ("GET", path, accept))
    statuses = [status for status, _, _ in answers]
    assert statuses == ["HTTP/1.1 200 OK"] * 5, statuses
    (_, head, nothing), (_, _, first), (_, _, nothing_again), (_, _, health), (_, _, second) = answers
    assert nothing == nothing_again == b"" and head["content-length"] == str(len(page))
    assert first == second == page and health.endswith(b"serving\n")


def test_a_range_on_a_large_page_gets_the_whole_page(big_index):
    """Pages take no Range (only downloads do): 200 and every byte, not a slice of the memory file."""
    server, _, page = big_index
    status, head, body = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE, Range="bytes=100-199")
    assert status == 200 and "content-range" not in head and body == page


def test_a_slow_reader_mid_page_gets_the_old_page_whole_when_an_upload_changes_it(big_index, tmp_path):
    server, token, page = big_index
    before = len(json.loads(page)["files"])
    reader = SlowReader(server, f"/simple/{BIG}/")
    try:
        new = build_wheel(tmp_path / "new", BIG, "2.0")
        status, body = curl("-u", f"__token__:{token}", "-T", str(new), f"{server.url}api/v1/files/{new.name}")
        assert status == 201, body
        status, _, fresh = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
        assert status == 200 and len(json.loads(fresh)["files"]) == before + 1
        headers, old = reader.finish()
    finally:
        reader.close()
    assert old == page and len(json.loads(old)["files"]) == before, headers


def test_a_large_page_over_tls_arrives_whole(tmp_path, wheelhouse_bin, start_server, tls_files):
    """TLS keeps writing the page from memory (no sendfile): the same bytes, whole, twice on one
    connection."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    server = start_server(data, *tls_files.serve_arguments(), ca=tls_files.ca)
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    request = f"GET /simple/{BIG}/ HTTP/1.1\r\nHost: localhost\r\nAccept: {JSON_PAGE}\r\n\r\n".encode()
    with socket.create_connection(address(server), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as conn:
            conn.sendall(request * 2)
            (_, _, first), (_, _, second) = read_responses(conn, 2, ["GET", "GET"])
    assert len(first) > LARGE and first == second and len(json.loads(first)["files"]) == 160


def test_anonymous_variant_page_reads_cannot_exhaust_the_descriptors_downloads_need(tmp_path, wheelhouse_bin, start_server):
    """Found by the attacker, fixed: every cached page of 64 KiB or more held a memory file, a
    descriptor of its own, and nothing counted them. Anyone may name a new variant selector, each a
    scope of its own (64 kept), so anonymous GETs of /variants/cuN/simple/<large project>/ in both
    formats kept 128 descriptors per large project; under a limit of 256, 256 such GETs left none:
    accept(2) failed and a download answered 500 "bytes are missing from the store; run `wheelhouse
    fsck`". Now at most storage::most_page_files() are open (a sixteenth of the limit: 16 here),
    reserved among the descriptors, and the pages past them are sent from memory."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm", "big-one")
    big_farm(tmp_path / "farm", "big-two")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    wheel = tmp_path / "farm" / "big_one-1.0-py3-none-any.whl"

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    server = start_server(data, "--threads", "1", preexec_fn=low_limit)
    for project in ("big-one", "big-two"):
        for selector in range(64):
            for accept in ("text/html", JSON_PAGE):
                status, _, body = fetch(server, f"/variants/cu{100 + selector}/simple/{project}/", Accept=accept)
                assert status == 200 and len(body) > LARGE
    held, memory_files = descriptors(server)
    status, _, body = fetch(server, url_of(wheel))
    assert status == 200 and body == wheel.read_bytes(), (
        f"{status} {body[:120]!r}: {held} descriptors open of 256, {memory_files} of them memory files")
    assert memory_files <= 256 // 16, f"{memory_files} memory files open"
