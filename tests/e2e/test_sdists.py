"""Issue 16 item 1: source distributions. `python3 -m build` then `twine upload dist/*` stores the
sdist beside the wheel, `poetry publish --build` succeeds, pip builds from the sdist, the variant
index of a project with variant builds never offers its sdist, and bad sdists are refused with a
precise 400 and nothing stored."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import pathlib
import shutil
import sqlite3
import subprocess
import tarfile
import urllib.request

import pytest

from conftest import clean_pip_environment
from test_clients import client_environment
from test_uploads import curl, make_token, twine
from wheelbuilder import build_wheel

SETUP_PY = """from setuptools import setup
setup(name="hellosdist", version="{version}", py_modules=["hellosdist"], python_requires=">=3.8")
"""


def make_project(folder: pathlib.Path, version: str = "1.0") -> pathlib.Path:
    """A small real setuptools project (one word for a name: Debian 12's setuptools 66 writes dashed
    names the legacy way, which the index refuses with the PEP 625 name to use)."""
    folder.mkdir(parents=True)
    (folder / "setup.py").write_text(SETUP_PY.format(version=version))
    (folder / "hellosdist.py").write_text(f"VERSION = {version!r}\n")
    return folder


def build(project: pathlib.Path) -> list[pathlib.Path]:
    """Debian's python3-build, without isolation (it would fetch setuptools from PyPI)."""
    env = clean_pip_environment(project)
    built = subprocess.run(["/usr/bin/python3", "-m", "build", "--no-isolation", str(project)], cwd=project,
                           env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return sorted((project / "dist").iterdir())


def files(data: pathlib.Path) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT filename, packagetype, python_tag, sha256 FROM files ORDER BY filename").fetchall()


def stored_blobs(data: pathlib.Path) -> list[pathlib.Path]:
    return [path for path in (data / "blobs").rglob("*") if path.is_file()] if (data / "blobs").exists() else []


def get(url: str, accept: str = "text/html") -> str:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": accept}), timeout=30) as answer:
        return answer.read().decode()


@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    admin = make_token(wheelhouse_bin, data, "admin", "--scope", "admin")
    return start_server(data), data, token, admin


def test_build_then_twine_upload_stores_both_and_pip_builds_from_the_sdist(index, tmp_path, pip):
    server, data, token, admin = index
    dist = build(make_project(tmp_path / "project"))
    assert [path.name for path in dist] == ["hellosdist-1.0-py3-none-any.whl", "hellosdist-1.0.tar.gz"]
    uploaded = twine(server.url, token, *dist)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    sdist = dist[1]
    sha256 = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert files(data) == [("hellosdist-1.0-py3-none-any.whl", "bdist_wheel", "py3",
                            hashlib.sha256(dist[0].read_bytes()).hexdigest()),
                           ("hellosdist-1.0.tar.gz", "sdist", "", sha256)]
    again = twine(server.url, token, sdist)  # a CI re-run: the same bytes are a 200
    assert again.returncode == 0, again.stdout + again.stderr

    page = json.loads(get(server.url + "simple/hellosdist/", "application/vnd.pypi.simple.v1+json"))
    listed = {entry["filename"]: entry for entry in page["files"]}
    entry = listed["hellosdist-1.0.tar.gz"]
    assert entry["hashes"] == {"sha256": sha256}
    assert entry["size"] == sdist.stat().st_size
    assert entry["requires-python"] == ">=3.8"
    assert entry["upload-time"].endswith("Z")
    # setuptools 66 writes Metadata-Version 2.1: PKG-INFO promises nothing of the built wheel (PEP 643).
    assert entry["core-metadata"] is False
    html = get(server.url + "simple/hellosdist/")
    assert f'hellosdist-1.0.tar.gz#sha256={sha256}" data-requires-python="&gt;=3.8">' in html
    assert f"/files/{sha256}/hellosdist-1.0.tar.gz" in html
    status, _ = curl("-o", "/dev/null", f"{server.url}files/{sha256}/hellosdist-1.0.tar.gz.metadata")
    assert status == 404

    downloads = tmp_path / "downloads"
    pip("download", "--no-deps", "--no-binary", ":all:", "--index-url", server.url + "simple/", "-d", str(downloads),
        "hellosdist")
    assert [path.name for path in downloads.iterdir()] == ["hellosdist-1.0.tar.gz"]
    target = tmp_path / "target"
    installed = pip("install", "--no-binary", "hellosdist", "--index-url", server.url + "simple/", "--target",
                    str(target), "hellosdist", "-v")
    assert "hellosdist-1.0.tar.gz" in installed.stdout
    assert (target / "hellosdist.py").read_text() == "VERSION = '1.0'\n"

    # Yanks apply to sdists as to wheels (PEP 592).
    status, body = curl("-H", f"Authorization: Bearer {admin}", "-d", '{"reason": "broken build"}',
                        f"{server.url}api/v1/files/hellosdist-1.0.tar.gz/yank")
    assert status == 200, body
    assert 'data-yanked="broken build"' in get(server.url + "simple/hellosdist/")
    details = json.loads(get(server.url + "api/v1/files/hellosdist-1.0.tar.gz", "application/json"))
    assert details["packagetype"] == "sdist" and details["yanked"] == "broken build"


def test_poetry_publish_build_uploads_wheel_and_sdist(index, tmp_path):
    server, data, token, _ = index
    if not shutil.which("poetry", path="/usr/bin"):
        pytest.fail("poetry is missing; run deploy/install-deps.sh (Debian's python3-poetry)")
    project = tmp_path / "poetrydemo"
    (project / "poetrydemo").mkdir(parents=True)
    (project / "poetrydemo" / "__init__.py").write_text("VALUE = 1\n")
    (project / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "poetrydemo"\nversion = "0.1.0"\ndescription = "demo"\nauthors = ["CI <ci@example.com>"]\n\n'
        '[tool.poetry.dependencies]\npython = ">=3.8"\n\n'
        '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n')
    script = ('poetry config repositories.wheelhouse "$URL" && '
              'poetry publish --build --no-interaction --repository wheelhouse --username __token__ --password "$TOKEN"')
    env = client_environment(project, token)
    env["URL"] = server.url + "legacy/"
    published = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=project, env=env, capture_output=True,
                               text=True, timeout=600)
    assert published.returncode == 0, published.stdout + published.stderr
    assert [(name, kind) for name, kind, _, _ in files(data)] == [
        ("poetrydemo-0.1.0-py3-none-any.whl", "bdist_wheel"), ("poetrydemo-0.1.0.tar.gz", "sdist")]


def test_a_variant_index_never_offers_the_sdist_of_a_project_with_variant_builds(index, tmp_path, pip, wheelhouse_bin):
    server, data, token, _ = index
    wheels = tmp_path / "wheels"
    kernels_wheel = build_wheel(wheels, "kernels", "1.0+cu128torch2.8")
    kernels_sdist = sdist_bytes("kernels", "1.0")
    (tmp_path / "kernels-1.0.tar.gz").write_bytes(kernels_sdist)
    dist = build(make_project(tmp_path / "project"))
    uploaded = twine(server.url, token, kernels_wheel, tmp_path / "kernels-1.0.tar.gz", dist[1])
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr

    assert "kernels-1.0.tar.gz" in get(server.url + "simple/kernels/")
    for selector in ("cu128", "cu130-torch2.10"):
        page = get(f"{server.url}variants/{selector}/simple/kernels/")
        assert "kernels-1.0.tar.gz" not in page
        assert "leaves out the sdists of kernels" in page
        listed = json.loads(get(f"{server.url}variants/{selector}/simple/kernels/", "application/vnd.pypi.simple.v1+json"))
        assert "kernels-1.0.tar.gz" not in [entry["filename"] for entry in listed["files"]]
        assert "pip would compile the sdist" in listed["_note"]
    # No build fits CUDA 13.0: pip finds nothing rather than compiling the sdist.
    refused = pip("download", "--no-deps", "--index-url", f"{server.url}variants/cu130/simple/", "-d",
                  str(tmp_path / "none"), "kernels", check=False)
    assert refused.returncode != 0
    assert "No matching distribution found for kernels" in refused.stderr
    # A project without variant builds keeps its sdist in every variant index.
    plain = get(f"{server.url}variants/cu130/simple/hellosdist/")
    assert "hellosdist-1.0.tar.gz" in plain and "leaves out" not in plain
    pip("download", "--no-deps", "--no-binary", ":all:", "--index-url", f"{server.url}variants/cu130/simple/", "-d",
        str(tmp_path / "plain"), "hellosdist")

    # The static export publishes the same pages: the sdist in /simple/, not in the variant index.
    site = tmp_path / "site"
    exported = subprocess.run([str(wheelhouse_bin), "export", "--data", str(data), "--out", str(site), "--base-url",
                               "/", "--variant", "cu128"], capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    sha256 = hashlib.sha256(kernels_sdist).hexdigest()
    assert (site / "files" / sha256 / "kernels-1.0.tar.gz").read_bytes() == kernels_sdist
    assert f"/files/{sha256}/kernels-1.0.tar.gz#sha256={sha256}" in (site / "simple/kernels/index.html").read_text()
    variant_page = (site / "variants/cu128/simple/kernels/index.html").read_text()
    assert "kernels-1.0.tar.gz" not in variant_page and "leaves out the sdists of kernels" in variant_page

    matrix = json.loads(get(server.url + "api/v1/projects/kernels/variants", "application/json"))
    builds = {build["filename"]: build for build in matrix["versions"][0]["builds"]}
    assert builds["kernels-1.0.tar.gz"]["packagetype"] == "sdist"
    assert builds["kernels-1.0.tar.gz"]["family"] == "sdist"
    assert builds["kernels-1.0.tar.gz"]["selectors"] == []
    assert "" not in matrix["axes"]["python"]


def sdist_bytes(name: str, version: str, members: list[tuple[str, bytes | str]] | None = None,
                pkg_info: str | None = None, root: str | None = None, fmt=tarfile.PAX_FORMAT) -> bytes:
    root = root or f"{name}-{version}"
    pkg_info = pkg_info or f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: demo\n\n"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
        entries = [(f"{root}/PKG-INFO", pkg_info.encode()), (f"{root}/setup.py", b"from setuptools import setup\nsetup()\n")]
        for member, data in entries + list(members or []):
            info = tarfile.TarInfo(member)
            if isinstance(data, str):  # a symbolic link's target
                info.type, info.linkname = tarfile.SYMTYPE, data
                archive.addfile(info)
            else:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return gzip.compress(out.getvalue())


BAD_SDISTS = [
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0", [("demo-1.0/../../evil.py", b"x")]),
     "rebuild the sdist: a member would be written outside its directory"),
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0", [("demo-1.0/evil", "../../../etc/passwd")]),
     "rebuild the sdist without links that leave it"),
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0", pkg_info="Metadata-Version: 2.1\nName: other\nVersion: 1.0\n\n"),
     "rename the file or rebuild the sdist: PKG-INFO's Name is another project than the filename's"),
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0", pkg_info="Metadata-Version: 2.1\nName: demo\nVersion: 2.0\n\n"),
     "rename the file or rebuild the sdist: PKG-INFO's Version differs from the filename's"),
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0", [("demo-1.0/zeros.bin", bytes(64 << 20))]),
     "rebuild the sdist without the bulk data: it inflates like a gzip bomb"),
    ("demo-1.0.tar.gz", lambda: gzip.decompress(sdist_bytes("demo", "1.0")),
     "build the sdist with python -m build --sdist: this file is not gzip-compressed"),
    ("demo-1.0.tar.gz", lambda: sdist_bytes("demo", "1.0")[:-100],
     "upload the whole file: the sdist is cut short"),
    ("Demo-1.0.tar.gz", lambda: sdist_bytes("Demo", "1.0"),
     "sdist filename: rename it to demo-1.0.tar.gz"),
    ("demo-1.0.zip", lambda: b"PK\x03\x04", "sdist filename: rebuild it as a .tar.gz"),
]


@pytest.mark.parametrize("filename,make,reason", BAD_SDISTS, ids=[case[2][:40] for case in BAD_SDISTS])
def test_bad_sdists_are_refused_with_a_precise_400_and_nothing_stored(index, tmp_path, filename, make, reason):
    server, data, token, _ = index
    path = tmp_path / filename
    path.write_bytes(make())
    for how in (("-F", f"content=@{path}", server.url + "legacy/"),
                ("-T", str(path), server.url + "api/v1/files/" + filename)):
        result = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code} %{errormsg}", "-u", f"__token__:{token}",
                                 "-D", "-", *how], capture_output=True, text=True, timeout=120)
        status_line = next(line for line in result.stdout.splitlines()
                           if line.startswith("HTTP/") and not line.startswith("HTTP/1.1 100"))
        assert status_line.startswith("HTTP/1.1 400 "), result.stdout
        assert reason in status_line, status_line
    assert files(data) == []
    assert stored_blobs(data) == []
    assert [p.name for p in (data / "tmp").iterdir()] == []


def test_ingest_and_inspect_take_sdists(wheelhouse_bin, tmp_path):
    folder = tmp_path / "dist"
    folder.mkdir()
    (folder / "demo-1.0.tar.gz").write_bytes(sdist_bytes("demo", "1.0"))
    build_wheel(folder, "demo", "1.0")
    data = tmp_path / "data"
    ingested = subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), str(folder)], capture_output=True,
                              text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert [(name, kind) for name, kind, _, _ in files(data)] == [
        ("demo-1.0-py3-none-any.whl", "bdist_wheel"), ("demo-1.0.tar.gz", "sdist")]
    # A static PKG-INFO (2.2) is kept as core metadata; fsck finds the store as the rows say.
    static = tmp_path / "static"
    static.mkdir()
    (static / "demo-2.0.tar.gz").write_bytes(
        sdist_bytes("demo", "2.0", pkg_info="Metadata-Version: 2.2\nName: demo\nVersion: 2.0\n\n"))
    assert subprocess.run([str(wheelhouse_bin), "ingest", "--data", str(data), str(static)], capture_output=True,
                          timeout=120).returncode == 0
    checked = subprocess.run([str(wheelhouse_bin), "fsck", "--data", str(data)], capture_output=True, text=True,
                             timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    static_sha256 = hashlib.sha256((static / "demo-2.0.tar.gz").read_bytes()).hexdigest()
    old_sha256 = hashlib.sha256((folder / "demo-1.0.tar.gz").read_bytes()).hexdigest()
    kept = {path.name for path in (data / "blobs").rglob("*.metadata")}
    assert f"{static_sha256}.metadata" in kept and f"{old_sha256}.metadata" not in kept
    inspected = subprocess.run([str(wheelhouse_bin), "inspect", "dist/demo-1.0.tar.gz", "Demo-1.0.tar.gz"],
                               capture_output=True, text=True, timeout=30)
    assert inspected.returncode == 1
    good, legacy = map(json.loads, inspected.stdout.splitlines())
    assert good["packagetype"] == "sdist" and good["normalized_name"] == "demo" and good["variant"] == {}
    assert good["path"] == "dist/demo-1.0.tar.gz"
    assert "rename it to demo-1.0.tar.gz" in legacy["error"]
