"""Issue 16, "Tested clients": every block of the README's "Using it from poetry, pdm, pipenv, uv
and micropip" runs as written with Debian's poetry, pdm and pipenv (source add, lock, install; a
variant index as the source; a private index with a token), and the client bugs it names are
reproduced, so the README is changed when a client changes."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import clean_pip_environment, ingest
from server_process import REPO_ROOT
from test_uploads import make_token
from wheelbuilder import build_wheel

SECTION = "## Using it from poetry, pdm, pipenv, uv and micropip"
CUDA_12_8 = "1.0+cu128torch2.8"
CUDA_13_0 = "1.0+cu130torch2.10"  # sorts above CUDA_12_8: what /simple/ gives


def readme_blocks() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def client_environment(folder: pathlib.Path, token: str) -> dict[str, str]:
    """A fresh user: Debian's tools first on PATH, no pyenv, no pip or client configuration."""
    env = {k: v for k, v in clean_pip_environment(folder).items()
           if not k.startswith(("PYENV", "POETRY_", "PDM_", "PIPENV_", "VIRTUAL_ENV"))}
    env.update({
        "PATH": "/usr/bin:/bin",
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / ".config"),
        "XDG_CACHE_HOME": str(folder / ".cache"),
        "XDG_DATA_HOME": str(folder / ".local" / "share"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",  # no desktop keyring here
        "POETRY_VIRTUALENVS_IN_PROJECT": "true",
        "PIPENV_VENV_IN_PROJECT": "1",
        "PIPENV_YES": "1",
        "PIPENV_NOSPIN": "1",
        "PDM_CHECK_UPDATE": "false",  # it would ask PyPI
        "TOKEN": token,
    })
    for key in ("PIP_CONFIG_FILE", "PIP_NO_CACHE_DIR", "PIP_NO_BUILD_ISOLATION"):
        env.pop(key, None)
    return env


def run_block(block: str, url: str, folder: pathlib.Path, token: str) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True)
    host = url.removeprefix("http://").rstrip("/")
    script = block.replace("http://HOST:8080/", url).replace("HOST:8080", host)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=client_environment(folder, token),
                          capture_output=True, text=True, timeout=600)


def installed_version(folder: pathlib.Path) -> str:
    shown = subprocess.run([str(folder / ".venv" / "bin" / "python"), "-c", "import kernels; print(kernels.__version__)"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.strip()


@pytest.fixture
def indexes(tmp_path, wheelhouse_bin, start_server):
    for tool in ("poetry", "pdm", "pipenv"):
        if not shutil.which(tool, path="/usr/bin"):
            pytest.fail(f"{tool} is missing; run deploy/install-deps.sh (Debian's python3-poetry, python3-pdm, pipenv)")
    wheels = tmp_path / "wheels"
    for version in (CUDA_12_8, CUDA_13_0):
        build_wheel(wheels, "kernels", version)
    public_data, private_data = tmp_path / "public", tmp_path / "private"
    for data in (public_data, private_data):
        data.mkdir()
        assert ingest(wheelhouse_bin, data, wheels).returncode == 0
    token = make_token(wheelhouse_bin, private_data, "laptops", "--scope", "read")
    return start_server(public_data), start_server(private_data, "--private"), token


def test_the_readme_shows_each_client_with_a_variant_index_and_a_private_index():
    blocks = readme_blocks()
    for tool in ("poetry", "pdm", "pipenv"):
        mine = [block for block in blocks if block.startswith(f"# {tool}:")]
        assert any("/variants/" in block for block in mine), tool
        assert any("$TOKEN" in block or "${TOKEN}" in block for block in mine), tool


@pytest.mark.parametrize("number", range(6))
def test_each_readme_block_installs_kernels(indexes, tmp_path, number):
    public, private, token = indexes
    block = readme_blocks()[number]
    private_block = "TOKEN" in block
    folder = tmp_path / f"block-{number}"
    ran = run_block(block, (private if private_block else public).url, folder, token)
    assert ran.returncode == 0, f"{block}\n{ran.stdout}\n{ran.stderr}"
    assert installed_version(folder) == (CUDA_13_0 if private_block else CUDA_12_8), block
    if private_block:  # the same block without the token is refused
        refused = run_block(block, private.url, tmp_path / f"refused-{number}", "wh_" + "A" * 43)
        assert refused.returncode != 0, f"{block}\n{refused.stdout}"


def test_pdm_2_2_saves_a_specifier_with_a_local_label_that_it_then_refuses(indexes, tmp_path):
    """The README's known pdm bug, as written there; if this fails, pdm changed: update the README."""
    public, _, token = indexes
    block = "pdm init --non-interactive\npdm config --local pypi.url http://HOST:8080/variants/cu128/simple/\n" \
            "pdm add --no-self kernels\n"
    ran = run_block(block, public.url, tmp_path / "pdm-bug", token)
    assert ran.returncode != 0
    assert f"Invalid specifier: '>={CUDA_12_8}'" in ran.stdout + ran.stderr, ran.stdout + ran.stderr


def test_pip_23_0_downloads_a_wheel_twice_after_its_metadata(tmp_path, wheelhouse_bin, start_server, pip):
    """The README's known pip bug: the access log shows .metadata once and the wheel twice."""
    version = subprocess.run(["/usr/bin/python3", "-m", "pip", "--version"], capture_output=True, text=True).stdout
    if not version.startswith("pip 23.0"):
        pytest.skip(f"the README names pip 23.0's bug; this is {version.split(' from ')[0]}")
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "kernels", CUDA_12_8)
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    running = start_server(data)
    pip("install", "--no-deps", "--target", str(tmp_path / "target"), "--index-url", running.url + "simple/", "kernels")
    requests = [line for line in running.access_lines() if "GET /files/" in line]
    assert sum(".whl.metadata\"" in line for line in requests) == 1, requests
    assert sum(".whl\" 200" in line for line in requests) == 2, requests
