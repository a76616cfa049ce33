"""Issue 16, item 2: twine and poetry show a refused upload's HTTP reason phrase (poetry adds the
body as one bytes literal), so every refusal an uploader can meet puts its fix, whole, in a short
reason phrase, and the particulars (hashes, filenames, limits) in the body. Each case runs the
real twine, and the status line and body are read as curl receives them."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import textwrap

import pytest

from test_upload_refusals import set_status
from test_uploads import make_token, twine
from wheelbuilder import build_wheel

REASON_BUDGET = 160  # wheelhouse::reason_budget


def refusal(url: str, token: str, wheel: pathlib.Path) -> tuple[int, str, str]:
    """Uploads `wheel` as twine does (a form to /legacy/); the status, the reason phrase and the body."""
    result = subprocess.run(["curl", "-sS", "-D", "-", "-u", f"__token__:{token}", "-F", f"content=@{wheel}",
                             url + "legacy/"], capture_output=True, text=True, timeout=60)
    head, _, body = result.stdout.replace("\r\n", "\n").partition("\n\n")
    match = re.match(r"HTTP/1\.1 (\d{3}) (.*)", head.splitlines()[0])
    assert match, result.stdout + result.stderr
    return int(match.group(1)), match.group(2), body


def said(process: subprocess.CompletedProcess) -> str:
    """What a client printed, with the line wrapping of its terminal renderer undone."""
    return " ".join((process.stdout + process.stderr).split())


@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    tokens = {
        "upload": make_token(wheelhouse_bin, data, "ci"),
        "read": make_token(wheelhouse_bin, data, "laptops", "--scope", "read"),
        "other-project": make_token(wheelhouse_bin, data, "other-ci", "--project", "other"),
        "admin": make_token(wheelhouse_bin, data, "root", "--scope", "admin"),
    }
    running = start_server(data, "--max-upload-size", "20000")
    return running, tokens


def cases(tmp_path: pathlib.Path):
    """(name, wheel, token kind, status, the whole reason phrase, a fact the body carries)."""
    def wheel(name: str, **kwargs) -> pathlib.Path:
        return build_wheel(tmp_path / name, kwargs.pop("project", "kernels"), kwargs.pop("version", "2.0"), **kwargs)

    yield ("conflict", wheel("conflict", version="1.0", files={"kernels/__init__.py": "B = 2\n"}), "upload", 409,
           "File already exists with other bytes: give the build a new version or build tag, or delete the old file "
           "first", "kernels-1.0-py3-none-any.whl is in the index with sha256 ")
    yield ("local label", wheel("label", version="2.0+cu130torch2.10", metadata_version="2.0"), "upload", 400,
           "rebuild with +cu130torch2.10 in the version, or rename the file to drop it: the local label is in the "
           "filename only", "METADATA says Version: 2.0, but the filename says 2.0+cu130torch2.10")
    yield ("version", wheel("version", metadata_version="2.1"), "upload", 400,
           "rebuild the wheel or rename the file: METADATA's Version differs from the filename's",
           "METADATA says Version: 2.1, but the filename says 2.0")
    yield ("name", wheel("name", metadata_name="something-else"), "upload", 400,
           "rename the file or rebuild the wheel: METADATA's Name is another project than the filename's",
           "METADATA says Name: something-else, but the filename is for project kernels")
    yield ("record hash", wheel("record", files={"kernels/__init__.py": "X = 1\n"},
                                record_overrides={"kernels/__init__.py": ("sha256=AAAA", "6")}), "upload",
           400, "rebuild the wheel: a file's hash differs from what RECORD says",
           "RECORD says kernels/__init__.py has sha256=AAAA but the archive entry hashes to sha256=")
    yield ("unlisted", wheel("unlisted", unlisted={"kernels/extra.py": "x = 1\n"}), "upload", 400,
           "rebuild the wheel: an archive entry is missing from RECORD",
           "archive entry kernels/extra.py is not listed in RECORD")
    yield ("too large", wheel("large", files={"kernels/blob.bin": os.urandom(40_000)}), "upload", 413,
           "send a smaller file: this index takes at most 20000 bytes", "an admin sets the limit with --max-upload-size")
    yield ("read scope", wheel("scope"), "read", 403, "token 'laptops' has scope read; uploads need upload or admin",
           None)
    yield ("project scope", wheel("project"), "other-project", 403, "token 'other-ci' may not upload to project 'kernels'",
           None)
    yield ("bad token", wheel("token"), "wh_" + "A" * 43, 401,
           "the token is not valid here (unknown, expired or revoked); ask an admin for one made with `wheelhouse "
           "token create`", None)


def test_every_upload_refusal_puts_its_fix_whole_in_the_reason_and_twine_shows_it(index, tmp_path):
    running, tokens = index
    assert twine(running.url, tokens["upload"], build_wheel(tmp_path / "first", "kernels", "1.0")).returncode == 0
    for name, wheel, token_kind, status, reason, fact in cases(tmp_path):
        token = tokens.get(token_kind, token_kind)
        code, phrase, body = refusal(running.url, token, wheel)
        assert (code, phrase) == (status, reason), name
        assert len(phrase) <= REASON_BUDGET and not phrase.endswith("..."), name
        assert body.startswith(f"{status} "), (name, body)
        if fact:  # the particulars come on the body's second line
            assert fact in body.splitlines()[1], (name, body)
        uploaded = twine(running.url, token, wheel)
        assert uploaded.returncode != 0, name
        assert f"{status} " in said(uploaded) and reason in said(uploaded), (name, said(uploaded))


def test_an_archived_project_says_who_reopens_it(index, tmp_path):
    running, tokens = index
    assert twine(running.url, tokens["upload"], build_wheel(tmp_path / "a", "kernels", "1.0")).returncode == 0
    code, body = set_status(running.url, tokens["admin"], "kernels", "archived", "superseded")
    assert code == 200, body
    uploaded = twine(running.url, tokens["upload"], build_wheel(tmp_path / "b", "kernels", "1.1"))
    assert "ask an admin to set project 'kernels' active: it is archived and takes no new files" in said(uploaded)


def poetry_project(directory: pathlib.Path, version: str, wheel: pathlib.Path) -> pathlib.Path:
    """A poetry project whose dist/ holds `wheel`, as `poetry build` would have left it."""
    directory.mkdir(parents=True)
    (directory / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [tool.poetry]
        name = "kernels"
        version = "{version}"
        description = "test"
        authors = ["CI <ci@example.com>"]

        [build-system]
        requires = ["poetry-core"]
        build-backend = "poetry.core.masonry.api"
        """))
    (directory / "dist").mkdir()
    (directory / "dist" / wheel.name).write_bytes(wheel.read_bytes())
    return directory


def poetry_publish(project: pathlib.Path, url: str, token: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("POETRY_")}
    env.update({"HOME": str(project), "POETRY_REPOSITORIES_WHEELHOUSE_URL": url + "legacy/",
                "POETRY_HTTP_BASIC_WHEELHOUSE_USERNAME": "__token__",
                "POETRY_HTTP_BASIC_WHEELHOUSE_PASSWORD": token, "XDG_CONFIG_HOME": str(project / ".config"),
                "XDG_CACHE_HOME": str(project / ".cache"), "NO_COLOR": "1",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    return subprocess.run(["poetry", "publish", "--no-interaction", "-r", "wheelhouse"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)


def test_poetry_publish_shows_the_fix_and_the_detail(index, tmp_path):
    running, tokens = index
    label = build_wheel(tmp_path / "w", "kernels", "2.0+cu130", metadata_version="2.0")
    published = poetry_publish(poetry_project(tmp_path / "label", "2.0+cu130", label), running.url, tokens["upload"])
    assert published.returncode != 0
    assert ("HTTP Error 400: rebuild with +cu130 in the version, or rename the file to drop it: the local label is in "
            "the filename only") in said(published), said(published)
    assert "METADATA says Version: 2.0, but the filename says 2.0+cu130" in said(published), said(published)

    good = build_wheel(tmp_path / "g", "kernels", "3.0")
    project = poetry_project(tmp_path / "good", "3.0", good)
    assert poetry_publish(project, running.url, tokens["upload"]).returncode == 0
    (project / "dist" / good.name).write_bytes(build_wheel(tmp_path / "h", "kernels", "3.0",
                                                           files={"kernels/x.py": "x = 1\n"}).read_bytes())
    clash = poetry_publish(project, running.url, tokens["upload"])
    assert clash.returncode != 0
    assert ("HTTP Error 409: File already exists with other bytes: give the build a new version or build tag, or "
            "delete the old file first") in said(clash), said(clash)
