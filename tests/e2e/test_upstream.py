"""One URL (issue 26): the index serves the names it owns and passes every other name through
from stand-in upstream indexes (nginx over HTTPS on loopback: a PyPI-like JSON tree and a
PyTorch-like HTML tree, with real wheels), and pip resolves through it alone. The attacker's
copies of owned names, at higher versions upstream, are never seen nor fetched."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import re
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import ingest
from upstream_standins import IndexTree, NginxUpstreams
from wheelbuilder import build_wheel

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json"
HTML_ACCEPT = "application/vnd.pypi.simple.v1+html"


def get(url: str, accept: str = JSON_ACCEPT, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers={"Accept": accept, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as failure:
        return failure.code, dict(failure.headers), failure.read()


def page_requests(upstreams: NginxUpstreams, name: str, project: str) -> list[str]:
    return [line for line in upstreams.requests(name) if line.startswith(f"GET /simple/{project}/ ")]


@pytest.fixture
def one_url(tmp_path, wheelhouse_bin, start_server):
    """flash-attn 1.0 and acme-core 1.0 here; the stand-in PyPI has tinyup 1.0 and 2.0, and the
    attacker's flash-attn 9.0 and acme-tools 5.0; the stand-in PyTorch (HTML) has torchy 2.8.
    PyPI also has a torchy 99.0 without CUDA. acme-* is reserved; the cu128 variant indexes take
    torchy from PyTorch, every other name and index from PyPI."""
    farm, pypi_farm, torch_farm = tmp_path / "farm", tmp_path / "pypi-farm", tmp_path / "torch-farm"
    local = build_wheel(farm, "flash-attn", "1.0", files={"flash_attn/__init__.py": "WHO = 'here'\n"})
    build_wheel(farm, "acme-core", "1.0")
    pypi = IndexTree(tmp_path / "pypi", "json")
    pypi.add(build_wheel(pypi_farm, "tinyup", "1.0", files={"tinyup/__init__.py": "V = '1.0'\n"}))
    pypi.add(build_wheel(pypi_farm, "tinyup", "2.0", files={"tinyup/__init__.py": "V = '2.0'\n"},
                         metadata_extra="Requires-Dist: torchy\n"), requires_python=">=3")
    attacker = pypi.add(build_wheel(pypi_farm, "flash-attn", "9.0",
                                    files={"flash_attn/__init__.py": "WHO = 'attacker'\n"}))
    pypi.add(build_wheel(pypi_farm, "acme-tools", "5.0"))
    torch = IndexTree(tmp_path / "torch", "html")
    torch.add(build_wheel(torch_farm, "torchy", "2.8", files={"torchy/__init__.py": "CUDA = 'cu128'\n"}))
    pypi.add(build_wheel(pypi_farm, "torchy", "99.0", files={"torchy/__init__.py": "CUDA = 'none'\n"}))

    data = tmp_path / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    reserved = subprocess.run([str(wheelhouse_bin), "reserve", "--data", str(data), "acme-*"], capture_output=True,
                              text=True, timeout=60)
    assert reserved.returncode == 0, reserved.stderr
    upstreams = NginxUpstreams(tmp_path / "nginx", {"pypi": pypi, "pytorch": torch}).start()
    server = start_server(data, *upstreams.flags(), "--upstream-route", "cu128: torchy = pytorch",
                          "--upstream-max-age", "1")
    yield server, upstreams, {"local": local, "attacker": attacker}
    upstreams.stop()


VARIANT_INDEX = "variants/cu128-torch2.8/simple/"


def wait_until_kept(server, files: int) -> None:
    """A file pulled through is kept once its last byte has gone to the client and its copy is
    synced: moments later, not before the client has it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with urllib.request.urlopen(server.url + "api/v1/upstream", timeout=10) as response:
            if json.loads(response.read())["kept"]["files"] >= files:
                return
        time.sleep(0.05)
    raise AssertionError(f"{files} upstream files were not kept within 30 s")


def test_pip_installs_owned_and_upstream_projects_through_one_url(one_url, pip, tmp_path):
    server, upstreams, _ = one_url
    target = tmp_path / "site"
    pip("install", "--index-url", server.url + VARIANT_INDEX, "--target", str(target), "flash-attn", "tinyup")
    installed = {p.name for p in target.iterdir()}
    assert {"flash_attn-1.0.dist-info", "tinyup-2.0.dist-info", "torchy-2.8.dist-info"} <= installed
    assert (target / "flash_attn" / "__init__.py").read_text() == "WHO = 'here'\n"
    assert (target / "torchy" / "__init__.py").read_text() == "CUDA = 'cu128'\n"  # the route, not PyPI's 99.0
    assert not page_requests(upstreams, "pypi", "flash-attn")
    assert not page_requests(upstreams, "pypi", "torchy")
    # files came through this index, checked and kept: pip never saw the upstream hosts
    files = [line for line in server.access_lines() if "GET /files/" in line]
    assert any("/tinyup-2.0-py3-none-any.whl" in line for line in files), files


@pytest.mark.parametrize("spelling", ["flash-attn", "Flash_Attn", "flash.attn", "FLASH--attn"])
@pytest.mark.parametrize("accept", [JSON_ACCEPT, HTML_ACCEPT])
def test_an_owned_name_at_a_higher_version_upstream_is_invisible(one_url, spelling, accept):
    server, upstreams, wheels = one_url
    status, _, body = get(server.url + f"simple/{spelling}/", accept)
    assert status == 200
    text = body.decode()
    assert "flash_attn-1.0-py3-none-any.whl" in text
    # The attacker's file by name and digest ("9.0" alone would match an upload time's seconds).
    assert "flash_attn-9.0" not in text and '"9.0"' not in text and wheels["attacker"]["sha256"] not in text
    assert not page_requests(upstreams, "pypi", "flash-attn")


def test_a_file_of_an_owned_name_is_never_fetched_from_upstream(one_url):
    server, upstreams, wheels = one_url
    attacker = wheels["attacker"]
    lookalike = attacker["filename"].replace("flash_attn", "Flash_Attn")  # normalises to flash-attn too
    for filename in (attacker["filename"], lookalike):
        for suffix in ("", ".metadata"):
            status, _, body = get(server.url + f"files/{attacker['sha256']}/{filename}{suffix}", "*/*")
            assert status == 404, body
    assert not [line for line in upstreams.requests("pypi") if "flash_attn" in line]


@pytest.mark.parametrize("project", ["acme-tools", "Acme.Tools", "acme-never-published"])
def test_a_reserved_name_is_owned_before_its_first_upload(one_url, project):
    server, upstreams, _ = one_url
    status, _, body = get(server.url + f"simple/{project}/")
    assert status == 404
    assert b"reserved" in body
    assert not [line for line in upstreams.requests("pypi") if "acme" in line]


def test_upstream_pages_keep_what_pip_reads(one_url):
    server, upstreams, _ = one_url
    status, headers, body = get(server.url + "simple/tinyup/")
    assert status == 200 and headers["Content-Type"] == JSON_ACCEPT
    page = json.loads(body)
    assert page["name"] == "tinyup"
    newest = next(f for f in page["files"] if f["filename"] == "tinyup-2.0-py3-none-any.whl")
    assert newest["requires-python"] == ">=3"
    assert newest["url"].startswith("/files/" + newest["hashes"]["sha256"] + "/")
    assert newest["core-metadata"] and newest["upload-time"] == "2025-07-01T12:00:00.123456Z"
    # PEP 740: upstream's attestations of the same bytes, where upstream serves them
    assert newest["provenance"] == f"https://127.0.0.1:{upstreams.ports['pypi']}/integrity/" + newest["filename"] + "/provenance"
    status, _, html = get(server.url + VARIANT_INDEX + "torchy/", HTML_ACCEPT)
    assert status == 200 and b"torchy-2.8-py3-none-any.whl" in html and b"99.0" not in html
    assert f'data-provenance="https://127.0.0.1:{upstreams.ports["pytorch"]}/integrity/torchy-2.8-py3-none-any.whl/provenance"'.encode() in html
    status, _, html = get(server.url + "simple/torchy/", HTML_ACCEPT)  # the route is the cu128 indexes'
    assert status == 200 and b"torchy-99.0-py3-none-any.whl" in html and b"2.8" not in html


def test_many_clients_missing_one_page_make_one_upstream_request(one_url):
    server, upstreams, _ = one_url
    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(lambda _: get(server.url + "simple/tinyup/"), range(64)))
    assert {status for status, _, _ in answers} == {200}
    assert len({body for _, _, body in answers}) == 1
    assert len(page_requests(upstreams, "pypi", "tinyup")) == 1


def test_a_kept_page_is_revalidated_with_its_etag(one_url):
    server, upstreams, _ = one_url
    first = get(server.url + "simple/tinyup/")
    time.sleep(1.5)  # past --upstream-max-age 1
    second = get(server.url + "simple/tinyup/")
    assert first[0] == second[0] == 200 and first[2] == second[2]
    asked = page_requests(upstreams, "pypi", "tinyup")
    assert len(asked) == 2
    assert re.search(r' 304 "\S+"$', asked[1]), asked  # If-None-Match sent, nginx answered 304


def test_upstream_down_serves_what_is_kept_and_names_the_upstream(one_url, pip, tmp_path):
    server, upstreams, _ = one_url
    pip("install", "--index-url", server.url + "simple/", "--target", str(tmp_path / "first"), "tinyup")
    wait_until_kept(server, 2)  # tinyup 2.0 and its dependency torchy
    upstreams.kill()
    time.sleep(1.5)  # every kept page is past its age now
    status, headers, _ = get(server.url + "simple/tinyup/")
    assert status == 200 and headers.get("Warning") == '110 - "Response is Stale"'
    # kept files and pages: a fresh install still works with the upstream gone
    pip("install", "--index-url", server.url + "simple/", "--target", str(tmp_path / "second"), "tinyup")
    assert (tmp_path / "second" / "tinyup" / "__init__.py").read_text() == "V = '2.0'\n"
    status, _, body = get(server.url + "simple/never-fetched/")
    assert status in (502, 504), body
    assert b"pypi" in body


def test_offline_serves_only_what_is_kept(tmp_path, wheelhouse_bin, start_server):
    pypi = IndexTree(tmp_path / "pypi", "json")
    pypi.add(build_wheel(tmp_path / "farm", "tinyup", "1.0"))
    upstreams = NginxUpstreams(tmp_path / "nginx", {"pypi": pypi}).start()
    try:
        data = tmp_path / "data"
        online = start_server(data, *upstreams.flags())
        status, _, body = get(online.url + "simple/tinyup/")
        assert status == 200
        wheel = json.loads(body)["files"][0]
        assert online.stop() == 0
        offline = start_server(data, *upstreams.flags(), "--offline")
        status, _, body = get(offline.url + "simple/tinyup/")
        assert status == 200 and b"tinyup-1.0" in body  # kept on disk across the restart
        status, _, body = get(offline.url + "simple/other/")
        assert status == 504 and b"offline" in body
        status, _, body = get(offline.url + wheel["url"].lstrip("/"), "*/*")  # a file never fetched
        assert status == 504 and b"offline" in body
        assert len(page_requests(upstreams, "pypi", "tinyup")) == 1
        assert not page_requests(upstreams, "pypi", "other")
        assert not [line for line in upstreams.requests("pypi") if "/packages/" in line]
    finally:
        upstreams.stop()


def test_a_file_fetched_through_the_index_is_checked_and_kept(one_url):
    server, upstreams, _ = one_url
    page = json.loads(get(server.url + "simple/tinyup/")[2])
    newest = next(f for f in page["files"] if f["filename"] == "tinyup-2.0-py3-none-any.whl")
    url = server.url + newest["url"].lstrip("/")
    for _ in range(2):
        status, _, body = get(url, "*/*")
        assert status == 200 and hashlib.sha256(body).hexdigest() == newest["hashes"]["sha256"]
        wait_until_kept(server, 1)
    fetched = [line for line in upstreams.requests("pypi") if "tinyup-2.0-py3-none-any.whl " in line]
    assert len(fetched) == 1, fetched  # the second came from the blob store


def test_operators_see_kept_upstream_files_in_metrics_fsck_and_prune(one_url, pip, tmp_path, wheelhouse_bin):
    server, upstreams, _ = one_url
    pip("install", "--index-url", server.url + VARIANT_INDEX, "--target", str(tmp_path / "site"), "tinyup")
    wait_until_kept(server, 2)
    with urllib.request.urlopen(server.url + "metrics", timeout=10) as response:
        metrics = response.read().decode()
    fetched = re.search(r'^wheelhouse_upstream_fetches_total\{upstream="pypi",outcome="fetched"\} (\d+)$', metrics, re.M)
    assert fetched and int(fetched.group(1)) >= 1
    kept = re.search(r"^wheelhouse_upstream_files_kept (\d+)$", metrics, re.M)
    assert kept and int(kept.group(1)) == 2  # tinyup 2.0 and torchy 2.8
    with urllib.request.urlopen(server.url + "api/v1/upstream", timeout=10) as response:
        overview = json.loads(response.read())
    assert [each["name"] for each in overview["upstreams"]] == ["pypi", "pytorch"]
    assert overview["routes"] == ["cu128: torchy = pytorch"]
    assert [each["pattern"] for each in overview["reserved"]] == ["acme-*"]
    assert {(each["project"], each["upstream"]) for each in overview["kept_projects"]} == {
        ("tinyup", "pypi"), ("torchy", "pytorch")}
    assert overview["kept"]["files"] == 2 and overview["upstreams"][0]["pages"]["fetched"] >= 1
    data = server.data_dir
    fsck = subprocess.run([str(wheelhouse_bin), "fsck", "--data", str(data)], capture_output=True, text=True,
                          timeout=120)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    pruned = subprocess.run([str(wheelhouse_bin), "upstream-prune", "--data", str(data), "--project", "tinyup"],
                            capture_output=True, text=True, timeout=120)
    assert pruned.returncode == 0, pruned.stderr
    assert "1 kept upstream files" in pruned.stdout, pruned.stdout
    assert subprocess.run([str(wheelhouse_bin), "fsck", "--data", str(data)], capture_output=True,
                          timeout=120).returncode == 0


CLIENT_BLOCKS = {
    "poetry": "poetry init --no-interaction --name app\n"
              "poetry source add --default wheelhouse http://HOST:8080/" + VARIANT_INDEX + "\n"
              "poetry add flash-attn tinyup\n",
    "pdm": "pdm init --non-interactive\n"
           "pdm config --local pypi.url http://HOST:8080/" + VARIANT_INDEX + "\n"
           "pdm add --save-wildcard --no-self flash-attn tinyup\n",
    "pipenv": "printf '[[source]]\\nname = \"wheelhouse\"\\nurl = \"%s\"\\nverify_ssl = false\\n' \\\n"
              "       http://HOST:8080/" + VARIANT_INDEX + " > Pipfile\n"
              "pipenv install flash-attn tinyup\n",
}


@pytest.mark.parametrize("tool", sorted(CLIENT_BLOCKS))
def test_poetry_pdm_and_pipenv_resolve_through_the_one_url(one_url, tmp_path, tool):
    """The README's clients, given only this index: this index's flash-attn (not the attacker's
    9.0 upstream), PyPI's tinyup, and tinyup's dependency torchy from the routed PyTorch index."""
    from test_clients import run_block
    server, upstreams, _ = one_url
    folder = tmp_path / tool
    ran = run_block(CLIENT_BLOCKS[tool], server.url, folder, "unused")
    assert ran.returncode == 0, f"{ran.stdout}\n{ran.stderr}"
    shown = subprocess.run([str(folder / ".venv" / "bin" / "python"), "-c",
                            "import flash_attn, tinyup, torchy; print(flash_attn.WHO, tinyup.V, torchy.CUDA)"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["here", "2.0", "cu128"]
    assert not page_requests(upstreams, "pypi", "flash-attn")


def test_pip_installs_through_one_https_url(tmp_path, wheelhouse_bin, start_server, tls_files):
    """Both hops over HTTPS, each with its own test CA: pip to this index (--tls-cert, PIP_CERT),
    this index to the stand-in PyPI (--ca-bundle)."""
    from conftest import clean_pip_environment
    farm, pypi_farm = tmp_path / "farm", tmp_path / "pypi-farm"
    build_wheel(farm, "flash-attn", "1.0", files={"flash_attn/__init__.py": "WHO = 'here'\n"})
    pypi = IndexTree(tmp_path / "pypi", "json")
    pypi.add(build_wheel(pypi_farm, "tinyup", "2.0", files={"tinyup/__init__.py": "V = '2.0'\n"}))
    pypi.add(build_wheel(pypi_farm, "flash-attn", "9.0", files={"flash_attn/__init__.py": "WHO = 'attacker'\n"}))
    data = tmp_path / "data"
    assert ingest(wheelhouse_bin, data, farm).returncode == 0
    upstreams = NginxUpstreams(tmp_path / "nginx", {"pypi": pypi}).start()
    try:
        server = start_server(data, *tls_files.serve_arguments(), *upstreams.flags(), ca=tls_files.ca)
        assert server.url.startswith("https://")
        env = clean_pip_environment(tmp_path)
        env["PIP_CERT"] = str(tls_files.ca)
        target = tmp_path / "site"
        installed = subprocess.run(["/usr/bin/python3", "-m", "pip", "install", "--index-url", server.url + "simple/",
                                    "--target", str(target), "flash-attn", "tinyup"],
                                   env=env, capture_output=True, text=True, timeout=300)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        assert (target / "flash_attn" / "__init__.py").read_text() == "WHO = 'here'\n"
        assert (target / "tinyup" / "__init__.py").read_text() == "V = '2.0'\n"
        assert not page_requests(upstreams, "pypi", "flash-attn")
    finally:
        upstreams.stop()


def test_range_and_metadata_pass_through_before_the_file_is_kept(one_url):
    server, upstreams, _ = one_url
    page = json.loads(get(server.url + "simple/tinyup/")[2])
    newest = next(f for f in page["files"] if f["filename"] == "tinyup-2.0-py3-none-any.whl")
    url = server.url + newest["url"].lstrip("/")
    status, headers, body = get(url, "*/*", {"Range": "bytes=0-9"})
    assert status == 206 and len(body) == 10 and body[:2] == b"PK", (status, headers)
    status, _, metadata = get(url + ".metadata", "*/*")
    assert status == 200 and hashlib.sha256(metadata).hexdigest() == newest["core-metadata"]["sha256"]
    assert b"Name: tinyup" in metadata
    status, _, whole = get(url, "*/*")
    assert status == 200 and hashlib.sha256(whole).hexdigest() == newest["hashes"]["sha256"]
