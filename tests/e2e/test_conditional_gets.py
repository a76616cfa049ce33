"""Conditional GETs by date (issue 28 item 6): pages and files carry Last-Modified and answer 304
to an If-Modified-Since at or after it, as curl -z, browsers and caches send it; ETag wins when
both are sent (RFC 9110 §13.2.2); a page changed since is sent whole."""

from __future__ import annotations

import email.utils
import re
import subprocess
import time
import urllib.parse

from conftest import ingest
from test_uploads import make_token, twine
from wheelbuilder import build_wheel


def curl_status(url: str, *args: str) -> tuple[int, dict[str, str]]:
    done = subprocess.run(["curl", "-sS", "-D", "-", "-o", "/dev/null", *args, url], capture_output=True, text=True,
                          timeout=60)
    lines = [line.rstrip("\r") for line in done.stdout.splitlines()]
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:] if ": " in line)}
    return int(lines[0].split()[1]), headers


def test_pages_and_files_answer_if_modified_since_and_a_change_is_sent_whole(tmp_path, wheelhouse_bin,
                                                                              start_server):
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "kernels", "1.0+cu128")
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    token = make_token(wheelhouse_bin, data, "ci", "--scope", "upload")
    server = start_server(data)
    page = server.url + "simple/kernels/"
    with server.get("/simple/kernels/") as first:
        link = re.search(r'href="([^"#]+)', first.read().decode()).group(1)
    file_url = urllib.parse.urljoin(page, link)
    time.sleep(1.1)  # past the render's second: the page now carries the second after its render
    status, headers = curl_status(page)
    assert status == 200 and "last-modified" in headers, headers
    stamp = headers["last-modified"]
    assert email.utils.parsedate_to_datetime(stamp).timestamp() <= time.time()
    assert curl_status(page, "-z", stamp)[0] == 304  # curl -z DATE sends If-Modified-Since: DATE
    earlier = email.utils.formatdate(email.utils.parsedate_to_datetime(stamp).timestamp() - 1, usegmt=True)
    assert curl_status(page, "-z", earlier)[0] == 200
    assert curl_status(page, "-H", f"If-Modified-Since: {stamp}", "-H", 'If-None-Match: "other"')[0] == 200
    assert curl_status(page, "-H", f"If-Modified-Since: {stamp}", "-H", f"If-None-Match: {headers['etag']}")[0] == 304
    assert curl_status(page, "-H", "If-Modified-Since: yesterday")[0] == 200

    status, file_headers = curl_status(file_url)
    assert status == 200 and "last-modified" in file_headers, file_headers
    assert curl_status(file_url, "-z", file_headers["last-modified"])[0] == 304
    assert curl_status(file_url, "-z", file_headers["last-modified"], "-r", "0-9")[0] == 304

    # A new upload changes the page: the old date no longer finds it current, in the same second or later.
    newer = build_wheel(tmp_path / "newer", "kernels", "1.1+cu128")
    assert twine(server.url, token, newer).returncode == 0
    status, changed = curl_status(page, "-z", stamp)
    assert status == 200, changed
    with server.get("/simple/kernels/") as again:
        assert newer.name in again.read().decode()
