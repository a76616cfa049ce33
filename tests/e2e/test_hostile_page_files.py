"""Hostile tests of commits 746cd80 and 5031c03, as an attacker (or a careless operator) meets them:

* a cached page of 8 KiB or more (64 KiB until 2026-11-30) is sent by sendfile(2) from a
  read-only copy: an unlinked O_TMPFILE file in DATA/tmp/ reopened read-only, a sealed memfd when
  that fails, memory past the cap of copies, a sixteenth of the descriptor limit from 8 to 4096
  (storage/page_file.cpp). DATA/tmp/ missing, a file, a FIFO or a symlink while serving
  (or a symlink at start); a write that fails (RLIMIT_FSIZE, SIGXFSZ ignored: the nearest thing
  to a full disk without root), and the same limit with SIGXFSZ at its default, which killed the
  server on an anonymous GET (found here, fixed: the server ignores SIGXFSZ); pages that change under readers stalled
  mid-sendfile over two generations, and SIGTERM mid-sendfile; many variant pages at once, from
  many threads; the spool sweep of `wheelhouse ingest` and `wheelhouse fsck` while copies are
  open and mid-send; what a copy is (read-only, not linkable, a memfd sealed); upstream pages;
* a download's sha256 segment checked eight bytes a step (crypto::is_sha256_hex over swar.hpp),
  compared here, byte for byte at every place, with the plain rule [0-9a-f]{64};
* a redirect's URL checked sixteen bytes a step (text::kinds_of_bytes): a control byte at every
  place around the 16-byte blocks and the 8-byte tail must keep the URL out of the head (500),
  and a byte past ASCII must leave the body valid UTF-8 and reach Location as %XX.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess

import pytest

from conftest import ingest
from server_process import ServerProcess
from test_hostile_download_rows import (BIG, JSON_PAGE, LARGE, SlowReader, address, big_farm, descriptors, exchange,
                                        fetch, open_files, settle, sha256)
from test_uploads import curl, make_token
from wheelbuilder import build_wheel


# ---- helpers ----

def copies(server: ServerProcess) -> list[str]:
    """Where each large page's copy of the server is: an unlinked file's path, or '/memfd:...'."""
    return [entry.split("->", 1)[1] for entry in open_files(server)
            if entry.split("->", 1)[1].startswith("/memfd:") or entry.endswith(" (deleted)")]


def visible(folder: pathlib.Path) -> list[str]:
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def variant_page(server: ServerProcess, selector: int, accept: str = JSON_PAGE) -> bytes:
    status, _, body = fetch(server, f"/variants/cu{selector}/simple/{BIG}/", Accept=accept)
    assert status == 200 and len(body) > LARGE, (selector, status, body[:200])
    return body


@pytest.fixture
def big_data(tmp_path, wheelhouse_bin):
    """A data folder whose BIG project's pages pass 64 KiB in both formats; an upload token."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    return data, make_token(wheelhouse_bin, data, "ci", "--scope", "upload")


def widen(data: pathlib.Path, rows: int = 400, reason: int = 20_000) -> None:
    """`rows` more catalog rows of BIG, each yanked with a reason of `reason` bytes, which both
    formats of its page carry: a page of about rows * reason bytes without building a wheel."""
    with sqlite3.connect(data / "catalog.db") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(files)") if row[1] != "id"]
        given = ("sha256", "filename", "yanked_reason")
        source = ", ".join("?" if c in given else c for c in columns)
        model = db.execute("SELECT filename FROM files WHERE filename LIKE 'big_project-1.0-%'").fetchone()[0]
        for i in range(rows):
            values = {"sha256": hashlib.sha256(b"wide %d" % i).hexdigest(),
                      "filename": model.replace("-1.0-", f"-1.0.{i}-"), "yanked_reason": f"{i} " + "y" * reason}
            db.execute(f"INSERT INTO files ({', '.join(columns)}) SELECT {source} FROM files WHERE filename = ?",
                       (*[values[c] for c in columns if c in given], model))


def upload(server: ServerProcess, token: str, wheel: pathlib.Path) -> None:
    status, body = curl("-u", f"__token__:{token}", "-T", str(wheel), f"{server.url}api/v1/files/{wheel.name}")
    assert status == 201, body


# ---- DATA/tmp/ taken away, replaced or moved while serving ----

@pytest.mark.parametrize("change", ["removed", "a file", "a symlink elsewhere", "unwritable", "a fifo",
                                    "a symlink to /dev/full", "a dangling symlink"])
def test_a_page_rendered_after_data_tmp_changes_arrives_whole_and_nothing_appears_elsewhere(
        big_data, start_server, tmp_path, change):
    """Sends a new variant page's GET (a render, so a new copy) after DATA/tmp/ is removed,
    replaced by a regular file, a FIFO (an open without O_DIRECTORY would block the render
    thread for good), a symlink to /dev/full, to nothing, or to a folder outside the data folder,
    or made read-only. The copy falls back to a memfd (or is made where the symlink points, unlinked):
    the page must arrive whole, the same bytes as before the change, no 500, no crash, and no
    file may become visible outside the data folder or in DATA/tmp/."""
    data, _ = big_data
    if change == "unwritable" and os.geteuid() == 0:
        pytest.skip("root writes into a folder of mode 0500: nothing would fail")
    server = start_server(data)
    before = {accept: variant_page(server, 100, accept) for accept in (JSON_PAGE, "text/html")}
    assert all(path.startswith(str(data / "tmp") + "/") for path in copies(server)), copies(server)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spool = data / "tmp"
    if change == "unwritable":
        spool.chmod(0o500)
    else:
        shutil.rmtree(spool)
        if change == "a file":
            spool.write_text("not a folder\n")
        elif change == "a symlink elsewhere":
            spool.symlink_to(elsewhere, target_is_directory=True)
        elif change == "a fifo":
            os.mkfifo(spool)
        elif change == "a symlink to /dev/full":
            spool.symlink_to("/dev/full")
        elif change == "a dangling symlink":
            spool.symlink_to(tmp_path / "nowhere")
    try:
        for selector in (101, 102):
            for accept, page in before.items():
                assert variant_page(server, selector, accept) == page, (change, selector, accept)
        # The plain page's first render is now, after the change, too.
        status, _, plain = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
        assert status == 200 and plain == before[JSON_PAGE]
        assert fetch(server, "/healthz")[0] == 200
        assert visible(elsewhere) == [] and not (tmp_path / "nowhere").exists(), visible(elsewhere)
        if spool.is_dir():
            assert visible(spool) == [], visible(spool)
        data_root = str(data) + "/"
        outside = [path for path in copies(server) if not path.startswith("/memfd:")
                   and not path.startswith(data_root) and not path.startswith(str(elsewhere) + "/")]
        assert outside == [], outside
    finally:
        if change == "unwritable":
            spool.chmod(0o700)
    assert server.process.poll() is None


def test_a_symlinked_data_tmp_at_start_holds_no_visible_copy(tmp_path, wheelhouse_bin, start_server):
    """DATA/tmp/ is a symlink to a folder outside the data folder when the server starts: its
    spool and the pages' copies go there, but a copy is unlinked from its first moment (O_TMPFILE),
    so the folder never shows one, not even while forty slow readers hold the page mid-send."""
    data = tmp_path / "data"
    big_farm(tmp_path / "farm")
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    shutil.move(data / "tmp", elsewhere)
    (data / "tmp").symlink_to(elsewhere, target_is_directory=True)
    server = start_server(data)
    status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and len(page) > LARGE
    readers = [SlowReader(server, f"/simple/{BIG}/") for _ in range(8)]
    try:
        assert visible(elsewhere) == [], visible(elsewhere)
        for reader in readers:
            assert reader.finish()[1] == page
    finally:
        for reader in readers:
            reader.close()
    assert visible(elsewhere) == []


# ---- a write that fails: RLIMIT_FSIZE below the page, SIGXFSZ ignored ----

def test_a_page_whose_copy_cannot_be_written_is_sent_whole_from_memory(big_data, start_server):
    """Every write past 48 KiB fails with EFBIG (RLIMIT_FSIZE; SIGXFSZ ignored, so the write
    fails instead of killing the process), as ENOSPC would on a full disk: the O_TMPFILE copy
    and the memfd copy both fail part-way. The page must still be sent whole, from memory, in
    both formats, twice, and no copy may stay open."""
    data, _ = big_data

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))

    server = start_server(data, preexec_fn=small_files)
    for accept in (JSON_PAGE, "text/html"):
        first = fetch(server, f"/simple/{BIG}/", Accept=accept)
        second = fetch(server, f"/simple/{BIG}/", Accept=accept)
        assert first[0] == second[0] == 200 and len(first[2]) > LARGE and first[2] == second[2], accept
        assert int(first[1]["content-length"]) == len(first[2])
    assert json.loads(fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)[2])["files"]
    assert copies(server) == [], copies(server)
    assert visible(data / "tmp") == []


def test_an_anonymous_get_under_a_file_size_limit_does_not_kill_the_server(big_data):
    """RLIMIT_FSIZE of 48 KiB with SIGXFSZ at its default, as a shell's `ulimit -f 48` or
    systemd's LimitFSIZE= leave it. Sends one anonymous GET of a 66 KiB page: copying it for
    sendfile writes past the limit. The page must come back whole (from memory, as a failed
    write does) and the server must keep running. Found by the attacker, fixed: SIGXFSZ killed it
    (exit -25) from 4084b52, the first GET that wrote a copy, until the server ignored the signal."""
    data, _ = big_data

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))

    server = ServerProcess(data, preexec_fn=small_files).start()
    try:
        try:
            status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
        except AssertionError as closed:  # read_responses: the server closed without an answer
            status, page = None, repr(closed).encode()
        assert status == 200 and len(page) > LARGE, (page[:200], server.process.wait(5))
        assert fetch(server, "/healthz")[0] == 200 and server.process.poll() is None
    finally:
        server.stop()


# ---- pages that change under slow readers ----

def test_slow_readers_of_two_generations_each_get_their_own_page_whole_and_copies_go_back(
        big_data, start_server, tmp_path):
    """Two readers stall 1 KiB into the page, an upload changes it, two more stall into the
    new page, a second upload changes it again: each reader must get the version it asked for,
    whole (no byte of a later one), and once they close the only copy left is the current page's."""
    data, token = big_data
    widen(data)  # about 8 MiB: past what loopback's send buffer holds, so the readers are mid-send
    server = start_server(data)
    path = f"/simple/{BIG}/"
    upload(server, token, build_wheel(tmp_path / "warm", BIG, "1.999"))  # the upload path's own descriptors, once
    assert fetch(server, path, Accept=JSON_PAGE)[0] == 200
    files_before = descriptors(server)[0]
    pages, groups = [], []
    for generation in range(2):
        status, _, page = fetch(server, path, Accept=JSON_PAGE)
        assert status == 200 and len(page) > LARGE
        pages.append(page)
        groups.append([SlowReader(server, path) for _ in range(2)])
        upload(server, token, build_wheel(tmp_path / f"new{generation}", BIG, f"2.{generation}"))
    status, _, newest = fetch(server, path, Accept=JSON_PAGE)
    assert status == 200 and newest not in pages
    # Both old generations mid-sendfile, and the newest page's copy in the cache.
    assert len(copies(server)) == 3, copies(server)
    try:
        for generation, group in enumerate(groups):
            for reader in group:
                headers, body = reader.finish()
                assert body == pages[generation], (generation, len(body), len(pages[generation]))
                assert len(json.loads(body)["files"]) == len(json.loads(pages[0])["files"]) + generation
    finally:
        for group in groups:
            for reader in group:
                reader.close()
    # The cache holds the newest JSON page's copy; the old generations' copies must be closed,
    # and the server's descriptors back where they were before the readers came.
    assert settle(lambda: len(copies(server)) == 1), open_files(server)
    assert settle(lambda: descriptors(server)[0] <= files_before), (files_before, open_files(server))
    assert visible(data / "tmp") == []


def test_a_reader_stalled_mid_page_keeps_its_copy_open_and_gives_it_back(big_data, start_server, tmp_path):
    """A page of about 8 MiB, more than loopback's send buffer holds (tcp_wmem's most is 4 MiB),
    and a reader with a 4 KiB window stalled 1 KiB into it; an upload changes the page and the
    fresh one is fetched. The stalled reader's copy must stay open (it is mid-sendfile), beside
    the cache's new one; once it reads the rest it gets the old page whole and its copy closes."""
    data, token = big_data
    widen(data)
    server = start_server(data)
    status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and len(page) > 8_000_000 and len(copies(server)) == 1, len(page)
    reader = SlowReader(server, f"/simple/{BIG}/")
    try:
        upload(server, token, build_wheel(tmp_path / "new", BIG, "9.0"))
        status, _, fresh = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
        assert status == 200 and fresh != page
        assert len(copies(server)) == 2, copies(server)  # the fresh page's, and the reader's old one
        _, body = reader.finish()
        assert body == page
    finally:
        reader.close()
    assert settle(lambda: len(copies(server)) == 1), open_files(server)


# ---- many large pages at once ----

def descriptor_limit(limit: int):
    """For preexec_fn: the server's descriptor limit, of which a sixteenth (8 to 4096) is its
    cap on page copies, storage::most_page_files()."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def test_ninety_variant_pages_hold_at_most_64_copies_all_unlinked_in_data_tmp(big_data, start_server):
    """Ninety new variant selectors in JSON, then the same in HTML: every page whole; at most
    storage::most_page_files() (64 under a limit of 1024 descriptors) copies open, each an
    unlinked file of DATA/tmp/ (the first choice) and none visible there; the pages past the cap
    come from memory, the same bytes."""
    data, _ = big_data
    server = start_server(data, preexec_fn=descriptor_limit(1024))
    reference = {accept: variant_page(server, 100, accept) for accept in (JSON_PAGE, "text/html")}
    for accept in (JSON_PAGE, "text/html"):
        for selector in range(101, 191):
            assert variant_page(server, selector, accept) == reference[accept], (selector, accept)
    held = copies(server)
    assert 0 < len(held) <= 64, len(held)
    assert all(re.fullmatch(re.escape(str(data / "tmp")) + r"/#\d+ \(deleted\)", path) for path in held), held
    assert visible(data / "tmp") == []


# ---- the spool sweep and fsck while copies are open ----

def fsck_problems(binary: pathlib.Path, data: pathlib.Path, *args: str) -> tuple[int, list[str]]:
    done = subprocess.run([str(binary), "fsck", *args, "--data", str(data)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, sorted(line for line in done.stdout.splitlines() if line.startswith(("PROBLEM", "fixed")))


def test_ingest_sweep_and_fsck_while_copies_are_open_and_mid_send(big_data, start_server, tmp_path, wheelhouse_bin):
    """With copies open (variant pages) and a reader stalled mid-page, run `wheelhouse fsck`,
    `fsck --fix` and `wheelhouse ingest` (whose start sweeps DATA/tmp/) on the same data folder:
    they must report what they reported before the server started (the widened rows have no
    blobs: 400 missing, nothing else), remove nothing, and the reader gets its page whole; the
    copies the server holds are the same ones after and the pages are served again unchanged."""
    data, _ = big_data
    widen(data)  # about 8 MiB: the stalled reader is mid-sendfile, not served from the send buffer
    code_before, before = fsck_problems(wheelhouse_bin, data)
    assert code_before == 1 and len(before) == 400 and all("missing blob" in line for line in before), before[:3]
    server = start_server(data)
    pages = {selector: variant_page(server, selector) for selector in range(100, 105)}
    held = copies(server)
    assert len(held) == 5, held
    reader = SlowReader(server, f"/variants/cu100/simple/{BIG}/")
    try:
        for args in ((), ("--fix",)):
            code, found = fsck_problems(wheelhouse_bin, data, *args)
            assert (code, found) == (code_before, before), (args, [line for line in found if line not in before])
        extra = build_wheel(tmp_path / "extra", "other-project", "1.0")
        done = ingest(wheelhouse_bin, data, extra)
        assert done.returncode == 0, done.stdout + done.stderr
        assert visible(data / "tmp") == []
        assert sorted(copies(server)) == sorted(held), (held, copies(server))
        _, body = reader.finish()
        assert body == pages[100]
    finally:
        reader.close()
    for selector, page in pages.items():
        assert variant_page(server, selector) == page


# ---- the sha256 segment of /files/ URLs, byte by byte ----

def plain_rule(segment: bytes) -> bool:
    return re.fullmatch(rb"[0-9a-f]{64}", segment) is not None


def expected_status(segment: bytes, real: bytes) -> tuple[int, bytes]:
    """What /files/<segment>/<wheel> answers by the rules before 746cd80 (the router decodes,
    request_target refuses control bytes and encoded slashes, then the byte-by-byte hex check)."""
    if any(byte < 0x20 or byte == 0x7F for byte in segment) or b"/" in segment or b"\\" in segment:
        return 400, b""
    if not plain_rule(segment):
        return 404, b"file URLs have the form /files/<sha256>/<filename>"
    return (200, b"") if segment == real else (404, b"no file")


def percent(segment: bytes) -> str:
    return "".join(chr(byte) if chr(byte) in "0123456789abcdefABCDEF" else f"%{byte:02X}" for byte in segment)


def test_every_odd_byte_at_every_place_of_the_sha256_segment_answers_as_the_plain_rule(
        tmp_path, wheelhouse_bin, start_server):
    """Sends /files/<sha256>/<wheel> with each of the 64 places of the real sha256 replaced by a
    byte at the edges of the eight-byte check ('/'-1, ':' and '`' beside the digit and letter
    ranges, 'g', 'A' and 'F' uppercase, 0x80 and 0xFF that would carry into the next byte, a
    percent-escaped digit that decodes to the right one, 0x00 and 0x7F), and whole segments of
    63 and 65 characters, uppercase, and each hex digit escaped: each must answer as the plain
    [0-9a-f]{64} rule says, on one keep-alive connection."""
    data = tmp_path / "data"
    wheel = build_wheel(tmp_path / "farm", "hexy", "1.0")
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    server = start_server(data)
    real = sha256(wheel).encode()
    segments: list[bytes] = []
    for place in range(64):
        for byte in (0x2F - 1, 0x3A, 0x60, 0x67, 0x41, 0x46, 0x80, 0xFF, 0xC3, 0x00, 0x7F, 0x20):
            segments.append(real[:place] + bytes([byte]) + real[place + 1:])
        segments.append(real[:place] + bytes([real[place] ^ 0x01]) + real[place + 1:])  # another hex digit (or not)
    segments += [real[:63], real + b"0", real.upper(), real[:-8] + real[-8:].upper(), b"0" * 64, b"f" * 64,
                 b"\xff" * 64, b"\x80" * 64, real[:32] + b"\xc3\xa9" + real[34:], real[:60] + b"\xef\xbc\x90" + b"0"]
    segments.append(real)  # the last: every hex digit percent-escaped, which decodes to the real one
    wanted = [(segment, suffix) for suffix in ("", ".metadata") for segment in segments]
    paths = []
    for segment, suffix in wanted:
        escaped = "".join(f"%{byte:02x}" for byte in real) if len(paths) % len(segments) == len(segments) - 1 \
            else percent(segment)
        paths.append(f"/files/{escaped}/{wheel.name}{suffix}")
    wrong = []
    for start in range(0, len(paths), 64):
        answers = exchange(server, *[("GET", path, {}) for path in paths[start:start + 64]])
        for (status_line, _, body), (segment, suffix) in zip(answers, wanted[start:start + 64]):
            status = int(status_line.split()[1])
            want_status, want_text = expected_status(segment, real)
            if status != want_status or want_text not in body:
                wrong.append((segment, suffix, status, body[:100]))
            elif status == 200 and not (body.startswith(b"Metadata-Version") if suffix else body == wheel.read_bytes()):
                wrong.append((segment, suffix, status, b"not the right bytes"))
    assert wrong == [], wrong[:10]


# ---- a redirect's URL with an odd byte at every place around the vector blocks ----

REDIRECT_BASE = b"https://x.invalid/" + b"p" * 80


def remote_rows(data: pathlib.Path, wheel: pathlib.Path, urls: list[bytes]) -> list[tuple[str, str]]:
    """One catalog row like `wheel`'s per URL, each its own sha256 and filename, in redirect mode."""
    made = []
    with sqlite3.connect(data / "catalog.db") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(files)") if row[1] != "id"]
        source = ", ".join("?" if c in ("sha256", "filename") else c for c in columns)
        for i, url in enumerate(urls):
            given = {"sha256": hashlib.sha256(b"remote %d" % i).hexdigest(), "filename": f"faraway-9.{i}-py3-none-any.whl"}
            db.execute(f"INSERT INTO files ({', '.join(columns)}) SELECT {source} FROM files WHERE filename = ?",
                       (*[given[c] for c in columns if c in given], wheel.name))
            db.execute("UPDATE files SET download_mode = 'redirect', remote_url = CAST(? AS TEXT) WHERE filename = ?",
                       (url, given["filename"]))
            made.append((given["sha256"], given["filename"]))
    return made


def uri_escaped(url: bytes) -> bytes:
    """`url` as a Location must carry it: each space and byte past ASCII as %XX, the rest kept."""
    return b"".join(b"%%%02X" % byte if byte == 0x20 or byte > 0x7F else bytes([byte]) for byte in url)


def raw_answers(server: ServerProcess, paths: list[str]) -> bytes:
    """Every GET of `paths` pipelined on one connection, the last with Connection: close; all
    bytes until the server closes."""
    raw = b""
    for index, path in enumerate(paths):
        close = "Connection: close\r\n" if index == len(paths) - 1 else ""
        raw += f"GET {path} HTTP/1.1\r\nHost: x\r\n{close}\r\n".encode()
    received = b""
    with socket.create_connection(address(server), timeout=10) as conn:
        conn.sendall(raw)
        while piece := conn.recv(1 << 16):
            received += piece
    return received


def split_heads(raw: bytes, count: int) -> list[tuple[str, list[tuple[str, bytes]], bytes]]:
    """`count` responses as (status line, raw header lines as (name, value bytes), body)."""
    out = []
    for _ in range(count):
        head, separator, raw = raw.partition(b"\r\n\r\n")
        assert separator, raw[:300]
        lines = head.split(b"\r\n")
        fields = [(name.decode("latin-1").strip().lower(), value.strip()) for name, _, value in
                  (line.partition(b":") for line in lines[1:])]
        length = int(dict(fields)["content-length"])
        out.append((lines[0].decode("latin-1"), fields, raw[:length]))
        raw = raw[length:]
    assert raw == b"", raw[:300]
    return out


def test_a_redirect_url_with_an_odd_byte_at_every_place_around_the_blocks(tmp_path, wheelhouse_bin, start_server):
    """Rows in redirect mode whose URLs are 1 to 66 bytes long (one 16-byte block or more, then a
    tail of 1 to 15 bytes read by words padded with 'a'), with one byte replaced at each place: a
    control byte (0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x7F) must never reach the head (500, no
    Location, the response framed right and the connection in step); a byte past ASCII (0x80,
    0xC3, 0xFF) or a printable edge (0x20, 0x7E) gives a 302 whose body, labelled UTF-8, is
    UTF-8 and whose Location is the catalog's URL with each space and byte past ASCII as %XX (a
    URI carries them so; requests, under pip, fails on a raw byte that is not UTF-8)."""
    data = tmp_path / "data"
    wheel = build_wheel(tmp_path / "farm", "faraway", "1.0")
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    cases: list[tuple[bytes, int, int]] = []
    for length in (1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65, 66):
        for place in sorted({0, 7, 8, 15, 16, 17, 24, 31, 32, 33, 47, 48, length - 2, length - 1} & set(range(length))):
            for byte in (0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x7F, 0x80, 0xC3, 0xFF, 0x20, 0x7E):
                url = bytearray(REDIRECT_BASE[:length])
                url[place] = byte
                cases.append((bytes(url), place, byte))
    rows = remote_rows(data, wheel, [url for url, _, _ in cases])
    server = start_server(data)
    wrong = []
    for start in range(0, len(rows), 100):
        batch = rows[start:start + 100]
        raw = raw_answers(server, [f"/files/{digest}/{name}" for digest, name in batch])
        for (status_line, fields, body), (url, place, byte) in zip(split_heads(raw, len(batch)),
                                                                     cases[start:start + 100]):
            control = byte < 0x20 or byte == 0x7F
            names = [name for name, _ in fields]
            location = dict(fields).get("location")
            if control:
                if not status_line.startswith("HTTP/1.1 500") or "location" in names:
                    wrong.append((url, place, byte, status_line, location))
                continue
            if not status_line.startswith("HTTP/1.1 302") or location is None:
                wrong.append((url, place, byte, status_line, location))
                continue
            try:
                body.decode("utf-8")
            except UnicodeDecodeError:
                wrong.append((url, place, byte, "body not UTF-8", body))
            if location != uri_escaped(url):
                wrong.append((url, place, byte, "Location is not the URL", location))
    assert wrong == [], (len(wrong), wrong[:10])


# ---- what a copy is: read-only, sealed, never linkable into sight ----

def fd_of(server: ServerProcess, target: str) -> int:
    for entry in open_files(server):
        number, link = entry.split("->", 1)
        if link == target:
            return int(number)
    raise AssertionError(f"{target} is not open")


def test_a_copy_is_read_only_cannot_be_linked_into_sight_and_a_memfd_copy_is_sealed(big_data, start_server):
    """The copy a page is sent from must not change while responses read it, nor ever become a
    named file the spool sweep or fsck could see: an O_TMPFILE copy is opened read-only (its
    fdinfo says O_RDONLY) and made with O_EXCL, so linkat(2) through /proc/<pid>/fd fails; after
    DATA/tmp/ is removed the next copy is a memfd sealed against write, growth and shrinking."""
    import fcntl
    data, _ = big_data
    server = start_server(data)
    variant_page(server, 100)
    [tmp_copy] = copies(server)
    assert tmp_copy.startswith(str(data / "tmp") + "/#"), tmp_copy
    number = fd_of(server, tmp_copy)
    flags = int(re.search(r"flags:\s+([0-7]+)", pathlib.Path(f"/proc/{server.process.pid}/fdinfo/{number}")
                          .read_text()).group(1), 8)
    assert flags & os.O_ACCMODE == os.O_RDONLY, oct(flags)
    with pytest.raises(OSError):
        os.link(f"/proc/{server.process.pid}/fd/{number}", data / "tmp" / "spool-linked", follow_symlinks=True)
    assert visible(data / "tmp") == []
    shutil.rmtree(data / "tmp")
    variant_page(server, 101)
    memory = [path for path in copies(server) if path.startswith("/memfd:")]
    assert len(memory) == 1, copies(server)
    opened = os.open(f"/proc/{server.process.pid}/fd/{fd_of(server, memory[0])}", os.O_RDONLY)
    try:
        seals = fcntl.fcntl(opened, fcntl.F_GET_SEALS)
    finally:
        os.close(opened)
    wanted = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
    assert seals & wanted == wanted, bin(seals)


# ---- the connection's end after a sendfile ----

def test_an_http_1_0_get_of_a_large_page_is_whole_then_closed(big_data, start_server):
    """HTTP/1.0 without keep-alive: the page leaves by sendfile, whole (Content-Length right),
    then the server closes; a second request on the same bytes gets no answer."""
    data, _ = big_data
    server = start_server(data)
    status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and len(page) > LARGE
    with socket.create_connection(address(server), timeout=10) as conn:
        conn.sendall(f"GET /simple/{BIG}/ HTTP/1.0\r\nAccept: {JSON_PAGE}\r\n\r\n"
                     f"GET /healthz HTTP/1.0\r\n\r\n".encode())
        received = b""
        while piece := conn.recv(1 << 16):
            received += piece
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200"), head
    length = int(re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head).group(1))
    assert length == len(page) and body == page, (length, len(body))


def test_sigterm_while_a_reader_is_mid_sendfile_lets_it_finish_the_page(big_data, start_server):
    """SIGTERM arrives while a reader is stalled mid-way through an 8 MiB page: the drain must
    let it read the rest whole (not cut it at what the send buffer held), then close the connection,
    and the server exits 0."""
    data, _ = big_data
    widen(data)
    server = start_server(data)
    status, _, page = fetch(server, f"/simple/{BIG}/", Accept=JSON_PAGE)
    assert status == 200 and len(page) > 8_000_000
    reader = SlowReader(server, f"/simple/{BIG}/")
    try:
        server.process.send_signal(signal.SIGTERM)
        _, body = reader.finish()  # its head left before the signal: no "Connection: close" in it
        assert body == page
        assert reader.conn.recv(1) == b""  # then closed: a draining server keeps no connection
    finally:
        reader.close()
    assert server.stop() == 0, server.stderr()


# ---- cached upstream pages: the same copies, from the page store ----

def upstream_json(project: str, count: int) -> str:
    module = project.replace("-", "_")
    files = [{"filename": f"{module}-1.{i}-py3-none-any.whl", "url": f"/packages/{module}-1.{i}-py3-none-any.whl",
              "hashes": {"sha256": hashlib.sha256(f"{project} {i}".encode()).hexdigest()}, "size": 1000 + i}
             for i in range(count)]
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "versions": [], "files": files})


def test_a_large_upstream_page_is_whole_from_a_copy_in_data_tmp_and_after_data_tmp_goes(tmp_path, start_server):
    """A hostile upstream's project page of 600 files, so this index's rendering of it passes
    64 KiB: the page store's copy is an unlinked file of DATA/tmp/; after DATA/tmp/ is removed,
    another upstream project's large page is rendered into a memfd copy. Every GET, in both
    formats, must be the whole page, the same on the second asking, and none a 500."""
    from upstream_standins import HostileUpstream, wheelhouse_flags
    upstream = HostileUpstream(tmp_path / "tls")
    try:
        for project in ("far-big", "far-bigger"):
            upstream.page(project, upstream_json(project, 600))
        data = tmp_path / "data"
        server = start_server(data, *wheelhouse_flags(upstream.ca, {"evil": upstream.url}),
                              "--upstream-max-page-size", "10000000", "--upstream-timeout", "5")

        def both(project: str) -> dict[str, bytes]:
            got = {}
            for accept in (JSON_PAGE, "text/html"):
                first, second = (fetch(server, f"/simple/{project}/", Accept=accept) for _ in range(2))
                assert first[0] == second[0] == 200 and first[2] == second[2], (project, accept, first[2][:200])
                assert int(first[1]["content-length"]) == len(first[2]) > LARGE, (project, accept)
                got[accept] = first[2]
            assert len(json.loads(got[JSON_PAGE])["files"]) == 600
            return got

        both("far-big")
        held = copies(server)
        assert len(held) == 2 and all(path.startswith(str(data / "tmp") + "/#") for path in held), held
        shutil.rmtree(data / "tmp")
        both("far-bigger")
        after = copies(server)
        assert sorted(path for path in after if path.startswith("/memfd:")) == ["/memfd:wheelhouse-page (deleted)"] * 2, after
        assert fetch(server, "/healthz")[0] == 200
    finally:
        upstream.stop()


@pytest.mark.parametrize("limit, cap", [(1024, 64), (1600, 100)])
def test_concurrent_renders_of_many_variant_pages_never_pass_the_cap(big_data, start_server, limit, cap):
    """Eight threads ask at once for 200 distinct variant pages (both formats) of a server with
    four I/O threads: renders race for the places (a compare-and-swap in page_file.cpp), a
    sixteenth of the descriptor limit. Every page must be whole, and the copies open never more
    than the cap whenever looked at, but for the one each I/O thread may be writing (an
    O_TMPFILE copy is written through one descriptor and reopened read-only through /proc before
    the first is closed: two for one place, for that moment); at the end no more than the cap;
    under the larger limit more than 64 are open."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    data, _ = big_data
    server = start_server(data, "--threads", "4", preexec_fn=descriptor_limit(limit))
    reference = {accept: variant_page(server, 100, accept) for accept in (JSON_PAGE, "text/html")}
    most, stop = [0], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            most[0] = max(most[0], len(copies(server)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        jobs = [(selector, accept) for selector in range(200, 400) for accept in reference]
        with ThreadPoolExecutor(8) as pool:
            bodies = list(pool.map(lambda job: variant_page(server, job[0], job[1]), jobs))
    finally:
        stop.set()
        watcher.join()
    assert all(body == reference[accept] for body, (_, accept) in zip(bodies, jobs))
    io_threads = 4
    assert 0 < most[0] <= cap + io_threads, most[0]
    assert len(copies(server)) <= cap
    if cap > 64:
        assert most[0] > 64, most[0]
