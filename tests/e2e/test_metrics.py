"""/metrics as Prometheus reads it: Debian's promtool lints the page after real traffic (twine-free
curl uploads and a pip install), and the counters tell what that traffic was."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request

import pytest

from test_uploads import curl, make_token
from wheelbuilder import build_wheel


def scrape(url: str) -> str:
    with urllib.request.urlopen(url + "metrics", timeout=10) as response:
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return response.read().decode()


def value(page: str, series: str) -> float:
    match = re.search(r"^" + re.escape(series) + r" (\S+)$", page, re.MULTILINE)
    assert match, f"no sample {series} in:\n{page}"
    return float(match.group(1))


def test_promtool_accepts_the_page_and_counters_follow_traffic(tmp_path, wheelhouse_bin, start_server, pip):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing; run deploy/install-deps.sh (Debian package prometheus)")
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data)

    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0.0+cu130torch2.10")
    status, body = curl("-u", f"__token__:{token}", "-T", str(wheel), server.url + "api/v1/files/" + wheel.name)
    assert status == 201, body
    status, body = curl("-u", f"__token__:{token}", "-T", str(wheel), server.url + "api/v1/files/" + wheel.name)
    assert status == 200, body
    status, _ = curl("-u", "__token__:wh_wrong", "-T", str(wheel), server.url + "api/v1/files/" + wheel.name)
    assert status == 401
    pip("install", "--index-url", server.url + "simple/", "--target", str(tmp_path / "site"), "kernels")

    # A request is counted just after its last byte is written: let the last download land.
    page = scrape(server.url)
    deadline = time.monotonic() + 5
    while 'wheelhouse_http_requests_total{route="files",status="200"}' not in page and time.monotonic() < deadline:
        time.sleep(0.05)
        page = scrape(server.url)
    checked = subprocess.run([promtool, "check", "metrics"], input=page, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and checked.stdout.strip() == "" and checked.stderr.strip() == "", (
        f"promtool check metrics ({checked.returncode}):\n{checked.stdout}{checked.stderr}")

    assert value(page, 'wheelhouse_http_requests_total{route="upload",status="201"}') == 1
    assert value(page, 'wheelhouse_http_requests_total{route="upload",status="200"}') == 1
    assert value(page, 'wheelhouse_http_requests_total{route="upload",status="401"}') == 1
    assert value(page, 'wheelhouse_http_requests_total{route="simple_project",status="200"}') >= 1
    downloads = value(page, 'wheelhouse_http_requests_total{route="files",status="200"}')
    assert downloads >= 1  # pip 23 may fetch a wheel twice when installing with --target
    assert value(page, 'wheelhouse_http_response_bytes_total{route="files"}') == downloads * wheel.stat().st_size
    assert value(page, 'wheelhouse_http_requests_total{route="metadata",status="200"}') == 1
    assert value(page, 'wheelhouse_ingests_total{outcome="created"}') == 1
    assert value(page, 'wheelhouse_ingests_total{outcome="identical"}') == 1
    assert value(page, "wheelhouse_catalog_files") == 1
    assert value(page, "wheelhouse_proxy_upstream_errors_total") == 0
    assert "kernels" not in page  # no project name or path became a label
