"""What the index's parsers refuse, seen from the clients (issue 14, items 6 to 8): a form with more
parts than any upload has, METADATA fields no installer can read, control characters in query
values. Each refusal is checked for its status, a message that says what to fix, and that nothing
was stored; and each limit is checked against what real clients send, which must still pass."""

from __future__ import annotations

import importlib.metadata
import json
import re
import select
import socket
import urllib.error
import urllib.request

import pytest

from conftest import ingest
from test_remote_register import post, status_of
from test_upload_refusals import address, read_response, simple_filenames, wait_for
from test_uploads import curl, make_token, rows, spool_files, twine
from wheelbuilder import build_wheel, escape_name


@pytest.fixture
def server(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    tokens = {"upload": make_token(wheelhouse_bin, data, "ci"),
              "admin": make_token(wheelhouse_bin, data, "root", "--scope", "admin")}
    return start_server(data), data, tokens


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"^VmHWM:\s+(\d+) kB", status.read(), re.MULTILINE).group(1))


def assert_nothing_stored(url: str, data, project: str) -> None:
    assert rows(data) == []
    assert simple_filenames(url, project) is None
    wait_for(lambda: spool_files(data) == [], "the spool file to be removed")


# --- item 6: the number of form parts ---------------------------------------------------------

def test_a_million_field_form_is_refused_early_at_bounded_memory(server):
    running, data, tokens = server
    boundary = "0123456789abcdef0123456789abcdef"
    field = f"--{boundary}\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n".encode()
    fields = 1_000_000
    length = len(field) * fields + len(f"--{boundary}--\r\n")
    head = (f"POST /legacy/ HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {tokens['upload']}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n\r\n").encode()
    chunk = field * 1000
    peak_before = peak_rss_kib(running.process.pid)

    sent = 0
    with socket.create_connection(address(running.url), timeout=30) as connection:
        connection.sendall(head)
        stream = connection.makefile("rb")
        try:
            while sent < length - len(chunk) and not select.select([connection], [], [], 0.002)[0]:
                connection.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading; its answer is waiting
        response = read_response(stream)

    assert response is not None and response.status == 413, response and response.text
    # Refused after about a thousand parts, not after the megabyte of field bytes that used to
    # stop it (~30 MB of this body), and without a record kept per field.
    growth = peak_rss_kib(running.process.pid) - peak_before
    assert sent < 4 * len(chunk) + (1 << 20), f"{sent} bytes were sent before the answer ({growth} KiB more memory)"
    assert growth < 16 * 1024, f"serving the form took {growth} KiB more"
    assert "the form has more than 1000 parts" in response.text, response.text
    assert_nothing_stored(running.url, data, "f")
    assert running.get("/healthz").status == 200


def test_curl_with_more_form_fields_than_any_upload_is_refused(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0.0")
    fields = [argument for i in range(1001) for argument in ("-F", f"classifiers=Topic :: {i}")]
    status, body = curl("-u", f"__token__:{tokens['upload']}", *fields, "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 413, body
    assert "the form has more than 1000 parts" in body and "twine sends about 30" in body, body
    assert_nothing_stored(running.url, data, "kernels")


def test_twine_uploads_a_rich_project_with_a_large_readme(server, tmp_path):
    """The limits' margin: 300 classifiers, 100 requirements and a 5 MB README pass."""
    running, data, tokens = server
    extra = "".join(f"Classifier: Topic :: Scientific/Engineering :: Kernel {i}\n" for i in range(300))
    extra += "".join(f"Requires-Dist: dependency-{i}>={i}.0; extra == \"all\"\n" for i in range(100))
    extra += "Provides-Extra: all\n"
    readme = "# Kernels\n\n" + ("Fast attention kernels for every GPU. " * 40 + "\n") * 3500
    assert len(readme) > 5_000_000
    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0.0", metadata_extra=extra, description=readme)
    uploaded = twine(running.url, tokens["upload"], wheel)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    assert simple_filenames(running.url, "kernels") == [wheel.name]


# --- item 7: METADATA fields are validated as their specifications define them ----------------

BAD_METADATA = [
    # (what the wheel says, the phrases the refusal must hold)
    ({"requires_python": ">=3.8\">\u2026"},
     ["METADATA's Requires-Python '>=3.8\">\\xE2\\x80\\xA6' is not a PEP 440 version specifier set",
      "such as '>=3.9'"]),
    ({"requires_python": ">=3.6.*"}, ["Requires-Python '>=3.6.*'", "'.*' prefix match goes only with '==' or '!='"]),
    ({"metadata_extra": "Requires-Dist: torch>=2.8; python_version >= 3.9\n"},
     ["Requires-Dist 'torch>=2.8; python_version >= 3.9' is not a PEP 508 requirement", "unknown marker variable '3.9'"]),
    ({"metadata_extra": "Requires-Dist: torch (>=2.8,)\n"}, ["Requires-Dist 'torch (>=2.8,)'", "remove the extra ','"]),
    ({"metadata_extra": "Provides-Extra: gpu kernels\n"}, ["Provides-Extra 'gpu kernels' is not a valid extra name"]),
    ({"metadata_extra": "Project-URL: Source, javascript:alert(1)\n"},
     ["Project-URL 'Source, javascript:alert(1)'", "http:// or https://"]),
    ({"summary": "two\n lines"}, ["Summary 'two\\x0Alines' spans several lines"]),
    ({"metadata_version": "3.0"}, ["Metadata-Version '3.0' is not a core metadata version"]),
]


def wheel_with(directory, index: int, fields: dict):
    if "metadata_version" in fields:
        text = f"Metadata-Version: {fields['metadata_version']}\nName: kernels\nVersion: 1.0.0\n\nBody\n"
        return build_wheel(directory / str(index), "kernels", "1.0.0", metadata_text=text)
    return build_wheel(directory / str(index), "kernels", "1.0.0", **fields)


@pytest.mark.parametrize("index", range(len(BAD_METADATA)), ids=lambda i: next(iter(BAD_METADATA[i][0].values()))[:30])
def test_twine_sees_why_metadata_is_refused_and_nothing_is_stored(server, tmp_path, index):
    running, data, tokens = server
    fields, phrases = BAD_METADATA[index]
    wheel = wheel_with(tmp_path / "dist", index, fields)
    if "metadata_version" not in fields:  # twine itself refuses a Metadata-Version it does not know
        uploaded = twine(running.url, tokens["upload"], wheel)
        output = uploaded.stdout + uploaded.stderr
        assert uploaded.returncode != 0 and "400 Bad Request" in output, output
        assert "kernels-1.0.0.dist-info/METADATA: " in output, output
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 400, body
    for phrase in phrases:
        assert phrase in body, body
    assert_nothing_stored(running.url, data, "kernels")


def test_the_issue_14_requires_python_is_refused_by_every_upload_route(server, tmp_path):
    running, data, tokens = server
    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0.0", requires_python=">=3.8\"><img src=x>")
    auth = ("-u", f"__token__:{tokens['upload']}")
    for args in (("-F", f"content=@{wheel}", running.url + "legacy/"),
                 ("-T", str(wheel), running.url + f"api/v1/files/{wheel.name}")):
        status, body = curl(*auth, *args)
        assert status == 400 and "Requires-Python '>=3.8\"><img src=x>' is not a PEP 440" in body, body
    assert_nothing_stored(running.url, data, "kernels")

    # The same wheel with a Requires-Python pip reads goes in, and pages carry it.
    fixed = build_wheel(tmp_path / "fixed", "kernels", "1.0.0", requires_python=">=3.8")
    status, body = curl(*auth, "-F", f"content=@{fixed}", running.url + "legacy/")
    assert status == 201, body
    request = urllib.request.Request(running.url + "simple/kernels/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.load(response)["files"][0]["requires-python"] == ">=3.8"


def test_registering_a_release_asset_checks_metadata_the_same_way(wheelhouse_bin, fake_github, tmp_path,
                                                                  start_server):
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    running = start_server(data, *fake_github.server_flags())
    wheel = build_wheel(tmp_path / "dist", "remote-kernels", "1.0", requires_python=">=3.8\">\u2026")
    fake_github.add_release("owner", "kernels", "v1", [wheel])
    status, body = post(running.url + "api/v1/remote", token,
                        {"url": fake_github.download_url("owner", "kernels", "v1", wheel.name)})
    assert status == 400, body
    assert ("remote_kernels-1.0.dist-info/METADATA: METADATA's Requires-Python '>=3.8\">\\xE2\\x80\\xA6' is not a "
            "PEP 440 version specifier set") in body["error"], body
    assert status_of(running.url + f"api/v1/files/{wheel.name}") == 404


def installed_metadata() -> dict[tuple[str, str], str]:
    """The METADATA (or egg-info PKG-INFO) of every distribution this Python has installed, by
    name and normalised version (the wheel filename needs the normal form)."""
    version_of = pytest.importorskip("packaging.version")
    found = {}
    for distribution in importlib.metadata.distributions():
        text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO")
        name, version = distribution.metadata["Name"], distribution.metadata["Version"]
        if text and name and version:
            found.setdefault((name, str(version_of.Version(version))), text)
    return found


def test_the_metadata_of_every_installed_distribution_is_accepted(wheelhouse_bin, tmp_path):
    """Real METADATA, written by every build backend these packages used, passes validation."""
    installed = installed_metadata()
    assert len(installed) >= 15, "too few installed distributions to say anything"
    farm = tmp_path / "farm"
    for (name, version), text in installed.items():
        build_wheel(farm, name, version, metadata_text=text, dist_info=f"{escape_name(name)}-{version}.dist-info")
    ingested = ingest(wheelhouse_bin, tmp_path / "data", farm)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert len(rows(tmp_path / "data")) == len(installed), ingested.stdout + ingested.stderr


# --- item 8: query values ---------------------------------------------------------------------

@pytest.mark.parametrize("query", ["q=flash%00attn", "q=flash%0Aattn", "q=%0D%0AX-Injected:%201", "q=%1B%5B2J"])
def test_control_characters_in_query_values_are_refused(server, query):
    running, _, tokens = server
    status, body = curl(running.url + "api/v1/projects?" + query)
    assert status == 400, body
    assert "the query parameter 'q' holds a control character" in body and "remove it" in body, body
    status, body = curl("-H", f"Authorization: Bearer {tokens['admin']}", running.url + "api/v1/audit?target=x%0Ay")
    assert status == 400 and "'target' holds a control character" in body, body
    status, body = curl(running.url + "api/v1/projects?q=%FF%FE")
    assert status == 400 and "the query parameter 'q' is not UTF-8" in body, body  # it was echoed into the JSON
    # Ordinary values, spaces and non-ASCII included, still search.
    status, body = curl(running.url + "api/v1/projects?q=Flash%20Attn%C3%A9")
    assert status == 200, body
